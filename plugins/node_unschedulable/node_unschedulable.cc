#include "plugins/node_unschedulable/node_unschedulable.h"

#include <string>

#include <ksched/api/node.h>
#include <ksched/api/pod.h>
#include <ksched/api/taints.h>

namespace ksched::plugins {
namespace {

// The pod tolerates node.kubernetes.io/unschedulable:NoSchedule.
bool toleratesUnschedulable(const api::Pod& pod) {
  const api::Taint unschedulable{std::string(NodeUnschedulable::kTaintNodeUnschedulable), "",
                                 std::string(api::kTaintEffectNoSchedule), std::nullopt};
  // No Gt/Lt toleration tolerates its empty value, with TaintTolerationComparisonOperators on or
  // off: the gate changes nothing here.
  return api::tolerationsTolerateTaint(pod.spec.tolerations, unschedulable,
                                       /*comparisonOperators=*/false);
}

}  // namespace

Status NodeUnschedulable::filter(const CycleState& /*state*/, const api::Pod& pod,
                                 const NodeInfo& nodeInfo) const {
  const api::Node* node = nodeInfo.node();
  if (node == nullptr) return Status::unresolvable(std::string(kErrReasonUnknownCondition));
  if (!node->spec.unschedulable) return {};
  if (toleratesUnschedulable(pod)) return {};
  return Status::unresolvable(std::string(kErrReasonUnschedulable));
}

std::vector<std::string> NodeUnschedulable::explainRejection(const CycleState& /*state*/,
                                                             const api::Pod& /*pod*/,
                                                             const NodeInfo& nodeInfo) const {
  if (nodeInfo.node() == nullptr || !nodeInfo.node()->spec.unschedulable) return {};
  return {"node is cordoned (spec.unschedulable)"};
}

std::vector<ClusterEventWithHint> NodeUnschedulable::eventsToRegister() const {
  return {
      {EventResource::kNode, kAdd | kUpdateNodeTaint, &isSchedulableAfterNodeChange},
      {EventResource::kPod, kUpdatePodTolerations, &isSchedulableAfterPodTolerationChange},
  };
}

QueueingHint NodeUnschedulable::isSchedulableAfterNodeChange(const api::Pod& /*pod*/,
                                                             const EventObject& oldObj,
                                                             const EventObject& newObj) {
  const api::Node* modified = as<api::Node>(newObj);
  if (modified == nullptr) return QueueingHint::kQueue;
  if (modified->spec.unschedulable) return QueueingHint::kSkip;
  const api::Node* original = as<api::Node>(oldObj);
  if (original != nullptr && !original->spec.unschedulable) return QueueingHint::kSkip;
  return QueueingHint::kQueue;
}

QueueingHint NodeUnschedulable::isSchedulableAfterPodTolerationChange(const api::Pod& pod,
                                                                      const EventObject& /*oldObj*/,
                                                                      const EventObject& newObj) {
  const api::Pod* modified = as<api::Pod>(newObj);
  if (modified == nullptr) return QueueingHint::kQueue;
  // Tolerations can only be added: a pod this plugin rejected did not have this one before.
  return modified->metadata.uid == pod.metadata.uid && toleratesUnschedulable(*modified)
             ? QueueingHint::kQueue
             : QueueingHint::kSkip;
}

PluginFactory nodeUnschedulableFactory() {
  return makePluginFactory<NodeUnschedulable>(
      [](Handle&) { return std::make_unique<NodeUnschedulable>(); });
}

}  // namespace ksched::plugins
