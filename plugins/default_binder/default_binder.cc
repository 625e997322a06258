#include "plugins/default_binder/default_binder.h"

#include <exception>

#include <ksched/api/pod.h>

namespace ksched::plugins {

Status DefaultBinder::bind(CycleState& /*state*/, const api::Pod& pod,
                           const std::string& nodeName) {
  ClusterApi* api = handle_.api();
  if (api == nullptr) return Status::error("no API client");
  if (ApiResult r = api->bindPod(pod, nodeName)) {
    return Status::error(std::move(r->message)).withHttpCode(r->code);
  }
  return {};
}

PluginFactory defaultBinderFactory() {
  return makePluginFactory<DefaultBinder>(
      [](Handle& handle) { return std::make_unique<DefaultBinder>(handle); });
}

}  // namespace ksched::plugins
