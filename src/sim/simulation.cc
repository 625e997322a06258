// The Simulator (include/ksched/sim.h): a SchedulerCore in synchronous mode over an in-memory
// cluster that answers the core's ClusterApi and EventSink, and feeds the core back what the
// cluster saw change (a binding, a deletion, a status write), as an informer would.
#include <spdlog/spdlog.h>

#include <chrono>
#include <deque>
#include <mutex>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include <ksched/sim.h>

#include "config/scheduler_config.h"
#include "config/wiring.h"
#include "plugins/registry.h"
#include "scheduler/explain.h"
#include "scheduler/scheduler_core.h"
#include "sim/watched_objects.h"

namespace ksched::sim {
namespace {

constexpr std::string_view kPreemptedBy = "Preempted by pod ";

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The objects of `others` a watch of `path` ("/apis/<group>/<version>/<plural>",
// "/api/v1/<plural>", optionally "/namespaces/<ns>/" before the plural) would list.
std::vector<UnstructuredPtr> watchedObjects(const Cluster& cluster, const std::string& path,
                                            std::set<std::string>& kinds) {
  std::string rest = path;
  std::string apiVersion;
  if (rest.starts_with("/apis/")) {
    rest = rest.substr(6);
    const size_t g = rest.find('/');
    const size_t v = g == std::string::npos ? g : rest.find('/', g + 1);
    if (v == std::string::npos) return {};
    apiVersion = rest.substr(0, v);
    rest = rest.substr(v + 1);
  } else if (rest.starts_with("/api/v1/")) {
    apiVersion = "v1";
    rest = rest.substr(8);
  } else {
    return {};
  }
  std::string ns;
  if (rest.starts_with("namespaces/")) {
    rest = rest.substr(11);
    const size_t s = rest.find('/');
    if (s == std::string::npos) return {};
    ns = rest.substr(0, s);
    rest = rest.substr(s + 1);
  }
  std::vector<UnstructuredPtr> out;
  for (const auto& [key, objects] : cluster.others) {
    if (!key.starts_with(apiVersion + "/")) continue;
    const std::string kind = lower(key.substr(apiVersion.size() + 1));
    if (rest != kind + "s" && rest != kind + "es" && rest != kind) continue;
    kinds.insert(key);
    for (const auto& o : objects) {
      if (ns.empty() || o->metadata.namespace_ == ns) out.push_back(o);
    }
  }
  return out;
}

std::string keyOf(const api::Pod& p) { return p.metadata.namespace_ + "/" + p.metadata.name; }

}  // namespace

struct Simulator::State {
  Cluster cluster;
  Options options;
  Registry registry;
  config::SchedulerConfiguration config;
  std::vector<Cluster> saved;  // begin() stack
  uint64_t recreated = 0;      // victims recreated so far (their uids)
};

namespace {

// One run of the core over the state's cluster.
class Run final : public ClusterApi, public scheduler::EventSink {
 public:
  Run(Simulator::State& st, bool preemption) : st_(st) {
    for (const auto& o : st.cluster.namespaces) listers_.add(o);
    for (const auto& o : st.cluster.services) listers_.add(o);
    for (const auto& o : st.cluster.replicaSets) listers_.add(o);
    for (const auto& o : st.cluster.statefulSets) listers_.add(o);
    for (const auto& o : st.cluster.replicationControllers) listers_.add(o);
    for (const auto& o : st.cluster.podDisruptionBudgets) listers_.add(o);
    for (const auto& o : st.cluster.persistentVolumeClaims) listers_.add(o);
    for (const auto& o : st.cluster.persistentVolumes) listers_.add(o);
    for (const auto& o : st.cluster.storageClasses) listers_.add(o);
    for (const auto& o : st.cluster.csiNodes) listers_.add(o);

    scheduler::Environment env;
    env.api = this;
    env.events = this;
    env.listers = &listers_;
    env.watchObjects = [this](const ObjectWatch& w, ObjectEventHandlers h) {
      // Files may hold any served version of the kind: every one is watched.
      auto objects = watchedObjects(st_.cluster, w.path, watchedKinds_);
      std::vector<std::string> paths{w.path};
      for (const auto& alt : w.alternatives) {
        auto more = watchedObjects(st_.cluster, alt, watchedKinds_);
        objects.insert(objects.end(), more.begin(), more.end());
        paths.push_back(alt);
      }
      // The resourceclaim controller's part (claims from templates) reads the templates.
      if (w.path.ends_with("/resourceclaims")) {
        for (const auto& [key, objects] : st_.cluster.others) {
          if (key.starts_with("resource.k8s.io/") && key.ends_with("/ResourceClaimTemplate")) {
            watchedKinds_.insert(key);
          }
        }
      }
      return watched_.watch(std::move(paths), std::move(objects), std::move(h));
    };
    scheduler::Options o;
    o.features = st.config.featureGates;
    o.profiles = config::frameworkProfiles(st.config);
    if (!preemption) {
      for (auto& p : o.profiles) {
        p.plugins.postFilter.enabled.clear();
        p.plugins.postFilter.disabled = {config::PluginRef{"*"}};
      }
    }
    for (const auto& p : o.profiles) profiles_.insert(p.schedulerName);
    o.parallelism = 1;  // one order of evaluation: the same answer for the same seed
    o.percentageOfNodesToScore = st.config.percentageOfNodesToScore;
    o.queue.podInitialBackoff = std::chrono::seconds(st.config.podInitialBackoffSeconds);
    o.queue.podMaxBackoff = std::chrono::seconds(st.config.podMaxBackoffSeconds);
    // Time in the queue is a counter: pods added one after the other are ordered so, always.
    o.queue.clock = [t = std::make_shared<std::atomic<int64_t>>(0)] {
      return std::chrono::steady_clock::time_point(std::chrono::nanoseconds(t->fetch_add(1) + 1));
    };
    o.seed = st.options.seed;
    o.synchronous = true;
    o.maxAttempts = std::max(1, st.options.maxAttempts);
    o.diagnosisAnnotation = true;
    o.onSuggestedHost = [this](const api::Pod& pod, const scheduler::ScheduleResult& r) {
      if (r.ties > 0) ties_[pod.metadata.uid] = {r.ties, r.tiedWith};
    };
    core_ = std::make_unique<scheduler::SchedulerCore>(env, st.registry, std::move(o));
    watched_.replayAdds();
    for (const auto& n : st.cluster.nodes) core_->onNodeAdd(n);
    // Bound pods first (the cache holds them before the first cycle), then the pending ones in
    // the order read.
    for (PodPtr p : st.cluster.pods) {
      p = withGeneratedClaims(p);
      pods_[p->metadata.uid] = p;
      keys_[p->metadata.uid] = keyOf(*p);
      order_.push_back(p->metadata.uid);
      if (!p->spec.nodeName.empty()) core_->onPodAdd(p);
    }
    for (const auto& given : st.cluster.pods) {
      if (!given->spec.nodeName.empty()) continue;
      const PodPtr& p = pods_.at(given->metadata.uid);
      if (profiles_.contains(p->spec.schedulerName)) track(p->metadata.uid, "pending");
      core_->onPodAdd(p);
    }
    core_->startScheduling();
  }

  ~Run() override {
    (void)core_->stop(std::chrono::steady_clock::now());
    core_.reset();
  }

  // A pod to place; a missing uid is made up. Returns its uid.
  std::string add(const PodPtr& given, const std::string& origin) {
    auto pod = std::make_shared<api::Pod>(*given);
    pod->spec.nodeName.clear();
    if (pod->spec.schedulerName.empty()) pod->spec.schedulerName = "default-scheduler";
    if (pod->metadata.namespace_.empty()) pod->metadata.namespace_ = "default";
    if (pod->metadata.uid.empty() || pods_.contains(pod->metadata.uid)) {
      std::string uid = "sim-" + pod->metadata.namespace_ + "-" + pod->metadata.name;
      for (int i = 1; pods_.contains(uid); ++i) {
        uid =
            "sim-" + pod->metadata.namespace_ + "-" + pod->metadata.name + "-" + std::to_string(i);
      }
      pod->metadata.uid = std::move(uid);
    }
    watched_.generateClaims(*pod, st_.cluster.others);
    pods_[pod->metadata.uid] = pod;
    keys_[pod->metadata.uid] = keyOf(*pod);
    order_.push_back(pod->metadata.uid);
    track(pod->metadata.uid, origin);
    core_->onPodAdd(pod);
    return pod->metadata.uid;
  }

  // Runs cycles until no pod is left to try.
  void drive() {
    const auto start = std::chrono::steady_clock::now();
    auto lastProgress = start;
    for (int round = 0;; ++round) {
      while (core_->runNext()) {
        drainFeed();
        if (st_.options.progress) {
          const auto now = std::chrono::steady_clock::now();
          if (now - lastProgress >= std::chrono::seconds(1)) {
            lastProgress = now;
            st_.options.progress(core_->stats().attempts, placed(), tracked_.size());
          }
        }
      }
      drainFeed();
      // Pods still waiting at Permit (a gang short of members) would time out.
      if (round < 5 &&
          core_->rejectWaitingPods(
              "rejected: still waiting at Permit when no pod was left to schedule") > 0) {
        core_->runHandedOn();
        drainFeed();
        continue;
      }
      break;
    }
    seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

  // The outcome so far of the pods tracked, in the order they came.
  Result result() {
    std::lock_guard lock(mu_);
    Result r;
    r.seconds = seconds_;
    for (const auto& [kind, objects] : st_.cluster.others) {
      if (!watchedKinds_.contains(kind)) r.unreadKinds.emplace_back(kind, objects.size());
    }
    r.attempts = core_->stats().attempts;
    for (const auto& [uid, origin] : tracked_) {
      PodResult pr = outcomeLocked(uid, origin);
      if (pr.name.empty()) continue;
      (pr.node ? r.scheduled : r.unschedulable) += 1;
      r.pods.push_back(std::move(pr));
    }
    for (const auto& [uid, victim] : victims_) {
      Victim v = victim;
      if (auto p = preemptorOf_.find(uid); p != preemptorOf_.end()) {
        auto k = keys_.find(p->second);
        v.preemptor = k != keys_.end() ? k->second : p->second;
      }
      r.victims.push_back(std::move(v));
    }
    return r;
  }

  // What became of the last pod add() took.
  PodResult lastAdded() {
    std::lock_guard lock(mu_);
    return outcomeLocked(tracked_.back().first, tracked_.back().second);
  }

  PodResult outcomeLocked(const std::string& uid, const std::string& origin) const {
    PodResult pr;
    pr.uid = uid;
    pr.origin = origin;
    PodPtr p = latest(uid);
    if (!p) return pr;
    pr.namespace_ = p->metadata.namespace_;
    pr.name = p->metadata.name;
    const auto failures = failures_.find(uid);
    pr.attempts = failures == failures_.end() ? 0 : failures->second;
    if (gone_.contains(uid)) {
      pr.reason = "preempted after it was placed";
    } else if (!p->spec.nodeName.empty()) {
      pr.node = p->spec.nodeName;
      pr.devices = watched_.devicesOf(*p);
      ++pr.attempts;
      if (auto t = ties_.find(uid); t != ties_.end()) {
        pr.ties = t->second.first;
        pr.tiedWith = t->second.second;
      }
    } else {
      if (auto e = lastFailure_.find(uid); e != lastFailure_.end()) {
        pr.reason = e->second;
      } else if (Status gate = core_->preEnqueueStatus(*p); !gate.ok()) {
        pr.reason = "not attempted: held at PreEnqueue by " + gate.plugin() + ": " + gate.message();
      } else {
        pr.reason = "not attempted: held at PreEnqueue (scheduling gates, or a plugin waiting)";
      }
      auto a = p->metadata.annotations.find(std::string(scheduler::kDiagnosisAnnotation));
      if (a != p->metadata.annotations.end()) pr.diagnosis = a->second;
    }
    return pr;
  }

  // Writes the cluster as it is now into the state.
  void commit() {
    std::lock_guard lock(mu_);
    std::vector<PodPtr> pods;
    pods.reserve(order_.size());
    for (const auto& uid : order_) {
      if (auto it = pods_.find(uid); it != pods_.end()) pods.push_back(it->second);
    }
    st_.cluster.pods = std::move(pods);
    watched_.writeBack(st_.cluster.others);
  }

  // ---- ClusterApi ----
  ApiResult bindPod(const api::Pod& pod, const std::string& nodeName) override {
    std::lock_guard lock(mu_);
    auto it = pods_.find(pod.metadata.uid);
    if (it == pods_.end())
      return ApiError{404, "NotFound", "pods \"" + keyOf(pod) + "\" not found"};
    if (!it->second->spec.nodeName.empty()) {
      return ApiError{409, "Conflict",
                      "pod " + keyOf(pod) + " is already assigned to node \"" +
                          it->second->spec.nodeName + "\""};
    }
    auto bound = std::make_shared<api::Pod>(*it->second);
    bound->spec.nodeName = nodeName;
    bound->status.nominatedNodeName.clear();
    std::erase_if(bound->status.conditions,
                  [](const api::PodCondition& c) { return c.type == "PodScheduled"; });
    bound->status.conditions.push_back({"PodScheduled", "True", "", "", ""});
    PodPtr old = it->second;
    it->second = bound;
    feed_.push_back([this, old, bound] { core_->onPodUpdate(old, bound); });
    return std::nullopt;
  }

  ApiResult deletePod(const api::Pod& pod) override {
    std::lock_guard lock(mu_);
    auto it = pods_.find(pod.metadata.uid);
    if (it == pods_.end())
      return ApiError{404, "NotFound", "pods \"" + keyOf(pod) + "\" not found"};
    PodPtr old = it->second;
    pods_.erase(it);
    lastSeen_[old->metadata.uid] = old;
    gone_.insert(old->metadata.uid);
    victims_.emplace_back(old->metadata.uid, Victim{old->metadata.namespace_, old->metadata.name,
                                                    old->spec.nodeName, ""});
    feed_.push_back([this, old] { core_->onPodDelete(old); });
    if (st_.options.victimsBecomePending) {
      auto again = std::make_shared<api::Pod>(*old);
      again->spec.nodeName.clear();
      again->metadata.uid = old->metadata.uid + "-r" + std::to_string(++st_.recreated);
      again->metadata.deletionTimestamp.reset();
      again->status = api::PodStatus{};
      again->status.phase = "Pending";
      pods_[again->metadata.uid] = again;
      keys_[again->metadata.uid] = keys_[old->metadata.uid];
      order_.push_back(again->metadata.uid);
      tracked_.emplace_back(again->metadata.uid, "preempted");
      feed_.push_back([this, again] { core_->onPodAdd(again); });
    }
    return std::nullopt;
  }

  ApiResult patchPodStatus(const api::Pod& pod, const nlohmann::json& patch,
                           std::string_view /*contentType*/) override {
    std::lock_guard lock(mu_);
    auto it = pods_.find(pod.metadata.uid);
    if (it == pods_.end())
      return ApiError{404, "NotFound", "pods \"" + keyOf(pod) + "\" not found"};
    auto next = std::make_shared<api::Pod>(*it->second);
    if (patch.is_array()) {
      // A JSON patch: the scheduler's removal of a condition, guarded by tests.
      if (auto error = applyConditionOps(*next, patch)) return ApiError{422, "Invalid", *error};
      PodPtr old = it->second;
      it->second = next;
      feed_.push_back([this, old, next] { core_->onPodUpdate(old, next); });
      return std::nullopt;
    }
    try {
      if (auto s = patch.find("status"); s != patch.end() && s->is_object()) {
        if (auto n = s->find("nominatedNodeName"); n != s->end()) {
          next->status.nominatedNodeName = n->is_string() ? n->get<std::string>() : "";
        }
        if (auto e = s->find("extendedResourceClaimStatus"); e != s->end() && e->is_object()) {
          api::PodExtendedResourceClaimStatus ext;
          ext.resourceClaimName = e->value("resourceClaimName", "");
          for (const auto& m : e->value("requestMappings", nlohmann::json::array())) {
            ext.requestMappings.push_back({m.value("containerName", ""),
                                           m.value("resourceName", ""),
                                           m.value("requestName", "")});
          }
          next->status.extendedResourceClaimStatus = std::move(ext);
        }
        if (auto cs = s->find("conditions"); cs != s->end() && cs->is_array()) {
          for (const auto& c : *cs) {
            api::PodCondition pc;
            pc.type = c.value("type", "");
            pc.status = c.value("status", "");
            pc.reason = c.value("reason", "");
            pc.message = c.value("message", "");
            std::erase_if(next->status.conditions,
                          [&](const api::PodCondition& x) { return x.type == pc.type; });
            next->status.conditions.push_back(std::move(pc));
          }
        }
      }
      if (auto m = patch.find("metadata"); m != patch.end() && m->is_object()) {
        if (auto a = m->find("annotations"); a != m->end() && a->is_object()) {
          for (const auto& [k, v] : a->items()) {
            if (v.is_string()) next->metadata.annotations[k] = v.get<std::string>();
          }
        }
      }
    } catch (const nlohmann::json::exception& e) {
      return ApiError{422, "Invalid", e.what()};
    }
    PodPtr old = it->second;
    it->second = next;
    feed_.push_back([this, old, next] { core_->onPodUpdate(old, next); });
    return std::nullopt;
  }

  // JSON patch operations "test" and "remove" on /status/conditions/<i>[/<field>]; the error,
  // if one fails or is of another kind.
  static std::optional<std::string> applyConditionOps(api::Pod& pod, const nlohmann::json& ops) {
    static constexpr std::string_view kPrefix = "/status/conditions/";
    for (const auto& op : ops) {
      if (!op.is_object()) return "a JSON patch operation must be an object";
      const std::string kind = op.value("op", "");
      const std::string path = op.value("path", "");
      if (!path.starts_with(kPrefix)) return "unsupported path " + path;
      std::string rest = path.substr(kPrefix.size());
      const std::string field =
          rest.find('/') == std::string::npos ? "" : rest.substr(rest.find('/') + 1);
      rest = rest.substr(0, rest.find('/'));
      size_t i = 0;
      if (rest.empty() || rest.find_first_not_of("0123456789") != std::string::npos ||
          (i = std::stoul(rest)) >= pod.status.conditions.size()) {
        return "no condition at " + path;
      }
      auto& c = pod.status.conditions[i];
      if (kind == "remove" && field.empty()) {
        pod.status.conditions.erase(pod.status.conditions.begin() + static_cast<std::ptrdiff_t>(i));
      } else if (kind == "test") {
        const std::string* have = field == "type"      ? &c.type
                                  : field == "status"  ? &c.status
                                  : field == "reason"  ? &c.reason
                                  : field == "message" ? &c.message
                                                       : nullptr;
        const auto want = op.find("value");
        if (have == nullptr || want == op.end() || !want->is_string() ||
            want->get<std::string>() != *have) {
          return "test failed at " + path;
        }
      } else {
        return "unsupported operation " + kind + " at " + path;
      }
    }
    return std::nullopt;
  }

  ApiResult get(const std::string& path, nlohmann::json* out) override {
    std::lock_guard lock(mu_);
    return watched_.get(path, out);
  }
  ApiResult patch(const std::string& path, const nlohmann::json& patch, nlohmann::json* out,
                  std::string_view /*contentType*/) override {
    std::lock_guard lock(mu_);
    return watched_.patch(path, patch, out,
                          [this](std::function<void()> f) { feed_.push_back(std::move(f)); });
  }

  ApiResult create(const std::string& path, const nlohmann::json& object,
                   nlohmann::json* out) override {
    std::lock_guard lock(mu_);
    return watched_.create(path, object, out,
                           [this](std::function<void()> f) { feed_.push_back(std::move(f)); });
  }
  ApiResult remove(const std::string& path, const nlohmann::json& preconditions) override {
    std::lock_guard lock(mu_);
    return watched_.remove(path, preconditions,
                           [this](std::function<void()> f) { feed_.push_back(std::move(f)); });
  }

  // `p`, or a copy with the ResourceClaims of its templates generated (WatchedObjects).
  PodPtr withGeneratedClaims(const PodPtr& p) {
    if (p->spec.resourceClaims.empty()) return p;
    auto copy = std::make_shared<api::Pod>(*p);
    return watched_.generateClaims(*copy, st_.cluster.others) ? copy : p;
  }

  // ---- EventSink ----
  void event(const api::Pod& regarding, std::string_view /*type*/, std::string_view reason,
             std::string_view /*action*/, std::string message) override {
    std::lock_guard lock(mu_);
    const std::string& uid = regarding.metadata.uid;
    if (reason == "FailedScheduling") {
      ++failures_[uid];
      lastFailure_[uid] = std::move(message);
    } else if (reason == "Preempted" && message.starts_with(kPreemptedBy)) {
      // "Preempted by pod <uid> on node <node>"
      std::string rest = message.substr(kPreemptedBy.size());
      preemptorOf_[uid] = rest.substr(0, rest.find(' '));
    }
  }
  void forget(const std::string& /*uid*/) override {}
  uint64_t shutdown(std::chrono::steady_clock::time_point /*deadline*/) override { return 0; }
  [[nodiscard]] uint64_t sent() const override { return 0; }

 private:
  void track(const std::string& uid, const std::string& origin) {
    tracked_.emplace_back(uid, origin);
  }

  // The latest version of a tracked pod (deleted ones: the last one seen).
  PodPtr latest(const std::string& uid) const {
    if (auto it = pods_.find(uid); it != pods_.end()) return it->second;
    if (auto it = lastSeen_.find(uid); it != lastSeen_.end()) return it->second;
    return nullptr;
  }

  size_t placed() {
    std::lock_guard lock(mu_);
    size_t n = 0;
    for (const auto& [uid, origin] : tracked_) {
      auto it = pods_.find(uid);
      if (it != pods_.end() && !it->second->spec.nodeName.empty()) ++n;
    }
    return n;
  }

  void drainFeed() {
    for (;;) {
      std::vector<std::function<void()>> batch;
      {
        std::lock_guard lock(mu_);
        if (feed_.empty()) break;
        batch.swap(feed_);
      }
      for (auto& f : batch) f();
    }
  }

  Simulator::State& st_;
  StaticClusterListers listers_;
  std::set<std::string> profiles_;
  std::set<std::string> watchedKinds_;  // keys of Cluster::others a plugin watches
  WatchedObjects watched_;              // what plugins watch, and their writes to it
  std::unique_ptr<scheduler::SchedulerCore> core_;

  std::mutex mu_;
  std::unordered_map<std::string, PodPtr> pods_;              // the cluster's pods by uid
  std::unordered_map<std::string, PodPtr> lastSeen_;          // deleted pods
  std::vector<std::string> order_;                            // uids in the order the pods came
  std::vector<std::pair<std::string, std::string>> tracked_;  // (uid, origin) to report
  std::unordered_set<std::string> gone_;
  std::unordered_map<std::string, std::pair<int, std::vector<std::string>>> ties_;
  std::unordered_map<std::string, int> failures_;
  std::unordered_map<std::string, std::string> lastFailure_;
  std::unordered_map<std::string, std::string> keys_;         // uid -> namespace/name
  std::unordered_map<std::string, std::string> preemptorOf_;  // victim uid -> preemptor uid
  std::vector<std::pair<std::string, Victim>> victims_;       // (victim uid, victim)
  std::vector<std::function<void()>> feed_;
  double seconds_ = 0;
};

}  // namespace

Simulator::Simulator(Cluster cluster, Options options, const Registry& outOfTree)
    : state_(std::make_unique<State>()) {
  state_->cluster = std::move(cluster);
  state_->options = std::move(options);
  state_->registry = plugins::inTreeRegistry();
  try {
    state_->registry.merge(outOfTree);
  } catch (const std::exception& e) {
    throw ConfigError(e.what());
  }
  if (state_->options.config.empty()) {
    state_->config = config::defaultConfiguration();
    state_->config.featureGates = state_->options.features;
  } else {
    auto loaded =
        config::loadConfig(state_->options.config, state_->options.configName,
                           config::wiringCheck(state_->registry), state_->options.features);
    if (!loaded.ok()) {
      std::string msg = "invalid configuration in " + state_->options.configName + ":";
      for (const auto& e : loaded.errors) msg += "\n  " + e;
      throw ConfigError(msg);
    }
    state_->config = std::move(*loaded.config);
  }
  if (!state_->config.extenders.empty()) {
    spdlog::warn("{}: extenders are not called in a simulation ({} dropped)",
                 state_->options.configName, state_->config.extenders.size());
    state_->config.extenders.clear();
  }
}

Simulator::~Simulator() = default;
Simulator::Simulator(const Simulator& other) : state_(std::make_unique<State>(*other.state_)) {}
Simulator& Simulator::operator=(const Simulator& other) {
  if (this != &other) state_ = std::make_unique<State>(*other.state_);
  return *this;
}

const Cluster& Simulator::cluster() const { return state_->cluster; }
const Options& Simulator::options() const { return state_->options; }
std::vector<std::string> Simulator::profiles() const {
  std::vector<std::string> out;
  for (const auto& p : state_->config.profiles) out.push_back(p.schedulerName);
  return out;
}

Result Simulator::schedule(const std::vector<PodPtr>& pods, const std::string& origin) {
  std::vector<Pending> pending;
  pending.reserve(pods.size());
  for (const auto& p : pods) pending.push_back({p, origin});
  return schedule(pending);
}

Result Simulator::schedule(const std::vector<Pending>& pods) {
  Run run(*state_, state_->options.preemption);
  for (const auto& p : pods) run.add(p.pod, p.origin);
  run.drive();
  Result r = run.result();
  run.commit();
  return r;
}

std::vector<PodPtr> Simulator::drain(const std::string& node) {
  Cluster& c = state_->cluster;
  auto n = std::find_if(c.nodes.begin(), c.nodes.end(),
                        [&](const NodePtr& x) { return x->metadata.name == node; });
  if (n == c.nodes.end())
    throw std::invalid_argument("node \"" + node + "\" is not in the cluster");
  auto cordoned = std::make_shared<api::Node>(**n);
  cordoned->spec.unschedulable = true;
  *n = std::move(cordoned);
  std::vector<PodPtr> out;
  std::vector<PodPtr> kept;
  for (const auto& p : c.pods) {
    const bool daemon =
        std::any_of(p->metadata.ownerReferences.begin(), p->metadata.ownerReferences.end(),
                    [](const api::OwnerReference& o) { return o.kind == "DaemonSet"; });
    const bool mirror = p->metadata.annotations.contains("kubernetes.io/config.mirror");
    if (p->spec.nodeName != node || daemon || mirror) {
      kept.push_back(p);
      continue;
    }
    auto again = std::make_shared<api::Pod>(*p);
    again->spec.nodeName.clear();
    again->status = api::PodStatus{};
    again->status.phase = "Pending";
    out.push_back(std::move(again));
  }
  c.pods = std::move(kept);
  return out;
}

PodResult Simulator::canSchedule(const api::Pod& pod) {
  State copy = *state_;
  std::erase_if(copy.cluster.pods, [](const PodPtr& p) { return p->spec.nodeName.empty(); });
  Run run(copy, false);
  run.add(std::make_shared<api::Pod>(pod), "work");
  run.drive();
  Result r = run.result();
  for (auto& p : r.pods) {
    if (p.origin == "work") return p;
  }
  return {};
}

Result Simulator::preempt(const api::Pod& pod) {
  Run run(*state_, true);
  run.add(std::make_shared<api::Pod>(pod), "work");
  run.drive();
  Result r = run.result();
  run.commit();
  return r;
}

Simulator::Capacity Simulator::capacity(const api::Pod& pod, int limit) {
  State copy = *state_;
  std::erase_if(copy.cluster.pods, [](const PodPtr& p) { return p->spec.nodeName.empty(); });
  Run run(copy, false);
  Capacity out;
  for (int i = 0; i < limit; ++i) {
    auto copyPod = std::make_shared<api::Pod>(pod);
    copyPod->metadata.name = pod.metadata.name + "-" + std::to_string(i + 1);
    copyPod->metadata.uid.clear();
    run.add(copyPod, "work");
    run.drive();
    PodResult last = run.lastAdded();
    if (!last.node) {
      out.next = std::move(last);
      return out;
    }
    ++out.fits;
  }
  return out;
}

void Simulator::begin() { state_->saved.push_back(state_->cluster); }
void Simulator::commit() {
  if (state_->saved.empty()) throw std::logic_error("commit() without begin()");
  state_->saved.pop_back();
}
void Simulator::revert() {
  if (state_->saved.empty()) throw std::logic_error("revert() without begin()");
  state_->cluster = std::move(state_->saved.back());
  state_->saved.pop_back();
}

}  // namespace ksched::sim
