// PodTopologySpreadArgs: the plugin's typed config (upstream config.PodTopologySpreadArgs,
// kubescheduler.config.k8s.io/v1 defaulting and ValidatePodTopologySpreadArgs).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include <ksched/api/pod.h>
#include <ksched/helper/field_error.h>

namespace ksched::plugins {

// defaultingType values.
inline constexpr std::string_view kSystemDefaulting = "System";
inline constexpr std::string_view kListDefaulting = "List";

struct PodTopologySpreadArgs {
  // Used for pods without spec.topologySpreadConstraints when defaultingType is List. Their
  // selector is never set here: it is derived per pod from the workloads that select it.
  std::vector<api::TopologySpreadConstraint> defaultConstraints;
  // System: the built-in defaults (hostname maxSkew 3, zone maxSkew 5, both ScheduleAnyway);
  // List: defaultConstraints. v1 defaults an empty value to System.
  std::string defaultingType{kSystemDefaulting};

  // Decodes strictly (null: defaults). Throws PluginArgsError on unknown fields and wrong
  // types.
  [[nodiscard]] static PodTopologySpreadArgs fromJson(const nlohmann::json& j);
  // Every problem, worded like upstream ValidatePodTopologySpreadArgs, in upstream's order.
  [[nodiscard]] std::vector<helper::FieldError> validationErrors() const;
  // Throws PluginArgsError with the first validation error.
  void validate() const;
};

}  // namespace ksched::plugins
