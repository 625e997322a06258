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
      preBind, bind, postBind, multiPoint;
};

// An extension point as a profile names it: the config field, the name in messages and metrics,
// and its set in Plugins.
struct ExtensionPointField {
  std::string_view field;  // "preFilter"
  std::string_view name;   // "PreFilter"
  PluginSet Plugins::*set;
};

// Every extension point, in upstream's order (multiPoint is not one: it expands into them).
// The one list the decoder, the validation, the encoder and the framework iterate.
inline constexpr std::array<ExtensionPointField, 12> kExtensionPoints = {{
    {"preEnqueue", "PreEnqueue", &Plugins::preEnqueue},
    {"queueSort", "QueueSort", &Plugins::queueSort},
    {"preFilter", "PreFilter", &Plugins::preFilter},
    {"filter", "Filter", &Plugins::filter},
    {"postFilter", "PostFilter", &Plugins::postFilter},
    {"preScore", "PreScore", &Plugins::preScore},
    {"score", "Score", &Plugins::score},
    {"reserve", "Reserve", &Plugins::reserve},
    {"permit", "Permit", &Plugins::permit},
    {"preBind", "PreBind", &Plugins::preBind},
    {"bind", "Bind", &Plugins::bind},
    {"postBind", "PostBind", &Plugins::postBind},
}};

struct PluginConfig {
  std::string name;
  nlohmann::json args;  // null: the plugin's defaults
};

struct Profile {
  std::string schedulerName = kDefaultSchedulerName;
  std::optional<int32_t> percentageOfNodesToScore;
  Plugins plugins;
  std::vector<PluginConfig> pluginConfig;
  // Converted from v1beta1 or a Policy (config/legacy_config.h): Score weights follow v1.20's
  // rule (any positive weight whose total fits in int64, NodePreferAvoidPods has 10000)
  // instead of v1's [1, 100]. Not written by toYaml(), which caps them with a note.
  bool v120ScoreWeights = false;
};

// Upstream v1's default plugins (multiPoint, with score weights) restricted to the plugins
// ksched implements; docs/plugins.md lists them.
[[nodiscard]] PluginSet defaultMultiPoint();

// A profile named `schedulerName` with the default plugins.
[[nodiscard]] Profile defaultProfile(std::string schedulerName = kDefaultSchedulerName);

}  // namespace ksched::config
