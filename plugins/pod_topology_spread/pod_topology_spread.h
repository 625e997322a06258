// PodTopologySpread (PreFilter + AddPod/RemovePod, Filter, PreScore, Score, NormalizeScore):
// spreads matching pods evenly over topology domains (upstream podtopologyspread).
//
// Constraints come from the pod's spec.topologySpreadConstraints; a pod without any gets the
// default constraints (System: hostname maxSkew 3 and zone maxSkew 5, ScheduleAnyway; or the
// args' List), whose selector is built from the Services, ReplicationController, ReplicaSet or
// StatefulSet that select the pod; when none does, no default constraint applies.
// matchLabelKeys add "key = <the pod's value>" to a constraint's selector. Only pods in the
// incoming pod's namespace and not being deleted are counted. A node counts for a constraint
// when it has every constraint's topology key and passes the constraint's inclusion policies
// (nodeAffinityPolicy Honor: the pod's nodeSelector/required node affinity match the node;
// nodeTaintsPolicy Honor: the pod tolerates its NoSchedule/NoExecute taints).
//
//   PreFilter: Skip when the pod has no DoNotSchedule constraint; otherwise counts matching
//              pods per (constraint, domain) and keeps the two smallest domains per
//              constraint, so that Filter is O(constraints) per node.
//   Filter:    a node without a constraint's topology key is UnschedulableAndUnresolvable
//              (kErrReasonNodeLabelNotMatch); a node where
//              count(domain) + selfMatch - globalMin > maxSkew is Unschedulable
//              (kErrReasonConstraintsNotMatch). globalMin is 0 while the constraint has fewer
//              domains than minDomains.
//   PreScore:  Skip when the pod has no ScheduleAnyway constraint (or the snapshot is empty);
//              counts matching pods per domain that holds a feasible node (hostname: per node
//              in Score). Each node's counts are kept from cycle to cycle (spread::ScoreCounts)
//              and read again only for the nodes the snapshot replaced; the result is that of
//              upstream's walk over every node.
//   Score:     sum over constraints of count * log(domains + 2) + maxSkew - 1, rounded.
//   NormalizeScore: 100 * (max + min - s) / max (fewest pods -> highest); feasible nodes
//              missing a required topology key get 0.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <string_view>
#include <vector>

#include <ksched/api/pod.h>
#include <ksched/handle.h>
#include <ksched/plugin.h>
#include <ksched/plugin_names.h>
#include <ksched/registry.h>

#include "plugins/pod_topology_spread/args.h"
#include "plugins/pod_topology_spread/domains.h"
#include "plugins/pod_topology_spread/score_counts.h"
#include "plugins/pod_topology_spread/state.h"

namespace ksched::plugins {

class PodTopologySpread final : public PreFilterPlugin,
                                public PreFilterExtensions,
                                public FilterPlugin,
                                public FilterExplainer,
                                public PreScorePlugin,
                                public ScorePlugin,
                                public EnqueueExtensions,
                                public SignPlugin {
 public:
  // Signs pods that no spreading constraint applies to: none of their own and none by default
  // (nothing selects them, or the default constraints are an empty list).
  [[nodiscard]] bool signPod(const api::Pod& pod) const override;
  static constexpr std::string_view kName = names::kPodTopologySpread;
  static constexpr std::string_view kPreFilterStateKey = "PreFilterPodTopologySpread";
  static constexpr std::string_view kPreScoreStateKey = "PreScorePodTopologySpread";

  static constexpr std::string_view kErrReasonConstraintsNotMatch =
      "node(s) didn't match pod topology spread constraints";
  static constexpr std::string_view kErrReasonNodeLabelNotMatch =
      "node(s) didn't match pod topology spread constraints (missing required label)";

  // `args` must be valid. `handle` must outlive the plugin: PreScore reads its snapshot, the
  // default constraints its listers, and PreFilter/PreScore use its parallelizer.
  PodTopologySpread(const PodTopologySpreadArgs& args, Handle& handle);

  [[nodiscard]] std::string_view name() const override { return kName; }

  Status preFilter(CycleState& state, const api::Pod& pod, const NodeInfoLister& nodes,
                   PreFilterResult& result) override;
  [[nodiscard]] const PreFilterExtensions* preFilterExtensions() const override { return this; }
  // Thread-safe for distinct CycleStates. Error when PreFilter state is missing.
  Status addPod(CycleState& state, const api::Pod& podToSchedule, const PodInfo& podToAdd,
                const NodeInfo& nodeInfo) const override;
  Status removePod(CycleState& state, const api::Pod& podToSchedule, const PodInfo& podToRemove,
                   const NodeInfo& nodeInfo) const override;
  // Thread-safe. Error when the PreFilter state is missing.
  [[nodiscard]] Status filter(const CycleState& state, const api::Pod& pod,
                              const NodeInfo& nodeInfo) const override;

  // From the PreFilter counts: the constraints whose topology key the node lacks, else those
  // whose skew placing the pod there exceeds maxSkew, with the domain's count and the minimum.
  [[nodiscard]] std::vector<std::string> explainRejection(const CycleState& state,
                                                          const api::Pod& pod,
                                                          const NodeInfo& nodeInfo) const override;
  Status preScore(CycleState& state, const api::Pod& pod,
                  const std::vector<const NodeInfo*>& nodes) override;
  // Thread-safe. Error when the PreScore state is missing.
  [[nodiscard]] Status score(const CycleState& state, const api::Pod& pod, const NodeInfo& nodeInfo,
                             int64_t& score) const override;
  [[nodiscard]] bool hasNormalizeScore() const override { return true; }
  // Only to find the nodes PreScore ignored (they lack a topology key): when none are.
  [[nodiscard]] bool normalizeScoreReadsNames(const CycleState& state) const override;
  [[nodiscard]] Status normalizeScore(const CycleState& state, const api::Pod& pod,
                                      std::vector<NodeScore>& scores) const override;

  // Turns off (for tests: the results must not change) the counts PreScore keeps from cycle
  // to cycle (spread::ScoreCounts), for every instance.
  static void setCountCacheEnabledForTest(bool enabled);

  // Pod add, label and toleration change and delete (podChangeHint); node add, label and taint
  // change and delete (nodeChangeHint).
  [[nodiscard]] std::vector<ClusterEventWithHint> eventsToRegister() const override;

  // QueueingHints (upstream isSchedulableAfterPodChange / isSchedulableAfterNodeChange), for
  // the pod's DoNotSchedule constraints:
  //   pod change: Skip for a pod that is not the pod itself and is unscheduled or in another
  //     namespace. The pod's own toleration change queues when a constraint honors taints. An
  //     added (deleted) pod must match a constraint's selector; an update must change whether
  //     it matches one.
  //   node change: a node "matches" when it has every constraint's topology key. Queue for an
  //     added (deleted) matching node, an update that changes whether the node matches, or
  //     of a matching node that changes a topology value or its taints.
  [[nodiscard]] QueueingHint podChangeHint(const api::Pod& pod, const EventObject& oldObj,
                                           const EventObject& newObj) const;
  [[nodiscard]] QueueingHint nodeChangeHint(const api::Pod& pod, const EventObject& oldObj,
                                            const EventObject& newObj) const;

  // The pod's constraints with whenUnsatisfiable == `action`: its own when it has any, else
  // the default constraints with the selector of the workloads that select it (none when
  // nothing selects it).
  [[nodiscard]] std::vector<spread::Constraint> constraintsFor(const api::Pod& pod,
                                                               std::string_view action) const;

 private:
  // Adds `delta` to the domain of `node` for every constraint `updated` counts for.
  static void updateWithPod(spread::PreFilterState& s, const api::Pod& updated,
                            const api::Pod& preemptor, const NodeInfo& nodeInfo, int64_t delta);

  // PreScore from counts_: false (nothing written) when a feasible node is not in `all`.
  bool preScoreFromCounts(spread::PreScoreState& s, const api::Pod& pod,
                          const std::vector<const NodeInfo*>& nodes,
                          const std::vector<const NodeInfo*>& all, bool requireAllTopologies);

  // PreScore's counts, kept from cycle to cycle for the last kMaxScoreCounts count keys (most
  // recent first; pods of a few workloads interleave in the queue), and its per-cycle buffers.
  // A PreScore that finds them in use (explain beside the scheduling loop) walks every node.
  static constexpr size_t kMaxScoreCounts = 4;
  std::mutex countsMu_;
  std::vector<std::unique_ptr<spread::ScoreCounts>> counts_;  // guarded by countsMu_
  std::vector<std::vector<uint8_t>> seen_;                    // guarded by countsMu_
  std::vector<uint32_t> feasibleSlots_;                       // guarded by countsMu_
  std::vector<uint8_t> hostnameKeys_;                         // guarded by countsMu_

  // PreFilter's domain indexes, one per topology key, kept from cycle to cycle. A PreFilter
  // that finds them in use (explain beside the scheduling loop) makes its own.
  static constexpr size_t kMaxDomainIndexes = 8;
  std::mutex domainsMu_;
  std::vector<std::unique_ptr<spread::DomainIndex>> domains_;  // guarded by domainsMu_

  // Constant after construction.
  Handle* const handle_;
  const std::vector<api::TopologySpreadConstraint> defaultConstraints_;
  // defaultingType System: nodes without a zone label still get hostname spreading.
  const bool systemDefaulted_;
  // The profile's MatchLabelKeysInPodTopologySpread and TaintTolerationComparisonOperators gates.
  const bool matchLabelKeys_;
  const bool comparisonOperators_;
};

// Decodes and validates PodTopologySpreadArgs (throws PluginArgsError).
PluginFactory podTopologySpreadFactory();

}  // namespace ksched::plugins
