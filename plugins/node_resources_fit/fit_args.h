// NodeResourcesFitArgs (kubescheduler.config.k8s.io/v1), decoded with v1 defaulting and
// validated with upstream's rules and messages.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <ksched/helper/field_error.h>
#include <ksched/helper/resource_allocation.h>

namespace ksched::plugins {

inline constexpr std::string_view kLeastAllocated = "LeastAllocated";
inline constexpr std::string_view kMostAllocated = "MostAllocated";
inline constexpr std::string_view kRequestedToCapacityRatio = "RequestedToCapacityRatio";
// The resource specs and shape points are the SDK's, shared with the other resource scorers.
using helper::defaultScoringResources;
using helper::kMaxCustomPriorityScore;
using helper::ResourceSpec;
using helper::UtilizationShapePoint;

struct RequestedToCapacityRatioParam {
  std::vector<UtilizationShapePoint> shape;

  friend bool operator==(const RequestedToCapacityRatioParam&,
                         const RequestedToCapacityRatioParam&) = default;
};

struct ScoringStrategy {
  std::string type{kLeastAllocated};  // kept as written so validation can report it
  std::vector<ResourceSpec> resources = defaultScoringResources();
  std::optional<RequestedToCapacityRatioParam> requestedToCapacityRatio;

  friend bool operator==(const ScoringStrategy&, const ScoringStrategy&) = default;
};

struct NodeResourcesFitArgs {
  // Extended resources the Filter does not check.
  std::vector<std::string> ignoredResources;
  // Extended resource groups (the part before '/') the Filter does not check.
  std::vector<std::string> ignoredResourceGroups;
  ScoringStrategy scoringStrategy;

  // Decodes the JSON args (null: all defaults) strictly, then applies v1 defaulting: no
  // scoringStrategy -> LeastAllocated over cpu and memory; empty resources -> cpu and memory;
  // weight 0 or absent -> 1. Throws PluginArgsError on unknown fields and wrong types.
  [[nodiscard]] static NodeResourcesFitArgs fromJson(const nlohmann::json& j);

  // Upstream ValidateNodeResourcesFitArgs, in its order; empty when valid. A
  // RequestedToCapacityRatio strategy without requestedToCapacityRatio reports the missing
  // shape (upstream would crash).
  [[nodiscard]] std::vector<helper::FieldError> validationErrors() const;
  // Throws PluginArgsError with the first validation error.
  void validate() const;
};

}  // namespace ksched::plugins
