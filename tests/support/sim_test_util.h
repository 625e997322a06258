// Clusters, pods and result lookups for the Simulator's tests (tests/unit/sim/simulator*_test.cc).
#pragma once

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <ksched/sim.h>
#include <ksched/testing/fakes.h>

#include "sim/load.h"

namespace ksched::sim::testutil {

// A node with `milliCpu`, 2Mi of memory per milli-cpu and room for 110 pods.
inline NodePtr nodeMilli(const std::string& name, int milliCpu) {
  return ksched::testing::NodeWrapper(name)
      .capacity({{"cpu", std::to_string(milliCpu) + "m"},
                 {"memory", std::to_string(2 * milliCpu) + "Mi"},
                 {"pods", "110"}})
      .ptr();
}
inline NodePtr node(const std::string& name, int cpu) { return nodeMilli(name, 1000 * cpu); }

// A pod asking for `milliCpu` and 2Mi of memory per milli-cpu: the same share of cpu and memory
// of every node above, so that BalancedAllocation scores all nodes alike.
inline ksched::testing::PodWrapper podOf(const std::string& name, int milliCpu) {
  return ksched::testing::PodWrapper(name).req(
      {{"cpu", std::to_string(milliCpu) + "m"}, {"memory", std::to_string(2 * milliCpu) + "Mi"}});
}
inline PodPtr pod(const std::string& name, int milliCpu) { return podOf(name, milliCpu).ptr(); }
inline PodPtr boundPod(const std::string& name, int milliCpu, const std::string& nodeName,
                       int32_t priority = 0) {
  return podOf(name, milliCpu).nodeName(nodeName).priority(priority).ptr();
}

inline const PodResult& find(const Result& r, const std::string& name,
                             const std::string& origin = "work") {
  for (const PodResult& p : r.pods) {
    if (p.name == name && p.origin == origin) return p;
  }
  throw std::runtime_error("no result for " + origin + " pod " + name);
}

inline std::string placement(const PodResult& p) {
  return p.node ? *p.node : "<none: " + p.reason + ">";
}

// name -> node ("" when pending), of the cluster the simulator holds.
inline std::map<std::string, std::string> bindings(const Simulator& sim) {
  std::map<std::string, std::string> out;
  for (const PodPtr& p : sim.cluster().pods) out[p->metadata.name] = p->spec.nodeName;
  return out;
}

inline std::vector<std::string> placements(const Result& r) {
  std::vector<std::string> out;
  for (const PodResult& p : r.pods) out.push_back(p.name + "@" + placement(p));
  return out;
}

inline Cluster load(std::string_view yaml) {
  Cluster c;
  loadText(yaml, "cluster.yaml", LoadAs::kCluster, c);
  checkCluster(c);
  if (!c.skipped.empty()) throw std::runtime_error("skipped: " + c.skipped[0].message);
  return c;
}

}  // namespace ksched::sim::testutil
