// Wiring: which plugin runs at which extension point of a profile, with its decoded args —
// worked out from the profile and the registry alone (the factories' decode and the extension
// points they declare), building nothing. Configuration validation reports its errors; the
// framework builds its plugins from it (framework/framework.h).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <ksched/extension_point.h>
#include <ksched/registry.h>

#include "config/profile.h"
#include "config/scheduler_config.h"

namespace ksched::config {

struct WiredPlugin {
  std::string name;
  // The registry's factory; null when the plugin is unknown or its args are invalid (then
  // Wiring::errors says why).
  const PluginFactory* factory = nullptr;
  PluginArgs args;       // what factory->decode returned
  std::string argsPath;  // "profiles[0].pluginConfig[2].args", for create()'s errors
};

// A plugin at one extension point: its position in Wiring::plugins, and its weight (Score).
struct WiredRef {
  size_t plugin = 0;
  int64_t weight = 0;
};

struct Wiring {
  // Every plugin a list enables, once, in the order they were first named (multiPoint first).
  std::vector<WiredPlugin> plugins;
  // Per extension point (indexed by ExtensionPoint), the plugins that run there, in order.
  std::array<std::vector<WiredRef>, kNumExtensionPoints> points;
  // "<field path>: <what is wrong>", e.g. `profiles[0].plugins.filter.enabled[1]: plugin "X"
  // does not exist`; empty when the profile wires.
  std::vector<std::string> errors;

  [[nodiscard]] const std::vector<WiredRef>& at(ExtensionPoint p) const {
    return points[indexOf(p)];
  }
};

// Wires `profile` (a frameworkProfile(): multiPoint and per-point sets, pluginConfig) whose
// config path is `prefix`, e.g. "profiles[0]". Upstream's semantics: explicit per-point plugins
// that also appear in multiPoint keep their place first, then the other multiPoint plugins that
// serve the point, then the remaining explicit ones; a plugin enabled at Filter also runs at its
// PreFilter (Score: PreScore; PostFilter: PreEnqueue) unless disabled there; one QueueSort, at
// least one Bind; Score weights in [1, 100] (v1.20 profiles: any positive weight whose total
// cannot overflow).
// Plugins' args are decoded with `gates` (PluginFactory::decode).
[[nodiscard]] Wiring wire(const Profile& profile, const Registry& registry,
                          const std::string& prefix, const features::Gates& gates);

// The validation's WiringCheck over `registry` (copied): wire() and report.
[[nodiscard]] WiringCheck wiringCheck(const Registry& registry);

}  // namespace ksched::config
