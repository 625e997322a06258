// SchedulerCore: construction, the feed, start and stop, explain. The scheduling and binding
// cycles are in scheduling_cycle.cc.
#include "scheduler/scheduler_core.h"

#include <pthread.h>
#include <spdlog/spdlog.h>

#include <condition_variable>
#include <optional>
#include <thread>

#include <ksched/api/features.h>

#include "extender/http_extender.h"
#include "queue/pod_update.h"

namespace ksched::scheduler {
namespace {

const StaticClusterListers kNoListers;

}  // namespace

SchedulerCore::SchedulerCore(Environment env, const Registry& registry, Options options)
    : env_(std::move(env)),
      options_(std::move(options)),
      preEnqueueStatus_(
          options_.features.enabled(features::Feature::kSchedulerPreEnqueuePodStatus)),
      nominateForExpectation_(
          options_.features.enabled(features::Feature::kNominatedNodeNameForExpectation)),
      resizePreemption_(options_.features.enabled(
          features::Feature::kInPlacePodVerticalScalingSchedulerPreemption)),
      parallelizer_(
          std::min<int>(options_.parallelism, std::max(1u, std::thread::hardware_concurrency()))),
      cache_([this] {
        cache::CacheOptions o;
        o.features = options_.features;
        return o;
      }()),
      registry_(registry),
      statusWrites_(StatusWrites::Options{
          .run =
              [this](std::function<void()> task) {
                if (options_.synchronous) return handOn(std::move(task));
                return statusWriters_.submit(std::move(task));
              },
          .send = [this](const StatusWrites::Write& w) { sendStatusWrite(w); },
          .held = [this](const StatusWrites::Write& w) { return heldByFeed(w); },
          .clock = {},
          .timerThread = !options_.synchronous}),
      podGroupCycles_(options_.features.enabled(features::Feature::kGenericWorkload)),
      binders_("binder", options_.synchronous ? 0 : options_.binderThreads),
      statusWriters_("status", options_.synchronous ? 0 : 2) {
  try {
    extenders_ = extender::buildExtenders(options_.extenders);
  } catch (const extender::ExtenderError& e) {
    throw framework::FrameworkError(e.what());
  }
  if (env_.api == nullptr || env_.events == nullptr) {
    throw framework::FrameworkError("scheduler: a ClusterApi and an EventSink are needed");
  }
  framework::Services services;
  services.api = env_.api;
  services.extenders = &extenders_;
  services.events = env_.events;
  services.parallelizer = &parallelizer_;
  services.listers = env_.listers;
  services.metrics = options_.metrics;
  services.nominatedPodsForNode = [this](const std::string& node) {
    return queue_->nominatedPodsForNode(node);
  };
  services.hasNominatedPods = [this] { return queue_->hasNominatedPods(); };
  services.activate = [this](const std::vector<PodPtr>& pods) { queue_->activate(pods); };
  services.currentNodeInfo = [this](std::string_view node) { return cache_.nodeInfo(node); };
  services.addPodEventHandlers = [this](PodEventHandlers h) {
    pluginPodHandlers_.push_back(std::move(h));
  };
  services.watchObjects = env_.watchObjects;
  services.seed = options_.seed;
  services.synchronous = options_.synchronous;
  services.clusterEvent = [this](const ClusterEvent& ev, const EventObject& o,
                                 const EventObject& n) { onClusterEvent(ev, o, n); };
  services.shared = shared_;
  services.features = options_.features;
  if (options_.synchronous) {
    services.runAsync = [this](std::function<void()> task) { return handOn(std::move(task)); };
  }
  if (options_.seed) algorithm_ = Algorithm(*options_.seed);
  algorithm_.recordTies(static_cast<bool>(options_.onSuggestedHost));
  algorithm_.enableBatching(options_.metrics, options_.queue.clock);
  queue::QueueingHintMap hints;
  if (options_.profiles.empty())
    throw framework::FrameworkError("profiles: at least one is needed");
  for (size_t i = 0; i < options_.profiles.size(); ++i) {
    const auto& profile = options_.profiles[i];
    const std::string path = "profiles[" + std::to_string(i) + "]";
    if (byName_.contains(profile.schedulerName)) {
      throw framework::FrameworkError(path + ".schedulerName: Duplicate value: \"" +
                                      profile.schedulerName + "\"");
    }
    frameworks_.push_back(
        std::make_unique<framework::Framework>(profile, registry, services, path));
    if (frameworks_.back()->queueSort().name() != frameworks_.front()->queueSort().name()) {
      throw framework::FrameworkError(path +
                                      ".plugins.queueSort: queueSort must be the same for all "
                                      "profiles");
    }
    byName_[profile.schedulerName] = frameworks_.back().get();
    if (options_.metrics != nullptr) {
      profileMetrics_[frameworks_.back().get()] = &options_.metrics->profile(profile.schedulerName);
    }
    for (auto& [plugin, evs] : frameworks_.back()->enqueueEvents()) {
      hints[profile.schedulerName][plugin] = std::move(evs);
    }
  }
  watchPodGroups();
  const QueueSortPlugin* sort = &frameworks_.front()->queueSort();
  queue::Options queueOptions = options_.queue;
  queueOptions.features = options_.features;
  if (preEnqueueStatus_) {
    queueOptions.onPreEnqueueRejection = [this](const PodPtr& pod, const std::string& message) {
      return onPreEnqueueRejection(pod, message);
    };
  }
  if (auto* m = options_.metrics) {
    queueOptions.onIncoming = [m, next = std::move(queueOptions.onIncoming)](
                                  std::string_view queue, std::string_view event) {
      m->incomingPod(queue, event);
      if (next) next(queue, event);
    };
    queueOptions.onHint = [m](std::string_view plugin, std::string_view event,
                              std::string_view hint, double seconds) {
      m->observeQueueingHint(plugin, event, hint, seconds);
    };
  }
  queue_ = std::make_unique<queue::SchedulingQueue>(
      std::move(queueOptions),
      [sort](const QueuedPodInfo& a, const QueuedPodInfo& b) { return sort->less(a, b); },
      [this](const api::Pod& pod) {
        auto* fwk = frameworkFor(pod);
        return fwk == nullptr ? Status{} : fwk->runPreEnqueuePlugins(pod);
      },
      std::move(hints));

  if (auto* m = options_.metrics) {
    metricsRefresher_ = m->addRefresher([this, m] {
      const auto c = queue_->detailedCounts();
      m->setPendingPods(c.active, c.backoff, c.unschedulable, c.gated);
      m->setInFlightEvents(c.inFlightEventsByLabel);
      m->setUnschedulablePods(c.unschedulableByPlugin);
      m->setCacheSize(cache_.assumedPodCount(), cache_.podCount(), cache_.nodeCount());
    });
  }
}

SchedulerCore::~SchedulerCore() {
  stop();
  if (auto* m = options_.metrics) m->removeRefresher(metricsRefresher_);
}

void SchedulerCore::observeAttempt(const framework::Framework& fwk, metrics::Result result,
                                   std::chrono::steady_clock::time_point start) const {
  if (options_.metrics == nullptr) return;
  auto it = profileMetrics_.find(&fwk);
  if (it == profileMetrics_.end()) return;
  options_.metrics->observeAttempt(
      *it->second, result,
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

framework::Framework* SchedulerCore::frameworkFor(const api::Pod& pod) const {
  auto it = byName_.find(pod.spec.schedulerName);
  return it == byName_.end() ? nullptr : it->second;
}

Status SchedulerCore::preEnqueueStatus(const api::Pod& pod) const {
  auto* fwk = frameworkFor(pod);
  return fwk == nullptr ? Status{} : fwk->runPreEnqueuePlugins(pod);
}

bool SchedulerCore::responsibleFor(const api::Pod& pod) const {
  return frameworkFor(pod) != nullptr;
}

namespace {
// Explain writes nothing, events included.
class NoEvents final : public EventRecorder {
 public:
  void event(const api::Pod&, std::string_view, std::string_view, std::string_view,
             std::string) override {}
};
NoEvents noEvents;
}  // namespace

Explanation SchedulerCore::explain(const std::string& ns, const std::string& name,
                                   const std::string& node) {
  PodPtr pod = this->pod(ns + "/" + name);
  if (!pod) throw ExplainError(404, "pod " + ns + "/" + name + " not found");
  if (!responsibleFor(*pod)) {
    std::string names;
    for (const auto& p : options_.profiles) names += (names.empty() ? "" : ", ") + p.schedulerName;
    throw ExplainError(400, "pod " + ns + "/" + name + " is for scheduler \"" +
                                pod->spec.schedulerName + "\", not one of this scheduler's (" +
                                names + ")");
  }
  std::lock_guard lock(explainMu_);
  auto& fwk = explainFrameworks_[pod->spec.schedulerName];
  if (!fwk) {
    if (!explainParallelizer_) {
      explainParallelizer_ = std::make_unique<framework::ThreadPoolParallelizer>(
          std::min<int>(options_.parallelism,
                        static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))));
    }
    framework::Services services;
    services.events = &noEvents;
    services.parallelizer = explainParallelizer_.get();
    services.listers = env_.listers;
    services.nominatedPodsForNode = [this](const std::string& n) {
      return queue_->nominatedPodsForNode(n);
    };
    // The scheduler's shared state (DRA's claims, slices and classes as watched): explain sees
    // what the scheduling cycle sees.
    services.shared = shared_;
    services.features = options_.features;
    for (size_t i = 0; i < options_.profiles.size(); ++i) {
      if (options_.profiles[i].schedulerName != pod->spec.schedulerName) continue;
      fwk = std::make_unique<framework::Framework>(options_.profiles[i], registry_, services,
                                                   "profiles[" + std::to_string(i) + "]");
    }
  }
  cache_.updateSnapshot(explainSnapshot_);
  // A bound pod (or one assumed while its binding is on the way) is explained as if it were
  // not there yet: where it would land now.
  const PodInfoPtr cached = cache_.getPod(pod->metadata.uid);
  const std::string placedOn = cached ? cached->pod->spec.nodeName : pod->spec.nodeName;
  std::optional<SnapshotWithoutPod> without;
  const NodeInfoLister* snapshot = &explainSnapshot_;
  if (!placedOn.empty()) {
    snapshot = &without.emplace(explainSnapshot_, placedOn, pod->metadata.uid);
  }
  fwk->setSnapshot(snapshot);
  struct Unset {
    framework::Framework& f;
    ~Unset() { f.setSnapshot(nullptr); }
  } unset{*fwk};
  api::Pod evaluated = *pod;
  evaluated.spec.nodeName.clear();
  Explanation e = explainPod(*fwk, evaluated, *snapshot, options_.percentageOfNodesToScore, node);
  e.boundTo = placedOn;
  if (const std::string* group = pod->spec.podGroupName(); group != nullptr && podGroupCycles_) {
    e.group = explainGroup(*pod, *group);
  }
  return e;
}

void SchedulerCore::startScheduling() {
  for (auto& f : frameworks_) f->start();
  scheduling_.store(true);
  // What held pods are waiting for was not written while this instance did not schedule.
  if (preEnqueueStatus_) queue_->recheckGated();
  if (options_.synchronous) return;  // the caller runs the cycles; nothing expires meanwhile
  cache_.startCleanup();
  queue_->run();
  loop_ = std::jthread([this](std::stop_token st) {
    pthread_setname_np(pthread_self(), "sched");
    loop(std::move(st));
  });
}

ShutdownReport SchedulerCore::stop() {
  return stop(std::chrono::steady_clock::now() + options_.shutdownGracePeriod);
}

ShutdownReport SchedulerCore::stop(std::chrono::steady_clock::time_point deadline) {
  // A second caller waits for the first one's report.
  std::lock_guard stopLock(stopMu_);
  if (stopped_) return stopReport_;
  stopped_ = true;
  // At the deadline whatever still talks to the cluster is cut off: a binding or an event
  // retrying against an apiserver that is gone (or hangs) must not hold the process.
  std::optional<std::jthread> cutOff;
  if (env_.cutOff) {
    cutOff.emplace([this, deadline](std::stop_token st) {
      pthread_setname_np(pthread_self(), "shutdown-timer");
      std::mutex mu;
      std::condition_variable_any cv;
      std::unique_lock lock(mu);
      (void)cv.wait_until(lock, st, deadline, [] { return false; });
      if (st.stop_requested()) return;  // stop() finished first
      spdlog::warn("shutdown: the {} ms grace period is over; cutting off requests in flight",
                   options_.shutdownGracePeriod.count());
      env_.cutOff();
    });
  }
  loop_.request_stop();
  syncStop_.request_stop();
  queue_->close();
  if (loop_.joinable()) loop_.join();
  for (auto& f : frameworks_) f->rejectAllWaitingPods("scheduler is shutting down");
  // Bindings parked at PreBind fail (Unreserve on the binders) and none parks any more.
  parked_.stop();
  if (options_.synchronous) runHandedOn();
  // Plugins' own work (preemption's victim deletions) ends and PreBind waits return before the
  // binders drain, and all of it before the caller releases the Lease.
  for (auto& f : frameworks_) f->close();
  binders_.drain();
  // Delayed status writes not yet due are dropped (the next scheduler writes them again).
  statusWrites_.stop();
  statusWriters_.drain();
  stopReport_.eventsDropped = env_.events->shutdown(deadline);
  stopReport_.eventsSent = env_.events->sent();
  stopReport_.eventsDroppedTotal = env_.events->dropped();
  cutOff.reset();
  cache_.stopCleanup();
  if (stopReport_.eventsDropped > 0) {
    spdlog::warn("shutdown: dropped {} events not sent within the {} ms grace period",
                 stopReport_.eventsDropped, options_.shutdownGracePeriod.count());
  }
  return stopReport_;
}

bool SchedulerCore::handOn(std::function<void()> task) {
  std::lock_guard lock(handedOnMu_);
  handedOn_.push_back(std::move(task));
  return true;
}

void SchedulerCore::runHandedOn() {
  for (;;) {
    std::function<void()> task;
    {
      std::lock_guard lock(handedOnMu_);
      if (handedOn_.empty()) return;
      task = std::move(handedOn_.front());
      handedOn_.pop_front();
    }
    task();
  }
}

bool SchedulerCore::runNext() {
  auto qpi = queue_->popFor(syncStop_.get_token(), std::chrono::milliseconds(0));
  if (!qpi) {
    runHandedOn();
    return false;
  }
  scheduleGuarded(std::move(qpi));
  runHandedOn();
  return true;
}

size_t SchedulerCore::rejectWaitingPods(const std::string& message) {
  size_t n = 0;
  for (auto& f : frameworks_) {
    f->iterateWaitingPods([&](WaitingPod&) { ++n; });
    f->rejectAllWaitingPods(message);
  }
  return n;
}

Stats SchedulerCore::stats() const {
  return Stats{attempts_.load(), scheduled_.load(), unschedulable_.load(), errors_.load(),
               bindConflicts_.load()};
}

PodPtr SchedulerCore::pod(const std::string& key) const {
  std::shared_lock lock(podsMu_);
  auto it = pods_.find(key);
  return it == pods_.end() ? nullptr : it->second;
}

const ClusterListers& SchedulerCore::listers() const {
  return env_.listers != nullptr ? *env_.listers : kNoListers;
}

// ---- the feed ----

void SchedulerCore::onPodAdd(const PodPtr& pod) {
  {
    std::unique_lock lock(podsMu_);
    pods_[pod->metadata.key()] = pod;
  }
  for (auto& h : pluginPodHandlers_) {
    if (h.onAdd) h.onAdd(pod);
  }
  if (assigned(*pod)) {
    if (Status s = cache_.addPod(pod); !s.ok()) spdlog::error("cache: {}", s.message());
    queue_->moveAllToActiveOrBackoffQueue(events::kAssignedPodAdd, {}, pod);
    if (resizePreemption_) feedResizeDeferred(nullptr, pod);
    return;
  }
  if (!responsibleFor(*pod) || pod->metadata.deletionTimestamp) return;
  if (podGroupCycles_ && pod->spec.podGroupName() != nullptr) {
    queue_->addGroupMember(pod, groupScope(*pod));
  } else {
    queue_->add(pod);
  }
}

void SchedulerCore::onPodUpdate(const PodPtr& oldPod, const PodPtr& newPod) {
  {
    std::unique_lock lock(podsMu_);
    pods_[newPod->metadata.key()] = newPod;
  }
  for (auto& h : pluginPodHandlers_) {
    if (h.onUpdate) h.onUpdate(oldPod, newPod);
  }
  const bool wasAssigned = assigned(*oldPod);
  const bool isAssigned = assigned(*newPod);
  if (isAssigned) {
    if (!wasAssigned) {
      queue_->remove(*newPod);  // bound, by us or by someone else
      if (Status s = cache_.addPod(newPod); !s.ok()) spdlog::error("cache: {}", s.message());
      // Bound: the nomination, if the apiserver left it, has served (upstream's apiserver
      // clears it at binding, ClearingNominatedNodeNameAfterBinding).
      if (nominateForExpectation_ && scheduling_.load() &&
          !newPod->status.nominatedNodeName.empty() && responsibleFor(*newPod)) {
        (void)statusWrites_.submit(newPod->metadata.uid,
                                   StatusWrites::Write::nomination(newPod, ""));
      }
      queue_->moveAllToActiveOrBackoffQueue(events::kAssignedPodAdd, {}, newPod);
      return;
    }
    if (Status s = cache_.updatePod(oldPod, newPod); !s.ok()) {
      spdlog::error("cache: {}", s.message());
    }
    // Of a status update (the kubelet's) only an in-place resize reported there can help a
    // pending pod: the room it frees.
    if (queue::isPodUpdated(*oldPod, *newPod)) {
      for (const ClusterEvent& ev :
           podSchedulingPropertiesChange(*newPod, *oldPod, options_.features)) {
        queue_->moveAllToActiveOrBackoffQueue(ev, oldPod, newPod);
      }
    } else if (queue::podResizeStatusChanged(*oldPod, *newPod) &&
               podScaledDown(*newPod, *oldPod, options_.features)) {
      queue_->moveAllToActiveOrBackoffQueue(
          ClusterEvent{EventResource::kAssignedPod, kUpdatePodScaleDown, {}}, oldPod, newPod);
    }
    if (resizePreemption_) feedResizeDeferred(oldPod, newPod);
    return;
  }
  if (!responsibleFor(*newPod)) {
    if (responsibleFor(*oldPod)) queue_->remove(*oldPod);
    return;
  }
  if (newPod->metadata.deletionTimestamp) {
    queue_->remove(*newPod);
    return;
  }
  if (cache_.isAssumed(newPod->metadata.uid)) return;  // a binding is in flight
  queue_->update(oldPod, newPod);
}

void SchedulerCore::onPodDelete(const PodPtr& pod) {
  {
    std::unique_lock lock(podsMu_);
    pods_.erase(pod->metadata.key());
  }
  for (auto& h : pluginPodHandlers_) {
    if (h.onDelete) h.onDelete(pod);
  }
  if (assigned(*pod)) {
    if (Status s = cache_.removePod(*pod); !s.ok()) spdlog::debug("cache: {}", s.message());
    queue_->moveAllToActiveOrBackoffQueue(events::kAssignedPodDelete, pod, {});
    if (resizePreemption_) feedResizeDeferred(pod, nullptr);
    return;
  }
  queue_->remove(*pod);
  if (auto* fwk = frameworkFor(*pod)) {
    if (auto wp = fwk->getWaitingPod(pod->metadata.uid)) wp->reject("", "pod was deleted");
  }
  parked_.cancel(pod->metadata.uid);
  if (responsibleFor(*pod)) {
    queue_->moveAllToActiveOrBackoffQueue(ClusterEvent{EventResource::kUnscheduledPod, kDelete, {}},
                                          pod, {});
    env_.events->forget(pod->metadata.uid);  // no more events about it: its series can go
  }
}

void SchedulerCore::onNodeAdd(const NodePtr& node) {
  cache_.addNode(node);
  queue_->moveAllToActiveOrBackoffQueue(events::kNodeAdd, {}, node);
  parked_.event(events::kNodeAdd, {}, node);
}

void SchedulerCore::onNodeUpdate(const NodePtr& oldNode, const NodePtr& newNode) {
  cache_.updateNode(oldNode, newNode);
  for (const ClusterEvent& ev : nodeSchedulingPropertiesChange(*newNode, *oldNode)) {
    queue_->moveAllToActiveOrBackoffQueue(ev, oldNode, newNode);
    parked_.event(ev, oldNode, newNode);
  }
}

void SchedulerCore::onNodeDelete(const NodePtr& node) {
  if (Status s = cache_.removeNode(*node); !s.ok()) spdlog::debug("cache: {}", s.message());
}

void SchedulerCore::onClusterEvent(const ClusterEvent& event, const EventObject& oldObj,
                                   const EventObject& newObj) {
  queue_->moveAllToActiveOrBackoffQueue(event, oldObj, newObj);
  parked_.event(event, oldObj, newObj);
}

}  // namespace ksched::scheduler
