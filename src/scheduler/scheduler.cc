#include "scheduler/scheduler.h"

#include <pthread.h>
#include <spdlog/spdlog.h>

#include <optional>
#include <random>
#include <thread>

#include <ksched/api/rfc3339.h>

#include "queue/pod_update.h"

namespace ksched::scheduler {
namespace {

bool assigned(const api::Pod& p) { return !p.spec.nodeName.empty(); }

ApiEventRecorder::Options eventRecorderOptions(const Options& options) {
  ApiEventRecorder::Options o;
  o.senders = options.eventSenders;
  if (auto* m = options.metrics) o.onDropped = [m](std::string_view r) { m->eventDropped(r); };
  return o;
}

}  // namespace

struct Scheduler::BindTask {
  framework::Framework* fwk = nullptr;
  std::unique_ptr<QueuedPodInfo> qpi;
  PodInfoPtr assumed;
  std::string node;
  CycleState state;
  int64_t cycle = 0;
  std::chrono::steady_clock::time_point start;
};

Scheduler::Scheduler(client::RestClient& client, client::RestClient& eventsClient,
                     const Registry& registry, Options options)
    : client_(client),
      eventsClient_(eventsClient),
      options_(std::move(options)),
      events_(eventsClient,
              options_.profiles.empty() ? config::kDefaultSchedulerName
                                        : options_.profiles[0].schedulerName,
              options_.instanceId, eventRecorderOptions(options_)),
      parallelizer_(
          std::min<int>(options_.parallelism, std::max(1u, std::thread::hardware_concurrency()))),
      pods_(client, {"Pod", "/api/v1/pods"}),
      nodes_(client, {"Node", "/api/v1/nodes"}),
      listers_(
          client,
          [this](const ClusterEvent& ev, const EventObject& oldObj, const EventObject& newObj) {
            queue_->moveAllToActiveOrBackoffQueue(ev, oldObj, newObj);
          }),
      registry_(registry),
      statusWrites_(
          [this](std::function<void()> task) { return statusWriters_.submit(std::move(task)); },
          [this](const StatusWrites::Write& w) { writePodScheduledFalse(w); }),
      binders_("binder", options_.binderThreads),
      statusWriters_("status", 2) {
  try {
    extenders_ = extender::buildExtenders(options_.extenders);
  } catch (const extender::ExtenderError& e) {
    throw framework::FrameworkError(e.what());
  }
  framework::Services services;
  services.client = &client_;
  services.extenders = &extenders_;
  services.events = &events_;
  services.parallelizer = &parallelizer_;
  services.listers = &listers_;
  services.metrics = options_.metrics;
  services.nominatedPodsForNode = [this](const std::string& node) {
    return queue_->nominatedPodsForNode(node);
  };
  services.activate = [this](const std::vector<PodPtr>& pods) { queue_->activate(pods); };
  services.currentNodeInfo = [this](std::string_view node) { return cache_.nodeInfo(node); };
  services.addPodEventHandlers = [this](PodEventHandlers h) {
    pluginPodHandlers_.push_back(std::move(h));
  };
  services.watchObjects = [this](const ObjectWatch& what, ObjectEventHandlers h) {
    // One watch per collection and selector, whichever plugins and profiles ask.
    std::shared_ptr<ObjectInformer> inf;
    for (auto& o : objectInformers_) {
      if (o->what().path == what.path && o->what().labelSelector == what.labelSelector) inf = o;
    }
    if (!inf) inf = objectInformers_.emplace_back(std::make_shared<ObjectInformer>(client_, what));
    inf->addHandlers(std::move(h));
    return std::shared_ptr<const ObjectStore>(inf);
  };
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
  const QueueSortPlugin* sort = &frameworks_.front()->queueSort();
  queue::Options queueOptions = options_.queue;
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

  // Plugins' handlers run first: a plugin knows a pod before the pod can be popped.
  pods_.addHandlers({[this](const PodPtr& p) {
                       for (auto& h : pluginPodHandlers_) {
                         if (h.onAdd) h.onAdd(p);
                       }
                       onPodAdd(p);
                     },
                     [this](const PodPtr& o, const PodPtr& n) {
                       for (auto& h : pluginPodHandlers_) {
                         if (h.onUpdate) h.onUpdate(o, n);
                       }
                       onPodUpdate(o, n);
                     },
                     [this](const PodPtr& p) {
                       for (auto& h : pluginPodHandlers_) {
                         if (h.onDelete) h.onDelete(p);
                       }
                       onPodDelete(p);
                     }});
  nodes_.addHandlers({[this](const NodePtr& n) { onNodeAdd(n); },
                      [this](const NodePtr& o, const NodePtr& n) { onNodeUpdate(o, n); },
                      [this](const NodePtr& n) { onNodeDelete(n); }});

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

Scheduler::~Scheduler() {
  stop();
  if (auto* m = options_.metrics) m->removeRefresher(metricsRefresher_);
}

void Scheduler::observeAttempt(const framework::Framework& fwk, metrics::Result result,
                               std::chrono::steady_clock::time_point start) const {
  if (options_.metrics == nullptr) return;
  auto it = profileMetrics_.find(&fwk);
  if (it == profileMetrics_.end()) return;
  options_.metrics->observeAttempt(
      *it->second, result,
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

framework::Framework* Scheduler::frameworkFor(const api::Pod& pod) const {
  auto it = byName_.find(pod.spec.schedulerName);
  return it == byName_.end() ? nullptr : it->second;
}

bool Scheduler::responsibleFor(const api::Pod& pod) const { return frameworkFor(pod) != nullptr; }

namespace {
// Explain writes nothing, events included.
class NoEvents final : public EventRecorder {
 public:
  void event(const api::Pod&, std::string_view, std::string_view, std::string_view,
             std::string) override {}
};
NoEvents noEvents;
}  // namespace

Explanation Scheduler::explain(const std::string& ns, const std::string& name,
                               const std::string& node) {
  PodPtr pod = pods_.get(ns + "/" + name);
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
    services.listers = &listers_;
    services.nominatedPodsForNode = [this](const std::string& n) {
      return queue_->nominatedPodsForNode(n);
    };
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
  return e;
}

bool Scheduler::startInformers(std::chrono::milliseconds syncTimeout) {
  listers_.start();
  for (auto& o : objectInformers_) o->start();
  nodes_.start();
  pods_.start();
  auto deadline = std::chrono::steady_clock::now() + syncTimeout;
  auto left = [&] {
    return std::max(std::chrono::duration_cast<std::chrono::milliseconds>(
                        deadline - std::chrono::steady_clock::now()),
                    std::chrono::milliseconds(0));
  };
  if (!(nodes_.waitForSync(left()) && pods_.waitForSync(left()) && listers_.waitForSync(left()))) {
    return false;
  }
  for (auto& o : objectInformers_) {
    if (!o->waitForSync(left())) {
      spdlog::error("{} ({}) did not sync: does the apiserver serve it (is its CRD installed)?",
                    o->what().kind, o->what().path);
      return false;
    }
  }
  return true;
}

bool Scheduler::informersSynced() const {
  for (const auto& o : objectInformers_) {
    if (!o->hasSynced()) return false;
  }
  return nodes_.hasSynced() && pods_.hasSynced() && listers_.hasSynced();
}

void Scheduler::startScheduling() {
  for (auto& f : frameworks_) f->start();
  cache_.startCleanup();
  queue_->run();
  loop_ = std::jthread([this](std::stop_token st) {
    pthread_setname_np(pthread_self(), "sched");
    loop(std::move(st));
  });
}

ShutdownReport Scheduler::stop() {
  // A second caller waits for the first one's report.
  std::lock_guard stopLock(stopMu_);
  if (stopped_) return stopReport_;
  stopped_ = true;
  const auto deadline = std::chrono::steady_clock::now() + options_.shutdownGracePeriod;
  // At the deadline whatever still talks to the apiserver is cut off: a binding or an event
  // retrying against an apiserver that is gone (or hangs) must not hold the process.
  std::optional<client::AbortAt> cutOff(
      std::in_place, deadline, std::vector<client::RestClient*>{&client_, &eventsClient_}, [this] {
        spdlog::warn(
            "shutdown: the {} ms grace period is over; cutting "
            "off requests in flight",
            options_.shutdownGracePeriod.count());
      });
  loop_.request_stop();
  queue_->close();
  if (loop_.joinable()) loop_.join();
  for (auto& f : frameworks_) f->rejectAllWaitingPods("scheduler is shutting down");
  // Plugins' own work (preemption's victim deletions) ends and PreBind waits return before the
  // binders drain, and all of it before the caller releases the Lease.
  for (auto& f : frameworks_) f->close();
  binders_.drain();
  statusWriters_.drain();
  stopReport_.eventsDropped = events_.shutdown(deadline);
  stopReport_.eventsSent = events_.sent();
  cutOff.reset();
  // Nothing of the scheduler talks to the apiserver any more: informers retrying a LIST against
  // an apiserver that is gone end at once instead of after their retries.
  client_.abort();
  eventsClient_.abort();
  pods_.stop();
  nodes_.stop();
  listers_.stop();
  for (auto& o : objectInformers_) o->stop();
  cache_.stopCleanup();
  if (stopReport_.eventsDropped > 0) {
    spdlog::warn("shutdown: dropped {} events not sent within the {} ms grace period",
                 stopReport_.eventsDropped, options_.shutdownGracePeriod.count());
  }
  return stopReport_;
}

Stats Scheduler::stats() const {
  return Stats{attempts_.load(), scheduled_.load(), unschedulable_.load(), errors_.load(),
               bindConflicts_.load()};
}

// ---- informer handlers (reflector threads) ----

void Scheduler::onPodAdd(const PodPtr& pod) {
  if (assigned(*pod)) {
    if (Status s = cache_.addPod(pod); !s.ok()) spdlog::error("cache: {}", s.message());
    queue_->moveAllToActiveOrBackoffQueue(events::kAssignedPodAdd, {}, pod);
    return;
  }
  if (responsibleFor(*pod) && !pod->metadata.deletionTimestamp) queue_->add(pod);
}

void Scheduler::onPodUpdate(const PodPtr& oldPod, const PodPtr& newPod) {
  const bool wasAssigned = assigned(*oldPod);
  const bool isAssigned = assigned(*newPod);
  if (isAssigned) {
    if (!wasAssigned) {
      queue_->remove(*newPod);  // bound, by us or by someone else
      if (Status s = cache_.addPod(newPod); !s.ok()) spdlog::error("cache: {}", s.message());
      queue_->moveAllToActiveOrBackoffQueue(events::kAssignedPodAdd, {}, newPod);
      return;
    }
    if (Status s = cache_.updatePod(oldPod, newPod); !s.ok()) {
      spdlog::error("cache: {}", s.message());
    }
    // A status update (the kubelet's) changes nothing a pending pod could wait for.
    if (queue::isPodUpdated(*oldPod, *newPod)) {
      for (const ClusterEvent& ev : podSchedulingPropertiesChange(*newPod, *oldPod)) {
        queue_->moveAllToActiveOrBackoffQueue(ev, oldPod, newPod);
      }
    }
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

void Scheduler::onPodDelete(const PodPtr& pod) {
  if (assigned(*pod)) {
    if (Status s = cache_.removePod(*pod); !s.ok()) spdlog::debug("cache: {}", s.message());
    queue_->moveAllToActiveOrBackoffQueue(events::kAssignedPodDelete, pod, {});
    return;
  }
  queue_->remove(*pod);
  if (auto* fwk = frameworkFor(*pod)) {
    if (auto wp = fwk->getWaitingPod(pod->metadata.uid)) wp->reject("", "pod was deleted");
  }
  if (responsibleFor(*pod)) {
    queue_->moveAllToActiveOrBackoffQueue(ClusterEvent{EventResource::kUnscheduledPod, kDelete, {}},
                                          pod, {});
    events_.forget(pod->metadata.uid);  // no more events about it: its series can go
  }
}

void Scheduler::onNodeAdd(const NodePtr& node) {
  cache_.addNode(node);
  queue_->moveAllToActiveOrBackoffQueue(events::kNodeAdd, {}, node);
}

void Scheduler::onNodeUpdate(const NodePtr& oldNode, const NodePtr& newNode) {
  cache_.updateNode(oldNode, newNode);
  for (const ClusterEvent& ev : nodeSchedulingPropertiesChange(*newNode, *oldNode)) {
    queue_->moveAllToActiveOrBackoffQueue(ev, oldNode, newNode);
  }
}

void Scheduler::onNodeDelete(const NodePtr& node) {
  if (Status s = cache_.removeNode(*node); !s.ok()) spdlog::debug("cache: {}", s.message());
}

// ---- scheduling thread ----

void Scheduler::loop(std::stop_token st) {
  while (!st.stop_requested()) {
    binders_.waitForRoom(options_.maxQueuedBindings, st);
    auto qpi = queue_->pop(st);
    if (!qpi) break;
    const std::string uid = qpi->pod().metadata.uid;
    try {
      scheduleOne(std::move(qpi));
    } catch (const std::exception& e) {
      // A bug must not take the scheduler down; the pod will be seen again on its next event.
      spdlog::error("scheduling cycle failed: {}", e.what());
      errors_.fetch_add(1);
      queue_->done(uid);
    }
  }
}

void Scheduler::scheduleOne(std::unique_ptr<QueuedPodInfo> qpi) {
  const int64_t cycle = queue_->schedulingCycle();
  framework::Framework* fwk = frameworkFor(qpi->pod());
  if (fwk == nullptr || qpi->pod().metadata.deletionTimestamp || assigned(qpi->pod()) ||
      cache_.isAssumed(qpi->pod().metadata.uid)) {
    queue_->done(qpi->pod().metadata.uid);
    return;
  }
  // A nomination this scheduler made may not have reached the informer yet (status writes are
  // asynchronous): the cycle sees the pod as the apiserver will, or a pod waiting for its
  // victims would look eligible to preempt again elsewhere.
  if (std::string node = queue_->nominatedNodeFor(qpi->pod().metadata.uid);
      !node.empty() && node != qpi->pod().status.nominatedNodeName) {
    auto withNomination = std::make_shared<api::Pod>(qpi->pod());
    withNomination->status.nominatedNodeName = std::move(node);
    qpi->podInfo = std::make_shared<const PodInfo>(std::move(withNomination));
  }
  const PodPtr pod = qpi->podInfo->pod;
  attempts_.fetch_add(1);
  const auto start = std::chrono::steady_clock::now();
  spdlog::debug("attempting to schedule pod {}/{}", pod->metadata.namespace_, pod->metadata.name);

  cache_.updateSnapshot(snapshot_);
  fwk->setSnapshot(&snapshot_);
  // Upstream samples plugin execution durations in 10% of the cycles.
  if (options_.metrics != nullptr) fwk->setRecordPluginMetrics(sampler_() % 100 < 10);
  CycleState state;
  ScheduleResult result;
  FitError fitError;
  Status error;
  auto outcome = algorithm_.schedulePod(*fwk, state, *pod, snapshot_,
                                        options_.percentageOfNodesToScore, result, fitError, error);
  if (outcome == Algorithm::Outcome::kScheduled && options_.metrics != nullptr) {
    options_.metrics->observeAlgorithm(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  if (outcome == Algorithm::Outcome::kUnschedulable) {
    unschedulable_.fetch_add(1);
    std::optional<std::string> nominate;
    if (fwk->hasPostFilterPlugins()) {
      auto [pf, pfs] = fwk->runPostFilterPlugins(state, *pod, fitError.diagnosis.nodeToStatus);
      if (!pfs.ok() && !pfs.message().empty()) fitError.diagnosis.postFilterMsg = pfs.message();
      nominate = std::move(pf.nominatedNodeName);
      if (nominate && !nominate->empty()) {
        // Reserve room on the node at once: later cycles count the nominated pod there.
        queue_->addNominatedPod(qpi->podInfo, *nominate);
      } else if (nominate) {
        queue_->deleteNominatedPodIfExists(*pod);
        if (pod->status.nominatedNodeName.empty()) nominate.reset();  // nothing to clear
      }
    }
    const std::string msg = fitError.message();
    std::string diagnosis;
    if (options_.diagnosisAnnotation) {
      diagnosis = diagnosisAnnotation(fitError.diagnosis, fitError.numAllNodes, *pod, snapshot_);
    }
    qpi->unschedulablePlugins = fitError.diagnosis.unschedulablePlugins;
    fwk->setSnapshot(nullptr);
    handleFailure(*fwk, std::move(qpi), Status::unschedulable(msg), msg, cycle, start, nominate,
                  diagnosis);
    return;
  }
  // Errors and Reserve/Permit rejections clear the pod's nomination, as upstream.
  const std::optional<std::string> clearNomination{std::string()};
  if (outcome == Algorithm::Outcome::kError) {
    (error.isError() ? errors_ : unschedulable_).fetch_add(1);
    fwk->setSnapshot(nullptr);
    handleFailure(*fwk, std::move(qpi), error, error.message(), cycle, start, clearNomination);
    return;
  }

  // Assume: the cache counts the pod on its node before the binding is confirmed.
  auto assumedPod = std::make_shared<api::Pod>(*pod);
  assumedPod->spec.nodeName = result.suggestedHost;
  auto assumedInfo = std::make_shared<const PodInfo>(assumedPod);
  if (Status s = cache_.assumePod(assumedInfo); !s.ok()) {
    errors_.fetch_add(1);
    fwk->setSnapshot(nullptr);
    handleFailure(*fwk, std::move(qpi), Status::error(s.message()), s.message(), cycle, start,
                  clearNomination);
    return;
  }
  queue_->deleteNominatedPodIfExists(*pod);
  Status s = fwk->runReservePluginsReserve(state, *assumedPod, result.suggestedHost);
  if (s.ok()) {
    s = fwk->runPermitPlugins(state, *assumedPod, result.suggestedHost);
    if (!s.ok() && !s.isWait()) {
      fwk->runReservePluginsUnreserve(state, *assumedPod, result.suggestedHost);
    }
  } else {
    fwk->runReservePluginsUnreserve(state, *assumedPod, result.suggestedHost);
  }
  fwk->setSnapshot(nullptr);
  if (!s.ok() && !s.isWait()) {
    (void)cache_.forgetPod(pod->metadata.uid);
    if (s.isRejected() && !s.plugin().empty()) qpi->unschedulablePlugins.insert(s.plugin());
    if (s.isError()) errors_.fetch_add(1);
    handleFailure(*fwk, std::move(qpi), s, s.message(), cycle, start, clearNomination);
    return;
  }

  auto task = std::make_shared<BindTask>();
  task->fwk = fwk;
  task->qpi = std::move(qpi);
  task->assumed = assumedInfo;
  task->node = result.suggestedHost;
  task->state = std::move(state);
  task->cycle = cycle;
  task->start = start;
  if (s.isWait()) {
    // A pod that waits at Permit holds no binder thread: its binding cycle starts once the wait
    // is decided (allowed, rejected or timed out).
    fwk->onPermitDecided(pod->metadata.uid, [this, task] { submitBinding(task); });
    return;
  }
  submitBinding(std::move(task));
}

void Scheduler::submitBinding(std::shared_ptr<BindTask> task) {
  const std::string uid = task->assumed->pod->metadata.uid;
  if (!binders_.submit([this, task] { bindingCycle(task); })) {
    (void)cache_.forgetPod(uid);  // shutting down: the pod stays pending
    queue_->done(uid);
  }
}

// ---- binder threads ----

void Scheduler::bindingCycle(std::shared_ptr<BindTask> task) {
  framework::Framework& fwk = *task->fwk;
  const api::Pod& pod = *task->assumed->pod;
  const bool waits = options_.metrics != nullptr && fwk.getWaitingPod(pod.metadata.uid) != nullptr;
  std::chrono::duration<double> waited{0};
  Status s = fwk.waitOnPermit(pod, &waited);
  if (waits) options_.metrics->observePermitWait(s.ok(), waited.count());
  if (s.ok()) s = fwk.runPreBindPlugins(task->state, pod, task->node);
  if (s.ok()) {
    // An interested binder extender binds instead of the Bind plugins.
    if (auto bound = extender::bindWithExtenders(extenders_, pod, task->node)) {
      s = std::move(*bound);
    } else {
      s = fwk.runBindPlugins(task->state, pod, task->node);
    }
  }
  if (s.ok()) {
    cache_.finishBinding(pod.metadata.uid);
    fwk.runPostBindPlugins(task->state, pod, task->node);
    scheduled_.fetch_add(1);
    observeAttempt(fwk, metrics::Result::kScheduled, task->start);
    if (auto* m = options_.metrics) {
      m->observePodScheduled(task->qpi->attempts,
                             std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                                           task->qpi->initialAttemptTimestamp)
                                 .count());
    }
    spdlog::debug("bound pod {}/{} to {}", pod.metadata.namespace_, pod.metadata.name, task->node);
    events_.event(pod, "Normal", "Scheduled", "Binding",
                  "Successfully assigned " + pod.metadata.namespace_ + "/" + pod.metadata.name +
                      " to " + task->node);
    events_.forget(pod.metadata.uid);  // bound: nothing more will be said about it
    queue_->done(pod.metadata.uid);
    return;
  }
  fwk.runReservePluginsUnreserve(task->state, pod, task->node);
  (void)cache_.forgetPod(pod.metadata.uid);
  // Room the pod held is free again: let pods waiting for it retry.
  queue_->moveAllToActiveOrBackoffQueue(events::kAssignedPodDelete, task->assumed->pod, {});
  const std::string msg = s.message();
  if (s.httpCode() == 409 || s.httpCode() == 404) {
    // Usually bound already (by a previous instance, or by an earlier try of this binding whose
    // answer was lost) or gone: no FailedScheduling for it. But the apiserver also answers 409
    // when its storage failed (etcd unavailable: "rpc error: code = Unavailable"), so a pod the
    // informer still has pending goes back to the queue (backoff) instead of out of it; the
    // informer takes it out once it sees it bound or deleted.
    bindConflicts_.fetch_add(1);
    observeAttempt(fwk, metrics::Result::kError, task->start);
    spdlog::info("binding {}/{} to {} refused: {}", pod.metadata.namespace_, pod.metadata.name,
                 task->node, msg);
    if (PodPtr latest = pendingVersion(pod)) {
      task->qpi->podInfo = std::make_shared<const PodInfo>(latest);
      queue_->addUnschedulableIfNotPresent(std::move(task->qpi), task->cycle);
    } else {
      queue_->done(pod.metadata.uid);
    }
    return;
  }
  if (s.isError()) errors_.fetch_add(1);
  if (s.isRejected() && !s.plugin().empty()) task->qpi->unschedulablePlugins.insert(s.plugin());
  handleFailure(fwk, std::move(task->qpi), s, msg, task->cycle, task->start, std::string());
}

void Scheduler::handleFailure(framework::Framework& fwk, std::unique_ptr<QueuedPodInfo> qpi,
                              const Status& status, const std::string& message, int64_t cycle,
                              std::chrono::steady_clock::time_point start,
                              const std::optional<std::string>& nominatedNode,
                              const std::string& diagnosis) {
  const PodPtr pod = qpi->podInfo->pod;
  const bool isError = status.isError();
  observeAttempt(fwk, isError ? metrics::Result::kError : metrics::Result::kUnschedulable, start);
  spdlog::info("pod {}/{} not scheduled: {}", pod->metadata.namespace_, pod->metadata.name,
               message);
  fwk.eventRecorder().event(*pod, "Warning", "FailedScheduling", "Scheduling", message);

  // A pod deleted or bound meanwhile is not requeued.
  PodPtr latest = pendingVersion(*pod);
  if (!latest) {
    queue_->done(pod->metadata.uid);
    return;
  }
  qpi->podInfo = std::make_shared<const PodInfo>(latest);
  auto podInfo = qpi->podInfo;
  queue_->addUnschedulableIfNotPresent(std::move(qpi), cycle);
  // Requeueing follows status.nominatedNodeName, which the apiserver does not have yet: keep
  // the nomination PostFilter just made (upstream adds it after requeueing, too).
  if (nominatedNode && !nominatedNode->empty()) {
    queue_->addNominatedPod(podInfo, *nominatedNode);
  } else if (nominatedNode) {
    queue_->deleteNominatedPodIfExists(*latest);
  }
  patchPodScheduledFalse(latest, isError ? "SchedulerError" : "Unschedulable", message,
                         nominatedNode, diagnosis);
}

PodPtr Scheduler::pendingVersion(const api::Pod& pod) const {
  PodPtr latest = pods_.get(pod.metadata.key());
  if (!latest || latest->metadata.uid != pod.metadata.uid || assigned(*latest)) return nullptr;
  return latest;
}

void Scheduler::patchPodScheduledFalse(const PodPtr& pod, const std::string& reason,
                                       const std::string& message,
                                       const std::optional<std::string>& nominatedNode,
                                       const std::string& diagnosis) {
  StatusWrites::Write w{pod, reason, message, nominatedNode, diagnosis};
  bool inInformer = false;
  if (const auto* c = pod->condition("PodScheduled"); c != nullptr && c->status == "False") {
    // What the informer's pod already says, as a write.
    auto it = pod->metadata.annotations.find(std::string(kDiagnosisAnnotation));
    const StatusWrites::Write current{pod, c->reason, c->message, pod->status.nominatedNodeName,
                                      it == pod->metadata.annotations.end() ? "" : it->second};
    inInformer = w.addsNothingTo(current);
  }
  (void)statusWrites_.submit(pod->metadata.uid, std::move(w), inInformer);
}

void Scheduler::writePodScheduledFalse(const StatusWrites::Write& w) {
  const api::Pod& pod = *w.pod;
  // Bound (or being bound) or deleted since: a late PodScheduled=False would contradict the
  // binding's PodScheduled=True.
  if (cache_.isAssumed(pod.metadata.uid) || !pendingVersion(pod)) return;
  nlohmann::json cond = {
      {"type", "PodScheduled"},
      {"status", "False"},
      {"reason", w.reason},
      {"message", w.message},
      {"lastProbeTime", nullptr},
      {"lastTransitionTime", api::formatRFC3339(std::chrono::system_clock::now())}};
  try {
    nlohmann::json status = {{"conditions", nlohmann::json::array({cond})}};
    if (w.nominatedNode) {
      status["nominatedNodeName"] =
          w.nominatedNode->empty() ? nlohmann::json(nullptr) : nlohmann::json(*w.nominatedNode);
    }
    nlohmann::json body = {{"status", status}};
    if (!w.diagnosis.empty()) {
      body["metadata"]["annotations"][std::string(kDiagnosisAnnotation)] = w.diagnosis;
    }
    client_.patch(
        "/api/v1/namespaces/" + pod.metadata.namespace_ + "/pods/" + pod.metadata.name + "/status",
        body, "application/strategic-merge-patch+json");
  } catch (const client::ApiError& e) {
    if (!e.isNotFound()) {
      spdlog::warn("updating PodScheduled of {}/{}: {}", pod.metadata.namespace_, pod.metadata.name,
                   e.what());
    }
  }
}

}  // namespace ksched::scheduler
