// InterPodAffinity (PreFilter + AddPod/RemovePod, Filter, PreScore, Score, NormalizeScore).
//   PreFilter: counts, per (topologyKey, value) of node labels, (1) the required anti-affinity
//              terms of existing pods that select the incoming pod, (2) for each required
//              affinity term of the incoming pod, the existing pods that match ALL of its
//              required affinity terms, (3) the existing pods each required anti-affinity term
//              of the incoming pod selects. Skip when (1) is empty and the pod has no required
//              terms. The namespaceSelectors of the incoming pod's terms are resolved here.
//              AddPod/RemovePod update the three counts for one pod.
//   Filter:    O(terms) per node from the counts, in this order:
//              - every required affinity term needs its topology label on the node and a
//                positive count there, unless no existing pod matches the terms anywhere and
//                the pod matches its own terms (the first pod of a group);
//                else UnschedulableAndUnresolvable "node(s) didn't match pod affinity rules";
//              - no required anti-affinity term may have a positive count at the node's value;
//                else Unschedulable "node(s) didn't match pod anti-affinity rules";
//              - no (label, value) of the node may have a positive count in (1); else
//                Unschedulable "node(s) didn't satisfy existing pods anti-affinity rules".
//   Score:     per (topologyKey, value): + weight of the incoming pod's preferred affinity
//              terms and - weight of its preferred anti-affinity terms for each existing pod
//              they select; + hardPodAffinityWeight for each required affinity term of an
//              existing pod selecting the incoming pod; +/- weight of existing pods' preferred
//              (anti-)affinity terms selecting it. A node scores the sum at its label values;
//              NormalizeScore maps [min, max] linearly onto [0, 100].
//              PreScore Skips when ignorePreferredTermsOfExistingPods is set and the pod has
//              no preferred terms, and when no term contributed anything.
// Pods being deleted (deletionTimestamp set) still count, as upstream. Term semantics
// (namespaces, namespaceSelector, matchLabelKeys) are described in affinity_terms.h.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ksched/handle.h>
#include <ksched/helper/field_error.h>
#include <ksched/plugin.h>
#include <ksched/plugin_names.h>
#include <ksched/registry.h>

namespace ksched::plugins {

struct InterPodAffinityArgs {
  static constexpr int32_t kDefaultHardPodAffinityWeight = 1;

  // Score weight of an existing pod's required affinity term that selects the incoming pod.
  int32_t hardPodAffinityWeight = kDefaultHardPodAffinityWeight;
  // Skip scoring when the incoming pod has no preferred (anti-)affinity terms.
  bool ignorePreferredTermsOfExistingPods = false;

  // Decodes strictly (null: defaults). Throws PluginArgsError on unknown fields and wrong types.
  [[nodiscard]] static InterPodAffinityArgs fromJson(const nlohmann::json& j);
  // Upstream ValidateInterPodAffinityArgs: hardPodAffinityWeight in [0, 100].
  [[nodiscard]] std::vector<helper::FieldError> validationErrors() const;
  // Throws PluginArgsError with the first validation error.
  void validate() const;
};

class InterPodAffinity final : public PreFilterPlugin,
                               public PreFilterExtensions,
                               public FilterPlugin,
                               public FilterExplainer,
                               public PreScorePlugin,
                               public ScorePlugin,
                               public EnqueueExtensions,
                               public SignPlugin {
 public:
  // Signs pods without affinity or anti-affinity terms of their own (whose scores depend on
  // the pods of whole topology domains).
  [[nodiscard]] bool signPod(const api::Pod& pod) const override;
  static constexpr std::string_view kName = names::kInterPodAffinity;
  static constexpr std::string_view kPreFilterStateKey = "PreFilterInterPodAffinity";
  static constexpr std::string_view kPreScoreStateKey = "PreScoreInterPodAffinity";

  static constexpr std::string_view kErrReasonExistingAntiAffinityRulesNotMatch =
      "node(s) didn't satisfy existing pods anti-affinity rules";
  static constexpr std::string_view kErrReasonAffinityRulesNotMatch =
      "node(s) didn't match pod affinity rules";
  static constexpr std::string_view kErrReasonAntiAffinityRulesNotMatch =
      "node(s) didn't match pod anti-affinity rules";

  // `args` must be valid; `handle` must outlive the plugin.
  InterPodAffinity(const InterPodAffinityArgs& args, Handle& handle);

  [[nodiscard]] std::string_view name() const override { return kName; }

  Status preFilter(CycleState& state, const api::Pod& pod, const NodeInfoLister& nodes,
                   PreFilterResult& result) override;
  [[nodiscard]] const PreFilterExtensions* preFilterExtensions() const override { return this; }
  // Update the PreFilter counts as if `podToAdd` ran / `podToRemove` stopped on `nodeInfo`.
  Status addPod(CycleState& state, const api::Pod& podToSchedule, const PodInfo& podToAdd,
                const NodeInfo& nodeInfo) const override;
  Status removePod(CycleState& state, const api::Pod& podToSchedule, const PodInfo& podToRemove,
                   const NodeInfo& nodeInfo) const override;
  // Thread-safe; needs the PreFilter state.
  [[nodiscard]] Status filter(const CycleState& state, const api::Pod& pod,
                              const NodeInfo& nodeInfo) const override;

  // With the terms PreFilter resolved, over the handle's snapshot: each required affinity
  // term with no pod matching the terms in the node's domain, the pod each required
  // anti-affinity term finds there, and the existing pods there whose required anti-affinity
  // selects the pod.
  [[nodiscard]] std::vector<std::string> explainRejection(const CycleState& state,
                                                          const api::Pod& pod,
                                                          const NodeInfo& nodeInfo) const override;
  Status preScore(CycleState& state, const api::Pod& pod,
                  const std::vector<const NodeInfo*>& nodes) override;
  // Thread-safe; needs the PreScore state.
  [[nodiscard]] Status score(const CycleState& state, const api::Pod& pod, const NodeInfo& nodeInfo,
                             int64_t& score) const override;
  [[nodiscard]] bool hasNormalizeScore() const override { return true; }
  [[nodiscard]] Status normalizeScore(const CycleState& state, const api::Pod& pod,
                                      std::vector<NodeScore>& scores) const override;

  // Pod add, label update and delete (podChangeHint); node add and label update
  // (nodeChangeHint).
  [[nodiscard]] std::vector<ClusterEventWithHint> eventsToRegister() const override;

  // QueueingHints (upstream isSchedulableAfterPodChange / isSchedulableAfterNodeChange), only
  // for the pod's required terms:
  //   pod change: the pod's own label update queues. Otherwise Skip unless the changed pod is
  //     on a node; an added pod must match all affinity terms; an updated pod must newly
  //     match all affinity terms or stop matching an anti-affinity term that matched it; a
  //     deleted pod must match an anti-affinity term, or one of its own required
  //     anti-affinity terms must select the pod, or it matched all affinity terms of a pod
  //     that matches them itself. Namespace labels come from the listers.
  //   node change: a new node with an affinity topology key, a node that gains one or whose
  //     value changes; for anti-affinity terms any new node, a node that loses a topology key
  //     or whose value changes.
  [[nodiscard]] QueueingHint podChangeHint(const api::Pod& pod, const EventObject& oldObj,
                                           const EventObject& newObj) const;
  [[nodiscard]] static QueueingHint nodeChangeHint(const api::Pod& pod, const EventObject& oldObj,
                                                   const EventObject& newObj);

  // Test hook: the PreFilter counts, each as ((topologyKey, value), count) sorted; nullopt when
  // the state is absent.
  using CountsForTest = std::vector<std::pair<std::pair<std::string, std::string>, int64_t>>;
  struct PreFilterCountsForTest {
    CountsForTest existingAntiAffinity;
    CountsForTest affinity;
    CountsForTest antiAffinity;
  };
  [[nodiscard]] static std::optional<PreFilterCountsForTest> preFilterCountsForTest(
      const CycleState& state);

 private:
  // Counts `pod` (multiplier 1) or uncounts it (-1) on `nodeInfo`.
  Status updateWithPod(CycleState& state, const api::Pod& podToSchedule, const PodInfo& pod,
                       const NodeInfo& nodeInfo, int64_t multiplier) const;

  // Constant after construction.
  const InterPodAffinityArgs args_;
  Handle& handle_;
};

// Decodes and validates InterPodAffinityArgs (throws PluginArgsError).
PluginFactory interPodAffinityFactory();

}  // namespace ksched::plugins
