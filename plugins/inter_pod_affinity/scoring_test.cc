#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "plugins/inter_pod_affinity/inter_pod_affinity.h"
#include "tests/support/inter_pod_affinity_test_util.h"

namespace ksched::plugins {
namespace {

using ipatest::Affinity;
using ipatest::expr;
using ipatest::in;
using ipatest::json;
using ipatest::makeNode;
using ipatest::makePod;
using ipatest::SnapshotHandle;
using ipatest::term;
using ipatest::weighted;

struct ScoreCase {
  std::string name;
  PodPtr pod;
  std::vector<PodPtr> pods;
  std::vector<NodePtr> nodes;
  std::vector<int64_t> raw;         // Score, per node
  std::vector<int64_t> normalized;  // after NormalizeScore
  bool wantSkip = false;
  json args = {{"hardPodAffinityWeight", 1}};
};

void PrintTo(const ScoreCase& c, std::ostream* os) { *os << c.name; }

class InterPodAffinityScoreTest : public ::testing::TestWithParam<ScoreCase> {};

TEST_P(InterPodAffinityScoreTest, Score) {
  const ScoreCase& c = GetParam();
  SnapshotHandle h(c.pods, c.nodes);
  auto p = makePlugin(interPodAffinityFactory(), c.args, h);
  auto* pl = dynamic_cast<InterPodAffinity*>(p.get());
  ASSERT_NE(pl, nullptr);
  std::vector<const NodeInfo*> feasible;
  for (const auto& n : c.nodes) feasible.push_back(&h.nodeInfo(n->metadata.name));
  CycleState state;
  Status pre = pl->preScore(state, *c.pod, feasible);
  if (c.wantSkip) {
    EXPECT_TRUE(pre.isSkip()) << pre.message();
    return;
  }
  ASSERT_TRUE(pre.ok()) << pre.message();
  std::vector<NodeScore> scores;
  std::vector<int64_t> raw;
  for (const NodeInfo* ni : feasible) {
    int64_t s = -12345;
    Status st = pl->score(state, *c.pod, *ni, s);
    ASSERT_TRUE(st.ok()) << st.message();
    raw.push_back(s);
    scores.push_back({ni->name(), s});
  }
  EXPECT_EQ(raw, c.raw);
  ASSERT_TRUE(pl->normalizeScore(state, *c.pod, scores).ok());
  std::vector<int64_t> normalized;
  for (size_t i = 0; i < scores.size(); ++i) {
    EXPECT_EQ(scores[i].name, c.nodes[i]->metadata.name);
    normalized.push_back(scores[i].score);
  }
  EXPECT_EQ(normalized, c.normalized);
}

const json kRgChina = {{"region", "China"}};
const json kRgIndia = {{"region", "India"}};
const json kAzAz1 = {{"az", "az1"}};
const json kAzAz2 = {{"az", "az2"}};
const json kRgChinaAzAz1 = {{"region", "China"}, {"az", "az1"}};
const json kS1 = {{"security", "S1"}};
const json kS2 = {{"security", "S2"}};
const json kTeam1 = {{"matchExpressions", {expr("team", "In", {"team1"})}}};

std::vector<NodePtr> nodes(const std::vector<json>& labels) {
  std::vector<NodePtr> out;
  for (size_t i = 0; i < labels.size(); ++i) {
    out.push_back(makeNode("node" + std::to_string(i + 1), labels[i]));
  }
  return out;
}

// Pods named e<k> on the given nodes, in namespace "" unless given.
PodPtr on(const std::string& node, const json& labels, const Affinity& a = {},
          const std::string& ns = "") {
  static int next = 0;
  return makePod("e" + std::to_string(++next), ns, labels, node, a);
}

// Upstream TestPreferredAffinity.
std::vector<ScoreCase> preferredCases() {
  const Affinity stayWithS1InRegion{.preferred = {weighted(5, in("security", {"S1"}, "region"))}};
  const Affinity stayWithS2InRegion{.preferred = {weighted(6, in("security", {"S2"}, "region"))}};
  const Affinity affinity3{
      .preferred = {
          weighted(8, term({expr("security", "NotIn", {"S1"}), expr("security", "In", {"S2"})},
                           "region")),
          weighted(
              2, term({expr("security", "Exists"), expr("wrongkey", "DoesNotExist")}, "region"))}};
  const Affinity hardAffinity{
      .required = {in("security", {"S1", "value2"}, "region"),
                   term({expr("security", "Exists"), expr("wrongkey", "DoesNotExist")}, "region")}};
  const Affinity awayFromS1InAz{.preferredAnti = {weighted(5, in("security", {"S1"}, "az"))}};
  const Affinity awayFromS2InAz{.preferredAnti = {weighted(5, in("security", {"S2"}, "az"))}};
  const Affinity stayS1AwayS2{.preferred = {weighted(8, in("security", {"S1"}, "region"))},
                              .preferredAnti = {weighted(5, in("security", {"S2"}, "az"))}};
  const json nsExtra = {{"namespaces", {"subteam2.team2"}}, {"namespaceSelector", kTeam1}};
  const Affinity affinityNsSelector{
      .preferred = {weighted(5, in("security", {"S1"}, "region", nsExtra))}};
  const Affinity antiAffinityNsSelector{
      .preferredAnti = {weighted(5, in("security", {"S1"}, "region", nsExtra))}};
  const auto threeNodes = nodes({kRgChina, kRgIndia, kAzAz1});

  std::vector<ScoreCase> c;
  c.push_back({"NoAffinityAnywhereSkips", makePod("p", "", kS1), {}, threeNodes, {}, {}, true});
  c.push_back({"AffinityMatchingTopologyAndPods",
               makePod("p", "", kS1, "", stayWithS1InRegion),
               {on("node1", kS1), on("node2", kS2), on("node3", kS1)},
               threeNodes,
               {5, 0, 0},
               {100, 0, 0}});
  c.push_back({"AffinitySameTopologyValueSameScore",
               makePod("p", "", json::object(), "", stayWithS1InRegion),
               {on("node1", kS1)},
               nodes({kRgChina, kRgChinaAzAz1, kRgIndia}),
               {5, 5, 0},
               {100, 100, 0}});
  c.push_back({"AffinityRegionWithMoreMatchesWins",
               makePod("p", "", kS1, "", stayWithS2InRegion),
               {on("node1", kS2), on("node1", kS2), on("node2", kS2), on("node3", kS2),
                on("node4", kS2), on("node5", kS2)},
               nodes({kRgChina, kRgIndia, kRgChina, kRgChina, kRgIndia}),
               {24, 12, 24, 24, 12},
               {100, 0, 100, 100, 0}});
  c.push_back({"AffinityOperatorsAndPartialMatches",
               makePod("p", "", kS1, "", affinity3),
               {on("node1", kS1), on("node2", kS2), on("node3", kS1)},
               threeNodes,
               {2, 10, 0},
               {20, 100, 0}});
  c.push_back({"SymmetryPreferredAffinity",
               makePod("p", "", kS2),
               {on("node1", kS1, stayWithS1InRegion), on("node2", kS2, stayWithS2InRegion)},
               threeNodes,
               {0, 6, 0},
               {0, 100, 0}});
  c.push_back({"SymmetryAffinityNamespaceSelector",
               makePod("p", "subteam1.team1", kS1),
               {on("node1", kS1, affinityNsSelector), on("node2", kS2, stayWithS2InRegion)},
               threeNodes,
               {5, 0, 0},
               {100, 0, 0}});
  c.push_back({"SymmetryAntiAffinityNamespaceSelector",
               makePod("p", "subteam1.team1", kS1),
               {on("node1", kS1, antiAffinityNsSelector), on("node2", kS2, stayWithS2InRegion)},
               threeNodes,
               {-5, 0, 0},
               {0, 100, 100}});
  c.push_back({"SymmetryRequiredAffinity",
               makePod("p", "", kS1),
               {on("node1", kS1, hardAffinity), on("node2", kS2, hardAffinity)},
               threeNodes,
               {2, 2, 0},
               {100, 100, 0}});
  c.push_back({"AntiAffinityMatchingPodScoresLow",
               makePod("p", "", kS1, "", awayFromS1InAz),
               {on("node1", kS1), on("node2", kS2)},
               nodes({kAzAz1, kRgChina}),
               {-5, 0},
               {0, 100}});
  c.push_back({"AntiAffinityTopologyMismatchScoresHigh",
               makePod("p", "", kS1, "", awayFromS1InAz),
               {on("node1", kS1), on("node2", kS1)},
               nodes({kAzAz1, kRgChina}),
               {-5, 0},
               {0, 100}});
  c.push_back({"AntiAffinityMoreMatchesScoreLower",
               makePod("p", "", kS1, "", awayFromS1InAz),
               {on("node1", kS1), on("node1", kS1), on("node2", kS2)},
               nodes({kAzAz1, kRgIndia}),
               {-10, 0},
               {0, 100}});
  c.push_back({"SymmetryPreferredAntiAffinity",
               makePod("p", "", kS2),
               {on("node1", kS1, awayFromS2InAz), on("node2", kS2, awayFromS1InAz)},
               nodes({kAzAz1, kAzAz2}),
               {-5, 0},
               {0, 100}});
  c.push_back({"AffinityAndAntiAffinity",
               makePod("p", "", kS1, "", stayS1AwayS2),
               {on("node1", kS1), on("node2", kS1)},
               nodes({kRgChina, kAzAz1}),
               {8, 0},
               {100, 0}});
  c.push_back({"AffinityAndAntiAffinitySameLabels",
               makePod("p", "", kS1, "", stayS1AwayS2),
               {on("node1", kS1), on("node1", kS1), on("node2", kS1), on("node3", kS1),
                on("node3", kS1), on("node4", kS1), on("node5", kS1)},
               nodes({kRgChinaAzAz1, kRgIndia, kRgChina, kRgChina, kRgIndia}),
               {40, 16, 40, 40, 16},
               {100, 0, 100, 100, 0}});
  c.push_back({"AffinityAntiAffinityAndSymmetry",
               makePod("p", "", kS1, "", stayS1AwayS2),
               {on("node1", kS1), on("node2", kS2), on("node3", json::object(), stayS1AwayS2),
                on("node4", json::object(), awayFromS1InAz)},
               nodes({kRgChina, kAzAz1, kRgIndia, kAzAz2}),
               {8, -5, 8, -5},
               {100, 0, 100, 0}});
  c.push_back({"PartialTopologyWithoutAffinityPods",
               makePod("p", "", kS1),
               {on("node1", kS1), on("node2", json::object(), stayS1AwayS2)},
               nodes({kRgChina, kRgChina}),
               {8, 8},
               {0, 0}});
  const auto chinaIndia = nodes({kRgChina, kRgIndia});
  c.push_back({"AffinityNamespaceSelector",
               makePod("p", "subteam1.team1", kS1, "", affinityNsSelector),
               {on("node1", kS1, {}, "subteam1.team1"), on("node1", kS1, {}, "subteam1.team1"),
                on("node1", kS1, {}, "subteam1.team2"), on("node2", kS1, {}, "subteam2.team1")},
               chinaIndia,
               {10, 5},
               {100, 0}});
  c.push_back({"AffinityNamespaceSelectorAndNamespaces",
               makePod("p", "subteam1.team1", kS1, "", affinityNsSelector),
               {on("node1", kS1, {}, "subteam1.team1"), on("node1", kS1, {}, "subteam1.team1"),
                on("node1", kS1, {}, "subteam2.team2"), on("node2", kS1, {}, "subteam2.team1")},
               chinaIndia,
               {15, 5},
               {100, 0}});
  c.push_back({"AntiAffinityNamespaceSelector",
               makePod("p", "subteam1.team1", kS1, "", antiAffinityNsSelector),
               {on("node1", kS1, {}, "subteam1.team1"), on("node1", kS1, {}, "subteam1.team1"),
                on("node1", kS1, {}, "subteam1.team2"), on("node2", kS1, {}, "subteam2.team1")},
               chinaIndia,
               {-10, -5},
               {0, 100}});
  c.push_back({"AntiAffinityNamespaceSelectorAndNamespaces",
               makePod("p", "subteam1.team1", kS1, "", antiAffinityNsSelector),
               {on("node1", kS1, {}, "subteam1.team1"), on("node1", kS1, {}, "subteam1.team1"),
                on("node1", kS1, {}, "subteam2.team2"), on("node2", kS1, {}, "subteam2.team1")},
               chinaIndia,
               {-15, -5},
               {0, 100}});
  const std::vector<PodPtr> preferringPods{on("node1", kS1, stayS1AwayS2),
                                           on("node2", kS2, stayWithS2InRegion)};
  c.push_back({"IgnorePreferredTermsOfExistingPods",
               makePod("p", "", kS2),
               preferringPods,
               chinaIndia,
               {},
               {},
               true,
               {{"hardPodAffinityWeight", 1}, {"ignorePreferredTermsOfExistingPods", true}}});
  c.push_back({"DoNotIgnorePreferredTermsOfExistingPods",
               makePod("p", "", kS2),
               preferringPods,
               chinaIndia,
               {0, 6},
               {0, 100}});
  c.push_back({"IgnoreStillScoresWhenPodHasPreferredTerms",
               makePod("p", "", kS2, "", stayWithS2InRegion),
               preferringPods,
               chinaIndia,
               {0, 12},
               {0, 100},
               false,
               {{"ignorePreferredTermsOfExistingPods", true}}});
  c.push_back({"NoNodesToScoreSkips", makePod("p", "", kS2), {}, {}, {}, {}, true});
  return c;
}

// Upstream TestPreferredAffinityWithHardPodAffinitySymmetricWeight.
std::vector<ScoreCase> hardWeightCases() {
  const Affinity hardPodAffinity{
      .required = {in("service", {"S1"}, "region",
                      {{"namespaces", {"", "subteam2.team2"}}, {"namespaceSelector", kTeam1}})}};
  const json s1 = {{"service", "S1"}};
  const auto threeNodes = nodes({kRgChina, kRgIndia, kAzAz1});
  const std::vector<PodPtr> pods{on("node1", json::object(), hardPodAffinity),
                                 on("node2", json::object(), hardPodAffinity)};
  const json weight1 = {{"hardPodAffinityWeight", 1}};
  std::vector<ScoreCase> c;
  c.push_back({"DefaultWeight",
               makePod("p", "", s1),
               pods,
               threeNodes,
               {1, 1, 0},
               {100, 100, 0},
               false,
               nullptr});
  c.push_back({"WeightFive",
               makePod("p", "", s1),
               pods,
               threeNodes,
               {5, 5, 0},
               {100, 100, 0},
               false,
               {{"hardPodAffinityWeight", 5}}});
  c.push_back({"ZeroWeightSkips",
               makePod("p", "", s1),
               pods,
               threeNodes,
               {},
               {},
               true,
               {{"hardPodAffinityWeight", 0}}});
  c.push_back({"NoMatchingNamespaceSkips",
               makePod("p", "subteam1.team2", s1),
               pods,
               threeNodes,
               {},
               {},
               true,
               weight1});
  c.push_back({"MatchingNamespaceSelector",
               makePod("p", "subteam1.team1", s1),
               pods,
               threeNodes,
               {1, 1, 0},
               {100, 100, 0},
               false,
               weight1});
  c.push_back({"MatchingNamespaces",
               makePod("p", "subteam2.team2", s1),
               pods,
               threeNodes,
               {1, 1, 0},
               {100, 100, 0},
               false,
               weight1});
  // The existing pod's matchLabelKeys take its own label values.
  const Affinity sameVersion{
      .required = {in("service", {"S1"}, "region", {{"matchLabelKeys", {"version"}}})}};
  c.push_back({"ExistingMatchLabelKeys",
               makePod("p", "", {{"service", "S1"}, {"version", "v2"}}),
               {on("node1", {{"version", "v1"}}, sameVersion),
                on("node2", {{"version", "v2"}}, sameVersion)},
               threeNodes,
               {0, 1, 0},
               {0, 100, 0},
               false,
               weight1});
  return c;
}

std::string caseName(const ::testing::TestParamInfo<ScoreCase>& info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(Preferred, InterPodAffinityScoreTest,
                         ::testing::ValuesIn(preferredCases()), caseName);
INSTANTIATE_TEST_SUITE_P(HardPodAffinityWeight, InterPodAffinityScoreTest,
                         ::testing::ValuesIn(hardWeightCases()), caseName);

TEST(InterPodAffinityNormalize, MapsMinToZeroAndMaxToHundred) {
  SnapshotHandle h({on("node1", {{"app", "x"}})}, nodes({kRgChina}));
  auto pl = makePlugin(interPodAffinityFactory(), nullptr, h);
  auto* ipa = dynamic_cast<InterPodAffinity*>(pl.get());
  CycleState state;
  const PodPtr pod = makePod("p", "", json::object(), "",
                             {.preferred = {weighted(3, in("app", {"x"}, "region"))}});
  ASSERT_TRUE(ipa->preScore(state, *pod, {&h.nodeInfo("node1")}).ok());
  std::vector<NodeScore> scores{{"a", -7}, {"b", 3}, {"c", 0}, {"d", 13}};
  ASSERT_TRUE(ipa->normalizeScore(state, *pod, scores).ok());
  // 100 * (s - min) / (max - min), truncated: (0, 50, 35, 100).
  EXPECT_EQ(scores[0].score, 0);
  EXPECT_EQ(scores[1].score, 50);
  EXPECT_EQ(scores[2].score, 35);
  EXPECT_EQ(scores[3].score, 100);
}

TEST(InterPodAffinityNormalize, WithoutPreScoreStateIsAnError) {
  SnapshotHandle h({}, nodes({kRgChina}));
  auto pl = makePlugin(interPodAffinityFactory(), nullptr, h);
  auto* ipa = dynamic_cast<InterPodAffinity*>(pl.get());
  CycleState state;
  const PodPtr pod = makePod("p", "", json::object());
  std::vector<NodeScore> scores{{"node1", 1}};
  Status s = ipa->normalizeScore(state, *pod, scores);
  EXPECT_EQ(s.code(), Code::kError);
  EXPECT_EQ(s.message(), "failed to read \"PreScoreInterPodAffinity\" from cycleState: not found");
  int64_t score = 0;
  s = ipa->score(state, *pod, h.nodeInfo("node1"), score);
  EXPECT_EQ(s.code(), Code::kError);
}

}  // namespace
}  // namespace ksched::plugins
