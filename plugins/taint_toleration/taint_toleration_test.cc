#include "plugins/taint_toleration/taint_toleration.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <ksched/api/features.h>

#include "tests/support/plugin_test_util.h"
#include "tests/support/queueing_hint_test_util.h"

namespace ksched::plugins {
namespace {

using testutil::NodeWrapper;
using testutil::PodWrapper;

struct FilterCase {
  std::string name;
  PodWrapper pod;
  NodeWrapper node;
  Code wantCode;
  std::vector<std::string> wantReasons;
};

class TaintTolerationFilterTest : public ::testing::TestWithParam<FilterCase> {};

TEST_P(TaintTolerationFilterTest, Filter) {
  const FilterCase& c = GetParam();
  TaintToleration pl(/*comparisonOperators=*/false);
  CycleState state;
  auto ni = testutil::makeNodeInfo(c.node);
  Status s = pl.filter(state, c.pod.obj(), *ni);
  EXPECT_EQ(s.code(), c.wantCode);
  EXPECT_EQ(s.reasons(), c.wantReasons);
}

INSTANTIATE_TEST_SUITE_P(
    Table, TaintTolerationFilterTest,
    ::testing::Values(
        FilterCase{"noTolerationsUntoleratedNoSchedule",
                   PodWrapper(),
                   NodeWrapper().taint("dedicated", "user1", "NoSchedule"),
                   Code::kUnschedulableAndUnresolvable,
                   {"node(s) had untolerated taint(s)"}},
        FilterCase{"equalToleration",
                   PodWrapper().toleration("dedicated", "Equal", "user1", "NoSchedule"),
                   NodeWrapper().taint("dedicated", "user1", "NoSchedule"),
                   Code::kSuccess,
                   {}},
        FilterCase{"valueMismatch",
                   PodWrapper().toleration("dedicated", "Equal", "user2", "NoSchedule"),
                   NodeWrapper().taint("dedicated", "user1", "NoSchedule"),
                   Code::kUnschedulableAndUnresolvable,
                   {"node(s) had untolerated taint(s)"}},
        FilterCase{"existsToleration",
                   PodWrapper().toleration("foo", "Exists", "", "NoSchedule"),
                   NodeWrapper().taint("foo", "bar", "NoSchedule"),
                   Code::kSuccess,
                   {}},
        FilterCase{
            "firstUntoleratedOfMany",
            PodWrapper().toleration("foo", "Equal", "bar", "NoSchedule"),
            NodeWrapper().taint("foo", "bar", "NoSchedule").taint("none", "bar", "NoSchedule"),
            Code::kUnschedulableAndUnresolvable,
            {"node(s) had untolerated taint(s)"}},
        FilterCase{
            "effectMismatch",
            PodWrapper().toleration("foo", "Equal", "bar", "NoSchedule"),
            NodeWrapper().taint("foo", "bar", "PreferNoSchedule").taint("foo", "bar", "NoExecute"),
            Code::kUnschedulableAndUnresolvable,
            {"node(s) had untolerated taint(s)"}},
        FilterCase{"preferNoScheduleIgnored",
                   PodWrapper(),
                   NodeWrapper().taint("foo", "bar", "PreferNoSchedule"),
                   Code::kSuccess,
                   {}},
        FilterCase{"emptyValueTaint",
                   PodWrapper(),
                   NodeWrapper().taint("gpu", "", "NoExecute"),
                   Code::kUnschedulableAndUnresolvable,
                   {"node(s) had untolerated taint(s)"}},
        FilterCase{"noTaints", PodWrapper(), NodeWrapper(), Code::kSuccess, {}}),
    [](const auto& info) { return info.param.name; });

struct ScoreCase {
  std::string name;
  PodWrapper pod;
  std::vector<NodeWrapper> nodes;
  std::vector<int64_t> wantRaw;
  std::vector<int64_t> wantNormalized;
};

class TaintTolerationScoreTest : public ::testing::TestWithParam<ScoreCase> {};

TEST_P(TaintTolerationScoreTest, Score) {
  const ScoreCase& c = GetParam();
  testutil::FakeHandle h;
  auto plugin = makePlugin(taintTolerationFactory(), nullptr, h);
  auto& pl = dynamic_cast<TaintToleration&>(*plugin);
  CycleState state;
  std::vector<std::shared_ptr<NodeInfo>> infos;
  std::vector<const NodeInfo*> nodes;
  for (const auto& n : c.nodes) {
    infos.push_back(testutil::makeNodeInfo(n));
    nodes.push_back(infos.back().get());
  }
  ASSERT_TRUE(pl.preScore(state, c.pod.obj(), nodes).ok());
  std::vector<NodeScore> scores;
  std::vector<int64_t> raw;
  for (const NodeInfo* ni : nodes) {
    int64_t score = -1;
    ASSERT_TRUE(pl.score(state, c.pod.obj(), *ni, score).ok());
    raw.push_back(score);
    scores.push_back({ni->name(), score});
  }
  EXPECT_EQ(raw, c.wantRaw);
  ASSERT_TRUE(pl.hasNormalizeScore());
  // The framework hands this plugin lists without node names (normalizesScoresAlone in
  // src/framework/run.cc): the names must not matter.
  std::vector<NodeScore> unnamed;
  for (int64_t r : raw) unnamed.push_back({"", r});
  ASSERT_TRUE(pl.normalizeScore(state, c.pod.obj(), unnamed).ok());
  ASSERT_TRUE(pl.normalizeScore(state, c.pod.obj(), scores).ok());
  std::vector<int64_t> normalized;
  normalized.reserve(scores.size());
  for (const auto& s : scores) normalized.push_back(s.score);
  EXPECT_EQ(normalized, c.wantNormalized);
  for (size_t i = 0; i < unnamed.size(); ++i) EXPECT_EQ(unnamed[i].score, normalized[i]);
}

// Mirrors upstream's TestTaintTolerationScore.
INSTANTIATE_TEST_SUITE_P(
    Table, TaintTolerationScoreTest,
    ::testing::Values(
        ScoreCase{"tolerationsMatchTaints",
                  PodWrapper().toleration("foo", "Equal", "bar", "PreferNoSchedule"),
                  {NodeWrapper("a").taint("foo", "bar", "PreferNoSchedule"),
                   NodeWrapper("b").taint("foo", "blah", "PreferNoSchedule")},
                  {0, 1},
                  {100, 0}},
        ScoreCase{
            "allTaintsTolerated",
            PodWrapper()
                .toleration("cpu-type", "Equal", "arm64", "PreferNoSchedule")
                .toleration("disk-type", "Equal", "ssd", "PreferNoSchedule"),
            {NodeWrapper("a"), NodeWrapper("b").taint("cpu-type", "arm64", "PreferNoSchedule"),
             NodeWrapper("c")
                 .taint("cpu-type", "arm64", "PreferNoSchedule")
                 .taint("disk-type", "ssd", "PreferNoSchedule")},
            {0, 0, 0},
            {100, 100, 100}},
        ScoreCase{
            "countsIntolerableTaints",
            PodWrapper().toleration("foo", "Equal", "bar", "PreferNoSchedule"),
            {NodeWrapper("a"), NodeWrapper("b").taint("cpu-type", "arm64", "PreferNoSchedule"),
             NodeWrapper("c")
                 .taint("cpu-type", "arm64", "PreferNoSchedule")
                 .taint("disk-type", "ssd", "PreferNoSchedule")},
            {0, 1, 2},
            {100, 50, 0}},
        ScoreCase{"onlyPreferNoScheduleTaintsCount",
                  PodWrapper().toleration("cpu-type", "Equal", "arm64", "NoSchedule"),
                  {NodeWrapper("a"), NodeWrapper("b").taint("cpu-type", "arm64", "NoSchedule"),
                   NodeWrapper("c").taint("cpu-type", "arm64", "PreferNoSchedule")},
                  {0, 0, 1},
                  {100, 100, 0}},
        ScoreCase{"emptyEffectToleratesPreferNoSchedule",
                  PodWrapper().toleration("cpu-type", "Exists", "", ""),
                  {NodeWrapper("a").taint("cpu-type", "x", "PreferNoSchedule"),
                   NodeWrapper("b").taint("other", "x", "PreferNoSchedule")},
                  {0, 1},
                  {100, 0}},
        ScoreCase{
            "noTaints", PodWrapper(), {NodeWrapper("a"), NodeWrapper("b")}, {0, 0}, {100, 100}}),
    [](const auto& info) { return info.param.name; });

// KEP 5471's SLA example: spot-node-1 has sla=800, the others 950 and 999; a toleration
// "sla Gt 950" admits only the 999 node, "sla Gt 750" all three, "sla Lt 900" only the spot
// node; a non-integer taint value admits no Gt toleration. With the gate off (its default) Gt
// and Lt tolerate nothing.
TEST(TaintTolerationTest, FilterWithComparisonOperators) {
  const std::string sla = "node.kubernetes.io/sla";
  const std::vector<NodeWrapper> nodes = {
      NodeWrapper("spot-node-1").taint(sla, "800", "NoSchedule"),
      NodeWrapper("ondemand-node-1").taint(sla, "950", "NoSchedule"),
      NodeWrapper("premium-node-1").taint(sla, "999", "NoExecute"),
      NodeWrapper("unrated-node-1").taint(sla, "high", "NoSchedule"),
  };
  struct Case {
    std::string name;
    PodWrapper pod;
    std::vector<bool> fitsWithGate;  // per node
  };
  const std::vector<Case> cases = {
      {"critical-workload Gt 950",
       PodWrapper().toleration(sla, "Gt", "950", ""),
       {false, false, true, false}},
      {"cost-optimized Gt 750",
       PodWrapper().toleration(sla, "Gt", "750", ""),
       {true, true, true, false}},
      {"Lt 900", PodWrapper().toleration(sla, "Lt", "900", ""), {true, false, false, false}},
      {"Gt 750 for NoSchedule only",
       PodWrapper().toleration(sla, "Gt", "750", "NoSchedule"),
       {true, true, false, false}},
      {"flexible: Equal 900 or Gt 900",
       PodWrapper().toleration(sla, "Equal", "900", "").toleration(sla, "Gt", "900", ""),
       {false, true, true, false}},
  };
  CycleState state;
  for (const bool gate : {true, false}) {
    // The TaintTolerationComparisonOperators gate, as the plugin reads it from its Handle.
    TaintToleration pl(gate);
    for (const auto& c : cases) {
      for (size_t i = 0; i < nodes.size(); ++i) {
        SCOPED_TRACE(c.name + " on " + nodes[i].name() + (gate ? ", gate on" : ", gate off"));
        Status s = pl.filter(state, c.pod.obj(), *testutil::makeNodeInfo(nodes[i]));
        if (gate && c.fitsWithGate[i]) {
          EXPECT_TRUE(s.ok()) << s.message();
        } else {
          EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable);
          EXPECT_EQ(s.reasons(), std::vector<std::string>{"node(s) had untolerated taint(s)"});
        }
      }
    }
  }
}

// PreferNoSchedule taints a Gt/Lt toleration tolerates do not count against the node.
TEST(TaintTolerationTest, ScoreWithComparisonOperators) {
  const auto pod = PodWrapper().toleration("sla", "Gt", "900", "PreferNoSchedule");
  const std::vector<NodeWrapper> nodes = {NodeWrapper("a").taint("sla", "950", "PreferNoSchedule"),
                                          NodeWrapper("b").taint("sla", "850", "PreferNoSchedule")};
  for (const bool gate : {true, false}) {
    SCOPED_TRACE(gate ? "gate on" : "gate off");
    TaintToleration pl(gate);
    CycleState state;
    std::vector<std::shared_ptr<NodeInfo>> infos;
    std::vector<const NodeInfo*> ptrs;
    for (const auto& n : nodes) {
      infos.push_back(testutil::makeNodeInfo(n));
      ptrs.push_back(infos.back().get());
    }
    ASSERT_TRUE(pl.preScore(state, pod.obj(), ptrs).ok());
    std::vector<int64_t> raw;
    for (const NodeInfo* ni : ptrs) {
      int64_t score = -1;
      ASSERT_TRUE(pl.score(state, pod.obj(), *ni, score).ok());
      raw.push_back(score);
    }
    EXPECT_EQ(raw, gate ? (std::vector<int64_t>{0, 1}) : (std::vector<int64_t>{1, 1}));
  }
}

TEST(TaintTolerationTest, QueueingHintsWithComparisonOperators) {
  using testutil::event;
  using testutil::kWantQueue;
  using testutil::kWantSkip;
  using testutil::obj;
  const api::Pod pod = PodWrapper("pod").toleration("sla", "Gt", "950", "").obj();
  TaintToleration pl(/*comparisonOperators=*/true);
  testutil::expectHints(
      pl,
      {
          {"added node above the threshold",
           event(EventResource::kNode, kAdd),
           pod,
           {},
           obj(NodeWrapper("n1").taint("sla", "999", "NoSchedule")),
           kWantQueue},
          {"added node below the threshold",
           event(EventResource::kNode, kAdd),
           pod,
           {},
           obj(NodeWrapper("n1").taint("sla", "800", "NoSchedule")),
           kWantSkip},
          {"node's value raised above the threshold", event(EventResource::kNode, kUpdateNodeTaint),
           pod, obj(NodeWrapper("n1").taint("sla", "800", "NoSchedule")),
           obj(NodeWrapper("n1").taint("sla", "990", "NoSchedule")), kWantQueue},
      });
}

TEST(TaintTolerationTest, ScoreWithoutPreScoreIsError) {
  TaintToleration pl(/*comparisonOperators=*/false);
  CycleState state;
  auto ni = testutil::makeNodeInfo(NodeWrapper());
  int64_t score = 0;
  Status s = pl.score(state, PodWrapper().obj(), *ni, score);
  EXPECT_EQ(s.code(), Code::kError);
  EXPECT_EQ(s.message(), "failed to read \"PreScoreTaintToleration\" from cycleState: not found");
}

TEST(TaintTolerationTest, QueueingHints) {
  using testutil::event;
  using testutil::kNotRegistered;
  using testutil::kWantQueue;
  using testutil::kWantSkip;
  using testutil::obj;
  constexpr auto kNode = EventResource::kNode;
  const api::Pod pod = PodWrapper("pod").toleration("a", "Equal", "1", "NoSchedule").obj();
  const auto clean = NodeWrapper("n1");
  const auto taintA = NodeWrapper("n1").taint("a", "1", "NoSchedule");
  const auto taintB = NodeWrapper("n1").taint("b", "1", "NoSchedule");
  const auto taintBExecute = NodeWrapper("n1").taint("b", "1", "NoExecute");
  const auto taintBPrefer = NodeWrapper("n1").taint("b", "1", "PreferNoSchedule");
  const auto tolerating = PodWrapper("pod").toleration("b", "Exists", "", "");

  TaintToleration pl(/*comparisonOperators=*/false);
  testutil::expectHints(
      pl,
      {
          {"added node without taints", event(kNode, kAdd), pod, {}, obj(clean), kWantQueue},
          {"added node with a tolerated taint",
           event(kNode, kAdd),
           pod,
           {},
           obj(taintA),
           kWantQueue},
          {"added node with an untolerated NoSchedule taint",
           event(kNode, kAdd),
           pod,
           {},
           obj(taintB),
           kWantSkip},
          {"added node with an untolerated NoExecute taint",
           event(kNode, kAdd),
           pod,
           {},
           obj(taintBExecute),
           kWantSkip},
          {"added node with an untolerated PreferNoSchedule taint",
           event(kNode, kAdd),
           pod,
           {},
           obj(taintBPrefer),
           kWantQueue},
          {"untolerated taint removed", event(kNode, kUpdateNodeTaint), pod, obj(taintB),
           obj(clean), kWantQueue},
          {"untolerated taint replaced by a tolerated one", event(kNode, kUpdateNodeTaint), pod,
           obj(taintB), obj(taintA), kWantQueue},
          {"untolerated taint replaced by another", event(kNode, kUpdateNodeTaint), pod,
           obj(taintB), obj(taintBExecute), kWantSkip},
          {"tolerated before and after", event(kNode, kUpdateNodeTaint), pod, obj(clean),
           obj(taintA), kWantSkip},
          {"untolerated taint added", event(kNode, kUpdateNodeTaint), pod, obj(clean), obj(taintB),
           kWantSkip},
          {"node label update", event(kNode, kUpdateNodeLabel), pod, obj(taintB), obj(clean),
           kNotRegistered},
          {"node allocatable update", event(kNode, kUpdateNodeAllocatable), pod, obj(taintB),
           obj(clean), kNotRegistered},
          {"the pod's tolerations changed",
           event(EventResource::kUnscheduledPod, kUpdatePodTolerations), pod, obj(pod),
           obj(tolerating), kWantQueue},
          {"another pod's tolerations changed",
           event(EventResource::kUnscheduledPod, kUpdatePodTolerations), pod,
           obj(PodWrapper("other")), obj(PodWrapper("other").toleration("b", "Exists", "", "")),
           kWantSkip},
          {"an assigned pod's tolerations changed",
           event(EventResource::kAssignedPod, kUpdatePodTolerations), pod,
           obj(PodWrapper("other").nodeName("n1")),
           obj(PodWrapper("other").nodeName("n1").toleration("b", "Exists", "", "")), kWantSkip},
          {"the pod's labels changed", event(EventResource::kUnscheduledPod, kUpdatePodLabel), pod,
           obj(pod), obj(pod), kNotRegistered},
          {"assigned pod deleted",
           event(EventResource::kAssignedPod, kDelete),
           pod,
           obj(PodWrapper("other").nodeName("n1")),
           {},
           kNotRegistered},
      });
}

// What the plugin says of its rejections (FilterExplainer), as explain shows them.
TEST(TaintTolerationExplain, NamesTheTaintAndWhyAComparisonDidNotTolerateIt) {
  testutil::SnapshotHandle h({}, {NodeWrapper("n1").taint("dedicated", "gpu", "NoSchedule").ptr(),
                                  NodeWrapper("n2").taint("sla", "999", "NoSchedule").ptr(),
                                  NodeWrapper("n3").taint("sla", "high", "NoSchedule").ptr()});
  auto pl = makePlugin(taintTolerationFactory(), nullptr, h);
  EXPECT_EQ(testutil::explainAfterFilter(*pl, h.snapshot(), PodWrapper("p").uid("p").obj(), "n1"),
            std::vector<std::string>{"taint dedicated=gpu:NoSchedule not tolerated"});
  const api::Pod gt = PodWrapper("p").uid("p").toleration("sla", "Gt", "950", "").obj();
  {
    TaintToleration off(/*comparisonOperators=*/false);
    EXPECT_EQ(testutil::explainAfterFilter(off, h.snapshot(), gt, "n2"),
              std::vector<std::string>{
                  "taint sla=999:NoSchedule not tolerated (toleration operator Gt needs the "
                  "TaintTolerationComparisonOperators feature gate)"});
  }
  TaintToleration on(/*comparisonOperators=*/true);
  EXPECT_EQ(testutil::explainAfterFilter(on, h.snapshot(), gt, "n3"),
            std::vector<std::string>{"taint sla=high:NoSchedule not tolerated (toleration sla Gt "
                                     "950 compares integers; the taint's value is not one)"});
}

}  // namespace
}  // namespace ksched::plugins
