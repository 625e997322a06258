#include "sim/report_input.h"

#include <cmath>
#include <limits>
#include <set>

namespace ksched::sim::report {
namespace {

using nlohmann::json;

const json* member(const json& j, const char* key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

std::string text(const json& j, const char* key) {
  const json* v = member(j, key);
  return v != nullptr && v->is_string() ? v->get<std::string>() : std::string();
}

std::optional<double> number(const json& j, const char* key) {
  const json* v = member(j, key);
  if (v == nullptr || !v->is_number()) return std::nullopt;
  double d = v->get<double>();
  if (!std::isfinite(d)) return std::nullopt;
  return d;
}

// A count: a non-negative number, rounded down and clamped to int64.
std::optional<std::int64_t> count(const json& j, const char* key) {
  const json* v = member(j, key);
  if (v == nullptr) return std::nullopt;
  if (v->is_number_unsigned()) {
    auto u = v->get<std::uint64_t>();
    return static_cast<std::int64_t>(
        std::min<std::uint64_t>(u, std::numeric_limits<std::int64_t>::max()));
  }
  if (v->is_number_integer()) {
    auto i = v->get<std::int64_t>();
    return i < 0 ? std::nullopt : std::optional<std::int64_t>(i);
  }
  std::optional<double> d = number(j, key);
  if (!d || *d < 0) return std::nullopt;
  if (*d >= 9.2e18) return std::numeric_limits<std::int64_t>::max();
  return static_cast<std::int64_t>(*d);
}

const json& array(const json& j, const char* key) {
  static const json kEmpty = json::array();
  const json* v = member(j, key);
  return v != nullptr && v->is_array() ? *v : kEmpty;
}

std::vector<std::string> resourceOrder(const json& doc) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  auto add = [&](const std::string& r) {
    if (!r.empty() && seen.insert(r).second) out.push_back(r);
  };
  for (const json& r : array(doc, "resources")) {
    if (r.is_string()) add(r.get<std::string>());
  }
  if (const json* u = member(doc, "utilization"); u != nullptr && u->is_object()) {
    for (const auto& [name, value] : u->items()) add(name);
  }
  return out;
}

// Sum of requested over sum of allocatable across `nodes`, for a resource `utilization` lacks.
std::optional<BeforeAfter> summedUtilization(const json& doc, const std::string& resource) {
  double alloc = 0, before = 0, after = 0;
  for (const json& n : array(doc, "nodes")) {
    const json* a = member(n, "allocatable");
    const json* b = member(n, "requestedBefore");
    const json* f = member(n, "requestedAfter");
    if (a == nullptr || b == nullptr || f == nullptr) continue;
    auto av = number(*a, resource.c_str());
    auto bv = number(*b, resource.c_str());
    auto fv = number(*f, resource.c_str());
    if (!av || !bv || !fv || *av <= 0) continue;
    alloc += *av;
    before += *bv;
    after += *fv;
  }
  BeforeAfter u{before / alloc, after / alloc};
  if (alloc <= 0 || !std::isfinite(u.before) || !std::isfinite(u.after)) return std::nullopt;
  return u;
}

Headline readHeadline(const json& doc) {
  Headline h;
  h.profile = text(doc, "profile");
  h.seed = count(doc, "seed");
  static const json kNull;
  const json* statsPtr = member(doc, "stats");
  const json& stats = statsPtr != nullptr ? *statsPtr : kNull;
  h.scheduled = count(stats, "scheduled");
  h.unschedulable = count(stats, "unschedulable");
  h.preempted = count(stats, "preempted");
  h.attempts = count(stats, "attempts");
  h.seconds = number(stats, "seconds");
  h.podsPerSecond = number(stats, "podsPerSecond");

  if (const json* pods = member(doc, "pods"); pods != nullptr && pods->is_array()) {
    h.pods = static_cast<std::int64_t>(pods->size());
    std::int64_t placed = 0, failed = 0;
    for (const json& p : *pods) {
      const json* node = member(p, "node");
      if (node == nullptr) continue;
      if (node->is_string()) ++placed;
      if (node->is_null()) ++failed;
    }
    if (!h.scheduled) h.scheduled = placed;
    if (!h.unschedulable) h.unschedulable = failed;
  }
  if (!h.preempted) {
    if (const json* v = member(doc, "victims"); v != nullptr && v->is_array()) {
      h.preempted = static_cast<std::int64_t>(v->size());
    }
  }
  if (const json* used = member(doc, "nodesUsed"); used != nullptr) {
    h.nodesUsedBefore = count(*used, "before");
    h.nodesUsedAfter = count(*used, "after");
  }

  const json* util = member(doc, "utilization");
  for (const std::string& r : resourceOrder(doc)) {
    const json* u = util != nullptr ? member(*util, r.c_str()) : nullptr;
    auto before = u != nullptr ? number(*u, "before") : std::nullopt;
    auto after = u != nullptr ? number(*u, "after") : std::nullopt;
    if (before && after) {
      h.utilization.emplace_back(r, BeforeAfter{*before, *after});
    } else if (auto summed = summedUtilization(doc, r)) {
      h.utilization.emplace_back(r, *summed);
    }
  }
  return h;
}

std::vector<NodeRow> readNodes(const json& doc, const std::vector<std::string>& resources) {
  std::vector<NodeRow> out;
  const json& nodes = array(doc, "nodes");
  out.reserve(nodes.size());
  for (const json& n : nodes) {
    NodeRow row;
    row.name = text(n, "name");
    if (row.name.empty()) continue;
    row.zone = text(n, "zone");
    row.placed = count(n, "placed");
    const json* a = member(n, "allocatable");
    const json* b = member(n, "requestedBefore");
    const json* f = member(n, "requestedAfter");
    if (a != nullptr && b != nullptr && f != nullptr) {
      for (const std::string& r : resources) {
        auto av = number(*a, r.c_str());
        auto bv = number(*b, r.c_str());
        auto fv = number(*f, r.c_str());
        if (!av || !bv || !fv || *av <= 0) continue;
        BeforeAfter u{*bv / *av, *fv / *av};
        if (std::isfinite(u.before) && std::isfinite(u.after)) row.utilization[r] = u;
      }
    }
    out.push_back(std::move(row));
  }
  return out;
}

std::vector<UnschedulablePod> readUnschedulable(const json& doc) {
  std::vector<UnschedulablePod> out;
  for (const json& p : array(doc, "pods")) {
    const json* node = member(p, "node");
    if (node == nullptr || !node->is_null()) continue;
    UnschedulablePod pod;
    pod.namespace_ = text(p, "namespace");
    pod.name = text(p, "name");
    if (pod.name.empty()) continue;
    pod.reason = text(p, "reason");
    pod.origin = text(p, "origin");
    pod.attempts = count(p, "attempts");
    if (const json* d = member(p, "diagnosis"); d != nullptr) {
      for (const json& r : array(*d, "reasons")) {
        DiagnosisReason dr{text(r, "plugin"), text(r, "reason"), count(r, "count").value_or(0)};
        if (!dr.reason.empty()) pod.diagnosis.push_back(std::move(dr));
      }
      for (const json& c : array(*d, "closest")) {
        std::string node = text(c, "node");
        if (!node.empty()) pod.closest.emplace_back(std::move(node), text(c, "shortfall"));
      }
    }
    out.push_back(std::move(pod));
  }
  return out;
}

}  // namespace

ReportInput readReportInput(const json& result) {
  ReportInput in;
  in.headline = readHeadline(result);
  in.unschedulable = readUnschedulable(result);
  for (const json& r : array(result, "unschedulableByReason")) {
    ReasonCount rc{text(r, "plugin"), text(r, "reason"), count(r, "pods").value_or(0)};
    if (!rc.reason.empty()) in.reasons.push_back(std::move(rc));
  }
  in.nodes = readNodes(result, {"cpu", "memory"});
  for (const json& z : array(result, "zones")) {
    if (!z.is_object()) continue;
    auto before = count(z, "podsBefore");
    auto after = count(z, "podsAfter");
    if (!before && !after) continue;
    in.zones.push_back(
        {text(z, "zone"), before.value_or(0), after.value_or(0), count(z, "placed")});
  }
  for (const json& v : array(result, "victims")) {
    Victim victim{text(v, "namespace"), text(v, "name"), text(v, "node"), text(v, "preemptor")};
    if (!victim.name.empty()) in.victims.push_back(std::move(victim));
  }
  for (const json& s : array(result, "skipped")) {
    if (!s.is_object()) continue;
    in.skipped.push_back(
        {text(s, "source"), text(s, "object"), text(s, "field"), text(s, "message")});
  }
  if (const json* c = member(result, "comparison"); c != nullptr && c->is_object()) {
    Comparison cmp;
    cmp.config = text(*c, "config");
    static const json kNull;
    const json* other = member(*c, "result");
    cmp.other = readHeadline(other != nullptr ? *other : kNull);
    for (const json& m : array(*c, "moved")) {
      MovedPod mp{text(m, "namespace"), text(m, "name"), text(m, "node"), text(m, "otherNode")};
      if (!mp.name.empty()) cmp.moved.push_back(std::move(mp));
    }
    in.comparison = std::move(cmp);
  }
  return in;
}

}  // namespace ksched::sim::report
