#include "advise/report.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "advise/report_input.h"
#include "sim/report_page.h"
#include "sim/report_svg.h"

namespace ksched::advise {
// Named, not anonymous: the unity build compiles this file with the planner's.
namespace advise_report {

using sim::report::Bar;
using sim::report::BarChart;
using sim::report::card;
using sim::report::escapeHtml;
using sim::report::formatNumber;
using sim::report::kAfterColor;
using sim::report::kBeforeColor;
using sim::report::kOtherColor;
using sim::report::note;
using sim::report::renderBarChart;
using sim::report::section;
using sim::report::table;

constexpr std::size_t kMaxSkewBars = 60;
constexpr const char* kDash = "\u2013";
constexpr const char* kElsewhere = "the JSON plan (-o json)";

bool isArray(const json& j, const char* key) {
  const json* m = member(j, key);
  return m && m->is_array();
}

std::string joined(const std::vector<std::string>& v, std::size_t max = SIZE_MAX) {
  std::string out;
  for (std::size_t i = 0; i < v.size() && i < max; ++i) out += (i ? ", " : "") + v[i];
  if (v.size() > max) out += ", ... (" + std::to_string(v.size()) + ")";
  return out;
}

std::string orDash(const std::optional<int64_t>& v) { return v ? std::to_string(*v) : kDash; }
std::string percent(const std::optional<double>& v) {
  return v ? formatNumber(*v, 1) + "%" : kDash;
}
std::string points(const std::optional<double>& v) {
  return v ? formatNumber(*v, 1) + " points" : kDash;
}

std::string plural(std::size_t n, const std::string& word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

// ---- The header: the goal, the plan in one sentence, the cards.

std::string summary(const Doc& d) {
  const std::string moves = plural(d.moves.size(), "move");
  const std::string forPod = text(d.raw, "forPod"), forPodNode = text(d.raw, "forPodNode");
  switch (d.kind) {
    case Kind::kSpread:
      return moves + "; " + std::to_string(std::count_if(d.skews.begin(), d.skews.end(), within)) +
             " of " + std::to_string(d.skews.size()) +
             " topology spread constraints within maxSkew after.";
    case Kind::kBalance:
      return moves + "; nodes more than " +
             formatNumber(number(d.balance, "deviation").value_or(0)) +
             " points above the cluster's " +
             (text(d.balance, "measure") == "load" ? "used share (NodeMetrics)"
                                                   : "requested share") +
             ": " + orDash(integer(d.balance, "nodesOverBefore")) + " before, " +
             orDash(integer(d.balance, "nodesOverAfter")) + " after.";
    case Kind::kDefragment: {
      if (forPodNode.empty()) {
        const std::string reason = text(d.raw, "forPodReason");
        return "No room found for " + forPod +
               (reason.empty() ? "." : ". It does not fit now: " + reason);
      }
      if (d.moves.empty())
        return "Nothing to move: " + forPod + " fits now, on " + forPodNode + ".";
      if (!objects(d.raw, "forPodGroupMembers").empty()) {
        return moves + ", then PodGroup " + forPod + " fits, on " + forPodNode + ".";
      }
      return moves + " off " + joined(d.makeRoomOn) + ", then " + forPod + " fits, on " +
             forPodNode + ".";
    }
    case Kind::kFreeNodes:
      break;
  }
  if (!isArray(d.raw, "cordon")) return "The plan names no nodes to free; " + moves + ".";
  if (d.cordon.empty()) return "No node can be freed.";
  return "Free " + plural(d.cordon.size(), "node") + " (" + joined(d.cordon, 8) + ") with " +
         moves + ", each placed by the scheduler.";
}

std::string cards(const Doc& d) {
  std::string out =
      card("moves", "moves",
           isArray(d.raw, "moves") ? std::to_string(d.moves.size()) : std::string(kDash));
  if (d.kind == Kind::kFreeNodes || !d.cordon.empty()) {
    out += card("nodesFreed", "nodes freed",
                isArray(d.raw, "cordon") ? std::to_string(d.cordon.size()) : std::string(kDash));
  }
  std::set<std::string> cordoned(d.cordon.begin(), d.cordon.end());
  cordoned.insert(d.alreadyFree.begin(), d.alreadyFree.end());
  cordoned.insert(d.makeRoomOn.begin(), d.makeRoomOn.end());
  if (!cordoned.empty()) {
    out += card("cordoned",
                d.kind == Kind::kDefragment ? "cordoned while the moves run"
                                            : "nodes cordoned (freed, already free)",
                std::to_string(cordoned.size()));
  }
  const std::optional<int64_t> nodes = integer(d.before, "nodes");
  out += card(
      "nodesUsed",
      "nodes used before \u2192 after" +
          (nodes ? " (of " + std::to_string(*nodes) + ")" : std::string()),
      orDash(integer(d.before, "nodesUsed")) + " \u2192 " + orDash(integer(d.after, "nodesUsed")));
  if (d.kind == Kind::kFreeNodes) {
    out += card("lowerBoundNodes", "nodes needed at least (requests)",
                orDash(integer(d.raw, "lowerBoundNodes")));
  }
  if (d.kind == Kind::kBalance) {
    const std::optional<int64_t> after = integer(d.balance, "nodesOverAfter");
    out += card("nodesOver",
                "nodes over the band before \u2192 after (" +
                    formatNumber(number(d.balance, "deviation").value_or(0)) + " points)",
                orDash(integer(d.balance, "nodesOverBefore")) + " \u2192 " + orDash(after),
                after.value_or(0) > 0);
  }
  if (d.kind == Kind::kSpread) {
    const auto n = std::count_if(d.skews.begin(), d.skews.end(), within);
    out += card("skewsWithin", "constraints within maxSkew after",
                std::to_string(n) + " of " + std::to_string(d.skews.size()),
                static_cast<std::size_t>(n) < d.skews.size());
  }
  if (d.kind == Kind::kDefragment) {
    const bool group = !objects(d.raw, "forPodGroupMembers").empty();
    const std::string node = text(d.raw, "forPodNode");
    out +=
        card("forPod", group ? "room made for (PodGroup)" : "room made for", text(d.raw, "forPod"));
    out += card("forPodNode", "lands on", node.empty() ? "no room" : node, node.empty());
  }
  if (const std::optional<int64_t> pending = integer(d.raw, "pendingLeftOut"); pending > 0) {
    out += card("pendingLeftOut", "pending pods left out", std::to_string(*pending));
  }
  out += card("schedulerRuns", "scheduler runs", orDash(integer(d.raw, "schedulerRuns")));
  const std::optional<double> seconds = number(d.raw, "seconds");
  out += card("seconds", "seconds", seconds ? formatNumber(*seconds, 4) : kDash);
  return out;
}

std::string header(const Doc& d) {
  return "<header><h1>ksched advise</h1><p class=\"sub\">goal <b>" +
         escapeHtml(d.goal.empty() ? "(none given)" : d.goal) + "</b>: " + escapeHtml(summary(d)) +
         "</p><div class=\"cards\" id=\"headline\">" + cards(d) + "</div></header>";
}

// ---- The figures: requested shares before and after, over the cluster and per node.

// The resources of before[key] and after[key] whose value passes `is`, cpu and memory first.
std::vector<std::string> resourcesOf(const Doc& d, const char* key, bool (json::*is)() const) {
  std::set<std::string> seen;
  for (const json* f : {&d.before, &d.after}) {
    for (const auto& [r, v] : object(*f, key).items()) {
      if ((v.*is)()) seen.insert(r);
    }
  }
  std::vector<std::string> out;
  for (const char* first : {"cpu", "memory"}) {
    if (seen.erase(first)) out.emplace_back(first);
  }
  out.insert(out.end(), seen.begin(), seen.end());
  return out;
}

Bar bar(const std::string& label, const char* phase, const std::optional<double>& v,
        const std::string& unit, sim::report::Attributes attrs) {
  return {v.value_or(0), label + " " + phase + ": " + (v ? formatNumber(*v, 1) + unit : kDash),
          std::move(attrs)};
}

std::string requestedPlot(const Doc& d) {
  BarChart c;
  c.id = "plot-requested";
  c.title = "Requested / allocatable by resource, before and after";
  c.series = {{"before", kBeforeColor}, {"after", kAfterColor}};
  c.horizontal = true;
  c.showValues = true;
  c.axisAtLeast = 100;
  c.tick = [](double v) { return formatNumber(v, 1) + "%"; };
  c.valueAxis = "requested / allocatable";
  c.categoryAxis = "resource, nodes";
  const std::vector<std::pair<const char*, const char*>> scopes = {
      {"requestedPercent", "all"}, {"requestedPercentOfNodesUsed", "used"}};
  for (const std::string& r : resourcesOf(d, "requestedPercent", &json::is_number)) {
    for (const auto& [key, scope] : scopes) {
      const std::optional<double> b = number(object(d.before, key), r.c_str());
      const std::optional<double> a = number(object(d.after, key), r.c_str());
      if (!b && !a) continue;
      const std::string label = r + (std::string(scope) == "all" ? ", all nodes" : ", nodes used");
      const sim::report::Attributes attrs = {{"data-resource", r}, {"data-scope", scope}};
      c.groups.push_back(
          {label, {bar(label, "before", b, "%", attrs), bar(label, "after", a, "%", attrs)}});
    }
  }
  if (c.groups.empty()) return note("The plan has no requested shares.");
  return renderBarChart(c);
}

constexpr std::pair<const char*, const char*> kMeasures[] = {{"min", "lowest node"},
                                                             {"mean", "cluster share"},
                                                             {"max", "highest node"},
                                                             {"stddev", "standard deviation"}};

std::string perNodePlot(const Doc& d) {
  BarChart c;
  c.id = "plot-per-node";
  c.title = "Requested / allocatable per node: lowest, cluster share, highest, deviation";
  c.series = {{"before", kBeforeColor}, {"after", kAfterColor}};
  c.horizontal = true;
  c.showValues = true;
  c.axisAtLeast = 100;
  c.tick = [](double v) { return formatNumber(v, 1); };
  c.valueAxis = "percent (standard deviation: percentage points)";
  c.categoryAxis = "resource, over the schedulable nodes";
  for (const std::string& r : resourcesOf(d, "requestedPercentPerNode", &json::is_object)) {
    const json& b = object(object(d.before, "requestedPercentPerNode"), r.c_str());
    const json& a = object(object(d.after, "requestedPercentPerNode"), r.c_str());
    for (const auto& [key, what] : kMeasures) {
      const std::optional<double> vb = number(b, key), va = number(a, key);
      if (!vb && !va) continue;
      const std::string label = r + ", " + what;
      const std::string unit = std::string(key) == "stddev" ? " points" : "%";
      const sim::report::Attributes attrs = {{"data-resource", r}, {"data-measure", key}};
      c.groups.push_back(
          {label, {bar(label, "before", vb, unit, attrs), bar(label, "after", va, unit, attrs)}});
    }
  }
  if (c.groups.empty()) return "";
  return "<h3>Per node</h3>" + renderBarChart(c);
}

std::string figuresTable(const Doc& d) {
  std::vector<std::vector<std::string>> rows;
  const auto nodes = [&](const char* label, const char* key) {
    const std::optional<int64_t> b = integer(d.before, key), a = integer(d.after, key);
    if (b || a) rows.push_back({label, orDash(b), orDash(a)});
  };
  nodes("nodes", "nodes");
  nodes("nodes used", "nodesUsed");
  for (const std::string& r : resourcesOf(d, "requestedPercent", &json::is_number)) {
    for (const auto& [key, label] : {std::pair{"requestedPercent", ", all nodes"},
                                     std::pair{"requestedPercentOfNodesUsed", ", nodes used"}}) {
      rows.push_back({r + " requested" + label, percent(number(object(d.before, key), r.c_str())),
                      percent(number(object(d.after, key), r.c_str()))});
    }
  }
  for (const std::string& r : resourcesOf(d, "requestedPercentPerNode", &json::is_object)) {
    const json& b = object(object(d.before, "requestedPercentPerNode"), r.c_str());
    const json& a = object(object(d.after, "requestedPercentPerNode"), r.c_str());
    const auto range = [](const json& s) {
      return percent(number(s, "min")) + " \u2013 " + percent(number(s, "max"));
    };
    rows.push_back({r + " requested, lowest \u2013 highest node", range(b), range(a)});
    rows.push_back({r + " standard deviation over nodes", points(number(b, "stddev")),
                    points(number(a, "stddev"))});
  }
  if (rows.empty()) return "";
  return "<h3>Figures</h3>" +
         table(
             "table-figures", {{""}, {"before", true}, {"after", true}}, rows.size(),
             [&](std::size_t i, std::vector<std::string>& cells) { cells = rows[i]; }, false,
             kElsewhere);
}

std::string figuresSection(const Doc& d) {
  std::string body = requestedPlot(d) + perNodePlot(d) + figuresTable(d);
  if (d.kind == Kind::kFreeNodes) {
    if (const std::optional<int64_t> lb = integer(d.raw, "lowerBoundNodes")) {
      body += note("Lower bound from requests: " + plural(static_cast<std::size_t>(*lb), "node") +
                   " (the pods' requests over the largest node's allocatable).");
    }
  }
  if (const std::optional<int64_t> pending = integer(d.raw, "pendingLeftOut"); pending > 0) {
    body += note(std::to_string(*pending) + " pending pods left out of the plan.");
  }
  return section("section-figures", "Requested before and after", body);
}

// ---- --spread: each constraint's skew before and after, against its maxSkew.

std::string skewsSection(const Doc& d) {
  if (d.kind != Kind::kSpread) return "";
  if (d.skews.empty()) {
    return section("section-skews", "Topology spread constraints",
                   note("No pod has a topology spread constraint."));
  }
  BarChart c;
  c.id = "plot-skews";
  c.title = "Skew of each topology spread constraint, before and after, and its maxSkew";
  c.series = {{"before", kBeforeColor}, {"after", kAfterColor}, {"maxSkew", kOtherColor}};
  c.horizontal = true;
  c.showValues = true;
  c.integerTicks = true;
  c.tick = [](double v) { return formatNumber(v, 0); };
  c.valueAxis = "skew (pods)";
  c.categoryAxis = "pods over topology key";
  for (std::size_t i = 0; i < d.skews.size() && i < kMaxSkewBars; ++i) {
    const SkewRow& k = d.skews[i];
    const std::string label = k.pods + " over " + k.topologyKey;
    const sim::report::Attributes attrs = {{"data-pods", k.pods},
                                           {"data-topology-key", k.topologyKey}};
    const auto v = [](const std::optional<int64_t>& n) {
      return n ? std::optional<double>(static_cast<double>(*n)) : std::nullopt;
    };
    c.groups.push_back(
        {label,
         {bar(label, "before", v(k.before), "", attrs), bar(label, "after", v(k.after), "", attrs),
          bar(label, "maxSkew", v(k.maxSkew), "", attrs)}});
  }
  std::string body = renderBarChart(c);
  if (d.skews.size() > kMaxSkewBars) {
    body += note(std::to_string(d.skews.size() - kMaxSkewBars) +
                 " more constraints are in the table, not drawn.");
  }
  body += table(
      "table-skews",
      {{"pods of"},
       {"topology key"},
       {"when unsatisfiable"},
       {"maxSkew", true},
       {"skew before", true},
       {"after", true},
       {"note"}},
      d.skews.size(),
      [&](std::size_t i, std::vector<std::string>& cells) {
        const SkewRow& k = d.skews[i];
        cells = {k.pods,
                 k.topologyKey + (k.defaulted ? " (default)" : ""),
                 k.when,
                 orDash(k.maxSkew),
                 orDash(k.before),
                 orDash(k.after),
                 k.note};
      },
      true, kElsewhere);
  return section("section-skews", "Topology spread constraints", body);
}

// ---- The moves and the lists.

std::string movesSection(const Doc& d) {
  if (d.moves.empty()) return section("section-moves", "Moves", note("The plan has no moves."));
  return section(
      "section-moves", "Moves",
      note("In the order to carry them out; \"tied with\": other nodes that scored as high as the "
           "one planned, where the live scheduler could pick another.") +
          table(
              "table-moves", {{"step", true}, {"pod"}, {"from"}, {"to"}, {"why"}, {"tied with"}},
              d.moves.size(),
              [&](std::size_t i, std::vector<std::string>& cells) {
                const MoveRow& m = d.moves[i];
                cells = {std::to_string(i + 1), m.pod, m.from, m.to, m.why, joined(m.tiedWith)};
              },
              true, kElsewhere));
}

std::string roomSection(const Doc& d) {
  if (d.kind != Kind::kDefragment) return "";
  const std::string forPod = text(d.raw, "forPod"), node = text(d.raw, "forPodNode");
  const std::string reason = text(d.raw, "forPodReason");
  std::string body;
  if (node.empty()) {
    body = note("No room found for " + forPod + "." +
                (reason.empty() ? "" : " It does not fit now: " + reason));
  } else {
    body = note(forPod + (d.moves.empty() ? " fits now, on " : " fits after the moves, on ") +
                node + ".");
  }
  if (!d.makeRoomOn.empty()) {
    body += note(
        "Cordoned while the moves run (uncordoned after the last): " + joined(d.makeRoomOn) + ".");
  }
  const std::vector<const json*> members = objects(d.raw, "forPodGroupMembers");
  if (!members.empty()) {
    body += table(
        "table-members", {{"pod of the group"}, {"node"}}, members.size(),
        [&](std::size_t i, std::vector<std::string>& cells) {
          cells = {text(*members[i], "pod"), text(*members[i], "node")};
        },
        false, kElsewhere);
  }
  return section("section-room", "Room for " + forPod, body);
}

std::string freedSection(const Doc& d) {
  if (d.cordon.empty()) return "";
  return section("section-freed", "Nodes freed",
                 note("Cordoned before any move; their pods move as listed above.") +
                     table(
                         "table-freed", {{"node"}, {"pods moved off", true}}, d.cordon.size(),
                         [&](std::size_t i, std::vector<std::string>& cells) {
                           const auto n = std::count_if(
                               d.moves.begin(), d.moves.end(),
                               [&](const MoveRow& m) { return m.from == d.cordon[i]; });
                           cells = {d.cordon[i], std::to_string(n)};
                         },
                         true, kElsewhere));
}

std::string notFreedSection(const Doc& d) {
  const std::vector<const json*> rows = objects(d.raw, "notFreed");
  if (rows.empty()) return "";
  const char* title = d.kind == Kind::kBalance      ? "Nodes left above the band"
                      : d.kind == Kind::kDefragment ? "Nodes tried"
                                                    : "Nodes not freed";
  return section("section-not-freed", title,
                 table(
                     "table-not-freed", {{"node"}, {"reason"}}, rows.size(),
                     [&](std::size_t i, std::vector<std::string>& cells) {
                       cells = {text(*rows[i], "node"), text(*rows[i], "reason")};
                     },
                     true, kElsewhere));
}

std::string keptSection(const Doc& d) {
  const std::vector<const json*> rows = objects(d.raw, "kept");
  if (rows.empty()) return "";
  return section(
      "section-kept", "Pods that keep their node",
      note("The first pod keeping each node, and why it may not move.") +
          table(
              "table-kept", {{"node"}, {"pod"}, {"reason"}}, rows.size(),
              [&](std::size_t i, std::vector<std::string>& cells) {
                cells = {text(*rows[i], "node"), text(*rows[i], "pod"), text(*rows[i], "reason")};
              },
              true, kElsewhere));
}

std::string alreadyFreeSection(const Doc& d) {
  if (d.alreadyFree.empty()) return "";
  return section("section-already-free", "Already free",
                 note("Nothing to move; cordoned too, so that no move lands there.") +
                     "<p id=\"already-free\" data-count=\"" + std::to_string(d.alreadyFree.size()) +
                     "\">" + escapeHtml(joined(d.alreadyFree)) + "</p>");
}

}  // namespace advise_report

std::string renderReport(const nlohmann::json& plan) {
  using namespace advise_report;
  const Doc d = readDoc(plan);
  std::string out;
  out.reserve(std::size_t{32} * 1024);
  out += sim::report::pageOpen("ksched advise: " + (d.goal.empty() ? "plan" : d.goal));
  out += header(d);
  out += roomSection(d);
  out += figuresSection(d);
  out += skewsSection(d);
  out += movesSection(d);
  out += freedSection(d);
  out += notFreedSection(d);
  out += keptSection(d);
  out += alreadyFreeSection(d);
  out += sim::report::pageClose();
  return out;
}

}  // namespace ksched::advise
