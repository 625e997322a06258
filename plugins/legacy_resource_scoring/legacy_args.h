// The v1beta1 args of kube-scheduler v1.20's NodeResourcesLeastAllocated,
// NodeResourcesMostAllocated and RequestedToCapacityRatio, decoded with v1beta1 defaulting and
// validated with v1.20's rules and messages (validation_pluginargs.go). v1.20 reports the first
// error without a field path; ksched puts the path before it:
//   resources[0].weight: resource Weight of cpu should be a positive value, got 0
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <vector>

#include <ksched/helper/field_error.h>
#include <ksched/helper/resource_allocation.h>

namespace ksched::plugins {

using helper::defaultScoringResources;
using helper::kMaxCustomPriorityScore;
using helper::ResourceSpec;
using helper::UtilizationShapePoint;

// NodeResourcesLeastAllocatedArgs and NodeResourcesMostAllocatedArgs.
struct LegacyAllocatedArgs {
  // No or empty resources: cpu and memory, weight 1 each. A weight left out is 0 (invalid).
  std::vector<ResourceSpec> resources = defaultScoringResources();

  // Decodes strictly (null: defaults; apiVersion and kind allowed). Throws PluginArgsError on
  // unknown fields and wrong types.
  [[nodiscard]] static LegacyAllocatedArgs fromJson(const nlohmann::json& j);
  // v1.20 validateResources, in order: weight <= 0, weight > 100.
  [[nodiscard]] std::vector<helper::FieldError> validationErrors() const;
  // Throws PluginArgsError with the first validation error.
  void validate() const;
};

struct RequestedToCapacityRatioArgs {
  // Utilization 0-100 -> score 0-10 (scaled x10 when scoring); required.
  std::vector<UtilizationShapePoint> shape;
  // No or empty resources: cpu and memory, weight 1 each. A weight left out is 0 (invalid).
  std::vector<ResourceSpec> resources = defaultScoringResources();

  // Decodes strictly (null: defaults; apiVersion and kind allowed). Throws PluginArgsError on
  // unknown fields and wrong types.
  [[nodiscard]] static RequestedToCapacityRatioArgs fromJson(const nlohmann::json& j);
  // v1.20 ValidateRequestedToCapacityRatioArgs, in order: shape empty, not increasing,
  // utilization or score out of range; then weights < 1.
  [[nodiscard]] std::vector<helper::FieldError> validationErrors() const;
  // Throws PluginArgsError with the first validation error.
  void validate() const;
};

}  // namespace ksched::plugins
