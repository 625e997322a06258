// ksched advise --defragment POD.yaml: the fewest moves that make room for a pod of that shape
// (say, one asking for 8 GPUs), each checked by the scheduler.
//
// When the pod fits already, the plan is empty and says where it would go. Otherwise, for each
// node the pod could run on but for the room (its node selector, required node affinity and
// taints are checked first; the scheduler decides in the end), the fewest pods that may move
// (movable.h) whose requests cover what the pod lacks there are picked, largest share of the
// shortfall first. Nodes are tried in the order of that count: the node is cordoned, its picked
// pods evicted and placed elsewhere by the scheduler, the node uncordoned, and the pod placed
// by the scheduler. The first node where all of it works gives the plan.
#pragma once

#include <string>

#include <ksched/api/pod.h>
#include <ksched/registry.h>
#include <ksched/sim.h>

#include "advise/plan.h"

namespace ksched::advise {

// Nodes tried with the scheduler at most (the likeliest first).
inline constexpr size_t kDefragmentTries = 32;

// Plans room for `pod` (pending; its namespace "default" when empty) over `cluster`. Throws
// std::invalid_argument when no profile of the configuration schedules the pod.
[[nodiscard]] Plan planDefragment(const sim::Cluster& cluster, sim::Options options,
                                  const api::Pod& pod, const EvictionPolicy& policy,
                                  const Registry& outOfTree = {});

}  // namespace ksched::advise
