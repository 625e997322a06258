#include "sim/report_groups.h"

#include <algorithm>
#include <vector>

#include "sim/report_svg.h"

namespace ksched::sim::report {
namespace {

// A string member, or "".
std::string groupText(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string groupCount(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? std::to_string(it->get<int64_t>())
                                                  : std::string("\u2013");
}

// "gang, minCount 8", "basic"; "" before any cycle (its pods were held).
std::string groupPolicy(const nlohmann::json& g) {
  const std::string policy = groupText(g, "policy");
  if (policy == "gang") return "gang, minCount " + groupCount(g, "minCount");
  return policy;
}

// "n1, n2" (at most 8 named); with a topology constraint, "<key>=<domain>: " first.
std::string groupWhere(const nlohmann::json& g) {
  std::string out;
  if (const std::string key = groupText(g, "topologyKey"); !key.empty()) {
    const std::string domain = groupText(g, "placement");
    out = key + "=" + (domain.empty() ? "(none)" : domain) + ": ";
  }
  std::vector<std::string> nodes;
  if (const auto it = g.find("nodes"); it != g.end() && it->is_array()) {
    for (const auto& n : *it) {
      if (n.is_string()) nodes.push_back(n.get<std::string>());
    }
  }
  for (size_t i = 0; i < nodes.size() && i < 8; ++i) out += (i ? ", " : "") + nodes[i];
  if (nodes.size() > 8) out += ", ... (" + std::to_string(nodes.size()) + " nodes)";
  if (nodes.empty()) out += "\u2013";
  return out;
}

}  // namespace

std::string podGroupsSection(const nlohmann::json& result) {
  const auto groups = result.find("podGroups");
  if (groups == result.end() || !groups->is_array() || groups->empty()) return "";
  std::string rows;
  size_t whole = 0;
  for (const auto& g : *groups) {
    if (!g.is_object()) continue;
    const std::string pods = groupCount(g, "pods"), placed = groupCount(g, "placed");
    const bool all = pods == placed;
    if (all) ++whole;
    rows += std::string("<tr class=\"") + (all ? "group-placed" : "group-short") + "\"><td>" +
            escapeHtml(groupText(g, "podGroup")) + "</td><td>" + escapeHtml(groupPolicy(g)) +
            "</td><td class=\"num\">" + pods + "</td><td class=\"num\">" + placed + "</td><td>" +
            escapeHtml(groupWhere(g)) + "</td><td>" + escapeHtml(groupText(g, "reason")) +
            "</td></tr>";
  }
  return "<section id=\"section-pod-groups\"><h2>Pod groups</h2><p class=\"note\">" +
         std::to_string(whole) + " of " + std::to_string(groups->size()) +
         " pod groups had every pod placed. A gang is placed whole or not at all: its pods left "
         "out carry the group's message.</p><table id=\"table-pod-groups\"><thead><tr>"
         "<th>pod group</th><th>policy</th><th class=\"num\">pods</th><th class=\"num\">placed"
         "</th><th>nodes (topology domain)</th><th>reason</th></tr></thead><tbody>" +
         rows + "</tbody></table></section>";
}

}  // namespace ksched::sim::report
