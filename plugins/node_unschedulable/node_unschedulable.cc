#include "plugins/node_unschedulable/node_unschedulable.h"

#include <string>

#include <ksched/api/node.h>
#include <ksched/api/pod.h>
#include <ksched/api/taints.h>

namespace ksched::plugins {

Status NodeUnschedulable::filter(const CycleState& /*state*/, const api::Pod& pod,
                                 const NodeInfo& nodeInfo) const {
  const api::Node* node = nodeInfo.node();
  if (node == nullptr) return Status::unresolvable(std::string(kErrReasonUnknownCondition));
  if (!node->spec.unschedulable) return {};
  const api::Taint unschedulable{std::string(kTaintNodeUnschedulable), "",
                                 std::string(api::kTaintEffectNoSchedule), std::nullopt};
  if (api::tolerationsTolerateTaint(pod.spec.tolerations, unschedulable)) return {};
  return Status::unresolvable(std::string(kErrReasonUnschedulable));
}

std::vector<ClusterEventWithHint> NodeUnschedulable::eventsToRegister() const {
  return {
      {EventResource::kNode, kAdd | kUpdateNodeTaint | kUpdateNodeLabel | kUpdateOther},
      {EventResource::kPod, kUpdatePodTolerations},
  };
}

std::unique_ptr<Plugin> newNodeUnschedulable(const nlohmann::json& /*args*/, Handle& /*handle*/) {
  return std::make_unique<NodeUnschedulable>();
}

}  // namespace ksched::plugins
