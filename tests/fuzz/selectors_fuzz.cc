// Label selectors (metav1.LabelSelector: PDBs, topology spread, affinity terms), node
// selectors with their matchFields on metadata.name (node affinity, PV node affinity) and
// topology selector terms (StorageClass.allowedTopologies) as objects carry them, decoded with
// api::decode (DecodeError, as for the objects holding them), compiled and matched against a
// node's labels and name. The input is JSON:
//   {"selector": LabelSelector, "nodeSelector": NodeSelector,
//    "topology": [TopologySelectorTerm], "labels": {...}, "name": "node-1"}
#include <string>
#include <vector>

#include <ksched/api/decode.h>
#include <ksched/api/selectors.h>

#include "tests/fuzz/fuzz_util.h"

using namespace ksched;
using nlohmann::json;

namespace {

template <typename T>
std::optional<T> field(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end()) return std::nullopt;
  try {
    return api::decode<T>(*it);
  } catch (const api::DecodeError&) {
    return std::nullopt;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const json j = json::parse(fuzz::asText(data, size), nullptr, false);
  if (!j.is_object()) return 0;
  const api::Labels labels = field<api::Labels>(j, "labels").value_or(api::Labels{});
  const std::string name = field<std::string>(j, "name").value_or("");

  if (auto s = field<api::LabelSelector>(j, "selector")) {
    fuzz::check(api::labelSelectorError(*s).empty(), "decoded an invalid selector");
    fuzz::dump(json(*s));
    const api::Selector compiled = api::Selector::compile(*s);
    fuzz::check(!compiled.isNothing(), "a decoded selector compiles to nothing");
    (void)compiled.matches(labels);
    fuzz::dump(compiled.toString());
  }
  if (auto s = field<api::NodeSelector>(j, "nodeSelector")) (void)s->matches(labels, name);
  if (auto t = field<std::vector<api::TopologySelectorTerm>>(j, "topology")) {
    (void)api::matchTopologySelectorTerms(*t, labels);
  }
  return 0;
}
