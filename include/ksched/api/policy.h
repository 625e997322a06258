// IntOrString, policy/v1 PodDisruptionBudget and scheduling.k8s.io/v1 PriorityClass.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <utility>

#include <ksched/api/meta.h>
#include <ksched/api/selectors.h>

namespace ksched::api {

// intstr.IntOrString: a JSON integer or a JSON string (typically "25%").
struct IntOrString {
  bool isString = false;
  int32_t intVal = 0;
  std::string strVal;

  static IntOrString fromInt(int32_t v) { return IntOrString{false, v, {}}; }
  static IntOrString fromString(std::string s) { return IntOrString{true, 0, std::move(s)}; }

  friend bool operator==(const IntOrString&, const IntOrString&) = default;
};

// Upstream GetScaledValueFromIntOrPercent: an integer as is; "<n>%" scaled to n*total/100,
// rounded up (roundUp) or down. nullopt for a string that is not "<integer>%" or on overflow.
[[nodiscard]] std::optional<int64_t> scaledValueFromIntOrPercent(const IntOrString& v,
                                                                 int64_t total,
                                                                 bool roundUp) noexcept;

// A JSON integer (must fit int32) or string; any other type throws DecodeError.
void from_json(const nlohmann::json& j, IntOrString& v);
void to_json(nlohmann::json& j, const IntOrString& v);

struct PodDisruptionBudgetSpec {
  std::optional<IntOrString> minAvailable;
  std::optional<IntOrString> maxUnavailable;
  // Upstream preemption treats nil and empty selectors alike: the PDB matches no pods.
  std::optional<LabelSelector> selector;
};

struct PodDisruptionBudgetStatus {
  int64_t observedGeneration = 0;
  int32_t disruptionsAllowed = 0;
  int32_t currentHealthy = 0;
  int32_t desiredHealthy = 0;
  int32_t expectedPods = 0;
  // Pod name -> RFC 3339 time the eviction was processed.
  std::map<std::string, std::string, std::less<>> disruptedPods;
};

struct PodDisruptionBudget {
  ObjectMeta metadata;
  PodDisruptionBudgetSpec spec;
  PodDisruptionBudgetStatus status;
};

struct PriorityClass {
  ObjectMeta metadata;
  int32_t value = 0;
  bool globalDefault = false;
  std::optional<std::string> preemptionPolicy;  // nullopt means PreemptLowerPriority
  std::string description;
};

void from_json(const nlohmann::json& j, PodDisruptionBudgetSpec& s);
void from_json(const nlohmann::json& j, PodDisruptionBudgetStatus& s);
void from_json(const nlohmann::json& j, PodDisruptionBudget& p);
void from_json(const nlohmann::json& j, PriorityClass& c);

}  // namespace ksched::api
