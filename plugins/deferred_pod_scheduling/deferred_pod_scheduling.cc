#include "plugins/deferred_pod_scheduling/deferred_pod_scheduling.h"

#include <memory>

#include <ksched/api/features.h>
#include <ksched/api/node.h>
#include <ksched/api/pod_resources.h>

namespace ksched::plugins {

bool DeferredPodScheduling::deferred(const api::Pod& pod) {
  return !pod.spec.nodeName.empty() && api::isPodResizeDeferred(pod);
}

Status DeferredPodScheduling::preFilter(CycleState& /*state*/, const api::Pod& pod,
                                        const NodeInfoLister& /*nodes*/, PreFilterResult& result) {
  if (!enabled_ || !deferred(pod)) return Status::skip();
  result.nodeNames.emplace();
  result.nodeNames->insert(pod.spec.nodeName);
  return {};
}

Status DeferredPodScheduling::filter(const CycleState& /*state*/, const api::Pod& pod,
                                     const NodeInfo& nodeInfo) const {
  const api::Node* node = nodeInfo.node();
  if (node == nullptr) return Status::error("node not found");
  if (node->metadata.name != pod.spec.nodeName) {
    return Status::unresolvable(std::string(kErrReasonDifferentNode));
  }
  if (!node->spec.disableResizePreemption.empty()) {
    return Status::unresolvable(std::string(kErrReasonNodeDisablesResizePreemption));
  }
  return {};
}

Status DeferredPodScheduling::permit(CycleState& /*state*/, const api::Pod& /*pod*/,
                                     const std::string& /*nodeName*/,
                                     std::chrono::milliseconds& timeout) {
  timeout = std::chrono::milliseconds(0);
  return Status::unresolvable(std::string(kReasonWaitingForKubelet));
}

namespace {

bool allowsResizePreemption(const api::Node& node) {
  return node.spec.disableResizePreemption.empty();
}

}  // namespace

std::vector<ClusterEventWithHint> DeferredPodScheduling::eventsToRegister() const {
  auto onNodeAdd = [](const api::Pod& pod, const EventObject& /*oldObj*/,
                      const EventObject& newObj) {
    const api::Node* node = as<api::Node>(newObj);
    return node != nullptr && node->metadata.name == pod.spec.nodeName &&
                   allowsResizePreemption(*node)
               ? QueueingHint::kQueue
               : QueueingHint::kSkip;
  };
  auto onPolicy = [](const api::Pod& pod, const EventObject& oldObj, const EventObject& newObj) {
    const api::Node* before = as<api::Node>(oldObj);
    const api::Node* after = as<api::Node>(newObj);
    return before != nullptr && after != nullptr && after->metadata.name == pod.spec.nodeName &&
                   !allowsResizePreemption(*before) && allowsResizePreemption(*after)
               ? QueueingHint::kQueue
               : QueueingHint::kSkip;
  };
  return {{EventResource::kNode, kAdd, onNodeAdd},
          {EventResource::kNode, kUpdateNodePreemptionPolicy, onPolicy}};
}

PluginFactory deferredPodSchedulingFactory() {
  return makePluginFactory<DeferredPodScheduling>([](Handle& handle) {
    return std::make_unique<DeferredPodScheduling>(handle.features().enabled(
        features::Feature::kInPlacePodVerticalScalingSchedulerPreemption));
  });
}

}  // namespace ksched::plugins
