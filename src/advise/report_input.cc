#include "advise/report_input.h"

#include <cmath>

namespace ksched::advise::advise_report {

const json* member(const json& j, const char* key) {
  if (!j.is_object()) return nullptr;
  const auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

std::string text(const json& j, const char* key) {
  const json* m = member(j, key);
  return m && m->is_string() ? m->get<std::string>() : std::string();
}

std::optional<double> number(const json& j, const char* key) {
  const json* m = member(j, key);
  if (!m || !m->is_number()) return std::nullopt;
  const double v = m->get<double>();
  return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

std::optional<int64_t> integer(const json& j, const char* key) {
  const json* m = member(j, key);
  if (m && m->is_number_integer()) return m->get<int64_t>();
  const std::optional<double> v = number(j, key);
  if (v && *v == std::floor(*v) && std::fabs(*v) < 9e15) return static_cast<int64_t>(*v);
  return std::nullopt;
}

std::vector<std::string> strings(const json& j, const char* key) {
  std::vector<std::string> out;
  const json* m = member(j, key);
  if (m && m->is_array()) {
    for (const json& e : *m) {
      if (e.is_string()) out.push_back(e.get<std::string>());
    }
  }
  return out;
}

std::vector<const json*> objects(const json& j, const char* key) {
  std::vector<const json*> out;
  const json* m = member(j, key);
  if (m && m->is_array()) {
    for (const json& e : *m) {
      if (e.is_object()) out.push_back(&e);
    }
  }
  return out;
}

const json& object(const json& j, const char* key) {
  static const json kEmpty = json::object();
  const json* m = member(j, key);
  return m && m->is_object() ? *m : kEmpty;
}

Doc readDoc(const json& plan) {
  Doc d{plan,
        Kind::kFreeNodes,
        text(plan, "goal"),
        {},
        strings(plan, "cordon"),
        strings(plan, "alreadyFree"),
        strings(plan, "makeRoomOn"),
        {},
        object(plan, "before"),
        object(plan, "after"),
        object(plan, "balance")};
  if (member(plan, "balance") && member(plan, "balance")->is_object()) {
    d.kind = Kind::kBalance;
  } else if (member(plan, "forPod") && member(plan, "forPod")->is_string()) {
    d.kind = Kind::kDefragment;
  } else if (member(plan, "skews") && member(plan, "skews")->is_array()) {
    d.kind = Kind::kSpread;
  }
  for (const json* m : objects(plan, "moves")) {
    d.moves.push_back({text(*m, "pod"), text(*m, "from"), text(*m, "to"), text(*m, "why"),
                       strings(*m, "tiedWith")});
  }
  for (const json* k : objects(plan, "skews")) {
    const json* def = member(*k, "default");
    d.skews.push_back({text(*k, "pods"), text(*k, "topologyKey"), text(*k, "whenUnsatisfiable"),
                       text(*k, "note"), integer(*k, "maxSkew"), integer(*k, "before"),
                       integer(*k, "after"), def && def->is_boolean() && def->get<bool>()});
  }
  return d;
}

bool within(const SkewRow& k) { return k.after && k.maxSkew && *k.after <= *k.maxSkew; }

}  // namespace ksched::advise::advise_report
