#include "sim/report_page.h"

#include <algorithm>

#include "sim/report_svg.h"

namespace ksched::sim::report {
// Named, not anonymous: the unity build compiles this file with the other reports'.
namespace page_detail {

constexpr const char* kStyle = R"(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1a202c;
  background:#f7f8fa;margin:0}
main{max-width:1100px;margin:0 auto;padding:24px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:0 0 10px}h3{font-size:14px;margin:14px 0 4px}
.sub{color:#4a5568;margin:0 0 14px}
header{margin:0 0 18px}
section{background:#fff;border:1px solid #e2e8f0;border-radius:6px;padding:16px 18px;margin:0 0 18px}
.cards{display:flex;flex-wrap:wrap;gap:10px}
.card{background:#fff;border:1px solid #e2e8f0;border-radius:6px;padding:8px 14px;min-width:110px}
.card .v{font-size:20px;font-weight:600}.card .k{color:#4a5568;font-size:12px}
.card.bad .v{color:#c53030}
svg.plot{width:100%;height:auto;display:block}
svg text{font-size:12px;fill:#2d3748}svg text.axis{font-size:12px;fill:#4a5568;font-style:italic}
svg text.tick,svg text.value{font-size:11px;fill:#4a5568}
svg rect.bar:hover{opacity:.75}
.note{color:#4a5568;font-size:13px}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{text-align:left;padding:4px 8px;border-bottom:1px solid #edf2f7;vertical-align:top}
th{background:#f1f4f8;font-weight:600}tbody tr:nth-child(even){background:#fafbfc}
td.num,th.num{text-align:right}td:first-child{white-space:nowrap}
.filter{margin:0 0 8px}.filter input{padding:3px 6px;width:260px}
.filter .shown{color:#4a5568;margin-left:8px;font-size:12px}
)";

// Marks the body `data-rendered="ok"` when every script ran, "error: ..." when one threw.
constexpr const char* kScript = R"(
(function(){
  try {
    document.querySelectorAll('input[data-filter]').forEach(function(input){
      var table = document.getElementById(input.getAttribute('data-filter'));
      var shown = input.parentNode.querySelector('.shown');
      var rows = table.tBodies[0].rows;
      function apply(){
        var q = input.value.trim().toLowerCase(), n = 0;
        for (var i = 0; i < rows.length; i++) {
          var hit = !q || rows[i].textContent.toLowerCase().indexOf(q) >= 0;
          rows[i].hidden = !hit;
          if (hit) n++;
        }
        shown.textContent = n + ' of ' + rows.length + ' rows';
        shown.setAttribute('data-shown', String(n));
      }
      input.addEventListener('input', apply);
      apply();
    });
    document.body.setAttribute('data-rendered', 'ok');
  } catch (e) {
    document.body.setAttribute('data-rendered', 'error: ' + e);
  }
})();
)";

}  // namespace page_detail

std::string pageOpen(std::string_view title) {
  return std::string(
             "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
             "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
             "<title>") +
         escapeHtml(title) + "</title><style>" + page_detail::kStyle +
         "</style></head>\n<body data-rendered=\"no\"><main>";
}

std::string pageClose() {
  return std::string("</main>\n<script>") + page_detail::kScript + "</script></body></html>\n";
}

std::string card(std::string_view key, std::string_view label, std::string_view value, bool bad) {
  return "<div class=\"card" + std::string(bad ? " bad" : "") + "\" data-stat=\"" +
         escapeHtml(key) + "\"><div class=\"v\">" + escapeHtml(value) + "</div><div class=\"k\">" +
         escapeHtml(label) + "</div></div>";
}

std::string section(std::string_view id, std::string_view title, std::string_view body) {
  return "<section id=\"" + escapeHtml(id) + "\"><h2>" + escapeHtml(title) + "</h2>" +
         std::string(body) + "</section>";
}

std::string note(std::string_view text) { return "<p class=\"note\">" + escapeHtml(text) + "</p>"; }

std::string table(std::string_view id, const std::vector<Column>& columns, std::size_t total,
                  const std::function<void(std::size_t, std::vector<std::string>&)>& row,
                  bool filter, std::string_view elsewhere) {
  const std::size_t shown = std::min(total, kMaxTableRows);
  const std::string tid = escapeHtml(id);
  std::string out;
  if (filter && shown > 1) {
    out +=
        "<div class=\"filter\"><input type=\"search\" placeholder=\"filter rows\" "
        "data-filter=\"" +
        tid + "\"><span class=\"shown\"></span></div>";
  }
  out += "<table id=\"" + tid + "\" data-rows=\"" + std::to_string(shown) + "\" data-total=\"" +
         std::to_string(total) + "\"><thead><tr>";
  for (const Column& col : columns) {
    out += col.numeric ? "<th class=\"num\">" : "<th>";
    out += escapeHtml(col.title) + "</th>";
  }
  out += "</tr></thead><tbody>";
  std::vector<std::string> cells;
  for (std::size_t i = 0; i < shown; ++i) {
    cells.assign(columns.size(), "");
    row(i, cells);
    cells.resize(columns.size());
    out += "<tr>";
    for (std::size_t c = 0; c < columns.size(); ++c) {
      out += columns[c].numeric ? "<td class=\"num\">" : "<td>";
      out += escapeHtml(cells[c]) + "</td>";
    }
    out += "</tr>";
  }
  out += "</tbody></table>";
  if (total > shown) {
    out += note("Showing the first " + std::to_string(shown) + " of " + std::to_string(total) +
                " rows; " + std::to_string(total - shown) + " more are in " +
                std::string(elsewhere) + ".");
  }
  return out;
}

}  // namespace ksched::sim::report
