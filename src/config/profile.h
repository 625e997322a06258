// The profile part of KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1): which
// plugins run at which extension point, with what weights and args.
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <ksched/api/features.h>
#include <ksched/extension_point.h>

namespace ksched::config {

inline constexpr const char* kDefaultSchedulerName = "default-scheduler";

struct PluginRef {
  std::string name;
  int32_t weight = 0;  // Score only; 0 means "not set" (1 at Score)
};

struct PluginSet {
  std::vector<PluginRef> enabled;
  std::vector<PluginRef> disabled;  // name "*" disables all defaults of this point
};

struct Plugins {
  PluginSet preEnqueue, queueSort, preFilter, filter, postFilter, preScore, score, reserve, permit,
      preBind, bind, postBind, multiPoint, placementGenerate, placementScore, placementFeasible,
      podGroupPostFilter;
};

// An extension point as a profile names it: the SDK's point (include/ksched/extension_point.h),
// its config field, and its set in Plugins.
struct ExtensionPointField {
  ExtensionPoint point;
  std::string_view field;  // "preFilter"
  std::string_view name;   // "PreFilter": extensionPointName(point)
  PluginSet Plugins::*set;
};

namespace detail {
constexpr ExtensionPointField field(ExtensionPoint p, std::string_view field,
                                    PluginSet Plugins::*set) {
  return {p, field, extensionPointName(p), set};
}
}  // namespace detail

// The SDK's extension points with their config fields, indexed by ExtensionPoint (multiPoint is
// not one: it expands into them). The decoder, the validation, the encoder, the wiring
// (config/wiring.h) and the framework iterate it.
inline constexpr std::array<ExtensionPointField, kNumExtensionPoints> kExtensionPoints = {{
    detail::field(ExtensionPoint::kPreEnqueue, "preEnqueue", &Plugins::preEnqueue),
    detail::field(ExtensionPoint::kQueueSort, "queueSort", &Plugins::queueSort),
    detail::field(ExtensionPoint::kPreFilter, "preFilter", &Plugins::preFilter),
    detail::field(ExtensionPoint::kFilter, "filter", &Plugins::filter),
    detail::field(ExtensionPoint::kPostFilter, "postFilter", &Plugins::postFilter),
    detail::field(ExtensionPoint::kPreScore, "preScore", &Plugins::preScore),
    detail::field(ExtensionPoint::kScore, "score", &Plugins::score),
    detail::field(ExtensionPoint::kReserve, "reserve", &Plugins::reserve),
    detail::field(ExtensionPoint::kPermit, "permit", &Plugins::permit),
    detail::field(ExtensionPoint::kPreBind, "preBind", &Plugins::preBind),
    detail::field(ExtensionPoint::kBind, "bind", &Plugins::bind),
    detail::field(ExtensionPoint::kPostBind, "postBind", &Plugins::postBind),
    detail::field(ExtensionPoint::kPlacementGenerate, "placementGenerate",
                  &Plugins::placementGenerate),
    detail::field(ExtensionPoint::kPlacementScore, "placementScore", &Plugins::placementScore),
    detail::field(ExtensionPoint::kPlacementFeasible, "placementFeasible",
                  &Plugins::placementFeasible),
    detail::field(ExtensionPoint::kPodGroupPostFilter, "podGroupPostFilter",
                  &Plugins::podGroupPostFilter),
}};
static_assert([] {
  for (size_t i = 0; i < kNumExtensionPoints; ++i) {
    if (indexOf(kExtensionPoints[i].point) != i) return false;
  }
  return true;
}());

struct PluginConfig {
  std::string name;
  nlohmann::json args;  // null: the plugin's defaults
};

struct Profile {
  std::string schedulerName = kDefaultSchedulerName;
  std::optional<int32_t> percentageOfNodesToScore;
  // Topology-aware placement of pod groups (v1; 0 or unset: upstream's adaptive share).
  std::optional<int32_t> percentageOfPlacementsToScore;
  Plugins plugins;
  std::vector<PluginConfig> pluginConfig;
  // Converted from v1beta1 or a Policy (config/legacy_config.h): Score weights follow v1.20's
  // rule (any positive weight whose total fits in int64, NodePreferAvoidPods has 10000)
  // instead of v1's [1, 100]. Not written by toYaml(), which caps them with a note.
  bool v120ScoreWeights = false;
};

// Upstream v1's default plugins (multiPoint, with score weights) restricted to the plugins
// ksched implements, with the gated ones (DynamicResources, NodeDeclaredFeatures) in only while
// their gate is on in `gates`; docs/plugins.md lists them.
[[nodiscard]] PluginSet defaultMultiPoint(const features::Gates& gates);

// A profile named `schedulerName` with the default plugins of `gates`.
[[nodiscard]] Profile defaultProfile(const features::Gates& gates,
                                     std::string schedulerName = kDefaultSchedulerName);

}  // namespace ksched::config
