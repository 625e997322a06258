#include "sim/report_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ksched::sim::report {
namespace {

constexpr double kWidth = 960;
constexpr double kTop = 34;  // room for the legend
constexpr double kPlotHeight = 240;
constexpr const char* kAxisColor = "#555";
constexpr const char* kGridColor = "#e2e2e2";

// Two decimals are enough for coordinates in a 960-wide viewBox; fewer bytes per bar.
std::string coord(double v) { return formatNumber(v, 2); }

// The first `max` code points of a UTF-8 string, with "…" when cut.
std::string truncateLabel(std::string_view s, std::size_t max) {
  std::size_t points = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) continue;
    if (points++ == max) return std::string(s.substr(0, i)) + "\u2026";
  }
  return std::string(s);
}

double niceCeil(double v) {
  if (!(v > 0)) return 1;
  double p = std::pow(10.0, std::floor(std::log10(v)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (m * p >= v * (1 - 1e-9)) return m * p;
  }
  return 10 * p;
}

struct Axis {
  double end = 1;
  double step = 1;
};

Axis valueAxis(const BarChart& c) {
  double largest = c.axisAtLeast;
  for (const BarGroup& g : c.groups) {
    for (const Bar& b : g.bars) {
      if (std::isfinite(b.value)) largest = std::max(largest, b.value);
    }
  }
  if (!(largest > 0)) largest = 1;
  double step = niceCeil(largest / 5);
  if (c.integerTicks) step = std::max(1.0, std::round(step));
  double end = std::ceil(largest / step - 1e-9) * step;
  if (!std::isfinite(end) || !(step > 0)) return {largest, largest};
  return {end, step};
}

// The tick values 0, step, ..., end (at most 20 of them).
std::vector<double> ticks(const Axis& a) {
  std::vector<double> out;
  long n = std::clamp<long>(std::lround(a.end / a.step), 1, 20);
  for (long i = 0; i <= n; ++i)
    out.push_back(a.end * static_cast<double>(i) / static_cast<double>(n));
  return out;
}

void appendAttrs(std::string& out, const Attributes& attrs) {
  for (const auto& [name, value] : attrs) {
    out += ' ';
    out += name;
    out += "=\"";
    out += escapeHtml(value);
    out += '"';
  }
}

void appendBar(std::string& out, const Series& s, const Bar& b, double x, double y, double w,
               double h) {
  out += "<rect class=\"bar\" x=\"" + coord(x) + "\" y=\"" + coord(y) + "\" width=\"" +
         coord(std::max(0.0, w)) + "\" height=\"" + coord(std::max(0.0, h)) + "\" fill=\"" +
         escapeHtml(s.color) + "\" data-series=\"" + escapeHtml(s.name) + "\" data-value=\"" +
         formatNumber(b.value, 4) + "\"";
  appendAttrs(out, b.attrs);
  out += "><title>" + escapeHtml(b.tip) + "</title></rect>";
}

void appendLegend(std::string& out, const BarChart& c, double x) {
  out += "<g class=\"legend\">";
  for (const Series& s : c.series) {
    out += "<rect x=\"" + coord(x) + "\" y=\"8\" width=\"12\" height=\"12\" fill=\"" +
           escapeHtml(s.color) + "\"/><text x=\"" + coord(x + 17) + "\" y=\"18\">" +
           escapeHtml(s.name) + "</text>";
    x += 40 + 7.5 * static_cast<double>(s.name.size());
  }
  out += "</g>";
}

void appendText(std::string& out, double x, double y, std::string_view anchor,
                std::string_view text, std::string_view extra = {}) {
  out += "<text x=\"" + coord(x) + "\" y=\"" + coord(y) + "\" text-anchor=\"" +
         std::string(anchor) + "\"";
  if (!extra.empty()) {
    out += ' ';
    out += extra;
  }
  out += ">" + escapeHtml(text) + "</text>";
}

std::string svgOpen(const BarChart& c, double height) {
  std::string out = "<svg class=\"plot\" viewBox=\"0 0 " + coord(kWidth) + " " + coord(height) +
                    "\" role=\"img\" aria-label=\"" + escapeHtml(c.title) +
                    "\" xmlns=\"http://www.w3.org/2000/svg\"><g id=\"" + escapeHtml(c.id) + "\"";
  appendAttrs(out, c.attrs);
  out += ">";
  return out;
}

std::string renderVertical(const BarChart& c) {
  const double left = 70, right = 16;
  const std::size_t n = c.groups.size();
  const bool labels = n > 0 && n <= c.maxLabels;
  std::size_t longest = 0;
  for (const BarGroup& g : c.groups) longest = std::max(longest, g.label.size());
  const double plotW = kWidth - left - right;
  const double groupW = n > 0 ? plotW / static_cast<double>(n) : plotW;
  const bool rotate = labels && (n > 8 || static_cast<double>(longest) * 7 > groupW);
  const double labelH = !labels ? 8
                        : rotate
                            ? 16 + 5.2 * static_cast<double>(std::min<std::size_t>(longest, 24))
                            : 22;
  const double height = kTop + kPlotHeight + labelH + 30;
  const double base = kTop + kPlotHeight;
  const Axis axis = valueAxis(c);

  std::string out = svgOpen(c, height);
  appendLegend(out, c, left);
  for (double t : ticks(axis)) {
    double y = base - t / axis.end * kPlotHeight;
    out += "<line x1=\"" + coord(left) + "\" x2=\"" + coord(kWidth - right) + "\" y1=\"" +
           coord(y) + "\" y2=\"" + coord(y) + "\" stroke=\"" + kGridColor + "\"/>";
    appendText(out, left - 6, y + 4, "end", c.tick(t), "class=\"tick\"");
  }
  const double pad = groupW > 6 ? groupW * 0.15 : 0;
  const double barW =
      c.series.empty() ? 0 : (groupW - 2 * pad) / static_cast<double>(c.series.size());
  for (std::size_t i = 0; i < n; ++i) {
    const BarGroup& g = c.groups[i];
    const double gx = left + static_cast<double>(i) * groupW;
    for (std::size_t s = 0; s < g.bars.size() && s < c.series.size(); ++s) {
      double v = std::isfinite(g.bars[s].value) ? std::max(0.0, g.bars[s].value) : 0;
      double h = v / axis.end * kPlotHeight;
      appendBar(out, c.series[s], g.bars[s], gx + pad + static_cast<double>(s) * barW, base - h,
                barW, h);
    }
    if (labels) {
      double cx = gx + groupW / 2;
      std::string label = truncateLabel(g.label, 24);
      if (rotate) {
        appendText(
            out, cx, base + 12, "end", label,
            "class=\"label\" transform=\"rotate(-40 " + coord(cx) + " " + coord(base + 12) + ")\"");
      } else {
        appendText(out, cx, base + 16, "middle", label, "class=\"label\"");
      }
    }
  }
  out += "<line x1=\"" + coord(left) + "\" x2=\"" + coord(kWidth - right) + "\" y1=\"" +
         coord(base) + "\" y2=\"" + coord(base) + "\" stroke=\"" + kAxisColor + "\"/>";
  appendText(out, left + plotW / 2, height - 8, "middle", c.categoryAxis, "class=\"axis\"");
  appendText(out, 14, base - kPlotHeight / 2, "middle", c.valueAxis,
             "class=\"axis\" transform=\"rotate(-90 14 " + coord(base - kPlotHeight / 2) + ")\"");
  out += "</g></svg>";
  return out;
}

std::string renderHorizontal(const BarChart& c) {
  const double left = 250, right = 70;
  const std::size_t n = c.groups.size();
  const double barH = 14;
  const double rowH = std::max<double>(1, static_cast<double>(c.series.size())) * barH + 8;
  const double plotW = kWidth - left - right;
  const double plotH = std::max(rowH, static_cast<double>(n) * rowH);
  const double base = kTop + plotH;
  const double height = base + 44;
  const Axis axis = valueAxis(c);

  std::string out = svgOpen(c, height);
  appendLegend(out, c, left);
  for (double t : ticks(axis)) {
    double x = left + t / axis.end * plotW;
    out += "<line x1=\"" + coord(x) + "\" x2=\"" + coord(x) + "\" y1=\"" + coord(kTop) +
           "\" y2=\"" + coord(base) + "\" stroke=\"" + kGridColor + "\"/>";
    appendText(out, x, base + 16, "middle", c.tick(t), "class=\"tick\"");
  }
  for (std::size_t i = 0; i < n; ++i) {
    const BarGroup& g = c.groups[i];
    const double gy = kTop + static_cast<double>(i) * rowH + 4;
    for (std::size_t s = 0; s < g.bars.size() && s < c.series.size(); ++s) {
      double v = std::isfinite(g.bars[s].value) ? std::max(0.0, g.bars[s].value) : 0;
      double w = v / axis.end * plotW;
      double y = gy + static_cast<double>(s) * barH;
      appendBar(out, c.series[s], g.bars[s], left, y, w, barH - 2);
      if (c.showValues) {
        appendText(out, left + w + 4, y + barH - 4, "start", c.tick(v), "class=\"value\"");
      }
    }
    appendText(out, left - 8, gy + (rowH - 8) / 2 + 4, "end", truncateLabel(g.label, 36),
               "class=\"label\"");
  }
  out += "<line x1=\"" + coord(left) + "\" x2=\"" + coord(left) + "\" y1=\"" + coord(kTop) +
         "\" y2=\"" + coord(base) + "\" stroke=\"" + kAxisColor + "\"/>";
  appendText(out, left + plotW / 2, height - 6, "middle", c.valueAxis, "class=\"axis\"");
  appendText(out, left - 8, 18, "end", c.categoryAxis, "class=\"axis\"");
  out += "</g></svg>";
  return out;
}

}  // namespace

std::string escapeHtml(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20 && ch != '\t' && ch != '\n') break;
        out += ch;
    }
  }
  return out;
}

std::string formatNumber(double v, int digits) {
  if (!std::isfinite(v)) return "0";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", std::clamp(digits, 0, 9), v);
  std::string s = buf;
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  return s;
}

std::string formatPercent(double fraction) { return formatNumber(fraction * 100, 1) + "%"; }

std::string renderBarChart(const BarChart& chart) {
  return chart.horizontal ? renderHorizontal(chart) : renderVertical(chart);
}

}  // namespace ksched::sim::report
