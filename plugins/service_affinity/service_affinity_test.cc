// ServiceAffinity tables, from v1.20's service_affinity_test.go (TestServiceAffinity,
// TestServiceAffinityScore, TestPreFilterStateAddRemovePod, TestPreFilterStateClone,
// TestPreFilterDisabled), plus args decoding and queueing hints.
#include "plugins/service_affinity/service_affinity.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include <ksched/api/workloads.h>
#include <ksched/registry.h>

#include "tests/support/plugin_test_util.h"
#include "tests/support/queueing_hint_test_util.h"
#include "tests/support/spread_test_util.h"

namespace ksched::plugins {
namespace {

using spread_test::Node;
using spread_test::Pod;

constexpr StateKey<service_affinity::PreFilterState> kStateKey{ServiceAffinity::kPreFilterStateKey};

// Upstream's test pods: no name, namespace "" unless set.
Pod pod(const api::Labels& labels, const std::string& node = "", const std::string& ns = "") {
  Pod p;
  p.ns(ns).nodeName(node);
  for (const auto& [k, v] : labels) p.label(k, v);
  return p;
}

Node node(const std::string& name, const api::Labels& labels) {
  Node n(name);
  for (const auto& [k, v] : labels) n.label(k, v);
  return n;
}

struct Service {
  api::Labels selector;
  std::string ns;
};

// A SnapshotHandle over `nodes` and `pods` (each given a unique name and uid unless it has a
// name already) with `services`.
std::unique_ptr<testutil::SnapshotHandle> makeHandle(const std::vector<Node>& nodes,
                                                     const std::vector<Pod>& pods,
                                                     const std::vector<Service>& services) {
  std::vector<PodPtr> podPtrs;
  for (size_t i = 0; i < pods.size(); ++i) {
    api::Pod p = pods[i].obj();
    if (p.metadata.name == "p") {
      p.metadata.name = "p" + std::to_string(i);
      p.metadata.uid = "uid-" + std::to_string(i);
    }
    podPtrs.push_back(std::make_shared<const api::Pod>(std::move(p)));
  }
  std::vector<NodePtr> nodePtrs;
  for (const Node& n : nodes) nodePtrs.push_back(n.ptr());
  auto h = std::make_unique<testutil::SnapshotHandle>(std::move(podPtrs), std::move(nodePtrs));
  for (size_t i = 0; i < services.size(); ++i) {
    api::Service s;
    s.metadata.name = "svc" + std::to_string(i);
    s.metadata.namespace_ = services[i].ns;
    s.spec.selector = services[i].selector;
    h->mutableListers().add(s);
  }
  return h;
}

const api::Labels kSelector{{"foo", "bar"}};

std::vector<Node> filterNodes() {
  return {node("machine1", {{"region", "r1"}, {"zone", "z11"}}),
          node("machine2", {{"region", "r1"}, {"zone", "z12"}}),
          node("machine3", {{"region", "r2"}, {"zone", "z21"}}),
          node("machine4", {{"region", "r2"}, {"zone", "z22"}}),
          node("machine5", {{"region", "r2"}, {"zone", "z22"}})};
}

struct FilterCase {
  std::string name;
  Pod pod;
  std::vector<Pod> pods;
  std::vector<Service> services;
  std::string node;
  std::vector<std::string> labels;
  Code want;
};

class ServiceAffinityFilterTest : public ::testing::TestWithParam<FilterCase> {};

TEST_P(ServiceAffinityFilterTest, Filter) {
  const FilterCase& c = GetParam();
  auto h = makeHandle(filterNodes(), c.pods, c.services);
  ServiceAffinity pl({.affinityLabels = c.labels}, *h);
  CycleState state;
  PreFilterResult result;
  ASSERT_TRUE(pl.preFilter(state, c.pod.obj(), h->snapshot(), result).ok());
  const Status s = pl.filter(state, c.pod.obj(), *h->snapshot().get(c.node));
  EXPECT_EQ(s.code(), c.want) << s.message();
  if (c.want == Code::kUnschedulable) {
    EXPECT_EQ(s.reasons(), std::vector<std::string>{"node(s) didn't match service affinity"});
  }
}

INSTANTIATE_TEST_SUITE_P(
    Table, ServiceAffinityFilterTest,
    ::testing::Values(
        FilterCase{"nothingScheduled", pod({}), {}, {}, "machine1", {"region"}, Code::kSuccess},
        FilterCase{"podWithRegionLabelMatch",
                   pod({}).nodeSelector({{"region", "r1"}}),
                   {},
                   {},
                   "machine1",
                   {"region"},
                   Code::kSuccess},
        FilterCase{"podWithRegionLabelMismatch",
                   pod({}).nodeSelector({{"region", "r2"}}),
                   {},
                   {},
                   "machine1",
                   {"region"},
                   Code::kUnschedulable},
        FilterCase{"servicePodOnSameNode",
                   pod(kSelector),
                   {pod(kSelector, "machine1")},
                   {{kSelector, ""}},
                   "machine1",
                   {"region"},
                   Code::kSuccess},
        FilterCase{"servicePodOnDifferentNodeRegionMatch",
                   pod(kSelector),
                   {pod(kSelector, "machine2")},
                   {{kSelector, ""}},
                   "machine1",
                   {"region"},
                   Code::kSuccess},
        FilterCase{"servicePodOnDifferentNodeRegionMismatch",
                   pod(kSelector),
                   {pod(kSelector, "machine3")},
                   {{kSelector, ""}},
                   "machine1",
                   {"region"},
                   Code::kUnschedulable},
        FilterCase{"serviceInDifferentNamespaceRegionMismatch",
                   pod(kSelector, "", "ns1"),
                   {pod(kSelector, "machine3", "ns1")},
                   {{kSelector, "ns2"}},
                   "machine1",
                   {"region"},
                   Code::kSuccess},
        FilterCase{"podInDifferentNamespaceRegionMismatch",
                   pod(kSelector, "", "ns1"),
                   {pod(kSelector, "machine3", "ns2")},
                   {{kSelector, "ns1"}},
                   "machine1",
                   {"region"},
                   Code::kSuccess},
        FilterCase{"serviceAndPodInSameNamespaceRegionMismatch",
                   pod(kSelector, "", "ns1"),
                   {pod(kSelector, "machine3", "ns1")},
                   {{kSelector, "ns1"}},
                   "machine1",
                   {"region"},
                   Code::kUnschedulable},
        FilterCase{"servicePodOnDifferentNodeMultipleLabelsNotAllMatch",
                   pod(kSelector),
                   {pod(kSelector, "machine2")},
                   {{kSelector, ""}},
                   "machine1",
                   {"region", "zone"},
                   Code::kUnschedulable},
        FilterCase{"servicePodOnDifferentNodeMultipleLabelsAllMatch",
                   pod(kSelector),
                   {pod(kSelector, "machine5")},
                   {{kSelector, ""}},
                   "machine4",
                   {"region", "zone"},
                   Code::kSuccess},
        // Beyond upstream's table: the pod's own nodeSelector value wins over the Service's node.
        FilterCase{"nodeSelectorValueIsKept",
                   pod(kSelector).nodeSelector({{"zone", "z11"}}),
                   {pod(kSelector, "machine2")},
                   {{kSelector, ""}},
                   "machine1",
                   {"region", "zone"},
                   Code::kSuccess}),
    [](const auto& info) { return info.param.name; });

TEST(ServiceAffinityTest, EmptyAffinityLabelsSkipPreFilterAndPassFilter) {
  auto h = makeHandle(filterNodes(), {}, {});
  ServiceAffinity pl({}, *h);
  CycleState state;
  PreFilterResult result;
  EXPECT_TRUE(pl.preFilter(state, pod({}).obj(), h->snapshot(), result).isSkip());
  EXPECT_EQ(pl.preFilterExtensions(), nullptr);
  EXPECT_TRUE(pl.filter(state, pod({}).obj(), *h->snapshot().get("machine1")).ok());
}

// v1.20 TestPreFilterDisabled.
TEST(ServiceAffinityTest, FilterWithoutPreFilterStateIsError) {
  testutil::FakeHandle h;
  ServiceAffinity pl({.affinityLabels = {"region"}}, h);
  CycleState state;
  const auto ni = testutil::makeNodeInfo(testutil::NodeWrapper("n"));
  const Status s = pl.filter(state, pod({}).obj(), *ni);
  EXPECT_EQ(s.code(), Code::kError);
  EXPECT_EQ(s.message(), "error reading \"PreFilterServiceAffinity\" from cycleState: not found");
}

// A pod the preemption simulation removed from the Service's node no longer pins the labels.
TEST(ServiceAffinityTest, FilterIgnoresPodsRemovedFromTheNode) {
  auto h = makeHandle(filterNodes(), {pod(kSelector, "machine3")}, {{kSelector, ""}});
  ServiceAffinity pl({.affinityLabels = {"region"}}, *h);
  CycleState state;
  PreFilterResult result;
  ASSERT_TRUE(pl.preFilter(state, pod(kSelector).obj(), h->snapshot(), result).ok());
  // machine3 itself, without its pod: nothing pins the region.
  auto emptied = testutil::makeNodeInfo(testutil::NodeWrapper("machine3").label("region", "r2"));
  EXPECT_TRUE(pl.filter(state, pod(kSelector).obj(), *emptied).ok());
  EXPECT_EQ(pl.filter(state, pod(kSelector).obj(), *h->snapshot().get("machine1")).code(),
            Code::kUnschedulable);
}

const api::Labels kLabels1{{"foo", "bar"}, {"baz", "blah"}};
const api::Labels kLabels2{{"bar", "foo"}, {"baz", "blah"}};

struct ScoreCase {
  std::string name;
  Pod pod;
  std::vector<Pod> pods;
  bool withRacks = false;
  std::vector<Service> services;
  std::vector<std::string> labels;
  // machine01, machine02, machine11, machine12, machine21, machine22.
  std::vector<int64_t> want;
};

class ServiceAffinityScoreTest : public ::testing::TestWithParam<ScoreCase> {};

TEST_P(ServiceAffinityScoreTest, Score) {
  const ScoreCase& c = GetParam();
  const api::Labels nozone{{"name", "value"}};
  std::vector<Node> nodes;
  if (c.withRacks) {
    nodes = {node("machine01", nozone),
             node("machine02", nozone),
             node("machine11", {{"zone", "zone1"}, {"rack", "rack1"}}),
             node("machine12", {{"zone", "zone1"}, {"rack", "rack2"}}),
             node("machine21", {{"zone", "zone2"}, {"rack", "rack1"}}),
             node("machine22", {{"zone", "zone2"}, {"rack", "rack1"}})};
  } else {
    nodes = {node("machine01", nozone),
             node("machine02", nozone),
             node("machine11", {{"zone", "zone1"}}),
             node("machine12", {{"zone", "zone1"}}),
             node("machine21", {{"zone", "zone2"}}),
             node("machine22", {{"zone", "zone2"}})};
  }
  auto h = makeHandle(nodes, c.pods, c.services);
  auto plugin = makePlugin(serviceAffinityFactory(),
                           nlohmann::json{{"antiAffinityLabelsPreference", c.labels}}, *h);
  auto& pl = dynamic_cast<ServiceAffinity&>(*plugin);
  CycleState state;
  std::vector<NodeScore> scores;
  for (const Node& n : nodes) {
    int64_t v = -1;
    ASSERT_TRUE(pl.score(state, c.pod.obj(), *h->snapshot().get(n.name()), v).ok());
    scores.push_back({n.name(), v});
  }
  ASSERT_TRUE(pl.normalizeScore(state, c.pod.obj(), scores).ok());
  std::vector<int64_t> got;
  for (const NodeScore& s : scores) got.push_back(s.score);
  EXPECT_EQ(got, c.want);
}

const std::string kZ0 = "machine01";
const std::string kZ1 = "machine11";
const std::string kZ2 = "machine21";

INSTANTIATE_TEST_SUITE_P(
    Table, ServiceAffinityScoreTest,
    ::testing::Values(
        ScoreCase{"nothingScheduled", pod({}), {}, false, {}, {"zone"}, {0, 0, 100, 100, 100, 100}},
        ScoreCase{"noServices",
                  pod(kLabels1),
                  {pod({}, kZ1)},
                  false,
                  {},
                  {"zone"},
                  {0, 0, 100, 100, 100, 100}},
        ScoreCase{"differentServices",
                  pod(kLabels1),
                  {pod(kLabels2, kZ1)},
                  false,
                  {{{{"key", "value"}}, ""}},
                  {"zone"},
                  {0, 0, 100, 100, 100, 100}},
        ScoreCase{"threePodsOneServicePod",
                  pod(kLabels1),
                  {pod(kLabels2, kZ0), pod(kLabels2, kZ1), pod(kLabels1, kZ2)},
                  false,
                  {{kLabels1, ""}},
                  {"zone"},
                  {0, 0, 100, 100, 0, 0}},
        ScoreCase{"threePodsTwoServicePodsOnDifferentMachines",
                  pod(kLabels1),
                  {pod(kLabels2, kZ1), pod(kLabels1, kZ1), pod(kLabels1, kZ2)},
                  false,
                  {{kLabels1, ""}},
                  {"zone"},
                  {0, 0, 50, 50, 50, 50}},
        ScoreCase{"threeServiceLabelMatchPodsInDifferentNamespaces",
                  pod(kLabels1, "", "default"),
                  {pod(kLabels1, kZ1), pod(kLabels1, kZ1, "default"), pod(kLabels1, kZ2),
                   pod(kLabels1, kZ2, "ns1")},
                  false,
                  {{kLabels1, "default"}},
                  {"zone"},
                  {0, 0, 0, 0, 100, 100}},
        ScoreCase{"fourPodsThreeServicePods",
                  pod(kLabels1),
                  {pod(kLabels2, kZ1), pod(kLabels1, kZ1), pod(kLabels1, kZ2), pod(kLabels1, kZ2)},
                  false,
                  {{kLabels1, ""}},
                  {"zone"},
                  {0, 0, 66, 66, 33, 33}},
        ScoreCase{"serviceWithPartialPodLabelMatches",
                  pod(kLabels1),
                  {pod(kLabels2, kZ1), pod(kLabels1, kZ1), pod(kLabels1, kZ2)},
                  false,
                  {{{{"baz", "blah"}}, ""}},
                  {"zone"},
                  {0, 0, 33, 33, 66, 66}},
        ScoreCase{"servicePodOnNonZonedNode",
                  pod(kLabels1),
                  {pod(kLabels1, kZ0), pod(kLabels1, kZ1), pod(kLabels1, kZ2), pod(kLabels1, kZ2)},
                  false,
                  {{kLabels1, ""}},
                  {"zone"},
                  {0, 0, 75, 75, 50, 50}},
        ScoreCase{"threePodsTwoServicePodsWithRackLabel",
                  pod(kLabels1),
                  {pod(kLabels2, kZ0), pod(kLabels1, kZ1), pod(kLabels1, kZ2)},
                  true,
                  {{kLabels1, ""}},
                  {"zone", "rack"},
                  {0, 0, 25, 75, 25, 25}},
        // Beyond upstream's table: terminating pods are not counted; no labels: all 0.
        ScoreCase{"terminatingPodsAreNotCounted",
                  pod(kLabels1),
                  {pod(kLabels1, kZ1), pod(kLabels1, kZ2), pod(kLabels1, kZ2).terminating()},
                  false,
                  {{kLabels1, ""}},
                  {"zone"},
                  {0, 0, 50, 50, 50, 50}},
        ScoreCase{"noAntiAffinityLabels",
                  pod(kLabels1),
                  {pod(kLabels1, kZ1)},
                  false,
                  {{kLabels1, ""}},
                  {},
                  {0, 0, 0, 0, 0, 0}}),
    [](const auto& info) { return info.param.name; });

// v1.20 TestPreFilterStateAddRemovePod: AddPod gives the state PreFilter computes with the pod,
// RemovePod the state without it.
TEST(ServiceAffinityTest, PreFilterStateAddRemovePod) {
  const api::Labels selector1{{"foo", "bar"}};
  const std::vector<Node> nodes = {node("nodeA", {{"region", "r1"}, {"zone", "z11"}}),
                                   node("nodeB", {{"region", "r1"}, {"zone", "z12"}}),
                                   node("nodeC", {{"region", "r2"}, {"zone", "z21"}})};
  const Pod pending = Pod("pending").ns("").label("foo", "bar");
  const std::vector<Pod> existing = {Pod("p1").ns("").nodeName("nodeA").label("foo", "bar"),
                                     Pod("p2").ns("").nodeName("nodeC")};
  const Pod added = Pod("addedPod").ns("").nodeName("nodeB").label("foo", "bar");

  auto names = [](const service_affinity::PreFilterState& s) {
    std::vector<std::string> out;
    for (const PodPtr& p : s.matchingPods) out.push_back(p->metadata.name);
    std::sort(out.begin(), out.end());
    return out;
  };
  for (const std::vector<Service>& services :
       {std::vector<Service>{}, std::vector<Service>{{selector1, ""}}}) {
    SCOPED_TRACE(services.size());
    std::vector<Pod> all = existing;
    all.push_back(added);
    auto hAll = makeHandle(nodes, all, services);
    ServiceAffinity plAll({.affinityLabels = {"region", "zone"}}, *hAll);
    CycleState stateAll;
    PreFilterResult result;
    ASSERT_TRUE(plAll.preFilter(stateAll, pending.obj(), hAll->snapshot(), result).ok());

    auto h = makeHandle(nodes, existing, services);
    ServiceAffinity pl({.affinityLabels = {"region", "zone"}}, *h);
    CycleState state;
    ASSERT_TRUE(pl.preFilter(state, pending.obj(), h->snapshot(), result).ok());
    const std::vector<std::string> original = names(*state.read(kStateKey));
    EXPECT_EQ(state.read(kStateKey)->matchingServices.size(), services.size());

    const NodeInfo& nodeB = *h->snapshot().get("nodeB");
    ASSERT_TRUE(pl.addPod(state, pending.obj(), *added.info(), nodeB).ok());
    EXPECT_EQ(names(*state.read(kStateKey)), names(*stateAll.read(kStateKey)));
    ASSERT_TRUE(pl.removePod(state, pending.obj(), *added.info(), nodeB).ok());
    EXPECT_EQ(names(*state.read(kStateKey)), original);
    EXPECT_EQ(original, (std::vector<std::string>{"p1"}));
  }
}

TEST(ServiceAffinityTest, AddRemovePodWithoutStateIsError) {
  testutil::FakeHandle h;
  ServiceAffinity pl({.affinityLabels = {"region"}}, h);
  CycleState state;
  const auto ni = testutil::makeNodeInfo(testutil::NodeWrapper("n"));
  EXPECT_EQ(pl.addPod(state, pod({}).obj(), *pod({}).info(), *ni).code(), Code::kError);
  EXPECT_EQ(pl.removePod(state, pod({}).obj(), *pod({}).info(), *ni).code(), Code::kError);
}

// v1.20 TestPreFilterStateClone.
TEST(ServiceAffinityTest, PreFilterStateClone) {
  service_affinity::PreFilterState source;
  source.matchingPods = {Pod("pod1").ptr(), Pod("pod2").ptr()};
  api::Service svc;
  svc.metadata.name = "service1";
  source.matchingServices = {std::make_shared<const api::Service>(svc)};
  const std::unique_ptr<StateData> clone = source.clone();
  const auto* copy = dynamic_cast<const service_affinity::PreFilterState*>(clone.get());
  ASSERT_NE(copy, nullptr);
  EXPECT_NE(copy, &source);
  EXPECT_EQ(copy->matchingPods, source.matchingPods);
  EXPECT_EQ(copy->matchingServices, source.matchingServices);
}

TEST(ServiceAffinityArgsTest, Decode) {
  const ServiceAffinityArgs args = ServiceAffinityArgs::fromJson(nlohmann::json::parse(
      R"({"kind": "ServiceAffinityArgs", "apiVersion": "kubescheduler.config.k8s.io/v1beta1",
          "affinityLabels": ["region"], "antiAffinityLabelsPreference": ["zone", "rack"]})"));
  EXPECT_EQ(args.affinityLabels, (std::vector<std::string>{"region"}));
  EXPECT_EQ(args.antiAffinityLabelsPreference, (std::vector<std::string>{"zone", "rack"}));
  EXPECT_TRUE(ServiceAffinityArgs::fromJson(nullptr).affinityLabels.empty());

  auto error = [](const char* json) {
    try {
      (void)ServiceAffinityArgs::fromJson(nlohmann::json::parse(json));
    } catch (const PluginArgsError& e) {
      return std::string(e.what());
    }
    return std::string("<no error>");
  };
  EXPECT_EQ(error(R"({"labels": ["a"]})"), "labels: unknown field");
  EXPECT_NE(error(R"({"affinityLabels": "region"})").find("affinityLabels: "), std::string::npos);
}

TEST(ServiceAffinityTest, QueueingHints) {
  using testutil::event;
  using testutil::kNotRegistered;
  using testutil::kWantQueue;
  using testutil::kWantSkip;
  using testutil::obj;
  testutil::FakeHandle h;
  auto pl = makePlugin(serviceAffinityFactory(), nlohmann::json{{"affinityLabels", {"region"}}}, h);
  auto* ext = dynamic_cast<EnqueueExtensions*>(pl.get());
  ASSERT_NE(ext, nullptr);
  const api::Pod p = testutil::PodWrapper("p").ns("ns1").label("foo", "bar").obj();
  auto svc = [](const std::string& ns) {
    api::Service s;
    s.metadata.name = "s";
    s.metadata.namespace_ = ns;
    s.spec.selector = api::Labels{{"foo", "bar"}};
    return EventObject(std::make_shared<const api::Service>(std::move(s)));
  };
  constexpr auto kAssigned = EventResource::kAssignedPod;
  constexpr auto kNode = EventResource::kNode;
  constexpr auto kSvc = EventResource::kService;
  testutil::expectHints(
      *ext,
      {
          {"pod of the namespace added",
           event(kAssigned, kAdd),
           p,
           {},
           obj(testutil::PodWrapper("o").ns("ns1").nodeName("n")),
           kWantQueue},
          {"pod of another namespace added",
           event(kAssigned, kAdd),
           p,
           {},
           obj(testutil::PodWrapper("o").ns("ns2").nodeName("n")),
           kWantSkip},
          {"pod of the namespace deleted",
           event(kAssigned, kDelete),
           p,
           obj(testutil::PodWrapper("o").ns("ns1").nodeName("n")),
           {},
           kWantQueue},
          {"pod label change", event(kAssigned, kUpdatePodLabel), p,
           obj(testutil::PodWrapper("o").ns("ns1").nodeName("n")),
           obj(testutil::PodWrapper("o").ns("ns1").nodeName("n").label("foo", "bar")), kWantQueue},
          {"pod scale down", event(kAssigned, kUpdatePodScaleDown), p,
           obj(testutil::PodWrapper("o").ns("ns1").nodeName("n")),
           obj(testutil::PodWrapper("o").ns("ns1").nodeName("n")), kNotRegistered},
          {"service of the namespace added", event(kSvc, kAdd), p, {}, svc("ns1"), kWantQueue},
          {"service of another namespace updated", event(kSvc, kUpdate), p, svc("ns2"), svc("ns2"),
           kWantSkip},
          {"service of the namespace deleted", event(kSvc, kDelete), p, svc("ns1"), {}, kWantQueue},
          {"node added", event(kNode, kAdd), p, {}, obj(testutil::NodeWrapper("n")), kWantQueue},
          {"node label change", event(kNode, kUpdateNodeLabel), p, obj(testutil::NodeWrapper("n")),
           obj(testutil::NodeWrapper("n").label("region", "r")), kWantQueue},
          {"node taint change", event(kNode, kUpdateNodeTaint), p, obj(testutil::NodeWrapper("n")),
           obj(testutil::NodeWrapper("n").taint("k", "v", "NoSchedule")), kNotRegistered},
      });
}

}  // namespace
}  // namespace ksched::plugins
