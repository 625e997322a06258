// Score normalization shared by Score plugins (upstream framework/plugins/helper).
#pragma once

#include <cstdint>
#include <vector>

#include <ksched/plugin.h>

namespace ksched::plugins::helper {

// Upstream DefaultNormalizeScore: scales the scores linearly so that the highest becomes
// `maxPriority` (integer division, as upstream); with `reverse`, each score s becomes
// maxPriority - s afterwards. When every score is 0 (or negative), the scores are left as they
// are, or all set to `maxPriority` with `reverse`.
void defaultNormalizeScore(int64_t maxPriority, bool reverse, std::vector<NodeScore>& scores);

}  // namespace ksched::plugins::helper
