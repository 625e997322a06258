// NodeResourcesLeastAllocated, NodeResourcesMostAllocated, RequestedToCapacityRatio (Score):
// kube-scheduler v1.20's resource scoring plugins, kept for v1beta1 and Policy profiles (current
// upstream folds them into NodeResourcesFit's scoringStrategy, with other rules). One class,
// parameterized by the formula. No PreScore, no normalization.
//   Score: for each configured resource r (a name given twice counts once, with its last
//          weight), requested_r and allocatable_r as resource_allocation_v120.h (non-zero cpu
//          and memory requests; resources with allocatable 0 are not left out), then
//     NodeResourcesLeastAllocated: sum_r w_r * leastRequested_r / sum_r w_r, leastRequested
//                                  = (alloc - req) * 100 / alloc, 0 if alloc is 0 or req > alloc
//     NodeResourcesMostAllocated:  sum_r w_r * mostRequested_r / sum_r w_r, mostRequested
//                                  = req * 100 / alloc, 0 if alloc is 0 or req > alloc
//     RequestedToCapacityRatio:    round(sum_r w_r * s_r / sum_r w_r) over the r with s_r > 0,
//                                  s_r = f(100 - (alloc - req) * 100 / alloc), f(100) if alloc
//                                  is 0 or req > alloc; f the broken-linear shape with scores
//                                  scaled x10 to [0, 100]; 0 when no s_r > 0.
//          Integer divisions, as v1.20. A NodeInfo without a node is an Error `node not found`.
// Args (v1beta1): NodeResourcesLeastAllocatedArgs / NodeResourcesMostAllocatedArgs
// {resources: [{name, weight}]}, RequestedToCapacityRatioArgs {shape: [{utilization, score}],
// resources}; see legacy_args.h.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string_view>
#include <vector>

#include <ksched/handle.h>
#include <ksched/plugin.h>
#include <ksched/plugin_names.h>
#include <ksched/registry.h>

#include "plugins/legacy_resource_scoring/legacy_args.h"

namespace ksched::plugins {

// v1.20 mostRequestedScore: req * 100 / capacity; 0 when capacity is 0 or req exceeds it.
[[nodiscard]] int64_t mostRequestedScoreV120(int64_t requested, int64_t capacity);

class LegacyResourceScoring final : public ScorePlugin, public SignPlugin {
 public:
  // Opportunistic batching: its answers on a node depend on the pod and that node only.
  [[nodiscard]] bool signPod(const api::Pod& /*pod*/) const override { return true; }
  static constexpr std::string_view kLeastAllocatedName = names::kNodeResourcesLeastAllocated;
  static constexpr std::string_view kMostAllocatedName = names::kNodeResourcesMostAllocated;
  static constexpr std::string_view kRequestedToCapacityRatioName =
      names::kRequestedToCapacityRatio;

  // `args` must be valid.
  [[nodiscard]] static std::unique_ptr<LegacyResourceScoring> leastAllocated(
      const LegacyAllocatedArgs& args);
  [[nodiscard]] static std::unique_ptr<LegacyResourceScoring> mostAllocated(
      const LegacyAllocatedArgs& args);
  [[nodiscard]] static std::unique_ptr<LegacyResourceScoring> requestedToCapacityRatio(
      const RequestedToCapacityRatioArgs& args);

  [[nodiscard]] std::string_view name() const override { return name_; }
  // Thread-safe.
  [[nodiscard]] Status score(const CycleState& state, const api::Pod& pod, const NodeInfo& nodeInfo,
                             int64_t& score) const override;

 private:
  // Per configured resource, in the order of `resources_`.
  using Scorer = std::function<int64_t(const std::vector<int64_t>& requested,
                                       const std::vector<int64_t>& allocatable)>;

  LegacyResourceScoring(std::string_view name, const std::vector<ResourceSpec>& resources,
                        std::function<Scorer(const std::vector<ResourceSpec>&)> makeScorer);

  // Constant after construction.
  const std::string_view name_;
  std::vector<ResourceSpec> resources_;  // unique names
  Scorer scorer_;
};

// Decode and validate the args (throw PluginArgsError).
PluginFactory nodeResourcesLeastAllocatedFactory();
PluginFactory nodeResourcesMostAllocatedFactory();
PluginFactory requestedToCapacityRatioFactory();

}  // namespace ksched::plugins
