// ksched advise --balance: moves that even out the nodes' requested share of cpu and memory,
// each placed by the scheduler. The descheduler's LowNodeUtilization with deviation thresholds
// (useDeviationThresholds), made exact.
//
// A node is over when its requested share of cpu or memory (requests / allocatable, as the
// scheduler counts them) is more than `deviation` percentage points above the cluster's (the
// schedulable nodes' requests over their allocatable: what every node would hold were all
// even). While a node is over, the most over first, one of its pods that may move (movable.h)
// is evicted and placed by the scheduler. The move is kept when the pod lands on another node
// that is not over afterwards and the nodes' shares are closer together (their sum of squared
// distances to the mean is lower); otherwise it is undone and the node's next pod is tried
// (the lowest priority first, then the pod whose requests best cover the node's excess). A node
// none of whose first kBalanceTriesPerNode pods can move well is left, with the reason.
//
// Moving a pod keeps the cluster's total requests, so the mean does not move: the plan ends when
// no node is over, or no over node has a pod to move, or after kBalanceMovesMax moves.
//
// By measured load: where a profile of the configuration enables a load-aware plugin
// (TargetLoadPacking, LoadVariationRiskBalancing, LoadAwareFilter; docs/load-aware.md) and the
// cluster has NodeMetrics, a node's share is its use as metrics-server reports it (NodeMetrics
// over allocatable) instead of its requests. A pod moved takes its use (its PodMetrics, else its
// requests) off its node and onto the one it lands on; a node without a reading counts its pods'
// requests. The scheduler placing each move sees the same: an eviction takes the pod's use off
// its node's reading (sim/metrics_usage.h), and the pod placed counts on its new node as the
// load-aware plugins count a placement not yet in a reading.
#pragma once

#include <ksched/registry.h>
#include <ksched/sim.h>

#include "advise/plan.h"

namespace ksched::advise {

inline constexpr int kBalanceTriesPerNode = 6;
inline constexpr int kBalanceMovesMax = 1000;

struct BalanceGoal {
  // Percentage points above the cluster's requested share a node may hold (--deviation).
  double deviation = 10;
  EvictionPolicy policy;
};

[[nodiscard]] Plan planBalance(const sim::Cluster& cluster, sim::Options options,
                               const BalanceGoal& goal, const Registry& outOfTree = {});

}  // namespace ksched::advise
