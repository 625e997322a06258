// The text of a file simulate reads, taken apart before any object is decoded: a YAML stream's
// documents, and the messages that say where a document is broken.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ksched::sim {

// A document of a YAML stream: its text and the line it starts on (0-based).
struct Document {
  std::string_view text;
  size_t firstLine = 0;
};

// Splits a YAML stream at its "---" and "..." lines (at column 0 they always mark a document,
// even inside a block scalar). Documents of nothing but comments are left out.
std::vector<Document> splitDocuments(std::string_view text);

// "invalid YAML at line L, ..." of a document starting at `firstLine`: L in the whole text.
std::string lineInText(std::string message, size_t firstLine);

// The text starts (after blanks) with '{' or '['.
bool looksLikeJson(std::string_view text);

// Why `text` is not JSON: "invalid JSON: <the parser's reason>".
std::string jsonError(std::string_view text);

}  // namespace ksched::sim
