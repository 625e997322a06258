#include <algorithm>
#include <map>
#include <vector>

#include <ksched/fit_error.h>

namespace ksched {

std::string FitError::message() const {
  std::string msg = "0/" + std::to_string(numAllNodes) + " nodes are available:";
  if (!diagnosis.preFilterMsg.empty()) {
    msg += " " + diagnosis.preFilterMsg + ".";
  } else {
    std::map<std::string, int> counts;
    for (const auto& [_, status] : diagnosis.nodeToStatus) {
      for (const auto& r : status.reasons()) ++counts[r];
    }
    std::vector<std::string> parts;
    parts.reserve(counts.size());
    for (const auto& [reason, n] : counts) parts.push_back(std::to_string(n) + " " + reason);
    std::sort(parts.begin(), parts.end());
    // Nodes without a reason (an extender dropped them and named no failure) add none, as
    // upstream: "0/3 nodes are available:" alone, never an empty list.
    for (size_t i = 0; i < parts.size(); ++i) msg += (i ? ", " : " ") + parts[i];
    if (!parts.empty()) msg += ".";
  }
  if (!diagnosis.postFilterMsg.empty()) msg += " " + diagnosis.postFilterMsg;
  return msg;
}

}  // namespace ksched
