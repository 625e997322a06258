#include "plugins/node_resources_fit/resource_allocation.h"

#include <cmath>

#include <ksched/api/pod_resources.h>
#include <ksched/api/resources.h>

#include "plugins/helper/shape_score.h"

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

int64_t mulDiv(int64_t a, int64_t b, int64_t c) {
  int64_t product = 0;
  if (!__builtin_mul_overflow(a, b, &product)) return product / c;
  __extension__ typedef __int128 Int128;
  return static_cast<int64_t>(static_cast<Int128>(a) * b / c);
}

int64_t leastRequestedScore(int64_t requested, int64_t capacity) {
  if (capacity == 0 || requested > capacity) return 0;
  return mulDiv(capacity - requested, kMaxNodeScore, capacity);
}

int64_t mostRequestedScore(int64_t requested, int64_t capacity) {
  if (capacity == 0) return 0;
  if (requested > capacity) requested = capacity;  // non-zero defaults can exceed capacity
  return mulDiv(requested, kMaxNodeScore, capacity);
}

ResourceAllocationScorer::ResourceAllocationScorer(const ScoringStrategy& strategy)
    : resources_(strategy.resources) {
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

std::vector<int64_t> requestVector(const api::ResourceList& requests,
                                   const std::vector<ResourceSpec>& resources) {
  std::vector<int64_t> out;
  out.reserve(resources.size());
  for (const ResourceSpec& r : resources) {
    const api::Quantity q = api::quantityOf(requests, r.name);
    out.push_back(r.name == api::kResourceCPU ? q.milliValue() : q.value());
  }
  return out;
}

void requestedAndAllocatable(const NodeInfo& nodeInfo, const std::vector<ResourceSpec>& resources,
                             const std::vector<int64_t>& podRequests, bool nonZeroCpuMemory,
                             std::vector<int64_t>& req, std::vector<int64_t>& cap) {
  const api::Resource& alloc = nodeInfo.allocatable();
  const api::Resource& requested = nodeInfo.requested();
  const api::Resource& cpuMem = nonZeroCpuMemory ? nodeInfo.nonZeroRequested() : requested;
  req.assign(resources.size(), 0);
  cap.assign(resources.size(), 0);
  for (size_t i = 0; i < resources.size(); ++i) {
    const std::string& name = resources[i].name;
    const int64_t pod = i < podRequests.size() ? podRequests[i] : 0;
    int64_t a = 0;
    int64_t r = 0;
    if (pod == 0 && api::isScalarResourceName(name)) {
      continue;
    } else if (name == api::kResourceCPU) {
      a = alloc.milliCPU;
      r = cpuMem.milliCPU + pod;
    } else if (name == api::kResourceMemory) {
      a = alloc.memory;
      r = cpuMem.memory + pod;
    } else if (name == api::kResourceEphemeralStorage) {
      a = alloc.ephemeralStorage;
      r = requested.ephemeralStorage + pod;
    } else if (auto it = alloc.scalar.find(name); it != alloc.scalar.end()) {
      a = it->second;
      r = requested.scalarValue(name) + pod;
    }
    if (a == 0) continue;
    cap[i] = a;
    req[i] = r;
  }
}

std::vector<int64_t> ResourceAllocationScorer::podRequests(const api::Pod& pod) const {
  return requestVector(api::nonZeroRequests(pod), resources_);
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
