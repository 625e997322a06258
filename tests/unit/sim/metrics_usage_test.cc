// What an eviction does to metrics-server's readings in a simulated cluster (sim/metrics_usage.h):
// the pod's PodMetrics go and its use comes off its node's NodeMetrics.
#include "sim/metrics_usage.h"

#include <gtest/gtest.h>

#include <ksched/sim.h>

#include "tests/support/sim_test_util.h"

namespace ksched::sim {
namespace {

// Node n1 runs "hot" (3 cpu, 2Gi used) and "cold" (no PodMetrics); n2 runs "other" (1 cpu).
constexpr std::string_view kCluster = R"(apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "8", memory: 32Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
status: {allocatable: {cpu: "8", memory: 32Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: hot, namespace: default}
spec: {nodeName: n1, containers: [{name: a, image: pause}, {name: b, image: pause}]}
---
apiVersion: v1
kind: Pod
metadata: {name: cold, namespace: default}
spec: {nodeName: n1, containers: [{name: a, image: pause}]}
---
apiVersion: v1
kind: Pod
metadata: {name: other, namespace: default}
spec: {nodeName: n2, containers: [{name: a, image: pause}]}
---
apiVersion: metrics.k8s.io/v1beta1
kind: PodMetrics
metadata: {name: hot, namespace: default}
timestamp: "2026-11-30T12:00:00Z"
containers:
- {name: a, usage: {cpu: 2500m, memory: 1Gi}}
- {name: b, usage: {cpu: 500m, memory: 1Gi}}
---
apiVersion: metrics.k8s.io/v1beta1
kind: PodMetrics
metadata: {name: other, namespace: default}
timestamp: "2026-11-30T12:00:00Z"
containers:
- {name: a, usage: {cpu: 1, memory: 1Gi}}
---
apiVersion: metrics.k8s.io/v1beta1
kind: NodeMetrics
metadata: {name: n1}
timestamp: "2026-11-30T12:00:00Z"
usage: {cpu: 4, memory: 8Gi}
---
apiVersion: metrics.k8s.io/v1beta1
kind: NodeMetrics
metadata: {name: n2}
timestamp: "2026-11-30T12:00:00Z"
usage: {cpu: 1500m, memory: 2Gi}
)";

constexpr int64_t kGi = int64_t{1} << 30;

TEST(MetricsUsage, ThePodsAndNodesUseIsReadFromTheirMetrics) {
  const Cluster c = testutil::load(kCluster);
  const auto pods = podUsages(c);
  ASSERT_EQ(pods.size(), 2U);
  EXPECT_EQ(pods.at("default/hot").milliCPU, 3000);
  EXPECT_EQ(pods.at("default/hot").memory, 2 * kGi);
  const auto nodes = nodeUsages(c);
  EXPECT_EQ(nodes.at("n1").milliCPU, 4000);
  EXPECT_EQ(nodes.at("n2").memory, 2 * kGi);
}

TEST(MetricsUsage, AnEvictionTakesThePodsUseOffItsNodesReadingUntilReverted) {
  Simulator sim(testutil::load(kCluster));
  sim.begin();
  (void)sim.evict("default", "hot");
  EXPECT_EQ(nodeUsages(sim.cluster()).at("n1").milliCPU, 1000);
  EXPECT_EQ(nodeUsages(sim.cluster()).at("n1").memory, 6 * kGi);
  EXPECT_FALSE(podUsages(sim.cluster()).contains("default/hot"));
  // A pod without PodMetrics takes nothing off.
  (void)sim.evict("default", "cold");
  EXPECT_EQ(nodeUsages(sim.cluster()).at("n1").milliCPU, 1000);
  sim.revert();
  EXPECT_EQ(nodeUsages(sim.cluster()).at("n1").milliCPU, 4000);
  EXPECT_TRUE(podUsages(sim.cluster()).contains("default/hot"));
}

TEST(MetricsUsage, ADrainTakesEveryPodsUseOffAndNeverBelowZero) {
  Cluster c = testutil::load(kCluster);
  Simulator sim(c);
  (void)sim.drain("n2");
  EXPECT_EQ(nodeUsages(sim.cluster()).at("n2").milliCPU, 500);
  EXPECT_EQ(nodeUsages(sim.cluster()).at("n2").memory, kGi);
  EXPECT_EQ(nodeUsages(sim.cluster()).at("n1").milliCPU, 4000);
  // A reading below what its pods use stays at zero.
  releaseUsage(c, {c.pods[0]});  // hot: 3 cpu
  releaseUsage(c, {c.pods[0]});  // its PodMetrics are gone: nothing more
  EXPECT_EQ(nodeUsages(c).at("n1").milliCPU, 1000);
  Cluster low = testutil::load(kCluster);
  auto& nodes = low.others.at("metrics.k8s.io/v1beta1/NodeMetrics");
  auto n1 = std::make_shared<UnstructuredObject>(*nodes[0]);
  n1->object["usage"]["cpu"] = "1";
  nodes[0] = n1;
  releaseUsage(low, {low.pods[0]});
  EXPECT_EQ(nodeUsages(low).at("n1").milliCPU, 0);
}

}  // namespace
}  // namespace ksched::sim
