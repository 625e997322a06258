#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include <ksched/api/node.h>

#include "plugins/pod_topology_spread/inclusion.h"
#include "plugins/pod_topology_spread/pod_topology_spread.h"

namespace ksched::plugins {
namespace {

using spread::Constraint;
using spread::PreScoreState;

constexpr StateKey<PreScoreState> kPreScoreKey{PodTopologySpread::kPreScoreStateKey};
constexpr int64_t kInvalidScore = -1;

std::atomic<bool> countCacheEnabled{true};

bool isHostname(const Constraint& c) { return c.topologyKey == api::kLabelHostname; }

// Upstream topologyNormalizingWeight: the weight of a topology with `size` domains.
double topologyNormalizingWeight(size_t size) { return std::log(static_cast<double>(size + 2)); }

// Upstream scoreForCount.
double scoreForCount(int64_t cnt, int32_t maxSkew, double weight) {
  return static_cast<double>(cnt) * weight + static_cast<double>(maxSkew - 1);
}

// std::round (upstream's math.Round) of a score: halves away from zero. For the non-negative
// totals Score computes, without a call into libm (the call was 2.4 % of the 50 000-node run).
int64_t roundScore(double total) {
  if (total < 0 || total >= 0x1p62) return static_cast<int64_t>(std::round(total));
  const auto whole = static_cast<int64_t>(total);  // truncated; the fraction below is exact
  return total - static_cast<double>(whole) >= 0.5 ? whole + 1 : whole;
}

}  // namespace

void PodTopologySpread::setCountCacheEnabledForTest(bool enabled) {
  countCacheEnabled.store(enabled, std::memory_order_relaxed);
}

bool PodTopologySpread::preScoreFromCounts(PreScoreState& s, const api::Pod& pod,
                                           const std::vector<const NodeInfo*>& nodes,
                                           const std::vector<const NodeInfo*>& all,
                                           bool requireAllTopologies) {
  const std::vector<Constraint>& constraints = s.constraints;
  const size_t nc = constraints.size();
  spread::CountKey key = spread::CountKey::of(pod, constraints, requireAllTopologies);
  auto found =
      std::find_if(counts_.begin(), counts_.end(), [&](const auto& c) { return c->isFor(key); });
  if (found == counts_.end()) {
    if (counts_.size() < kMaxScoreCounts) {
      counts_.push_back(std::make_unique<spread::ScoreCounts>());
    }
    found = counts_.end() - 1;  // the least recently used
  }
  std::rotate(counts_.begin(), found, found + 1);
  spread::ScoreCounts& counts = *counts_.front();
  counts.refresh(std::move(key), constraints, pod, handle_->snapshot());

  // Whether each constraint's key is the hostname, compared once rather than per node.
  hostnameKeys_.resize(nc);
  for (size_t i = 0; i < nc; ++i) hostnameKeys_[i] = isHostname(constraints[i]) ? 1 : 0;

  // The domains holding a feasible node, as in the walk below.
  seen_.resize(nc);
  for (size_t i = 0; i < nc; ++i) seen_[i].assign(counts.domainCount(i), 0);
  std::vector<size_t> topoSize(nc, 0);
  feasibleSlots_.clear();
  size_t guess = 0;
  for (const NodeInfo* ni : nodes) {
    const std::optional<uint32_t> slot = counts.slotOf(ni, guess);
    if (!slot) {
      s.ignoredNodes.clear();
      return false;
    }
    guess = *slot + 1;
    if (!counts.hasNode(*slot)) continue;
    if (requireAllTopologies && !counts.qualifies(*slot)) {
      s.ignoredNodes.insert(ni->node()->metadata.name);
      continue;
    }
    feasibleSlots_.push_back(*slot);
    for (size_t i = 0; i < nc; ++i) {
      if (hostnameKeys_[i] != 0) continue;
      uint8_t& seen = seen_[i][static_cast<size_t>(counts.domain(*slot, i))];
      if (seen == 0) ++topoSize[i];
      seen = 1;
    }
  }
  s.topologyNormalizingWeight.resize(nc);
  for (size_t i = 0; i < nc; ++i) {
    const size_t size =
        isHostname(constraints[i]) ? nodes.size() - s.ignoredNodes.size() : topoSize[i];
    s.topologyNormalizingWeight[i] = topologyNormalizingWeight(size);
  }
  for (size_t i = 0; i < nc; ++i) {
    for (size_t d = 0; d < seen_[i].size(); ++d) {
      if (seen_[i][d] == 0) continue;
      const auto domain = static_cast<int32_t>(d);
      s.topologyValueToPodCounts[i].emplace(counts.domainName(i, domain),
                                            counts.domainSum(i, domain));
    }
  }

  // Score's sums for the feasible nodes, in Score's order of operations.
  s.precomputed.reserve(feasibleSlots_.size());
  for (size_t k = 0; k < feasibleSlots_.size(); ++k) {
    const size_t slot = feasibleSlots_[k];
    double total = 0;
    for (size_t i = 0; i < nc; ++i) {
      if (!counts.hasLabel(slot, i)) continue;
      const int64_t cnt = hostnameKeys_[i] != 0 ? counts.count(slot, i)
                                                : counts.domainSum(i, counts.domain(slot, i));
      total += scoreForCount(cnt, constraints[i].maxSkew, s.topologyNormalizingWeight[i]);
    }
    s.precomputed.push_back({all[slot], roundScore(total)});
  }
  return true;
}

Status PodTopologySpread::preScore(CycleState& state, const api::Pod& pod,
                                   const std::vector<const NodeInfo*>& nodes) {
  const std::vector<const NodeInfo*>& all = handle_->snapshot().list();
  if (all.empty()) return Status::skip();

  auto s = std::make_unique<PreScoreState>();
  s->constraints = constraintsFor(pod, api::kScheduleAnyway);
  if (s->constraints.empty()) return Status::skip();
  const std::vector<Constraint>& constraints = s->constraints;
  const size_t nc = constraints.size();
  // Only the pod's own constraints (or List defaults) need every topology key on a node:
  // with the system defaults, nodes without a zone still get hostname spreading.
  const bool requireAllTopologies =
      !pod.spec.topologySpreadConstraints.empty() || !systemDefaulted_;

  s->topologyValueToPodCounts.resize(nc);
  if (countCacheEnabled.load(std::memory_order_relaxed)) {
    std::unique_lock lock(countsMu_, std::try_to_lock);
    if (lock.owns_lock() && preScoreFromCounts(*s, pod, nodes, all, requireAllTopologies)) {
      state.write(kPreScoreKey, std::move(s));
      return {};
    }
  }
  std::vector<size_t> topoSize(nc, 0);
  for (const NodeInfo* ni : nodes) {
    const api::Node* node = ni->node();
    if (node == nullptr) continue;
    if (requireAllTopologies &&
        !spread::nodeHasAllTopologyKeys(node->metadata.labels, constraints)) {
      s->ignoredNodes.insert(node->metadata.name);
      continue;
    }
    for (size_t i = 0; i < nc; ++i) {
      if (isHostname(constraints[i])) continue;
      auto label = node->metadata.labels.find(constraints[i].topologyKey);
      const std::string value = label == node->metadata.labels.end() ? "" : label->second;
      if (s->topologyValueToPodCounts[i].try_emplace(value, 0).second) ++topoSize[i];
    }
  }
  s->topologyNormalizingWeight.resize(nc);
  for (size_t i = 0; i < nc; ++i) {
    const size_t size =
        isHostname(constraints[i]) ? nodes.size() - s->ignoredNodes.size() : topoSize[i];
    s->topologyNormalizingWeight[i] = topologyNormalizingWeight(size);
  }

  // Per node and constraint: the matching pods, or -1 when the node does not count.
  std::vector<int64_t> counts(all.size() * nc, -1);
  handle_->parallelizer().until(static_cast<int>(all.size()), [&](int n) {
    const NodeInfo& ni = *all[static_cast<size_t>(n)];
    const api::Node* node = ni.node();
    if (node == nullptr) return;
    const api::Labels& labels = node->metadata.labels;
    if (requireAllTopologies && !spread::nodeHasAllTopologyKeys(labels, constraints)) return;
    spread::forEachAdmitting(constraints, pod, *node, [&](size_t i) {
      const Constraint& c = constraints[i];
      // Only domains holding a feasible node are counted; hostname is counted in Score.
      auto label = labels.find(c.topologyKey);
      const std::string_view value =
          label == labels.end() ? std::string_view() : std::string_view(label->second);
      if (!s->topologyValueToPodCounts[i].contains(value)) return;
      counts[static_cast<size_t>(n) * nc + i] =
          spread::countPodsMatchSelector(ni.pods(), c.selector, pod.metadata.namespace_);
    });
  });
  for (size_t n = 0; n < all.size(); ++n) {
    for (size_t i = 0; i < nc; ++i) {
      const int64_t count = counts[n * nc + i];
      if (count <= 0) continue;
      const api::Labels& labels = all[n]->node()->metadata.labels;
      auto label = labels.find(constraints[i].topologyKey);
      const std::string_view value =
          label == labels.end() ? std::string_view() : std::string_view(label->second);
      s->topologyValueToPodCounts[i].find(value)->second += count;
    }
  }
  state.write(kPreScoreKey, std::move(s));
  return {};
}

Status PodTopologySpread::score(const CycleState& state, const api::Pod& pod,
                                const NodeInfo& nodeInfo, int64_t& score) const {
  const PreScoreState* s = state.read(kPreScoreKey);
  if (s == nullptr) {
    return Status::error("error reading \"" + std::string(kPreScoreStateKey) +
                         "\" from cycleState: not found");
  }
  // A precomputed node has its Node and is not ignored: found by address, its NodeInfo is not
  // read at all (at 50 000 nodes, that read missed the cache for most nodes).
  if (!s->precomputed.empty()) {
    thread_local size_t cursor = 0;
    if (const int64_t* precomputed = s->precomputedScore(&nodeInfo, cursor)) {
      score = *precomputed;
      return {};
    }
  }
  const api::Node* node = nodeInfo.node();
  if (node == nullptr) return Status::error("node not found");
  score = 0;
  if (!s->ignoredNodes.empty() && s->ignoredNodes.contains(std::string_view(node->metadata.name))) {
    return {};
  }
  double total = 0;
  for (size_t i = 0; i < s->constraints.size(); ++i) {
    const Constraint& c = s->constraints[i];
    auto label = node->metadata.labels.find(c.topologyKey);
    if (label == node->metadata.labels.end()) continue;
    int64_t cnt = 0;
    if (isHostname(c)) {
      cnt = spread::countPodsMatchSelector(nodeInfo.pods(), c.selector, pod.metadata.namespace_);
    } else {
      const spread::ValueCounts& counts = s->topologyValueToPodCounts[i];
      auto it = counts.find(std::string_view(label->second));
      if (it != counts.end()) cnt = it->second;
    }
    total += scoreForCount(cnt, c.maxSkew, s->topologyNormalizingWeight[i]);
  }
  score = roundScore(total);
  return {};
}

bool PodTopologySpread::normalizeScoreReadsNames(const CycleState& state) const {
  const PreScoreState* s = state.read(kPreScoreKey);
  return s == nullptr || !s->ignoredNodes.empty();
}

Status PodTopologySpread::normalizeScore(const CycleState& state, const api::Pod& /*pod*/,
                                         std::vector<NodeScore>& scores) const {
  const PreScoreState* s = state.read(kPreScoreKey);
  if (s == nullptr) {
    return Status::error("error reading \"" + std::string(kPreScoreStateKey) +
                         "\" from cycleState: not found");
  }
  int64_t minScore = std::numeric_limits<int64_t>::max();
  int64_t maxScore = 0;
  for (NodeScore& ns : scores) {
    if (!s->ignoredNodes.empty() && s->ignoredNodes.contains(std::string_view(ns.name))) {
      ns.score = kInvalidScore;
      continue;
    }
    minScore = std::min(minScore, ns.score);
    maxScore = std::max(maxScore, ns.score);
  }
  for (NodeScore& ns : scores) {
    if (ns.score == kInvalidScore) {
      ns.score = 0;
    } else if (maxScore == 0) {
      ns.score = kMaxNodeScore;
    } else {
      ns.score = kMaxNodeScore * (maxScore + minScore - ns.score) / maxScore;
    }
  }
  return {};
}

}  // namespace ksched::plugins
