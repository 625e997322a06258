// simulate --report FILE.html: one self-contained page (no network, no external files) with
// plots of a simulation's result. Its input is the document `ksched simulate -o json` prints
// (see docs/simulate.md and sim/result.h).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace ksched::sim {

[[nodiscard]] std::string renderReport(const nlohmann::json& result);

}  // namespace ksched::sim
