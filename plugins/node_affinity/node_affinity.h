// NodeAffinity (PreFilter, Filter, PreScore, Score, NormalizeScore).
//   PreFilter: Skip when the pod has no nodeSelector, no required node affinity and the plugin
//              has no addedAffinity. When every required term names nodes with matchFields
//              metadata.name In [...], narrows the feasible nodes to those names (the
//              intersection within a term, the union over terms); UnschedulableAndUnresolvable
//              when that set is empty.
//   Filter:    the node must match addedAffinity's required terms (if any), the pod's
//              spec.nodeSelector and its required terms (ORed); UnschedulableAndUnresolvable
//              otherwise.
//   Score:     the sum of the weights of the preferred terms (the pod's and addedAffinity's)
//              the node matches, normalized to [0, 100] (highest -> 100).
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <ksched/api/pod.h>
#include <ksched/handle.h>
#include <ksched/helper/field_error.h>
#include <ksched/plugin.h>
#include <ksched/plugin_names.h>
#include <ksched/registry.h>

namespace ksched::plugins {

struct NodeAffinityArgs {
  // Applied to every pod in addition to the pod's own node affinity.
  std::optional<api::NodeAffinity> addedAffinity;

  // Decodes strictly (null: defaults). Throws PluginArgsError on unknown fields, wrong types
  // and unknown operators.
  [[nodiscard]] static NodeAffinityArgs fromJson(const nlohmann::json& j);
  // Upstream ValidateNodeAffinityArgs (the selector requirements of addedAffinity's required
  // and preferred terms, as labels.NewRequirement and the field selector parser check them).
  [[nodiscard]] std::vector<helper::FieldError> validationErrors() const;
  // Throws PluginArgsError with the first validation error.
  void validate() const;
};

class NodeAffinity final : public PreFilterPlugin,
                           public FilterPlugin,
                           public FilterExplainer,
                           public PreScorePlugin,
                           public ScorePlugin,
                           public EnqueueExtensions,
                           public SignPlugin {
 public:
  // Opportunistic batching: its answers on a node depend on the pod and that node only.
  [[nodiscard]] bool signPod(const api::Pod& /*pod*/) const override { return true; }
  static constexpr std::string_view kName = names::kNodeAffinity;
  static constexpr std::string_view kPreFilterStateKey = "PreFilterNodeAffinity";
  static constexpr std::string_view kPreScoreStateKey = "PreScoreNodeAffinity";

  // The pod's nodeSelector or required node affinity does not match.
  static constexpr std::string_view kErrReasonPod =
      "node(s) didn't match Pod's node affinity/selector";
  // addedAffinity's required terms do not match.
  static constexpr std::string_view kErrReasonEnforced =
      "node(s) didn't match scheduler-enforced node affinity";
  // PreFilter: the terms' metadata.name sets leave no node.
  static constexpr std::string_view kErrReasonConflict = "pod affinity terms conflict";

  // `args` must be valid.
  explicit NodeAffinity(const NodeAffinityArgs& args);

  [[nodiscard]] std::string_view name() const override { return kName; }
  Status preFilter(CycleState& state, const api::Pod& pod, const NodeInfoLister& nodes,
                   PreFilterResult& result) override;
  // Thread-safe; does not need the PreFilter data.
  [[nodiscard]] Status filter(const CycleState& state, const api::Pod& pod,
                              const NodeInfo& nodeInfo) const override;
  // Each nodeSelector entry the node does not match, the first failing requirement of each
  // required term (the pod's, then addedAffinity's), with the node's value of that label.
  [[nodiscard]] std::vector<std::string> explainRejection(const CycleState& state,
                                                          const api::Pod& pod,
                                                          const NodeInfo& nodeInfo) const override;
  // Skip when neither the pod nor addedAffinity has preferred terms.
  Status preScore(CycleState& state, const api::Pod& pod,
                  const std::vector<const NodeInfo*>& nodes) override;
  // Thread-safe; does not need the PreScore data.
  [[nodiscard]] Status score(const CycleState& state, const api::Pod& pod, const NodeInfo& nodeInfo,
                             int64_t& score) const override;
  [[nodiscard]] bool hasNormalizeScore() const override { return true; }
  // NormalizeScore is helper::defaultNormalizeScore: it reads the scores alone.
  [[nodiscard]] bool normalizeScoreReadsNames(const CycleState& /*state*/) const override {
    return false;
  }
  [[nodiscard]] Status normalizeScore(const CycleState& state, const api::Pod& pod,
                                      std::vector<NodeScore>& scores) const override;
  // Node added or its labels changed (isSchedulableAfterNodeChange).
  [[nodiscard]] std::vector<ClusterEventWithHint> eventsToRegister() const override;

 private:
  // The Filter would pass `node` (addedAffinity, nodeSelector, required terms).
  [[nodiscard]] bool matches(const api::Pod& pod, const api::Node& node) const;
  // Queueing hint: kQueue if the new node matches and (for an update) the old one did not.
  [[nodiscard]] QueueingHint isSchedulableAfterNodeChange(const api::Pod& pod,
                                                          const EventObject& oldObj,
                                                          const EventObject& newObj) const;

  // Constant after construction.
  const std::optional<api::NodeSelector> addedNodeSelector_;
  const std::vector<api::PreferredSchedulingTerm> addedPrefSchedTerms_;
};

// Decodes and validates NodeAffinityArgs (throws PluginArgsError).
PluginFactory nodeAffinityFactory();

}  // namespace ksched::plugins
