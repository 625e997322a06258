// The planner (advise/plan.h) over clusters built in memory: which nodes it frees, where each
// pod goes, what keeps a node, and the figures.
#include "advise/plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <ksched/testing/fakes.h>

#include "advise/render.h"
#include "tests/support/sim_test_util.h"

namespace ksched::advise {
namespace {

using sim::testutil::node;
using sim::testutil::podOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// A pod of ReplicaSet `rs` on `nodeName`, asking for `milliCpu` (and memory in proportion).
PodPtr replica(const std::string& name, int milliCpu, const std::string& nodeName,
               const std::string& rs = "web-rs", int32_t priority = 0) {
  return podOf(name, milliCpu)
      .label("app", rs)
      .ownerReference("ReplicaSet", rs, rs + "-uid")
      .nodeName(nodeName)
      .priority(priority)
      .ptr();
}

// `n` with one more label or annotation.
NodePtr with(const NodePtr& n, const std::string& key, const std::string& value,
             bool annotation = false) {
  auto copy = std::make_shared<api::Node>(*n);
  (annotation ? copy->metadata.annotations : copy->metadata.labels)[key] = value;
  return copy;
}

// `count` nodes of 4 cpu, n01..., each holding two pods of 1 cpu.
sim::Cluster halfFilled(int count) {
  sim::Cluster c;
  for (int i = 1; i <= count; ++i) {
    const std::string n = (i < 10 ? "n0" : "n") + std::to_string(i);
    c.nodes.push_back(node(n, 4));
    c.pods.push_back(replica(n + "-a", 1000, n));
    c.pods.push_back(replica(n + "-b", 1000, n));
  }
  return c;
}

// node -> pods on it, of the cluster after the plan's moves.
std::map<std::string, std::set<std::string>> after(const sim::Cluster& c, const Plan& p) {
  std::map<std::string, std::string> where;
  for (const auto& pod : c.pods) where[pod->metadata.key()] = pod->spec.nodeName;
  for (const auto& m : p.moves) {
    EXPECT_EQ(where[m.namespace_ + "/" + m.name], m.from) << m.name;
    where[m.namespace_ + "/" + m.name] = m.to;
  }
  std::map<std::string, std::set<std::string>> out;
  for (const auto& [pod, n] : where) out[n].insert(pod);
  return out;
}

TEST(AdvisePlan, ScaleDownFreesHalfOfTenHalfFilledNodes) {
  const sim::Cluster c = halfFilled(10);
  const Plan p = planFreeNodes(c, {}, {});
  EXPECT_EQ(p.goal, "--scale-down");
  // 20 cpu of pods on nodes of 4: the lower bound is 5 nodes, and the plan reaches it.
  EXPECT_EQ(p.lowerBoundNodes, 5U);
  ASSERT_EQ(p.cordon.size(), 5U);
  EXPECT_EQ(p.moves.size(), 10U);  // each pod of the freed nodes moves once
  const auto placed = after(c, p);
  for (const auto& n : p.cordon) EXPECT_FALSE(placed.contains(n)) << n << " is not empty";
  for (const auto& [n, pods] : placed) EXPECT_EQ(pods.size(), 4U) << n;
  EXPECT_EQ(p.before.nodesUsed, 10U);
  EXPECT_EQ(p.after.nodesUsed, 5U);
  EXPECT_DOUBLE_EQ(p.before.requestedUsed.at("cpu"), 50.0);
  EXPECT_DOUBLE_EQ(p.after.requestedUsed.at("cpu"), 100.0);
  for (const auto& m : p.moves) EXPECT_EQ(m.why, "free node " + m.from);
}

TEST(AdvisePlan, FreeNodesStopsAtTheCountAsked) {
  const Plan p = planFreeNodes(halfFilled(10), {}, {2, {}});
  EXPECT_EQ(p.goal, "--free-nodes 2");
  EXPECT_EQ(p.cordon.size(), 2U);
  EXPECT_EQ(p.moves.size(), 4U);
  EXPECT_EQ(p.after.nodesUsed, 8U);
}

TEST(AdvisePlan, TheEasiestNodesAreFreedFirstAndMovesGoByPriorityThenSize) {
  sim::Cluster c;
  c.nodes = {node("big", 8), node("few", 8), node("many", 8)};
  c.pods = {replica("b1", 3000, "big"),      replica("b2", 3000, "big"),
            replica("b3", 1000, "big"),      replica("f-small", 500, "few"),
            replica("f-large", 1500, "few"), replica("f-high", 200, "few", "web-rs", 100)};
  for (int i = 0; i < 4; ++i) c.pods.push_back(replica("m" + std::to_string(i), 100, "many"));
  const Plan p = planFreeNodes(c, {}, {1, {}});
  ASSERT_THAT(p.cordon, ElementsAre("few"));
  std::vector<std::string> order;
  for (const auto& m : p.moves) order.push_back(m.name);
  EXPECT_THAT(order, ElementsAre("f-high", "f-large", "f-small"));
}

TEST(AdvisePlan, WhatKeepsANodeIsListedWithItsReason) {
  sim::Cluster c = halfFilled(4);
  // n01: a bare pod; n02: a DaemonSet pod only besides its two; n03: scale-down disabled.
  c.pods.push_back(podOf("bare", 100).nodeName("n01").ptr());
  c.pods.push_back(
      podOf("agent", 100).ownerReference("DaemonSet", "agent", "agent-uid").nodeName("n02").ptr());
  c.nodes[2] = with(c.nodes[2], kScaleDownDisabledAnnotation, "true", true);
  const Plan p = planFreeNodes(c, {}, {});
  ASSERT_EQ(p.kept.size(), 1U);
  EXPECT_EQ(p.kept[0].node, "n01");
  EXPECT_EQ(p.kept[0].pod, "default/bare");
  EXPECT_EQ(p.kept[0].reason, "no controller would recreate it (no ownerReferences)");
  ASSERT_FALSE(p.notFreed.empty());
  EXPECT_EQ(p.notFreed[0].node, "n03");
  EXPECT_EQ(p.notFreed[0].reason,
            "annotation cluster-autoscaler.kubernetes.io/scale-down-disabled=true");
  // Only n02 and n04 could go, and only one of them: 8.2 cpu of pods need three nodes of 4.
  ASSERT_EQ(p.cordon.size(), 1U);
  EXPECT_TRUE(p.cordon[0] == "n02" || p.cordon[0] == "n04") << p.cordon[0];
  EXPECT_EQ(p.lowerBoundNodes, 3U);
  for (const auto& m : p.moves) EXPECT_NE(m.name, "agent") << "a DaemonSet pod never moves";
}

TEST(AdvisePlan, ANodeWhosePodsCannotFitByRequestsIsPassedOverWithoutARun) {
  sim::Cluster c;
  c.nodes = {node("n1", 4), node("n2", 4)};
  c.pods = {replica("large", 3000, "n1"), replica("other", 2000, "n2")};
  const Plan p = planFreeNodes(c, {}, {1, {}});
  EXPECT_THAT(p.cordon, IsEmpty());
  EXPECT_THAT(p.moves, IsEmpty());
  ASSERT_EQ(p.notFreed.size(), 2U);
  EXPECT_EQ(p.notFreed[0].node, "n2");
  EXPECT_EQ(p.notFreed[0].reason,
            "its pods ask for 2.0 cpu and 3.9Gi of memory; the other schedulable nodes have 1.0 "
            "cpu and 2.0Gi free");
  EXPECT_EQ(p.notFreed[1].node, "n1");
  EXPECT_EQ(p.schedulerRuns, 1U);  // the final placement only
  EXPECT_THAT(planTable(p), HasSubstr("Plan: no node can be freed."));
  // --scale-down does not even try: the pods' requests need both nodes.
  const Plan all = planFreeNodes(c, {}, {});
  EXPECT_EQ(all.lowerBoundNodes, 2U);
  EXPECT_THAT(all.notFreed, IsEmpty());
}

TEST(AdvisePlan, MovesFollowTheSchedulersRules) {
  // n1's pod may only run in zone a, where a2 has no room left: the scheduler says so. b1's
  // pods fit on n1.
  sim::Cluster c;
  c.nodes = {with(node("n1", 4), "zone", "a"), with(node("a2", 4), "zone", "a"),
             with(node("b1", 8), "zone", "b")};
  c.pods.push_back(podOf("z", 1000)
                       .ownerReference("ReplicaSet", "z", "z-uid")
                       .nodeSelector({{"zone", "a"}})
                       .nodeName("n1")
                       .ptr());
  c.pods.push_back(replica("a2-x", 2000, "a2"));
  c.pods.push_back(replica("a2-y", 1500, "a2"));
  c.pods.push_back(replica("b1-x", 1000, "b1"));
  c.pods.push_back(replica("b1-y", 1000, "b1"));
  const Plan p = planFreeNodes(c, {}, {1, {}});
  ASSERT_FALSE(p.notFreed.empty());
  EXPECT_EQ(p.notFreed[0].node, "n1");
  EXPECT_THAT(p.notFreed[0].reason, HasSubstr("fits on no other node: 0/3 nodes are available"));
  EXPECT_THAT(p.notFreed[0].reason, HasSubstr("node(s) didn't match Pod's node affinity/selector"));
  EXPECT_THAT(p.cordon, ElementsAre("b1"));
  ASSERT_EQ(p.moves.size(), 2U);
  for (const auto& m : p.moves) EXPECT_EQ(m.to, "n1") << m.name;
}

TEST(AdvisePlan, PendingPodsAreLeftOutAndCounted) {
  sim::Cluster c = halfFilled(2);
  c.pods.push_back(sim::testutil::pod("waiting", 100));
  const Plan p = planFreeNodes(c, {}, {});
  EXPECT_EQ(p.pendingLeftOut, 1U);
  EXPECT_EQ(p.cordon.size(), 1U);
  EXPECT_THAT(planTable(p), HasSubstr("1 pending pods left out of the plan."));
}

TEST(AdvisePlan, TheDocumentListsEveryMove) {
  const Plan p = planFreeNodes(halfFilled(4), {}, {1, {}});
  const auto doc = planDocument(p);
  EXPECT_EQ(doc.at("kind"), "AdvicePlan");
  EXPECT_EQ(doc.at("goal"), "--free-nodes 1");
  ASSERT_EQ(doc.at("moves").size(), 2U);
  EXPECT_EQ(doc["moves"][0].at("from"), p.cordon[0]);
  EXPECT_EQ(doc.at("after").at("nodesUsed"), 3);
  EXPECT_EQ(doc.at("lowerBoundNodes"), 2);
}

}  // namespace
}  // namespace ksched::advise
