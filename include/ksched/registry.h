// Plugin registry: name -> factory. In-tree plugins are listed explicitly in one function
// (plugins/registry.h: inTreeRegistry()); out-of-tree plugins merge in. No static-initializer
// registration.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include <ksched/handle.h>
#include <ksched/plugin.h>

namespace ksched {

// Thrown by a factory when its args are invalid. `what()` is "<field path>: <what is wrong>",
// with the path relative to the args object (e.g. "scoringStrategy.type: ..."); the config
// layer prefixes "profiles[i].pluginConfig[j].args.".
class PluginArgsError : public std::runtime_error {
 public:
  explicit PluginArgsError(const std::string& what) : std::runtime_error(what) {}
};

// Builds a plugin from its args (JSON null when the profile has no pluginConfig for it: use
// defaults). Decodes and validates the args, throwing PluginArgsError. Called once per profile
// at start-up, while the configuration is validated: the Handle's services (API client, event
// recorder, parallelizer, informers) are attached after the factory returns, before anything
// is scheduled, so the factory keeps references (Handle&, listers()) and registers handlers
// and watches, but calls no other service. (Scheduler instances built without validation, as
// in tests, call it with the services in place.)
using PluginFactory =
    std::function<std::unique_ptr<Plugin>(const nlohmann::json& args, Handle& handle)>;

class Registry {
 public:
  // Throws std::invalid_argument on a duplicate name.
  void add(const std::string& name, PluginFactory factory);
  // Adds every plugin of `other`; throws std::invalid_argument on a duplicate name.
  void merge(const Registry& other);
  // nullptr when unknown.
  [[nodiscard]] const PluginFactory* find(const std::string& name) const;
  [[nodiscard]] std::vector<std::string> names() const;

 private:
  std::map<std::string, PluginFactory, std::less<>> factories_;
};

}  // namespace ksched
