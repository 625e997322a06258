// How advise/report.cc reads a plan document (planDocument, advise/render.h): every member
// optional, read only when of the expected type; nothing here throws on a malformed document.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ksched::advise::advise_report {

using nlohmann::json;

// j[key] when j is an object that has it, else nullptr.
[[nodiscard]] const json* member(const json& j, const char* key);
// j[key] when a string, else "".
[[nodiscard]] std::string text(const json& j, const char* key);
// j[key] when a finite number.
[[nodiscard]] std::optional<double> number(const json& j, const char* key);
// j[key] when a count: an integer, or a number without a fraction.
[[nodiscard]] std::optional<int64_t> integer(const json& j, const char* key);
// The strings of the array j[key] (other elements skipped).
[[nodiscard]] std::vector<std::string> strings(const json& j, const char* key);
// The objects of the array j[key] (other elements skipped); they point into `j`.
[[nodiscard]] std::vector<const json*> objects(const json& j, const char* key);
// j[key] when an object, else an empty object (that lives as long as the program).
[[nodiscard]] const json& object(const json& j, const char* key);

struct MoveRow {
  std::string pod, from, to, why;
  std::vector<std::string> tiedWith;
};

struct SkewRow {
  std::string pods, topologyKey, when, note;
  std::optional<int64_t> maxSkew, before, after;
  bool defaulted = false;
};

// The goal, from what the document has: "balance" (--balance), "forPod" (--defragment, one pod
// or a PodGroup), "skews" (--spread), else freeing nodes (--free-nodes, --scale-down).
enum class Kind { kFreeNodes, kSpread, kBalance, kDefragment };

// The plan as the page reads it; the references point into the document read (or at the empty
// object of object()), which must outlive it.
struct Doc {
  const json& raw;
  Kind kind = Kind::kFreeNodes;
  std::string goal;
  std::vector<MoveRow> moves;
  std::vector<std::string> cordon, alreadyFree, makeRoomOn;
  std::vector<SkewRow> skews;
  const json& before;
  const json& after;
  const json& balance;
};

[[nodiscard]] Doc readDoc(const json& plan);

// The constraint's skew after is known and within its maxSkew.
[[nodiscard]] bool within(const SkewRow& k);

}  // namespace ksched::advise::advise_report
