// NodeResourcesFit scoring (upstream noderesources resource_allocation.go, least_allocated.go,
// most_allocated.go, requested_to_capacity_ratio.go).
//
// For each configured resource r (in args order):
//   requested_r   = the node's requests + the pod's request, where cpu and memory use the
//                   "non-zero" values (100m / 200Mi for containers that request none) on both
//                   sides; other resources use plain requests
//   allocatable_r = the node's allocatable
// A scalar resource the pod does not request, a resource the node does not have, and any
// resource with allocatable 0 are left out (neither score nor weight).
//   LeastAllocated:           sum_r w_r * (alloc_r - req_r) * 100 / alloc_r / sum_r w_r  (0 if req
//   > alloc) MostAllocated:            sum_r w_r * min(req_r, alloc_r) * 100 / alloc_r / sum_r w_r
//   RequestedToCapacityRatio: round(sum_r w_r * f(req_r * 100 / alloc_r) / sum_r w_r) over the
//                             resources whose f(...) > 0, f the broken-linear shape with scores
//                             scaled x10 to [0, 100]; req > alloc counts as 100% utilization.
// All divisions are integer divisions, as upstream.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <ksched/api/pod.h>
#include <ksched/helper/resource_allocation.h>
#include <ksched/node_info.h>
#include <ksched/plugin.h>

#include "plugins/node_resources_fit/fit_args.h"

namespace ksched::plugins {

// The per-resource scores and amounts are the SDK's (<ksched/helper/resource_allocation.h>).
using helper::leastRequestedScore;
using helper::mostRequestedScore;
using helper::mulDiv;
using helper::requestedAndAllocatable;
using helper::requestVector;

// Immutable after construction; thread-safe.
class ResourceAllocationScorer {
 public:
  // `strategy` must be valid (NodeResourcesFitArgs::validate()); `gates` say how the pod's
  // requests count.
  ResourceAllocationScorer(const ScoringStrategy& strategy, const features::Gates& gates);

  // The pod's request for each configured resource, in args order (cpu in millicores).
  [[nodiscard]] std::vector<int64_t> podRequests(const api::Pod& pod) const;
  // The node's score in [0, 100] given podRequests().
  [[nodiscard]] int64_t score(const NodeInfo& nodeInfo,
                              const std::vector<int64_t>& podRequests) const;

  [[nodiscard]] const std::vector<ResourceSpec>& resources() const noexcept { return resources_; }

 private:
  using Scorer = std::function<int64_t(const std::vector<int64_t>& requested,
                                       const std::vector<int64_t>& allocatable)>;

  std::vector<ResourceSpec> resources_;
  Scorer scorer_;
  features::Gates gates_;
};

}  // namespace ksched::plugins
