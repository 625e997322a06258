// What the resource scoring plugins share (upstream noderesources resource_allocation.go):
// the resources they score with their weights, the per-resource least/most requested scores, and
// each node's requested and allocatable amounts. NodeResourcesFit's scoring strategies,
// NodeResourcesBalancedAllocation and v1.20's NodeResourcesLeastAllocated,
// NodeResourcesMostAllocated and RequestedToCapacityRatio use them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <ksched/api/resources.h>
#include <ksched/node_info.h>

namespace ksched::plugins::helper {

// Shape scores are configured on [0, kMaxCustomPriorityScore] and scaled to [0, 100].
inline constexpr int32_t kMaxCustomPriorityScore = 10;

// A resource a plugin scores, with its weight (args `resources`).
struct ResourceSpec {
  std::string name;
  int64_t weight = 1;

  friend bool operator==(const ResourceSpec&, const ResourceSpec&) = default;
};

// One point of a RequestedToCapacityRatio shape (args `shape`).
struct UtilizationShapePoint {
  int32_t utilization = 0;  // [0, 100]
  int32_t score = 0;        // [0, kMaxCustomPriorityScore]

  friend bool operator==(const UtilizationShapePoint&, const UtilizationShapePoint&) = default;
};

// cpu and memory, weight 1 each.
[[nodiscard]] std::vector<ResourceSpec> defaultScoringResources();

// a * b / c, truncated toward zero, without overflow in a * b (c != 0). The 128-bit division
// is a library call, taken only when a * b overflows 64 bits (memory in bytes times 100 does
// not): Score runs this per node and resource.
[[nodiscard]] int64_t mulDiv(int64_t a, int64_t b, int64_t c);
// (capacity - requested) * 100 / capacity; 0 when capacity is 0 or requested exceeds it.
[[nodiscard]] int64_t leastRequestedScore(int64_t requested, int64_t capacity);
// min(requested, capacity) * 100 / capacity; 0 when capacity is 0.
[[nodiscard]] int64_t mostRequestedScore(int64_t requested, int64_t capacity);

// The amount of each of `resources` in `requests`, in order (cpu in millicores, the rest in
// whole units).
[[nodiscard]] std::vector<int64_t> requestVector(const api::ResourceList& requests,
                                                 const std::vector<ResourceSpec>& resources);

// For each of `resources`: what the node would have requested with the pod (`req`) and its
// allocatable (`cap`); both 0 when the node has none of it or for a scalar resource the pod does
// not request. `nonZeroCpuMemory` takes the node's non-zero requests for cpu and memory, as
// upstream's scorers do unless they use plain requests (BalancedAllocation).
void requestedAndAllocatable(const NodeInfo& nodeInfo, const std::vector<ResourceSpec>& resources,
                             const std::vector<int64_t>& podRequests, bool nonZeroCpuMemory,
                             std::vector<int64_t>& req, std::vector<int64_t>& cap);

}  // namespace ksched::plugins::helper
