// Claims on groups (DRAWorkloadResourceClaims, KEP-5729): a PodGroup lists spec.resourceClaims,
// and a member pod's spec.resourceClaims entry that matches one of them exactly (the same name,
// the same resourceClaimName or resourceClaimTemplateName) refers to the group's claim instead
// of a claim of its own. A template's claim is the one the PodGroup's
// status.resourceClaimStatuses names (generated once for the group, owned by the PodGroup).
// Such a claim is reserved for the PodGroup (status.reservedFor names it: scheduling.k8s.io
// podgroups), so any number of the group's pods share one allocation, made by the first member
// placed.
//
// PodGroupIndex: the PodGroups as DynamicResources watches them (one per scheduler, shared by
// the profiles). Thread-safe.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include <ksched/api/pod.h>
#include <ksched/api/pod_group.h>
#include <ksched/api/resource.h>
#include <ksched/handle.h>

namespace ksched::plugins::dra {

inline constexpr std::string_view kPodGroupsResource = "podgroups";

class PodGroupIndex {
 public:
  // Starts the PodGroup watch (v1beta1, else v1alpha2; none served: no group is known) and
  // tells the queue about groups whose claims changed.
  explicit PodGroupIndex(Handle& handle);
  // No watch (unit tests): groups come through set() and remove().
  PodGroupIndex() = default;

  [[nodiscard]] std::shared_ptr<const api::PodGroup> get(std::string_view ns,
                                                         std::string_view name) const;
  // The pod's PodGroup (spec.schedulingGroup.podGroupName), or nullptr.
  [[nodiscard]] std::shared_ptr<const api::PodGroup> of(const api::Pod& pod) const;

  void set(std::shared_ptr<const api::PodGroup> pg);
  void remove(std::string_view ns, std::string_view name);

 private:
  void onObject(const UnstructuredPtr& oldObj, const UnstructuredPtr& newObj);

  Handle* handle_ = nullptr;
  std::shared_ptr<const ObjectStore> store_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<const api::PodGroup>> groups_;  // "ns/name"
};

// The PodGroup's entry that the pod's entry refers to (every field equal), or nullptr.
[[nodiscard]] const api::PodGroupResourceClaim* groupEntryFor(const api::PodGroup& pg,
                                                              const api::PodResourceClaim& pc);

// The reservedFor entry of a claim reserved for the group.
[[nodiscard]] api::ResourceClaimConsumerReference groupReference(const api::PodGroup& pg);

// Whether the claim's reservedFor names the pod, or (`acceptGroup`) the PodGroup the pod
// belongs to (upstream's IsReservedForPod).
[[nodiscard]] bool reservedForPodOrGroup(const api::Pod& pod, const api::ResourceClaim& claim,
                                         bool acceptGroup);

// Whether the claim's controller is the PodGroup.
[[nodiscard]] bool ownedByGroup(const api::ResourceClaim& claim, const api::PodGroup& pg);

// Whether what a pod's claims resolve to changed between two versions of a PodGroup (its
// claims, or the names its status gives the generated ones).
[[nodiscard]] bool groupClaimsChanged(const api::PodGroup& before, const api::PodGroup& after);

}  // namespace ksched::plugins::dra
