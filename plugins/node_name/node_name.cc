#include "plugins/node_name/node_name.h"

#include <string>

#include <ksched/api/pod.h>

namespace ksched::plugins {

bool NodeName::fits(const api::Pod& pod, const NodeInfo& nodeInfo) {
  if (pod.spec.nodeName.empty()) return true;
  const api::Node* node = nodeInfo.node();
  return pod.spec.nodeName == (node != nullptr ? node->metadata.name : nodeInfo.name());
}

Status NodeName::filter(const CycleState& /*state*/, const api::Pod& pod,
                        const NodeInfo& nodeInfo) const {
  if (!fits(pod, nodeInfo)) return Status::unresolvable(std::string(kErrReason));
  return {};
}

std::vector<std::string> NodeName::explainRejection(const CycleState& /*state*/,
                                                    const api::Pod& pod,
                                                    const NodeInfo& /*nodeInfo*/) const {
  if (pod.spec.nodeName.empty()) return {};
  return {"pod asks for node " + pod.spec.nodeName};
}

std::vector<ClusterEventWithHint> NodeName::eventsToRegister() const {
  return {{EventResource::kNode, kAdd}};
}

PluginFactory nodeNameFactory() {
  return makePluginFactory<NodeName>([](Handle&) { return std::make_unique<NodeName>(); });
}

}  // namespace ksched::plugins
