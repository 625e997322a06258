// SelectorSpread tables, from v1.20's selector_spread_test.go (TestSelectorSpreadScore,
// TestZoneSelectorSpreadPriority): same pods, nodes and workloads, same normalized scores.
#include "plugins/selector_spread/selector_spread.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <ksched/api/workloads.h>

#include "tests/support/plugin_test_util.h"
#include "tests/support/spread_test_util.h"

namespace ksched::plugins {
namespace {

using spread_test::Node;
using spread_test::Pod;

const api::Labels kLabels1{{"foo", "bar"}, {"baz", "blah"}};
const api::Labels kLabels2{{"bar", "foo"}, {"baz", "blah"}};
constexpr std::string_view kBetaZone = "failure-domain.beta.kubernetes.io/zone";

// The objects that select pods, in the pod's namespace unless said otherwise.
struct Workloads {
  std::vector<api::Labels> services;
  std::vector<api::Labels> rcs;
  std::vector<api::Labels> rss;  // matchLabels
  std::vector<api::Labels> sss;  // matchLabels
  std::string servicesNamespace;
};

// Upstream's test pods have no name, namespace "" unless set.
Pod pod(const api::Labels& labels, const std::string& node = "", const std::string& ns = "") {
  Pod p;
  p.ns(ns).nodeName(node);
  for (const auto& [k, v] : labels) p.label(k, v);
  return p;
}

struct SpreadCase {
  std::string name;
  Pod pod;
  std::vector<Pod> pods;
  Workloads workloads;
  std::vector<NodeScore> want;
};

void addWorkloads(StaticClusterListers& listers, const Workloads& w, const std::string& ns) {
  int n = 0;
  auto meta = [&](api::ObjectMeta& m, const std::string& objNs) {
    m.name = "w" + std::to_string(n++);
    m.namespace_ = objNs;
  };
  for (const api::Labels& sel : w.services) {
    api::Service s;
    meta(s.metadata, w.servicesNamespace.empty() ? ns : w.servicesNamespace);
    s.spec.selector = sel;
    listers.add(s);
  }
  for (const api::Labels& sel : w.rcs) {
    api::ReplicationController rc;
    meta(rc.metadata, ns);
    rc.spec.selector = sel;
    listers.add(rc);
  }
  for (const api::Labels& sel : w.rss) {
    api::ReplicaSet rs;
    meta(rs.metadata, ns);
    rs.spec.selector = spread_test::matchLabels(sel);
    listers.add(rs);
  }
  for (const api::Labels& sel : w.sss) {
    api::StatefulSet ss;
    meta(ss.metadata, ns);
    ss.spec.selector = spread_test::matchLabels(sel);
    listers.add(ss);
  }
}

// PreScore, Score on every node in order, NormalizeScore.
std::vector<NodeScore> runScore(const SpreadCase& c, const std::vector<Node>& nodes) {
  std::vector<PodPtr> pods;
  for (size_t i = 0; i < c.pods.size(); ++i) {
    api::Pod p = c.pods[i].obj();
    p.metadata.name = "p" + std::to_string(i);
    p.metadata.uid = "uid-" + std::to_string(i);
    pods.push_back(std::make_shared<const api::Pod>(std::move(p)));
  }
  std::vector<NodePtr> nodePtrs;
  for (const Node& n : nodes) nodePtrs.push_back(n.ptr());
  testutil::SnapshotHandle h(std::move(pods), std::move(nodePtrs));
  addWorkloads(h.mutableListers(), c.workloads, c.pod.obj().metadata.namespace_);
  auto plugin = makePlugin(selectorSpreadFactory(), nullptr, h);
  auto& pl = dynamic_cast<SelectorSpread&>(*plugin);
  CycleState state;
  const Status pre = pl.preScore(state, c.pod.obj(), h.snapshot().list());
  EXPECT_TRUE(pre.ok() || pre.isSkip()) << pre.message();
  std::vector<NodeScore> scores;
  for (const Node& n : nodes) {
    int64_t v = -1;
    const Status s = pl.score(state, c.pod.obj(), *h.snapshot().get(n.name()), v);
    EXPECT_TRUE(s.ok()) << s.message();
    scores.push_back({n.name(), v});
  }
  const Status s = pl.normalizeScore(state, c.pod.obj(), scores);
  EXPECT_TRUE(s.ok()) << s.message();
  return scores;
}

void expectScores(const std::vector<NodeScore>& got, const std::vector<NodeScore>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].name, want[i].name);
    EXPECT_EQ(got[i].score, want[i].score) << got[i].name;
  }
}

std::vector<NodeScore> two(int64_t m1, int64_t m2) { return {{"machine1", m1}, {"machine2", m2}}; }

class SelectorSpreadScoreTest : public ::testing::TestWithParam<SpreadCase> {};

TEST_P(SelectorSpreadScoreTest, Score) {
  const std::vector<Node> nodes = {Node("machine1"), Node("machine2")};
  expectScores(runScore(GetParam(), nodes), GetParam().want);
}

const std::string kM1 = "machine1";
const std::string kM2 = "machine2";

INSTANTIATE_TEST_SUITE_P(
    Table, SelectorSpreadScoreTest,
    ::testing::Values(
        SpreadCase{"nothingScheduled", pod({}), {}, {}, two(100, 100)},
        SpreadCase{"noServices", pod(kLabels1), {pod({}, kM1)}, {}, two(100, 100)},
        SpreadCase{"differentServices",
                   pod(kLabels1),
                   {pod(kLabels2, kM1)},
                   {.services = {{{"key", "value"}}}},
                   two(100, 100)},
        SpreadCase{"twoPodsOneServicePod",
                   pod(kLabels1),
                   {pod(kLabels2, kM1), pod(kLabels1, kM2)},
                   {.services = {kLabels1}},
                   two(100, 0)},
        SpreadCase{"fivePodsOneServicePodInNoNamespace",
                   pod(kLabels1),
                   {pod(kLabels2, kM1), pod(kLabels1, kM1, "default"), pod(kLabels1, kM1, "ns1"),
                    pod(kLabels1, kM2), pod(kLabels2, kM2)},
                   {.services = {kLabels1}},
                   two(100, 0)},
        SpreadCase{"fourPodsOneServicePodInDefaultNamespace",
                   pod(kLabels1, "", "default"),
                   {pod(kLabels1, kM1), pod(kLabels1, kM1, "ns1"), pod(kLabels1, kM2, "default"),
                    pod(kLabels2, kM2)},
                   {.services = {kLabels1}},
                   two(100, 0)},
        SpreadCase{"fivePodsOneServicePodInSpecificNamespace",
                   pod(kLabels1, "", "ns1"),
                   {pod(kLabels1, kM1), pod(kLabels1, kM1, "default"), pod(kLabels1, kM1, "ns2"),
                    pod(kLabels1, kM2, "ns1"), pod(kLabels2, kM2)},
                   {.services = {kLabels1}},
                   two(100, 0)},
        SpreadCase{"threePodsTwoServicePodsOnDifferentMachines",
                   pod(kLabels1),
                   {pod(kLabels2, kM1), pod(kLabels1, kM1), pod(kLabels1, kM2)},
                   {.services = {kLabels1}},
                   two(0, 0)},
        SpreadCase{"fourPodsThreeServicePods",
                   pod(kLabels1),
                   {pod(kLabels2, kM1), pod(kLabels1, kM1), pod(kLabels1, kM2), pod(kLabels1, kM2)},
                   {.services = {kLabels1}},
                   two(50, 0)},
        SpreadCase{"serviceWithPartialPodLabelMatches",
                   pod(kLabels1),
                   {pod(kLabels2, kM1), pod(kLabels1, kM1), pod(kLabels1, kM2)},
                   {.services = {{{"baz", "blah"}}}},
                   two(0, 50)},
        // "baz=blah" matches labels1 and labels2, "foo=bar" only labels1: pod2 and pod3 spread.
        SpreadCase{"partialMatchesWithServiceAndReplicationController",
                   pod(kLabels1),
                   {pod(kLabels2, kM1), pod(kLabels1, kM1), pod(kLabels1, kM2)},
                   {.services = {{{"baz", "blah"}}}, .rcs = {{{"foo", "bar"}}}},
                   two(0, 0)},
        SpreadCase{"partialMatchesWithServiceAndReplicaSet",
                   pod(kLabels1),
                   {pod(kLabels2, kM1), pod(kLabels1, kM1), pod(kLabels1, kM2)},
                   {.services = {{{"baz", "blah"}}}, .rss = {{{"foo", "bar"}}}},
                   two(0, 0)},
        SpreadCase{"partialMatchesWithServiceAndStatefulSet",
                   pod(kLabels1),
                   {pod(kLabels2, kM1), pod(kLabels1, kM1), pod(kLabels1, kM2)},
                   {.services = {{{"baz", "blah"}}}, .sss = {{{"foo", "bar"}}}},
                   two(0, 0)},
        // Taken together the Service and the controller match no existing pod.
        SpreadCase{"disjointServiceAndReplicationController",
                   pod({{"foo", "bar"}, {"bar", "foo"}}),
                   {pod(kLabels2, kM1), pod(kLabels1, kM1), pod(kLabels1, kM2)},
                   {.services = {{{"bar", "foo"}}}, .rcs = {{{"foo", "bar"}}}},
                   two(100, 100)},
        SpreadCase{"disjointServiceAndReplicaSet",
                   pod({{"foo", "bar"}, {"bar", "foo"}}),
                   {pod(kLabels2, kM1), pod(kLabels1, kM1), pod(kLabels1, kM2)},
                   {.services = {{{"bar", "foo"}}}, .rss = {{{"foo", "bar"}}}},
                   two(100, 100)},
        SpreadCase{"disjointServiceAndStatefulSet",
                   pod({{"foo", "bar"}, {"bar", "foo"}}),
                   {pod(kLabels2, kM1), pod(kLabels1, kM1), pod(kLabels1, kM2)},
                   {.services = {{{"bar", "foo"}}}, .sss = {{{"foo", "bar"}}}},
                   two(100, 100)},
        SpreadCase{"replicationControllerWithPartialPodLabelMatches",
                   pod(kLabels1),
                   {pod(kLabels2, kM1), pod(kLabels1, kM1), pod(kLabels1, kM2)},
                   {.rcs = {{{"foo", "bar"}}}},
                   two(0, 0)},
        SpreadCase{"replicaSetWithPartialPodLabelMatches",
                   pod(kLabels1),
                   {pod(kLabels2, kM1), pod(kLabels1, kM1), pod(kLabels1, kM2)},
                   {.rss = {{{"foo", "bar"}}}},
                   two(0, 0)},
        SpreadCase{"statefulSetWithPartialPodLabelMatches",
                   pod(kLabels1),
                   {pod(kLabels2, kM1), pod(kLabels1, kM1), pod(kLabels1, kM2)},
                   {.sss = {{{"foo", "bar"}}}},
                   two(0, 0)},
        SpreadCase{"anotherReplicationControllerWithPartialPodLabelMatches",
                   pod(kLabels1),
                   {pod(kLabels2, kM1), pod(kLabels1, kM1), pod(kLabels1, kM2)},
                   {.rcs = {{{"baz", "blah"}}}},
                   two(0, 50)},
        SpreadCase{"anotherReplicaSetWithPartialPodLabelMatches",
                   pod(kLabels1),
                   {pod(kLabels2, kM1), pod(kLabels1, kM1), pod(kLabels1, kM2)},
                   {.rss = {{{"baz", "blah"}}}},
                   two(0, 50)},
        SpreadCase{"anotherStatefulSetWithPartialPodLabelMatches",
                   pod(kLabels1),
                   {pod(kLabels2, kM1), pod(kLabels1, kM1), pod(kLabels1, kM2)},
                   {.sss = {{{"baz", "blah"}}}},
                   two(0, 50)},
        SpreadCase{"podWithTopologySpreadConstraintsIsSkipped",
                   pod(kLabels1).spreadConstraint(1, "foo", api::kDoNotSchedule, std::nullopt),
                   {pod(kLabels2, kM1), pod(kLabels1, kM1), pod(kLabels1, kM2)},
                   {.sss = {{{"baz", "blah"}}}},
                   two(0, 0)},
        // Beyond upstream's table: terminating pods are not counted.
        SpreadCase{"terminatingPodsAreNotCounted",
                   pod(kLabels1),
                   {pod(kLabels1, kM1), pod(kLabels1, kM2), pod(kLabels1, kM2).terminating()},
                   {.services = {kLabels1}},
                   two(0, 0)},
        // A Service in another namespace than the pod's selects nothing.
        SpreadCase{"serviceInOtherNamespace",
                   pod(kLabels1, "", "ns1"),
                   {pod(kLabels1, kM1, "ns1")},
                   {.services = {kLabels1}, .servicesNamespace = "ns2"},
                   two(100, 100)}),
    [](const auto& info) { return info.param.name; });

const std::string kM1Z1 = "machine1.zone1";
const std::string kM1Z2 = "machine1.zone2";
const std::string kM2Z2 = "machine2.zone2";
const std::string kM1Z3 = "machine1.zone3";
const std::string kM2Z3 = "machine2.zone3";
const std::string kM3Z3 = "machine3.zone3";

const api::Labels kZLabels1{{"label1", "l1"}, {"baz", "blah"}};
const api::Labels kZLabels2{{"label2", "l2"}, {"baz", "blah"}};

std::vector<NodeScore> six(int64_t a, int64_t b, int64_t c, int64_t d, int64_t e, int64_t f) {
  return {{kM1Z1, a}, {kM1Z2, b}, {kM2Z2, c}, {kM1Z3, d}, {kM2Z3, e}, {kM3Z3, f}};
}

class SelectorSpreadZoneTest : public ::testing::TestWithParam<SpreadCase> {};

TEST_P(SelectorSpreadZoneTest, Score) {
  auto zoned = [](const std::string& name, const std::string& zone) {
    return Node(name).label(std::string(kBetaZone), zone);
  };
  const std::vector<Node> nodes = {zoned(kM1Z1, "zone1"), zoned(kM1Z2, "zone2"),
                                   zoned(kM2Z2, "zone2"), zoned(kM1Z3, "zone3"),
                                   zoned(kM2Z3, "zone3"), zoned(kM3Z3, "zone3")};
  expectScores(runScore(GetParam(), nodes), GetParam().want);
}

INSTANTIATE_TEST_SUITE_P(
    Table, SelectorSpreadZoneTest,
    ::testing::Values(
        SpreadCase{"nothingScheduled", pod({}), {}, {}, six(100, 100, 100, 100, 100, 100)},
        SpreadCase{
            "noServices", pod(kZLabels1), {pod({}, kM1Z1)}, {}, six(100, 100, 100, 100, 100, 100)},
        SpreadCase{"differentServices",
                   pod(kZLabels1),
                   {pod(kZLabels2, kM1Z1)},
                   {.services = {{{"key", "value"}}}},
                   six(100, 100, 100, 100, 100, 100)},
        SpreadCase{"twoPodsNoneMatching",
                   pod(kZLabels1),
                   {pod(kZLabels2, kM1Z1), pod(kZLabels2, kM1Z2)},
                   {.services = {kZLabels1}},
                   six(100, 100, 100, 100, 100, 100)},
        SpreadCase{"twoPodsOneMatchingInZone2",
                   pod(kZLabels1),
                   {pod(kZLabels2, kM1Z1), pod(kZLabels1, kM1Z2)},
                   {.services = {kZLabels1}},
                   six(100, 0, 33, 100, 100, 100)},
        SpreadCase{"fivePodsThreeMatching",
                   pod(kZLabels1),
                   {pod(kZLabels2, kM1Z1), pod(kZLabels1, kM1Z2), pod(kZLabels1, kM2Z2),
                    pod(kZLabels2, kM1Z3), pod(kZLabels1, kM2Z3)},
                   {.services = {kZLabels1}},
                   six(100, 0, 0, 66, 33, 66)},
        SpreadCase{"fourPodsThreeMatchingOnePerZone",
                   pod(kZLabels1),
                   {pod(kZLabels1, kM1Z1), pod(kZLabels1, kM1Z2), pod(kZLabels2, kM2Z2),
                    pod(kZLabels1, kM1Z3)},
                   {.services = {kZLabels1}},
                   six(0, 0, 33, 0, 33, 33)},
        SpreadCase{"fivePodsFourMatching",
                   pod(kZLabels1),
                   {pod(kZLabels1, kM1Z1), pod(kZLabels1, kM1Z2), pod(kZLabels1, kM2Z2),
                    pod(kZLabels2, kM2Z2), pod(kZLabels1, kM1Z3)},
                   {.services = {kZLabels1}},
                   six(33, 0, 0, 33, 66, 66)},
        SpreadCase{"replicationControllerSpreading",
                   pod(kZLabels1),
                   {pod(kZLabels1, kM1Z3), pod(kZLabels1, kM1Z2), pod(kZLabels1, kM1Z3)},
                   {.rcs = {kZLabels1}},
                   six(100, 50, 66, 0, 33, 33)}),
    [](const auto& info) { return info.param.name; });

TEST(SelectorSpreadTest, PreScoreSkipsPodsWithSpreadConstraints) {
  testutil::FakeHandle h;
  SelectorSpread pl(h);
  CycleState state;
  const Pod p = pod(kLabels1).spreadConstraint(1, "zone", api::kScheduleAnyway, std::nullopt);
  EXPECT_TRUE(pl.preScore(state, p.obj(), {}).isSkip());
}

TEST(SelectorSpreadTest, ScoreWithoutPreScoreStateIsError) {
  testutil::FakeHandle h;
  SelectorSpread pl(h);
  CycleState state;
  const auto infos = spread_test::makeNodeInfos({Node("n1")}, {});
  int64_t v = 0;
  const Status s = pl.score(state, pod(kLabels1).obj(), *infos[0], v);
  EXPECT_EQ(s.code(), Code::kError);
  EXPECT_EQ(s.message(), "reading \"PreScoreSelectorSpread\" from cycleState: not found");
}

TEST(SelectorSpreadTest, NormalizeScoreUnknownNodeIsError) {
  testutil::FakeHandle h;
  SelectorSpread pl(h);
  CycleState state;
  std::vector<NodeScore> scores{{"gone", 1}};
  EXPECT_EQ(pl.normalizeScore(state, pod(kLabels1).obj(), scores).code(), Code::kError);
}

// v1.20's GetZoneKey reads the beta labels first and the topology.kubernetes.io ones only when
// a beta label is missing.
TEST(SelectorSpreadTest, LegacyZoneKey) {
  const std::string sep(":\0:", 3);
  EXPECT_EQ(legacyZoneKey(Node("n").obj()), "");
  EXPECT_EQ(legacyZoneKey(Node("n").label(std::string(kBetaZone), "z").obj()), sep + "z");
  EXPECT_EQ(legacyZoneKey(Node("n")
                              .label(std::string(api::kLabelTopologyZone), "tz")
                              .label(std::string(api::kLabelTopologyRegion), "tr")
                              .obj()),
            "tr" + sep + "tz");
  EXPECT_EQ(legacyZoneKey(Node("n")
                              .label(std::string(kBetaZone), "bz")
                              .label(std::string(api::kLabelTopologyZone), "tz")
                              .label(std::string(api::kLabelTopologyRegion), "tr")
                              .label("failure-domain.beta.kubernetes.io/region", "br")
                              .obj()),
            "br" + sep + "bz");
}

}  // namespace
}  // namespace ksched::plugins
