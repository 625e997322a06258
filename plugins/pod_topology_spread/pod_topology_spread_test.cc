// PreFilter/Filter tables, ported from upstream's filtering_test.go
// (TestSingleConstraint, TestMultipleConstraints, TestPreFilterState).
#include "plugins/pod_topology_spread/pod_topology_spread.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include <ksched/api/features.h>

#include "tests/support/plugin_test_util.h"
#include "tests/support/spread_test_util.h"

namespace ksched::plugins {
namespace {

using api::kDoNotSchedule;
using api::kScheduleAnyway;
using spread_test::exists;
using spread_test::fooPods;
using spread_test::fourNodes;
using spread_test::Node;
using spread_test::Pod;
using spread_test::SpreadOptions;

constexpr StateKey<spread::PreFilterState> kStateKey{PodTopologySpread::kPreFilterStateKey};
constexpr Code kOK = Code::kSuccess;
constexpr Code kU = Code::kUnschedulable;
constexpr Code kUU = Code::kUnschedulableAndUnresolvable;

const std::string kHonor(api::kNodeInclusionPolicyHonor);
const std::string kIgnore(api::kNodeInclusionPolicyIgnore);

// Pods spread as 2/1/0/3 over node-a/node-b/node-x/node-y.
std::vector<Pod> spread2103() {
  return fooPods({{"p-a1", "node-a"},
                  {"p-a2", "node-a"},
                  {"p-b1", "node-b"},
                  {"p-y1", "node-y"},
                  {"p-y2", "node-y"},
                  {"p-y3", "node-y"}});
}

// Nodes carrying foo="" (except node-y, which has no foo label or the taint), for the
// inclusion-policy cases.
std::vector<Node> policyNodes(bool taintY) {
  Node y = Node("node-y").label("node", "node-y");
  if (taintY) y.taint("node.kubernetes.io/unschedulable", "", "NoSchedule");
  return {Node("node-a").label("node", "node-a").label("foo", ""),
          Node("node-b").label("node", "node-b").label("foo", ""),
          Node("node-x").label("node", "node-x").label("foo", ""), y};
}

std::vector<Pod> policyPods() {
  return fooPods({{"p-b1", "node-a"}, {"p-b2", "node-b"}, {"p-y1", "node-y"}});
}

struct FilterCase {
  std::string name;
  Pod pod;
  std::vector<Node> nodes;
  std::vector<Pod> existingPods;
  std::map<std::string, Code> want;
};

// gtest prints the case's name instead of its bytes.
void PrintTo(const FilterCase& c, std::ostream* os) { *os << c.name; }

class PodTopologySpreadFilterTest : public ::testing::TestWithParam<FilterCase> {};

TEST_P(PodTopologySpreadFilterTest, Filter) {
  const FilterCase& c = GetParam();
  testutil::FakeHandle h(testutil::FakeLister(spread_test::makeNodeInfos(c.nodes, c.existingPods)));
  auto plugin =
      makePlugin(podTopologySpreadFactory(), nlohmann::json{{"defaultingType", "List"}}, h);
  auto& pl = dynamic_cast<PodTopologySpread&>(*plugin);
  CycleState state;
  PreFilterResult result;
  ASSERT_TRUE(pl.preFilter(state, c.pod.obj(), h.snapshot(), result).ok());
  EXPECT_FALSE(result.nodeNames);
  ASSERT_EQ(c.want.size(), c.nodes.size());
  for (const NodeInfo* ni : h.snapshot().list()) {
    SCOPED_TRACE(ni->name());
    const Status s = pl.filter(state, c.pod.obj(), *ni);
    const Code want = c.want.at(ni->name());
    EXPECT_EQ(s.code(), want);
    std::vector<std::string> wantReasons;
    if (want == kU) wantReasons = {std::string(PodTopologySpread::kErrReasonConstraintsNotMatch)};
    if (want == kUU) wantReasons = {std::string(PodTopologySpread::kErrReasonNodeLabelNotMatch)};
    EXPECT_EQ(s.reasons(), wantReasons);
  }
}

INSTANTIATE_TEST_SUITE_P(
    SingleConstraint, PodTopologySpreadFilterTest,
    ::testing::Values(
        FilterCase{
            "noExistingPods",
            Pod().label("foo", "").spreadConstraint(1, "zone", kDoNotSchedule, exists("foo")),
            fourNodes(),
            {},
            {{"node-a", kOK}, {"node-b", kOK}, {"node-x", kOK}, {"node-y", kOK}}},
        FilterCase{
            "noExistingPodsPodDoesNotMatchItself",
            Pod().label("foo", "").spreadConstraint(1, "zone", kDoNotSchedule, exists("bar")),
            fourNodes(),
            {},
            {{"node-a", kOK}, {"node-b", kOK}, {"node-x", kOK}, {"node-y", kOK}}},
        FilterCase{
            "podsInOtherNamespacesDoNotCount",
            Pod().label("foo", "").spreadConstraint(1, "zone", kDoNotSchedule, exists("foo")),
            fourNodes(),
            {Pod("p-a1").ns("ns1").nodeName("node-a").label("foo", ""),
             Pod("p-b1").ns("ns2").nodeName("node-a").label("foo", ""),
             Pod("p-x1").nodeName("node-x").label("foo", ""),
             Pod("p-y1").nodeName("node-y").label("foo", "")},
            {{"node-a", kOK}, {"node-b", kOK}, {"node-x", kU}, {"node-y", kU}}},
        FilterCase{"nullSelectorMatchesNoPods",
                   Pod().label("foo", "").spreadConstraint(1, "zone", kDoNotSchedule, std::nullopt),
                   fourNodes(),
                   fooPods({{"p-x1", "node-x"}, {"p-y1", "node-y"}}),
                   {{"node-a", kOK}, {"node-b", kOK}, {"node-x", kOK}, {"node-y", kOK}}},
        FilterCase{
            "zones3To3AllFit",
            Pod().label("foo", "").spreadConstraint(1, "zone", kDoNotSchedule, exists("foo")),
            fourNodes(),
            spread2103(),
            {{"node-a", kOK}, {"node-b", kOK}, {"node-x", kOK}, {"node-y", kOK}}},
        FilterCase{
            "zones1To2NodeBMissesZoneLabel",
            Pod().label("foo", "").spreadConstraint(1, "zone", kDoNotSchedule, exists("foo")),
            {Node("node-a").label("zone", "zone1").label("node", "node-a"),
             Node("node-b").label("zon", "zone1").label("node", "node-b"),
             Node("node-x").label("zone", "zone2").label("node", "node-x"),
             Node("node-y").label("zone", "zone2").label("node", "node-y")},
            fooPods(
                {{"p-a1", "node-a"}, {"p-b1", "node-b"}, {"p-x1", "node-x"}, {"p-y1", "node-y"}}),
            {{"node-a", kOK}, {"node-b", kUU}, {"node-x", kU}, {"node-y", kU}}},
        FilterCase{
            "noNodeHasRackLabel",
            Pod().label("foo", "").spreadConstraint(1, "rack", kDoNotSchedule, exists("foo")),
            {Node("node-a").label("zone", "zone1").label("node", "node-a"),
             Node("node-x").label("zone", "zone2").label("node", "node-x")},
            {},
            {{"node-a", kUU}, {"node-x", kUU}}},
        FilterCase{
            "nodes2103OnlyNodeXFits",
            Pod().label("foo", "").spreadConstraint(1, "node", kDoNotSchedule, exists("foo")),
            fourNodes(),
            spread2103(),
            {{"node-a", kU}, {"node-b", kU}, {"node-x", kOK}, {"node-y", kU}}},
        FilterCase{
            "nodes2103MaxSkew2",
            Pod().label("foo", "").spreadConstraint(2, "node", kDoNotSchedule, exists("foo")),
            fourNodes(),
            spread2103(),
            {{"node-a", kU}, {"node-b", kOK}, {"node-x", kOK}, {"node-y", kU}}},
        FilterCase{
            "nodes2103PodDoesNotMatchItself",
            Pod().label("bar", "").spreadConstraint(1, "node", kDoNotSchedule, exists("foo")),
            fourNodes(),
            spread2103(),
            {{"node-a", kU}, {"node-b", kOK}, {"node-x", kOK}, {"node-y", kU}}},
        // Only node-a and node-y count (2/~1~/~0~/3); NodeAffinity itself is not run here.
        FilterCase{"nodeAffinityInLimitsDomains",
                   Pod()
                       .label("foo", "")
                       .nodeAffinity("node", api::SelectorOperator::kIn, {"node-a", "node-y"})
                       .spreadConstraint(1, "node", kDoNotSchedule, exists("foo")),
                   fourNodes(),
                   spread2103(),
                   {{"node-a", kOK}, {"node-b", kOK}, {"node-x", kOK}, {"node-y", kU}}},
        FilterCase{
            "terminatingPodsExcluded",
            Pod().label("foo", "").spreadConstraint(1, "node", kDoNotSchedule, exists("foo")),
            {Node("node-a").label("node", "node-a"), Node("node-b").label("node", "node-b")},
            {Pod("p-a").nodeName("node-a").label("foo", "").terminating(),
             Pod("p-b").nodeName("node-b").label("foo", "")},
            {{"node-a", kOK}, {"node-b", kU}}},
        // 0/~2~/0/1 over zones: zone1 counts 0, zone2 counts 1.
        FilterCase{"nodeAffinityNotInExcludesNodeB",
                   Pod()
                       .label("foo", "")
                       .nodeAffinity("node", api::SelectorOperator::kNotIn, {"node-b"})
                       .spreadConstraint(1, "zone", kDoNotSchedule, exists("foo")),
                   fourNodes(),
                   fooPods({{"p-b1", "node-b"}, {"p-b2", "node-b"}, {"p-y1", "node-y"}}),
                   {{"node-a", kOK}, {"node-b", kOK}, {"node-x", kU}, {"node-y", kU}}},
        FilterCase{"minDomainsAboveDomainCount",
                   Pod().label("foo", "").spreadConstraint(2, "node", kDoNotSchedule, exists("foo"),
                                                           SpreadOptions{.minDomains = 4}),
                   {Node("node-a").label("node", "node-a"), Node("node-b").label("node", "node-b"),
                    Node("node-c").label("node", "node-c")},
                   fooPods({{"p-a1", "node-a"},
                            {"p-a2", "node-a"},
                            {"p-b1", "node-b"},
                            {"p-b2", "node-b"},
                            {"p-c1", "node-c"}}),
                   {{"node-a", kU}, {"node-b", kU}, {"node-c", kOK}}},
        FilterCase{"minDomainsBelowDomainCount",
                   Pod().label("foo", "").spreadConstraint(2, "node", kDoNotSchedule, exists("foo"),
                                                           SpreadOptions{.minDomains = 2}),
                   {Node("node-a").label("node", "node-a"), Node("node-b").label("node", "node-b"),
                    Node("node-c").label("node", "node-c")},
                   fooPods({{"p-a1", "node-a"},
                            {"p-a2", "node-a"},
                            {"p-b1", "node-b"},
                            {"p-b2", "node-b"},
                            {"p-c1", "node-c"}}),
                   {{"node-a", kOK}, {"node-b", kOK}, {"node-c", kOK}}},
        FilterCase{"zoneMinDomainsAboveDomainCount",
                   Pod().label("foo", "").spreadConstraint(2, "zone", kDoNotSchedule, exists("foo"),
                                                           SpreadOptions{.minDomains = 3}),
                   fourNodes(),
                   fooPods({{"p-b1", "node-a"}, {"p-b2", "node-b"}, {"p-y1", "node-y"}}),
                   {{"node-a", kU}, {"node-b", kU}, {"node-x", kOK}, {"node-y", kOK}}},
        FilterCase{"zoneMinDomainsBelowDomainCount",
                   Pod().label("foo", "").spreadConstraint(2, "zone", kDoNotSchedule, exists("foo"),
                                                           SpreadOptions{.minDomains = 1}),
                   fourNodes(),
                   fooPods({{"p-b1", "node-a"}, {"p-b2", "node-b"}, {"p-y1", "node-y"}}),
                   {{"node-a", kOK}, {"node-b", kOK}, {"node-x", kOK}, {"node-y", kOK}}},
        // 1/1/0/~0~: node-y is not a domain, so it fits (NodeAffinity would reject it).
        FilterCase{"nodeAffinityPolicyHonoredNodeSelector",
                   Pod()
                       .label("foo", "")
                       .nodeSelector({{"foo", ""}})
                       .spreadConstraint(1, "node", kDoNotSchedule, exists("foo")),
                   policyNodes(false),
                   policyPods(),
                   {{"node-a", kU}, {"node-b", kU}, {"node-x", kOK}, {"node-y", kOK}}},
        FilterCase{"nodeAffinityPolicyIgnoredNodeSelector",
                   Pod()
                       .label("foo", "")
                       .nodeSelector({{"foo", ""}})
                       .spreadConstraint(1, "node", kDoNotSchedule, exists("foo"),
                                         SpreadOptions{.nodeAffinityPolicy = kIgnore}),
                   policyNodes(false),
                   policyPods(),
                   {{"node-a", kU}, {"node-b", kU}, {"node-x", kOK}, {"node-y", kU}}},
        FilterCase{"nodeAffinityPolicyHonoredNodeAffinity",
                   Pod()
                       .label("foo", "")
                       .nodeAffinity("foo", api::SelectorOperator::kIn, {""})
                       .spreadConstraint(1, "node", kDoNotSchedule, exists("foo")),
                   policyNodes(false),
                   policyPods(),
                   {{"node-a", kU}, {"node-b", kU}, {"node-x", kOK}, {"node-y", kOK}}},
        FilterCase{"nodeAffinityPolicyIgnoredNodeAffinity",
                   Pod()
                       .label("foo", "")
                       .nodeAffinity("foo", api::SelectorOperator::kIn, {""})
                       .spreadConstraint(1, "node", kDoNotSchedule, exists("foo"),
                                         SpreadOptions{.nodeAffinityPolicy = kIgnore}),
                   policyNodes(false),
                   policyPods(),
                   {{"node-a", kU}, {"node-b", kU}, {"node-x", kOK}, {"node-y", kU}}},
        FilterCase{
            "nodeTaintsPolicyHonored",
            Pod().label("foo", "").spreadConstraint(1, "node", kDoNotSchedule, exists("foo"),
                                                    SpreadOptions{.nodeTaintsPolicy = kHonor}),
            policyNodes(true),
            policyPods(),
            {{"node-a", kU}, {"node-b", kU}, {"node-x", kOK}, {"node-y", kOK}}},
        FilterCase{"nodeTaintsPolicyHonoredTolerated",
                   Pod()
                       .label("foo", "")
                       .toleration("node.kubernetes.io/unschedulable", "Exists", "", "NoSchedule")
                       .spreadConstraint(1, "node", kDoNotSchedule, exists("foo"),
                                         SpreadOptions{.nodeTaintsPolicy = kHonor}),
                   policyNodes(true),
                   policyPods(),
                   {{"node-a", kU}, {"node-b", kU}, {"node-x", kOK}, {"node-y", kU}}},
        FilterCase{
            "nodeTaintsPolicyIgnoredByDefault",
            Pod().label("foo", "").spreadConstraint(1, "node", kDoNotSchedule, exists("foo")),
            policyNodes(true),
            policyPods(),
            {{"node-a", kU}, {"node-b", kU}, {"node-x", kOK}, {"node-y", kU}}},
        // Only pods with the incoming pod's rev count: zone1 0, zone2 1.
        FilterCase{"matchLabelKeysAndedIntoSelector",
                   Pod()
                       .label("foo", "")
                       .label("rev", "2")
                       .spreadConstraint(1, "zone", kDoNotSchedule, exists("foo"),
                                         SpreadOptions{.matchLabelKeys = {"rev"}}),
                   fourNodes(),
                   {Pod("p-a1").nodeName("node-a").label("foo", "").label("rev", "1"),
                    Pod("p-a2").nodeName("node-a").label("foo", "").label("rev", "1"),
                    Pod("p-x1").nodeName("node-x").label("foo", "").label("rev", "2")},
                   {{"node-a", kOK}, {"node-b", kOK}, {"node-x", kU}, {"node-y", kU}}},
        FilterCase{"withoutMatchLabelKeysAllRevisionsCount",
                   Pod()
                       .label("foo", "")
                       .label("rev", "2")
                       .spreadConstraint(1, "zone", kDoNotSchedule, exists("foo")),
                   fourNodes(),
                   {Pod("p-a1").nodeName("node-a").label("foo", "").label("rev", "1"),
                    Pod("p-a2").nodeName("node-a").label("foo", "").label("rev", "1"),
                    Pod("p-x1").nodeName("node-x").label("foo", "").label("rev", "2")},
                   {{"node-a", kU}, {"node-b", kU}, {"node-x", kOK}, {"node-y", kOK}}}),
    [](const auto& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(
    MultipleConstraints, PodTopologySpreadFilterTest,
    ::testing::Values(
        FilterCase{"zoneAndNode3To3And2103",
                   Pod()
                       .label("foo", "")
                       .spreadConstraint(1, "zone", kDoNotSchedule, exists("foo"))
                       .spreadConstraint(1, "node", kDoNotSchedule, exists("foo")),
                   fourNodes(),
                   spread2103(),
                   {{"node-a", kU}, {"node-b", kU}, {"node-x", kOK}, {"node-y", kU}}},
        FilterCase{"zoneAndNode3To4And2104",
                   Pod()
                       .label("foo", "")
                       .spreadConstraint(1, "zone", kDoNotSchedule, exists("foo"))
                       .spreadConstraint(1, "node", kDoNotSchedule, exists("foo")),
                   fourNodes(),
                   fooPods({{"p-a1", "node-a"},
                            {"p-a2", "node-a"},
                            {"p-b1", "node-b"},
                            {"p-y1", "node-y"},
                            {"p-y2", "node-y"},
                            {"p-y3", "node-y"},
                            {"p-y4", "node-y"}}),
                   {{"node-a", kU}, {"node-b", kU}, {"node-x", kU}, {"node-y", kU}}},
        FilterCase{"differentSelectors1To0And1001",
                   Pod()
                       .label("foo", "")
                       .label("bar", "")
                       .spreadConstraint(1, "zone", kDoNotSchedule, exists("foo"))
                       .spreadConstraint(1, "node", kDoNotSchedule, exists("bar")),
                   fourNodes(),
                   {Pod("p-a1").nodeName("node-a").label("foo", ""),
                    Pod("p-y1").nodeName("node-y").label("bar", "")},
                   {{"node-a", kU}, {"node-b", kU}, {"node-x", kOK}, {"node-y", kU}}},
        FilterCase{"differentSelectors1To0And0011",
                   Pod()
                       .label("foo", "")
                       .label("bar", "")
                       .spreadConstraint(1, "zone", kDoNotSchedule, exists("foo"))
                       .spreadConstraint(1, "node", kDoNotSchedule, exists("bar")),
                   fourNodes(),
                   {Pod("p-a1").nodeName("node-a").label("foo", ""),
                    Pod("p-x1").nodeName("node-x").label("bar", ""),
                    Pod("p-y1").nodeName("node-y").label("bar", "")},
                   {{"node-a", kU}, {"node-b", kU}, {"node-x", kU}, {"node-y", kU}}},
        FilterCase{"differentSelectors2To3And1001",
                   Pod()
                       .label("foo", "")
                       .label("bar", "")
                       .spreadConstraint(1, "zone", kDoNotSchedule, exists("foo"))
                       .spreadConstraint(1, "node", kDoNotSchedule, exists("bar")),
                   fourNodes(),
                   {Pod("p-a1").nodeName("node-a").label("foo", ""),
                    Pod("p-a2").nodeName("node-a").label("foo", "").label("bar", ""),
                    Pod("p-y1").nodeName("node-y").label("foo", ""),
                    Pod("p-y2").nodeName("node-y").label("foo", "").label("bar", ""),
                    Pod("p-y3").nodeName("node-y").label("foo", "")},
                   {{"node-a", kU}, {"node-b", kOK}, {"node-x", kU}, {"node-y", kU}}},
        FilterCase{"podDoesNotMatchItselfOnZone",
                   Pod()
                       .label("bar", "")
                       .spreadConstraint(1, "zone", kDoNotSchedule, exists("foo"))
                       .spreadConstraint(1, "node", kDoNotSchedule, exists("bar")),
                   fourNodes(),
                   {Pod("p-a1").nodeName("node-a").label("foo", ""),
                    Pod("p-x1").nodeName("node-x").label("bar", ""),
                    Pod("p-y1").nodeName("node-y").label("bar", "")},
                   {{"node-a", kOK}, {"node-b", kOK}, {"node-x", kU}, {"node-y", kU}}},
        FilterCase{"nodeXMissesNodeLabel",
                   Pod()
                       .label("foo", "")
                       .spreadConstraint(1, "zone", kDoNotSchedule, exists("foo"))
                       .spreadConstraint(1, "node", kDoNotSchedule, exists("foo")),
                   {Node("node-a").label("zone", "zone1").label("node", "node-a"),
                    Node("node-b").label("zone", "zone1").label("node", "node-b"),
                    Node("node-x").label("zone", "zone2"),
                    Node("node-y").label("zone", "zone2").label("node", "node-y")},
                   fooPods({{"p-a1", "node-a"}, {"p-y3", "node-y"}}),
                   {{"node-a", kU}, {"node-b", kOK}, {"node-x", kUU}, {"node-y", kU}}}),
    [](const auto& info) { return info.param.name; });

// ---- PreFilter Skip, defaults, missing state ------------------------------------------------

std::unique_ptr<Plugin> makePlugin(const nlohmann::json& args, testutil::FakeHandle& h) {
  return makePlugin(podTopologySpreadFactory(), args, h);
}

TEST(PodTopologySpreadPreFilterTest, SkipsWithoutHardConstraints) {
  testutil::FakeHandle h(testutil::FakeLister(spread_test::makeNodeInfos(fourNodes(), {})));
  auto plugin = makePlugin(nullptr, h);
  auto& pl = dynamic_cast<PodTopologySpread&>(*plugin);
  PreFilterResult result;
  {
    CycleState state;
    const Pod pod =
        Pod().label("foo", "").spreadConstraint(1, "zone", kScheduleAnyway, exists("foo"));
    EXPECT_EQ(pl.preFilter(state, pod.obj(), h.snapshot(), result).code(), Code::kSkip);
    EXPECT_EQ(state.read(kStateKey), nullptr);
  }
  {
    // System defaults are ScheduleAnyway only, even with a Service selecting the pod.
    api::Service svc;
    svc.metadata.name = "svc";
    svc.metadata.namespace_ = "default";
    svc.spec.selector = api::Labels{{"foo", ""}};
    h.mutableListers().add(svc);
    CycleState state;
    EXPECT_EQ(pl.preFilter(state, Pod().label("foo", "").obj(), h.snapshot(), result).code(),
              Code::kSkip);
  }
}

TEST(PodTopologySpreadPreFilterTest, FilterWithoutPreFilterStateIsError) {
  testutil::FakeHandle h;
  auto plugin = makePlugin(nullptr, h);
  auto& pl = dynamic_cast<PodTopologySpread&>(*plugin);
  CycleState state;
  const auto infos = spread_test::makeNodeInfos({Node("node-a")}, {});
  const Status s = pl.filter(state, Pod().obj(), *infos[0]);
  EXPECT_EQ(s.code(), Code::kError);
  EXPECT_EQ(s.reasons(), std::vector<std::string>{
                             "reading \"PreFilterPodTopologySpread\" from cycleState: not found"});
}

// List defaulting with a DoNotSchedule default: the selector comes from the pod's ReplicaSet.
TEST(PodTopologySpreadPreFilterTest, ListDefaultsUseReplicaSetSelector) {
  const std::vector<Pod> existing = {
      Pod("p-a1").nodeName("node-a").label("foo", "tar"),
      Pod("p-a2").nodeName("node-a").label("foo", "tar"),
      Pod("p-x1").nodeName("node-x").label("foo", "other"),
  };
  testutil::FakeHandle h(testutil::FakeLister(spread_test::makeNodeInfos(fourNodes(), existing)));
  api::ReplicaSet rs;
  rs.metadata.name = "rs1";
  rs.metadata.namespace_ = "default";
  rs.spec.selector = spread_test::matchLabels({{"foo", "tar"}});
  h.mutableListers().add(rs);
  auto plugin =
      makePlugin(nlohmann::json::parse(R"({"defaultingType": "List", "defaultConstraints": [
          {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
          {"maxSkew": 1, "topologyKey": "node", "whenUnsatisfiable": "ScheduleAnyway"}]})"),
                 h);
  auto& pl = dynamic_cast<PodTopologySpread&>(*plugin);
  const Pod pod =
      Pod().label("foo", "tar").ownerReference("ReplicaSet", "rs1", "", true, "apps/v1");
  CycleState state;
  PreFilterResult result;
  ASSERT_TRUE(pl.preFilter(state, pod.obj(), h.snapshot(), result).ok());
  const spread::PreFilterState* s = state.read(kStateKey);
  ASSERT_NE(s, nullptr);
  ASSERT_EQ(s->constraints->size(), 1u);
  EXPECT_EQ((*s->constraints)[0].topologyKey, "zone");
  EXPECT_EQ(s->tpValueToMatchNum[0], (spread::ValueCounts{{"zone1", 2}, {"zone2", 0}}));
  const std::map<std::string, Code> want = {
      {"node-a", kU}, {"node-b", kU}, {"node-x", kOK}, {"node-y", kOK}};
  for (const NodeInfo* ni : h.snapshot().list()) {
    EXPECT_EQ(pl.filter(state, pod.obj(), *ni).code(), want.at(ni->name())) << ni->name();
  }

  // Without the owner reference nothing selects the pod: no default constraint applies.
  CycleState other;
  EXPECT_EQ(pl.preFilter(other, Pod().label("foo", "tar").obj(), h.snapshot(), result).code(),
            Code::kSkip);
}

// PreFilter keeps each node's domain from cycle to cycle (spread::DomainIndex): a later cycle must
// still see a node's new labels, a node without the key, nodes in another order, a new node.
TEST(PodTopologySpreadPreFilterTest, LaterCyclesSeeChangedNodes) {
  testutil::FakeHandle h(
      testutil::FakeLister(spread_test::makeNodeInfos(fourNodes(), spread2103())));
  auto plugin = makePlugin(nullptr, h);
  auto& pl = dynamic_cast<PodTopologySpread&>(*plugin);
  const Pod pod = Pod().label("foo", "").spreadConstraint(1, "zone", kDoNotSchedule, exists("foo"));
  auto counts = [&](const NodeInfoLister& nodes) {
    CycleState state;
    PreFilterResult result;
    EXPECT_TRUE(pl.preFilter(state, pod.obj(), nodes, result).ok());
    const spread::PreFilterState* s = state.read(kStateKey);
    return s == nullptr ? spread::ValueCounts{} : s->tpValueToMatchNum[0];
  };
  EXPECT_EQ(counts(h.snapshot()), (spread::ValueCounts{{"zone1", 3}, {"zone2", 3}}));

  // node-b moves to zone2, node-y loses its zone, node-z joins in zone3; the order is reversed.
  testutil::FakeLister changed(spread_test::makeNodeInfos(
      {Node("node-z").label("zone", "zone3"), Node("node-y").label("node", "node-y"),
       Node("node-x").label("zone", "zone2"), Node("node-b").label("zone", "zone2"),
       Node("node-a").label("zone", "zone1")},
      spread2103()));
  EXPECT_EQ(counts(changed), (spread::ValueCounts{{"zone1", 2}, {"zone2", 1}, {"zone3", 0}}));
  EXPECT_EQ(counts(changed), (spread::ValueCounts{{"zone1", 2}, {"zone2", 1}, {"zone3", 0}}));
  EXPECT_EQ(counts(h.snapshot()), (spread::ValueCounts{{"zone1", 3}, {"zone2", 3}}));
}

}  // namespace
}  // namespace ksched::plugins

namespace ksched::plugins {
namespace {

// matchLabelKeys against the selector a 1.34+ apiserver stores (keys already merged at creation)
// and with the gate off: zone1 holds two rev=1 pods, zone2 one rev=2 pod; the incoming pod is
// rev=2.
TEST(PodTopologySpreadMatchLabelKeys, PreMergedSelectorAndGate) {
  auto run = [](api::LabelSelector selector, const features::Gates& gates = {}) {
    const Pod pod = Pod()
                        .label("foo", "")
                        .label("rev", "2")
                        .spreadConstraint(1, "zone", api::kDoNotSchedule, std::move(selector),
                                          SpreadOptions{.matchLabelKeys = {"rev"}});
    const std::vector<Pod> existing = {
        Pod("p-a1").nodeName("node-a").label("foo", "").label("rev", "1"),
        Pod("p-a2").nodeName("node-a").label("foo", "").label("rev", "1"),
        Pod("p-x1").nodeName("node-x").label("foo", "").label("rev", "2")};
    testutil::FakeHandle h(
        testutil::FakeLister(spread_test::makeNodeInfos(spread_test::fourNodes(), existing)));
    h.setFeatures(gates);
    auto plugin =
        makePlugin(podTopologySpreadFactory(), nlohmann::json{{"defaultingType", "List"}}, h);
    auto& pl = dynamic_cast<PodTopologySpread&>(*plugin);
    CycleState state;
    PreFilterResult result;
    EXPECT_TRUE(pl.preFilter(state, pod.obj(), h.snapshot(), result).ok());
    std::map<std::string, bool> fits;
    for (const NodeInfo* ni : h.snapshot().list()) {
      fits[ni->name()] = pl.filter(state, pod.obj(), *ni).ok();
    }
    return fits;
  };
  const std::map<std::string, bool> revisionOnly = {
      {"node-a", true}, {"node-b", true}, {"node-x", false}, {"node-y", false}};
  const std::map<std::string, bool> allRevisions = {
      {"node-a", false}, {"node-b", false}, {"node-x", true}, {"node-y", true}};

  api::LabelSelector merged = spread_test::exists("foo");
  merged.matchExpressions.push_back({"rev", api::SelectorOperator::kIn, {"2"}});
  EXPECT_EQ(run(spread_test::exists("foo")), revisionOnly);
  EXPECT_EQ(run(merged), revisionOnly);  // merging again changes nothing
  features::Gates off;
  off.force(features::Feature::kMatchLabelKeysInPodTopologySpread, false);
  EXPECT_EQ(run(spread_test::exists("foo"), off), allRevisions);  // keys ignored
  EXPECT_EQ(run(merged, off), revisionOnly);                      // what the apiserver merged stays
}

// What the plugin says of its rejections (FilterExplainer), from its PreFilter counts.
TEST(PodTopologySpreadExplain, NamesTheSkewOrTheMissingLabel) {
  using testutil::NodeWrapper;
  auto web = [](std::string name) {
    return testutil::PodWrapper(name).uid(name).label("app", "web");
  };
  testutil::SnapshotHandle h({web("a-1").nodeName("a1").ptr(), web("a-2").nodeName("a1").ptr(),
                              web("a-3").nodeName("a1").ptr(), web("b-1").nodeName("b1").ptr()},
                             {NodeWrapper("a1").label("zone", "a").ptr(),
                              NodeWrapper("b1").label("zone", "b").ptr(), NodeWrapper("x1").ptr()});
  auto pl = makePlugin(podTopologySpreadFactory(), nullptr, h);
  api::LabelSelector s;
  s.matchLabels["app"] = "web";
  const api::Pod pod = web("p").spreadConstraint(1, "zone", kDoNotSchedule, s).obj();
  EXPECT_EQ(testutil::explainAfterFilter(*pl, h.snapshot(), pod, "a1"),
            std::vector<std::string>{"topologyKey zone, maxSkew 1: placing here makes skew 3 (a "
                                     "has 3 matching pods, min 1)"});
  EXPECT_EQ(testutil::explainAfterFilter(*pl, h.snapshot(), pod, "x1"),
            std::vector<std::string>{"topologyKey zone: node has no label zone"});
}

// Fewer domains than minDomains: the minimum counts as 0, and the details say why.
TEST(PodTopologySpreadExplain, NamesTooFewDomains) {
  auto web = [](std::string name) {
    return testutil::PodWrapper(name).uid(name).label("app", "web");
  };
  testutil::SnapshotHandle h({web("a-1").nodeName("a1").ptr()},
                             {testutil::NodeWrapper("a1").label("zone", "a").ptr()});
  auto pl = makePlugin(podTopologySpreadFactory(), nullptr, h);
  api::LabelSelector s;
  s.matchLabels["app"] = "web";
  api::Pod pod = web("p").spreadConstraint(1, "zone", kDoNotSchedule, s).obj();
  pod.spec.topologySpreadConstraints[0].minDomains = 3;
  EXPECT_EQ(testutil::explainAfterFilter(*pl, h.snapshot(), pod, "a1"),
            std::vector<std::string>{"topologyKey zone, maxSkew 1: placing here makes skew 2 (a "
                                     "has 1 matching pods, min 0: 1 domains, fewer than "
                                     "minDomains 3)"});
}

}  // namespace
}  // namespace ksched::plugins
