// An HTTP extender's answers (extender/v1 wire types) as HttpExtender reads them: the body
// parsed with nlohmann::json::parse (send() turns its json::exception into an error Status),
// then decoded (filter/prioritize/bind/processPreemption turn any std::exception of the
// decoder into an error Status). The first byte picks the answer:
//   0 ExtenderFilterResult  1 HostPriorityList  2 ExtenderBindingResult
//   3 ExtenderPreemptionResult
// The node names, reasons and errors decoded go into pod conditions, events and explain
// output, which are JSON.
#include <map>
#include <string>
#include <vector>

#include "extender/http_extender.h"
#include "tests/fuzz/fuzz_util.h"

using namespace ksched;
using nlohmann::json;

namespace {

void filterResult(const json& j) {
  extender::FilterResult r;
  try {
    r = extender::decodeFilterResult(j);
  } catch (const std::exception&) {
    return;
  }
  json out = {{"failedNodes", r.failedNodes},
              {"failedAndUnresolvableNodes", r.failedAndUnresolvableNodes},
              {"error", r.error}};
  if (r.nodes) out["nodes"] = *r.nodes;
  if (r.nodeNames) out["nodenames"] = *r.nodeNames;
  fuzz::dump(out);
}

void hostPriorityList(const json& j) {
  std::vector<HostPriority> scores;
  try {
    scores = extender::decodeHostPriorityList(j);
  } catch (const std::exception&) {
    return;
  }
  json out = json::array();
  for (const auto& s : scores) {
    out.push_back({{"host", s.host}, {"score", s.score}});
  }
  fuzz::dump(out);
}

void bindingResult(const json& j) {
  try {
    fuzz::dump(extender::decodeBindingResult(j));
  } catch (const std::exception&) {
  }
}

void preemptionResult(const json& j) {
  std::map<std::string, extender::MetaVictims> victims;
  try {
    victims = extender::decodePreemptionResult(j);
  } catch (const std::exception&) {
    return;
  }
  json out = json::object();
  for (const auto& [node, v] : victims) {
    out[node] = {{"pods", v.podUIDs}, {"numPDBViolations", v.numPDBViolations}};
  }
  fuzz::dump(out);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const fuzz::Split in = fuzz::split(data, size);
  json answer;
  try {
    answer = json::parse(in.rest);
  } catch (const json::exception&) {
    return 0;
  }
  switch (in.selector % 4) {
    case 0:
      filterResult(answer);
      break;
    case 1:
      hostPriorityList(answer);
      break;
    case 2:
      bindingResult(answer);
      break;
    default:
      preemptionResult(answer);
      break;
  }
  return 0;
}
