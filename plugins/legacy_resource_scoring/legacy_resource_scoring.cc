#include "plugins/legacy_resource_scoring/legacy_resource_scoring.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include <ksched/helper/resource_allocation.h>
#include <ksched/helper/resource_allocation_v120.h>
#include <ksched/helper/shape_score.h>

namespace ksched::plugins {
namespace {

using helper::leastRequestedScore;
using helper::mulDiv;

constexpr int64_t kMaxUtilization = 100;

// v1.20's resourceToWeightMap: one entry per name, the last weight given.
std::vector<ResourceSpec> uniqueResources(const std::vector<ResourceSpec>& resources) {
  std::vector<ResourceSpec> out;
  for (const ResourceSpec& r : resources) {
    auto it = std::find_if(out.begin(), out.end(),
                           [&](const ResourceSpec& o) { return o.name == r.name; });
    if (it == out.end()) {
      out.push_back(r);
    } else {
      it->weight = r.weight;
    }
  }
  return out;
}

template <typename ResourceScore>
auto weightedAverage(const std::vector<ResourceSpec>& resources, ResourceScore resourceScore) {
  return [resources, resourceScore](const std::vector<int64_t>& req,
                                    const std::vector<int64_t>& alloc) {
    int64_t nodeScore = 0;
    int64_t weightSum = 0;
    for (size_t i = 0; i < resources.size(); ++i) {
      nodeScore += resourceScore(req[i], alloc[i]) * resources[i].weight;
      weightSum += resources[i].weight;
    }
    return weightSum == 0 ? 0 : nodeScore / weightSum;
  };
}

}  // namespace

int64_t mostRequestedScoreV120(int64_t requested, int64_t capacity) {
  if (capacity == 0 || requested > capacity) return 0;
  return mulDiv(requested, kMaxNodeScore, capacity);
}

LegacyResourceScoring::LegacyResourceScoring(
    std::string_view name, const std::vector<ResourceSpec>& resources,
    std::function<Scorer(const std::vector<ResourceSpec>&)> makeScorer)
    : name_(name), resources_(uniqueResources(resources)), scorer_(makeScorer(resources_)) {}

std::unique_ptr<LegacyResourceScoring> LegacyResourceScoring::leastAllocated(
    const LegacyAllocatedArgs& args) {
  return std::unique_ptr<LegacyResourceScoring>(new LegacyResourceScoring(
      kLeastAllocatedName, args.resources, [](const std::vector<ResourceSpec>& res) -> Scorer {
        return weightedAverage(res, leastRequestedScore);
      }));
}

std::unique_ptr<LegacyResourceScoring> LegacyResourceScoring::mostAllocated(
    const LegacyAllocatedArgs& args) {
  return std::unique_ptr<LegacyResourceScoring>(new LegacyResourceScoring(
      kMostAllocatedName, args.resources, [](const std::vector<ResourceSpec>& res) -> Scorer {
        return weightedAverage(res, mostRequestedScoreV120);
      }));
}

std::unique_ptr<LegacyResourceScoring> LegacyResourceScoring::requestedToCapacityRatio(
    const RequestedToCapacityRatioArgs& args) {
  std::vector<helper::FunctionShapePoint> shape;
  for (const UtilizationShapePoint& p : args.shape) {
    shape.push_back({p.utilization, int64_t{p.score} * (kMaxNodeScore / kMaxCustomPriorityScore)});
  }
  helper::BrokenLinearFunction raw(std::move(shape));
  return std::unique_ptr<LegacyResourceScoring>(new LegacyResourceScoring(
      kRequestedToCapacityRatioName, args.resources,
      [raw](const std::vector<ResourceSpec>& res) -> Scorer {
        return [res, raw](const std::vector<int64_t>& req, const std::vector<int64_t>& alloc) {
          int64_t nodeScore = 0;
          int64_t weightSum = 0;
          for (size_t i = 0; i < res.size(); ++i) {
            const int64_t s =
                alloc[i] == 0 || req[i] > alloc[i]
                    ? raw(kMaxUtilization)
                    : raw(kMaxUtilization - mulDiv(alloc[i] - req[i], kMaxUtilization, alloc[i]));
            if (s > 0) {
              nodeScore += s * res[i].weight;
              weightSum += res[i].weight;
            }
          }
          if (weightSum == 0) return int64_t{0};
          return static_cast<int64_t>(
              std::llround(static_cast<double>(nodeScore) / static_cast<double>(weightSum)));
        };
      }));
}

Status LegacyResourceScoring::score(const CycleState& /*state*/, const api::Pod& pod,
                                    const NodeInfo& nodeInfo, int64_t& score) const {
  if (nodeInfo.node() == nullptr) return Status::error("node not found");
  std::vector<int64_t> requested(resources_.size());
  std::vector<int64_t> allocatable(resources_.size());
  for (size_t i = 0; i < resources_.size(); ++i) {
    const std::string& r = resources_[i].name;
    const helper::RequestedAndAllocatable v =
        helper::requestedAndAllocatableV120(nodeInfo, r, helper::podRequestV120(pod, r));
    requested[i] = v.requested;
    allocatable[i] = v.allocatable;
  }
  score = scorer_(requested, allocatable);
  return {};
}

PluginFactory nodeResourcesLeastAllocatedFactory() {
  return makePluginFactory<LegacyResourceScoring>(
      decodeAndValidate<LegacyAllocatedArgs>, [](const LegacyAllocatedArgs& typed, Handle&) {
        return LegacyResourceScoring::leastAllocated(typed);
      });
}

PluginFactory nodeResourcesMostAllocatedFactory() {
  return makePluginFactory<LegacyResourceScoring>(
      decodeAndValidate<LegacyAllocatedArgs>, [](const LegacyAllocatedArgs& typed, Handle&) {
        return LegacyResourceScoring::mostAllocated(typed);
      });
}

PluginFactory requestedToCapacityRatioFactory() {
  return makePluginFactory<LegacyResourceScoring>(
      decodeAndValidate<RequestedToCapacityRatioArgs>,
      [](const RequestedToCapacityRatioArgs& typed, Handle&) {
        return LegacyResourceScoring::requestedToCapacityRatio(typed);
      });
}

}  // namespace ksched::plugins
