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
#include <memory>
#include <string>
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
  // The pods this cycle places, in order (priority, then first attempt); members bound or
  // assumed before the cycle are not among them.
  std::vector<PodPtr> pods;
};

// How far the cycle is: `scheduled` pods of `pods` placed so far, `remaining` still to try.
// Members bound or assumed before the cycle are not counted: the plugin adds those it knows.
struct PlacementProgress {
  int32_t scheduled = 0;
  int32_t remaining = 0;
};

class PlacementFeasiblePlugin : public virtual Plugin {
 public:
  // On the scheduling thread. `state` is the group's cycle state (not a pod's).
  virtual Status placementFeasible(CycleState& state, const PodGroupInfo& group,
                                   const PlacementProgress& progress) = 0;
};

}  // namespace ksched
