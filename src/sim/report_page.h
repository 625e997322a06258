// What every HTML report of ksched shares (simulate --report, advise --report): the page around
// the sections (one stylesheet, one script), the headline cards, the sections, and the tables
// with their filter. Pure functions of their arguments; the charts are in report_svg.h.
//
// The script marks the body `data-rendered="ok"` once it ran (`"error: ..."` when it threw), and
// gives each filtered table's `.shown` span `data-shown="<rows matching>"`: what a test in a
// real browser reads off the page (tests/browser/).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace ksched::sim::report {

// The series' colors: before, after, a third (another run, a limit), what failed.
inline constexpr const char* kBeforeColor = "#a3b8cc";
inline constexpr const char* kAfterColor = "#2b6cb0";
inline constexpr const char* kOtherColor = "#dd6b20";
inline constexpr const char* kFailedColor = "#c53030";

// Tables show their first kMaxTableRows rows and say how many more there are.
inline constexpr std::size_t kMaxTableRows = 500;

// "<!DOCTYPE html>...<body data-rendered="no"><main>", the page's <title> `title` (escaped).
[[nodiscard]] std::string pageOpen(std::string_view title);
// "</main><script>...</script></body></html>".
[[nodiscard]] std::string pageClose();

// A headline number: <div class="card" data-stat="key">; `bad` draws the value in red.
[[nodiscard]] std::string card(std::string_view key, std::string_view label, std::string_view value,
                               bool bad = false);
// <section id="id"><h2>title</h2>body</section>; `body` is HTML, `title` text.
[[nodiscard]] std::string section(std::string_view id, std::string_view title,
                                  std::string_view body);
// A paragraph of text (escaped).
[[nodiscard]] std::string note(std::string_view text);

struct Column {
  std::string title;
  bool numeric = false;  // right-aligned
};

// <table id="id" data-rows="<shown>" data-total="<total>">: the first kMaxTableRows of `total`
// rows, row(i, cells) filling row i's cells (text, escaped here). With `filter` and more than
// one row, an input above it hides the rows that do not contain its text. Past kMaxTableRows, a
// note says the rest are in `elsewhere` ("the JSON result").
[[nodiscard]] std::string table(
    std::string_view id, const std::vector<Column>& columns, std::size_t total,
    const std::function<void(std::size_t, std::vector<std::string>&)>& row, bool filter,
    std::string_view elsewhere = "the JSON result");

}  // namespace ksched::sim::report
