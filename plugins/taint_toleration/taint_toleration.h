// TaintToleration (Filter, PreScore, Score, NormalizeScore).
//   Matching is api::Toleration::toleratesTaint: Equal, Exists, and Gt/Lt while the
//   TaintTolerationComparisonOperators gate is on (the profile's gates, read at construction).
//   Filter: rejects a node with a NoSchedule/NoExecute taint the pod does not tolerate.
//   Score:  the number of PreferNoSchedule taints the pod does not tolerate, normalized in
//           reverse (fewest intolerable taints -> 100).
#pragma once

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include <ksched/api/taints.h>
#include <ksched/handle.h>
#include <ksched/plugin.h>
#include <ksched/plugin_names.h>
#include <ksched/registry.h>

namespace ksched::plugins {

inline constexpr std::string_view kUntoleratedTaintReason = "node(s) had untolerated taint(s)";

class TaintToleration final : public FilterPlugin,
                              public PreScorePlugin,
                              public ScorePlugin,
                              public FilterExplainer,
                              public EnqueueExtensions,
                              public SignPlugin {
 public:
  // `comparisonOperators`: the TaintTolerationComparisonOperators gate.
  explicit TaintToleration(bool comparisonOperators) : comparisonOperators_(comparisonOperators) {}
  // Opportunistic batching: its answers on a node depend on the pod and that node only.
  [[nodiscard]] bool signPod(const api::Pod& /*pod*/) const override { return true; }
  static constexpr std::string_view kName = names::kTaintToleration;
  // CycleState key of the PreScore data.
  static constexpr std::string_view kPreScoreStateKey = "PreScoreTaintToleration";

  [[nodiscard]] std::string_view name() const override { return kName; }
  // Stateless: thread-safe.
  [[nodiscard]] Status filter(const CycleState& state, const api::Pod& pod,
                              const NodeInfo& nodeInfo) const override;
  // Each untolerated NoSchedule/NoExecute taint, and why a Gt/Lt toleration of the pod
  // that names it did not tolerate it ("taint k=v:NoSchedule not tolerated").
  [[nodiscard]] std::vector<std::string> explainRejection(const CycleState& state,
                                                          const api::Pod& pod,
                                                          const NodeInfo& nodeInfo) const override;
  // Stores the pod's tolerations that can tolerate PreferNoSchedule taints.
  Status preScore(CycleState& state, const api::Pod& pod,
                  const std::vector<const NodeInfo*>& nodes) override;
  // Reads the PreScore data (Error when absent).
  [[nodiscard]] Status score(const CycleState& state, const api::Pod& pod, const NodeInfo& nodeInfo,
                             int64_t& score) const override;
  [[nodiscard]] bool hasNormalizeScore() const override { return true; }
  // NormalizeScore is helper::defaultNormalizeScore: it reads the scores alone.
  [[nodiscard]] bool normalizeScoreReadsNames(const CycleState& /*state*/) const override {
    return false;
  }
  [[nodiscard]] Status normalizeScore(const CycleState& state, const api::Pod& pod,
                                      std::vector<NodeScore>& scores) const override;
  // Node added or its taints changed (isSchedulableAfterNodeChange); a pod's tolerations changed
  // (isSchedulableAfterPodTolerationChange).
  [[nodiscard]] std::vector<ClusterEventWithHint> eventsToRegister() const override;

 private:
  // Queueing hints. kQueue if the pod tolerates the new node's NoSchedule/NoExecute taints and
  // (for an update) did not tolerate the old node's.
  [[nodiscard]] static QueueingHint isSchedulableAfterNodeChange(bool comparisonOperators,
                                                                 const api::Pod& pod,
                                                                 const EventObject& oldObj,
                                                                 const EventObject& newObj);
  // kQueue if the changed pod is `pod` itself.
  [[nodiscard]] static QueueingHint isSchedulableAfterPodTolerationChange(
      const api::Pod& pod, const EventObject& oldObj, const EventObject& newObj);

  const bool comparisonOperators_;
};

// Takes no args (ignored).
PluginFactory taintTolerationFactory();

}  // namespace ksched::plugins
