// `ksched advise`: which pods to move, where they would land and why, planned with ksched's own
// scheduler over a copy of the cluster; --apply carries the plan out (docs/advise.md).
#pragma once

#include <string>
#include <vector>

#include <ksched/registry.h>

namespace ksched::app {

// `args` without "ksched advise". `outOfTree`: plugins of a custom binary.
int runAdvise(const std::vector<std::string>& args, const Registry& outOfTree);

[[nodiscard]] std::string adviseUsage();

}  // namespace ksched::app
