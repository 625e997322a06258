// The data PodTopologySpread keeps per scheduling cycle (CycleState values) and the compiled
// form of a topology spread constraint. Public so that tests can check what PreFilter,
// AddPod/RemovePod and PreScore computed.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <ksched/api/node.h>
#include <ksched/api/pod.h>
#include <ksched/api/selectors.h>
#include <ksched/cycle_state.h>

#include "plugins/pod_topology_spread/node_info_map.h"

namespace ksched::plugins::spread {

// Transparent hash: maps keyed by std::string accept std::string_view lookups.
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

// topology value -> number of matching pods.
using ValueCounts = std::unordered_map<std::string, int64_t, StringHash, std::equal_to<>>;
using NameSet = std::unordered_set<std::string, StringHash, std::equal_to<>>;

// A constraint of the pod being scheduled with its selector compiled (matchLabelKeys already
// ANDed in) and its policies resolved (upstream topologySpreadConstraint).
struct Constraint {
  int32_t maxSkew = 1;
  std::string topologyKey;
  api::Selector selector;
  int32_t minDomains = 1;         // minDomains unset -> 1
  bool honorNodeAffinity = true;  // nodeAffinityPolicy unset or Honor
  bool honorNodeTaints = false;   // nodeTaintsPolicy Honor
  // How honorNodeTaints matches tolerations: the TaintTolerationComparisonOperators gate.
  bool comparisonOperators = false;

  // Upstream matchNodeInclusionPolicies, with the pod-vs-node checks precomputed by the caller:
  // `affinityMatches` = the pod's nodeSelector and required node affinity match the node,
  // `taintsTolerated` = the pod tolerates the node's NoSchedule/NoExecute taints.
  [[nodiscard]] bool includesNode(bool affinityMatches, bool taintsTolerated) const noexcept {
    return (!honorNodeAffinity || affinityMatches) && (!honorNodeTaints || taintsTolerated);
  }
};

// The two domains with the fewest matching pods for one constraint (upstream criticalPaths).
// paths[0].matchNum is always the minimum; paths[1].matchNum >= paths[0].matchNum but is not
// guaranteed to be the second smallest after AddPod/RemovePod.
class CriticalPaths {
 public:
  struct Path {
    std::string topologyValue;
    int64_t matchNum = std::numeric_limits<int32_t>::max();
  };

  // Records that `value` now has `num` matching pods.
  void update(std::string_view value, int64_t num);
  [[nodiscard]] const Path& operator[](size_t i) const noexcept { return paths_[i]; }

 private:
  std::array<Path, 2> paths_;
};

// Written by PreFilter; AddPod/RemovePod update it; Filter reads it.
struct PreFilterState final : StateData {
  // Shared between clones: they never change after PreFilter.
  std::shared_ptr<const std::vector<Constraint>> constraints;
  // Per constraint: 1 when the incoming pod matches the constraint's selector.
  std::vector<int64_t> selfMatchNum;
  // Per constraint: the counts of every eligible domain, and its two smallest.
  std::vector<ValueCounts> tpValueToMatchNum;
  std::vector<CriticalPaths> criticalPaths;

  // The global minimum of constraint `i`: 0 when it has fewer domains than minDomains.
  [[nodiscard]] int64_t minMatchNum(size_t i) const {
    const auto domains = static_cast<int64_t>(tpValueToMatchNum[i].size());
    if (domains < (*constraints)[i].minDomains) return 0;
    return criticalPaths[i][0].matchNum;
  }
  [[nodiscard]] std::unique_ptr<StateData> clone() const override {
    return std::make_unique<PreFilterState>(*this);
  }
};

// Written by PreScore; Score and NormalizeScore read it.
struct PreScoreState final : StateData {
  std::vector<Constraint> constraints;
  // Feasible nodes without every topology key (when all are required): scored 0.
  NameSet ignoredNodes;
  // Per constraint (empty for the hostname key, counted per node in Score): the matching pods
  // of each domain that holds a feasible node.
  std::vector<ValueCounts> topologyValueToPodCounts;
  // Per constraint: log(number of domains + 2).
  std::vector<double> topologyNormalizingWeight;
  // Score of each feasible node not ignored, when PreScore computed it from its kept counts
  // (empty otherwise: Score computes it), in the order of PreScore's nodes.
  struct Precomputed {
    const NodeInfo* node;
    int64_t score;
  };
  std::vector<Precomputed> precomputed;
  // The precomputed score of `node`, or nullptr. Score is called for the nodes in PreScore's
  // order, so `cursor` (the caller's thread's: the entry after the last one found) is tried
  // first, then the first entry (a new cycle); only then a map from NodeInfo to entry, built at
  // the first such miss (parallel Score: each worker's chunk starts elsewhere). Hashing every
  // node's NodeInfo and building that map in every cycle was about 3 % of the ReplicaSet case.
  [[nodiscard]] const int64_t* precomputedScore(const NodeInfo* node, size_t& cursor) const {
    const size_t c = cursor;
    if (c < precomputed.size() && precomputed[c].node == node) {
      cursor = c + 1;
      return &precomputed[c].score;
    }
    if (!precomputed.empty() && precomputed[0].node == node) {
      cursor = 1;
      return &precomputed[0].score;
    }
    const uint32_t* at = index_.find(precomputed, node);
    if (at == nullptr) return nullptr;
    cursor = *at + 1;
    return &precomputed[*at].score;
  }

  [[nodiscard]] std::unique_ptr<StateData> clone() const override {
    return std::make_unique<PreScoreState>(*this);
  }

 private:
  // NodeInfo -> entry of `precomputed`, built once on first use from any thread; a copy starts
  // without it.
  class LazyIndex {
   public:
    LazyIndex() = default;
    LazyIndex(const LazyIndex& /*other*/) {}
    LazyIndex& operator=(const LazyIndex&) = delete;
    ~LazyIndex() = default;
    [[nodiscard]] const uint32_t* find(const std::vector<Precomputed>& entries,
                                       const NodeInfo* node) const {
      std::call_once(built_, [&] {
        map_.reserve(entries.size());
        for (size_t k = 0; k < entries.size(); ++k) {
          map_.put(entries[k].node, static_cast<uint32_t>(k));
        }
      });
      return map_.find(node);
    }

   private:
    mutable std::once_flag built_;
    mutable NodeInfoMap<uint32_t> map_;
  };
  LazyIndex index_;
};

// Pods on `pods` in namespace `ns`, not being deleted, whose labels match `selector`; 0 when
// the selector selects everything (upstream countPodsMatchSelector).
template <typename PodInfoList>
[[nodiscard]] int64_t countPodsMatchSelector(const PodInfoList& pods, const api::Selector& selector,
                                             std::string_view ns) {
  if (selector.isEverything() || selector.isNothing()) return 0;
  int64_t count = 0;
  for (const auto& pi : pods) {
    const api::Pod& p = *pi->pod;
    if (p.metadata.deletionTimestamp || p.metadata.namespace_ != ns) continue;
    if (selector.matches(p.metadata.labels)) ++count;
  }
  return count;
}

// The node has a label for every constraint's topology key.
[[nodiscard]] inline bool nodeHasAllTopologyKeys(const api::Labels& labels,
                                                 const std::vector<Constraint>& constraints) {
  for (const Constraint& c : constraints) {
    if (!labels.contains(c.topologyKey)) return false;
  }
  return true;
}

}  // namespace ksched::plugins::spread
