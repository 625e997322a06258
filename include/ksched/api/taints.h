// Node taints, pod tolerations and upstream's toleration matching (core/v1 ToleratesTaint).
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace ksched::api {

inline constexpr std::string_view kTaintEffectNoSchedule = "NoSchedule";
inline constexpr std::string_view kTaintEffectPreferNoSchedule = "PreferNoSchedule";
inline constexpr std::string_view kTaintEffectNoExecute = "NoExecute";

inline constexpr std::string_view kTolerationOpEqual = "Equal";
inline constexpr std::string_view kTolerationOpExists = "Exists";
// Numeric comparison (KEP 5471), behind the TaintTolerationComparisonOperators gate.
inline constexpr std::string_view kTolerationOpLt = "Lt";
inline constexpr std::string_view kTolerationOpGt = "Gt";

struct Taint {
  std::string key;
  std::string value;
  std::string effect;
  std::optional<std::string> timeAdded;  // RFC 3339; set for NoExecute taints

  friend bool operator==(const Taint&, const Taint&) = default;
};

struct Toleration {
  std::string key;        // empty with operator Exists: every key
  std::string operator_;  // "operator" in JSON: "Equal" (also when empty), "Exists", "Lt", "Gt"
  std::string value;
  std::string effect;  // empty: every effect
  std::optional<int64_t> tolerationSeconds;

  // Upstream semantics (core/v1 ToleratesTaint): a non-empty effect must equal the taint's, a
  // non-empty key must equal the taint's; then Equal (or empty) compares values and Exists
  // matches. Gt tolerates a taint whose value is greater than the toleration's, Lt one whose
  // value is smaller, both as int64 in canonical form (parseTolerationInteger; anything else on
  // either side tolerates nothing), and only with `comparisonOperators` (the caller's
  // TaintTolerationComparisonOperators gate); without it they tolerate nothing. Any other
  // operator tolerates nothing.
  [[nodiscard]] bool toleratesTaint(const Taint& taint, bool comparisonOperators) const noexcept;

  friend bool operator==(const Toleration&, const Toleration&) = default;
};

// The value of a Gt/Lt toleration or of the taint it is compared with, as upstream reads it
// (content.IsDecimalInteger, then strconv.ParseInt): "0", or an optional '-' and digits not
// starting with 0, within int64. nullopt for anything else ("", "+1", "007", "-0", "1.5", " 1").
[[nodiscard]] std::optional<int64_t> parseTolerationInteger(std::string_view s) noexcept;

void from_json(const nlohmann::json& j, Taint& t);
void from_json(const nlohmann::json& j, Toleration& t);

// True when any toleration tolerates the taint (`comparisonOperators`: as toleratesTaint).
[[nodiscard]] bool tolerationsTolerateTaint(std::span<const Toleration> tolerations,
                                            const Taint& taint, bool comparisonOperators) noexcept;

// Selects which taints findUntoleratedTaint considers; an empty filter considers all.
using TaintFilter = std::function<bool(const Taint&)>;

// The first taint (in node order) that passes the filter and that no toleration tolerates, or
// nullptr. The pointer refers into `taints`. `comparisonOperators`: as toleratesTaint.
[[nodiscard]] const Taint* findUntoleratedTaint(std::span<const Taint> taints,
                                                std::span<const Toleration> tolerations,
                                                bool comparisonOperators,
                                                const TaintFilter& filter = {});

// Upstream's filter for scheduling: NoSchedule and NoExecute taints (not PreferNoSchedule).
[[nodiscard]] bool isDoNotScheduleTaint(const Taint& taint) noexcept;

}  // namespace ksched::api
