#include "plugins/balanced_allocation/balanced_allocation.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>

#include <ksched/api/pod_resources.h>
#include <ksched/api/resources.h>
#include <ksched/helper/args_json.h>
#include <ksched/helper/resource_allocation_v120.h>
#include <ksched/registry.h>

namespace ksched::plugins {
namespace {

using helper::childPath;
using helper::indexPath;

struct PreScoreState final : StateData {
  std::vector<int64_t> podRequests;  // per configured resource

  [[nodiscard]] std::unique_ptr<StateData> clone() const override {
    return std::make_unique<PreScoreState>(*this);
  }
};

constexpr StateKey<PreScoreState> kPreScoreKey{NodeResourcesBalancedAllocation::kPreScoreStateKey};

bool isBestEffort(const std::vector<int64_t>& podRequests) {
  return std::all_of(podRequests.begin(), podRequests.end(), [](int64_t r) { return r == 0; });
}

}  // namespace

NodeResourcesBalancedAllocationArgs NodeResourcesBalancedAllocationArgs::fromJson(
    const nlohmann::json& j) {
  NodeResourcesBalancedAllocationArgs args;
  if (j.is_null()) return args;
  helper::expectObject(j, "", {helper::kApiVersionKey, helper::kKindKey, "resources", "formula"});
  helper::readString(j, "formula", "", args.formula);
  if (const nlohmann::json* resources = helper::member(j, "resources")) {
    if (!resources->is_array()) {
      throw PluginArgsError("resources: expected an array, got " +
                            std::string(resources->type_name()));
    }
    args.resources.clear();
    for (size_t i = 0; i < resources->size(); ++i) {
      const std::string p = indexPath("resources", i);
      helper::expectObject((*resources)[i], p, {"name", "weight"});
      ResourceSpec r;
      r.weight = 0;
      helper::readString((*resources)[i], "name", p, r.name);
      helper::readInt64((*resources)[i], "weight", p, r.weight);
      args.resources.push_back(std::move(r));
    }
  }
  if (args.resources.empty()) args.resources = defaultScoringResources();
  for (ResourceSpec& r : args.resources) {
    if (r.weight == 0) r.weight = 1;
  }
  return args;
}

std::vector<helper::FieldError> NodeResourcesBalancedAllocationArgs::validationErrors() const {
  std::vector<helper::FieldError> errs;
  std::set<std::string, std::less<>> seen;
  for (size_t i = 0; i < resources.size(); ++i) {
    const ResourceSpec& r = resources[i];
    const std::string path = indexPath("resources", i);
    if (!seen.insert(r.name).second) {
      errs.push_back({childPath(path, "name"), "Duplicate value: " + helper::quote(r.name)});
    }
    if (r.weight != 1)
      errs.push_back(helper::invalid(childPath(path, "weight"), r.weight, "must be 1"));
  }
  if (formula != kBalancedFormulaCurrent && formula != kBalancedFormulaV120) {
    errs.push_back(helper::notSupported(
        "formula", formula,
        {std::string(kBalancedFormulaCurrent), std::string(kBalancedFormulaV120)}));
  }
  return errs;
}

void NodeResourcesBalancedAllocationArgs::validate() const {
  helper::throwIfAny(validationErrors());
}

int64_t balancedResourceScore(const std::vector<int64_t>& requested,
                              const std::vector<int64_t>& allocatable) {
  // Two passes over the lists rather than a list of fractions: this runs per node.
  const size_t n = std::min(requested.size(), allocatable.size());
  auto fraction = [&](size_t i) {
    const double f = static_cast<double>(requested[i]) / static_cast<double>(allocatable[i]);
    return f > 1 ? 1.0 : f;
  };
  size_t count = 0;
  double total = 0;
  double first = 0;
  double second = 0;
  for (size_t i = 0; i < n; ++i) {
    if (allocatable[i] == 0) continue;
    const double f = fraction(i);
    total += f;
    if (count == 0) first = f;
    if (count == 1) second = f;
    ++count;
  }
  double stddev = 0;
  if (count == 2) {
    stddev = std::abs((first - second) / 2);
  } else if (count > 2) {
    const double mean = total / static_cast<double>(count);
    double sum = 0;
    for (size_t i = 0; i < n; ++i) {
      if (allocatable[i] == 0) continue;
      const double f = fraction(i);
      sum += (f - mean) * (f - mean);
    }
    stddev = std::sqrt(sum / static_cast<double>(count));
  }
  return static_cast<int64_t>((1 - stddev) * static_cast<double>(kMaxNodeScore));
}

std::vector<int64_t> NodeResourcesBalancedAllocation::podRequests(const api::Pod& pod) const {
  return helper::requestVector(api::effectiveRequests(pod, api::PodResourcesOptions(gates_)),
                               resources_);
}

int64_t NodeResourcesBalancedAllocation::scoreNode(const NodeInfo& nodeInfo,
                                                   const std::vector<int64_t>& podRequests) const {
  // Score runs per node on the Filter/Score pool: the lists keep their storage per thread.
  thread_local std::vector<int64_t> req;
  thread_local std::vector<int64_t> cap;
  helper::requestedAndAllocatable(nodeInfo, resources_, podRequests, /*nonZeroCpuMemory=*/false,
                                  req, cap);
  return balancedResourceScore(req, cap);
}

Status NodeResourcesBalancedAllocation::preScore(CycleState& state, const api::Pod& pod,
                                                 const std::vector<const NodeInfo*>& /*nodes*/) {
  if (v120_) return {};
  auto s = std::make_unique<PreScoreState>();
  s->podRequests = podRequests(pod);
  if (isBestEffort(s->podRequests)) return Status::skip();
  state.write(kPreScoreKey, std::move(s));
  return {};
}

Status NodeResourcesBalancedAllocation::score(const CycleState& state, const api::Pod& pod,
                                              const NodeInfo& nodeInfo, int64_t& score) const {
  if (v120_) {
    score = helper::balancedResourceScoreV120(nodeInfo, pod);
    return {};
  }
  if (const PreScoreState* s = state.read(kPreScoreKey)) {
    score = scoreNode(nodeInfo, s->podRequests);
    return {};
  }
  const std::vector<int64_t> requests = podRequests(pod);
  score = isBestEffort(requests) ? 0 : scoreNode(nodeInfo, requests);
  return {};
}

PluginFactory nodeResourcesBalancedAllocationFactory() {
  return makePluginFactory<NodeResourcesBalancedAllocation>(
      decodeAndValidate<NodeResourcesBalancedAllocationArgs>,
      [](const NodeResourcesBalancedAllocationArgs& typed, Handle& handle) {
        return std::make_unique<NodeResourcesBalancedAllocation>(typed, handle.features());
      });
}

}  // namespace ksched::plugins
