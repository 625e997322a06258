// DraState: what the DynamicResources plugins of every profile share (upstream's
// SharedDRAManager): the ResourceClaims, ResourceSlices and DeviceClasses as watched, the
// claims the scheduler has written but the watch has not shown yet (the assume cache), the
// allocations decided in Reserve and not yet written (in flight), and from all of these the
// devices in use.
//
// One per scheduler (Handle::shared), so two profiles never hand out the same device. The
// watches are resource.k8s.io/v1, else v1beta2, else v1beta1, whichever the apiserver serves.
// With DRADeviceTaintRules, DeviceTaintRules (v1, v1beta2 or v1alpha3) are watched too, and the
// slices come with the taints of the rules that select their devices (upstream's
// ListPatchedResourceSlices).
// An object that does not decode is logged and skipped; the rest keeps working.
//
// Thread-safe. Watch handlers run on the watch threads; lookups on the scheduling thread, the
// binder threads (PreBind) and in queueing hints.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <ksched/api/resource.h>
#include <ksched/handle.h>

#include "plugins/dynamic_resources/allocator.h"

namespace ksched::plugins::dra {

using ClaimPtr = std::shared_ptr<const api::ResourceClaim>;
using SlicePtr = std::shared_ptr<const api::ResourceSlice>;
using ClassPtr = std::shared_ptr<const api::DeviceClass>;

inline constexpr std::string_view kFinalizer = "resource.kubernetes.io/delete-protection";
// KEP 5004 (DRAExtendedResource): the claim the scheduler creates for a pod's extended
// resources carries this annotation ("true"); a DeviceClass also serves the extended resource
// kDeviceClassPrefix + its name.
inline constexpr std::string_view kExtendedResourceClaimAnnotation =
    "resource.kubernetes.io/extended-resource-claim";
inline constexpr std::string_view kDeviceClassPrefix = "deviceclass.resource.kubernetes.io/";
// resource.k8s.io/v1 ResourceClaimReservedForMaxSize.
inline constexpr size_t kReservedForMaxSize = 256;

// A claim as the scheduler sees it, with the object it came from (for the finalizers and the
// API version a write must use).
struct ClaimEntry {
  ClaimPtr claim;
  nlohmann::json raw;  // the object as served (metadata.finalizers, apiVersion)
};
using ClaimEntryPtr = std::shared_ptr<const ClaimEntry>;

class DraState {
 public:
  // Starts the watches through `handle` and reports their changes to its queue
  // (Handle::clusterEvent).
  explicit DraState(Handle& handle);
  // No watches (unit tests): objects come through the on* methods.
  DraState() = default;

  // ---- lookups ----
  // The claim (assumed version first); nullptr when unknown.
  [[nodiscard]] ClaimEntryPtr claim(std::string_view ns, std::string_view name) const;
  [[nodiscard]] ClassPtr deviceClass(std::string_view name) const;
  // Every slice, with the DeviceTaintRules' taints on the devices they select; one shared
  // vector until the next change.
  [[nodiscard]] std::shared_ptr<const std::vector<SlicePtr>> slices() const;
  // The DeviceClass that serves the extended resource `resource` (KEP 5004): the class named
  // by "deviceclass.resource.kubernetes.io/<class>", else the one whose
  // spec.extendedResourceName it is (of several, the newest, then the lowest name, as
  // upstream); nullptr for none.
  [[nodiscard]] ClassPtr classForExtendedResource(std::string_view resource) const;
  // The claim the scheduler created for the extended resources of the pod with this uid (the
  // annotation, the pod its controller owner); nullptr when there is none.
  [[nodiscard]] ClaimEntryPtr extendedResourceClaim(std::string_view podUid) const;
  // The resource.k8s.io version the apiserver serves the kinds in ("resource.k8s.io/v1" until
  // an object says otherwise), for objects the scheduler creates.
  [[nodiscard]] std::string apiVersion() const;
  // Devices allocated to claims (assumed and in-flight allocations included), admin access
  // excluded; one shared set until the next change.
  [[nodiscard]] std::shared_ptr<const DeviceSet> devicesInUse() const;

  // ---- devices given up by a claim (binding conditions) ----
  // The devices of `allocation`, whose binding failed or timed out, are not allocated to the
  // claim `claimUid` again until `until`.
  void avoid(const std::string& claimUid, const api::AllocationResult& allocation,
             std::chrono::steady_clock::time_point until);
  // The devices in use plus those the claims `claimUids` avoid, plus (for `pod`, when given)
  // those claim nominations hold against it: devicesInUse() itself when there are none (the
  // usual case).
  [[nodiscard]] std::shared_ptr<const DeviceSet> devicesInUseFor(
      const std::vector<std::string>& claimUids, const api::Pod* pod = nullptr) const;

  // ---- claim nominations (DRAPreemption, KEP 5690) ----
  // What a preemptor is owed: the claims its preemption released (every pod holding them a
  // victim) and their allocations, which no longer exist in the API once the resourceclaim
  // controller deallocated them.
  struct Nomination {
    std::string podUid;
    int32_t priority = 0;
    std::string node;
    struct Claim {
      std::string key;  // "namespace/name"
      std::string uid;
      api::AllocationResult allocation;
    };
    std::vector<Claim> claims;
    std::chrono::steady_clock::time_point expiry;
  };
  // Records (or replaces) the pod's nomination. Until it is dropped or expires, the devices of
  // its claims stay in use for every other pod of the same or lower priority.
  void nominate(Nomination n);
  // The preemptor was placed, deleted or gave the nomination up.
  void dropNomination(const std::string& podUid);
  // While one of the claims of the pod's nomination is still allocated: why the pod must not
  // preempt again; "" otherwise (no nomination, expired, or every claim deallocated or gone).
  [[nodiscard]] std::string settling(const api::Pod& pod) const;
  [[nodiscard]] size_t nominations() const;

  // ---- in-flight allocations (Reserve .. PreBind) ----
  [[nodiscard]] bool hasPendingAllocation(const std::string& uid) const;
  // `group` ("<namespace>/<name>" of a PodGroup, or "" for a pod's own claim): the allocation of
  // a claim on a PodGroup (DRAWorkloadResourceClaims) is made by the group's first member and
  // shared by the others placed after it (sharePendingAllocation).
  void signalPendingAllocation(const std::string& uid, ClaimPtr withAllocation,
                               const std::string& group = {});
  // The claim with its allocation in flight for PodGroup `group`, or nullptr (none, or one of
  // another pod or group).
  [[nodiscard]] ClaimPtr pendingAllocationOf(const std::string& uid,
                                             const std::string& group) const;
  // One more member holds the allocation in flight; false when it is no longer in flight.
  bool sharePendingAllocation(const std::string& uid);
  // One holder fewer; the allocation is gone with the last. True if it went.
  bool removePendingAllocation(const std::string& uid);
  // Gone whoever still holds it (written: the assumed claim has it now).
  void dropPendingAllocation(const std::string& uid);

  // ---- the assume cache ----
  // The claim as the apiserver returned it after our write: it shadows the watched version
  // until the watch shows this version or a newer one.
  void assume(ClaimEntryPtr written);
  // Drops the assumed version of a claim.
  void restore(std::string_view ns, std::string_view name);

  // ---- watch input (also for tests) ----
  void onClaim(const nlohmann::json& obj);
  void onClaimDelete(std::string_view ns, std::string_view name);
  void onSlice(const nlohmann::json& obj);
  void onSliceDelete(std::string_view name);
  void onClass(const nlohmann::json& obj);
  void onClassDelete(std::string_view name);
  void onTaintRule(const nlohmann::json& obj);
  void onTaintRuleDelete(std::string_view name);

  // Decodes a claim as served; throws api::DecodeError.
  [[nodiscard]] static ClaimEntryPtr decodeClaim(const nlohmann::json& obj);

 private:
  struct Claims {
    ClaimEntryPtr watched;
    ClaimEntryPtr assumed;
  };
  [[nodiscard]] static ClaimEntryPtr effective(const Claims& c);
  // Recounts the devices `source` contributes ("c:<namespace>/<name>" for a claim as seen,
  // "f:<uid>" for an allocation in flight), `claim` null for none.
  void recountLocked(const std::string& source, const api::ResourceClaim* claim);
  void countLocked(const DeviceId& id, int delta);
  // Keeps extendedClaims_ up to date for the claim at `key` (`claim` null: gone).
  void indexLocked(const std::string& key, const api::ResourceClaim* claim);
  void rebuildExtendedLocked();
  void noteVersionLocked(const nlohmann::json& obj);
  // Reports a change of the rules as updates of the slices `rule` selects.
  void reportRuleChange(const api::DeviceTaintRule& rule);

  Handle* handle_ = nullptr;
  std::vector<std::shared_ptr<const ObjectStore>> stores_;

  mutable std::mutex mu_;
  std::map<std::string, Claims, std::less<>> claims_;  // "namespace/name"
  std::map<std::string, SlicePtr, std::less<>> slices_;
  std::map<std::string, ClassPtr, std::less<>> classes_;
  std::map<std::string, std::shared_ptr<const api::DeviceTaintRule>, std::less<>> rules_;
  struct InFlight {
    ClaimPtr claim;  // with its allocation
    std::string group;
    int holders = 1;
  };
  std::unordered_map<std::string, InFlight> inFlight_;           // by claim uid
  std::map<std::string, ClassPtr, std::less<>> extended_;        // extended resource -> class
  std::unordered_map<std::string, std::string> extendedClaims_;  // pod uid -> claim key
  std::string apiVersion_ = "resource.k8s.io/v1";
  mutable std::shared_ptr<const std::vector<SlicePtr>> sliceList_;  // null: rebuild
  // The devices in use, kept up to date change by change: copied only when a cycle still holds
  // the set (copy on write), so a cycle costs nothing per device in use.
  std::shared_ptr<DeviceSet> inUse_ = std::make_shared<DeviceSet>();
  struct Avoided {
    std::vector<DeviceId> devices;
    std::chrono::steady_clock::time_point until;
  };
  std::unordered_map<std::string, Avoided> avoided_;         // by claim uid; guarded by mu_
  std::unordered_map<std::string, Nomination> nominations_;  // by pod uid; guarded by mu_
  std::unordered_map<DeviceId, int, DeviceIdHash, DeviceIdEqual> counts_;
  std::unordered_map<std::string, std::vector<DeviceId>> contributions_;  // by source
};

// "namespace/name".
[[nodiscard]] inline std::string claimKey(std::string_view ns, std::string_view name) {
  std::string k(ns);
  k += '/';
  k += name;
  return k;
}

}  // namespace ksched::plugins::dra
