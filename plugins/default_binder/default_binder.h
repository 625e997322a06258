// DefaultBinder (Bind): binds the pod by POSTing a Binding to the pod's binding subresource.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include <ksched/handle.h>
#include <ksched/plugin.h>
#include <ksched/plugin_names.h>
#include <ksched/registry.h>

namespace ksched::plugins {

class DefaultBinder final : public BindPlugin {
 public:
  static constexpr std::string_view kName = names::kDefaultBinder;

  // `handle` must outlive the plugin.
  explicit DefaultBinder(Handle& handle) : handle_(handle) {}

  [[nodiscard]] std::string_view name() const override { return kName; }
  // ClusterApi::bindPod on the calling (binder) thread; thread-safe. An API failure is an Error
  // status with the API's message and its HTTP code (Status::httpCode: 409 bound already, 404
  // gone); no API is "no API client".
  Status bind(CycleState& state, const api::Pod& pod, const std::string& nodeName) override;

 private:
  Handle& handle_;
};

// Takes no args (ignored).
PluginFactory defaultBinderFactory();

}  // namespace ksched::plugins
