// Strict decoding of configuration JSON (KubeSchedulerConfiguration, Policy): every problem is
// recorded as "<field path>: <what is wrong>" and decoding goes on, so one run lists them all.
// Unknown fields and wrong types are errors; null or a missing member counts as absent (like
// JSON null into a Go pointer).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "client/config.h"
#include "config/scheduler_config.h"  // Duration, parseDuration

namespace ksched::config::decode {

inline std::string child(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

inline std::string index(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

// Strict decoding that records every problem and goes on.
class Decoder {
 public:
  using json = nlohmann::json;

  explicit Decoder(std::vector<std::string>& errors) : errors_(errors) {}

  void error(const std::string& path, const std::string& what) {
    errors_.push_back(path + ": " + what);
  }

  // j must be an object; unknown keys are reported. False if j is not an object.
  bool object(const json& j, const std::string& path,
              std::initializer_list<std::string_view> known) {
    if (!j.is_object()) {
      typeError(path, "an object", j);
      return false;
    }
    for (const auto& [key, _] : j.items()) {
      bool ok = false;
      for (auto k : known) ok = ok || k == key;
      if (!ok) error(child(path, key), "unknown field");
    }
    return true;
  }

  // Null or a missing member counts as absent (like JSON null into a Go pointer).
  static const json* member(const json& j, std::string_view key) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return nullptr;
    return &*it;
  }

  std::optional<int64_t> integer(const json& j, std::string_view key, const std::string& path,
                                 int64_t lo, int64_t hi) {
    const json* v = member(j, key);
    if (v == nullptr) return std::nullopt;
    const std::string p = child(path, key);
    if (v->is_number_unsigned()) {
      if (v->get<uint64_t>() > static_cast<uint64_t>(hi)) {
        error(p, "integer " + v->dump() + " out of range");
        return std::nullopt;
      }
      return static_cast<int64_t>(v->get<uint64_t>());
    }
    if (!v->is_number_integer()) {
      typeError(p, "an integer", *v);
      return std::nullopt;
    }
    const auto i = v->get<int64_t>();
    if (i < lo || i > hi) {
      error(p, "integer " + v->dump() + " out of range");
      return std::nullopt;
    }
    return i;
  }

  std::optional<int32_t> int32(const json& j, std::string_view key, const std::string& path) {
    auto v = integer(j, key, path, std::numeric_limits<int32_t>::min(),
                     std::numeric_limits<int32_t>::max());
    if (!v) return std::nullopt;
    return static_cast<int32_t>(*v);
  }

  std::optional<int64_t> int64(const json& j, std::string_view key, const std::string& path) {
    return integer(j, key, path, std::numeric_limits<int64_t>::min(),
                   std::numeric_limits<int64_t>::max());
  }

  std::optional<double> number(const json& j, std::string_view key, const std::string& path) {
    const json* v = member(j, key);
    if (v == nullptr) return std::nullopt;
    if (!v->is_number()) {
      typeError(child(path, key), "a number", *v);
      return std::nullopt;
    }
    return v->get<double>();
  }

  std::optional<bool> boolean(const json& j, std::string_view key, const std::string& path) {
    const json* v = member(j, key);
    if (v == nullptr) return std::nullopt;
    if (!v->is_boolean()) {
      typeError(child(path, key), "a boolean", *v);
      return std::nullopt;
    }
    return v->get<bool>();
  }

  std::optional<std::string> string(const json& j, std::string_view key, const std::string& path) {
    const json* v = member(j, key);
    if (v == nullptr) return std::nullopt;
    if (!v->is_string()) {
      typeError(child(path, key), "a string", *v);
      return std::nullopt;
    }
    return v->get<std::string>();
  }

  std::optional<Duration> duration(const json& j, std::string_view key, const std::string& path) {
    auto s = string(j, key, path);
    if (!s) return std::nullopt;
    auto d = parseDuration(*s);
    if (!d) error(child(path, key), "invalid duration \"" + *s + "\"");
    return d;
  }

  std::optional<std::string> bytes(const json& j, std::string_view key, const std::string& path) {
    auto s = string(j, key, path);
    if (!s) return std::nullopt;
    auto d = client::base64Decode(*s);
    if (!d) error(child(path, key), "illegal base64 data");
    return d;
  }

  // The array at key (absent: empty); reports a non-array.
  const json* array(const json& j, std::string_view key, const std::string& path) {
    const json* v = member(j, key);
    if (v == nullptr) return nullptr;
    if (!v->is_array()) {
      typeError(child(path, key), "an array", *v);
      return nullptr;
    }
    return v;
  }

 private:
  void typeError(const std::string& path, const char* expected, const json& got) {
    error(path, std::string("expected ") + expected + ", got " + got.type_name());
  }

  std::vector<std::string>& errors_;
};

// The first YAML/JSON document of `text` (an empty one is {}); on a syntax error appends
// "<sourceName>: invalid YAML ..." to `errors` and returns nullopt.
std::optional<nlohmann::json> parseDocument(std::string_view text, const std::string& sourceName,
                                            std::vector<std::string>& errors);
// The bytes of `path`; on failure appends "<path>: cannot read: <reason>" and returns nullopt.
std::optional<std::string> readFile(const std::string& path, std::vector<std::string>& errors);

// Extenders as the configuration file (v1 types: enableHTTPS, httpTimeout a duration string)
// or the legacy Policy (LegacyExtender: enableHttps, httpTimeout in nanoseconds) writes them.
enum class ExtenderDialect { kConfig, kPolicy };
Extender decodeExtender(Decoder& d, const nlohmann::json& j, const std::string& path,
                        ExtenderDialect dialect);

}  // namespace ksched::config::decode
