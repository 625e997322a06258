// Text that came from outside (configuration files, kubeconfigs, extender answers, HTTP
// requests) may hold bytes that are not UTF-8; JSON cannot carry them, and nlohmann::json throws
// when it serializes them. Such text is made valid where it comes in, once, with these.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ksched::api {

// Whether `s` is well-formed UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF).
// Appends code point `cp` (at most 0x10FFFF; callers check) encoded as UTF-8.
void appendUtf8(std::string& out, char32_t cp);

[[nodiscard]] bool isValidUtf8(std::string_view s) noexcept;

// `s` with every byte that is not part of a well-formed sequence replaced by U+FFFD, as Go's
// encoding/json writes such bytes. Returns `s` unchanged when valid.
[[nodiscard]] std::string toValidUtf8(std::string_view s);
// In place; returns whether anything was replaced.
bool makeValidUtf8(std::string& s);

// At most `maxBytes` of `s` (valid UTF-8 in, valid UTF-8 out: never cuts a sequence), with
// "..." appended when something was cut. For outside text quoted in a message.
[[nodiscard]] std::string truncateUtf8(std::string_view s, size_t maxBytes);

// Equal ignoring ASCII case (Go's strings.EqualFold on ASCII text): header names, JSON field
// names matched as Go's decoder matches them.
[[nodiscard]] bool equalFold(std::string_view a, std::string_view b) noexcept;

}  // namespace ksched::api
