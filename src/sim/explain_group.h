// Explain's pod-group cycle (scheduler/explain_group.h): the real cycle, run by a Simulator on
// its copy of the cluster, as the cycle traced itself.
#pragma once

#include <string>

#include <ksched/sim.h>

#include "scheduler/explain_group.h"

namespace ksched::sim {

// Fills g.cycle with the pod-group cycle PodGroup `ns`/`group` would have now in `simulator`'s
// cluster (Simulator::canScheduleGroup: no preemption, nothing of
// `simulator` changed), or g.noCycle with why none would run (from g.members' states).
void explainGroupCycle(Simulator& simulator, const std::string& ns, const std::string& group,
                       scheduler::GroupExplanation& g);

}  // namespace ksched::sim
