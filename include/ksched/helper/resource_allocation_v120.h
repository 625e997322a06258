// kube-scheduler v1.20's resourceAllocationScorer inputs (noderesources/resource_allocation.go)
// and its balanced formula, shared by NodeResourcesLeastAllocated, NodeResourcesMostAllocated,
// RequestedToCapacityRatio and NodeResourcesBalancedAllocation's `formula: v1.20`.
//
// For a resource r:
//   requested_r   = node + pod, where cpu and memory take the node's non-zero requests
//                   (NodeInfo::nonZeroRequested) and ephemeral-storage and scalar resources its
//                   plain requests; other names count 0 on both sides
//   allocatable_r = the node's allocatable (0 when the node lacks it)
//   pod_r         = sum over containers of the container's request, max with each init
//                   container's, plus spec.overhead[r] in whole units; a container without a
//                   cpu (memory) request counts 100m (200Mi), an explicit 0 stays 0.
// Unlike current upstream, a resource with allocatable 0 and a scalar resource the pod does not
// request are not left out. As in v1.20, the cpu overhead adds its whole-core value (rounded
// up) to the pod's millicores, and init containers with restartPolicy Always are plain init
// containers.
#pragma once

#include <cstdint>
#include <string_view>

#include <ksched/api/pod.h>
#include <ksched/node_info.h>

namespace ksched::plugins::helper {

struct RequestedAndAllocatable {
  int64_t requested = 0;
  int64_t allocatable = 0;
};

// v1.20 calculatePodResourceRequest (cpu in millicores, the rest in whole units).
[[nodiscard]] int64_t podRequestV120(const api::Pod& pod, std::string_view resource);

// v1.20 calculateResourceAllocatableRequest given podRequestV120(pod, resource).
[[nodiscard]] RequestedAndAllocatable requestedAndAllocatableV120(const NodeInfo& nodeInfo,
                                                                  std::string_view resource,
                                                                  int64_t podRequest);

// v1.20 balancedResourceScorer over cpu and memory (BalanceAttachedNodeVolumes off): with
// fraction = requested / allocatable (1 when allocatable is 0), 0 if either fraction >= 1,
// else int64((1 - |cpuFraction - memoryFraction|) * 100).
[[nodiscard]] int64_t balancedResourceScoreV120(const NodeInfo& nodeInfo, const api::Pod& pod);

}  // namespace ksched::plugins::helper
