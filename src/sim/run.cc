#include "sim/run.h"

#include <algorithm>
#include <atomic>
#include <chrono>

#include "scheduler/explain.h"
#include "scheduler/options_from_config.h"

namespace ksched::sim {

scheduler::Options coreOptions(const config::SchedulerConfiguration& config, const Options& options,
                               bool preemption) {
  scheduler::Options o = scheduler::optionsFromConfig(config);
  // What a simulation changes, after the configuration's mapping:
  if (!preemption) {
    for (auto& p : o.profiles) {
      p.plugins.postFilter.enabled.clear();
      p.plugins.postFilter.disabled = {config::PluginRef{"*"}};
      // Workload-aware preemption too: a pod group preempts through its own point.
      p.plugins.podGroupPostFilter.enabled.clear();
      p.plugins.podGroupPostFilter.disabled = {config::PluginRef{"*"}};
    }
  }
  // One order of evaluation: the same answer for the same seed.
  o.parallelism = 1;
  // Extenders are HTTP servers of a live cluster and are never called here (the Simulator drops
  // them from the configuration, with a warning).
  o.extenders.clear();
  // Time in the queue is a counter: pods added one after the other are ordered so, always.
  o.queue.clock = [t = std::make_shared<std::atomic<int64_t>>(0)] {
    return std::chrono::steady_clock::time_point(std::chrono::nanoseconds(t->fetch_add(1) + 1));
  };
  o.seed = options.seed;
  o.synchronous = true;
  o.maxAttempts = std::max(1, options.maxAttempts);
  // The diagnosis of a pod not placed is part of its result.
  o.diagnosisAnnotation = true;
  return o;
}

Run::Run(Simulator::State& st, bool preemption)
    : st_(st),
      cluster_(
          st.cluster, st.options.victimsBecomePending, st.recreated,
          [this](const std::string& uid) { track(uid, "preempted"); }, listers_) {
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
  for (const auto& o : st.cluster.csiDrivers) listers_.add(o);
  for (const auto& o : st.cluster.csiStorageCapacities) listers_.add(o);

  scheduler::Environment env;
  env.api = &cluster_;
  env.events = &sink_;
  env.listers = &listers_;
  env.watchObjects = [this](const ObjectWatch& w, ObjectEventHandlers h) {
    return cluster_.watch(w, std::move(h));
  };
  scheduler::Options o = coreOptions(st.config, st.options, preemption);
  for (const auto& p : o.profiles) profiles_.insert(p.schedulerName);
  o.onSuggestedHost = [this](const api::Pod& pod, const scheduler::ScheduleResult& r) {
    sink_.suggested(pod, r);
  };
  o.onPodGroupCycle = [this](const scheduler::PodGroupTrace& t) { recordGroupCycle(t); };
  core_ = std::make_unique<scheduler::SchedulerCore>(env, st.registry, std::move(o));
  cluster_.feedTo(*core_);
  cluster_.replayAdds();
  feedCluster();
  core_->startScheduling();
}

Run::~Run() {
  (void)core_->stop(std::chrono::steady_clock::now());
  core_.reset();
}

void Run::feedCluster() {
  for (const auto& n : st_.cluster.nodes) core_->onNodeAdd(n);
  // Bound pods first (the cache holds them before the first cycle), then the pending ones in
  // the order read.
  for (const PodPtr& given : st_.cluster.pods) {
    PodPtr p = cluster_.insert(given);
    if (!p->spec.nodeName.empty()) core_->onPodAdd(p);
  }
  for (const PodPtr& given : st_.cluster.pods) {
    if (!given->spec.nodeName.empty()) continue;
    const PodPtr p = cluster_.latest(given->metadata.uid);
    if (profiles_.contains(p->spec.schedulerName)) track(p->metadata.uid, "pending");
    core_->onPodAdd(p);
  }
}

std::string Run::add(const PodPtr& given, const std::string& origin) {
  auto pod = std::make_shared<api::Pod>(*given);
  pod->spec.nodeName.clear();
  if (pod->spec.schedulerName.empty()) pod->spec.schedulerName = "default-scheduler";
  if (pod->metadata.namespace_.empty()) pod->metadata.namespace_ = "default";
  if (pod->metadata.uid.empty() || cluster_.contains(pod->metadata.uid)) {
    pod->metadata.uid = cluster_.freeUid(*pod);
  }
  const PodPtr stored = cluster_.insert(pod);
  track(stored->metadata.uid, origin);
  core_->onPodAdd(stored);
  return stored->metadata.uid;
}

void Run::drive() {
  const auto start = std::chrono::steady_clock::now();
  auto lastProgress = start;
  for (int round = 0;; ++round) {
    while (core_->runNext()) {
      cluster_.deliverFeed();
      if (st_.options.progress) {
        const auto now = std::chrono::steady_clock::now();
        if (now - lastProgress >= std::chrono::seconds(1)) {
          lastProgress = now;
          st_.options.progress(core_->stats().attempts, placed(), trackedCount());
        }
      }
    }
    cluster_.deliverFeed();
    // Pods still waiting at Permit (a gang short of members) would time out.
    if (round < 5 &&
        core_->rejectWaitingPods(
            "rejected: still waiting at Permit when no pod was left to schedule") > 0) {
      core_->runHandedOn();
      cluster_.deliverFeed();
      continue;
    }
    break;
  }
  seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

Result Run::result() const {
  Result r;
  r.seconds = seconds_;
  r.unreadKinds = cluster_.unreadKinds();
  r.attempts = core_->stats().attempts;
  r.podGroups = podGroups_;
  const auto pods = tracked();
  r.pods.reserve(pods.size());
  for (const auto& [uid, origin] : pods) {
    PodResult pr = outcome(uid, origin);
    if (pr.name.empty()) continue;
    (pr.node ? r.scheduled : r.unschedulable) += 1;
    r.pods.push_back(std::move(pr));
  }
  for (auto& [uid, victim] : cluster_.victims()) {
    if (const std::string by = sink_.preemptor(uid); !by.empty()) {
      const std::string key = cluster_.key(by);
      victim.preemptor = key.empty() ? by : key;
    }
    r.victims.push_back(std::move(victim));
  }
  return r;
}

PodResult Run::lastAdded() const {
  std::pair<std::string, std::string> last;
  {
    std::lock_guard lock(trackedMu_);
    last = tracked_.back();
  }
  return outcome(last.first, last.second);
}

void Run::commit() { cluster_.writeBack(st_.cluster); }

void Run::createObject(const std::string& collection, const nlohmann::json& object) {
  if (ApiResult r = cluster_.create(collection, object, nullptr)) {
    throw std::runtime_error("POST " + collection + ": " + r->message);
  }
  cluster_.deliverFeed();
}

std::optional<PodGroupResult> Run::podGroup(const std::string& key) const {
  for (const auto& g : podGroups_) {
    if (g.namespace_ + "/" + g.name == key) return g;
  }
  return std::nullopt;
}

void Run::recordGroupCycle(const scheduler::PodGroupTrace& t) {
  PodGroupResult g{.namespace_ = t.ns,
                   .name = t.name,
                   .gang = t.gang,
                   .minCount = t.minCount,
                   .topologyKey = t.topologyKey,
                   .scheduled = t.scheduled,
                   .message = t.message,
                   .members = {},
                   .placements = {},
                   .chosen = t.chosen,
                   .cycles = 1};
  for (const auto& m : t.members) {
    g.members.push_back(
        {.pod = m.pod, .node = m.node, .placed = m.placed, .tried = m.tried, .reason = m.reason});
  }
  for (const auto& p : t.placements) {
    g.placements.push_back({.name = p.name,
                            .nodes = p.nodes,
                            .feasible = p.feasible,
                            .message = p.message,
                            .proposed = p.proposed,
                            .score = p.score});
  }
  for (auto& known : podGroups_) {
    if (known.namespace_ == g.namespace_ && known.name == g.name) {
      g.cycles = known.cycles + 1;
      known = std::move(g);
      return;
    }
  }
  podGroups_.push_back(std::move(g));
}

void Run::track(const std::string& uid, const std::string& origin) {
  std::lock_guard lock(trackedMu_);
  tracked_.emplace_back(uid, origin);
}

size_t Run::trackedCount() const {
  std::lock_guard lock(trackedMu_);
  return tracked_.size();
}

std::vector<std::pair<std::string, std::string>> Run::tracked() const {
  std::lock_guard lock(trackedMu_);
  return tracked_;
}

size_t Run::placed() const {
  std::lock_guard lock(trackedMu_);
  size_t n = 0;
  for (const auto& [uid, origin] : tracked_) {
    if (cluster_.placed(uid)) ++n;
  }
  return n;
}

PodResult Run::outcome(const std::string& uid, const std::string& origin) const {
  PodResult pr;
  pr.uid = uid;
  pr.origin = origin;
  PodPtr p = cluster_.latest(uid);
  if (!p) return pr;
  pr.namespace_ = p->metadata.namespace_;
  pr.name = p->metadata.name;
  if (const std::string* g = p->spec.podGroupName()) pr.podGroup = *g;
  pr.attempts = sink_.failures(uid);
  if (cluster_.gone(uid)) {
    pr.reason = "preempted after it was placed";
  } else if (!p->spec.nodeName.empty()) {
    pr.node = p->spec.nodeName;
    pr.devices = cluster_.devicesOf(*p);
    ++pr.attempts;
    RecordingSink::Ties ties = sink_.ties(uid);
    pr.ties = ties.count;
    pr.tiedWith = std::move(ties.names);
  } else {
    if (auto failure = sink_.lastFailure(uid)) {
      pr.reason = std::move(*failure);
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

}  // namespace ksched::sim
