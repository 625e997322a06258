// --balance (advise/balance.h): moves off the nodes whose requested share is more than the
// deviation above the cluster's, each placed by the scheduler and kept only when it evens the
// nodes out.
#include "advise/balance.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "advise/render.h"
#include "tests/support/sim_test_util.h"

namespace ksched::advise {
namespace {

using sim::testutil::node;
using sim::testutil::podOf;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

PodPtr replica(const std::string& name, int milliCpu, const std::string& nodeName,
               int32_t priority = 0) {
  return podOf(name, milliCpu)
      .label("app", "web")
      .ownerReference("ReplicaSet", "web", "web-uid")
      .nodeName(nodeName)
      .priority(priority)
      .ptr();
}

// node -> cpu requested (milli) after the plan's moves.
std::map<std::string, int64_t> cpuAfter(const sim::Cluster& c, const Plan& p) {
  std::map<std::string, std::string> where;
  std::map<std::string, int64_t> req;
  for (const auto& pod : c.pods) {
    where[pod->metadata.name] = pod->spec.nodeName;
    req[pod->metadata.name] =
        api::Resource::fromList(pod->spec.containers[0].resources.requests).milliCPU;
  }
  for (const auto& m : p.moves) where[m.name] = m.to;
  std::map<std::string, int64_t> out;
  for (const auto& n : c.nodes) out[n->metadata.name] = 0;
  for (const auto& [pod, n] : where) out[n] += req[pod];
  return out;
}

// Four nodes of 8 cpu; n1 holds six pods of 1 cpu, n2 two: the cluster is at 25 %.
sim::Cluster lopsided() {
  sim::Cluster c;
  c.nodes = {node("n1", 8), node("n2", 8), node("n3", 8), node("n4", 8)};
  for (int i = 0; i < 6; ++i) c.pods.push_back(replica("a" + std::to_string(i), 1000, "n1"));
  for (int i = 0; i < 2; ++i) c.pods.push_back(replica("b" + std::to_string(i), 1000, "n2"));
  return c;
}

TEST(AdviseBalance, MovesOffTheNodeAboveTheBandUntilAllAreWithinIt) {
  const sim::Cluster c = lopsided();
  const Plan p = planBalance(c, {}, {});
  ASSERT_TRUE(p.balance);
  EXPECT_EQ(p.balance->overBefore, 1U);
  EXPECT_EQ(p.balance->overAfter, 0U);
  ASSERT_EQ(p.moves.size(), 4U);
  for (const auto& m : p.moves) {
    EXPECT_EQ(m.from, "n1");
    EXPECT_NE(m.to, "n1");
    EXPECT_NE(m.to, "n2");  // the scheduler's LeastAllocated prefers the empty ones
  }
  EXPECT_THAT(p.moves[0].why,
              HasSubstr("balance: n1 cpu 75% requested, 50 points above the cluster's 25%"));
  const auto cpu = cpuAfter(c, p);
  for (const auto& [n, milli] : cpu) EXPECT_EQ(milli, 2000) << n;
  EXPECT_DOUBLE_EQ(p.before.perNode.at("cpu").mean, 25);
  EXPECT_DOUBLE_EQ(p.before.perNode.at("cpu").max, 75);
  EXPECT_DOUBLE_EQ(p.after.perNode.at("cpu").max, 25);
  EXPECT_DOUBLE_EQ(p.after.perNode.at("cpu").stddev, 0);
  EXPECT_THAT(p.notFreed, IsEmpty());
  const std::string table = planTable(p);
  EXPECT_THAT(table, HasSubstr("Plan: 4 moves; 1 node more than 10.0 points above the cluster's "
                               "requested share before, 0 nodes after."));
  EXPECT_THAT(table, HasSubstr("cpu requested, lowest-highest node"));
  EXPECT_THAT(table, HasSubstr("0.0-75.0%"));
}

TEST(AdviseBalance, AWiderDeviationMovesLess) {
  const sim::Cluster c = lopsided();
  // n1 at 75 % may be up to 40 points above 25 %: one move (down to 62.5 %) is enough.
  const Plan p = planBalance(c, {}, {40, {}});
  EXPECT_EQ(p.moves.size(), 1U);
  EXPECT_EQ(cpuAfter(c, p).at("n1"), 5000);
  EXPECT_EQ(p.balance->overAfter, 0U);
}

TEST(AdviseBalance, TheLowestPriorityMovesFirst) {
  sim::Cluster c;
  c.nodes = {node("n1", 8), node("n2", 8)};
  for (int i = 0; i < 3; ++i)
    c.pods.push_back(replica("high" + std::to_string(i), 1000, "n1", 100));
  c.pods.push_back(replica("low", 1000, "n1", 0));
  const Plan p = planBalance(c, {}, {});
  ASSERT_FALSE(p.moves.empty());
  EXPECT_EQ(p.moves[0].name, "low");
  EXPECT_EQ(p.moves.size(), 2U);  // 4 of 16 cpu: 2 and 2 on each
}

TEST(AdviseBalance, PodsThatMayNotMoveLeaveTheNodeAboveWithTheReason) {
  sim::Cluster c;
  c.nodes = {node("n1", 8), node("n2", 8)};
  for (int i = 0; i < 4; ++i) {  // bare pods: nothing would recreate them
    c.pods.push_back(podOf("bare" + std::to_string(i), 1000).nodeName("n1").ptr());
  }
  const Plan p = planBalance(c, {}, {});
  EXPECT_THAT(p.moves, IsEmpty());
  ASSERT_EQ(p.notFreed.size(), 1U);
  EXPECT_EQ(p.notFreed[0].node, "n1");
  EXPECT_THAT(p.notFreed[0].reason, HasSubstr("no pod on it may move"));
  EXPECT_EQ(p.balance->overAfter, 1U);
  EXPECT_THAT(planTable(p), HasSubstr("Nodes left above the band:\n  n1: cpu 50% requested"));
}

TEST(AdviseBalance, AMoveThatWouldPutItsNodeOverIsNotMade) {
  sim::Cluster c;
  c.nodes = {node("n1", 2), node("n2", 2)};
  c.pods.push_back(replica("big", 1500, "n1"));  // n1 100 %, n2 0 %: the cluster at 50 %
  c.pods.push_back(podOf("bare", 500).nodeName("n1").ptr());  // keeps its node
  const Plan p = planBalance(c, {}, {});
  // big would leave n1 at 25 % and put n2 at 75 %, 25 points above.
  EXPECT_THAT(p.moves, IsEmpty());
  ASSERT_EQ(p.notFreed.size(), 1U);
  EXPECT_EQ(p.notFreed[0].node, "n1");
  EXPECT_THAT(p.notFreed[0].reason,
              HasSubstr("the scheduler places default/big on n2, which it would put over (cpu 75% "
                        "requested, 25 points above the cluster's 50%)"));
}

TEST(AdviseBalance, ASchedulerThatPacksPutsThePodBackAndSaysSo) {
  const sim::Cluster c = lopsided();
  sim::Options o;
  o.config = R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
)";
  const Plan p = planBalance(c, o, {});
  EXPECT_THAT(p.moves, IsEmpty());
  ASSERT_EQ(p.notFreed.size(), 1U);
  EXPECT_THAT(p.notFreed[0].reason, HasSubstr("on n1 again"));
}

TEST(AdviseBalance, ABudgetThatAllowsNoDisruptionKeepsItsPods) {
  sim::Cluster c = lopsided();
  api::PodDisruptionBudget pdb;
  pdb.metadata.name = "web";
  pdb.metadata.namespace_ = "default";
  pdb.spec.selector = api::LabelSelector{{{"app", "web"}}, {}};
  pdb.status.disruptionsAllowed = 0;
  c.podDisruptionBudgets.push_back(pdb);
  const Plan p = planBalance(c, {}, {});
  EXPECT_THAT(p.moves, IsEmpty());
  ASSERT_EQ(p.notFreed.size(), 1U);
  EXPECT_THAT(p.notFreed[0].reason, HasSubstr("no pod on it may move"));
}

TEST(AdviseBalance, AnEvenClusterNeedsNoMove) {
  sim::Cluster c;
  c.nodes = {node("n1", 4), node("n2", 8)};
  c.pods.push_back(replica("a", 1000, "n1"));  // 25 %
  c.pods.push_back(replica("b", 2000, "n2"));  // 25 %
  const Plan p = planBalance(c, {}, {});
  EXPECT_THAT(p.moves, IsEmpty());
  EXPECT_EQ(p.balance->overBefore, 0U);
  EXPECT_EQ(p.schedulerRuns, 0U);
}

}  // namespace
}  // namespace ksched::advise
