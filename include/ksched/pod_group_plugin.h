// The pod-group extension points (GenericWorkload, KEP-4671): with the gate on, the pods of one
// PodGroup (spec.schedulingGroup.podGroupName) are scheduled in one pod-group cycle. The core
// places the group's queued pods one after another, each with the usual PreFilter, Filter and
// Score, and asks the PlacementFeasible plugins before the first pod and after each whether the
// group can still be placed:
//   Success        enough is placed: the cycle may end well (it goes on placing the others);
//   Wait           not enough yet, but the remaining pods could make it;
//   Unschedulable  the group can no longer be placed in this cycle: it stops, and every pod of
//                  it is rejected with this message;
//   Error          the cycle stops with a scheduler error.
// A cycle whose last answer is not Success places nothing: the pods it placed are taken back.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <ksched/api/pod_group.h>
#include <ksched/plugin.h>

namespace ksched {

// The group a pod-group cycle schedules.
struct PodGroupInfo {
  std::string ns;
  std::string name;
  // The PodGroup as the scheduler's watch holds it at the start of the cycle.
  std::shared_ptr<const api::PodGroup> podGroup;
  // The pods this cycle places, in order (priority, then the time they came to the queue); members
  // bound or assumed before the cycle are not among them.
  std::vector<PodPtr> pods;
  // With the CompositePodGroup gate (KEP-6012), a group may be a CompositePodGroup: a node of a
  // tree whose leaves are PodGroups, placed in one cycle. Then `composite` is set (`podGroup`
  // is not), `children` are its child groups (either kind) and `pods` every pod of its subtree
  // the cycle places; PlacementFeasible's progress counts child groups, not pods.
  std::shared_ptr<const api::CompositePodGroup> composite;
  std::vector<PodGroupInfo> children;
};

// How far the cycle is: `scheduled` pods of `pods` placed so far, `remaining` still to try.
// Members bound or assumed before the cycle are not counted: the plugin adds those it knows.
struct PlacementProgress {
  int32_t scheduled = 0;
  int32_t remaining = 0;
};

// Topology-aware placement (TopologyAwareWorkloadScheduling, KEP-5732): a placement is a set of
// nodes the whole group may be placed on (one rack, one zone). With PlacementGenerate plugins
// the cycle places the group once per placement, keeps the feasible ones, scores them with the
// PlacementScore plugins and places it for good on the best.
struct Placement {
  std::string name;                // e.g. the topology domain's label value
  std::vector<std::string> nodes;  // node names
};

class PlacementGeneratePlugin : public virtual Plugin {
 public:
  // Appends the placements for `group` among `nodes` (the whole snapshot). Several generators:
  // their placements are intersected. None at all: the group cannot be placed now.
  virtual Status generatePlacements(CycleState& state, const PodGroupInfo& group,
                                    const NodeInfoLister& nodes,
                                    std::vector<Placement>& placements) = 0;
};

// Where a feasible placement put the group's pods.
struct PodGroupAssignments {
  const Placement* placement = nullptr;
  std::vector<std::pair<PodPtr, std::string>> proposed;  // pod -> node
};

class PlacementScorePlugin : public virtual Plugin {
 public:
  // Any score; normalizePlacementScores brings them to [0, 100] if the plugin needs it.
  virtual Status scorePlacement(CycleState& state, const PodGroupInfo& group,
                                const NodeInfoLister& nodes, const PodGroupAssignments& assignments,
                                int64_t& score) = 0;
  // The scores of every feasible placement, in order.
  virtual Status normalizePlacementScores(CycleState& /*state*/, const PodGroupInfo& /*group*/,
                                          std::vector<int64_t>& /*scores*/) {
    return {};
  }
};

class PlacementFeasiblePlugin : public virtual Plugin {
 public:
  // On the scheduling thread. `state` is the group's cycle state (not a pod's).
  virtual Status placementFeasible(CycleState& state, const PodGroupInfo& group,
                                   const PlacementProgress& progress) = 0;
};

// Workload-aware preemption (KEP-5710): when a group's cycle ends Unschedulable, the
// PodGroupPostFilter plugins (DefaultPreemption) may find lower-priority pods whose eviction lets
// the whole group in. Single-pod PostFilter does not run for a group's pods.
//
// The cycle's pods placed, in order, on `nodes` (a copy of the snapshot the plugin changed, e.g.
// without its victims), without touching the scheduler's cache, with the group's own PreFilter,
// Filter, Score and PlacementFeasible: Success with where each placed pod would go, or why the
// group cannot be placed there.
using PodGroupScheduleFn = std::function<Status(
    const NodeInfoLister& nodes, std::vector<std::pair<PodPtr, std::string>>& proposed)>;

struct PodGroupPostFilterResult {
  // "<namespace>/<name>" of a pod of the group -> the node it is nominated to.
  std::map<std::string, std::string> nominations;
  // What the plugin says for the pods' messages ("found a placement for podgroup, preempting 2
  // victims"; a rejection's message when empty); the framework adds upstream's prefix "pod
  // group preemption: ".
  std::string message;
};

class PodGroupPostFilterPlugin : public virtual Plugin {
 public:
  // On the scheduling thread; `nodes` is the cycle's snapshot (the group taken back). Success:
  // the group's pods are nominated (they wait for their victims); a rejection says why not.
  virtual std::pair<PodGroupPostFilterResult, Status> podGroupPostFilter(
      CycleState& state, const PodGroupInfo& group, const NodeInfoLister& nodes,
      const PodGroupScheduleFn& schedule) = 0;
};

}  // namespace ksched
