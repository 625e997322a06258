// PreScore/Score/NormalizeScore tables, ported from upstream's scoring_test.go
// (TestPodTopologySpreadScore, TestPreScoreSkip, TestPreScoreStateEmptyNodes).
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "plugins/pod_topology_spread/pod_topology_spread.h"
#include "tests/support/plugin_test_util.h"
#include "tests/support/spread_test_util.h"

namespace ksched::plugins {
namespace {

using api::kLabelHostname;
using api::kScheduleAnyway;
using spread_test::exists;
using spread_test::fooPods;
using spread_test::Node;
using spread_test::Pod;
using spread_test::SpreadOptions;

constexpr StateKey<spread::PreScoreState> kStateKey{PodTopologySpread::kPreScoreStateKey};
const std::string kHostname(kLabelHostname);
const std::string kHonor(api::kNodeInclusionPolicyHonor);
const std::string kIgnore(api::kNodeInclusionPolicyIgnore);

Node host(const std::string& name) { return Node(name).label(kHostname, name); }
Node zoned(const std::string& name, const std::string& zone) {
  return Node(name).label("zone", zone).label(kHostname, name);
}

// 2/1/0/3 over node-a/b/c/d.
std::vector<Pod> spread2103() {
  return fooPods({{"p-a1", "node-a"},
                  {"p-a2", "node-a"},
                  {"p-b1", "node-b"},
                  {"p-d1", "node-d"},
                  {"p-d2", "node-d"},
                  {"p-d3", "node-d"}});
}

// 4/3/2/1 over node-a/b/c/d.
std::vector<Pod> spread4321() {
  return fooPods({{"p-a1", "node-a"},
                  {"p-a2", "node-a"},
                  {"p-a3", "node-a"},
                  {"p-a4", "node-a"},
                  {"p-b1", "node-b"},
                  {"p-b2", "node-b"},
                  {"p-b3", "node-b"},
                  {"p-c1", "node-c"},
                  {"p-c2", "node-c"},
                  {"p-d1", "node-d"}});
}

// 4/2/1/3 over node-a/b/x/y.
std::vector<Pod> spread4213() {
  return fooPods({{"p-a1", "node-a"},
                  {"p-a2", "node-a"},
                  {"p-a3", "node-a"},
                  {"p-a4", "node-a"},
                  {"p-b1", "node-b"},
                  {"p-b2", "node-b"},
                  {"p-x1", "node-x"},
                  {"p-y1", "node-y"},
                  {"p-y2", "node-y"},
                  {"p-y3", "node-y"}});
}

// p{foo} on a, p{foo,bar} on b, p{foo} and p{bar} on y.
std::vector<Pod> mixedFooBar(const std::string& lastNode) {
  return {Pod("p-a1").nodeName("node-a").label("foo", ""),
          Pod("p-b1").nodeName("node-b").label("foo", "").label("bar", ""),
          Pod("p-y1").nodeName(lastNode).label("foo", ""),
          Pod("p-y2").nodeName(lastNode).label("bar", "")};
}

std::vector<Node> policyNodes(bool fooLabels, bool taintC) {
  Node a = Node("node-a").label("node", "node-a");
  Node b = Node("node-b").label("node", "node-b");
  if (fooLabels) {
    a.label("foo", "");
    b.label("foo", "");
  }
  Node c = Node("node-c").label("node", "node-c");
  if (taintC) c.taint("node.kubernetes.io/unschedulable", "", "NoSchedule");
  return {a, b, c};
}

std::vector<Pod> policyPods() {
  return fooPods({{"p-a1", "node-a"}, {"p-a2", "node-a"}, {"p-b1", "node-b"}, {"p-c1", "node-c"}});
}

struct ScoreCase {
  std::string name;
  Pod pod;
  std::vector<Pod> existingPods;
  std::vector<Node> nodes;        // feasible
  std::vector<Node> failedNodes;  // in the snapshot, not feasible
  std::vector<int64_t> want;
  std::optional<api::Labels> serviceSelector;  // a Service in "default" with this selector
};

// gtest prints the case's name instead of its bytes.
void PrintTo(const ScoreCase& c, std::ostream* os) { *os << c.name; }

class PodTopologySpreadScoreTest : public ::testing::TestWithParam<ScoreCase> {};

TEST_P(PodTopologySpreadScoreTest, Score) {
  const ScoreCase& c = GetParam();
  std::vector<Node> all = c.nodes;
  all.insert(all.end(), c.failedNodes.begin(), c.failedNodes.end());
  testutil::FakeHandle h(testutil::FakeLister(spread_test::makeNodeInfos(all, c.existingPods)));
  if (c.serviceSelector) {
    api::Service svc;
    svc.metadata.name = "svc";
    svc.metadata.namespace_ = "default";
    svc.spec.selector = c.serviceSelector;
    h.mutableListers().add(svc);
  }
  auto plugin = makePlugin(podTopologySpreadFactory(), nullptr, h);
  auto& pl = dynamic_cast<PodTopologySpread&>(*plugin);
  std::vector<const NodeInfo*> feasible;
  for (const Node& n : c.nodes) feasible.push_back(h.snapshot().get(n.name()));

  CycleState state;
  ASSERT_TRUE(pl.preScore(state, c.pod.obj(), feasible).ok());
  std::vector<NodeScore> scores;
  for (const NodeInfo* ni : feasible) {
    int64_t s = -1;
    ASSERT_TRUE(pl.score(state, c.pod.obj(), *ni, s).ok());
    scores.push_back({ni->name(), s});
  }
  // Parallel Score calls come in chunks that start anywhere: every node scores the same in
  // reverse order and from the middle on (found through the map, not the cursor).
  for (const bool reverse : {true, false}) {
    SCOPED_TRACE(reverse ? "reverse order" : "from the middle");
    for (size_t k = 0; k < feasible.size(); ++k) {
      const size_t i =
          reverse ? feasible.size() - 1 - k : (k + feasible.size() / 2) % feasible.size();
      int64_t s = -1;
      ASSERT_TRUE(pl.score(state, c.pod.obj(), *feasible[i], s).ok());
      EXPECT_EQ(s, scores[i].score) << feasible[i]->name();
    }
  }
  ASSERT_TRUE(pl.hasNormalizeScore());
  ASSERT_TRUE(pl.normalizeScore(state, c.pod.obj(), scores).ok());
  std::vector<int64_t> got;
  for (const NodeScore& s : scores) got.push_back(s.score);
  EXPECT_EQ(got, c.want);
}

INSTANTIATE_TEST_SUITE_P(
    Table, PodTopologySpreadScoreTest,
    ::testing::Values(
        ScoreCase{
            "nodeNoExistingPods",
            Pod().label("foo", "").spreadConstraint(1, kHostname, kScheduleAnyway, exists("foo")),
            {},
            {host("node-a"), host("node-b")},
            {},
            {100, 100}},
        ScoreCase{
            "nodeOnlyOneCandidate",
            Pod().label("foo", "").spreadConstraint(1, kHostname, kScheduleAnyway, exists("foo")),
            fooPods({{"p-a1", "node-a"}, {"p-a2", "node-a"}, {"p-b1", "node-b"}}),
            {host("node-a")},
            {host("node-b")},
            {100}},
        ScoreCase{
            "nodeSameNumberOfMatchingPods",
            Pod().label("foo", "").spreadConstraint(1, kHostname, kScheduleAnyway, exists("foo")),
            fooPods({{"p-a1", "node-a"}, {"p-b1", "node-b"}}),
            {host("node-a"), host("node-b")},
            {},
            {100, 100}},
        ScoreCase{
            "nodeAll4Candidates",
            Pod().label("foo", "").spreadConstraint(1, kHostname, kScheduleAnyway, exists("foo")),
            spread2103(),
            {host("node-a"), host("node-b"), host("node-c"), host("node-d")},
            {},
            {20, 60, 100, 0}},
        ScoreCase{
            "nodeNullSelector",
            Pod().label("foo", "").spreadConstraint(1, kHostname, kScheduleAnyway, std::nullopt),
            spread2103(),
            {host("node-a"), host("node-b"), host("node-c"), host("node-d")},
            {},
            {100, 100, 100, 100}},
        ScoreCase{
            "nodeMaxSkew2",
            Pod().label("foo", "").spreadConstraint(2, kHostname, kScheduleAnyway, exists("foo")),
            spread2103(),
            {host("node-a"), host("node-b"), host("node-c"), host("node-d")},
            {},
            {33, 66, 100, 16}},
        ScoreCase{
            "nodeMaxSkew3",
            Pod().label("foo", "").spreadConstraint(3, kHostname, kScheduleAnyway, exists("foo")),
            spread4321(),
            {host("node-a"), host("node-b"), host("node-c"), host("node-d")},
            {},
            {44, 66, 77, 100}},
        // Nodes without a zone still get hostname spreading: the same scores as one constraint
        // on hostname with maxSkew 3.
        ScoreCase{"systemDefaultsNoZoneServiceSelectsPods",
                  Pod().label("foo", ""),
                  spread4321(),
                  {host("node-a"), host("node-b"), host("node-c"), host("node-d")},
                  {},
                  {44, 66, 77, 100},
                  api::Labels{{"foo", ""}}},
        ScoreCase{
            "node3Of4Candidates",
            Pod().label("foo", "").spreadConstraint(1, kHostname, kScheduleAnyway, exists("foo")),
            spread4213(),
            {host("node-a"), host("node-b"), host("node-x")},
            {host("node-y")},
            {33, 83, 100}},
        ScoreCase{
            "node3Of4CandidatesOneMissesTopologyKey",
            Pod().label("foo", "").spreadConstraint(1, kHostname, kScheduleAnyway, exists("foo")),
            spread4213(),
            {host("node-a"), Node("node-b").label("n", "node-b"), host("node-x")},
            {host("node-y")},
            {16, 0, 100}},
        ScoreCase{
            "zone3Of4Candidates",
            Pod().label("foo", "").spreadConstraint(1, "zone", kScheduleAnyway, exists("foo")),
            spread4213(),
            {zoned("node-a", "zone1"), zoned("node-b", "zone1"), zoned("node-x", "zone2")},
            {zoned("node-y", "zone2")},
            {75, 75, 100}},
        ScoreCase{"zoneAndNode2Of4Candidates",
                  Pod()
                      .label("foo", "")
                      .spreadConstraint(1, "zone", kScheduleAnyway, exists("foo"))
                      .spreadConstraint(1, kHostname, kScheduleAnyway, exists("foo")),
                  fooPods({{"p-a1", "node-a"},
                           {"p-a2", "node-a"},
                           {"p-b1", "node-b"},
                           {"p-x1", "node-x"},
                           {"p-x2", "node-x"},
                           {"p-y1", "node-y"},
                           {"p-y2", "node-y"},
                           {"p-y3", "node-y"},
                           {"p-y4", "node-y"}}),
                  {zoned("node-a", "zone1"), zoned("node-x", "zone2")},
                  {zoned("node-b", "zone1"), zoned("node-y", "zone2")},
                  {100, 63}},
        ScoreCase{"zoneAndNodeDifferentSelectors",
                  Pod()
                      .label("foo", "")
                      .label("bar", "")
                      .spreadConstraint(1, "zone", kScheduleAnyway, exists("foo"))
                      .spreadConstraint(1, kHostname, kScheduleAnyway, exists("bar")),
                  mixedFooBar("node-y"),
                  {zoned("node-a", "zone1"), zoned("node-b", "zone1"), zoned("node-x", "zone2"),
                   zoned("node-y", "zone2")},
                  {},
                  {60, 20, 100, 60}},
        ScoreCase{"zoneAndNodeDifferentSelectorsSomeNodesEmpty",
                  Pod()
                      .label("foo", "")
                      .label("bar", "")
                      .spreadConstraint(1, "zone", kScheduleAnyway, exists("foo"))
                      .spreadConstraint(1, kHostname, kScheduleAnyway, exists("bar")),
                  {Pod("p-b1").nodeName("node-b").label("bar", ""),
                   Pod("p-x1").nodeName("node-x").label("foo", ""),
                   Pod("p-y1").nodeName("node-y").label("foo", "").label("bar", "")},
                  {zoned("node-a", "zone1"), zoned("node-b", "zone1"), zoned("node-x", "zone2"),
                   zoned("node-y", "zone2")},
                  {},
                  {100, 60, 40, 0}},
        ScoreCase{"zoneAndNodeDifferentSelectors3Of4Candidates",
                  Pod()
                      .label("foo", "")
                      .label("bar", "")
                      .spreadConstraint(1, "zone", kScheduleAnyway, exists("foo"))
                      .spreadConstraint(1, kHostname, kScheduleAnyway, exists("bar")),
                  mixedFooBar("node-y"),
                  {zoned("node-a", "zone1"), zoned("node-b", "zone1"), zoned("node-x", "zone2")},
                  {zoned("node-y", "zone2")},
                  {50, 25, 100}},
        ScoreCase{
            "podsInOtherNamespacesDoNotCount",
            Pod().label("foo", "").spreadConstraint(1, kHostname, kScheduleAnyway, exists("foo")),
            {Pod("p-a1").ns("ns1").nodeName("node-a").label("foo", ""),
             Pod("p-a2").nodeName("node-a").label("foo", ""),
             Pod("p-b1").nodeName("node-b").label("foo", ""),
             Pod("p-b2").nodeName("node-b").label("foo", "")},
            {host("node-a"), host("node-b")},
            {},
            {100, 33}},
        ScoreCase{
            "terminatingPodsExcluded",
            Pod().label("foo", "").spreadConstraint(1, kHostname, kScheduleAnyway, exists("foo")),
            {Pod("p-a").nodeName("node-a").label("foo", "").terminating(),
             Pod("p-b").nodeName("node-b").label("foo", "")},
            {host("node-a"), host("node-b")},
            {},
            {100, 0}},
        ScoreCase{"minDomainsHasNoEffectWhenScheduleAnyway",
                  Pod().label("foo", "").spreadConstraint(2, "node", kScheduleAnyway, exists("foo"),
                                                          SpreadOptions{.minDomains = 10}),
                  fooPods({{"p-a1", "node-a"},
                           {"p-a2", "node-a"},
                           {"p-b1", "node-b"},
                           {"p-b2", "node-b"},
                           {"p-c1", "node-c"}}),
                  {Node("node-a").label("node", "node-a"), Node("node-b").label("node", "node-b"),
                   Node("node-c").label("node", "node-c")},
                  {},
                  {75, 75, 100}},
        ScoreCase{"nodeAffinityPolicyHonoredNodeSelector",
                  Pod()
                      .label("foo", "")
                      .nodeSelector({{"foo", ""}})
                      .spreadConstraint(1, "node", kScheduleAnyway, exists("foo")),
                  policyPods(),
                  policyNodes(true, false),
                  {},
                  {0, 33, 100}},
        ScoreCase{"nodeAffinityPolicyIgnoredNodeSelector",
                  Pod()
                      .label("foo", "")
                      .nodeSelector({{"foo", ""}})
                      .spreadConstraint(1, "node", kScheduleAnyway, exists("foo"),
                                        SpreadOptions{.nodeAffinityPolicy = kIgnore}),
                  policyPods(),
                  policyNodes(true, false),
                  {},
                  {66, 100, 100}},
        ScoreCase{"nodeAffinityPolicyHonoredNodeAffinity",
                  Pod()
                      .label("foo", "")
                      .nodeAffinity("foo", api::SelectorOperator::kIn, {""})
                      .spreadConstraint(1, "node", kScheduleAnyway, exists("foo")),
                  policyPods(),
                  policyNodes(true, false),
                  {},
                  {0, 33, 100}},
        ScoreCase{"nodeAffinityPolicyIgnoredNodeAffinity",
                  Pod()
                      .label("foo", "")
                      .nodeAffinity("foo", api::SelectorOperator::kIn, {""})
                      .spreadConstraint(1, "node", kScheduleAnyway, exists("foo"),
                                        SpreadOptions{.nodeAffinityPolicy = kIgnore}),
                  policyPods(),
                  policyNodes(true, false),
                  {},
                  {66, 100, 100}},
        ScoreCase{
            "nodeTaintsPolicyHonored",
            Pod().label("foo", "").spreadConstraint(1, "node", kScheduleAnyway, exists("foo"),
                                                    SpreadOptions{.nodeTaintsPolicy = kHonor}),
            policyPods(),
            policyNodes(false, true),
            {},
            {0, 33, 100}},
        ScoreCase{
            "nodeTaintsPolicyIgnored",
            Pod().label("foo", "").spreadConstraint(1, "node", kScheduleAnyway, exists("foo")),
            policyPods(),
            policyNodes(false, true),
            {},
            {66, 100, 100}},
        ScoreCase{"matchLabelKeysWithEmptyLabelSelector",
                  Pod()
                      .label("foo", "")
                      .label("bar", "")
                      .spreadConstraint(1, "zone", kScheduleAnyway, api::LabelSelector{},
                                        SpreadOptions{.matchLabelKeys = {"foo"}})
                      .spreadConstraint(1, kHostname, kScheduleAnyway, api::LabelSelector{},
                                        SpreadOptions{.matchLabelKeys = {"bar"}}),
                  mixedFooBar("node-c"),
                  {zoned("node-a", "zone1"), zoned("node-b", "zone1"), zoned("node-c", "zone2"),
                   zoned("node-d", "zone2")},
                  {},
                  {60, 20, 60, 100}},
        ScoreCase{
            "matchLabelKeysWithLabelSelector",
            Pod()
                .label("foo", "")
                .label("bar", "")
                .label("baz", "")
                .spreadConstraint(1, "zone", kScheduleAnyway, exists("foo"))
                .spreadConstraint(1, kHostname, kScheduleAnyway, exists("bar"),
                                  SpreadOptions{.matchLabelKeys = {"baz"}}),
            {Pod("p-a1").nodeName("node-a").label("foo", ""),
             Pod("p-b1").nodeName("node-b").label("foo", "").label("bar", "").label("baz", ""),
             Pod("p-c1").nodeName("node-c").label("foo", ""),
             Pod("p-c2").nodeName("node-c").label("bar", ""),
             Pod("p-d3").nodeName("node-c").label("bar", "").label("baz", "")},
            {zoned("node-a", "zone1"), zoned("node-b", "zone1"), zoned("node-c", "zone2"),
             zoned("node-d", "zone2")},
            {},
            {60, 20, 60, 100}}),
    [](const auto& info) { return info.param.name; });

// ---- PreScore Skip and state -----------------------------------------------------------------

TEST(PodTopologySpreadPreScoreTest, SkipsWithoutSoftConstraints) {
  testutil::FakeHandle h(testutil::FakeLister(
      spread_test::makeNodeInfos({host("node-a"), Node("node-b").label("planet", "mars")}, {})));
  auto plugin =
      makePlugin(podTopologySpreadFactory(), nlohmann::json{{"defaultingType", "List"}}, h);
  auto& pl = dynamic_cast<PodTopologySpread&>(*plugin);
  const std::vector<const NodeInfo*> nodes = h.snapshot().list();
  CycleState state;
  EXPECT_EQ(pl.preScore(state, Pod().obj(), nodes).code(), Code::kSkip);
  EXPECT_EQ(state.read(kStateKey), nullptr);
  // Only a hard constraint.
  const Pod hard =
      Pod().label("foo", "").spreadConstraint(1, kHostname, api::kDoNotSchedule, exists("foo"));
  EXPECT_EQ(pl.preScore(state, hard.obj(), nodes).code(), Code::kSkip);

  // Default constraints, but the pod's ReplicaSet (rs2) does not exist: nothing selects it.
  auto listPlugin =
      makePlugin(podTopologySpreadFactory(),
                 nlohmann::json::parse(R"({"defaultingType": "List", "defaultConstraints": [
          {"maxSkew": 2, "topologyKey": "planet", "whenUnsatisfiable": "ScheduleAnyway"}]})"),
                 h);
  api::ReplicaSet rs;
  rs.metadata.name = "rs1";
  rs.metadata.namespace_ = "default";
  rs.spec.selector = exists("tar");
  h.mutableListers().add(rs);
  const Pod owned = Pod()
                        .label("foo", "bar")
                        .label("baz", "sup")
                        .ownerReference("ReplicaSet", "rs2", "", true, "apps/v1");
  EXPECT_EQ(
      dynamic_cast<PodTopologySpread&>(*listPlugin).preScore(state, owned.obj(), nodes).code(),
      Code::kSkip);
}

TEST(PodTopologySpreadPreScoreTest, SkipsOnEmptySnapshot) {
  testutil::FakeHandle h;
  auto plugin = makePlugin(podTopologySpreadFactory(), nullptr, h);
  CycleState state;
  const Pod pod =
      Pod().label("foo", "").spreadConstraint(1, kHostname, kScheduleAnyway, exists("foo"));
  EXPECT_EQ(dynamic_cast<PodTopologySpread&>(*plugin).preScore(state, pod.obj(), {}).code(),
            Code::kSkip);
}

TEST(PodTopologySpreadPreScoreTest, NodeWithoutZoneIsIgnored) {
  const std::vector<Node> nodes = {zoned("node-a", "zone1"), zoned("node-b", "zone1"),
                                   host("node-x")};
  testutil::FakeHandle h(testutil::FakeLister(spread_test::makeNodeInfos(nodes, {})));
  auto plugin =
      makePlugin(podTopologySpreadFactory(), nlohmann::json{{"defaultingType", "List"}}, h);
  auto& pl = dynamic_cast<PodTopologySpread&>(*plugin);
  const Pod pod = Pod()
                      .label("foo", "")
                      .spreadConstraint(1, "zone", kScheduleAnyway, exists("foo"))
                      .spreadConstraint(1, kHostname, kScheduleAnyway, exists("bar"));
  CycleState state;
  ASSERT_TRUE(pl.preScore(state, pod.obj(), h.snapshot().list()).ok());
  const spread::PreScoreState* s = state.read(kStateKey);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->ignoredNodes, (spread::NameSet{"node-x"}));
  // NormalizeScore finds the ignored node by its name: the framework must fill the names.
  EXPECT_TRUE(pl.normalizeScoreReadsNames(state));
  EXPECT_EQ(s->topologyValueToPodCounts[0], (spread::ValueCounts{{"zone1", 0}}));
  EXPECT_TRUE(s->topologyValueToPodCounts[1].empty());
  EXPECT_EQ(s->topologyNormalizingWeight, (std::vector<double>{std::log(3.0), std::log(4.0)}));

  std::vector<NodeScore> scores;
  for (const NodeInfo* ni : h.snapshot().list()) {
    int64_t v = -1;
    ASSERT_TRUE(pl.score(state, pod.obj(), *ni, v).ok());
    scores.push_back({ni->name(), v});
  }
  EXPECT_EQ(scores[2].score, 0);
  ASSERT_TRUE(pl.normalizeScore(state, pod.obj(), scores).ok());
  EXPECT_EQ(scores[0].score, 100);
  EXPECT_EQ(scores[1].score, 100);
  EXPECT_EQ(scores[2].score, 0);
}

// System defaults with a ReplicaSet: hostname (maxSkew 3) then zone (maxSkew 5); nodes without a
// zone form their own "" domain.
TEST(PodTopologySpreadPreScoreTest, SystemDefaultsWithReplicaSet) {
  const std::vector<Node> nodes = {
      host("node-a").label(std::string(api::kLabelTopologyZone), "mars"),
      host("node-b").label(std::string(api::kLabelTopologyZone), "mars"), host("node-c"),
      host("node-d")};
  testutil::FakeHandle h(testutil::FakeLister(spread_test::makeNodeInfos(
      nodes, {Pod("p-a1").nodeName("node-a").label("foo", "tar"),
              Pod("p-c1").nodeName("node-c").label("foo", "tar"),
              Pod("p-c2").nodeName("node-c").label("foo", "tar").label("x", "y")})));
  api::ReplicaSet rs;
  rs.metadata.name = "rs1";
  rs.metadata.namespace_ = "default";
  rs.spec.selector = exists("foo");
  h.mutableListers().add(rs);
  auto plugin = makePlugin(podTopologySpreadFactory(), nullptr, h);
  auto& pl = dynamic_cast<PodTopologySpread&>(*plugin);
  const Pod pod = Pod()
                      .label("foo", "tar")
                      .label("baz", "sup")
                      .ownerReference("ReplicaSet", "rs1", "", true, "apps/v1");
  CycleState state;
  ASSERT_TRUE(pl.preScore(state, pod.obj(), h.snapshot().list()).ok());
  const spread::PreScoreState* s = state.read(kStateKey);
  ASSERT_NE(s, nullptr);
  ASSERT_EQ(s->constraints.size(), 2u);
  EXPECT_EQ(s->constraints[0].topologyKey, kHostname);
  EXPECT_EQ(s->constraints[0].maxSkew, 3);
  EXPECT_EQ(s->constraints[1].topologyKey, api::kLabelTopologyZone);
  EXPECT_EQ(s->constraints[1].maxSkew, 5);
  EXPECT_TRUE(s->ignoredNodes.empty());
  EXPECT_FALSE(pl.normalizeScoreReadsNames(state));  // nothing ignored: the names are not read
  EXPECT_EQ(s->topologyValueToPodCounts[1], (spread::ValueCounts{{"mars", 1}, {"", 2}}));
  EXPECT_EQ(s->topologyNormalizingWeight, (std::vector<double>{std::log(6.0), std::log(4.0)}));

  // Raw: hostname count * log(6) + 2, plus zone count * log(4) + 4 where the node has a zone.
  std::vector<int64_t> raw;
  for (const NodeInfo* ni : h.snapshot().list()) {
    int64_t v = -1;
    ASSERT_TRUE(pl.score(state, pod.obj(), *ni, v).ok());
    raw.push_back(v);
  }
  EXPECT_EQ(raw, (std::vector<int64_t>{
                     static_cast<int64_t>(std::round(std::log(6.0) + 2 + std::log(4.0) + 4)),
                     static_cast<int64_t>(std::round(2 + std::log(4.0) + 4)),
                     static_cast<int64_t>(std::round(2 * std::log(6.0) + 2)), 2}));
  EXPECT_EQ(raw, (std::vector<int64_t>{9, 7, 6, 2}));
}

TEST(PodTopologySpreadPreScoreTest, ScoreWithoutPreScoreStateIsError) {
  testutil::FakeHandle h;
  auto plugin = makePlugin(podTopologySpreadFactory(), nullptr, h);
  auto& pl = dynamic_cast<PodTopologySpread&>(*plugin);
  CycleState state;
  const auto infos = spread_test::makeNodeInfos({host("node-a")}, {});
  int64_t v = 0;
  EXPECT_EQ(pl.score(state, Pod().obj(), *infos[0], v).code(), Code::kError);
  std::vector<NodeScore> scores{{"node-a", 1}};
  EXPECT_EQ(pl.normalizeScore(state, Pod().obj(), scores).code(), Code::kError);
}

}  // namespace
}  // namespace ksched::plugins
