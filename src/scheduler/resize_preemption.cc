// Scheduler preemption for in-place resize (KEP 5836,
// InPlacePodVerticalScalingSchedulerPreemption): the feed's and the failure handler's part for pods
// already on a node whose resize the kubelet deferred. The plugins' part is DeferredPodScheduling,
// NodeResourcesFit and the framework's skipping of the other filters
// (Plugin::filtersResizeDeferredPods).
#include <spdlog/spdlog.h>

#include <ksched/api/pod_resources.h>

#include "scheduler/scheduler_core.h"

namespace ksched::scheduler {

bool SchedulerCore::resizeDeferred(const api::Pod& pod) const {
  return resizePreemption_ && assigned(pod) && api::isPodResizeDeferred(pod);
}

void SchedulerCore::feedResizeDeferred(const PodPtr& oldPod, const PodPtr& newPod) {
  const bool was = oldPod != nullptr && resizeDeferred(*oldPod) && responsibleFor(*oldPod);
  const bool is = newPod != nullptr && resizeDeferred(*newPod) && responsibleFor(*newPod) &&
                  !newPod->metadata.deletionTimestamp;
  if (is && was) {
    queue_->update(oldPod, newPod);
  } else if (is) {
    spdlog::debug("pod {}/{}: in-place resize deferred on {}: queued for resize preemption",
                  newPod->metadata.namespace_, newPod->metadata.name, newPod->spec.nodeName);
    queue_->add(newPod);
  } else if (was) {
    queue_->remove(*oldPod);
  }
}

void SchedulerCore::requeueResizeDeferred(framework::Framework& fwk,
                                          std::unique_ptr<QueuedPodInfo> qpi, const Status& status,
                                          int64_t cycle,
                                          std::chrono::steady_clock::time_point start) {
  const PodPtr pod = qpi->podInfo->pod;
  (status.isError() ? errors_ : unschedulable_).fetch_add(1);
  observeAttempt(fwk, status.isError() ? metrics::Result::kError : metrics::Result::kUnschedulable,
                 start);
  spdlog::debug("pod {}/{} (resize deferred on {}): {}", pod->metadata.namespace_,
                pod->metadata.name, pod->spec.nodeName, status.message());
  PodPtr latest = this->pod(pod->metadata.key());
  if (!latest || latest->metadata.uid != pod->metadata.uid || !resizeDeferred(*latest) ||
      latest->metadata.deletionTimestamp) {
    queue_->done(pod->metadata.uid);  // resized, gone or no longer waiting: nothing to do
    return;
  }
  qpi->podInfo = std::make_shared<const PodInfo>(latest, options_.features);
  queue_->addUnschedulableIfNotPresent(std::move(qpi), cycle);
}

}  // namespace ksched::scheduler
