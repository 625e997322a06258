// Shared by the libFuzzer targets (tests/fuzz/<target>_fuzz.cc) and their replay program.
//
// A target feeds its bytes to one decoder of outside input the way ksched's own caller does,
// catches exactly what that caller catches, and then serializes what was decoded. Anything
// else escaping, a sanitizer report, or a failed check() is a crash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string_view>

namespace ksched::fuzz {

inline std::string_view asText(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Serializes `j` as ksched sends or logs it. nlohmann::json throws type_error 316 on a string
// that is not UTF-8: text from outside must have been made valid where it came in.
inline void dump(const nlohmann::json& j) { (void)j.dump(); }

// An invariant the decoder promises (a round trip, a bound): its failure is a crash.
inline void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "fuzz check failed: %s\n", what);
    std::abort();
  }
}

// The input as a selector byte followed by the rest (empty input: selector 0).
struct Split {
  uint8_t selector = 0;
  std::string_view rest;
};
inline Split split(const uint8_t* data, size_t size) {
  if (size == 0) return {};
  return {data[0], asText(data + 1, size - 1)};
}

}  // namespace ksched::fuzz
