#include "sim/report.h"

namespace ksched::sim {

std::string renderReport(const nlohmann::json&) { return "<!DOCTYPE html><html></html>\n"; }

}  // namespace ksched::sim
