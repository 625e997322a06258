#include "sim/report.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>

#include "sim/report_groups.h"
#include "sim/report_input.h"
#include "sim/report_page.h"
#include "sim/report_svg.h"

namespace ksched::sim {
namespace {

using namespace report;
// sim::Victim (<ksched/sim.h>) is the simulation's; the report reads its own.
using report::Victim;

constexpr std::size_t kMaxNodeBars = 200;  // past this, a histogram of nodes per band
constexpr std::size_t kMaxReasons = 30;
constexpr std::size_t kMaxZones = 60;

std::string str(std::int64_t v) { return std::to_string(v); }

std::string orDash(const std::optional<std::int64_t>& v) { return v ? str(*v) : "\u2013"; }

std::string podName(const std::string& ns, const std::string& name) {
  return ns.empty() ? name : ns + "/" + name;
}

std::string percentTick(double v) { return formatNumber(v * 100, 0) + "%"; }
std::string countTick(double v) { return formatNumber(v, 0); }

std::string header(const Headline& h) {
  std::string out = "<header><h1>ksched simulate</h1><p class=\"sub\">profile <b>" +
                    escapeHtml(h.profile.empty() ? "(unnamed)" : h.profile) + "</b>";
  if (h.seed) out += ", seed " + str(*h.seed);
  if (h.pods) out += ", " + str(*h.pods) + " pods";
  out += "</p><div class=\"cards\" id=\"headline\">";
  out += card("scheduled", "scheduled", orDash(h.scheduled));
  out += card("unschedulable", "unschedulable", orDash(h.unschedulable),
              h.unschedulable.value_or(0) > 0);
  out += card("preempted", "preempted", orDash(h.preempted));
  out += card("attempts", "attempts", orDash(h.attempts));
  out += card("seconds", "seconds", h.seconds ? formatNumber(*h.seconds, 4) : "\u2013");
  out += card("podsPerSecond", "pods/s",
              h.podsPerSecond ? formatNumber(*h.podsPerSecond, 1) : "\u2013");
  out += card("nodesUsed", "nodes used before \u2192 after",
              orDash(h.nodesUsedBefore) + " \u2192 " + orDash(h.nodesUsedAfter));
  out += "</div></header>";
  return out;
}

std::string utilizationPlot(const Headline& h) {
  if (h.utilization.empty()) return note("The result has no utilization.");
  BarChart c;
  c.id = "plot-utilization";
  c.title = "Utilization by resource, before and after";
  c.series = {{"before", kBeforeColor}, {"after", kAfterColor}};
  c.horizontal = true;
  c.showValues = true;
  c.axisAtLeast = 1;
  c.tick = [](double v) { return formatPercent(v); };
  c.valueAxis = "requested / allocatable, all nodes";
  c.categoryAxis = "resource";
  for (const auto& [resource, u] : h.utilization) {
    c.groups.push_back({resource,
                        {{u.before,
                          resource + " before: " + formatPercent(u.before),
                          {{"data-resource", resource}}},
                         {u.after,
                          resource + " after: " + formatPercent(u.after),
                          {{"data-resource", resource}}}}});
  }
  return renderBarChart(c);
}

// Up to kMaxNodeBars nodes: a bar pair per node, sorted by utilization after. More: how many
// nodes fall in each 10 % band, before and after.
std::string nodesPlot(const std::vector<NodeRow>& nodes, const std::string& resource) {
  std::vector<std::pair<const NodeRow*, BeforeAfter>> rows;
  for (const NodeRow& n : nodes) {
    if (auto it = n.utilization.find(resource); it != n.utilization.end()) {
      rows.emplace_back(&n, it->second);
    }
  }
  const std::string title = resource + " per node";
  if (rows.empty())
    return "<h3>" + escapeHtml(title) + "</h3>" + note("No node has " + resource + " allocatable.");
  BarChart c;
  c.id = "plot-nodes-" + resource;
  c.series = {{"before", kBeforeColor}, {"after", kAfterColor}};
  c.valueAxis = resource + " requested / allocatable";
  std::string caption;
  if (rows.size() <= kMaxNodeBars) {
    std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
      if (a.second.after != b.second.after) return a.second.after > b.second.after;
      return a.first->name < b.first->name;
    });
    c.title = resource + " utilization per node, before and after";
    c.attrs = {{"data-mode", "bars"},
               {"data-resource", resource},
               {"data-nodes", std::to_string(rows.size())}};
    c.axisAtLeast = 1;
    c.tick = percentTick;
    c.categoryAxis = "nodes, by utilization after (highest first)";
    for (const auto& [n, u] : rows) {
      std::string where = n->name + (n->zone.empty() ? "" : " (" + n->zone + ")");
      c.groups.push_back(
          {n->name,
           {{u.before, where + ": before " + formatPercent(u.before), {{"data-node", n->name}}},
            {u.after, where + ": after " + formatPercent(u.after), {{"data-node", n->name}}}}});
    }
  } else {
    constexpr int kBands = 10;
    std::array<std::int64_t, kBands + 1> before{}, after{};  // the last: over 100 %
    auto band = [](double u) {
      if (u > 1 + 1e-9) return kBands;
      return std::clamp(static_cast<int>(std::floor(u * kBands)), 0, kBands - 1);
    };
    for (const auto& [n, u] : rows) {
      ++before[band(u.before)];
      ++after[band(u.after)];
    }
    c.title = resource + " utilization: nodes per band, before and after";
    c.attrs = {{"data-mode", "histogram"},
               {"data-resource", resource},
               {"data-nodes", std::to_string(rows.size())}};
    c.integerTicks = true;
    c.tick = countTick;
    c.valueAxis = "nodes";
    c.categoryAxis = resource + " requested / allocatable";
    const int bands = before[kBands] + after[kBands] > 0 ? kBands + 1 : kBands;
    for (int b = 0; b < bands; ++b) {
      std::string label =
          b == kBands ? "over 100%"
                      : std::to_string(b * 10) + "\u2013" + std::to_string(b * 10 + 10) + "%";
      auto bar = [&](const char* phase, std::int64_t v) {
        return Bar{static_cast<double>(v),
                   label + " " + phase + ": " + str(v) + " nodes",
                   {{"data-band", label}, {"data-count", str(v)}}};
      };
      c.groups.push_back({label, {bar("before", before[b]), bar("after", after[b])}});
    }
    caption = str(static_cast<std::int64_t>(rows.size())) +
              " nodes, too many for a bar each: how many fall in each band.";
  }
  std::string out = "<h3>" + escapeHtml(title) + "</h3>" + renderBarChart(c);
  if (!caption.empty()) out += note(caption);
  if (rows.size() < nodes.size()) {
    out += note(str(static_cast<std::int64_t>(nodes.size() - rows.size())) + " nodes without " +
                resource + " allocatable are not drawn.");
  }
  return out;
}

std::string reasonsPlot(std::vector<ReasonCount> reasons) {
  if (reasons.empty()) return note("No pod is unschedulable.");
  std::stable_sort(reasons.begin(), reasons.end(),
                   [](const auto& a, const auto& b) { return a.pods > b.pods; });
  BarChart c;
  c.id = "plot-reasons";
  c.title = "Unschedulable pods by reason";
  c.series = {{"unschedulable pods", kFailedColor}};
  c.horizontal = true;
  c.showValues = true;
  c.integerTicks = true;
  c.tick = countTick;
  c.valueAxis = "pods";
  c.categoryAxis = "reason";
  for (std::size_t i = 0; i < reasons.size() && i < kMaxReasons; ++i) {
    const ReasonCount& r = reasons[i];
    std::string who = r.plugin.empty() ? r.reason : r.plugin + ": " + r.reason;
    c.groups.push_back(
        {r.reason,
         {{static_cast<double>(r.pods),
           who + ": " + str(r.pods) + " pods",
           {{"data-plugin", r.plugin}, {"data-reason", r.reason}, {"data-count", str(r.pods)}}}}});
  }
  std::string out = renderBarChart(c);
  if (reasons.size() > kMaxReasons) {
    out += note(str(static_cast<std::int64_t>(reasons.size() - kMaxReasons)) +
                " more reasons with fewer pods are not drawn.");
  }
  return out;
}

std::string zonesPlot(std::vector<ZoneRow> zones) {
  if (zones.empty()) return note("No node has a topology.kubernetes.io/zone label.");
  const std::size_t total = zones.size();
  if (zones.size() > kMaxZones) {
    std::stable_sort(zones.begin(), zones.end(),
                     [](const auto& a, const auto& b) { return a.podsAfter > b.podsAfter; });
    zones.resize(kMaxZones);
  }
  BarChart c;
  c.id = "plot-zones";
  c.title = "Pods per zone, before and after";
  c.attrs = {{"data-zones", std::to_string(zones.size())}};
  c.series = {{"before", kBeforeColor}, {"after", kAfterColor}};
  c.integerTicks = true;
  c.tick = countTick;
  c.valueAxis = "pods";
  c.categoryAxis = "zone";
  for (const ZoneRow& z : zones) {
    std::string label = z.zone.empty() ? "(no zone)" : z.zone;
    std::string afterTip = label + ": " + str(z.podsAfter) + " pods after";
    if (z.placed) afterTip += ", " + str(*z.placed) + " placed";
    c.groups.push_back({label,
                        {{static_cast<double>(z.podsBefore),
                          label + ": " + str(z.podsBefore) + " pods before",
                          {{"data-zone", z.zone}, {"data-count", str(z.podsBefore)}}},
                         {static_cast<double>(z.podsAfter),
                          afterTip,
                          {{"data-zone", z.zone}, {"data-count", str(z.podsAfter)}}}}});
  }
  std::string out = renderBarChart(c);
  if (total > zones.size()) {
    out += note(str(static_cast<std::int64_t>(total - zones.size())) +
                " zones with fewer pods are not drawn.");
  }
  return out;
}

std::string unschedulableTable(const std::vector<UnschedulablePod>& pods) {
  if (pods.empty()) return note("Every pod was scheduled.");
  return table(
      "table-unschedulable",
      {{"pod"}, {"reason"}, {"filtered by"}, {"closest nodes"}, {"origin"}, {"attempts", true}},
      pods.size(),
      [&](std::size_t i, std::vector<std::string>& cells) {
        const UnschedulablePod& p = pods[i];
        cells[0] = podName(p.namespace_, p.name);
        cells[1] = p.reason;
        for (const DiagnosisReason& d : p.diagnosis) {
          if (!cells[2].empty()) cells[2] += "; ";
          cells[2] +=
              (d.plugin.empty() ? "" : d.plugin + ": ") + d.reason + " \u00d7" + str(d.count);
        }
        for (const auto& [node, shortfall] : p.closest) {
          if (!cells[3].empty()) cells[3] += "; ";
          cells[3] += node;
          if (!shortfall.empty()) cells[3] += " (" + shortfall + ")";
        }
        cells[4] = p.origin;
        cells[5] = orDash(p.attempts);
      },
      true);
}

std::string victimsTable(const std::vector<Victim>& victims) {
  if (victims.empty()) return note("No pod was preempted.");
  return table(
      "table-victims", {{"victim"}, {"node"}, {"preempted by"}}, victims.size(),
      [&](std::size_t i, std::vector<std::string>& cells) {
        cells = {podName(victims[i].namespace_, victims[i].name), victims[i].node,
                 victims[i].preemptor};
      },
      true);
}

std::string skippedTable(const std::vector<SkippedObject>& skipped) {
  if (skipped.empty()) return note("Every object read was used.");
  return table(
      "table-skipped", {{"source"}, {"object"}, {"field"}, {"problem"}}, skipped.size(),
      [&](std::size_t i, std::vector<std::string>& cells) {
        cells = {skipped[i].source, skipped[i].object, skipped[i].field, skipped[i].message};
      },
      true);
}

std::string comparisonSection(const Headline& self, const Comparison& cmp) {
  const std::string other = cmp.config.empty() ? "the other configuration" : cmp.config;
  std::string out = "<p class=\"sub\">This run (profile <b>" + escapeHtml(self.profile) +
                    "</b>) against <b>" + escapeHtml(other) + "</b> (profile <b>" +
                    escapeHtml(cmp.other.profile) + "</b>).</p>";

  struct Metric {
    std::string key, label;
    std::optional<std::int64_t> Headline::*field;
  };
  const std::vector<Metric> metrics = {
      {"scheduled", "scheduled", &Headline::scheduled},
      {"unschedulable", "unschedulable", &Headline::unschedulable},
      {"preempted", "preempted", &Headline::preempted},
      {"nodesUsedAfter", "nodes used after", &Headline::nodesUsedAfter}};
  BarChart c;
  c.id = "plot-compare";
  c.title = "This run against " + other;
  c.series = {{"this run", kAfterColor}, {other, kOtherColor}};
  c.horizontal = true;
  c.showValues = true;
  c.integerTicks = true;
  c.tick = countTick;
  c.valueAxis = "pods (nodes for nodes used)";
  c.categoryAxis = "";
  for (const Metric& m : metrics) {
    const auto& a = self.*m.field;
    const auto& b = cmp.other.*m.field;
    if (!a && !b) continue;
    c.groups.push_back({m.label,
                        {{static_cast<double>(a.value_or(0)),
                          "this run: " + m.label + " " + orDash(a),
                          {{"data-metric", m.key}, {"data-config", "this"}}},
                         {static_cast<double>(b.value_or(0)),
                          other + ": " + m.label + " " + orDash(b),
                          {{"data-metric", m.key}, {"data-config", "other"}}}}});
  }
  out += renderBarChart(c);

  out +=
      "<h3>Headline numbers</h3><table id=\"table-compare\"><thead><tr><th></th>"
      "<th class=\"num\">this run</th><th class=\"num\">" +
      escapeHtml(other) + "</th></tr></thead><tbody>";
  auto row = [&](const std::string& label, const std::string& a, const std::string& b) {
    out += "<tr><td>" + escapeHtml(label) + "</td><td class=\"num\">" + escapeHtml(a) +
           "</td><td class=\"num\">" + escapeHtml(b) + "</td></tr>";
  };
  for (const Metric& m : metrics) row(m.label, orDash(self.*m.field), orDash(cmp.other.*m.field));
  row("attempts", orDash(self.attempts), orDash(cmp.other.attempts));
  for (const auto& [resource, u] : self.utilization) {
    std::string theirs = "\u2013";
    for (const auto& [r, v] : cmp.other.utilization) {
      if (r == resource) theirs = formatPercent(v.after);
    }
    row(resource + " utilization after", formatPercent(u.after), theirs);
  }
  out += "</tbody></table>";

  out += "<h3>Pods placed differently</h3>";
  if (cmp.moved.empty()) {
    out += note("Both configurations placed every pod on the same node.");
  } else {
    out += table(
        "table-moved", {{"pod"}, {"this run"}, {other}}, cmp.moved.size(),
        [&](std::size_t i, std::vector<std::string>& cells) {
          const MovedPod& m = cmp.moved[i];
          cells = {podName(m.namespace_, m.name), m.node.empty() ? "(unschedulable)" : m.node,
                   m.otherNode.empty() ? "(unschedulable)" : m.otherNode};
        },
        true);
  }
  return out;
}

}  // namespace

std::string renderReport(const nlohmann::json& result) {
  const ReportInput in = report::readReportInput(result);
  const Headline& h = in.headline;
  std::string out;
  out.reserve(std::size_t{64} * 1024);
  out += pageOpen("ksched simulate: " + h.profile);
  out += header(h);
  out += section("section-utilization", "Utilization by resource", utilizationPlot(h));
  std::string perNode;
  for (const char* r : {"cpu", "memory"}) perNode += nodesPlot(in.nodes, r);
  if (in.nodes.empty()) perNode = note("The result lists no nodes.");
  out += section("section-nodes", "Utilization per node", perNode);
  out += section("section-reasons", "Unschedulable pods by reason", reasonsPlot(in.reasons));
  out += section("section-zones", "Pods per zone", zonesPlot(in.zones));
  out +=
      section("section-unschedulable", "Unschedulable pods", unschedulableTable(in.unschedulable));
  out += podGroupsSection(result);
  out += section("section-victims", "Preempted pods", victimsTable(in.victims));
  out += section("section-skipped", "Skipped objects", skippedTable(in.skipped));
  if (in.comparison) {
    out += section("section-comparison", "Comparison", comparisonSection(h, *in.comparison));
  }
  out += pageClose();
  return out;
}

}  // namespace ksched::sim
