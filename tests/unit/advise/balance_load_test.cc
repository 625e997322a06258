// --balance by measured load (advise/balance.h): where the configuration enables a load-aware
// plugin and the cluster has NodeMetrics, nodes are evened out by their use, a moved pod's use
// (its PodMetrics, else its requests) going with it. docs/examples/advise/hot.yaml's cluster:
// four 8-cpu nodes, two pods each, every pod asking for 1 cpu; the batch pods use 3 cpu, the api
// pods half a cpu, so lb-0 and lb-1 run at 80 % and lb-2 and lb-3 at 17.5 %.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "advise/balance.h"
#include "advise/render.h"
#include "tests/support/sim_test_util.h"

namespace ksched::advise {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr const char* kLoadAware = R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: TargetLoadPacking
      - name: LoadAwareFilter
  pluginConfig:
  - name: TargetLoadPacking
    args: {targetUtilization: 40}
  - name: LoadAwareFilter
    args:
      usageThresholds: {cpu: 65}
)";

std::string hot(bool podMetrics = true) {
  std::string y;
  const auto doc = [&](const std::string& d) { y += (y.empty() ? "" : "---\n") + d; };
  for (const char* n : {"lb-0", "lb-1", "lb-2", "lb-3"}) {
    doc(std::string("apiVersion: v1\nkind: Node\nmetadata: {name: ") + n +
        "}\nstatus:\n  allocatable: {cpu: \"8\", memory: 32Gi, pods: \"110\"}\n");
  }
  const struct {
    const char *name, *app, *node, *cpu;
  } pods[] = {{"batch-0", "batch", "lb-0", "3"}, {"batch-1", "batch", "lb-0", "3"},
              {"batch-2", "batch", "lb-1", "3"}, {"batch-3", "batch", "lb-1", "3"},
              {"api-0", "api", "lb-2", "500m"},  {"api-1", "api", "lb-2", "500m"},
              {"api-2", "api", "lb-3", "500m"},  {"api-3", "api", "lb-3", "500m"}};
  for (const auto& p : pods) {
    doc(std::string("apiVersion: v1\nkind: Pod\nmetadata:\n  name: ") + p.name +
        "\n  namespace: default\n  labels: {app: " + p.app +
        "}\n  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: " + p.app +
        ", uid: u-" + p.app + ", controller: true}]\nspec:\n  nodeName: " + p.node +
        "\n  containers:\n  - name: main\n    image: pause\n    resources:\n"
        "      requests: {cpu: \"1\", memory: 2Gi}\nstatus: {phase: Running}\n");
    if (podMetrics) {
      doc(std::string("apiVersion: metrics.k8s.io/v1beta1\nkind: PodMetrics\nmetadata: {name: ") +
          p.name + ", namespace: default}\ntimestamp: \"2026-11-30T12:00:00Z\"\n" +
          "containers:\n- name: main\n  usage: {cpu: \"" + p.cpu + "\", memory: 1Gi}\n");
    }
  }
  for (const auto& [n, cpu] :
       {std::pair{"lb-0", "6400m"}, {"lb-1", "6400m"}, {"lb-2", "1400m"}, {"lb-3", "1400m"}}) {
    doc(std::string("apiVersion: metrics.k8s.io/v1beta1\nkind: NodeMetrics\nmetadata: {name: ") +
        n + "}\ntimestamp: \"2026-11-30T12:00:00Z\"\nusage: {cpu: " + cpu + ", memory: 6Gi}\n");
  }
  return y;
}

sim::Options loadAware() {
  sim::Options o;
  o.config = kLoadAware;
  return o;
}

TEST(AdviseBalanceByLoad, TheHotNodesGiveOnePodEachToTheIdleOnes) {
  const Plan p = planBalance(sim::testutil::load(hot()), loadAware(), {});
  ASSERT_TRUE(p.balance);
  EXPECT_EQ(p.balance->measure, "load");
  EXPECT_EQ(p.balance->overBefore, 2U);
  EXPECT_EQ(p.balance->overAfter, 0U);
  ASSERT_EQ(p.moves.size(), 2U);
  EXPECT_EQ(p.moves[0].from, "lb-0");
  EXPECT_THAT(p.moves[0].to, AnyOf("lb-2", "lb-3"));
  EXPECT_THAT(p.moves[0].why, HasSubstr("lb-0 cpu 80% used, 31 points above the cluster's 49%"));
  // The scheduler counts the first move's pod on its new node: the second goes to the other.
  EXPECT_EQ(p.moves[1].from, "lb-1");
  EXPECT_THAT(p.moves[1].to, AnyOf("lb-2", "lb-3"));
  EXPECT_NE(p.moves[1].to, p.moves[0].to);
  EXPECT_THAT(p.moves[1].tiedWith, IsEmpty());
  // 3 cpu moved off each hot node: 3.4 and 4.4 of 8 cpu.
  EXPECT_DOUBLE_EQ(p.balance->usedBefore.at("cpu").max, 80.0);
  EXPECT_DOUBLE_EQ(p.balance->usedAfter.at("cpu").max, 55.0);
  EXPECT_DOUBLE_EQ(p.balance->usedAfter.at("cpu").min, 42.5);
  EXPECT_DOUBLE_EQ(p.balance->usedAfter.at("cpu").mean, 48.75);
  const std::string table = planTable(p);
  EXPECT_THAT(table, HasSubstr("above the cluster's used share (NodeMetrics) before, 0 nodes"));
  EXPECT_THAT(table, HasSubstr("cpu used, lowest-highest node"));
  EXPECT_EQ(planDocument(p)["balance"]["measure"], "load");
}

TEST(AdviseBalanceByLoad, WithoutALoadAwareProfileTheClusterIsEvenByRequests) {
  const Plan p = planBalance(sim::testutil::load(hot()), {}, {});
  EXPECT_EQ(p.balance->measure, "requests");
  EXPECT_EQ(p.balance->overBefore, 0U);
  EXPECT_THAT(p.moves, IsEmpty());
  EXPECT_EQ(planDocument(p)["balance"].count("usedPercentPerNodeAfter"), 0U);
}

TEST(AdviseBalanceByLoad, APodWithoutPodMetricsMovesItsRequests) {
  const Plan p = planBalance(sim::testutil::load(hot(false)), loadAware(), {});
  EXPECT_EQ(p.balance->measure, "load");
  // Each move takes 1 cpu (the pod's request) off a hot node's 6.4: 67.5 %, still over, and a
  // second pod would put its idle node over on memory (2Gi requested per pod moved).
  ASSERT_EQ(p.moves.size(), 2U);
  EXPECT_EQ(p.moves[0].from, "lb-0");
  EXPECT_EQ(p.moves[1].from, "lb-1");
  EXPECT_EQ(p.balance->overAfter, 2U);
  EXPECT_DOUBLE_EQ(p.balance->usedAfter.at("cpu").max, 67.5);
  ASSERT_EQ(p.notFreed.size(), 2U);
  EXPECT_THAT(p.notFreed[0].reason, HasSubstr("cpu 68% used, 19 points above the cluster's 49%"));
}

}  // namespace
}  // namespace ksched::advise
