// What the parts of DynamicResources share: the cycle's state (CycleState) and the helpers for
// the claims it writes. The parts: dynamic_resources.cc (construction, arguments, the pod's
// claims, PreEnqueue, events), dynamic_resources_prefilter.cc (PreFilter: the claims, their
// classes, the allocator), dynamic_resources_filter.cc (Filter, PostFilter, Score),
// device_scoring.cc (device scoring's arguments, score and explanation) and
// dynamic_resources_bind.cc (Reserve, Unreserve, PreBind: the writes).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include <ksched/api/decode.h>

#include "plugins/dynamic_resources/dynamic_resources.h"

namespace ksched {
class PreemptionSettling;
}

namespace ksched::plugins {

namespace dra {

// Whether `pod` is among the claim's reservedFor.
inline bool reservedFor(const api::Pod& pod, const api::ResourceClaim& claim) {
  for (const auto& r : claim.status.reservedFor) {
    if (r.uid == pod.metadata.uid) return true;
  }
  return false;
}

// The claim's path for writes, in the API version it was served in.
inline std::string claimPath(const dra::ClaimEntry& e, bool status) {
  std::string apiVersion = e.raw.value("apiVersion", "");
  if (apiVersion.empty()) apiVersion = "resource.k8s.io/v1";
  const auto& m = e.claim->metadata;
  return "/apis/" + apiVersion + "/namespaces/" + m.namespace_ + "/resourceclaims/" + m.name +
         (status ? "/status" : "");
}

inline nlohmann::json reservedForJson(
    const std::vector<api::ResourceClaimConsumerReference>& refs) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : refs) out.push_back(api::toJson(r));
  return out;
}

}  // namespace dra

// What nodes that serve the same extended resources through DRA (those not in their
// allocatable) share: the claim for them and the allocator of the pod's claims plus it.
struct dra::ExtendedVariant {
  std::shared_ptr<const api::ResourceClaim> claim;  // null: no extended resource via DRA
  std::vector<api::ContainerExtendedResourceRequest> mappings;
  std::unique_ptr<dra::Allocator> allocator;  // null: nothing to allocate
};

// What one cycle knows; copies (preemption's) share it, as upstream's stateData.
struct DynamicResources::Cycle final : StateData {
  // KEP 5004: the pod's extended resources that DeviceClasses serve.
  struct Extended {
    std::map<std::string, dra::ClassPtr, std::less<>> classOf;  // resource -> its class
    // A claim an earlier attempt created: no node takes the pod until PostFilter deleted it.
    dra::ClaimEntryPtr stale;
    std::string uid;  // the in-memory claim's, for its allocation in flight
  };
  using Variant = dra::ExtendedVariant;
  struct NodeAllocation {
    std::vector<api::AllocationResult> results;   // the claims to allocate, then the variant's
    std::shared_ptr<Variant> variant;             // null without extended resources
    std::optional<dra::Result::Quality> quality;  // with device scoring
  };
  struct Inner {
    std::vector<dra::ClaimEntryPtr> claims;
    // Claims on the pod's PodGroup (DRAWorkloadResourceClaims), by claim: reserved for the
    // group; `sharesPending`: allocated in flight by an earlier member, whose allocation this
    // pod takes; `holdsPending`: from Reserve on, this pod holds the allocation in flight.
    std::vector<char> forGroup;
    std::vector<char> sharesPending;
    std::vector<char> holdsPending;
    std::shared_ptr<const api::PodGroup> podGroup;
    std::string groupKey;  // "<namespace>/<name>" of podGroup
    std::optional<Extended> extended;
    std::vector<std::optional<api::NodeSelector>> availableOn;  // allocated claims
    // Allocated claims whose binding failed or timed out (binding conditions): why, "" for the
    // others. No node takes such a claim; PostFilter deallocates it.
    std::vector<std::string> givenUp;
    std::vector<size_t> toAllocate;  // indices into claims, in the allocator's order
    std::map<std::string, dra::ClassPtr, std::less<>> classes;
    std::shared_ptr<const std::vector<dra::SlicePtr>> slices;
    std::shared_ptr<const dra::SliceIndex> sliceIndex;  // of slices
    std::shared_ptr<const dra::DeviceSet> inUse;
    std::unique_ptr<dra::Allocator> allocator;
    std::vector<std::optional<api::AllocationResult>> allocation;  // by claim, from Reserve

    std::mutex mu;  // guards what Filter writes
    std::set<size_t> unavailable;
    std::unordered_map<std::string, NodeAllocation> nodeAllocations;
    std::map<std::vector<std::string>, std::shared_ptr<Variant>> variants;  // by DRA resources

    // From Reserve on: the extended resources' claim for the chosen node and its allocation;
    // from PreBind on, the claim as created (Unreserve deletes it).
    std::shared_ptr<Variant> chosen;
    std::optional<api::AllocationResult> extendedAllocation;
    dra::ClaimEntryPtr created;
    // From PreBind on, when some claim's devices have binding conditions: until when the
    // binding waits for them.
    std::chrono::steady_clock::time_point bindingDeadline{};

    // Nothing for the plugin to do: no claims, no extended resources DRA serves.
    [[nodiscard]] bool none() const { return claims.empty() && !extended; }
    // Drops the allocators (and with them the devices-in-use set): filtering is over.
    void releaseAllocators() {
      std::lock_guard lock(mu);
      allocator.reset();
      for (auto& [key, v] : variants) v->allocator.reset();
      variants.clear();
      inUse.reset();
    }
  };
  std::shared_ptr<Inner> in = std::make_shared<Inner>();

  // DRAPreemption: the claims of the pods preemption's dry run removed from this copy (by claim
  // uid), with who of their holders is gone; a claim is released when all are. Copied on write:
  // each copy has its own.
  struct Removed {
    dra::ClaimEntryPtr entry;
    std::set<std::string> pods;  // uids of the removed pods that held it
    bool released = false;
  };
  std::shared_ptr<const std::map<std::string, Removed>> removed;

  [[nodiscard]] std::unique_ptr<StateData> clone() const override {
    return std::make_unique<Cycle>(*this);
  }
};

inline constexpr StateKey<DynamicResources::Cycle> kCycleKey{names::kDynamicResources};

namespace dra {
// The devices of the claims preemption's dry run released (dynamic_resources_preemption.cc).
[[nodiscard]] DeviceSet releasedDevices(
    const std::map<std::string, DynamicResources::Cycle::Removed>& removed);
// Makes `state`'s claim nominations take part in preemption settling: a preemptor waits while a
// claim it released is still allocated; the chosen dry run's released claims become its
// nomination.
void joinPreemptionSettling(PreemptionSettling& settling, std::shared_ptr<DraState> state);
}  // namespace dra

}  // namespace ksched::plugins
