// NodeResourcesFit (PreFilter, Filter, PreScore, Score).
//   PreFilter: the pod's effective requests (api::schedulingRequestsResource: containers +
//              sidecars vs init containers, pod-level requests in their place for cpu, memory
//              and hugepages when set, plus overhead) into CycleState.
//   Filter:    the node must have room for one more pod and for every requested cpu, memory,
//              ephemeral-storage and scalar resource (extended resources in ignoredResources /
//              ignoredResourceGroups are not checked). All shortfalls are reported, in the order
//              pods, cpu, memory, ephemeral-storage, scalars by name. Unschedulable, or
//              UnschedulableAndUnresolvable when some request exceeds the node's whole
//              allocatable (preemption cannot help), as upstream. With DRAExtendedResource, an
//              extended resource a DeviceClass serves is not checked on a node whose
//              allocatable lacks it: DynamicResources allocates it there (KEP 5004).
//   Score:     the configured scoring strategy (see resource_allocation.h).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <ksched/api/resources.h>
#include <ksched/handle.h>
#include <ksched/plugin.h>
#include <ksched/plugin_names.h>
#include <ksched/registry.h>

#include "plugins/node_resources_fit/fit_args.h"
#include "plugins/node_resources_fit/resource_allocation.h"

namespace ksched::plugins {

class NodeResourcesFit final : public PreFilterPlugin,
                               public FilterPlugin,
                               public PreScorePlugin,
                               public ScorePlugin,
                               public EnqueueExtensions,
                               public SignPlugin {
 public:
  // Opportunistic batching: its answers on a node depend on the pod and that node only.
  [[nodiscard]] bool signPod(const api::Pod& /*pod*/) const override { return true; }
  static constexpr std::string_view kName = names::kNodeResourcesFit;
  static constexpr std::string_view kPreFilterStateKey = "PreFilterNodeResourcesFit";
  static constexpr std::string_view kPreScoreStateKey = "PreScoreNodeResourcesFit";

  static constexpr std::string_view kReasonTooManyPods = "Too many pods";
  static constexpr std::string_view kReasonInsufficientCPU = "Insufficient cpu";
  static constexpr std::string_view kReasonInsufficientMemory = "Insufficient memory";
  static constexpr std::string_view kReasonInsufficientEphemeralStorage =
      "Insufficient ephemeral-storage";
  // "Insufficient <resource name>" for scalar resources.
  [[nodiscard]] static std::string insufficientReason(std::string_view resourceName);

  // What does not fit on a node (upstream noderesources.InsufficientResource).
  struct InsufficientResource {
    std::string resourceName;
    std::string reason;
    int64_t requested = 0;
    int64_t used = 0;
    int64_t capacity = 0;
    // The request exceeds the node's allocatable: evicting pods would not help.
    bool unresolvable = false;
  };

  // `args` must be valid (NodeResourcesFitArgs::validate()). `handle` (may be null) gives the
  // queueing hints the cache's current node (Handle::currentNodeInfo); it must outlive the
  // plugin; its feature gates (Handle::features()) are the plugin's, the defaults without one.
  // `draServes` (may be empty): whether a DeviceClass serves this extended resource (KEP 5004).
  explicit NodeResourcesFit(const NodeResourcesFitArgs& args, const Handle* handle = nullptr,
                            std::function<bool(std::string_view)> draServes = {});

  [[nodiscard]] std::string_view name() const override { return kName; }
  // A pod whose resize waits (KEP 5836) is checked for the growth the node has not counted:
  // max(0, request - what the node counts for it) per resource, which in practice asks whether
  // the node is over-allocated with the pod at its new size. The pod count is checked as for
  // any pod (it counts the pod twice, as upstream's); "unresolvable" looks at the full request.
  [[nodiscard]] bool filtersResizeDeferredPods() const noexcept override { return true; }

  Status preFilter(CycleState& state, const api::Pod& pod, const NodeInfoLister& nodes,
                   PreFilterResult& result) override;
  // Reads the PreFilter data (Error when absent). Thread-safe.
  [[nodiscard]] Status filter(const CycleState& state, const api::Pod& pod,
                              const NodeInfo& nodeInfo) const override;
  Status preScore(CycleState& state, const api::Pod& pod,
                  const std::vector<const NodeInfo*>& nodes) override;
  // Uses the PreScore data, or computes the pod's requests when absent. Thread-safe.
  [[nodiscard]] Status score(const CycleState& state, const api::Pod& pod, const NodeInfo& nodeInfo,
                             int64_t& score) const override;
  // Pod deleted or scaled down (isSchedulableAfterPodEvent); node added or its allocatable
  // changed (isSchedulableAfterNodeChange); with DRA-served extended resources, a DeviceClass
  // added or updated (isSchedulableAfterDeviceClassEvent).
  [[nodiscard]] std::vector<ClusterEventWithHint> eventsToRegister() const override;

  // The pod's requests as the Filter checks them (api::schedulingRequestsResource).
  [[nodiscard]] api::Resource computePodResourceRequest(const api::Pod& pod) const;
  // Every resource of `podRequest` the node cannot fit, in upstream's order.
  [[nodiscard]] std::vector<InsufficientResource> fitsRequest(const api::Resource& podRequest,
                                                              const NodeInfo& nodeInfo) const;

 private:
  // Queueing hints. A deleted pod: kQueue if it was on a node. A scaled-down pod: kQueue if it is
  // `pod` itself, or if it is on a node and a resource `pod` requests went down in its requests
  // (its effective requests with resize status, as the cache counts it; pod-level requests
  // always counted, as upstream).
  // Where upstream would queue for a pod that left or shrank on a node, the node as the cache
  // holds it now (the change included) must also fit `pod`: one freed slot does not retry
  // every pending pod. Without a cache (no handle, unknown node), as upstream.
  [[nodiscard]] QueueingHint isSchedulableAfterPodEvent(const api::Pod& pod,
                                                        const EventObject& oldObj,
                                                        const EventObject& newObj) const;
  // kSkip if `pod` would not fit on the new node even empty; else kQueue for an add, and for an
  // update only if the allocatable of a resource `pod` requests (or of pods) went up.
  [[nodiscard]] QueueingHint isSchedulableAfterNodeChange(const api::Pod& pod,
                                                          const EventObject& oldObj,
                                                          const EventObject& newObj) const;
  // kQueue if `pod` fits the cache's current `nodeName` (or there is no cache to ask), after
  // the pods nominated there with its priority or higher (but `goneUid`, a pod just deleted).
  // The node is read once per `trigger` (the event's object) and thread.
  [[nodiscard]] QueueingHint fitsCurrentNode(const api::Pod& pod, const std::string& nodeName,
                                             std::string_view goneUid,
                                             const EventObject& trigger) const;
  // kQueue when the class serves (by its extendedResourceName, or on add by its implicit
  // name) an extended resource `pod` requests, as upstream.
  [[nodiscard]] QueueingHint isSchedulableAfterDeviceClassEvent(const api::Pod& pod,
                                                                const EventObject& oldObj,
                                                                const EventObject& newObj) const;
  [[nodiscard]] bool ignored(const std::string& resourceName) const;
  // The scalar resources of `podRequest` a DeviceClass serves (DRA serves them where the
  // node's allocatable lacks them).
  [[nodiscard]] std::vector<std::string> draServable(const api::Resource& podRequest) const;
  // fitsRequest on a node with this allocatable, requested resources and number of pods;
  // `viaDra` (draServable) are left to DynamicResources where the allocatable lacks them.
  // `counted`: what `used` already counts of this pod (a pod whose resize waits, on its node);
  // only the part of the request above it must fit.
  [[nodiscard]] std::vector<InsufficientResource> fitsAllocatable(
      const api::Resource& podRequest, const api::Resource& alloc, const api::Resource& used,
      int64_t podCount, const std::vector<std::string>& viaDra,
      const api::Resource* counted = nullptr) const;
  // The pod's entry in `nodeInfo` when it is a pod whose resize waits (with the gate) and this
  // is its node: what the node already counts for it; else nullptr.
  [[nodiscard]] const api::Resource* countedForDeferred(const api::Pod& pod,
                                                        const NodeInfo& nodeInfo) const;
  // With InPlacePodVerticalScalingSchedulerPreemption, `pod` is on a node and waits for its
  // resize: hints look at its node only.
  [[nodiscard]] bool resizeDeferred(const api::Pod& pod) const;

  // Constant after construction.
  const Handle* handle_;
  const features::Gates gates_;
  const std::set<std::string, std::less<>> ignoredResources_;
  const std::set<std::string, std::less<>> ignoredResourceGroups_;
  const ResourceAllocationScorer scorer_;
  const std::function<bool(std::string_view)> draServes_;
};

// Decodes and validates NodeResourcesFitArgs (throws PluginArgsError).
PluginFactory nodeResourcesFitFactory();

}  // namespace ksched::plugins
