// Strict decoding of configuration JSON (KubeSchedulerConfiguration, Policy) with the SDK's
// Decoder: every problem is recorded as "<field path>: <what is wrong>" and decoding goes on,
// so one run lists them all.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <ksched/helper/args_json.h>

#include "config/scheduler_config.h"  // Duration, parseDuration
#include "util/base64.h"

namespace ksched::config::decode {

inline std::string child(const std::string& path, std::string_view key) {
  return plugins::helper::childPath(path, key);
}

inline std::string index(const std::string& path, size_t i) {
  return plugins::helper::indexPath(path, i);
}

// The SDK's strict decoder (<ksched/helper/args_json.h>), collecting every problem, with the
// configuration's own value types.
class Decoder : public plugins::helper::Decoder {
 public:
  explicit Decoder(std::vector<std::string>& errors) : plugins::helper::Decoder(errors) {}

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
    auto d = util::base64Decode(*s);
    if (!d) error(child(path, key), "illegal base64 data");
    return d;
  }
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
