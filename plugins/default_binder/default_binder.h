// DefaultBinder (Bind): binds the pod by POSTing a Binding to the pod's binding subresource.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include <ksched/handle.h>
#include <ksched/plugin.h>

namespace ksched::plugins {

class DefaultBinder final : public BindPlugin {
 public:
  static constexpr std::string_view kName = "DefaultBinder";

  // `handle` must outlive the plugin.
  explicit DefaultBinder(Handle& handle) : handle_(handle) {}

  [[nodiscard]] std::string_view name() const override { return kName; }
  // Network I/O on the calling (binder) thread; thread-safe (the client is). An API failure is
  // an Error status with the client's message; no client is "no API client".
  Status bind(CycleState& state, const api::Pod& pod, const std::string& nodeName) override;

  // "/api/v1/namespaces/<ns>/pods/<name>/binding".
  [[nodiscard]] static std::string bindingPath(const api::Pod& pod);
  // The v1 Binding of `pod` (name, namespace, uid) to node `nodeName`.
  [[nodiscard]] static nlohmann::json bindingBody(const api::Pod& pod, const std::string& nodeName);

 private:
  Handle& handle_;
};

// Takes no args (ignored).
std::unique_ptr<Plugin> newDefaultBinder(const nlohmann::json& args, Handle& handle);

}  // namespace ksched::plugins
