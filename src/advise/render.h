// A plan as `ksched advise` prints it: a table for people, JSON (-o json) for programs.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "advise/plan.h"

namespace ksched::advise {

// {"kind": "AdvicePlan", "goal", "cordon", "moves": [{pod, from, to, tiedWith, why}], "notFreed",
// "kept", "alreadyFree", "before", "after", "lowerBoundNodes", "pendingLeftOut",
// "schedulerRuns", "seconds"}.
[[nodiscard]] nlohmann::ordered_json planDocument(const Plan& plan);

// The plan as text: the summary, the moves, what was not freed and why, the figures.
[[nodiscard]] std::string planTable(const Plan& plan);

}  // namespace ksched::advise
