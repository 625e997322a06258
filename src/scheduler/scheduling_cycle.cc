// SchedulerCore's scheduling thread (the loop, one pod's scheduling cycle), its binder threads
// (binding cycles) and the handling of failed attempts (requeue, event, PodScheduled=False).
#include <spdlog/spdlog.h>

#include <optional>
#include <string>

#include <ksched/api/pod.h>

#include "extender/extenders.h"
#include "scheduler/scheduler_core.h"

namespace ksched::scheduler {
struct SchedulerCore::BindTask {
  framework::Framework* fwk = nullptr;
  std::unique_ptr<QueuedPodInfo> qpi;
  PodInfoPtr assumed;
  std::string node;
  CycleState state;
  int64_t cycle = 0;
  std::chrono::steady_clock::time_point start;
  // NominatedNodeNameForExpectation: a nomination to `node` was queued while the pod waited at
  // Permit.
  bool nominated = false;
  // Whether the nomination was written (then a failure's status write keeps it).
  bool nominationWritten = false;
  // The PreBind plugin that parked the binding (PreBindPlugin::preBind said Wait).
  size_t preBindFrom = 0;
};

void SchedulerCore::loop(std::stop_token st) {
  while (!st.stop_requested()) {
    binders_.waitForRoom(options_.maxQueuedBindings, st);
    auto qpi = queue_->pop(st);
    if (!qpi) break;
    scheduleGuarded(std::move(qpi));
  }
}

void SchedulerCore::scheduleGuarded(std::unique_ptr<QueuedPodInfo> qpi) {
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

void SchedulerCore::scheduleOne(std::unique_ptr<QueuedPodInfo> qpi) {
  const int64_t cycle = queue_->schedulingCycle();
  framework::Framework* fwk = frameworkFor(qpi->pod());
  if (fwk == nullptr || qpi->pod().metadata.deletionTimestamp ||
      (assigned(qpi->pod()) && !resizeDeferred(qpi->pod())) ||
      cache_.isAssumed(qpi->pod().metadata.uid) ||
      (options_.maxAttempts > 0 && qpi->attempts > options_.maxAttempts)) {
    queue_->done(qpi->pod().metadata.uid);
    return;
  }
  if (podGroupCycles_ && qpi->pod().spec.podGroupName() != nullptr && !assigned(qpi->pod())) {
    schedulePodGroup(*fwk, std::move(qpi), cycle);
    return;
  }
  // A nomination this scheduler made may not have reached the feed yet (status writes are
  // asynchronous): the cycle sees the pod as the apiserver will, or a pod waiting for its
  // victims would look eligible to preempt again elsewhere.
  if (std::string node = queue_->nominatedNodeFor(qpi->pod().metadata.uid);
      !node.empty() && node != qpi->pod().status.nominatedNodeName) {
    auto withNomination = std::make_shared<api::Pod>(qpi->pod());
    withNomination->status.nominatedNodeName = std::move(node);
    qpi->podInfo = std::make_shared<const PodInfo>(std::move(withNomination), options_.features);
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
  auto outcome = algorithm_.schedulePod(*fwk, state, pod, cycle, snapshot_,
                                        options_.percentageOfNodesToScore, result, fitError, error);
  if (outcome == Algorithm::Outcome::kScheduled && options_.onSuggestedHost) {
    options_.onSuggestedHost(*pod, result);
  }
  if (outcome == Algorithm::Outcome::kScheduled && options_.metrics != nullptr) {
    options_.metrics->observeAlgorithm(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  if (assigned(*pod)) {
    // A pod whose resize waits (KEP 5836): PostFilter may make room on its node; it is never
    // assumed, nominated or bound.
    Status s = error;
    if (outcome == Algorithm::Outcome::kUnschedulable) {
      qpi->unschedulablePlugins = fitError.diagnosis.unschedulablePlugins;
      s = Status::unschedulable(fitError.message());
      if (fwk->hasPostFilterPlugins()) {
        (void)fwk->runPostFilterPlugins(state, *pod, fitError.diagnosis.nodeToStatus);
      }
    } else if (outcome == Algorithm::Outcome::kScheduled) {
      s = fwk->runPermitPlugins(state, *pod, result.suggestedHost);
      if (s.isWait()) {
        // A Permit plugin of the user's wanted to wait: nothing is bound here, end the wait.
        if (auto wp = fwk->getWaitingPod(pod->metadata.uid)) wp->reject("", "resize deferred");
        s = fwk->waitOnPermit(*pod, nullptr);
      }
      if (s.isRejected() && !s.plugin().empty()) qpi->unschedulablePlugins.insert(s.plugin());
    }
    fwk->setSnapshot(nullptr);
    requeueResizeDeferred(*fwk, std::move(qpi), s, cycle, start);
    return;
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
      diagnosis = diagnosisAnnotation(*fwk, state, fitError.diagnosis, fitError.numAllNodes, *pod,
                                      snapshot_);
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

  PodInfoPtr assumed;
  Status s = assumeAndReserve(*fwk, state, *qpi->podInfo, result.suggestedHost, assumed);
  if (s.ok()) s = runPermit(*fwk, state, *assumed->pod, result.suggestedHost);
  fwk->setSnapshot(nullptr);
  if (!s.ok() && !s.isWait()) {
    failPlaced(*fwk, std::move(qpi), s, assumed != nullptr, cycle, start);
    return;
  }
  handToBinding(*fwk, std::move(qpi), std::move(assumed), result.suggestedHost, std::move(state),
                cycle, start, s.isWait());
}

Status SchedulerCore::assumeAndReserve(framework::Framework& fwk, CycleState& state,
                                       const PodInfo& queued, const std::string& node,
                                       PodInfoPtr& assumed) {
  // Assume: the cache counts the pod on its node before the binding is confirmed.
  const api::Pod& pod = *queued.pod;
  auto assumedPod = std::make_shared<api::Pod>(pod);
  assumedPod->spec.nodeName = node;
  // The queued pod's requests and affinity flags, computed from the same pod with the same
  // gates (computing them again was 2 % of a cycle that does not batch).
  auto info = std::make_shared<PodInfo>(queued);
  info->pod = assumedPod;
  if (Status s = cache_.assumePod(info); !s.ok()) return Status::error(s.message());
  assumed = info;
  queue_->deleteNominatedPodIfExists(pod);
  Status s = fwk.runReservePluginsReserve(state, *assumedPod, node);
  if (!s.ok()) fwk.runReservePluginsUnreserve(state, *assumedPod, node);
  return s;
}

Status SchedulerCore::runPermit(framework::Framework& fwk, CycleState& state,
                                const api::Pod& assumed, const std::string& node) {
  Status s = fwk.runPermitPlugins(state, assumed, node);
  if (!s.ok() && !s.isWait()) fwk.runReservePluginsUnreserve(state, assumed, node);
  return s;
}

void SchedulerCore::failPlaced(framework::Framework& fwk, std::unique_ptr<QueuedPodInfo> qpi,
                               const Status& s, bool wasAssumed, int64_t cycle,
                               std::chrono::steady_clock::time_point start) {
  algorithm_.placementFailed(fwk);
  if (wasAssumed) (void)cache_.forgetPod(qpi->pod().metadata.uid);
  if (s.isRejected() && !s.plugin().empty()) qpi->unschedulablePlugins.insert(s.plugin());
  if (s.isError()) errors_.fetch_add(1);
  // Errors and Reserve/Permit rejections clear the pod's nomination, as upstream.
  handleFailure(fwk, std::move(qpi), s, s.message(), cycle, start, std::string());
}

void SchedulerCore::handToBinding(framework::Framework& fwk, std::unique_ptr<QueuedPodInfo> qpi,
                                  PodInfoPtr assumed, const std::string& node, CycleState state,
                                  int64_t cycle, std::chrono::steady_clock::time_point start,
                                  bool waits) {
  const PodPtr pod = qpi->podInfo->pod;
  auto task = std::make_shared<BindTask>();
  task->fwk = &fwk;
  task->qpi = std::move(qpi);
  task->assumed = std::move(assumed);
  task->node = node;
  task->state = std::move(state);
  task->cycle = cycle;
  task->start = start;
  if (waits) {
    // Where the pod is going, for other components while it waits (upstream sets it at the
    // start of the binding cycle, before WaitOnPermit).
    if (nominateForExpectation_) {
      task->nominated =
          statusWrites_.submit(pod->metadata.uid, StatusWrites::Write::nomination(pod, node));
    }
    // A pod that waits at Permit holds no binder thread: its binding cycle starts once the wait
    // is decided (allowed, rejected or timed out).
    fwk.onPermitDecided(pod->metadata.uid, [this, task] { submitBinding(task); });
    return;
  }
  submitBinding(std::move(task));
}

void SchedulerCore::submitBinding(std::shared_ptr<BindTask> task) {
  const std::string uid = task->assumed->pod->metadata.uid;
  if (options_.synchronous) {
    handOn([this, task] { bindingCycle(task); });
    return;
  }
  if (!binders_.submit([this, task] { bindingCycle(task); })) {
    (void)cache_.forgetPod(uid);  // shutting down: the pod stays pending
    queue_->done(uid);
  }
}

void SchedulerCore::bindingCycle(std::shared_ptr<BindTask> task) {
  framework::Framework& fwk = *task->fwk;
  const api::Pod& pod = *task->assumed->pod;
  const bool waits = options_.metrics != nullptr && fwk.getWaitingPod(pod.metadata.uid) != nullptr;
  std::chrono::duration<double> waited{0};
  Status s = fwk.waitOnPermit(pod, &waited);
  if (waits) options_.metrics->observePermitWait(s.ok(), waited.count());
  bool nominationWritten = false;
  if (nominateForExpectation_) {
    // The nomination queued at Permit lands before the binding (or, not sent yet, is dropped).
    nominationWritten = task->nominated && !statusWrites_.settle(pod.metadata.uid);
    if (s.ok()) {
      Status preFlight = fwk.runPreBindPreFlights(task->state, pod, task->node);
      if (preFlight.isError()) {
        s = std::move(preFlight);
      } else if (preFlight.ok() && !nominationWritten) {
        // PreBind has work: other components learn where the pod is going before it starts.
        sendStatusWrite(StatusWrites::Write::nomination(task->qpi->podInfo->pod, task->node));
        nominationWritten = true;
      }
    }
  }
  task->nominationWritten = nominationWritten;
  if (!s.ok()) {
    finishBinding(task, std::move(s));
    return;
  }
  preBind(std::move(task), std::nullopt);
}

void SchedulerCore::preBind(std::shared_ptr<BindTask> task,
                            std::optional<PreBindPlugin::Resume> resume) {
  framework::Framework& fwk = *task->fwk;
  const api::Pod& pod = *task->assumed->pod;
  for (;;) {
    // Before the plugin looks: an event between its look and the parking resumes it at once.
    const ParkedBindings::Seen seen = parked_.seen();
    const size_t resumed = task->preBindFrom;
    Status s = fwk.runPreBindPlugins(task->state, pod, task->node, &task->preBindFrom, resume);
    if (!s.isWait()) {
      finishBinding(std::move(task), std::move(s));
      return;
    }
    const std::string plugin = s.plugin();
    if (resume && task->preBindFrom == resumed && *resume != PreBindPlugin::Resume::kEvent) {
      // Asked for the last time and still waiting.
      finishBinding(std::move(task),
                    Status::error("running PreBind plugin \"" + plugin + "\": " +
                                  (*resume == PreBindPlugin::Resume::kDeadline ? "timed out waiting"
                                                                               : "still waiting") +
                                  (s.message().empty() ? "" : ": " + s.message()))
                        .withPlugin(plugin));
      return;
    }
    PreBindPlugin::Wait wait = fwk.preBindWait(task->preBindFrom, task->state, pod);
    if (options_.synchronous) {
      // Nothing changes between two steps of a simulated cluster: decide now.
      resume = PreBindPlugin::Resume::kDecide;
      continue;
    }
    if (wait.deadline <= std::chrono::steady_clock::now()) {
      resume = PreBindPlugin::Resume::kDeadline;
      continue;
    }
    spdlog::debug("binding of pod {}/{} to {} waits at PreBind plugin {}: {}",
                  pod.metadata.namespace_, pod.metadata.name, task->node, plugin, s.message());
    parked_.park(task->assumed->pod, std::move(wait), seen,
                 [this, task](ParkedBindings::Why why) { resumeParked(task, why); });
    return;
  }
}

void SchedulerCore::resumeParked(const std::shared_ptr<BindTask>& task, ParkedBindings::Why why) {
  std::function<void()> work;
  switch (why) {
    case ParkedBindings::Why::kEvent:
    case ParkedBindings::Why::kDeadline: {
      const auto resume = why == ParkedBindings::Why::kEvent ? PreBindPlugin::Resume::kEvent
                                                             : PreBindPlugin::Resume::kDeadline;
      work = [this, task, resume] { preBind(task, resume); };
      break;
    }
    case ParkedBindings::Why::kDeleted:
    case ParkedBindings::Why::kShutdown: {
      std::string msg =
          why == ParkedBindings::Why::kDeleted ? "pod was deleted" : "scheduler is shutting down";
      work = [this, task, msg] { finishBinding(task, Status::error(msg)); };
      break;
    }
  }
  // On a binder: the resumed PreBind and Unreserve talk to the apiserver. Binders gone (the
  // scheduler stopped): here.
  if (!binders_.submit(work)) work();
}

void SchedulerCore::finishBinding(std::shared_ptr<BindTask> task, Status s) {
  framework::Framework& fwk = *task->fwk;
  const api::Pod& pod = *task->assumed->pod;
  const bool nominationWritten = task->nominationWritten;
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
    env_.events->event(pod, "Normal", "Scheduled", "Binding",
                       "Successfully assigned " + pod.metadata.namespace_ + "/" +
                           pod.metadata.name + " to " + task->node);
    env_.events->forget(pod.metadata.uid);  // bound: nothing more will be said about it
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
    // feed still has pending goes back to the queue (backoff) instead of out of it; the
    // feed takes it out once it sees it bound or deleted.
    bindConflicts_.fetch_add(1);
    observeAttempt(fwk, metrics::Result::kError, task->start);
    spdlog::info("binding {}/{} to {} refused: {}", pod.metadata.namespace_, pod.metadata.name,
                 task->node, msg);
    if (PodPtr latest = pendingVersion(pod)) {
      task->qpi->podInfo = std::make_shared<const PodInfo>(latest, options_.features);
      queue_->addUnschedulableIfNotPresent(std::move(task->qpi), task->cycle);
    } else {
      queue_->done(pod.metadata.uid);
    }
    return;
  }
  if (s.isError()) errors_.fetch_add(1);
  if (s.isRejected() && !s.plugin().empty()) task->qpi->unschedulablePlugins.insert(s.plugin());
  handleFailure(fwk, std::move(task->qpi), s, msg, task->cycle, task->start, std::string(), "",
                nominationWritten);
}

void SchedulerCore::handleFailure(framework::Framework& fwk, std::unique_ptr<QueuedPodInfo> qpi,
                                  const Status& status, const std::string& message, int64_t cycle,
                                  std::chrono::steady_clock::time_point start,
                                  const std::optional<std::string>& nominatedNode,
                                  const std::string& diagnosis, bool nominationWritten) {
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
  qpi->podInfo = std::make_shared<const PodInfo>(latest, options_.features);
  auto podInfo = qpi->podInfo;
  queue_->addUnschedulableIfNotPresent(std::move(qpi), cycle);
  // Requeueing follows status.nominatedNodeName, which the apiserver does not have yet: keep
  // the nomination PostFilter just made (upstream adds it after requeueing, too).
  if (nominatedNode && !nominatedNode->empty()) {
    queue_->addNominatedPod(podInfo, *nominatedNode);
  } else if (nominatedNode) {
    queue_->deleteNominatedPodIfExists(*latest);
  }
  (void)statusWrites_.submit(
      latest->metadata.uid,
      StatusWrites::Write::podScheduledFalse(
          latest,
          std::string(isError ? api::kPodReasonSchedulerError : api::kPodReasonUnschedulable),
          message, nominatedNode, diagnosis),
      !nominationWritten);
}

PodPtr SchedulerCore::pendingVersion(const api::Pod& pod) const {
  PodPtr latest = this->pod(pod.metadata.key());
  if (!latest || latest->metadata.uid != pod.metadata.uid || assigned(*latest)) return nullptr;
  return latest;
}

}  // namespace ksched::scheduler
