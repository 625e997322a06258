#include "plugins/default_binder/default_binder.h"

#include <exception>

#include <ksched/api/pod.h>

#include "client/errors.h"
#include "client/rest_client.h"

namespace ksched::plugins {

std::string DefaultBinder::bindingPath(const api::Pod& pod) {
  return "/api/v1/namespaces/" + pod.metadata.namespace_ + "/pods/" + pod.metadata.name +
         "/binding";
}

nlohmann::json DefaultBinder::bindingBody(const api::Pod& pod, const std::string& nodeName) {
  return {
      {"apiVersion", "v1"},
      {"kind", "Binding"},
      {"metadata",
       {{"name", pod.metadata.name},
        {"namespace", pod.metadata.namespace_},
        {"uid", pod.metadata.uid}}},
      {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", nodeName}}},
  };
}

Status DefaultBinder::bind(CycleState& /*state*/, const api::Pod& pod,
                           const std::string& nodeName) {
  client::RestClient* c = handle_.client();
  if (c == nullptr) return Status::error("no API client");
  try {
    (void)c->post(bindingPath(pod), bindingBody(pod, nodeName));
  } catch (const client::ApiError& e) {
    return Status::error(e.what());
  } catch (const std::exception& e) {
    return Status::error(e.what());
  }
  return {};
}

std::unique_ptr<Plugin> newDefaultBinder(const nlohmann::json& /*args*/, Handle& handle) {
  return std::make_unique<DefaultBinder>(handle);
}

}  // namespace ksched::plugins
