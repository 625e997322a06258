// SelectorSpread (PreScore, Score, NormalizeScore): spreads the pods of a Service,
// ReplicationController, ReplicaSet or StatefulSet over nodes and zones (v1.20 selectorspread,
// kept for v1beta1 and Policy profiles; current upstream spreads with PodTopologySpread's
// default constraints instead).
//
// Pods with spec.topologySpreadConstraints are left to PodTopologySpread: PreScore returns Skip
// and Score/NormalizeScore leave them at 0.
//
//   PreScore: the selector of the pod's workloads, v1.20's DefaultSelector
//             (helper::legacyDefaultSelector): Services, ReplicationControllers, ReplicaSets and
//             StatefulSets that select the pod by label.
//   Score:    the number of pods on the node in the pod's namespace, not being deleted, that the
//             selector matches (0 when the selector is empty).
//   NormalizeScore: nodeScore = 100 * (maxNodeCount - count) / maxNodeCount (100 when no node
//             has a match). When some node has a zone (legacyZoneKey), a node in a zone gets
//             nodeScore / 3 + 2/3 * 100 * (maxZoneCount - zoneCount) / maxZoneCount, where a
//             zone's count sums its nodes' counts; truncated to an integer as v1.20.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include <ksched/api/node.h>
#include <ksched/handle.h>
#include <ksched/plugin.h>
#include <ksched/plugin_names.h>
#include <ksched/registry.h>

namespace ksched::plugins {

class SelectorSpread final : public PreScorePlugin, public ScorePlugin {
 public:
  static constexpr std::string_view kName = names::kSelectorSpread;
  static constexpr std::string_view kPreScoreStateKey = "PreScoreSelectorSpread";

  // `handle` must outlive the plugin: PreScore reads its listers, NormalizeScore its snapshot.
  explicit SelectorSpread(Handle& handle) : handle_(&handle) {}

  [[nodiscard]] std::string_view name() const override { return kName; }

  Status preScore(CycleState& state, const api::Pod& pod,
                  const std::vector<const NodeInfo*>& nodes) override;
  // Thread-safe. Error when the PreScore state is missing.
  [[nodiscard]] Status score(const CycleState& state, const api::Pod& pod, const NodeInfo& nodeInfo,
                             int64_t& score) const override;
  [[nodiscard]] bool hasNormalizeScore() const override { return true; }
  // Error when a scored node is not in the snapshot.
  [[nodiscard]] Status normalizeScore(const CycleState& state, const api::Pod& pod,
                                      std::vector<NodeScore>& scores) const override;

 private:
  // Constant after construction.
  Handle* const handle_;
};

// v1.20's utilnode.GetZoneKey: "<region>:\x00:<zone>" from the failure-domain.beta labels,
// falling back to topology.kubernetes.io/{region,zone} (the beta labels win when a node has
// both); "" when the node has neither region nor zone.
[[nodiscard]] std::string legacyZoneKey(const api::Node& node);

// Takes no args (ignored).
PluginFactory selectorSpreadFactory();

}  // namespace ksched::plugins
