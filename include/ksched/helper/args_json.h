// Strict, typed decoding of JSON written by users: plugin args, and the scheduler's own
// configuration (which builds on the same Decoder). Every problem is "<field path>: <what is
// wrong>" ("scoringStrategy.resources[1].weight: expected an integer, got string"), like the
// strict decoding kube-scheduler applies to its configuration: unknown fields and wrong types
// are errors; null or a missing member counts as absent (like JSON null into a Go pointer).
//
// A Decoder either collects every problem and goes on (one run lists them all), or throws
// ksched::PluginArgsError at the first (Decoder::throwing(), what the read* helpers below use
// in plugin factories).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ksched::plugins::helper {

// "a" + "b" -> "a.b"; "" + "b" -> "b".
[[nodiscard]] std::string childPath(const std::string& path, std::string_view key);
// "a" + 2 -> "a[2]".
[[nodiscard]] std::string indexPath(const std::string& path, size_t i);

class Decoder {
 public:
  using json = nlohmann::json;

  // Appends every problem to `errors` and goes on.
  explicit Decoder(std::vector<std::string>& errors) : errors_(&errors) {}
  // Throws PluginArgsError at the first problem.
  [[nodiscard]] static Decoder throwing() { return Decoder(); }

  void error(const std::string& path, const std::string& what);

  // `j` must be an object whose keys are all in `known`; unknown keys are reported. False if
  // `j` is not an object.
  bool object(const json& j, const std::string& path,
              std::initializer_list<std::string_view> known);

  // The member at `key` when present and not null, else nullptr.
  [[nodiscard]] static const json* member(const json& j, std::string_view key);

  // Each reads j[key]: nullopt when absent or null, or after reporting a wrong type or an
  // integer out of [lo, hi].
  std::optional<int64_t> integer(const json& j, std::string_view key, const std::string& path,
                                 int64_t lo, int64_t hi);
  std::optional<int32_t> int32(const json& j, std::string_view key, const std::string& path);
  std::optional<int64_t> int64(const json& j, std::string_view key, const std::string& path);
  std::optional<double> number(const json& j, std::string_view key, const std::string& path);
  std::optional<bool> boolean(const json& j, std::string_view key, const std::string& path);
  std::optional<std::string> string(const json& j, std::string_view key, const std::string& path);
  // An array of strings; a non-string item is reported (and the list not returned).
  std::optional<std::vector<std::string>> stringList(const json& j, std::string_view key,
                                                     const std::string& path);
  // The array at `key` (nullptr when absent, or after reporting a non-array).
  const json* array(const json& j, std::string_view key, const std::string& path);

 protected:
  void typeError(const std::string& path, const char* expected, const json& got);

 private:
  Decoder() = default;
  // j[key] as T when `is` holds for it, else reported as not `expected`.
  template <typename T>
  std::optional<T> scalar(const json& j, std::string_view key, const std::string& path,
                          bool (json::*is)() const noexcept, const char* expected);
  std::vector<std::string>* errors_ = nullptr;  // null: throw
};

// The helpers of plugin factories, over Decoder::throwing().
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
[[nodiscard]] inline const nlohmann::json* member(const nlohmann::json& j, std::string_view key) {
  return Decoder::member(j, key);
}

// Keys a plugin's args may carry besides its own fields (a typed args object in a
// KubeSchedulerConfiguration file names its kind).
inline constexpr std::string_view kApiVersionKey = "apiVersion";
inline constexpr std::string_view kKindKey = "kind";

}  // namespace ksched::plugins::helper
