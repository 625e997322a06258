#include "plugins/dynamic_resources/dynamic_resources.h"

#include <string>

#include <ksched/api/pod.h>

namespace ksched::plugins {

Status DynamicResources::preEnqueue(const api::Pod& pod) {
  const auto& claims = pod.spec.resourceClaims;
  if (claims.empty()) return {};
  std::string reason(kReasonPrefix);
  for (size_t i = 0; i < claims.size(); ++i) {
    if (i > 0) reason += ", ";
    reason += claims[i].name;
    if (claims[i].resourceClaimName) {
      reason += " (ResourceClaim " + *claims[i].resourceClaimName + ")";
    } else if (claims[i].resourceClaimTemplateName) {
      reason += " (ResourceClaimTemplate " + *claims[i].resourceClaimTemplateName + ")";
    }
  }
  return Status::unresolvable(std::move(reason));
}

PluginFactory dynamicResourcesFactory() {
  return makePluginFactory<DynamicResources>(
      [](Handle&) { return std::make_unique<DynamicResources>(); });
}

}  // namespace ksched::plugins
