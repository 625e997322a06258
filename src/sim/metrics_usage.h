// What metrics-server reports in a simulated cluster: the metrics.k8s.io NodeMetrics and
// PodMetrics of Cluster::others (read from files, or LISTed live by sim/load.h), and what an
// eviction does to them.
//
// Evicting a pod (Simulator::evict, drain) takes its PodMetrics out and its usage off its
// node's NodeMetrics, as metrics-server's next reading would show the node without it. The pod
// placed again is not added to any reading: the scheduler counts it by its placement until a
// reading includes it (load_source.h), as a live scheduler does.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/cluster.h"

namespace ksched::sim {

// CPU in millicores, memory in bytes.
struct MetricsUsage {
  int64_t milliCPU = 0;
  int64_t memory = 0;
};

// The key of podUsages(): "namespace/name", the namespace "default" when empty.
[[nodiscard]] std::string usageKey(const api::ObjectMeta& m);

// Every pod's usage by usageKey(): the sum of its PodMetrics containers' usage. Items
// without a name or with a quantity that does not parse are left out.
[[nodiscard]] std::unordered_map<std::string, MetricsUsage> podUsages(const Cluster& cluster);
// Every node's usage by name, from its NodeMetrics (items as above are left out).
[[nodiscard]] std::unordered_map<std::string, MetricsUsage> nodeUsages(const Cluster& cluster);

// The pods evicted (bound, as they were on their nodes): their PodMetrics are dropped and their
// usage taken off their nodes' NodeMetrics (never below zero). Pods without PodMetrics change
// nothing. Objects are replaced, never changed in place (Simulator::begin() keeps copies).
void releaseUsage(Cluster& cluster, const std::vector<PodPtr>& evicted);

}  // namespace ksched::sim
