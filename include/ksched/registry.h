// Plugin registry: name -> factory. In-tree plugins are listed explicitly in one function
// (plugins/registry.h: inTreeRegistry()); out-of-tree plugins merge in. No static-initializer
// registration.
//
// A factory has two halves, called at different times:
//   - decode(args JSON, feature gates) -> typed args: pure, builds nothing, throws
//     PluginArgsError. Configuration validation calls it for every plugin a profile enables (with
//     the extension points the factory declares, that is all validation needs), so a bad config
//     is rejected before anything is constructed. The gates are the ones the profile will run
//     with: args a gate forbids are rejected here.
//   - create(typed args, Handle&) -> the plugin: called once per profile when the scheduler builds
//     its frameworks, with the Handle's services (API, event recorder, parallelizer, informers)
//     in place. The plugin may keep the Handle, register pod event handlers and watches here.
#pragma once

#include <any>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <ksched/extension_point.h>
#include <ksched/handle.h>
#include <ksched/plugin.h>

namespace ksched {

// Thrown by decode when the args are invalid. `what()` is "<field path>: <what is wrong>", with
// the path relative to the args object (e.g. "scoringStrategy.type: ..."); the config layer
// prefixes "profiles[i].pluginConfig[j].args.".
class PluginArgsError : public std::runtime_error {
 public:
  explicit PluginArgsError(const std::string& what) : std::runtime_error(what) {}
};

// Decoded, validated args as decode returned them (empty for a plugin without args).
using PluginArgs = std::any;

struct PluginFactory {
  // The extension points the plugin serves (extensionPointsOf<T>()).
  ExtensionPoints points;
  // args: JSON null when the profile has no pluginConfig for the plugin (use defaults).
  std::function<PluginArgs(const nlohmann::json& args, const features::Gates& gates)> decode;
  std::function<std::unique_ptr<Plugin>(const PluginArgs& args, Handle& handle)> create;
};

// A ready-made decode for an args type A with `static A fromJson(const nlohmann::json&)` and
// `void validate() const`, both throwing PluginArgsError.
template <typename A>
[[nodiscard]] A decodeAndValidate(const nlohmann::json& args) {
  A typed = A::fromJson(args);
  typed.validate();
  return typed;
}

// The args type a decode returns: decode is (json) -> A, or (json, const features::Gates&) -> A
// for args that a feature gate allows or forbids.
template <typename Decode>
auto decodedArgs() {
  if constexpr (std::is_invocable_v<Decode&, const nlohmann::json&, const features::Gates&>) {
    return std::type_identity<std::decay_t<
        std::invoke_result_t<Decode&, const nlohmann::json&, const features::Gates&>>>{};
  } else {
    return std::type_identity<std::decay_t<std::invoke_result_t<Decode&, const nlohmann::json&>>>{};
  }
}
template <typename Decode>
using DecodedArgs = typename decltype(decodedArgs<Decode>())::type;

// A factory for plugin class P from `decode` (json -> A, or (json, gates) -> A, throwing
// PluginArgsError) and `create` ((const A&, Handle&) -> std::unique_ptr<P>).
template <typename P, typename Decode, typename Create>
[[nodiscard]] PluginFactory makePluginFactory(Decode decode, Create create) {
  using A = DecodedArgs<Decode>;
  static_assert(std::is_base_of_v<Plugin, P>);
  return PluginFactory{
      extensionPointsOf<P>(),
      [decode = std::move(decode)](const nlohmann::json& args,
                                   const features::Gates& gates) -> PluginArgs {
        if constexpr (std::is_invocable_v<Decode&, const nlohmann::json&, const features::Gates&>) {
          return std::make_shared<const A>(decode(args, gates));
        } else {
          return std::make_shared<const A>(decode(args));
        }
      },
      [create = std::move(create)](const PluginArgs& args,
                                   Handle& handle) -> std::unique_ptr<Plugin> {
        return create(*std::any_cast<const std::shared_ptr<const A>&>(args), handle);
      }};
}

// A factory for plugin class P that takes no args (any args given are ignored, as upstream does
// for plugins without an args type): `create` is (Handle&) -> std::unique_ptr<P>.
template <typename P, typename Create>
[[nodiscard]] PluginFactory makePluginFactory(Create create) {
  static_assert(std::is_base_of_v<Plugin, P>);
  return PluginFactory{extensionPointsOf<P>(),
                       [](const nlohmann::json& /*args*/,
                          const features::Gates& /*gates*/) -> PluginArgs { return {}; },
                       [create = std::move(create)](const PluginArgs& /*args*/, Handle& handle)
                           -> std::unique_ptr<Plugin> { return create(handle); }};
}

// decode, then create: a plugin from its JSON args in one call, for tests and tools that build a
// plugin outside a framework; decoded with the handle's gates. Throws PluginArgsError.
[[nodiscard]] inline std::unique_ptr<Plugin> makePlugin(const PluginFactory& factory,
                                                        const nlohmann::json& args,
                                                        Handle& handle) {
  return factory.create(factory.decode(args, handle.features()), handle);
}

class Registry {
 public:
  // Throws std::invalid_argument on a duplicate name or a factory without decode or create.
  void add(const std::string& name, PluginFactory factory);
  // Shorthand for a plugin without args: add(name, makePluginFactory<P>(create)), with P the
  // class `create` returns (std::unique_ptr<P>).
  template <typename Create>
  requires std::is_invocable_v<Create&, Handle&>
  void add(const std::string& name, Create create) {
    using P = typename std::invoke_result_t<Create&, Handle&>::element_type;
    add(name, makePluginFactory<P>(std::move(create)));
  }
  // Shorthand for a plugin with args: add(name, makePluginFactory<P>(decode, create)).
  template <typename Decode, typename Create>
  void add(const std::string& name, Decode decode, Create create) {
    using A = DecodedArgs<Decode>;
    using P = typename std::invoke_result_t<Create&, const A&, Handle&>::element_type;
    add(name, makePluginFactory<P>(std::move(decode), std::move(create)));
  }
  // Adds every plugin of `other`; throws std::invalid_argument on a duplicate name.
  void merge(const Registry& other);
  // nullptr when unknown.
  [[nodiscard]] const PluginFactory* find(std::string_view name) const;
  [[nodiscard]] std::vector<std::string> names() const;

 private:
  std::map<std::string, PluginFactory, std::less<>> factories_;
};

}  // namespace ksched
