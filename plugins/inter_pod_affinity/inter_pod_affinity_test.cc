#include "plugins/inter_pod_affinity/inter_pod_affinity.h"

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/inter_pod_affinity_test_util.h"

namespace ksched::plugins {
namespace {

using ipatest::Affinity;
using ipatest::exists;
using ipatest::expr;
using ipatest::in;
using ipatest::json;
using ipatest::makeNode;
using ipatest::makePod;
using ipatest::notIn;
using ipatest::SnapshotHandle;
using ipatest::term;

constexpr std::string_view kAffinity = InterPodAffinity::kErrReasonAffinityRulesNotMatch;
constexpr std::string_view kAnti = InterPodAffinity::kErrReasonAntiAffinityRulesNotMatch;
constexpr std::string_view kExisting =
    InterPodAffinity::kErrReasonExistingAntiAffinityRulesNotMatch;

std::unique_ptr<InterPodAffinity> makePlugin(Handle& h, const json& args = nullptr) {
  auto p = makePlugin(interPodAffinityFactory(), args, h);
  return std::unique_ptr<InterPodAffinity>(dynamic_cast<InterPodAffinity*>(p.release()));
}

struct Want {
  Code code = Code::kSuccess;
  std::string_view reason;
};
const Want kOk{};
const Want kRejectAffinity{Code::kUnschedulableAndUnresolvable, kAffinity};
const Want kRejectAnti{Code::kUnschedulable, kAnti};
const Want kRejectExisting{Code::kUnschedulable, kExisting};

struct FilterCase {
  std::string name;
  PodPtr pod;
  std::vector<PodPtr> pods;
  std::vector<NodePtr> nodes;
  std::vector<Want> want;  // one per node; ignored when PreFilter skips
  bool wantSkip = false;
  std::vector<api::Namespace> namespaces = ipatest::teamNamespaces();
};

void PrintTo(const FilterCase& c, std::ostream* os) { *os << c.name; }

void expectStatus(const Status& s, const Want& w, const std::string& where) {
  EXPECT_EQ(s.code(), w.code) << where << ": " << s.message();
  if (w.code == Code::kSuccess) {
    EXPECT_TRUE(s.reasons().empty()) << where;
  } else {
    EXPECT_EQ(s.reasons(), std::vector<std::string>{std::string(w.reason)}) << where;
  }
}

class InterPodAffinityFilterTest : public ::testing::TestWithParam<FilterCase> {};

TEST_P(InterPodAffinityFilterTest, Filter) {
  const FilterCase& c = GetParam();
  SnapshotHandle h(c.pods, c.nodes, c.namespaces);
  auto pl = makePlugin(h);
  CycleState state;
  PreFilterResult result;
  Status pre = pl->preFilter(state, *c.pod, h.snapshot(), result);
  if (c.wantSkip) {
    EXPECT_TRUE(pre.isSkip()) << pre.message();
    EXPECT_FALSE(InterPodAffinity::preFilterCountsForTest(state).has_value());
    return;
  }
  ASSERT_TRUE(pre.ok()) << pre.message();
  EXPECT_FALSE(result.nodeNames.has_value());
  ASSERT_EQ(c.want.size(), c.nodes.size());
  for (size_t i = 0; i < c.nodes.size(); ++i) {
    const std::string& name = c.nodes[i]->metadata.name;
    expectStatus(pl->filter(state, *c.pod, h.nodeInfo(name)), c.want[i], name);
  }
}

const json kPodLabel = {{"service", "securityscan"}};
const json kPodLabel2 = {{"security", "S1"}};
const json kLabels1 = {{"region", "r1"}, {"zone", "z11"}};
const json kRgChina = {{"region", "China"}};
const json kRgChinaAzAz1 = {{"region", "China"}, {"az", "az1"}};
const json kRgIndia = {{"region", "India"}};
const json kTeam1 = {{"matchExpressions", {expr("team", "In", {"team1"})}}};

json hostZone(const std::string& zone, const std::string& host) {
  return {{"region", "r1"}, {"zone", zone}, {"hostname", host}};
}

// Upstream TestRequiredAffinitySingleNode: one node (region r1, zone z11).
std::vector<FilterCase> singleNodeCases() {
  const std::vector<NodePtr> node1{makeNode("node1", kLabels1)};
  const PodPtr existing = makePod("existing", "", kPodLabel, "node1");
  const json securityIn = in("service", {"securityscan", "value2"}, "region");
  std::vector<FilterCase> cases;
  auto add = [&](std::string name, PodPtr pod, std::vector<PodPtr> pods, Want want,
                 bool skip = false) {
    cases.push_back({std::move(name), std::move(pod), std::move(pods), node1, {want}, skip});
  };
  add("NoAffinityNoPodsSkips", makePod("p", "", json::object()), {}, kOk, true);
  add("AffinityInMatches", makePod("p", "", kPodLabel2, "", {.required = {securityIn}}), {existing},
      kOk);
  add("AffinityNotInMatches",
      makePod("p", "", kPodLabel2, "",
              {.required = {notIn("service", {"securityscan3", "value3"}, "region")}}),
      {existing}, kOk);
  add("AffinityOtherNamespace",
      makePod("p", "", kPodLabel2, "",
              {.required = {in("service", {"securityscan", "value2"}, "",
                               {{"namespaces", {"DiffNameSpace"}}})}}),
      {makePod("e", "ns", kPodLabel, "node1")}, kRejectAffinity);
  add("AffinitySelectorMismatch",
      makePod("p", "", kPodLabel, "",
              {.required = {in("service", {"antivirusscan", "value2"}, "")}}),
      {existing}, kRejectAffinity);
  add("AffinityTermsWithOperators",
      makePod("p", "", kPodLabel2, "",
              {.required = {term({expr("service", "Exists"), expr("wrongkey", "DoesNotExist")},
                                 "region"),
                            term({expr("service", "In", {"securityscan"}),
                                  expr("service", "NotIn", {"WrongValue"})},
                                 "region")}}),
      {existing}, kOk);
  add("AffinityRequirementsAreAnded",
      makePod("p", "", kPodLabel2, "",
              {.required = {term({expr("service", "Exists"), expr("wrongkey", "DoesNotExist")},
                                 "region"),
                            term({expr("service", "In", {"securityscan2"}),
                                  expr("service", "NotIn", {"WrongValue"})},
                                 "region")}}),
      {existing}, kRejectAffinity);
  const json antiAntivirus = in("service", {"antivirusscan", "value2"}, "node");
  add("AffinityAndAntiAffinity",
      makePod("p", "", kPodLabel2, "", {.required = {securityIn}, .requiredAnti = {antiAntivirus}}),
      {existing}, kOk);
  add("AffinityAntiAffinityAndSymmetry",
      makePod("p", "", kPodLabel2, "", {.required = {securityIn}, .requiredAnti = {antiAntivirus}}),
      {makePod("e", "", kPodLabel, "node1", {.requiredAnti = {antiAntivirus}})}, kOk);
  add("AntiAffinityViolated",
      makePod("p", "", kPodLabel2, "",
              {.required = {securityIn},
               .requiredAnti = {in("service", {"securityscan", "value2"}, "zone")}}),
      {existing}, kRejectAnti);
  add("ExistingAntiAffinityViolated",
      makePod("p", "", kPodLabel, "", {.required = {securityIn}, .requiredAnti = {antiAntivirus}}),
      {makePod("e", "", kPodLabel, "node1",
               {.requiredAnti = {in("service", {"securityscan", "value2"}, "zone")}})},
      kRejectExisting);
  add("OwnLabelsDoNotMatchNotIn",
      makePod("p", "", kPodLabel, "",
              {.required = {notIn("service", {"securityscan", "value2"}, "region")}}),
      {makePod("e", "", kPodLabel, "node2")}, kRejectAffinity);
  add("ExistingAntiAffinityWithoutIncomingTerms", makePod("p", "", kPodLabel),
      {makePod("e", "", kPodLabel, "node1",
               {.requiredAnti = {in("service", {"securityscan", "value2"}, "zone")}})},
      kRejectExisting);
  add("ExistingAntiAffinityNotInSkips", makePod("p", "", kPodLabel),
      {makePod("e", "", kPodLabel, "node1",
               {.requiredAnti = {notIn("service", {"securityscan", "value2"}, "zone")}})},
      kOk, true);
  add("IncomingAntiAffinityBeforeSymmetry",
      makePod("p", "", kPodLabel, "",
              {.requiredAnti = {exists("service", "region"), exists("security", "region")}}),
      {makePod("e", "", kPodLabel2, "node1", {.requiredAnti = {exists("security", "zone")}})},
      kRejectAnti);
  add("SymmetryA1",
      makePod("p", "", kPodLabel, "",
              {.requiredAnti = {exists("service", "zone"), exists("security", "zone")}}),
      {makePod("e", "", kPodLabel2, "node1", {.requiredAnti = {exists("security", "zone")}})},
      kRejectAnti);
  add("SymmetryA2",
      makePod("p", "", kPodLabel2, "", {.requiredAnti = {exists("security", "zone")}}),
      {makePod("e", "", kPodLabel, "node1",
               {.requiredAnti = {exists("service", "zone"), exists("security", "zone")}})},
      kRejectExisting);
  const Affinity abcDef{.requiredAnti = {exists("abc", "zone"), exists("def", "zone")}};
  add("SymmetryB1", makePod("p", "", {{"abc", ""}, {"xyz", ""}}, "", abcDef),
      {makePod("e", "", {{"def", ""}, {"xyz", ""}}, "node1", abcDef)}, kRejectAnti);
  add("SymmetryB2", makePod("p", "", {{"def", ""}, {"xyz", ""}}, "", abcDef),
      {makePod("e", "", {{"abc", ""}, {"xyz", ""}}, "node1", abcDef)}, kRejectAnti);
  const json nsSelAffinity =
      in("service", {"securityscan", "value2"}, "region", {{"namespaceSelector", kTeam1}});
  add("AffinityNamespaceSelectorMatches",
      makePod("p", "", kPodLabel2, "", {.required = {nsSelAffinity}}),
      {makePod("e", "subteam1.team1", kPodLabel, "node1")}, kOk);
  add("AffinityNamespaceSelectorMismatch",
      makePod("p", "", kPodLabel2, "", {.required = {nsSelAffinity}}),
      {makePod("e", "subteam1.team2", kPodLabel, "node1")}, kRejectAffinity);
  const json nsSelAnti =
      in("service", {"securityscan", "value2"}, "zone", {{"namespaceSelector", kTeam1}});
  add("AntiAffinityNamespaceSelectorMatches",
      makePod("p", "subteam1.team1", kPodLabel2, "", {.requiredAnti = {nsSelAnti}}),
      {makePod("e", "subteam2.team1", kPodLabel, "node1")}, kRejectAnti);
  add("AntiAffinityEmptyNamespaceSelectorMatchesAll",
      makePod("p", "subteam1.team1", kPodLabel2, "",
              {.requiredAnti = {in("service", {"securityscan", "value2"}, "zone",
                                   {{"namespaceSelector", json::object()}})}}),
      {makePod("e", "subteam2.team1", kPodLabel, "node1")}, kRejectAnti);
  add("AntiAffinityNamespaceSelectorMismatch",
      makePod("p", "subteam1.team1", kPodLabel2, "", {.requiredAnti = {nsSelAnti}}),
      {makePod("e", "subteam1.team2", kPodLabel, "node1")}, kOk);
  return cases;
}

// Upstream TestRequiredAffinityMultipleNodes.
std::vector<FilterCase> multipleNodeCases() {
  std::vector<FilterCase> cases;
  const std::vector<NodePtr> chinaIndia{
      makeNode("nodeA", kRgChina), makeNode("nodeB", kRgChinaAzAz1), makeNode("nodeC", kRgIndia)};
  const std::vector<NodePtr> sameZone{makeNode("nodeA", hostZone("z1", "nodeA")),
                                      makeNode("nodeB", hostZone("z1", "nodeB"))};
  const std::vector<NodePtr> twoZones{makeNode("nodeA", hostZone("z1", "nodeA")),
                                      makeNode("nodeB", hostZone("z2", "nodeB"))};
  cases.push_back(
      {"SameTopologyValueAsMatchingPod",
       makePod("p", "", json::object(), "", {.required = {in("foo", {"bar"}, "region")}}),
       {makePod("p1", "", {{"foo", "bar"}}, "nodeA")},
       chinaIndia,
       {kOk, kOk, kRejectAffinity}});
  const Affinity selfAffinity{
      .required = {in("foo", {"bar"}, "zone"), in("service", {"securityscan"}, "zone")}};
  const json selfLabels = {{"foo", "bar"}, {"service", "securityscan"}};
  cases.push_back({"FirstPodOfGroupIsAllowed",
                   makePod("p", "", selfLabels, "", selfAffinity),
                   {makePod("p1", "", {{"foo", "bar"}}, "nodeA")},
                   {makeNode("nodeA", {{"zone", "az1"}, {"hostname", "h1"}}),
                    makeNode("nodeB", {{"zone", "az2"}, {"hostname", "h2"}})},
                   {kOk, kOk}});
  cases.push_back({"FirstPodOfGroupNeedsTopologyLabels",
                   makePod("p", "", selfLabels, "", selfAffinity),
                   {makePod("p1", "", {{"foo", "bar"}}, "nodeA")},
                   {makeNode("nodeA", {{"zoneLabel", "az1"}, {"hostname", "h1"}}),
                    makeNode("nodeB", {{"zoneLabel", "az2"}, {"hostname", "h2"}})},
                   {kRejectAffinity, kRejectAffinity}});
  cases.push_back(
      {"AntiAffinityWholeRegion",
       makePod("p", "", json::object(), "", {.requiredAnti = {in("foo", {"abc"}, "region")}}),
       {makePod("e", "", {{"foo", "abc"}}, "nodeA")},
       {makeNode("nodeA", {{"region", "r1"}, {"hostname", "nodeA"}}),
        makeNode("nodeB", {{"region", "r1"}, {"hostname", "nodeB"}})},
       {kRejectAnti, kRejectAnti}});
  cases.push_back({"AntiAffinityAnyTermMatches",
                   makePod("p", "", json::object(), "",
                           {.requiredAnti = {in("foo", {"abc"}, "region"),
                                             in("service", {"securityscan"}, "zone")}}),
                   {makePod("e", "", {{"foo", "abc"}, {"service", "securityscan"}}, "nodeA")},
                   {makeNode("nodeA", {{"region", "r1"}, {"zone", "z1"}, {"hostname", "nodeA"}}),
                    makeNode("nodeB", {{"region", "r1"}, {"zone", "z2"}, {"hostname", "nodeB"}})},
                   {kRejectAnti, kRejectAnti}});
  cases.push_back(
      {"AntiAffinityOtherRegionFits",
       makePod("p", "", json::object(), "", {.requiredAnti = {in("foo", {"abc"}, "region")}}),
       {makePod("e", "", {{"foo", "abc"}}, "nodeA")},
       chinaIndia,
       {kRejectAnti, kRejectAnti, kOk}});
  cases.push_back(
      {"AntiAffinityOtherNamespaceIgnored",
       makePod("p", "NS1", {{"foo", "123"}}, "", {.requiredAnti = {in("foo", {"bar"}, "region")}}),
       {makePod("e1", "NS1", {{"foo", "bar"}}, "nodeA"),
        makePod("e2", "NS2", json::object(), "nodeC",
                {.requiredAnti = {in("foo", {"123"}, "region")}})},
       chinaIndia,
       {kRejectAnti, kRejectAnti, kOk},
       false,
       {ipatest::makeNamespace("NS1")}});
  cases.push_back({"ExistingTermWithMissingTopologyKeySkips",
                   makePod("p", "", {{"foo", ""}}),
                   {makePod("e", "", json::object(), "nodeA",
                            {.requiredAnti = {exists("foo", "invalid-node-label")}})},
                   sameZone,
                   {kOk, kOk},
                   true});
  cases.push_back({"IncomingTermWithMissingTopologyKey",
                   makePod("p", "", json::object(), "nodeA",
                           {.requiredAnti = {exists("foo", "invalid-node-label")}}),
                   {makePod("e", "", {{"foo", ""}}, "nodeA")},
                   sameZone,
                   {kOk, kOk}});
  cases.push_back(
      {"ExistingPodsViolatedOnAllNodes",
       makePod("p", "", {{"foo", ""}, {"bar", ""}}),
       {makePod("e1", "", json::object(), "nodeA", {.requiredAnti = {exists("foo", "zone")}}),
        makePod("e2", "", json::object(), "nodeA", {.requiredAnti = {exists("bar", "region")}})},
       twoZones,
       {kRejectExisting, kRejectExisting}});
  cases.push_back(
      {"IncomingViolatesOneTermOnEachNode",
       makePod("p", "", json::object(), "",
               {.requiredAnti = {exists("foo", "zone"), exists("bar", "region")}}),
       {makePod("e1", "", {{"foo", ""}}, "nodeA"), makePod("e2", "", {{"bar", ""}}, "nodeB")},
       twoZones,
       {kRejectAnti, kRejectAnti}});
  cases.push_back(
      {"ExistingTermNeedsSelectorAndTopology",
       makePod("p", "", {{"foo", ""}, {"bar", ""}}),
       {makePod("e", "", json::object(), "nodeA",
                {.requiredAnti = {exists("foo", "invalid-node-label"), exists("bar", "zone")}})},
       twoZones,
       {kRejectExisting, kOk}});
  cases.push_back(
      {"IncomingTermNeedsSelectorAndTopology",
       makePod("p", "", json::object(), "",
               {.requiredAnti = {exists("foo", "invalid-node-label"), exists("bar", "zone")}}),
       {makePod("podA", "", {{"foo", ""}, {"bar", ""}}, "nodeA")},
       twoZones,
       {kRejectAnti, kOk}});
  cases.push_back({"ExistingTermsAllValidTopology",
                   makePod("p", "", {{"foo", ""}, {"bar", ""}}),
                   {makePod("e", "", json::object(), "nodeA",
                            {.requiredAnti = {exists("foo", "region"), exists("bar", "zone")}})},
                   twoZones,
                   {kRejectExisting, kRejectExisting}});
  cases.push_back({"IncomingTermsAllValidTopology",
                   makePod("p", "", json::object(), "",
                           {.requiredAnti = {exists("foo", "region"), exists("bar", "zone")}}),
                   {makePod("e", "", {{"foo", ""}, {"bar", ""}}, "nodeA")},
                   twoZones,
                   {kRejectAnti, kRejectAnti}});
  cases.push_back(
      {"ExistingPodsOnTwoNodesLeaveTheThird",
       makePod("p", "", {{"foo", ""}, {"bar", ""}}),
       {makePod("e1", "", json::object(), "nodeA",
                {.requiredAnti = {exists("foo", "zone"), exists("labelA", "zone")}}),
        makePod("e2", "", json::object(), "nodeB",
                {.requiredAnti = {exists("bar", "zone"), exists("labelB", "zone")}})},
       {makeNode("nodeA", hostZone("z1", "nodeA")), makeNode("nodeB", hostZone("z2", "nodeB")),
        makeNode("nodeC", hostZone("z3", "nodeC"))},
       {kRejectExisting, kRejectExisting, kOk}});
  cases.push_back({"AffinityTermsMatchedBySamePod",
                   makePod("p", "", json::object(), "",
                           {.required = {exists("foo", "region"), exists("bar", "zone")}}),
                   {makePod("pod1", "", {{"foo", ""}, {"bar", ""}}, "nodeA")},
                   sameZone,
                   {kOk, kOk}});
  cases.push_back(
      {"AffinityTermsMatchedByDifferentPods",
       makePod("p", "", json::object(), "",
               {.required = {exists("foo", "region"), exists("bar", "zone")}}),
       {makePod("pod1", "", {{"foo", ""}}, "nodeA"), makePod("pod2", "", {{"bar", ""}}, "nodeB")},
       twoZones,
       {kRejectAffinity, kRejectAffinity}});
  return cases;
}

// matchLabelKeys / mismatchLabelKeys, terminating pods.
std::vector<FilterCase> labelKeyCases() {
  std::vector<FilterCase> cases;
  const std::vector<NodePtr> twoZones{makeNode("nodeA", hostZone("z1", "nodeA")),
                                      makeNode("nodeB", hostZone("z2", "nodeB"))};
  cases.push_back(
      {"MatchLabelKeysNarrowAffinity",
       makePod("p", "", {{"app", "web"}, {"version", "v1"}}, "",
               {.required = {exists("app", "zone", {{"matchLabelKeys", {"version"}}})}}),
       {makePod("e1", "", {{"app", "web"}, {"version", "v2"}}, "nodeA"),
        makePod("e2", "", {{"app", "web"}, {"version", "v1"}}, "nodeB")},
       twoZones,
       {kRejectAffinity, kOk}});
  cases.push_back(
      {"MatchLabelKeyMissingOnPodIsIgnored",
       makePod("p", "", {{"app", "web"}}, "",
               {.required = {exists("app", "zone", {{"matchLabelKeys", {"version"}}})}}),
       {makePod("e1", "", {{"app", "web"}, {"version", "v2"}}, "nodeA")},
       twoZones,
       {kOk, kRejectAffinity}});
  cases.push_back(
      {"MismatchLabelKeysNarrowAntiAffinity",
       makePod("p", "", {{"app", "web"}, {"tenant", "t1"}}, "",
               {.requiredAnti = {exists("app", "hostname", {{"mismatchLabelKeys", {"tenant"}}})}}),
       {makePod("e1", "", {{"app", "web"}, {"tenant", "t2"}}, "nodeA"),
        makePod("e2", "", {{"app", "web"}, {"tenant", "t1"}}, "nodeB")},
       twoZones,
       {kRejectAnti, kOk}});
  const Affinity existingWithKeys{
      .requiredAnti = {exists("app", "hostname", {{"matchLabelKeys", {"version"}}})}};
  cases.push_back(
      {"ExistingPodMatchLabelKeysUseItsOwnLabels",
       makePod("p", "", {{"app", "web"}, {"version", "v2"}}),
       {makePod("e1", "", {{"app", "db"}, {"version", "v1"}}, "nodeA", existingWithKeys),
        makePod("e2", "", {{"app", "db"}, {"version", "v2"}}, "nodeB", existingWithKeys)},
       twoZones,
       {kOk, kRejectExisting}});
  cases.push_back(
      {"MatchLabelKeysWithoutSelectorSelectNothing",
       makePod("p", "", {{"app", "web"}}, "",
               {.required = {json{{"topologyKey", "zone"}, {"matchLabelKeys", {"app"}}}}}),
       {makePod("e1", "", {{"app", "web"}}, "nodeA")},
       twoZones,
       {kRejectAffinity, kRejectAffinity}});
  api::Pod terminating = *makePod("t", "", {{"foo", "abc"}}, "nodeA");
  terminating.metadata.deletionTimestamp = "2026-01-01T00:00:00Z";
  cases.push_back(
      {"TerminatingPodsStillCount",
       makePod("p", "", json::object(), "", {.requiredAnti = {in("foo", {"abc"}, "zone")}}),
       {std::make_shared<const api::Pod>(terminating)},
       twoZones,
       {kRejectAnti, kOk}});
  return cases;
}

std::string caseName(const ::testing::TestParamInfo<FilterCase>& info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(SingleNode, InterPodAffinityFilterTest,
                         ::testing::ValuesIn(singleNodeCases()), caseName);
INSTANTIATE_TEST_SUITE_P(MultipleNodes, InterPodAffinityFilterTest,
                         ::testing::ValuesIn(multipleNodeCases()), caseName);
INSTANTIATE_TEST_SUITE_P(LabelKeys, InterPodAffinityFilterTest,
                         ::testing::ValuesIn(labelKeyCases()), caseName);

TEST(InterPodAffinityFilter, WithoutPreFilterStateIsAnError) {
  SnapshotHandle h({}, {makeNode("n", json::object())});
  auto pl = makePlugin(h);
  CycleState state;
  Status s = pl->filter(state, *makePod("p", "", json::object()), h.nodeInfo("n"));
  EXPECT_EQ(s.code(), Code::kError);
  EXPECT_EQ(s.message(), "error reading \"PreFilterInterPodAffinity\" from cycleState: not found");
}

TEST(InterPodAffinityFilter, NodeWithoutNodeObjectIsAnError) {
  SnapshotHandle h({}, {});
  auto pl = makePlugin(h);
  CycleState state;
  NodeInfo unknown(std::string("ghost"));
  Status s = pl->filter(state, *makePod("p", "", json::object()), unknown);
  EXPECT_EQ(s.code(), Code::kError);
  EXPECT_EQ(s.message(), "node not found");
}

// ---- AddPod / RemovePod (upstream TestPreFilterStateAddRemovePod) ---------------------------

using Counts = InterPodAffinity::CountsForTest;

struct AddRemoveCase {
  std::string name;
  PodPtr pending;
  PodPtr added;
  std::vector<PodPtr> existing;
  Counts wantAntiAffinity;
  Counts wantAffinity;
};

class InterPodAffinityAddRemoveTest : public ::testing::TestWithParam<AddRemoveCase> {};

void expectSameCounts(const InterPodAffinity::PreFilterCountsForTest& a,
                      const InterPodAffinity::PreFilterCountsForTest& b, const std::string& what) {
  EXPECT_EQ(a.existingAntiAffinity, b.existingAntiAffinity) << what;
  EXPECT_EQ(a.affinity, b.affinity) << what;
  EXPECT_EQ(a.antiAffinity, b.antiAffinity) << what;
}

std::vector<NodePtr> addRemoveNodes() {
  return {makeNode("nodeA", {{"region", "r1"}, {"zone", "z11"}}),
          makeNode("nodeB", {{"region", "r1"}, {"zone", "z12"}}),
          makeNode("nodeC", {{"region", "r2"}, {"zone", "z21"}})};
}

InterPodAffinity::PreFilterCountsForTest preFilterCounts(const std::vector<PodPtr>& pods,
                                                         const api::Pod& pending) {
  SnapshotHandle h(pods, addRemoveNodes());
  auto pl = makePlugin(h);
  CycleState state;
  PreFilterResult result;
  Status s = pl->preFilter(state, pending, h.snapshot(), result);
  EXPECT_TRUE(s.ok()) << s.message();
  return InterPodAffinity::preFilterCountsForTest(state).value_or(
      InterPodAffinity::PreFilterCountsForTest{});
}

TEST_P(InterPodAffinityAddRemoveTest, AddThenRemove) {
  const AddRemoveCase& c = GetParam();
  std::vector<PodPtr> all = c.existing;
  all.push_back(c.added);
  const auto withAdded = preFilterCounts(all, *c.pending);

  SnapshotHandle h(c.existing, addRemoveNodes());
  auto pl = makePlugin(h);
  CycleState state;
  PreFilterResult result;
  ASSERT_TRUE(pl->preFilter(state, *c.pending, h.snapshot(), result).ok());
  const auto original = InterPodAffinity::preFilterCountsForTest(state).value();

  const NodeInfo& node = h.nodeInfo(c.added->spec.nodeName);
  const PodInfo added(c.added, features::Gates{});
  const PreFilterExtensions* ext = pl->preFilterExtensions();
  ASSERT_NE(ext, nullptr);
  ASSERT_TRUE(ext->addPod(state, *c.pending, added, node).ok());
  const auto afterAdd = InterPodAffinity::preFilterCountsForTest(state).value();
  EXPECT_EQ(afterAdd.antiAffinity, c.wantAntiAffinity);
  EXPECT_EQ(afterAdd.affinity, c.wantAffinity);
  expectSameCounts(afterAdd, withAdded, "after AddPod vs PreFilter with the pod");

  ASSERT_TRUE(ext->removePod(state, *c.pending, added, node).ok());
  expectSameCounts(InterPodAffinity::preFilterCountsForTest(state).value(), original,
                   "after RemovePod vs original");
}

std::vector<AddRemoveCase> addRemoveCases() {
  const json fooBar = {{"foo", "bar"}};
  const json antiFooBar = in("foo", {"bar"}, "region");
  const std::vector<json> complexTerms{in("foo", {"bar", "buzz"}, "region"),
                                       notIn("service", {"bar", "security", "test"}, "zone")};
  return {
      {"AntiAffinityFooBar",
       makePod("pending", "", fooBar, "", {.requiredAnti = {antiFooBar}}),
       makePod("addedPod", "", fooBar, "nodeB", {.requiredAnti = {antiFooBar}}),
       {makePod("p1", "", fooBar, "nodeA"),
        makePod("p2", "", json::object(), "nodeC", {.requiredAnti = {antiFooBar}})},
       {{{"region", "r1"}, 2}},
       {}},
      {"AntiAffinityComplex",
       makePod("pending", "", fooBar, "", {.requiredAnti = complexTerms}),
       makePod("addedPod", "", fooBar, "nodeA", {.requiredAnti = complexTerms}),
       {makePod("p1", "", fooBar, "nodeA"),
        makePod("p2", "", json::object(), "nodeC", {.requiredAnti = {antiFooBar}})},
       {{{"region", "r1"}, 2}, {{"zone", "z11"}, 2}, {{"zone", "z21"}, 1}},
       {}},
      {"AffinityComplex",
       makePod("pending", "", fooBar, "", {.required = complexTerms}),
       makePod("addedPod", "", fooBar, "nodeA", {.requiredAnti = complexTerms}),
       {makePod("p1", "", fooBar, "nodeA"),
        makePod("p2", "", json::object(), "nodeC",
                {.required = complexTerms, .requiredAnti = {antiFooBar}})},
       {},
       {{{"region", "r1"}, 2}, {{"zone", "z11"}, 2}}},
  };
}

std::string addRemoveName(const ::testing::TestParamInfo<AddRemoveCase>& info) {
  return info.param.name;
}

INSTANTIATE_TEST_SUITE_P(Table, InterPodAffinityAddRemoveTest,
                         ::testing::ValuesIn(addRemoveCases()), addRemoveName);

TEST(InterPodAffinityAddRemove, NominatedPodChangesFilter) {
  // A pod nominated onto nodeA whose anti-affinity selects the incoming pod blocks zone z1.
  const std::vector<NodePtr> nodes{makeNode("nodeA", hostZone("z1", "nodeA")),
                                   makeNode("nodeB", hostZone("z2", "nodeB"))};
  SnapshotHandle h({}, nodes);
  auto pl = makePlugin(h);
  const PodPtr incoming =
      makePod("p", "", {{"app", "web"}}, "", {.requiredAnti = {exists("other", "zone")}});
  CycleState state;
  PreFilterResult result;
  ASSERT_TRUE(pl->preFilter(state, *incoming, h.snapshot(), result).ok());
  expectStatus(pl->filter(state, *incoming, h.nodeInfo("nodeA")), kOk, "before");

  const PodInfo nominated(
      makePod("n", "", json::object(), "nodeA", {.requiredAnti = {in("app", {"web"}, "zone")}}),
      features::Gates{});
  ASSERT_TRUE(pl->addPod(state, *incoming, nominated, h.nodeInfo("nodeA")).ok());
  expectStatus(pl->filter(state, *incoming, h.nodeInfo("nodeA")), kRejectExisting, "added");
  expectStatus(pl->filter(state, *incoming, h.nodeInfo("nodeB")), kOk, "other zone");
  // A clone keeps the update; removing restores the original.
  CycleState copy = state.clone();
  ASSERT_TRUE(pl->removePod(state, *incoming, nominated, h.nodeInfo("nodeA")).ok());
  expectStatus(pl->filter(state, *incoming, h.nodeInfo("nodeA")), kOk, "removed");
  expectStatus(pl->filter(copy, *incoming, h.nodeInfo("nodeA")), kRejectExisting, "clone");
}

TEST(InterPodAffinityAddRemove, WithoutStateIsAnError) {
  SnapshotHandle h({}, {makeNode("n", json::object())});
  auto pl = makePlugin(h);
  CycleState state;
  const PodInfo pod(makePod("x", "", json::object(), "n"), features::Gates{});
  Status s = pl->addPod(state, *makePod("p", "", json::object()), pod, h.nodeInfo("n"));
  EXPECT_EQ(s.code(), Code::kError);
  EXPECT_EQ(s.message(), "error reading \"PreFilterInterPodAffinity\" from cycleState: not found");
}

// What the plugin says of its rejections (FilterExplainer), as explain shows them: the term,
// and the pod found (or missing) in the node's domain.
TEST(InterPodAffinityExplain, NamesTheTermAndThePod) {
  using testutil::NodeWrapper;
  using testutil::PodWrapper;
  auto term = [](std::string key, std::string value, std::string topologyKey) {
    api::PodAffinityTerm t;
    t.labelSelector.emplace().matchLabels[std::move(key)] = std::move(value);
    t.topologyKey = std::move(topologyKey);
    return t;
  };
  auto withTerm = [](api::Pod p, bool anti, api::PodAffinityTerm t) {
    if (!p.spec.affinity) p.spec.affinity.emplace();
    auto& a = anti ? p.spec.affinity->podAntiAffinity : p.spec.affinity->podAffinity;
    if (!a) a.emplace();
    a->requiredDuringSchedulingIgnoredDuringExecution.push_back(std::move(t));
    return p;
  };
  auto node = [](std::string name) {
    return NodeWrapper(name).label("kubernetes.io/hostname", name);
  };
  {
    testutil::SnapshotHandle h(
        {PodWrapper("web-2").uid("web-2").label("app", "web").nodeName("n1").ptr()},
        {node("n1").ptr()});
    auto pl = makePlugin(interPodAffinityFactory(), nullptr, h);
    const api::Pod pod = withTerm(PodWrapper("p").uid("p").obj(), true,
                                  term("app", "web", "kubernetes.io/hostname"));
    EXPECT_EQ(testutil::explainAfterFilter(*pl, h.snapshot(), pod, "n1"),
              std::vector<std::string>{"anti-affinity term app=web on kubernetes.io/hostname: pod "
                                       "default/web-2 is on this node"});
  }
  {
    const api::Pod db = withTerm(PodWrapper("db-0").uid("db-0").nodeName("n2").obj(), true,
                                 term("app", "web", "zone"));
    testutil::SnapshotHandle h(
        {std::make_shared<const api::Pod>(db)},
        {node("n1").label("zone", "a").ptr(), node("n2").label("zone", "a").ptr()});
    auto pl = makePlugin(interPodAffinityFactory(), nullptr, h);
    EXPECT_EQ(
        testutil::explainAfterFilter(*pl, h.snapshot(),
                                     PodWrapper("p").uid("p").label("app", "web").obj(), "n1"),
        std::vector<std::string>{"pod default/db-0 on node n2 (zone=a) has anti-affinity term "
                                 "app=web on zone that selects this pod"});
  }
  {
    testutil::SnapshotHandle h(
        {PodWrapper("db-0").uid("db-0").label("app", "db").nodeName("n2").ptr()},
        {node("n1").label("zone", "c").ptr(), node("n2").label("zone", "a").ptr()});
    auto pl = makePlugin(interPodAffinityFactory(), nullptr, h);
    const api::Pod pod = withTerm(PodWrapper("p").uid("p").obj(), false, term("app", "db", "zone"));
    EXPECT_EQ(testutil::explainAfterFilter(*pl, h.snapshot(), pod, "n1"),
              std::vector<std::string>{"affinity term app=db on zone: no matching pod in zone=c"});
  }
}

}  // namespace
}  // namespace ksched::plugins
