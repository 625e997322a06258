#include "framework/framework.h"

#include <pthread.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <limits>
#include <set>
#include <sstream>
#include <type_traits>
#include <utility>

namespace ksched::framework {
namespace {

constexpr std::chrono::minutes kMaxPermitTimeout{15};

bool implements(const Plugin* p, std::string_view point) {
  if (point == "PreEnqueue") return dynamic_cast<const PreEnqueuePlugin*>(p) != nullptr;
  if (point == "QueueSort") return dynamic_cast<const QueueSortPlugin*>(p) != nullptr;
  if (point == "PreFilter") return dynamic_cast<const PreFilterPlugin*>(p) != nullptr;
  if (point == "Filter") return dynamic_cast<const FilterPlugin*>(p) != nullptr;
  if (point == "PostFilter") return dynamic_cast<const PostFilterPlugin*>(p) != nullptr;
  if (point == "PreScore") return dynamic_cast<const PreScorePlugin*>(p) != nullptr;
  if (point == "Score") return dynamic_cast<const ScorePlugin*>(p) != nullptr;
  if (point == "Reserve") return dynamic_cast<const ReservePlugin*>(p) != nullptr;
  if (point == "Permit") return dynamic_cast<const PermitPlugin*>(p) != nullptr;
  if (point == "PreBind") return dynamic_cast<const PreBindPlugin*>(p) != nullptr;
  if (point == "Bind") return dynamic_cast<const BindPlugin*>(p) != nullptr;
  if (point == "PostBind") return dynamic_cast<const PostBindPlugin*>(p) != nullptr;
  return false;
}

Status withPlugin(Status s, std::string_view plugin) {
  if (s.plugin().empty()) s.withPlugin(plugin);
  return s;
}

}  // namespace

class Framework::WaitingPodImpl final : public WaitingPod {
 public:
  WaitingPodImpl(const api::Pod& pod, std::map<std::string, std::chrono::milliseconds> pending)
      : pod_(pod) {
    for (auto& [plugin, timeout] : pending) {
      auto deadline = created_ + timeout;
      if (deadlinePlugin_.empty() || deadline < deadline_) {
        deadline_ = deadline;
        deadlinePlugin_ = plugin;
        deadlineTimeout_ = timeout;
      }
      pending_.insert(plugin);
    }
  }

  [[nodiscard]] const api::Pod& pod() const override { return pod_; }
  [[nodiscard]] std::chrono::steady_clock::time_point deadline() const { return deadline_; }

  void allow(std::string_view plugin) override {
    std::unique_lock lock(mu_);
    if (auto it = pending_.find(plugin); it != pending_.end()) pending_.erase(it);
    if (pending_.empty()) decide(lock, Status::success());
  }

  void reject(std::string_view plugin, std::string message) override {
    std::unique_lock lock(mu_);
    decide(lock, Status::unschedulable(std::move(message)).withPlugin(plugin));
  }

  // `fn` runs once the pod is decided: now if it is already.
  void setOnDecided(std::function<void()> fn) {
    std::unique_lock lock(mu_);
    if (!result_) {
      onDecided_ = std::move(fn);
      return;
    }
    lock.unlock();
    fn();
  }

  // Rejects the pod if its deadline passed; true when it is decided (now or before).
  bool expireIfDue(std::chrono::steady_clock::time_point now) {
    std::unique_lock lock(mu_);
    if (result_) return true;
    if (now < deadline_) return false;
    decide(lock, timeoutStatus());
    return true;
  }

  [[nodiscard]] bool decided() {
    std::lock_guard lock(mu_);
    return result_.has_value();
  }

  Status wait(std::chrono::duration<double>* waited) {
    std::unique_lock lock(mu_);
    if (!cv_.wait_until(lock, deadline_, [&] { return result_.has_value(); })) {
      decide(lock, timeoutStatus());
      lock.lock();
    }
    if (waited != nullptr) *waited = decidedAt_ - created_;
    return *result_;
  }

 private:
  Status timeoutStatus() const {
    std::ostringstream msg;
    msg << "rejected due to timeout after waiting "
        << std::chrono::duration<double>(deadlineTimeout_).count() << "s at plugin "
        << deadlinePlugin_;
    return Status::unschedulable(msg.str()).withPlugin(deadlinePlugin_);
  }

  // Sets the verdict once; calls onDecided_ without the lock held. Unlocks `lock`.
  void decide(std::unique_lock<std::mutex>& lock, Status s) {
    if (result_) {
      lock.unlock();
      return;
    }
    result_ = std::move(s);
    decidedAt_ = std::chrono::steady_clock::now();
    cv_.notify_all();
    auto cb = std::move(onDecided_);
    lock.unlock();
    if (cb) cb();
  }

  const api::Pod pod_;
  const std::chrono::steady_clock::time_point created_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point deadline_{};
  std::string deadlinePlugin_;
  std::chrono::milliseconds deadlineTimeout_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  std::function<void()> onDecided_;                  // guarded by mu_; called once
  std::set<std::string, std::less<>> pending_;       // guarded by mu_
  std::optional<Status> result_;                     // guarded by mu_
  std::chrono::steady_clock::time_point decidedAt_;  // guarded by mu_
};

// listers(): the services' listers at each call, nothing before attach().
class Framework::ForwardingListers final : public ClusterListers {
 public:
  explicit ForwardingListers(const Services& services) : services_(services) {}
  ObjectList<api::Service> services(std::string_view ns) const override {
    return get().services(ns);
  }
  ObjectList<api::ReplicaSet> replicaSets(std::string_view ns) const override {
    return get().replicaSets(ns);
  }
  ObjectList<api::StatefulSet> statefulSets(std::string_view ns) const override {
    return get().statefulSets(ns);
  }
  ObjectList<api::ReplicationController> replicationControllers(
      std::string_view ns) const override {
    return get().replicationControllers(ns);
  }
  ObjectList<api::Namespace> namespaces() const override { return get().namespaces(); }
  std::shared_ptr<const api::Namespace> getNamespace(std::string_view name) const override {
    return get().getNamespace(name);
  }
  ObjectList<api::PodDisruptionBudget> podDisruptionBudgets(std::string_view ns) const override {
    return get().podDisruptionBudgets(ns);
  }
  std::shared_ptr<const api::PersistentVolumeClaim> getPersistentVolumeClaim(
      std::string_view ns, std::string_view name) const override {
    return get().getPersistentVolumeClaim(ns, name);
  }
  std::shared_ptr<const api::PersistentVolume> getPersistentVolume(
      std::string_view name) const override {
    return get().getPersistentVolume(name);
  }
  ObjectList<api::PersistentVolume> persistentVolumes() const override {
    return get().persistentVolumes();
  }
  std::shared_ptr<const api::StorageClass> getStorageClass(std::string_view name) const override {
    return get().getStorageClass(name);
  }
  std::shared_ptr<const api::CSINode> getCSINode(std::string_view name) const override {
    return get().getCSINode(name);
  }

 private:
  [[nodiscard]] const ClusterListers& get() const {
    static const StaticClusterListers kNone;
    return services_.listers != nullptr ? *services_.listers : kNone;
  }
  const Services& services_;
};

// watchObjects() before attach(): empty and synced, then the watch attach() starts.
class Framework::DeferredObjectStore final : public ObjectStore {
 public:
  UnstructuredPtr get(std::string_view ns, std::string_view name) const override {
    return target_ ? target_->get(ns, name) : nullptr;
  }
  std::vector<UnstructuredPtr> list() const override {
    return target_ ? target_->list() : std::vector<UnstructuredPtr>{};
  }
  bool hasSynced() const override { return !target_ || target_->hasSynced(); }
  // Set by attach(), before any thread reads the store.
  void setTarget(std::shared_ptr<const ObjectStore> target) { target_ = std::move(target); }

 private:
  std::shared_ptr<const ObjectStore> target_;
};

struct Framework::PendingWatch {
  ObjectWatch what;
  ObjectEventHandlers handlers;
  std::shared_ptr<DeferredObjectStore> store;
};

Framework::Framework(const config::Profile& profile, const Registry& registry, Services services,
                     const std::string& fieldPrefix)
    : profileName_(profile.schedulerName),
      percentage_(profile.percentageOfNodesToScore),
      services_(std::move(services)),
      listers_(std::make_unique<const ForwardingListers>(services_)) {
  build(profile, registry, fieldPrefix);
  pluginChildren_ = std::make_unique<PluginChildren[]>(owned_.size());
}

void Framework::attach(Services services) {
  services_ = std::move(services);
  for (auto& h : std::exchange(pendingPodHandlers_, {})) addPodEventHandlers(std::move(h));
  for (auto& w : std::exchange(pendingWatches_, {})) {
    if (services_.watchObjects) w.store->setTarget(services_.watchObjects(w.what, w.handlers));
  }
}

void Framework::addPodEventHandlers(PodEventHandlers handlers) {
  if (services_.addPodEventHandlers) {
    services_.addPodEventHandlers(std::move(handlers));
  } else {
    pendingPodHandlers_.push_back(std::move(handlers));
  }
}

std::shared_ptr<const ObjectStore> Framework::watchObjects(const ObjectWatch& what,
                                                           ObjectEventHandlers handlers) {
  if (services_.watchObjects) return services_.watchObjects(what, std::move(handlers));
  auto store = std::make_shared<DeferredObjectStore>();
  pendingWatches_.push_back({what, std::move(handlers), store});
  return store;
}

void Framework::close() {
  for (auto& p : owned_) p->close();
  stopPermitTimer();
}

void Framework::stopPermitTimer() {
  std::jthread timer;
  {
    std::lock_guard lock(waitingMu_);
    timer = std::move(permitTimer_);
  }
  if (timer.joinable()) {
    timer.request_stop();
    timerCv_.notify_all();
    timer.join();
  }
}

void Framework::runPermitTimer(std::stop_token st) {
  std::unique_lock lock(waitingMu_);
  while (!st.stop_requested()) {
    timerKick_ = false;
    const auto now = std::chrono::steady_clock::now();
    auto next = now + std::chrono::hours(1);
    std::vector<std::shared_ptr<WaitingPodImpl>> due;
    for (auto& [uid, wp] : waiting_) {
      if (wp->deadline() <= now) {
        due.push_back(wp);
      } else {
        next = std::min(next, wp->deadline());
      }
    }
    if (!due.empty()) {
      lock.unlock();
      for (auto& wp : due) wp->expireIfDue(now);
      lock.lock();
      // Decided pods stay in waiting_ until their binding cycle collects the verdict: only
      // look at them again once they are gone.
      next = std::min(next, now + std::chrono::milliseconds(100));
    }
    timerCv_.wait_until(lock, st, next, [&] { return timerKick_; });
  }
}

void Framework::start() {
  for (auto& p : owned_) p->start();
}

Framework::~Framework() {
  rejectAllWaitingPods("scheduler is shutting down");
  stopPermitTimer();
}

void Framework::build(const config::Profile& profile, const Registry& registry,
                      const std::string& prefix) {
  std::vector<std::string> errors;
  std::map<std::string, size_t> argsIndex;
  for (size_t i = 0; i < profile.pluginConfig.size(); ++i) {
    const auto& pc = profile.pluginConfig[i];
    if (!argsIndex.emplace(pc.name, i).second) {
      errors.push_back(prefix + ".pluginConfig[" + std::to_string(i) +
                       "]: duplicate plugin config for \"" + pc.name + "\"");
    }
  }

  // Every plugin named in an enabled list, built once.
  std::map<std::string, Plugin*, std::less<>> plugins;
  std::set<std::string> multiPointDisabled;
  bool multiPointDisableAll = false;
  for (const auto& d : profile.plugins.multiPoint.disabled) {
    if (d.name == "*") multiPointDisableAll = true;
    multiPointDisabled.insert(d.name);
  }
  auto instantiate = [&](const std::string& name, const std::string& path) {
    if (plugins.contains(name)) return;
    const PluginFactory* factory = registry.find(name);
    if (factory == nullptr) {
      errors.push_back(path + ": plugin \"" + name + "\" does not exist");
      plugins[name] = nullptr;
      return;
    }
    nlohmann::json args;
    std::string argsPath = prefix + ".pluginConfig[" + name + "].args";
    if (auto it = argsIndex.find(name); it != argsIndex.end()) {
      args = profile.pluginConfig[it->second].args;
      argsPath = prefix + ".pluginConfig[" + std::to_string(it->second) + "].args";
    }
    try {
      owned_.push_back((*factory)(args, *this));
      plugins[name] = owned_.back().get();
    } catch (const PluginArgsError& e) {
      errors.push_back(argsPath + "." + e.what());
      plugins[name] = nullptr;
    } catch (const std::exception& e) {
      errors.push_back(argsPath + ": " + e.what());
      plugins[name] = nullptr;
    }
  };
  std::vector<config::PluginRef> multiPoint;
  for (size_t i = 0; i < profile.plugins.multiPoint.enabled.size(); ++i) {
    const auto& ref = profile.plugins.multiPoint.enabled[i];
    if (multiPointDisableAll || multiPointDisabled.contains(ref.name)) continue;
    instantiate(ref.name, prefix + ".plugins.multiPoint.enabled[" + std::to_string(i) + "]");
    multiPoint.push_back(ref);
  }
  // "<prefix>.plugins.<point>.enabled[i]"
  auto enabledPath = [&](const config::ExtensionPointField& point, size_t i) {
    return prefix + ".plugins." + std::string(point.field) + ".enabled[" + std::to_string(i) + "]";
  };
  for (const auto& point : config::kExtensionPoints) {
    const auto& set = profile.plugins.*point.set;
    for (size_t i = 0; i < set.enabled.size(); ++i) {
      instantiate(set.enabled[i].name, enabledPath(point, i));
    }
  }
  for (const auto& [name, _] : argsIndex) {
    if (!plugins.contains(name)) {
      errors.push_back(prefix + ".pluginConfig[" + std::to_string(argsIndex[name]) +
                       "]: plugin \"" + name + "\" has args but is not enabled");
    }
  }

  // Expand per extension point: explicit plugins that override multiPoint keep their place
  // first, then the other multiPoint plugins, then the remaining explicit ones.
  std::map<std::string_view, std::set<std::string>> disabledAt;  // point -> names ("*": all)
  int64_t legacyWeightTotal = 0;
  for (const auto& point : config::kExtensionPoints) {
    const auto& set = profile.plugins.*point.set;
    std::set<std::string>& disabled = disabledAt[point.name];
    bool disableAll = false;
    for (const auto& d : set.disabled) {
      if (d.name == "*") disableAll = true;
      disabled.insert(d.name);
    }
    std::set<std::string> explicitNames;
    for (const auto& e : set.enabled) explicitNames.insert(e.name);
    std::vector<std::pair<config::PluginRef, std::string>> ordered;  // ref, config path
    std::set<std::string> inMultiPoint;
    for (const auto& m : multiPoint) inMultiPoint.insert(m.name);
    for (size_t i = 0; i < set.enabled.size(); ++i) {
      if (inMultiPoint.contains(set.enabled[i].name)) {
        ordered.emplace_back(set.enabled[i], enabledPath(point, i));
      }
    }
    for (const auto& m : multiPoint) {
      if (explicitNames.contains(m.name) || disableAll || disabled.contains(m.name)) continue;
      Plugin* p = plugins[m.name];
      if (p == nullptr || !implements(p, point.name)) continue;
      ordered.emplace_back(m, "");
    }
    for (size_t i = 0; i < set.enabled.size(); ++i) {
      if (!inMultiPoint.contains(set.enabled[i].name)) {
        ordered.emplace_back(set.enabled[i], enabledPath(point, i));
      }
    }
    std::set<std::string> seen;
    for (const auto& [ref, path] : ordered) {
      Plugin* p = plugins[ref.name];
      if (p == nullptr) continue;
      if (!seen.insert(ref.name).second) {
        errors.push_back(path + ": plugin \"" + ref.name + "\" is enabled twice");
        continue;
      }
      if (!implements(p, point.name)) {
        errors.push_back(path + ": plugin \"" + ref.name + "\" does not extend " +
                         std::string(point.name));
        continue;
      }
      std::string_view d = point.name;
      if (d == "PreEnqueue") preEnqueue_.push_back(dynamic_cast<PreEnqueuePlugin*>(p));
      if (d == "QueueSort") {
        if (queueSort_ != nullptr) {
          errors.push_back(prefix +
                           ".plugins.queueSort: only one queue sort plugin can be enabled");
        } else {
          queueSort_ = dynamic_cast<QueueSortPlugin*>(p);
        }
      }
      if (d == "PreFilter") preFilter_.push_back(dynamic_cast<PreFilterPlugin*>(p));
      if (d == "Filter") filter_.push_back(dynamic_cast<FilterPlugin*>(p));
      if (d == "PostFilter") postFilter_.push_back(dynamic_cast<PostFilterPlugin*>(p));
      if (d == "PreScore") preScore_.push_back(dynamic_cast<PreScorePlugin*>(p));
      if (d == "Score") {
        int64_t w = ref.weight;
        for (const auto& e : set.enabled) {
          if (e.name == ref.name && e.weight != 0) w = e.weight;
        }
        if (w == 0) w = 1;
        if (profile.v120ScoreWeights && w > 0) {
          if (w > std::numeric_limits<int64_t>::max() / kMaxNodeScore - legacyWeightTotal) {
            errors.push_back((path.empty() ? prefix + ".plugins.multiPoint" : path) +
                             ".weight: total score of Score plugins could overflow");
            continue;
          }
          legacyWeightTotal += w;
        } else if (w < 0 || w > 100) {
          errors.push_back((path.empty() ? prefix + ".plugins.multiPoint" : path) +
                           ".weight: must be in range [1, 100]");
          continue;
        }
        score_.push_back({dynamic_cast<ScorePlugin*>(p), w});
      }
      if (d == "Reserve") reserve_.push_back(dynamic_cast<ReservePlugin*>(p));
      if (d == "Permit") permit_.push_back(dynamic_cast<PermitPlugin*>(p));
      if (d == "PreBind") preBind_.push_back(dynamic_cast<PreBindPlugin*>(p));
      if (d == "Bind") bind_.push_back(dynamic_cast<BindPlugin*>(p));
      if (d == "PostBind") postBind_.push_back(dynamic_cast<PostBindPlugin*>(p));
    }
  }
  completeCompanionPoints(disabledAt);
  if (queueSort_ == nullptr) {
    errors.push_back(prefix + ".plugins.queueSort: no queue sort plugin is enabled");
  }
  if (bind_.empty()) errors.push_back(prefix + ".plugins.bind: at least one bind plugin is needed");

  for (const auto& [name, p] : plugins) {
    if (p != nullptr &&
        (implements(p, "PreEnqueue") || implements(p, "PreFilter") || implements(p, "Filter") ||
         implements(p, "Reserve") || implements(p, "Permit"))) {
      enqueueCandidates_.push_back(p);
    }
  }
  if (!errors.empty()) {
    std::string all;
    for (const auto& e : errors) all += (all.empty() ? "" : "\n") + e;
    throw FrameworkError(all);
  }
}

// A plugin enabled at one point of a pair also runs at its companion point when it implements
// it and the profile does not disable it there: its Filter reads the state its PreFilter
// writes, its Score what its PreScore computed, and DefaultPreemption's PreEnqueue holds a
// preemptor until its victims are gone. Per-point profiles (v1beta1/v1beta2, Policy) list only
// the points v1.20's plugins had; multiPoint profiles already have every point.
void Framework::completeCompanionPoints(
    const std::map<std::string_view, std::set<std::string>>& disabledAt) {
  auto disabled = [&](std::string_view point, std::string_view name) {
    auto it = disabledAt.find(point);
    return it != disabledAt.end() &&
           (it->second.contains("*") || it->second.contains(std::string(name)));
  };
  auto complete = [&](const auto& from, auto& to, std::string_view point) {
    using Target = std::remove_pointer_t<typename std::decay_t<decltype(to)>::value_type>;
    for (Plugin* p : from) {
      auto* t = dynamic_cast<Target*>(p);
      if (t == nullptr || disabled(point, p->name())) continue;
      if (std::find(to.begin(), to.end(), t) == to.end()) to.push_back(t);
    }
  };
  std::vector<Plugin*> filters(filter_.begin(), filter_.end());
  std::vector<Plugin*> scores;
  for (const auto& s : score_) scores.push_back(s.plugin);
  std::vector<Plugin*> postFilters(postFilter_.begin(), postFilter_.end());
  complete(filters, preFilter_, "PreFilter");
  complete(scores, preScore_, "PreScore");
  complete(postFilters, preEnqueue_, "PreEnqueue");
}

std::map<std::string, std::vector<ClusterEventWithHint>> Framework::enqueueEvents() const {
  std::map<std::string, std::vector<ClusterEventWithHint>> out;
  for (Plugin* p : enqueueCandidates_) {
    if (auto* ext = dynamic_cast<EnqueueExtensions*>(p)) {
      out[std::string(p->name())] = ext->eventsToRegister();
    } else {
      out[std::string(p->name())] = {ClusterEventWithHint(EventResource::kWildcard, kAll)};
    }
  }
  return out;
}

std::map<std::string, std::vector<std::string>> Framework::pluginsPerExtensionPoint() const {
  std::map<std::string, std::vector<std::string>> out;
  auto put = [&](const char* point, const auto& list) {
    for (auto* p : list) out[point].emplace_back(p->name());
  };
  put("PreEnqueue", preEnqueue_);
  if (queueSort_ != nullptr) out["QueueSort"].emplace_back(queueSort_->name());
  put("PreFilter", preFilter_);
  put("Filter", filter_);
  put("PostFilter", postFilter_);
  put("PreScore", preScore_);
  for (const auto& w : score_) {
    out["Score"].push_back(std::string(w.plugin->name()) + ":" + std::to_string(w.weight));
  }
  put("Reserve", reserve_);
  put("Permit", permit_);
  put("PreBind", preBind_);
  put("Bind", bind_);
  put("PostBind", postBind_);
  return out;
}

const NodeInfoLister& Framework::snapshot() const {
  if (snapshot_ == nullptr) throw std::logic_error("no snapshot outside a scheduling cycle");
  return *snapshot_;
}

const ClusterListers& Framework::listers() const { return *listers_; }

Status Framework::runPreEnqueuePlugins(const api::Pod& pod) {
  for (auto* p : preEnqueue_) {
    Status s = p->preEnqueue(pod);
    if (!s.ok()) return withPlugin(std::move(s), p->name());
  }
  return {};
}

Status Framework::runPreFilterPlugins(CycleState& state, const api::Pod& pod,
                                      PreFilterResult& result,
                                      std::set<std::string, std::less<>>* pluginsWithNodes) {
  std::set<std::string, std::less<>> restricting;
  if (pluginsWithNodes == nullptr) pluginsWithNodes = &restricting;
  return timed(kEpPreFilter, [&]() -> Status {
    for (auto* p : preFilter_) {
      PreFilterResult r;
      Status s =
          timedPlugin(p, "PreFilter", [&] { return p->preFilter(state, pod, snapshot(), r); });
      if (s.isSkip()) {
        state.skipFilterPlugins.emplace(p->name());
        continue;
      }
      if (!s.ok()) {
        if (s.isError()) {
          return Status::error("running PreFilter plugin \"" + std::string(p->name()) +
                               "\": " + s.message())
              .withPlugin(p->name());
        }
        return withPlugin(std::move(s), p->name());
      }
      if (r.nodeNames) {
        pluginsWithNodes->emplace(p->name());
        if (!result.nodeNames) {
          result.nodeNames = std::move(r.nodeNames);
        } else {
          std::set<std::string, std::less<>> both;
          for (const auto& n : *result.nodeNames) {
            if (r.nodeNames->contains(n)) both.insert(n);
          }
          result.nodeNames = std::move(both);
        }
        if (result.nodeNames->empty()) {
          std::string msg;
          if (pluginsWithNodes->size() == 1) {
            msg = "node(s) didn't satisfy plugin " + *pluginsWithNodes->begin();
          } else {
            msg = "node(s) didn't satisfy plugin(s) [";
            for (const auto& name : *pluginsWithNodes) {
              msg += (msg.back() == '[' ? "" : " ") + name;
            }
            msg += "] simultaneously";
          }
          return Status::unresolvable(msg).withPlugin(p->name());
        }
      }
    }
    state.skippedFilters_.reset();
    if (filter_.size() <= 64) {
      uint64_t mask = 0;
      for (size_t i = 0; i < filter_.size(); ++i) {
        if (state.skipFilterPlugins.contains(filter_[i]->name())) mask |= uint64_t{1} << i;
      }
      state.skippedFilters_ = mask;
    }
    return {};
  });
}

Status Framework::runPreFilterExtensionAddPod(CycleState& state, const api::Pod& pod,
                                              const PodInfo& toAdd, const NodeInfo& node) const {
  for (auto* p : preFilter_) {
    if (state.skipFilterPlugins.contains(p->name())) continue;
    if (const auto* ext = p->preFilterExtensions()) {
      Status s = ext->addPod(state, pod, toAdd, node);
      if (!s.ok()) return withPlugin(std::move(s), p->name());
    }
  }
  return {};
}

Status Framework::runPreFilterExtensionRemovePod(CycleState& state, const api::Pod& pod,
                                                 const PodInfo& toRemove,
                                                 const NodeInfo& node) const {
  for (auto* p : preFilter_) {
    if (state.skipFilterPlugins.contains(p->name())) continue;
    if (const auto* ext = p->preFilterExtensions()) {
      Status s = ext->removePod(state, pod, toRemove, node);
      if (!s.ok()) return withPlugin(std::move(s), p->name());
    }
  }
  return {};
}

Status Framework::runFilterPlugins(const CycleState& state, const api::Pod& pod,
                                   const NodeInfo& node, std::vector<Status>* all) const {
  std::optional<Status> first;
  const std::optional<uint64_t> skipped =
      state.skipFilterPlugins.empty() ? std::optional<uint64_t>(0) : state.skippedFilters_;
  for (size_t i = 0; i < filter_.size(); ++i) {
    auto* p = filter_[i];
    if (skipped ? (i < 64 && (*skipped >> i & 1U) != 0)
                : state.skipFilterPlugins.contains(p->name())) {
      continue;
    }
    Status s = timedPlugin(p, "Filter", [&] { return p->filter(state, pod, node); });
    if (!s.ok()) {
      if (s.isError()) {
        return Status::error("running \"" + std::string(p->name()) +
                             "\" filter plugin: " + s.message())
            .withPlugin(p->name());
      }
      s = withPlugin(std::move(s), p->name());
      if (all == nullptr) return s;
      all->push_back(s);
      if (!first) first = std::move(s);
    }
  }
  return first ? std::move(*first) : Status{};
}

void Framework::activate(const std::vector<PodPtr>& pods) {
  if (services_.activate) services_.activate(pods);
}

std::shared_ptr<const NodeInfo> Framework::currentNodeInfo(std::string_view nodeName) const {
  return services_.currentNodeInfo ? services_.currentNodeInfo(nodeName) : nullptr;
}

std::vector<PodInfoPtr> Framework::nominatedPodsForNode(const std::string& nodeName) const {
  if (!services_.nominatedPodsForNode) return {};
  return services_.nominatedPodsForNode(nodeName);
}

Status Framework::runFilterPluginsWithNominatedPods(const CycleState& state, const api::Pod& pod,
                                                    const NodeInfo& node) const {
  return filterWithNominatedPods(state, pod, node, nullptr);
}

Status Framework::runAllFilterPluginsWithNominatedPods(const CycleState& state, const api::Pod& pod,
                                                       const NodeInfo& node,
                                                       std::vector<Status>& all) const {
  return filterWithNominatedPods(state, pod, node, &all);
}

Status Framework::filterWithNominatedPods(const CycleState& state, const api::Pod& pod,
                                          const NodeInfo& node, std::vector<Status>* all) const {
  std::vector<PodInfoPtr> nominated;
  if (services_.nominatedPodsForNode) {
    const int32_t prio = api::podPriority(pod);
    for (auto& pi : services_.nominatedPodsForNode(node.name())) {
      if (pi->pod->metadata.uid != pod.metadata.uid && api::podPriority(*pi->pod) >= prio) {
        nominated.push_back(std::move(pi));
      }
    }
  }
  if (nominated.empty()) return runFilterPlugins(state, pod, node, all);
  // First pass: as if the nominated pods were already running there.
  CycleState withNominated = state.clone();
  auto nodeWith = node.clone();
  for (const auto& pi : nominated) {
    nodeWith->addPod(pi);
    Status s = runPreFilterExtensionAddPod(withNominated, pod, *pi, *nodeWith);
    if (!s.ok()) return s;
  }
  Status s = runFilterPlugins(withNominated, pod, *nodeWith, all);
  if (!s.ok()) return s;
  // Second pass: without them (they may never arrive; pod affinity must not rely on them).
  return runFilterPlugins(state, pod, node, all);
}

Status Framework::dryRunPostFilterPlugins(const CycleState& state, const api::Pod& pod,
                                          const NodeToStatus& statuses, std::string& plugin,
                                          PostFilterPlugin::Proposal& proposal) {
  Status last = Status::skip();
  for (auto* p : postFilter_) {
    PostFilterPlugin::Proposal pr;
    Status s = p->dryRunPostFilter(state, pod, statuses, pr);
    if (s.isSkip()) continue;
    plugin = std::string(p->name());
    if (s.ok()) {
      proposal = std::move(pr);
      return s;
    }
    if (!s.isRejected()) return withPlugin(std::move(s), p->name());
    last = withPlugin(std::move(s), p->name());
  }
  return last;
}

std::pair<PostFilterResult, Status> Framework::runPostFilterPlugins(CycleState& state,
                                                                    const api::Pod& pod,
                                                                    const NodeToStatus& statuses) {
  std::pair<PostFilterResult, Status> out;
  (void)timed(kEpPostFilter, [&]() -> Status {
    out = [&]() -> std::pair<PostFilterResult, Status> {
      // As upstream: the first success wins; an unresolvable rejection ends the run; otherwise
      // the rejections' reasons add up and the first rejecting plugin is named.
      PostFilterResult lastResult;  // the last rejection's result that asks for a change
      std::vector<std::string> reasons;
      std::string rejector;
      for (auto* p : postFilter_) {
        auto [result, s] = p->postFilter(state, pod, statuses);
        if (s.ok()) return {std::move(result), std::move(s)};
        if (s.code() == Code::kUnschedulableAndUnresolvable) {
          return {std::move(result), withPlugin(std::move(s), p->name())};
        }
        if (!s.isRejected()) return {PostFilterResult{}, withPlugin(std::move(s), p->name())};
        if (result.nominatedNodeName) lastResult = std::move(result);
        reasons.insert(reasons.end(), s.reasons().begin(), s.reasons().end());
        if (rejector.empty()) rejector = p->name();
      }
      if (rejector.empty()) {
        return {PostFilterResult{},
                Status::unschedulable("no PostFilter plugin made the pod schedulable")};
      }
      Status last(Code::kUnschedulable, std::move(reasons));
      last.withPlugin(rejector);
      return {std::move(lastResult), std::move(last)};
    }();
    return out.second;
  });
  return out;
}

Status Framework::runPreScorePlugins(CycleState& state, const api::Pod& pod,
                                     const std::vector<const NodeInfo*>& nodes) {
  return timed(kEpPreScore, [&]() -> Status {
    for (auto* p : preScore_) {
      Status s = timedPlugin(p, "PreScore", [&] { return p->preScore(state, pod, nodes); });
      if (s.isSkip()) {
        state.skipScorePlugins.emplace(p->name());
        continue;
      }
      if (!s.ok()) {
        return Status::error("running PreScore plugin \"" + std::string(p->name()) +
                             "\": " + s.message())
            .withPlugin(p->name());
      }
    }
    return {};
  });
}

Status Framework::runScorePlugins(const CycleState& state, const api::Pod& pod,
                                  const std::vector<const NodeInfo*>& nodes,
                                  std::vector<int64_t>& totals, ScoreBreakdown* breakdown) {
  return timed(kEpScore, [&]() -> Status {
    totals.assign(nodes.size(), 0);
    std::vector<const Weighted<ScorePlugin>*> active;
    for (const auto& w : score_) {
      if (state.skipScorePlugins.empty() || !state.skipScorePlugins.contains(w.plugin->name())) {
        active.push_back(&w);
      }
    }
    if (active.empty() || nodes.empty()) return {};
    // Kept from cycle to cycle (per thread: explain may score beside the loop), so that neither
    // the lists nor the node names in them are allocated again for every pod.
    thread_local std::vector<std::vector<NodeScore>> scratch;
    auto& scores = scratch;  // the calling thread's, also inside the parallel workers
    if (scores.size() < active.size()) scores.resize(active.size());
    for (size_t k = 0; k < active.size(); ++k) scores[k].resize(nodes.size());
    std::mutex errMu;
    std::optional<Status> firstError;  // guarded by errMu
    std::atomic<bool> failed{false};   // firstError is set
    parallelizer().until(
        static_cast<int>(nodes.size()),
        [&](int i) {
          for (size_t k = 0; k < active.size(); ++k) {
            int64_t v = 0;
            Status s = timedPlugin(active[k]->plugin, "Score", [&] {
              return active[k]->plugin->score(state, pod, *nodes[i], v);
            });
            if (!s.ok()) {
              std::lock_guard lock(errMu);
              if (!firstError) firstError = withPlugin(std::move(s), active[k]->plugin->name());
              failed.store(true, std::memory_order_relaxed);
              return;
            }
            scores[k][i].name.assign(nodes[i]->name());
            scores[k][i].score = v;
          }
        },
        [&] { return failed.load(std::memory_order_relaxed); });
    if (firstError) {
      return Status::error("running Score plugin \"" + firstError->plugin() +
                           "\": " + firstError->message())
          .withPlugin(firstError->plugin());
    }
    if (breakdown != nullptr) {
      *breakdown = {};
      for (size_t k = 0; k < active.size(); ++k) {
        breakdown->plugins.emplace_back(active[k]->plugin->name());
        breakdown->weights.push_back(active[k]->weight);
        auto& raw = breakdown->raw.emplace_back();
        for (const auto& ns : scores[k]) raw.push_back(ns.score);
      }
    }
    for (size_t k = 0; k < active.size(); ++k) {
      const auto* plugin = active[k]->plugin;
      if (plugin->hasNormalizeScore()) {
        Status s = plugin->normalizeScore(state, pod, scores[k]);
        if (!s.ok()) {
          return Status::error("running Normalize on Score plugin \"" +
                               std::string(plugin->name()) + "\": " + s.message())
              .withPlugin(plugin->name());
        }
      }
      for (size_t i = 0; i < nodes.size(); ++i) {
        int64_t v = scores[k][i].score;
        if (v < kMinNodeScore || v > kMaxNodeScore) {
          return Status::error("plugin \"" + std::string(plugin->name()) +
                               "\" returns an invalid score " + std::to_string(v) +
                               ", it should in the range of [0, 100] after normalizing")
              .withPlugin(plugin->name());
        }
        totals[i] += v * active[k]->weight;
      }
      if (breakdown != nullptr) {
        auto& normalized = breakdown->normalized.emplace_back();
        for (const auto& ns : scores[k]) normalized.push_back(ns.score);
      }
    }
    return {};
  });
}

Status Framework::runReservePluginsReserve(CycleState& state, const api::Pod& pod,
                                           const std::string& node) {
  return timed(kEpReserve, [&]() -> Status {
    for (auto* p : reserve_) {
      Status s = timedPlugin(p, "Reserve", [&] { return p->reserve(state, pod, node); });
      if (!s.ok()) {
        return Status::error("running Reserve plugin \"" + std::string(p->name()) +
                             "\": " + s.message())
            .withPlugin(p->name());
      }
    }
    return {};
  });
}

void Framework::runReservePluginsUnreserve(CycleState& state, const api::Pod& pod,
                                           const std::string& node) {
  (void)timed(kEpUnreserve, [&]() -> Status {
    for (auto it = reserve_.rbegin(); it != reserve_.rend(); ++it)
      (*it)->unreserve(state, pod, node);
    return {};
  });
}

Status Framework::runPermitPlugins(CycleState& state, const api::Pod& pod,
                                   const std::string& node) {
  return timed(kEpPermit, [&]() -> Status {
    std::map<std::string, std::chrono::milliseconds> pending;
    for (auto* p : permit_) {
      std::chrono::milliseconds timeout{0};
      Status s = timedPlugin(p, "Permit", [&] { return p->permit(state, pod, node, timeout); });
      if (s.ok()) continue;
      if (s.isWait()) {
        pending[std::string(p->name())] =
            std::min<std::chrono::milliseconds>(timeout, kMaxPermitTimeout);
        continue;
      }
      if (s.isRejected()) return withPlugin(std::move(s), p->name());
      return Status::error("running Permit plugin \"" + std::string(p->name()) +
                           "\": " + s.message())
          .withPlugin(p->name());
    }
    if (pending.empty()) return {};
    auto wp = std::make_shared<WaitingPodImpl>(pod, std::move(pending));
    std::lock_guard lock(waitingMu_);
    waiting_[pod.metadata.uid] = std::move(wp);
    return Status::wait();
  });
}

void Framework::onPermitDecided(const std::string& uid, std::function<void()> fn) {
  std::shared_ptr<WaitingPodImpl> wp;
  {
    std::lock_guard lock(waitingMu_);
    if (auto it = waiting_.find(uid); it != waiting_.end()) wp = it->second;
    if (wp) {
      // Nobody blocks on this pod: the timer ends its wait at the deadline.
      if (!permitTimer_.joinable()) {
        permitTimer_ = std::jthread([this](std::stop_token st) {
          pthread_setname_np(pthread_self(), "permit-timer");
          runPermitTimer(std::move(st));
        });
      }
      timerKick_ = true;
      timerCv_.notify_all();
    }
  }
  if (wp) {
    wp->setOnDecided(std::move(fn));
  } else {
    fn();
  }
}

Status Framework::waitOnPermit(const api::Pod& pod, std::chrono::duration<double>* waited) {
  if (waited != nullptr) *waited = std::chrono::duration<double>(0);
  std::shared_ptr<WaitingPodImpl> wp;
  {
    std::lock_guard lock(waitingMu_);
    auto it = waiting_.find(pod.metadata.uid);
    if (it == waiting_.end()) return {};
    wp = it->second;
  }
  Status s = wp->wait(waited);
  std::lock_guard lock(waitingMu_);
  waiting_.erase(pod.metadata.uid);
  return s;
}

std::shared_ptr<WaitingPod> Framework::getWaitingPod(std::string_view uid) {
  std::lock_guard lock(waitingMu_);
  auto it = waiting_.find(std::string(uid));
  return it == waiting_.end() ? nullptr : it->second;
}

void Framework::iterateWaitingPods(const std::function<void(WaitingPod&)>& fn) {
  std::vector<std::shared_ptr<WaitingPodImpl>> all;
  {
    std::lock_guard lock(waitingMu_);
    for (auto& [_, wp] : waiting_) all.push_back(wp);
  }
  for (auto& wp : all) fn(*wp);
}

void Framework::rejectAllWaitingPods(const std::string& message) {
  iterateWaitingPods([&](WaitingPod& wp) { wp.reject("", message); });
}

Status Framework::runPreBindPlugins(CycleState& state, const api::Pod& pod,
                                    const std::string& node) {
  return timed(kEpPreBind, [&]() -> Status {
    for (auto* p : preBind_) {
      Status s = p->preBind(state, pod, node);
      if (!s.ok()) {
        if (s.isRejected()) return withPlugin(std::move(s), p->name());
        return Status::error("running PreBind plugin \"" + std::string(p->name()) +
                             "\": " + s.message())
            .withPlugin(p->name());
      }
    }
    return {};
  });
}

Status Framework::runBindPlugins(CycleState& state, const api::Pod& pod, const std::string& node) {
  return timed(kEpBind, [&]() -> Status {
    Status last = Status::skip();
    for (auto* p : bind_) {
      last = p->bind(state, pod, node);
      if (last.isSkip()) continue;
      if (!last.ok()) {
        // The HTTP code goes with it: the scheduler tells a binding the apiserver refused (409
        // bound already, 404 gone) from one worth retrying.
        return Status::error("running Bind plugin \"" + std::string(p->name()) +
                             "\": " + last.message())
            .withPlugin(p->name())
            .withHttpCode(last.httpCode());
      }
      return last;
    }
    return last;
  });
}

void Framework::runPostBindPlugins(CycleState& state, const api::Pod& pod,
                                   const std::string& node) {
  (void)timed(kEpPostBind, [&]() -> Status {
    for (auto* p : postBind_) p->postBind(state, pod, node);
    return {};
  });
}

void Framework::observeExtensionPoint(ExtensionPoint ep, Code code,
                                      std::chrono::steady_clock::time_point start) const {
  static constexpr std::array<std::string_view, kNumExtensionPoints> kNames = {
      "PreFilter", "PostFilter", "PreScore", "Score", "Reserve",
      "Unreserve", "Permit",     "PreBind",  "Bind",  "PostBind"};
  const auto c = static_cast<size_t>(code);
  if (c >= kNumCodes) return;
  auto& slot = epChildren_[ep][c];
  prometheus::Histogram* h = slot.load(std::memory_order_acquire);
  if (h == nullptr) {
    h = &services_.metrics->extensionPoint(kNames[ep], codeName(code), profileName_);
    slot.store(h, std::memory_order_release);
  }
  h->Observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

void Framework::observePlugin(const Plugin* p, std::string_view ep, Code code,
                              std::chrono::steady_clock::time_point start) const {
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const auto c = static_cast<size_t>(code);
  const auto point = std::find(kTimedPoints.begin(), kTimedPoints.end(), ep);
  const auto owner =
      std::find_if(owned_.begin(), owned_.end(), [&](const auto& o) { return o.get() == p; });
  if (c >= kNumCodes || point == kTimedPoints.end() || owner == owned_.end()) {
    services_.metrics->pluginExecution(p->name(), ep, codeName(code)).Observe(seconds);
    return;
  }
  auto& slot = pluginChildren_[static_cast<size_t>(owner - owned_.begin())]
                              [static_cast<size_t>(point - kTimedPoints.begin())][c];
  prometheus::Histogram* h = slot.load(std::memory_order_acquire);
  if (h == nullptr) {
    h = &services_.metrics->pluginExecution(p->name(), ep, codeName(code));
    slot.store(h, std::memory_order_release);
  }
  h->Observe(seconds);
}

std::unique_ptr<Framework> Prebuilt::take(std::string_view path, std::string_view schedulerName) {
  auto it = byPath.find(path);
  if (it == byPath.end() || it->second->profileName() != schedulerName) return nullptr;
  auto f = std::move(it->second);
  byPath.erase(it);
  return f;
}

config::WiringCheck wiringCheck(const Registry& registry, std::shared_ptr<Prebuilt> keep) {
  return [registry, keep](const config::Profile& profile, const std::string& path) {
    config::WiringResult r;
    try {
      auto f = std::make_unique<Framework>(profile, registry, Services{}, path);
      r.queueSort = std::string(f->queueSort().name());
      if (keep) keep->byPath.insert_or_assign(path, std::move(f));
    } catch (const FrameworkError& e) {
      r.errors = e.what();
      if (keep) keep->byPath.erase(path);
    }
    return r;
  };
}

}  // namespace ksched::framework
