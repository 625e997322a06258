// NodeResourcesBalancedAllocation (PreScore, Score).
//   PreScore: the pod's requests (plain effective requests, no 100m / 200Mi defaults, as
//             upstream's useRequested) for each configured resource; Skip for a pod that
//             requests none of them (best-effort, upstream #129138).
//   Score:    for each resource with allocatable > 0 (a scalar resource the pod does not
//             request is left out), fraction = (node requested + pod) / allocatable capped at 1;
//             std = |f1 - f2| / 2 for two fractions, the population standard deviation for
//             more, 0 for fewer; score = int64((1 - std) * 100). Weights are not used.
// ksched extension, args `formula: v1.20` (set for v1beta1 and Policy profiles): kube-scheduler
// v1.20's formula instead (resource_allocation_v120.h): PreScore never skips (best-effort pods
// are scored too); Score uses cpu and memory only, whatever `resources` says, with the non-zero
// requests (100m / 200Mi defaults) of the node and the pod: fraction = requested / allocatable
// (1 when allocatable is 0); 0 if either fraction >= 1, else
// int64((1 - |cpuFraction - memoryFraction|) * 100). Attached volumes are not balanced
// (BalanceAttachedNodeVolumes off).
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include <ksched/handle.h>
#include <ksched/helper/field_error.h>
#include <ksched/helper/resource_allocation.h>
#include <ksched/plugin.h>
#include <ksched/plugin_names.h>
#include <ksched/registry.h>

namespace ksched::plugins {

using helper::defaultScoringResources;
using helper::ResourceSpec;

// Values of NodeResourcesBalancedAllocationArgs.formula.
inline constexpr std::string_view kBalancedFormulaCurrent = "";
inline constexpr std::string_view kBalancedFormulaV120 = "v1.20";

struct NodeResourcesBalancedAllocationArgs {
  std::vector<ResourceSpec> resources = defaultScoringResources();
  // kBalancedFormulaCurrent (default) or kBalancedFormulaV120; a ksched extension.
  std::string formula;

  // Decodes strictly (null: defaults), then v1 defaulting: no/empty resources -> cpu and
  // memory; weight 0 or absent -> 1. Throws PluginArgsError on unknown fields and wrong types.
  [[nodiscard]] static NodeResourcesBalancedAllocationArgs fromJson(const nlohmann::json& j);
  // Upstream ValidateNodeResourcesBalancedAllocationArgs: duplicate names, weight != 1; then
  // `formula: Unsupported value: "x": supported values: "", "v1.20"`.
  [[nodiscard]] std::vector<helper::FieldError> validationErrors() const;
  // Throws PluginArgsError with the first validation error.
  void validate() const;
};

// Upstream balancedResourceScorer over (requested, allocatable) pairs; entries with
// allocatable 0 are left out.
[[nodiscard]] int64_t balancedResourceScore(const std::vector<int64_t>& requested,
                                            const std::vector<int64_t>& allocatable);

class NodeResourcesBalancedAllocation final : public PreScorePlugin,
                                              public ScorePlugin,
                                              public SignPlugin {
 public:
  // Opportunistic batching: its answers on a node depend on the pod and that node only.
  [[nodiscard]] bool signPod(const api::Pod& /*pod*/) const override { return true; }
  static constexpr std::string_view kName = names::kNodeResourcesBalancedAllocation;
  // CycleState key of the PreScore data.
  static constexpr std::string_view kPreScoreStateKey = "PreScoreNodeResourcesBalancedAllocation";

  // `args` must be valid; `gates` (the profile's) say how the pod's requests count.
  NodeResourcesBalancedAllocation(const NodeResourcesBalancedAllocationArgs& args,
                                  const features::Gates& gates)
      : resources_(args.resources), v120_(args.formula == kBalancedFormulaV120), gates_(gates) {}

  [[nodiscard]] std::string_view name() const override { return kName; }
  // Skip for best-effort pods (never with formula v1.20).
  Status preScore(CycleState& state, const api::Pod& pod,
                  const std::vector<const NodeInfo*>& nodes) override;
  // Uses the PreScore data, or computes the pod's requests when absent (0 for a best-effort
  // pod). Thread-safe.
  [[nodiscard]] Status score(const CycleState& state, const api::Pod& pod, const NodeInfo& nodeInfo,
                             int64_t& score) const override;

  // The pod's request for each configured resource, in args order (cpu in millicores).
  [[nodiscard]] std::vector<int64_t> podRequests(const api::Pod& pod) const;
  // The node's score given podRequests() (current formula).
  [[nodiscard]] int64_t scoreNode(const NodeInfo& nodeInfo,
                                  const std::vector<int64_t>& podRequests) const;

 private:
  const std::vector<ResourceSpec> resources_;
  const bool v120_;  // formula v1.20
  const features::Gates gates_;
};

// Decodes and validates NodeResourcesBalancedAllocationArgs (throws PluginArgsError).
PluginFactory nodeResourcesBalancedAllocationFactory();

}  // namespace ksched::plugins
