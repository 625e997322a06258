// Effective pod requests, as upstream component-helpers resource.PodRequests computes them.
//
// 1. The container aggregate (AggregateContainerRequests), per resource name:
//
//      aggregate(list) = max( sum(containers) + sum(sidecars),
//                             max over init containers i of init_use(i) )
//
//    where a sidecar is an init container with restartPolicy "Always", init_use of a regular
//    init container is its list plus the sidecars declared before it, and init_use of a sidecar
//    is the sum of the sidecars up to and including it.
//
//    With useStatusResources (in-place resize, KEP 1287) three aggregates are taken, from each
//    container's spec requests, its allocated resources (status allocatedResources, else the
//    spec) and its actual resources (status resources.requests, else allocatedResources, else
//    the spec), and the result is their per-resource max. While the resize is infeasible (the
//    PodResizePending condition with reason Infeasible) the spec is left out: the containers
//    count at what the kubelet allocated or runs (nothing for a container without status). With
//    podLevelStatusResources and both status.allocatedResources and status.resources.requests
//    reported, those pod totals stand for the allocated and actual aggregates.
//
// 2. Pod-level requests (spec.resources.requests, KEP 2837), unless skipPodLevelResources:
//    each supported resource they name (cpu, memory, hugepages-*) replaces the aggregate's
//    amount; other names there are ignored. With useStatusResources and podLevelStatusResources
//    and a pod-level status reported, the amount is max(spec, status.resources.requests,
//    status.allocatedResources), the status totals less spec.overhead (clamped at zero), and
//    without the spec while the resize is infeasible.
//
// 3. spec.overhead is added, unless excludeOverhead.
//
// Quantities the apiserver omits when empty: an empty list here means "not reported".
#pragma once

#include <cstdint>
#include <string_view>

#include <ksched/api/features.h>
#include <ksched/api/pod.h>
#include <ksched/api/resources.h>

namespace ksched::api {

// Upstream scheduler defaults for containers without a cpu/memory request, used for scoring so
// that "best effort" pods still spread (schedutil.DefaultMilliCPURequest/DefaultMemoryRequest).
inline constexpr int64_t kDefaultMilliCPURequest = 100;                // 0.1 core
inline constexpr int64_t kDefaultMemoryRequest = 200LL * 1024 * 1024;  // 200 MiB

// Upstream PodResourcesOptions. The gate-derived fields come from the caller's feature gates,
// so that callers with the same gates agree with each other.
struct PodResourcesOptions {
  explicit PodResourcesOptions(const features::Gates& gates) noexcept
      : skipPodLevelResources(!gates.enabled(features::Feature::kPodLevelResources)),
        useStatusResources(gates.enabled(features::Feature::kInPlacePodVerticalScaling)),
        podLevelStatusResources(
            gates.enabled(features::Feature::kInPlacePodLevelResourcesVerticalScaling)) {}

  // Leave spec.overhead out of the result.
  bool excludeOverhead = false;
  // For each container or init container that has no request for one of these names, use this
  // amount instead (upstream NonMissingContainerRequests). An explicit zero request is kept.
  ResourceList nonMissingContainerRequests;
  // Ignore spec.resources (upstream SkipPodLevelResources). From the gates: PodLevelResources
  // off.
  bool skipPodLevelResources;
  // Count in-place resize status (upstream UseStatusResources). From the gates:
  // InPlacePodVerticalScaling on.
  bool useStatusResources;
  // Read the pod-level status totals too (upstream
  // InPlacePodLevelResourcesVerticalScalingEnabled); only with useStatusResources. From the
  // gates: InPlacePodLevelResourcesVerticalScaling on.
  bool podLevelStatusResources;
};

// cpu, memory and hugepages-<size>: the resources spec.resources may set (upstream
// IsSupportedPodLevelResource).
[[nodiscard]] bool isSupportedPodLevelResource(std::string_view name) noexcept;
// spec.resources.requests names a supported resource (upstream IsPodLevelRequestsSet).
[[nodiscard]] bool isPodLevelRequestsSet(const Pod& pod) noexcept;
// The first PodResizePending condition has reason Infeasible (upstream IsPodResizeInfeasible).
[[nodiscard]] bool isPodResizeInfeasible(const Pod& pod) noexcept;
// The first PodResizePending condition has reason Deferred (upstream IsPodResizeDeferred): the
// kubelet waits for room on the node. No gate is read here; callers check
// InPlacePodVerticalScalingSchedulerPreemption.
[[nodiscard]] bool isPodResizeDeferred(const Pod& pod) noexcept;

// Step 1 alone (upstream AggregateContainerRequests; overhead and pod level left out).
[[nodiscard]] ResourceList aggregateContainerRequests(const Pod& pod,
                                                      const PodResourcesOptions& options);

// The pod's effective requests (see above; upstream PodRequests).
[[nodiscard]] ResourceList effectiveRequests(const Pod& pod, const PodResourcesOptions& options);

// effectiveRequests with cpu 100m and memory 200Mi for containers that lack those requests,
// pod-level requests still replacing the aggregate: the requests the scoring plugins use for
// the pod being scheduled (upstream resourceAllocationScorer.calculatePodResourceRequest).
[[nodiscard]] ResourceList nonZeroRequests(const Pod& pod, const features::Gates& gates);

// effectiveRequests as integers (Resource::fromList).
[[nodiscard]] Resource effectiveRequestsResource(const Pod& pod,
                                                 const PodResourcesOptions& options);

// What a node's aggregates count for one of its pods (upstream PodInfo.calculateResource):
// the effective requests, and the cpu and memory with the 100m / 200Mi defaults for scoring.
// With pod-level requests set, a default is used only for cpu or memory that neither the pod
// level nor any container requests.
struct NodePodRequests {
  Resource requests;
  int64_t nonZeroMilliCPU = 0;
  int64_t nonZeroMemory = 0;
};
[[nodiscard]] NodePodRequests nodePodRequests(const Pod& pod, const features::Gates& gates);

// The requests NodeResourcesFit checks for a pod being scheduled (upstream
// computePodResourceRequest): effectiveRequests from the spec (a pod not on a node has no resize
// status), each amount at least zero, scalar resources of zero left out. The Filter and
// explanations of its rejections both use this.
[[nodiscard]] Resource schedulingRequestsResource(const Pod& pod, const features::Gates& gates);

}  // namespace ksched::api
