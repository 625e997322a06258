#include <charconv>
#include <limits>
#include <nlohmann/json.hpp>
#include <string_view>

#include <ksched/api/decode.h>
#include <ksched/api/policy.h>

namespace ksched::api {
namespace {

// Floor and ceiling of a / b for b > 0.
int64_t floorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0 && a < 0) ? 1 : 0); }
int64_t ceilDiv(int64_t a, int64_t b) { return a / b + ((a % b != 0 && a > 0) ? 1 : 0); }

}  // namespace

std::optional<int64_t> scaledValueFromIntOrPercent(const IntOrString& v, int64_t total,
                                                   bool roundUp) noexcept {
  if (!v.isString) return v.intVal;
  std::string_view s = v.strVal;
  if (!s.ends_with('%')) return std::nullopt;
  s.remove_suffix(1);
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  int64_t percent = 0;
  const auto res = std::from_chars(s.data(), s.data() + s.size(), percent);
  if (s.empty() || res.ec != std::errc{} || res.ptr != s.data() + s.size()) return std::nullopt;
  int64_t product = 0;
  if (__builtin_mul_overflow(percent, total, &product)) return std::nullopt;
  return roundUp ? ceilDiv(product, 100) : floorDiv(product, 100);
}

void from_json(const nlohmann::json& j, IntOrString& v) {
  if (j.is_string()) {
    v = IntOrString::fromString(j.get<std::string>());
    return;
  }
  if (j.is_number_integer()) {
    const bool fits = j.is_number_unsigned()
                          ? j.get<uint64_t>() <= std::numeric_limits<int32_t>::max()
                          : j.get<int64_t>() >= std::numeric_limits<int32_t>::min() &&
                                j.get<int64_t>() <= std::numeric_limits<int32_t>::max();
    if (!fits) throw DecodeError("value " + j.dump() + " does not fit an int32");
    v = IntOrString::fromInt(static_cast<int32_t>(j.get<int64_t>()));
    return;
  }
  throw nlohmann::json::type_error::create(
      302, std::string("type must be an integer or a string, but is ") + j.type_name(), &j);
}

void to_json(nlohmann::json& j, const IntOrString& v) {
  if (v.isString) {
    j = v.strVal;
  } else {
    j = v.intVal;
  }
}

void from_json(const nlohmann::json& j, PodDisruptionBudgetSpec& s) {
  readField(j, "minAvailable", s.minAvailable);
  readField(j, "maxUnavailable", s.maxUnavailable);
  readField(j, "selector", s.selector);
}

void from_json(const nlohmann::json& j, PodDisruptionBudgetStatus& s) {
  readField(j, "observedGeneration", s.observedGeneration);
  readField(j, "disruptionsAllowed", s.disruptionsAllowed);
  readField(j, "currentHealthy", s.currentHealthy);
  readField(j, "desiredHealthy", s.desiredHealthy);
  readField(j, "expectedPods", s.expectedPods);
  readField(j, "disruptedPods", s.disruptedPods);
}

void from_json(const nlohmann::json& j, PodDisruptionBudget& p) {
  readField(j, "metadata", p.metadata);
  readField(j, "spec", p.spec);
  readField(j, "status", p.status);
}

void from_json(const nlohmann::json& j, PriorityClass& c) {
  readField(j, "metadata", c.metadata);
  readField(j, "value", c.value);
  readField(j, "globalDefault", c.globalDefault);
  readField(j, "preemptionPolicy", c.preemptionPolicy);
  readField(j, "description", c.description);
}

}  // namespace ksched::api
