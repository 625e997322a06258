// ksched advise --spread: moves that bring the pods' topology spread constraints back within
// their maxSkew, each checked by the scheduler.
//
// The pods are taken by controller (ownerReferences), each group with the constraints of its
// first pod; a group without constraints gets PodTopologySpread's default ones (System's, or
// the configuration's List) over the scheduler's default selector (helper/default_selector.h),
// when something selects the pods. For a constraint, the domains are the values of its topologyKey
// on the nodes the pod may run on (its node selector and required node affinity, as
// nodeAffinityPolicy Honor counts them), and a domain's count is the number of pods of the
// namespace its labelSelector (with matchLabelKeys) selects. While the skew (the largest count less
// the smallest) is above maxSkew, a pod of the group that may move (movable.h) is taken off the
// fullest domain (from its fullest node) and placed by the scheduler; a move that lands in the same
// domain again, or does not lower the skew, is undone and ends the work on that constraint.
#pragma once

#include <string>
#include <vector>

#include <ksched/registry.h>
#include <ksched/sim.h>

#include "advise/plan.h"

namespace ksched::advise {

// Moves per constraint at most.
inline constexpr int kSpreadMovesPerConstraint = 200;

[[nodiscard]] Plan planSpread(const sim::Cluster& cluster, sim::Options options,
                              const EvictionPolicy& policy, const Registry& outOfTree = {});

}  // namespace ksched::advise
