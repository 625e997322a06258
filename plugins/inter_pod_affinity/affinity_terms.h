// Pod (anti-)affinity terms as InterPodAffinity evaluates them, and its per-topology counters.
//
// Term semantics (upstream framework.AffinityTerm):
//   - labelSelector: nullopt selects no pod, {} selects every pod;
//   - namespaces + namespaceSelector: both empty/null -> the owner pod's namespace; otherwise a
//     pod qualifies when its namespace is listed or its namespace's labels match the selector
//     ({} matches every namespace);
//   - matchLabelKeys / mismatchLabelKeys: for each key the owner pod carries, `key In (value)`
//     resp. `key NotIn (value)` is ANDed to a non-null labelSelector (what the apiserver merges
//     in at pod creation); keys the owner lacks are ignored.
// The incoming pod's terms are resolved once per cycle (IncomingTerm); an existing pod's terms
// are evaluated in place, without copies, by existingTermMatches().
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <ksched/api/meta.h>
#include <ksched/api/pod.h>
#include <ksched/api/selectors.h>
#include <ksched/handle.h>
#include <ksched/listers.h>

namespace ksched::plugins::interpodaffinity {

// Whether `s` selects `labels`: every matchLabels entry and matchExpressions requirement holds
// (In/NotIn/Exists/DoesNotExist); an empty selector selects everything. Allocation-free.
[[nodiscard]] bool labelSelectorMatches(const api::LabelSelector& s,
                                        const api::Labels& labels) noexcept;

// The pod's terms of one kind; empty when absent.
[[nodiscard]] const std::vector<api::PodAffinityTerm>& requiredAffinityTerms(
    const api::Pod& pod) noexcept;
[[nodiscard]] const std::vector<api::PodAffinityTerm>& requiredAntiAffinityTerms(
    const api::Pod& pod) noexcept;
[[nodiscard]] const std::vector<api::WeightedPodAffinityTerm>& preferredAffinityTerms(
    const api::Pod& pod) noexcept;
[[nodiscard]] const std::vector<api::WeightedPodAffinityTerm>& preferredAntiAffinityTerms(
    const api::Pod& pod) noexcept;

// Whether term `t` of the existing pod `owner` selects `pod`, whose namespace carries
// `podNamespaceLabels`. Thread-safe, allocation-free.
[[nodiscard]] bool existingTermMatches(const api::PodAffinityTerm& t, const api::Pod& owner,
                                       const api::Pod& pod,
                                       const api::Labels& podNamespaceLabels) noexcept;

// A term of the incoming pod with its label keys merged into the selector and its
// namespaceSelector resolved into namespace names (upstream mergeAffinityTermNamespacesIfNotEmpty),
// so that matching needs no namespace lookup.
struct IncomingTerm {
  std::string topologyKey;
  std::optional<api::LabelSelector> selector;  // nullopt selects no pod
  std::vector<std::string> namespaces;         // sorted, unique
  bool allNamespaces = false;                  // namespaceSelector {}
  int32_t weight = 0;                          // preferred terms only

  // Whether this term selects `pod`. Thread-safe.
  [[nodiscard]] bool matches(const api::Pod& pod) const noexcept;
};

// Resolves term `t` of the incoming pod `owner` against the namespaces known to `listers`.
[[nodiscard]] IncomingTerm resolveIncomingTerm(const api::PodAffinityTerm& t, const api::Pod& owner,
                                               const ClusterListers& listers, int32_t weight = 0);
[[nodiscard]] std::vector<IncomingTerm> resolveIncomingTerms(
    const std::vector<api::PodAffinityTerm>& terms, const api::Pod& owner,
    const ClusterListers& listers);
[[nodiscard]] std::vector<IncomingTerm> resolveIncomingTerms(
    const std::vector<api::WeightedPodAffinityTerm>& terms, const api::Pod& owner,
    const ClusterListers& listers);

// True iff `terms` is non-empty and every term selects `pod`.
[[nodiscard]] bool matchesAll(const std::vector<IncomingTerm>& terms, const api::Pod& pod) noexcept;

// The labels of namespace `ns` (empty when the namespace is unknown).
[[nodiscard]] api::Labels namespaceLabels(const ClusterListers& listers, const std::string& ns);

// (topologyKey, topologyValue) -> count. Not thread-safe for writes.
class TopologyCounts {
 public:
  // Adds `delta` at (key, nodeLabels[key]) when the node has that label. With `dropZero`, an
  // entry that reaches 0 is removed (filtering counts); scoring keeps zero sums, as upstream.
  void add(const api::Labels& nodeLabels, const std::string& key, int64_t delta,
           bool dropZero = true);
  void merge(const TopologyCounts& other);
  [[nodiscard]] int64_t get(const std::string& key, const std::string& value) const noexcept;
  // The count at (key, nodeLabels[key]); 0 when the node lacks the label.
  [[nodiscard]] int64_t atNode(const api::Labels& nodeLabels,
                               const std::string& key) const noexcept;
  // Whether any (key, value) pair of the node's labels has a positive count.
  [[nodiscard]] bool anyPositive(const api::Labels& nodeLabels) const noexcept;
  // Sum over the keys of the counts at the node's values (scoring).
  [[nodiscard]] int64_t sumAtNode(const api::Labels& nodeLabels) const noexcept;
  [[nodiscard]] bool empty() const noexcept { return counts_.empty(); }
  // Flattened, for tests: ((key, value), count) in no particular order.
  [[nodiscard]] std::vector<std::pair<std::pair<std::string, std::string>, int64_t>> entries()
      const;

 private:
  std::unordered_map<std::string, std::unordered_map<std::string, int64_t>> counts_;
};

// Runs fn(acc, i) for every i in [0, n) on `par`, the indices split into contiguous chunks that
// each accumulate into their own Acc; returns the accumulators (one per chunk). Few chunks keep
// allocations independent of the node count.
template <typename Acc, typename Fn>
std::vector<Acc> accumulateInChunks(Parallelizer& par, size_t n, const Fn& fn) {
  if (n == 0) return {};
  const size_t chunks = std::min(n, static_cast<size_t>(std::max(1, par.parallelism())) * 4);
  const size_t per = (n + chunks - 1) / chunks;
  std::vector<Acc> accs(chunks);
  par.until(static_cast<int>(chunks), [&](int c) {
    const size_t begin = static_cast<size_t>(c) * per;
    const size_t end = std::min(n, begin + per);
    for (size_t i = begin; i < end; ++i) fn(accs[static_cast<size_t>(c)], i);
  });
  return accs;
}

}  // namespace ksched::plugins::interpodaffinity
