// ksched advise --defragment POD.yaml: the fewest moves that make room for a pod of that shape
// (say, one asking for 8 GPUs), or for a gang (a PodGroup and its pods), each checked by the
// scheduler.
//
// When the pod fits already, the plan is empty and says where it would go. Otherwise, for each
// node the pod could run on but for the room (its node selector, required node affinity and
// taints are checked first; the scheduler decides in the end), the fewest pods that may move
// (movable.h) whose requests cover what the pod lacks there are picked, largest share of the
// shortfall first. Nodes are tried in the order of that count: the node is cordoned, its picked
// pods evicted and placed elsewhere by the scheduler, the node uncordoned, and the pod placed
// by the scheduler. The first node where all of it works gives the plan.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <ksched/api/pod.h>
#include <ksched/registry.h>
#include <ksched/sim.h>

#include "advise/plan.h"

namespace ksched::advise {

// Nodes tried with the scheduler at most (the likeliest first).
inline constexpr size_t kDefragmentTries = 32;

// A node `pod` could use once some of its pods moved.
struct Option {
  std::string node;
  std::vector<PodPtr> evict;  // the pods to move, in the order of the moves
  int64_t moved = 0;          // their cpu (millis), to break ties
};

// For each node `pod` could run on but for the room (selector, required affinity, taints;
// schedulable), the fewest pods that may move whose requests cover what the pod lacks there;
// the nodes with the fewest moves first, then the least cpu moved, then by name.
[[nodiscard]] std::vector<Option> optionsFor(const sim::Cluster& c, const api::Pod& pod,
                                             const std::set<std::string>& profiles,
                                             const features::Gates& gates,
                                             const EvictionPolicy& policy);

// Option `o` in `sim`: cordons its node, evicts its pods and has the scheduler place them
// elsewhere (the node stays cordoned). Their results have the origin "drained".
[[nodiscard]] sim::Result moveOff(sim::Simulator& sim, const Option& o);

// Plans room for `pod` (pending; its namespace "default" when empty) over `cluster`. Throws
// std::invalid_argument when no profile of the configuration schedules the pod.
[[nodiscard]] Plan planDefragment(const sim::Cluster& cluster, sim::Options options,
                                  const api::Pod& pod, const EvictionPolicy& policy,
                                  const Registry& outOfTree = {});

// Plans room for the pods of PodGroup `group` ("namespace/name", the Workload API's: the
// group object is in `cluster`, with --feature-gates GenericWorkload=true) over `cluster`:
// when the group's pod-group cycle does not place them all now, room is made for one member at
// a time, where it fits or with the fewest moves off one node, a stand-in of it holding that
// room while the next members' room is made (its node cordoned meanwhile); then the group is
// placed by its own cycle over the cluster the moves leave. Throws std::invalid_argument when
// the gate is off, the group has no pods, or a pod's schedulerName is not a profile.
[[nodiscard]] Plan planDefragmentGroup(const sim::Cluster& cluster, sim::Options options,
                                       const std::string& group, const std::vector<PodPtr>& members,
                                       const EvictionPolicy& policy,
                                       const Registry& outOfTree = {});

}  // namespace ksched::advise
