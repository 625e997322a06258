// A pod's node selector and required node affinity against a node (upstream component-helpers
// nodeaffinity.GetRequiredNodeAffinity(pod).Match(node)): NodeAffinity's Filter, and the node
// inclusion policy (nodeAffinityPolicy Honor) of PodTopologySpread.
#pragma once

#include <ksched/api/node.h>
#include <ksched/api/pod.h>
#include <ksched/api/selectors.h>

namespace ksched::plugins::helper {

// The pod's spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution; null
// when it has none.
[[nodiscard]] const api::NodeSelector* requiredNodeAffinity(const api::Pod& pod);

// The pod's spec.nodeSelector and required node affinity both match `node`.
[[nodiscard]] bool podMatchesNodeSelectorAndAffinityTerms(const api::Pod& pod,
                                                          const api::Node& node);

}  // namespace ksched::plugins::helper
