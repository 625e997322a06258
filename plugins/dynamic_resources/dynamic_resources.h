// DynamicResources (PreEnqueue, PreFilter, Filter, PostFilter, Score, Reserve/Unreserve,
// PreBind):
// Dynamic Resource Allocation with structured parameters, as upstream's plugin of the same
// name (resource.k8s.io/v1, Kubernetes 1.34+), in the default profile before DefaultPreemption.
//
// - PreEnqueue: every claim of the pod exists (a template's claim is named in
//   status.resourceClaimStatuses and owned by the pod), none is being deleted.
// - PreFilter: the claims; an allocated claim must have room in reservedFor (or hold the pod
//   already); an unallocated one must not be in flight for another pod and its device classes
//   must exist. Builds the allocator over the slices and the devices in use, once per cycle.
// - Filter: allocated claims: the node matches the allocation's node selector; unallocated
//   ones: the allocator finds devices on this node for all of them at once ("cannot allocate
//   all claims"; the details say which claim, request and why, for explain).
// - PostFilter: an allocated claim unavailable everywhere and reserved for nobody else is
//   deallocated, so the next attempt can allocate it anew.
// - Score: a node where a prioritized list (firstAvailable) got an earlier subrequest scores
//   higher: 8 - its index per request, summed, normalized to 0..100 (upstream's). With device
//   scoring (args.deviceScoring, a ksched extension, off by default) the allocator prefers
//   devices of one topology domain and packed partitions, and Score adds the quality of the
//   node's allocation (device_scoring.cc); explain shows why.
// - Extended resources (KEP 5004, extended_resources.h): a container's `example.com/gpu` that a
//   DeviceClass serves is allocated on nodes whose allocatable lacks it, through one claim per
//   pod that PreBind creates.
// - Reserve: the node's allocation is in flight: no other pod gets those devices.
// - PreBind: adds the finalizer, then writes status.allocation and status.reservedFor, with
//   retries on conflicts; the written claim is assumed until the watch shows it. Unreserve
//   undoes the in-flight allocation and removes the pod from reservedFor.
// - Claims on groups (DRAWorkloadResourceClaims with GenericWorkload, group_claims.h): a pod's
//   entry that matches one of its PodGroup's spec.resourceClaims is the group's claim, reserved
//   for the PodGroup. The first member placed allocates it; the members placed after it in the
//   same pod-group cycle (or while it binds) share that allocation in flight and must land
//   where it is reachable; it is taken back with the last of them.
// The state (claims, slices, classes, devices in use, in-flight allocations) is one per
// scheduler, shared by every profile (DraState).
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <ksched/handle.h>
#include <ksched/plugin.h>
#include <ksched/plugin_names.h>
#include <ksched/registry.h>

#include "cel/cel.h"
#include "plugins/dynamic_resources/allocator.h"
#include "plugins/dynamic_resources/dra_state.h"
#include "plugins/dynamic_resources/group_claims.h"

namespace ksched::plugins {

namespace dra {
struct ExtendedVariant;
}  // namespace dra

// DynamicResourcesArgs (kubescheduler.config.k8s.io/v1).
struct DynamicResourcesArgs {
  // How long Filter may search one node for devices (DRASchedulerFilterTimeout); 0: no limit.
  std::chrono::nanoseconds filterTimeout = std::chrono::seconds(10);
  // How long PreBind may wait for binding conditions (DRADeviceBindingConditions and
  // DRAResourceClaimDeviceStatus); at least 1s.
  std::chrono::nanoseconds bindingTimeout = std::chrono::seconds(600);
  // A ksched extension, off by default (upstream takes the first fit): which devices the
  // allocator prefers on a node, and Score ranks nodes by how good their allocation is
  // (device_scoring.cc). `deviceScoring: {topologyAttribute: <domain/name>, packPartitions: bool}`.
  dra::DeviceScoring deviceScoring;

  // Decodes strictly (null: defaults; durations as Go writes them, "10s") and validates as
  // upstream, with its messages: a negative filterTimeout, a bindingTimeout under 1s, or either
  // set while its gates (in `gates`, the profile's) are off; deviceScoring's topologyAttribute
  // must be a fully qualified attribute name, packPartitions needs DRAPartitionableDevices.
  // Throws PluginArgsError.
  [[nodiscard]] static DynamicResourcesArgs fromJson(const nlohmann::json& j,
                                                     const features::Gates& gates);
};

class DynamicResources final : public PreEnqueuePlugin,
                               public PreFilterPlugin,
                               public PreFilterExtensions,
                               public FilterPlugin,
                               public PostFilterPlugin,
                               public PreScorePlugin,
                               public ScorePlugin,
                               public ScoreExplainer,
                               public ReservePlugin,
                               public PreBindPlugin,
                               public EnqueueExtensions,
                               public SignPlugin {
 public:
  // Signs pods without extended resources that a DeviceClass may serve (a claim made per pod)
  // whose claims, if any, all come from templates and are not allocated yet (the pods of one
  // template batch; a PodGroup's members do not).
  [[nodiscard]] bool signPod(const api::Pod& pod) const override;
  static constexpr std::string_view kName = names::kDynamicResources;
  static constexpr std::string_view kCannotAllocate = "cannot allocate all claims";
  static constexpr std::string_view kNotAvailableOnNode = "resourceclaim not available on the node";

  // `podGroups`: the PodGroups to resolve claims on groups with; with the gates on and none
  // given, the plugin keeps its own index (fed through podGroups()).
  DynamicResources(Handle& handle, std::shared_ptr<dra::DraState> state,
                   const DynamicResourcesArgs& args = {},
                   std::shared_ptr<dra::PodGroupIndex> podGroups = nullptr);

  [[nodiscard]] std::string_view name() const override { return kName; }

  Status preEnqueue(const api::Pod& pod) override;
  Status preFilter(CycleState& state, const api::Pod& pod, const NodeInfoLister& nodes,
                   PreFilterResult& result) override;
  // With DRAPreemption: removePod/addPod (dynamic_resources_preemption.cc).
  [[nodiscard]] const PreFilterExtensions* preFilterExtensions() const override {
    return preemption_ ? this : nullptr;
  }
  // Preemption's dry run removes a lower-priority pod: its claims that no remaining pod holds
  // count as deallocated on this copy of the state, and their devices as free. Claims held by
  // a PodGroup are never released, nor anything for a preemptor in a PodGroup (workload-aware
  // preemption, KEP 5690's deferred part).
  Status removePod(CycleState& state, const api::Pod& podToSchedule, const PodInfo& podToRemove,
                   const NodeInfo& nodeInfo) const override;
  // The reverse, for a pod the dry run gives back (reprieves).
  Status addPod(CycleState& state, const api::Pod& podToSchedule, const PodInfo& podToAdd,
                const NodeInfo& nodeInfo) const override;
  [[nodiscard]] Status filter(const CycleState& state, const api::Pod& pod,
                              const NodeInfo& nodeInfo) const override;
  std::pair<PostFilterResult, Status> postFilter(CycleState& state, const api::Pod& pod,
                                                 const NodeToStatus& filteredStatuses) override;
  // Skip (no Score) unless a claim to allocate has a prioritized list (every node would score 0)
  // or device scoring is on and there are devices to allocate.
  Status preScore(CycleState& state, const api::Pod& pod,
                  const std::vector<const NodeInfo*>& nodes) override;
  [[nodiscard]] Status score(const CycleState& state, const api::Pod& pod, const NodeInfo& nodeInfo,
                             int64_t& score) const override;
  [[nodiscard]] bool hasNormalizeScore() const override { return true; }
  [[nodiscard]] Status normalizeScore(const CycleState& state, const api::Pod& pod,
                                      std::vector<NodeScore>& scores) const override;
  // With device scoring on: the quality of the node's allocation and why ("device score 100: 4
  // devices in pcieRoot pci0000:00"); "" otherwise.
  [[nodiscard]] std::string explainScore(const CycleState& state, const api::Pod& pod,
                                         const NodeInfo& nodeInfo) const override;
  Status reserve(CycleState& state, const api::Pod& pod, const std::string& nodeName) override;
  void unreserve(CycleState& state, const api::Pod& pod, const std::string& nodeName) override;
  Status preBindPreFlight(const CycleState& state, const api::Pod& pod,
                          const std::string& nodeName) override;
  // Writes the claims; then, with binding conditions (DRADeviceBindingConditions and
  // DRAResourceClaimDeviceStatus), Wait until the driver reports them (the binding parks).
  Status preBind(CycleState& state, const api::Pod& pod, const std::string& nodeName) override;
  // A change of one of the pod's claims, or the binding timeout.
  [[nodiscard]] Wait preBindWait(const CycleState& state, const api::Pod& pod) const override;
  Status preBindResume(CycleState& state, const api::Pod& pod, const std::string& nodeName,
                       Resume why) override;
  [[nodiscard]] std::vector<ClusterEventWithHint> eventsToRegister() const override;

  // The claims of `pod` in spec order, those a template did not need left out; an error text
  // (upstream's) when one is missing, being deleted or not the pod's (or, for a claim on its
  // PodGroup, not the group's). Thread-safe.
  struct PodClaims {
    std::vector<dra::ClaimEntryPtr> claims;
    // By claim: a claim on the pod's PodGroup (DRAWorkloadResourceClaims), reserved for the
    // group rather than the pod.
    std::vector<char> forGroup;
    std::shared_ptr<const api::PodGroup> podGroup;  // set when some claim is the group's
    std::string error;
  };
  [[nodiscard]] PodClaims podClaims(const api::Pod& pod) const;

  // The PodGroups the plugin resolves claims on groups with; nullptr unless
  // DRAWorkloadResourceClaims and GenericWorkload are on. For unit tests: set() feeds it.
  [[nodiscard]] dra::PodGroupIndex* podGroups() const { return podGroups_.get(); }

  // The cycle's state (CycleState), shared by the copies preemption makes.
  struct Cycle;

 private:
  // Writes the allocation (when there is one) and the pod's reservation into the claim;
  // `claim` becomes the version written. `pendingUid` names its allocation in flight.
  // `consumer`: the reservedFor entry to add (the pod's, or its PodGroup's).
  Status bindClaim(dra::ClaimEntryPtr& claim,
                   const std::optional<api::AllocationResult>& allocation,
                   const std::string& pendingUid,
                   const api::ResourceClaimConsumerReference& consumer);
  // PreBind of a claim on the pod's PodGroup: whichever member binds first writes the
  // allocation and the group's reservation, the others find it written.
  Status bindGroupClaim(const Cycle& cycle, size_t i, const api::Pod& pod);
  Status bindExtendedClaim(const Cycle& cycle, const api::Pod& pod);
  // Removes the delete-protection finalizer, then deletes the claim; the error text or "".
  std::string deleteClaim(const dra::ClaimEntry& e) const;
  // The allocator of the cycle's claims to allocate plus `extendedClaim` (null: none); null
  // when there is nothing to allocate.
  // `inUse`: the devices in use, when not the cycle's (preemption's dry run freed some).
  [[nodiscard]] std::unique_ptr<dra::Allocator> makeAllocator(
      const Cycle& cycle, const api::ResourceClaim* extendedClaim,
      const dra::DeviceSet* inUse = nullptr) const;
  // The claims of a pod already placed (a preemption victim): named ones, those templates made
  // (status.resourceClaimStatuses) and its extended resources' claim; unknown ones left out.
  [[nodiscard]] std::vector<dra::ClaimEntryPtr> claimsHeldBy(const api::Pod& pod) const;
  // The claim and allocator for nodes where DRA serves the extended resources `viaDra`, made
  // once per cycle and set of resources.
  [[nodiscard]] std::shared_ptr<dra::ExtendedVariant> variantFor(
      const Cycle& cycle, const api::Pod& pod, const std::vector<std::string>& viaDra) const;
  // The index of `slices` (DraState::slices(), the same list until a slice changes): built
  // once per list, not per cycle.
  [[nodiscard]] std::shared_ptr<const dra::SliceIndex> sliceIndexFor(
      const std::shared_ptr<const std::vector<dra::SlicePtr>>& slices) const;

  // Binding conditions after the claims are written: Success when every claim is ready, Wait
  // while one is pending, an error when one failed or timed out (`why`: kDeadline ends the
  // wait; kDecide, in a simulated cluster, takes pending conditions as met).
  Status checkBindingConditions(const Cycle& cycle, const api::Pod& pod, std::optional<Resume> why);

  Handle& handle_;
  std::shared_ptr<dra::DraState> state_;
  mutable cel::Cache celCache_;  // with the selector features of the profile's gates
  mutable std::mutex sliceIndexMu_;
  mutable std::shared_ptr<const std::vector<dra::SlicePtr>> indexedSlices_;  // guarded
  mutable std::shared_ptr<const dra::SliceIndex> sliceIndex_;                // guarded
  dra::Features features_;
  bool extendedResources_;                         // DRAExtendedResource
  bool preemption_;                                // DRAPreemption
  std::chrono::nanoseconds filterTimeout_;         // 0: none (or DRASchedulerFilterTimeout off)
  std::chrono::nanoseconds bindingTimeout_;        // DynamicResourcesArgs.bindingTimeout
  dra::DeviceScoring scoring_;                     // off: upstream's first fit, no device score
  std::shared_ptr<dra::PodGroupIndex> podGroups_;  // null: claims on groups off
  std::mutex groupBindMu_;                         // one binder at a time writes a claim on a group
};

namespace dra {
// deviceScoring of DynamicResourcesArgs (device_scoring.cc): decoded strictly, errors under the
// field path "deviceScoring.". Throws PluginArgsError.
[[nodiscard]] DeviceScoring decodeDeviceScoring(const nlohmann::json& j,
                                                const features::Gates& gates);
// The raw score of a node whose allocation is rated `quality` (nullptr: nothing allocated
// there, as good as it gets) when prioritized lists scored it `listScore`: the lists' choice
// first, the devices' quality among equal choices.
[[nodiscard]] int64_t combinedScore(int64_t listScore, const Result::Quality* quality);
}  // namespace dra

// Decodes and validates DynamicResourcesArgs.
PluginFactory dynamicResourcesFactory();

}  // namespace ksched::plugins
