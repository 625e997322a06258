// Strict, typed decoding of plugin args from JSON. Every error is a ksched::PluginArgsError
// whose message starts with the field path relative to the args object
// ("scoringStrategy.resources[1].weight: expected an integer, got string"), like the
// strict decoding kube-scheduler applies to its configuration (unknown fields are errors).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace ksched::plugins::helper {

// "a" + "b" -> "a.b"; "" + "b" -> "b".
[[nodiscard]] std::string childPath(const std::string& path, std::string_view key);
// "a" + 2 -> "a[2]".
[[nodiscard]] std::string indexPath(const std::string& path, size_t i);

// `j` must be an object whose keys are all in `known`; throws otherwise.
void expectObject(const nlohmann::json& j, const std::string& path,
                  std::initializer_list<std::string_view> known);

// Each reads j[key] when present and not null (otherwise leaves `out` untouched) and returns
// whether it did. Type mismatches and out-of-range integers throw.
bool readInt64(const nlohmann::json& j, std::string_view key, const std::string& path,
               int64_t& out);
bool readInt32(const nlohmann::json& j, std::string_view key, const std::string& path,
               int32_t& out);
bool readString(const nlohmann::json& j, std::string_view key, const std::string& path,
                std::string& out);
bool readStringList(const nlohmann::json& j, std::string_view key, const std::string& path,
                    std::vector<std::string>& out);

// The member at `key` when present and not null, else nullptr.
[[nodiscard]] const nlohmann::json* member(const nlohmann::json& j, std::string_view key);

// Keys a plugin's args may carry besides its own fields (a typed args object in a
// KubeSchedulerConfiguration file names its kind).
inline constexpr std::string_view kApiVersionKey = "apiVersion";
inline constexpr std::string_view kKindKey = "kind";

}  // namespace ksched::plugins::helper
