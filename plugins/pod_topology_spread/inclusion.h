// The node inclusion policies of topology spread constraints, shared by PreFilter (and
// AddPod/RemovePod) and PreScore.
#pragma once

#include <cstddef>
#include <vector>

#include <ksched/api/node.h>
#include <ksched/api/pod.h>
#include <ksched/api/taints.h>
#include <ksched/helper/node_affinity.h>

#include "plugins/pod_topology_spread/state.h"

namespace ksched::plugins::spread {

// Calls `admitted(i)` for each constraint whose inclusion policies admit `node`: the pod's node
// selector and affinity match it (nodeAffinityPolicy Honor), the pod tolerates its taints
// (nodeTaintsPolicy Honor). Each check runs at most once.
template <typename F>
void forEachAdmitting(const std::vector<Constraint>& constraints, const api::Pod& pod,
                      const api::Node& node, F&& admitted) {
  bool affinityComputed = false;
  bool affinityMatches = true;
  bool taintsComputed = false;
  bool taintsTolerated = true;
  for (size_t i = 0; i < constraints.size(); ++i) {
    const Constraint& c = constraints[i];
    if (c.honorNodeAffinity && !affinityComputed) {
      affinityMatches = helper::podMatchesNodeSelectorAndAffinityTerms(pod, node);
      affinityComputed = true;
    }
    if (c.honorNodeTaints && !taintsComputed) {
      taintsTolerated =
          api::findUntoleratedTaint(node.spec.taints, pod.spec.tolerations, c.comparisonOperators,
                                    api::isDoNotScheduleTaint) == nullptr;
      taintsComputed = true;
    }
    if (c.includesNode(affinityMatches, taintsTolerated)) admitted(i);
  }
}

}  // namespace ksched::plugins::spread
