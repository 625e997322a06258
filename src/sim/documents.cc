#include "sim/documents.h"

#include <charconv>
#include <nlohmann/json.hpp>
#include <system_error>

namespace ksched::sim {

namespace {

bool onlyCommentsOrDirectives(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    const size_t first = line.find_first_not_of(" \t\r");
    if (first != std::string_view::npos && line[first] != '#' && line[first] != '%') return false;
    pos = end + 1;
  }
  return true;
}

}  // namespace

std::vector<Document> splitDocuments(std::string_view text) {
  std::vector<Document> out;
  size_t start = 0;
  size_t startLine = 0;
  size_t line = 0;
  auto close = [&](size_t end) {
    const std::string_view doc = text.substr(start, end - start);
    if (!onlyCommentsOrDirectives(doc)) out.push_back({doc, startLine});
  };
  for (size_t pos = 0; pos < text.size(); ++line) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view l = text.substr(pos, end - pos);
    const bool marker = (l.starts_with("---") || l.starts_with("...")) &&
                        (l.size() == 3 || l[3] == ' ' || l[3] == '\t' || l[3] == '\r');
    if (marker) {
      close(pos);
      // "--- {a: 1}": what follows the marker belongs to the next document.
      start = l.starts_with("---") ? pos + 3 : end;
      startLine = line;
    }
    pos = end + 1;
  }
  if (start < text.size()) close(text.size());
  return out;
}

std::string lineInText(std::string message, size_t firstLine) {
  constexpr std::string_view kAt = "invalid YAML at line ";
  if (firstLine == 0 || !message.starts_with(kAt)) return message;
  size_t line = 0;
  const char* begin = message.data() + kAt.size();
  const auto [end, ec] = std::from_chars(begin, message.data() + message.size(), line);
  if (ec != std::errc()) return message;
  return std::string(kAt) + std::to_string(line + firstLine) +
         message.substr(static_cast<size_t>(end - message.data()));
}

bool looksLikeJson(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && (text[first] == '{' || text[first] == '[');
}

std::string jsonError(std::string_view text) {
  try {
    const nlohmann::json parsed = nlohmann::json::parse(text);
    (void)parsed;
  } catch (const nlohmann::json::exception& e) {
    std::string_view what = e.what();
    if (const size_t p = what.find("] "); what.starts_with("[json.exception.") && p != what.npos) {
      what.remove_prefix(p + 2);
    }
    return "invalid JSON: " + std::string(what);
  }
  return "invalid JSON";
}

}  // namespace ksched::sim
