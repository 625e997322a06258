// The report's HTML text helpers and its one kind of plot, a bar chart drawn as inline SVG
// (no script needed to see it). Pure functions of their arguments.
//
// What a test can read off the SVG: the chart's `<g id="...">` carries `data-plot` attributes
// the caller gives, every bar is a `<rect class="bar" data-series="..." data-value="...">` plus
// the caller's data-* attributes, and a `<title>` child for the hover text.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ksched::sim::report {

// Text for HTML content and attribute values: & < > " ' escaped, control characters other
// than tab and newline dropped.
[[nodiscard]] std::string escapeHtml(std::string_view s);

// "12.5", "0.0123", "1200000": at most `digits` decimals, trailing zeros dropped.
[[nodiscard]] std::string formatNumber(double v, int digits = 2);
// 0.253 -> "25.3%".
[[nodiscard]] std::string formatPercent(double fraction);

using Attributes = std::vector<std::pair<std::string, std::string>>;  // data-* name, value

struct Bar {
  double value = 0;
  std::string tip;   // hover text
  Attributes attrs;  // e.g. {"data-reason", "Insufficient cpu"}
};

struct BarGroup {
  std::string label;      // the category: a node, a zone, a reason
  std::vector<Bar> bars;  // one per series, in the chart's series order
};

struct Series {
  std::string name;   // legend text, and data-series on each bar
  std::string color;  // CSS color
};

struct BarChart {
  std::string id;     // id of the chart's <g>
  std::string title;  // aria-label of the <svg>
  Attributes attrs;   // on the <g>
  std::vector<Series> series;
  std::vector<BarGroup> groups;
  std::string valueAxis;      // "pods", "utilization"
  std::string categoryAxis;   // "zone", "nodes, by utilization after"
  bool horizontal = false;    // categories down the left, bars to the right
  bool showValues = false;    // the value as text at the end of each bar (horizontal only)
  double axisAtLeast = 0;     // the axis reaches at least this (1.0 for a utilization)
  bool integerTicks = false;  // counts: no tick between two integers
  std::function<std::string(double)> tick = [](double v) { return formatNumber(v); };
  // Category labels are drawn when there are at most this many groups (else hover only).
  std::size_t maxLabels = 40;
};

[[nodiscard]] std::string renderBarChart(const BarChart& chart);

}  // namespace ksched::sim::report
