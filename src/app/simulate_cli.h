// `ksched simulate`: what the scheduler would do with a cluster, offline (docs/simulate.md).
#pragma once

#include <string>
#include <vector>

#include <ksched/registry.h>

namespace ksched::app {

// `args` without "ksched simulate". `outOfTree`: plugins of a custom binary (the in-tree ones
// are added by the Simulator).
int runSimulate(const std::vector<std::string>& args, const Registry& outOfTree);

[[nodiscard]] std::string simulateUsage();

}  // namespace ksched::app
