// explainPod over a real snapshot with the default profile and the in-tree plugins: every Filter
// rejection per node, shortfalls, the score breakdown, the FailedScheduling text, and the
// person-facing table.
#include "scheduler/explain.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <ksched/testing/fakes.h>

#include "cache/snapshot.h"
#include "config/profile.h"
#include "framework/framework.h"
#include "framework/parallelizer.h"
#include "plugins/registry.h"
#include "tests/support/framework_test_plugins.h"

namespace ksched::scheduler {
namespace {

using ksched::testing::NodeWrapper;
using ksched::testing::PodWrapper;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct Env {
  frameworktest::NullRecorder events;
  framework::ThreadPoolParallelizer parallelizer{2};
  framework::Framework fwk;
  cache::Snapshot snapshot;

  Env(std::vector<PodPtr> pods, std::vector<NodePtr> nodes)
      : fwk(config::defaultProfile(features::Gates{}), plugins::inTreeRegistry(), services()),
        snapshot(cache::Snapshot::fromForTest(std::move(pods), std::move(nodes))) {
    fwk.setSnapshot(&snapshot);
  }
  ~Env() { fwk.setSnapshot(nullptr); }
  framework::Services services() {
    framework::Services s;
    s.events = &events;
    s.parallelizer = &parallelizer;
    return s;
  }
  Explanation explain(const api::Pod& pod, const std::string& node = "") {
    return explainPod(fwk, pod, snapshot, 0, node);
  }
};

const Explanation::FilteredNode& filtered(const Explanation& e, const std::string& node) {
  for (const auto& f : e.filtered) {
    if (f.node == node) return f;
  }
  throw std::runtime_error("no verdict for " + node);
}

TEST(Explain, EveryRejectingFilterIsKeptAndTheFirstMakesUpstreamsMessage) {
  Env env({PodWrapper("busy").uid("busy").nodeName("used").req({{"cpu", "3"}}).ptr()},
          {NodeWrapper("tainted")
               .capacity({{"cpu", "1"}, {"pods", "10"}})
               .taint("k", "v", "NoSchedule")
               .ptr(),
           NodeWrapper("used").capacity({{"cpu", "4"}, {"pods", "10"}}).ptr()});
  auto pod = PodWrapper("p").uid("p").req({{"cpu", "2"}}).obj();
  Explanation e = env.explain(pod);

  EXPECT_EQ(e.numNodes, 2);
  EXPECT_TRUE(e.feasible.empty());
  EXPECT_TRUE(e.selected.empty());
  EXPECT_EQ(e.fitError,
            "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s). "
            "preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, "
            "1 Preemption is not helpful for scheduling.");
  ASSERT_TRUE(e.preemption.has_value());
  EXPECT_EQ(e.preemption->plugin, "DefaultPreemption");
  EXPECT_TRUE(e.preemption->node.empty());
  const auto& t = filtered(e, "tainted");
  ASSERT_EQ(t.rejections.size(), 2u) << "not only the first";
  EXPECT_EQ(t.rejections[0].plugin, "TaintToleration");
  EXPECT_EQ(t.rejections[1].plugin, "NodeResourcesFit");
  const auto& u = filtered(e, "used");
  ASSERT_EQ(u.rejections.size(), 1u);
  EXPECT_EQ(u.rejections[0].code, "Unschedulable");
  ASSERT_EQ(u.rejections[0].shortfalls.size(), 1u);
  const auto& f = u.rejections[0].shortfalls[0];
  EXPECT_EQ(f.resource, "cpu");
  EXPECT_EQ(f.requested, 2000);
  EXPECT_EQ(f.allocatable, 4000);
  EXPECT_EQ(f.inUse, 3000);

  const std::string table = toTable(e);
  EXPECT_THAT(table, HasSubstr("0 of 2 nodes fit"));
  EXPECT_THAT(table, HasSubstr("NodeResourcesFit: Insufficient cpu - 2 (tainted, used)"));
  EXPECT_THAT(table, HasSubstr("used: Insufficient cpu: needs 2, free 1\n"));
  EXPECT_THAT(table, ::testing::Not(HasSubstr("\n  tainted: "))) << "two plugins reject it";
}

// Pod-level requests (3 cpu) replace the containers' sum (1 cpu, which would fit): the
// rejection names cpu with the pod-level number, and the node's use counts the resized pod on
// it at its allocated size (2, spec 1).
TEST(Explain, PodLevelRequestsAndResizedPodsInTheShortfall) {
  Env env({PodWrapper("grown")
               .uid("grown")
               .nodeName("n1")
               .req({{"cpu", "1"}})
               .allocated({{"cpu", "2"}})
               .ptr()},
          {NodeWrapper("n1").capacity({{"cpu", "4"}, {"pods", "10"}}).ptr()});
  const api::Pod pod = PodWrapper("p")
                           .uid("p")
                           .req({{"cpu", "500m"}})
                           .req({{"cpu", "500m"}})
                           .podReq({{"cpu", "3"}})
                           .obj();
  Explanation e = env.explain(pod);
  EXPECT_THAT(e.fitError, HasSubstr("0/1 nodes are available: 1 Insufficient cpu."));
  const auto& n1 = filtered(e, "n1");
  ASSERT_EQ(n1.rejections.size(), 1u);
  EXPECT_EQ(n1.rejections[0].plugin, "NodeResourcesFit");
  ASSERT_EQ(n1.rejections[0].shortfalls.size(), 1u);
  const auto& f = n1.rejections[0].shortfalls[0];
  EXPECT_EQ(f.resource, "cpu");
  EXPECT_EQ(f.requested, 3000);
  EXPECT_EQ(f.allocatable, 4000);
  EXPECT_EQ(f.inUse, 2000);
  EXPECT_THAT(toTable(e), HasSubstr("n1: Insufficient cpu: needs 3, free 2\n"));
}

TEST(Explain, FeasibleNodesCarryEachScorePluginsPartAndTheTopIsSelected) {
  Env env({},
          {NodeWrapper("a").capacity({{"cpu", "4"}, {"memory", "8Gi"}, {"pods", "10"}}).ptr(),
           NodeWrapper("b").capacity({{"cpu", "8"}, {"memory", "16Gi"}, {"pods", "10"}}).ptr()});
  auto pod = PodWrapper("p").uid("p").req({{"cpu", "1"}, {"memory", "1Gi"}}).obj();
  Explanation e = env.explain(pod);
  ASSERT_EQ(e.feasible.size(), 2u);
  EXPECT_EQ(e.feasible[0].node, "b") << "LeastAllocated prefers the emptier node";
  EXPECT_THAT(e.selected, ElementsAre("b"));
  for (const auto& n : e.feasible) {
    int64_t sum = 0;
    for (const auto& s : n.scores) sum += s.normalized * s.weight;
    EXPECT_EQ(sum, n.total) << n.node;
  }
  EXPECT_TRUE(e.fitError.empty());
  auto j = toJson(e);
  EXPECT_EQ(j["selected"], nlohmann::ordered_json::array({"b"}));
  EXPECT_THAT(toTable(e), HasSubstr("A cycle would pick b\n"));

  Explanation one = env.explain(pod, "a");
  EXPECT_EQ(one.feasible.size(), 1u);
  EXPECT_TRUE(one.selected.empty()) << "no pick from one node";
  EXPECT_THROW((void)env.explain(pod, "nope"), ExplainError);
}

TEST(Explain, ABoundPodIsEvaluatedWithoutItsOwnRequests) {
  Env env({PodWrapper("p").uid("p").nodeName("a").req({{"cpu", "3"}}).ptr()},
          {NodeWrapper("a").capacity({{"cpu", "4"}, {"pods", "10"}}).ptr()});
  SnapshotWithoutPod without(env.snapshot, "a", "p");
  ASSERT_NE(without.get("a"), nullptr);
  EXPECT_EQ(without.get("a")->requested().milliCPU, 0);
  EXPECT_EQ(env.snapshot.get("a")->requested().milliCPU, 3000) << "the snapshot is untouched";
  env.fwk.setSnapshot(&without);
  auto pod = PodWrapper("p").uid("p").req({{"cpu", "3"}}).obj();
  Explanation e = explainPod(env.fwk, pod, without, 0);
  EXPECT_THAT(e.selected, ElementsAre("a"));
}

TEST(Explain, PreemptionSaysWhereAndWhomWithoutEvictingAnyone) {
  Env env({PodWrapper("low").ns("bench").uid("low").nodeName("full").req({{"cpu", "2"}}).ptr()},
          {NodeWrapper("full").capacity({{"cpu", "2"}, {"pods", "10"}}).ptr()});
  auto pod =
      PodWrapper("urgent").ns("bench").uid("urgent").priority(1000).req({{"cpu", "1"}}).obj();
  Explanation e = env.explain(pod);
  ASSERT_TRUE(e.preemption.has_value());
  EXPECT_EQ(e.preemption->node, "full");
  EXPECT_THAT(e.preemption->victims, ElementsAre("bench/low"));
  EXPECT_EQ(e.fitError, "0/1 nodes are available: 1 Insufficient cpu.");
  EXPECT_THAT(toTable(e), HasSubstr("DefaultPreemption would make room on full by evicting 1 "
                                    "pod(s): bench/low\n(nothing was evicted)"));
  EXPECT_EQ(env.snapshot.get("full")->pods().size(), 1u);
}

TEST(Explain, DiagnosisAnnotationCountsReasonsNamesExamplesAndTheClosestNodes) {
  std::vector<NodePtr> nodes;
  framework::Diagnosis d;
  for (int i = 0; i < 8; ++i) {
    const std::string name = "n" + std::to_string(i);
    nodes.push_back(NodeWrapper(name).capacity({{"cpu", std::to_string(i + 1)}}).ptr());
    d.nodeToStatus.emplace(
        name, Status::unschedulable("Insufficient cpu").withPlugin("NodeResourcesFit"));
  }
  nodes.push_back(NodeWrapper("t").capacity({{"cpu", "64"}}).ptr());
  d.nodeToStatus.emplace(
      "t", Status::unresolvable("node(s) had untolerated taint(s)").withPlugin("TaintToleration"));
  Env env({}, std::move(nodes));
  const cache::Snapshot& snap = env.snapshot;
  const CycleState state;
  auto pod = PodWrapper("p").req({{"cpu", "10"}}).obj();

  auto j = nlohmann::json::parse(diagnosisAnnotation(env.fwk, state, d, 9, pod, snap));
  EXPECT_EQ(j["nodes"], 9);
  ASSERT_EQ(j["reasons"].size(), 2u);
  EXPECT_EQ(j["reasons"][0]["reason"], "Insufficient cpu");
  EXPECT_EQ(j["reasons"][0]["count"], 8);
  EXPECT_EQ(j["reasons"][0]["examples"], nlohmann::json({"n0", "n1", "n2", "n3", "n4"}));
  EXPECT_EQ(j["reasons"][1]["plugin"], "TaintToleration");
  ASSERT_EQ(j["closest"].size(), 5u);
  EXPECT_EQ(j["closest"][0],
            nlohmann::json({{"node", "n7"}, {"shortfall", "cpu: needs 10, free 8"}}));

  const std::string small = diagnosisAnnotation(env.fwk, state, d, 9, pod, snap, 200);
  EXPECT_LE(small.size(), 200u);
  auto k = nlohmann::json::parse(small);
  EXPECT_FALSE(k.contains("closest")) << "the closest nodes go first";
  EXPECT_EQ(k["reasons"][0]["count"], 8) << "the counts stay";
}

TEST(Explain, QuantitiesAsPeopleWriteThem) {
  EXPECT_EQ(formatQuantity("cpu", 2000), "2");
  EXPECT_EQ(formatQuantity("cpu", 1500), "1.5");
  EXPECT_EQ(formatQuantity("cpu", 250), "0.25");
  EXPECT_EQ(formatQuantity("memory", int64_t{1} << 30), "1Gi");
  EXPECT_EQ(formatQuantity("memory", int64_t{1536} << 20), "1536Mi");
  EXPECT_EQ(formatQuantity("memory", 1000), "1000");
  EXPECT_EQ(formatQuantity("pods", 110), "110");
}

}  // namespace
}  // namespace ksched::scheduler
