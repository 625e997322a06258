#include <algorithm>
#include <limits>
#include <utility>

#include <ksched/api/node.h>

#include "plugins/inter_pod_affinity/affinity_terms.h"
#include "plugins/inter_pod_affinity/inter_pod_affinity.h"
#include "plugins/inter_pod_affinity/state.h"

namespace ksched::plugins {
namespace {

using interpodaffinity::existingTermMatches;
using interpodaffinity::IncomingTerm;
using interpodaffinity::kPreScoreKey;
using interpodaffinity::PreScoreState;
using interpodaffinity::TopologyCounts;

struct ScoringInputs {
  std::vector<IncomingTerm> preferredAffinity;
  std::vector<IncomingTerm> preferredAntiAffinity;
  api::Labels namespaceLabels;  // of the incoming pod's namespace
  int32_t hardPodAffinityWeight = 0;
};

void addWeight(TopologyCounts& scores, const api::Labels& nodeLabels, const std::string& key,
               int64_t weight) {
  scores.add(nodeLabels, key, weight, /*dropZero=*/false);
}

// The contributions of one existing pod, located on a node with `nodeLabels`.
void processExistingPod(TopologyCounts& scores, const ScoringInputs& in, const api::Pod& existing,
                        const api::Pod& incoming, const api::Labels& nodeLabels) {
  for (const IncomingTerm& t : in.preferredAffinity) {
    if (t.matches(existing)) addWeight(scores, nodeLabels, t.topologyKey, t.weight);
  }
  for (const IncomingTerm& t : in.preferredAntiAffinity) {
    if (t.matches(existing)) addWeight(scores, nodeLabels, t.topologyKey, -int64_t{t.weight});
  }
  if (in.hardPodAffinityWeight > 0) {
    for (const api::PodAffinityTerm& t : interpodaffinity::requiredAffinityTerms(existing)) {
      if (existingTermMatches(t, existing, incoming, in.namespaceLabels)) {
        addWeight(scores, nodeLabels, t.topologyKey, in.hardPodAffinityWeight);
      }
    }
  }
  for (const auto& wt : interpodaffinity::preferredAffinityTerms(existing)) {
    if (existingTermMatches(wt.podAffinityTerm, existing, incoming, in.namespaceLabels)) {
      addWeight(scores, nodeLabels, wt.podAffinityTerm.topologyKey, wt.weight);
    }
  }
  for (const auto& wt : interpodaffinity::preferredAntiAffinityTerms(existing)) {
    if (existingTermMatches(wt.podAffinityTerm, existing, incoming, in.namespaceLabels)) {
      addWeight(scores, nodeLabels, wt.podAffinityTerm.topologyKey, -int64_t{wt.weight});
    }
  }
}

}  // namespace

Status InterPodAffinity::preScore(CycleState& state, const api::Pod& pod,
                                  const std::vector<const NodeInfo*>& /*nodes*/) {
  const auto& preferred = interpodaffinity::preferredAffinityTerms(pod);
  const auto& preferredAnti = interpodaffinity::preferredAntiAffinityTerms(pod);
  const bool hasConstraints = !preferred.empty() || !preferredAnti.empty();
  if (args_.ignorePreferredTermsOfExistingPods && !hasConstraints) return Status::skip();

  const NodeInfoLister& snapshot = handle_.snapshot();
  // Without preferred terms of its own, only pods with affinity can contribute.
  const std::vector<const NodeInfo*>& all =
      hasConstraints ? snapshot.list() : snapshot.havePodsWithAffinityList();

  const ClusterListers& listers = handle_.listers();
  ScoringInputs in;
  in.preferredAffinity = interpodaffinity::resolveIncomingTerms(preferred, pod, listers);
  in.preferredAntiAffinity = interpodaffinity::resolveIncomingTerms(preferredAnti, pod, listers);
  in.namespaceLabels = interpodaffinity::namespaceLabels(listers, pod.metadata.namespace_);
  in.hardPodAffinityWeight = args_.hardPodAffinityWeight;

  const std::vector<TopologyCounts> chunks = interpodaffinity::accumulateInChunks<TopologyCounts>(
      handle_.parallelizer(), all.size(), [&](TopologyCounts& acc, size_t i) {
        const NodeInfo* ni = all[i];
        const api::Node* node = ni->node();
        if (node == nullptr || node->metadata.labels.empty()) return;
        const auto& pods = hasConstraints ? ni->pods() : ni->podsWithAffinity();
        for (const PodInfoPtr& p : pods) {
          processExistingPod(acc, in, *p->pod, pod, node->metadata.labels);
        }
      });
  auto s = std::make_unique<PreScoreState>();
  for (const TopologyCounts& c : chunks) s->topologyScore.merge(c);
  if (s->topologyScore.empty()) return Status::skip();
  state.write(kPreScoreKey, std::move(s));
  return {};
}

Status InterPodAffinity::score(const CycleState& state, const api::Pod& /*pod*/,
                               const NodeInfo& nodeInfo, int64_t& score) const {
  const api::Node* node = nodeInfo.node();
  if (node == nullptr) return Status::error("node not found");
  const PreScoreState* s = state.read(kPreScoreKey);
  if (s == nullptr) {
    return Status::error("failed to read \"" + std::string(kPreScoreStateKey) +
                         "\" from cycleState: not found");
  }
  score = s->topologyScore.sumAtNode(node->metadata.labels);
  return {};
}

Status InterPodAffinity::normalizeScore(const CycleState& state, const api::Pod& /*pod*/,
                                        std::vector<NodeScore>& scores) const {
  const PreScoreState* s = state.read(kPreScoreKey);
  if (s == nullptr) {
    return Status::error("failed to read \"" + std::string(kPreScoreStateKey) +
                         "\" from cycleState: not found");
  }
  if (s->topologyScore.empty()) return {};
  int64_t minCount = std::numeric_limits<int64_t>::max();
  int64_t maxCount = std::numeric_limits<int64_t>::min();
  for (const NodeScore& ns : scores) {
    maxCount = std::max(maxCount, ns.score);
    minCount = std::min(minCount, ns.score);
  }
  const int64_t diff = maxCount - minCount;
  for (NodeScore& ns : scores) {
    double f = 0;
    if (diff > 0) {
      f = static_cast<double>(kMaxNodeScore) *
          (static_cast<double>(ns.score - minCount) / static_cast<double>(diff));
    }
    ns.score = static_cast<int64_t>(f);
  }
  return {};
}

}  // namespace ksched::plugins
