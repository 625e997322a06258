#include "plugins/taint_toleration/taint_toleration.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "plugins/testing/plugin_test_util.h"

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
                   {"node(s) had untolerated taint {dedicated: user1}"}},
        FilterCase{"equalToleration",
                   PodWrapper().toleration("dedicated", "Equal", "user1", "NoSchedule"),
                   NodeWrapper().taint("dedicated", "user1", "NoSchedule"),
                   Code::kSuccess,
                   {}},
        FilterCase{"valueMismatch",
                   PodWrapper().toleration("dedicated", "Equal", "user2", "NoSchedule"),
                   NodeWrapper().taint("dedicated", "user1", "NoSchedule"),
                   Code::kUnschedulableAndUnresolvable,
                   {"node(s) had untolerated taint {dedicated: user1}"}},
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
            {"node(s) had untolerated taint {none: bar}"}},
        FilterCase{
            "effectMismatch",
            PodWrapper().toleration("foo", "Equal", "bar", "NoSchedule"),
            NodeWrapper().taint("foo", "bar", "PreferNoSchedule").taint("foo", "bar", "NoExecute"),
            Code::kUnschedulableAndUnresolvable,
            {"node(s) had untolerated taint {foo: bar}"}},
        FilterCase{"preferNoScheduleIgnored",
                   PodWrapper(),
                   NodeWrapper().taint("foo", "bar", "PreferNoSchedule"),
                   Code::kSuccess,
                   {}},
        FilterCase{"emptyValueTaint",
                   PodWrapper(),
                   NodeWrapper().taint("gpu", "", "NoExecute"),
                   Code::kUnschedulableAndUnresolvable,
                   {"node(s) had untolerated taint {gpu: }"}},
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
  auto plugin = newTaintToleration(nullptr, h);
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

TEST(TaintTolerationTest, Events) {
  TaintToleration pl;
  auto events = pl.eventsToRegister();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_TRUE(events[0].event.matches(events::kNodeAdd));
  EXPECT_TRUE(events[0].event.matches({EventResource::kNode, kUpdateNodeTaint, ""}));
  EXPECT_FALSE(events[0].event.matches({EventResource::kNode, kUpdateNodeAllocatable, ""}));
}

}  // namespace
}  // namespace ksched::plugins
