// `ksched simulate --capacity FILE`: how many more copies of a pod, or gangs of a PodGroup, fit.
#pragma once

#include <string>

#include <ksched/sim.h>

namespace ksched::app {

// FILE holds one pod (copies of it are placed one after the other), or one PodGroup
// (scheduling.k8s.io) with its pods (whole gangs are placed, each a fresh PodGroup
// "<name>-k" with its pods "<pod>-k", by the pod-group cycle). Prints the answer as `output`
// ("table" or "json") for `simulator`'s cluster; the exit code. Throws std::runtime_error for
// a file of another shape.
int printCapacity(const std::string& file, const std::string& output, sim::Simulator& simulator);

}  // namespace ksched::app
