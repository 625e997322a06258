// DynamicResources (PreEnqueue), in the default profile where upstream runs its Dynamic
// Resource Allocation plugin (before DefaultPreemption, behind the DynamicResourceAllocation
// gate, which is locked on).
//
// ksched does not allocate ResourceClaims yet. So that a pod is never bound with its claims
// unallocated, a pod with spec.resourceClaims is kept out of activeQ with
// UnschedulableAndUnresolvable, and a message that says so and names the claims; a pod without
// claims passes. It never becomes schedulable: claims are immutable, and a pod update runs
// PreEnqueue again anyway. Upstream's Filter, Reserve, PreBind and scoring of devices are the
// later work that replaces this.
#pragma once

#include <memory>
#include <string_view>

#include <ksched/handle.h>
#include <ksched/plugin.h>
#include <ksched/plugin_names.h>
#include <ksched/registry.h>

namespace ksched::plugins {

class DynamicResources final : public PreEnqueuePlugin {
 public:
  static constexpr std::string_view kName = names::kDynamicResources;
  // Followed by the claims: "gpu (ResourceClaim gpu-claim), scratch (ResourceClaimTemplate t)".
  static constexpr std::string_view kReasonPrefix =
      "ksched does not support Dynamic Resource Allocation yet, so the pod's resource claims "
      "cannot be allocated: ";

  [[nodiscard]] std::string_view name() const override { return kName; }
  // UnschedulableAndUnresolvable when the pod has resource claims. Thread-safe.
  Status preEnqueue(const api::Pod& pod) override;
};

// Takes no args (ignored).
PluginFactory dynamicResourcesFactory();

}  // namespace ksched::plugins
