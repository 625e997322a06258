#include "plugins/node_resources_fit/resource_allocation.h"

#include <cmath>

#include <ksched/api/pod_resources.h>
#include <ksched/api/resources.h>
#include <ksched/helper/shape_score.h>

namespace ksched::plugins {
namespace {

constexpr int64_t kMaxUtilization = 100;

int64_t weightedAverage(const std::vector<ResourceSpec>& resources,
                        const std::vector<int64_t>& requested,
                        const std::vector<int64_t>& allocatable,
                        int64_t (*resourceScore)(int64_t, int64_t)) {
  int64_t nodeScore = 0;
  int64_t weightSum = 0;
  for (size_t i = 0; i < requested.size(); ++i) {
    if (allocatable[i] == 0) continue;
    nodeScore += resourceScore(requested[i], allocatable[i]) * resources[i].weight;
    weightSum += resources[i].weight;
  }
  return weightSum == 0 ? 0 : nodeScore / weightSum;
}

}  // namespace

ResourceAllocationScorer::ResourceAllocationScorer(const ScoringStrategy& strategy,
                                                   const features::Gates& gates)
    : resources_(strategy.resources), gates_(gates) {
  if (strategy.type == kMostAllocated) {
    scorer_ = [res = resources_](const std::vector<int64_t>& req,
                                 const std::vector<int64_t>& alloc) {
      return weightedAverage(res, req, alloc, mostRequestedScore);
    };
  } else if (strategy.type == kRequestedToCapacityRatio) {
    std::vector<helper::FunctionShapePoint> shape;
    if (strategy.requestedToCapacityRatio) {
      for (const UtilizationShapePoint& p : strategy.requestedToCapacityRatio->shape) {
        shape.push_back(
            {p.utilization, int64_t{p.score} * (kMaxNodeScore / kMaxCustomPriorityScore)});
      }
    }
    helper::BrokenLinearFunction raw(std::move(shape));
    scorer_ = [res = resources_, raw](const std::vector<int64_t>& req,
                                      const std::vector<int64_t>& alloc) {
      auto resourceScore = [&raw](int64_t requested, int64_t capacity) {
        if (capacity == 0 || requested >= capacity) return raw(kMaxUtilization);
        if (requested <= 0) return raw(0);
        return raw(mulDiv(requested, kMaxUtilization, capacity));
      };
      int64_t nodeScore = 0;
      int64_t weightSum = 0;
      for (size_t i = 0; i < req.size(); ++i) {
        if (alloc[i] == 0) continue;
        const int64_t s = resourceScore(req[i], alloc[i]);
        if (s > 0) {
          nodeScore += s * res[i].weight;
          weightSum += res[i].weight;
        }
      }
      if (weightSum == 0) return int64_t{0};
      return static_cast<int64_t>(
          std::llround(static_cast<double>(nodeScore) / static_cast<double>(weightSum)));
    };
  } else {
    scorer_ = [res = resources_](const std::vector<int64_t>& req,
                                 const std::vector<int64_t>& alloc) {
      return weightedAverage(res, req, alloc, leastRequestedScore);
    };
  }
}

std::vector<int64_t> ResourceAllocationScorer::podRequests(const api::Pod& pod) const {
  return requestVector(api::nonZeroRequests(pod, gates_), resources_);
}

int64_t ResourceAllocationScorer::score(const NodeInfo& nodeInfo,
                                        const std::vector<int64_t>& podRequests) const {
  // Score runs per node on the Filter/Score pool: the lists keep their storage per thread.
  thread_local std::vector<int64_t> req;
  thread_local std::vector<int64_t> cap;
  requestedAndAllocatable(nodeInfo, resources_, podRequests, /*nonZeroCpuMemory=*/true, req, cap);
  return scorer_(req, cap);
}

}  // namespace ksched::plugins
