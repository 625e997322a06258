// CycleState data of InterPodAffinity, shared by its filtering and scoring translation units.
#pragma once

#include <memory>
#include <vector>

#include <ksched/cycle_state.h>

#include "plugins/inter_pod_affinity/affinity_terms.h"
#include "plugins/inter_pod_affinity/inter_pod_affinity.h"

namespace ksched::plugins::interpodaffinity {

// Written by PreFilter, updated by AddPod/RemovePod (on the caller's copy), read by Filter.
struct PreFilterState final : StateData {
  // Required anti-affinity terms of existing pods that select the incoming pod.
  TopologyCounts existingAntiAffinity;
  // Existing pods matching all of the incoming pod's required affinity terms (one per term).
  TopologyCounts affinity;
  // Existing pods selected by each required anti-affinity term of the incoming pod.
  TopologyCounts antiAffinity;
  // The incoming pod's required terms, resolved.
  std::vector<IncomingTerm> affinityTerms;
  std::vector<IncomingTerm> antiAffinityTerms;
  // Whether the incoming pod matches all of its own required affinity terms.
  bool matchesOwnAffinity = false;
  // The labels of the incoming pod's namespace.
  api::Labels namespaceLabels;

  [[nodiscard]] std::unique_ptr<StateData> clone() const override {
    return std::make_unique<PreFilterState>(*this);
  }
};

// Written by PreScore, read by Score and NormalizeScore.
struct PreScoreState final : StateData {
  TopologyCounts topologyScore;

  [[nodiscard]] std::unique_ptr<StateData> clone() const override {
    return std::make_unique<PreScoreState>(*this);
  }
};

inline constexpr StateKey<PreFilterState> kPreFilterKey{InterPodAffinity::kPreFilterStateKey};
inline constexpr StateKey<PreScoreState> kPreScoreKey{InterPodAffinity::kPreScoreStateKey};

}  // namespace ksched::plugins::interpodaffinity
