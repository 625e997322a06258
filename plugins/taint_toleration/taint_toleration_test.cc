#include "plugins/taint_toleration/taint_toleration.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

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
  TaintToleration pl;
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
  ASSERT_TRUE(pl.normalizeScore(state, c.pod.obj(), scores).ok());
  std::vector<int64_t> normalized;
  normalized.reserve(scores.size());
  for (const auto& s : scores) normalized.push_back(s.score);
  EXPECT_EQ(normalized, c.wantNormalized);
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

TEST(TaintTolerationTest, ScoreWithoutPreScoreIsError) {
  TaintToleration pl;
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

  TaintToleration pl;
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

}  // namespace
}  // namespace ksched::plugins
