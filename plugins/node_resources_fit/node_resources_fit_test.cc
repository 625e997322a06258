#include "plugins/node_resources_fit/node_resources_fit.h"

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <ksched/api/features.h>
#include <ksched/registry.h>

#include "plugins/node_resources_fit/resource_allocation.h"
#include "tests/support/plugin_test_util.h"
#include "tests/support/queueing_hint_test_util.h"

namespace ksched::plugins {
namespace {

using testutil::NodeWrapper;
using testutil::PodWrapper;
using testutil::ResourcePairs;

// Without a cache: the hints answer as upstream's.
testutil::FakeHandle noCache;

std::unique_ptr<NodeResourcesFit> makeFit(const nlohmann::json& args = nullptr,
                                          testutil::FakeHandle& h = noCache) {
  std::unique_ptr<Plugin> p = makePlugin(nodeResourcesFitFactory(), args, h);
  return std::unique_ptr<NodeResourcesFit>(dynamic_cast<NodeResourcesFit*>(p.release()));
}

// ---- Filter -------------------------------------------------------------------------------

// As upstream's fit_test.go: cpu in millicores, memory in bytes.
NodeWrapper filterNode(const std::string& pods = "32") {
  return NodeWrapper("node").capacity({{"cpu", "10m"},
                                       {"memory", "20"},
                                       {"pods", pods},
                                       {"example.com/aaa", "5"},
                                       {"ephemeral-storage", "20"},
                                       {"hugepages-2Mi", "5"},
                                       {"kubernetes.io/something", "5"}});
}

PodWrapper cpuMem(const std::string& cpuMilli, const std::string& mem) {
  return PodWrapper().req({{"cpu", cpuMilli + "m"}, {"memory", mem}});
}

struct FilterCase {
  std::string name;
  PodWrapper pod;
  std::vector<PodWrapper> existing;
  nlohmann::json args;
  Code wantCode;
  std::vector<std::string> wantReasons;
  NodeWrapper node = filterNode();
};

class NodeResourcesFitFilterTest : public ::testing::TestWithParam<FilterCase> {};

TEST_P(NodeResourcesFitFilterTest, Filter) {
  const FilterCase& c = GetParam();
  auto pl = makeFit(c.args);
  std::vector<PodWrapper> existing = c.existing;
  for (size_t i = 0; i < existing.size(); ++i) existing[i].name("existing" + std::to_string(i));
  auto ni = testutil::makeNodeInfo(c.node, existing);
  CycleState state;
  PreFilterResult result;
  testutil::FakeLister lister;
  ASSERT_TRUE(pl->preFilter(state, c.pod.obj(), lister, result).ok());
  EXPECT_FALSE(result.nodeNames);
  Status s = pl->filter(state, c.pod.obj(), *ni);
  EXPECT_EQ(s.code(), c.wantCode) << s.message();
  EXPECT_EQ(s.reasons(), c.wantReasons);
}

const Code kOK = Code::kSuccess;
const Code kUnsched = Code::kUnschedulable;
const Code kUnresolvable = Code::kUnschedulableAndUnresolvable;

INSTANTIATE_TEST_SUITE_P(
    Table, NodeResourcesFitFilterTest,
    ::testing::Values(
        FilterCase{"noRequestsAlwaysFits", PodWrapper(), {cpuMem("10", "20")}, nullptr, kOK, {}},
        FilterCase{"tooManyResources",
                   cpuMem("1", "1"),
                   {cpuMem("10", "20")},
                   nullptr,
                   kUnsched,
                   {"Insufficient cpu", "Insufficient memory"}},
        FilterCase{"initContainerCpu",
                   cpuMem("1", "1").initReq({{"cpu", "3m"}, {"memory", "1"}}),
                   {cpuMem("8", "19")},
                   nullptr,
                   kUnsched,
                   {"Insufficient cpu"}},
        FilterCase{"highestInitContainerCpu",
                   cpuMem("1", "1")
                       .initReq({{"cpu", "3m"}, {"memory", "1"}})
                       .initReq({{"cpu", "2m"}, {"memory", "1"}}),
                   {cpuMem("8", "19")},
                   nullptr,
                   kUnsched,
                   {"Insufficient cpu"}},
        FilterCase{"initContainerMemory",
                   cpuMem("1", "1").initReq({{"cpu", "1m"}, {"memory", "3"}}),
                   {cpuMem("9", "19")},
                   nullptr,
                   kUnsched,
                   {"Insufficient memory"}},
        FilterCase{"initContainerIsMaxNotSum",
                   cpuMem("1", "1")
                       .initReq({{"cpu", "1m"}, {"memory", "1"}})
                       .initReq({{"cpu", "1m"}, {"memory", "1"}}),
                   {cpuMem("9", "19")},
                   nullptr,
                   kOK,
                   {}},
        FilterCase{"sidecarAddsToContainers",
                   cpuMem("1", "1").initReq({{"cpu", "2m"}, {"memory", "1"}}, /*sidecar=*/true),
                   {cpuMem("8", "0")},
                   nullptr,
                   kUnsched,
                   {"Insufficient cpu"}},
        FilterCase{"bothFit", cpuMem("1", "1"), {cpuMem("5", "5")}, nullptr, kOK, {}},
        FilterCase{"onlyMemoryFits",
                   cpuMem("2", "1"),
                   {cpuMem("9", "5")},
                   nullptr,
                   kUnsched,
                   {"Insufficient cpu"}},
        FilterCase{"onlyCpuFits",
                   cpuMem("1", "2"),
                   {cpuMem("5", "19")},
                   nullptr,
                   kUnsched,
                   {"Insufficient memory"}},
        FilterCase{"equalEdgeCase", cpuMem("5", "1"), {cpuMem("5", "19")}, nullptr, kOK, {}},
        FilterCase{"cpuExceedsAllocatableIsUnresolvable",
                   cpuMem("11", "1"),
                   {},
                   nullptr,
                   kUnresolvable,
                   {"Insufficient cpu"}},
        FilterCase{"oneUnresolvableMakesAllUnresolvable",
                   cpuMem("2", "21"),
                   {cpuMem("9", "0")},
                   nullptr,
                   kUnresolvable,
                   {"Insufficient cpu", "Insufficient memory"}},
        FilterCase{"overheadFits",
                   cpuMem("1", "1").overhead({{"cpu", "3m"}, {"memory", "13"}}),
                   {cpuMem("5", "5")},
                   nullptr,
                   kOK,
                   {}},
        FilterCase{"overheadDoesNotFitMemory",
                   cpuMem("1", "1").overhead({{"cpu", "1m"}, {"memory", "15"}}),
                   {cpuMem("5", "5")},
                   nullptr,
                   kUnsched,
                   {"Insufficient memory"}},
        FilterCase{"extendedResourceFits",
                   PodWrapper().req({{"example.com/aaa", "1"}}),
                   {},
                   nullptr,
                   kOK,
                   {}},
        FilterCase{"extendedResourceAllocatableEnforced",
                   PodWrapper().req({{"example.com/aaa", "1"}}),
                   {PodWrapper().req({{"example.com/aaa", "5"}})},
                   nullptr,
                   kUnsched,
                   {"Insufficient example.com/aaa"}},
        FilterCase{"extendedResourceCapacityEnforced",
                   PodWrapper().req({{"example.com/aaa", "10"}}),
                   {},
                   nullptr,
                   kUnresolvable,
                   {"Insufficient example.com/aaa"}},
        FilterCase{"unknownExtendedResource",
                   PodWrapper().req({{"example.com/bbb", "1"}}),
                   {},
                   nullptr,
                   kUnresolvable,
                   {"Insufficient example.com/bbb"}},
        FilterCase{"ignoredExtendedResource",
                   PodWrapper().req({{"example.com/bbb", "1"}}),
                   {},
                   {{"ignoredResources", {"example.com/bbb"}}},
                   kOK,
                   {}},
        FilterCase{"ignoredResourceGroup",
                   PodWrapper().req({{"example.com/bbb", "1"}}),
                   {},
                   {{"ignoredResourceGroups", {"example.com"}}},
                   kOK,
                   {}},
        FilterCase{"prefixedNativeResourceCannotBeIgnored",
                   PodWrapper().req({{"kubernetes.io/something", "6"}}),
                   {},
                   {{"ignoredResources", {"kubernetes.io/something"}}},
                   kUnresolvable,
                   {"Insufficient kubernetes.io/something"}},
        FilterCase{"hugePages",
                   PodWrapper().req({{"hugepages-2Mi", "3"}}),
                   {PodWrapper().req({{"hugepages-2Mi", "3"}})},
                   nullptr,
                   kUnsched,
                   {"Insufficient hugepages-2Mi"}},
        FilterCase{"zeroScalarRequestIgnored",
                   PodWrapper().req({{"example.com/bbb", "0"}}),
                   {},
                   nullptr,
                   kOK,
                   {}},
        FilterCase{"ephemeralStorage",
                   PodWrapper().req({{"ephemeral-storage", "10"}}),
                   {PodWrapper().req({{"ephemeral-storage", "15"}})},
                   nullptr,
                   kUnsched,
                   {"Insufficient ephemeral-storage"}},
        FilterCase{"tooManyPods",
                   PodWrapper(),
                   {PodWrapper()},
                   nullptr,
                   kUnsched,
                   {"Too many pods"},
                   filterNode("1")},
        FilterCase{"allReasonsInOrder",
                   PodWrapper().req({{"cpu", "2m"},
                                     {"memory", "2"},
                                     {"ephemeral-storage", "2"},
                                     {"hugepages-2Mi", "6"},
                                     {"example.com/aaa", "1"}}),
                   {PodWrapper().req({{"cpu", "9m"},
                                      {"memory", "19"},
                                      {"ephemeral-storage", "19"},
                                      {"example.com/aaa", "5"}})},
                   nullptr,
                   kUnresolvable,
                   {"Too many pods", "Insufficient cpu", "Insufficient memory",
                    "Insufficient ephemeral-storage", "Insufficient example.com/aaa",
                    "Insufficient hugepages-2Mi"},
                   filterNode("1")}),
    [](const auto& info) { return info.param.name; });

TEST(NodeResourcesFitTest, MulDivOverflowsNever) {
  EXPECT_EQ(mulDiv(7, 100, 3), 233);
  EXPECT_EQ(mulDiv(-7, 100, 3), -233);  // truncated toward zero, as Go's division
  EXPECT_EQ(mulDiv(0, 100, 3), 0);
  // 64 GiB of memory in bytes, times 100: fits in 64 bits.
  EXPECT_EQ(mulDiv(int64_t{1} << 36, 100, int64_t{1} << 37), 50);
  // 2^62 * 100 overflows 64 bits; the quotient does not.
  EXPECT_EQ(mulDiv(int64_t{1} << 62, 100, int64_t{1} << 62), 100);
  EXPECT_EQ(mulDiv(int64_t{1} << 62, 100, 200), int64_t{1} << 61);
  EXPECT_EQ(mulDiv(-(int64_t{1} << 62), 100, 200), -(int64_t{1} << 61));
}

TEST(NodeResourcesFitTest, FilterWithoutPreFilterIsError) {
  auto pl = makeFit();
  CycleState state;
  auto ni = testutil::makeNodeInfo(filterNode());
  Status s = pl->filter(state, PodWrapper().obj(), *ni);
  EXPECT_EQ(s.code(), Code::kError);
  EXPECT_EQ(s.message(), "error reading \"PreFilterNodeResourcesFit\" from cycleState: not found");
}

TEST(NodeResourcesFitTest, PreFilterStateSurvivesClone) {
  auto pl = makeFit();
  CycleState state;
  PreFilterResult result;
  testutil::FakeLister lister;
  const api::Pod pod = cpuMem("11", "1").obj();
  ASSERT_TRUE(pl->preFilter(state, pod, lister, result).ok());
  CycleState copy = state.clone();
  auto ni = testutil::makeNodeInfo(filterNode());
  EXPECT_EQ(pl->filter(copy, pod, *ni).reasons(), std::vector<std::string>{"Insufficient cpu"});
}

// Pod-level requests (upstream fit_test.go TestEnoughRequests, podLevelResourcesEnabled), and
// the same pods with the PodLevelResources gate off, where spec.resources is ignored.
TEST(NodeResourcesFitTest, PodLevelRequests) {
  struct Case {
    std::string name;
    PodWrapper pod;
    std::vector<PodWrapper> existing;
    Code wantCode;
    std::vector<std::string> wantReasons;
    Code gateOffCode;
  };
  const std::vector<Case> cases = {
      {"both pod-level and container-level resources fit",
       cpuMem("1", "1").podReq({{"cpu", "1m"}, {"memory", "2"}}),
       {cpuMem("5", "5")},
       kOK,
       {},
       kOK},
      {"pod-level cpu resource not fit",
       cpuMem("1", "1").podReq({{"cpu", "7m"}, {"memory", "2"}}),
       {cpuMem("5", "5")},
       kUnsched,
       {"Insufficient cpu"},
       kOK},
      {"pod-level memory resource not fit",
       cpuMem("1", "1").podReq({{"cpu", "3m"}, {"memory", "2"}}),
       {cpuMem("5", "19")},
       kUnsched,
       {"Insufficient memory"},
       kOK},
      {"pod-level hugepages resource fit",
       PodWrapper().podReq({{"cpu", "3m"}, {"memory", "2"}, {"hugepages-2Mi", "5"}}),
       {},
       kOK,
       {},
       kOK},
      {"both pod-level and container-level hugepages resource fit",
       PodWrapper()
           .req({{"cpu", "1m"}, {"memory", "1"}, {"hugepages-2Mi", "3"}})
           .podReq({{"cpu", "3m"}, {"memory", "2"}, {"hugepages-2Mi", "5"}}),
       {},
       kOK,
       {},
       kOK},
      {"pod-level hugepages resource not fit",
       PodWrapper().podReq({{"cpu", "3m"}, {"memory", "2"}, {"hugepages-2Mi", "10"}}),
       {},
       kUnresolvable,
       {"Insufficient hugepages-2Mi"},
       kOK},
      {"one pod-level cpu resource fits and all init and non-init containers resources fit",
       cpuMem("1", "1")
           .initReq({{"cpu", "1m"}, {"memory", "1"}})
           .podReq({{"cpu", "3m"}, {"memory", "2"}}),
       {cpuMem("5", "19")},
       kUnsched,
       {"Insufficient memory"},
       kOK},
      {"pod-level request above the whole node",
       cpuMem("1", "1").podReq({{"cpu", "11m"}}),
       {},
       kUnresolvable,
       {"Insufficient cpu"},
       kOK},
  };
  for (const bool gate : {true, false}) {
    testutil::FakeHandle h;
    features::Gates gates;
    gates.force(features::Feature::kPodLevelResources, gate);
    h.setFeatures(gates);
    for (const Case& c : cases) {
      SCOPED_TRACE(c.name + (gate ? "" : " (PodLevelResources off)"));
      auto pl = makeFit(nullptr, h);
      std::vector<PodWrapper> existing = c.existing;
      for (size_t i = 0; i < existing.size(); ++i) existing[i].name("e" + std::to_string(i));
      auto ni = testutil::makeNodeInfo(filterNode(), existing);
      CycleState state;
      PreFilterResult result;
      testutil::FakeLister lister;
      ASSERT_TRUE(pl->preFilter(state, c.pod.obj(), lister, result).ok());
      Status s = pl->filter(state, c.pod.obj(), *ni);
      EXPECT_EQ(s.code(), gate ? c.wantCode : c.gateOffCode) << s.message();
      EXPECT_EQ(s.reasons(), gate ? c.wantReasons : std::vector<std::string>{});
    }
  }

  // The numbers of the rejection are the pod level's (7m), not the containers' sum (1m).
  auto pl = makeFit();
  auto ni = testutil::makeNodeInfo(filterNode(), {cpuMem("5", "5")});
  auto got = pl->fitsRequest(
      pl->computePodResourceRequest(cpuMem("1", "1").podReq({{"cpu", "7m"}}).obj()), *ni);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].reason, "Insufficient cpu");
  EXPECT_EQ(got[0].requested, 7);
  EXPECT_EQ(got[0].used, 5);
  EXPECT_EQ(got[0].capacity, 10);
}

// LeastAllocated scores the pod-level requests: cpu 3 of 4 (25), memory 1Gi of 4Gi (75).
TEST(NodeResourcesFitTest, ScoreUsesPodLevelRequests) {
  const api::Pod pod =
      PodWrapper().req({{"cpu", "1"}, {"memory", "1Gi"}}).podReq({{"cpu", "3"}}).obj();
  auto ni = testutil::makeNodeInfo(
      NodeWrapper().capacity({{"cpu", "4"}, {"memory", "4Gi"}, {"pods", "10"}}));
  for (const auto& [gate, want] : {std::pair{true, 50}, std::pair{false, 75}}) {
    SCOPED_TRACE(gate);
    testutil::FakeHandle h;
    features::Gates gates;
    gates.force(features::Feature::kPodLevelResources, gate);
    h.setFeatures(gates);
    auto pl = makeFit(nullptr, h);
    CycleState state;
    ASSERT_TRUE(pl->preScore(state, pod, {ni.get()}).ok());
    int64_t score = -1;
    ASSERT_TRUE(pl->score(state, pod, *ni, score).ok());
    EXPECT_EQ(score, want);
  }
}

// A pod on the node counts at its resized size (status larger than spec).
TEST(NodeResourcesFitTest, ResizedPodOnTheNodeCountsAtItsAllocatedSize) {
  auto pl = makeFit();
  auto ni = testutil::makeNodeInfo(filterNode(), {cpuMem("5", "5").allocated({{"cpu", "8m"}})});
  EXPECT_EQ(ni->requested().milliCPU, 8);
  CycleState state;
  PreFilterResult result;
  testutil::FakeLister lister;
  const api::Pod pod = cpuMem("3", "1").obj();
  ASSERT_TRUE(pl->preFilter(state, pod, lister, result).ok());
  Status s = pl->filter(state, pod, *ni);
  EXPECT_EQ(s.code(), kUnsched);
  EXPECT_EQ(s.reasons(), std::vector<std::string>{"Insufficient cpu"});
}

TEST(NodeResourcesFitTest, InsufficientResourceDetails) {
  auto pl = makeFit();
  auto ni = testutil::makeNodeInfo(filterNode(), {cpuMem("8", "0")});
  auto got = pl->fitsRequest(pl->computePodResourceRequest(cpuMem("3", "0").obj()), *ni);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].resourceName, "cpu");
  EXPECT_EQ(got[0].reason, "Insufficient cpu");
  EXPECT_EQ(got[0].requested, 3);
  EXPECT_EQ(got[0].used, 8);
  EXPECT_EQ(got[0].capacity, 10);
  EXPECT_FALSE(got[0].unresolvable);
}

// ---- Queueing hints ------------------------------------------------------------------------

using testutil::event;
using testutil::kNotRegistered;
using testutil::kWantQueue;
using testutil::kWantSkip;
using testutil::obj;

TEST(NodeResourcesFitTest, QueueingHints) {
  constexpr auto kAssigned = EventResource::kAssignedPod;
  constexpr auto kUnscheduled = EventResource::kUnscheduledPod;
  constexpr auto kNode = EventResource::kNode;
  const api::Pod pod = PodWrapper("pod").req({{"cpu", "1"}, {"example.com/gpu", "1"}}).obj();
  const api::Pod cpuOnly = PodWrapper("pod").req({{"cpu", "1"}, {"memory", "0"}}).obj();
  const api::Pod noRequests = PodWrapper("pod").obj();
  auto other = [](const ResourcePairs& r) { return PodWrapper("other").nodeName("n1").req(r); };
  auto node = [](const ResourcePairs& r) { return NodeWrapper("n1").capacity(r); };
  const ResourcePairs big{
      {"cpu", "4"}, {"memory", "4Gi"}, {"example.com/gpu", "2"}, {"pods", "10"}};

  testutil::expectHints(
      *makeFit(),
      {
          // Pod deleted or scaled down.
          {"assigned pod deleted",
           event(kAssigned, kDelete),
           pod,
           obj(other({{"cpu", "1"}})),
           {},
           kWantQueue},
          {"unscheduled pod deleted",
           event(kUnscheduled, kDelete),
           pod,
           obj(PodWrapper("other").req({{"cpu", "1"}})),
           {},
           kWantSkip},
          {"the pod itself scaled down", event(kUnscheduled, kUpdatePodScaleDown), pod,
           obj(PodWrapper("pod").req({{"cpu", "2"}})), obj(PodWrapper("pod").req({{"cpu", "1"}})),
           kWantQueue},
          {"unscheduled pod scaled down", event(kUnscheduled, kUpdatePodScaleDown), pod,
           obj(PodWrapper("other").req({{"cpu", "2"}})),
           obj(PodWrapper("other").req({{"cpu", "1"}})), kWantSkip},
          {"assigned pod scaled down requested cpu", event(kAssigned, kUpdatePodScaleDown), pod,
           obj(other({{"cpu", "2"}})), obj(other({{"cpu", "1"}})), kWantQueue},
          {"assigned pod scaled down requested extended resource",
           event(kAssigned, kUpdatePodScaleDown), pod, obj(other({{"example.com/gpu", "2"}})),
           obj(other({{"example.com/gpu", "1"}})), kWantQueue},
          {"assigned pod scaled down memory, not requested", event(kAssigned, kUpdatePodScaleDown),
           pod, obj(other({{"cpu", "1"}, {"memory", "2Gi"}})),
           obj(other({{"cpu", "1"}, {"memory", "1Gi"}})), kWantSkip},
          {"assigned pod scaled down memory, requested as zero",
           event(kAssigned, kUpdatePodScaleDown), cpuOnly, obj(other({{"memory", "2Gi"}})),
           obj(other({{"memory", "1Gi"}})), kWantSkip},
          // In-place resize: the spec goes down first, the room is free once the kubelet has
          // allocated the smaller size (status).
          {"assigned pod spec scaled down, not yet allocated",
           event(kAssigned, kUpdatePodScaleDown), pod,
           obj(other({{"cpu", "2"}}).allocated({{"cpu", "2"}})),
           obj(other({{"cpu", "1"}}).allocated({{"cpu", "2"}})), kWantSkip},
          {"assigned pod resize allocated", event(kAssigned, kUpdatePodScaleDown), pod,
           obj(other({{"cpu", "1"}}).allocated({{"cpu", "2"}})),
           obj(other({{"cpu", "1"}}).allocated({{"cpu", "1"}})), kWantQueue},
          {"assigned pod pod-level cpu scaled down", event(kAssigned, kUpdatePodScaleDown), pod,
           obj(other({{"cpu", "1"}}).podReq({{"cpu", "3"}})),
           obj(other({{"cpu", "1"}}).podReq({{"cpu", "2"}})), kWantQueue},
          {"assigned pod added",
           event(kAssigned, kAdd),
           pod,
           {},
           obj(other({{"cpu", "1"}})),
           kNotRegistered},
          {"assigned pod label update", event(kAssigned, kUpdatePodLabel), pod,
           obj(other({{"cpu", "1"}})), obj(other({{"cpu", "1"}})), kNotRegistered},
          {"unscheduled pod other update", event(kUnscheduled, kUpdateOther), pod,
           obj(PodWrapper("pod")), obj(PodWrapper("pod")), kNotRegistered},

          // Node added or its allocatable changed.
          {"node added with room", event(kNode, kAdd), pod, {}, obj(node(big)), kWantQueue},
          {"node added with too little cpu",
           event(kNode, kAdd),
           pod,
           {},
           obj(node({{"cpu", "500m"}, {"example.com/gpu", "2"}, {"pods", "10"}})),
           kWantSkip},
          {"node added without the extended resource",
           event(kNode, kAdd),
           pod,
           {},
           obj(node({{"cpu", "4"}, {"pods", "10"}})),
           kWantSkip},
          {"node added without pod slots",
           event(kNode, kAdd),
           noRequests,
           {},
           obj(node({{"cpu", "4"}})),
           kWantSkip},
          {"requested cpu increased", event(kNode, kUpdateNodeAllocatable), pod,
           obj(node({{"cpu", "500m"}, {"example.com/gpu", "2"}, {"pods", "10"}})), obj(node(big)),
           kWantQueue},
          {"requested extended resource increased", event(kNode, kUpdateNodeAllocatable), pod,
           obj(node({{"cpu", "4"}, {"example.com/gpu", "1"}, {"pods", "10"}})),
           obj(node({{"cpu", "4"}, {"example.com/gpu", "2"}, {"pods", "10"}})), kWantQueue},
          {"allowed pods increased", event(kNode, kUpdateNodeAllocatable), noRequests,
           obj(node({{"pods", "1"}})), obj(node({{"pods", "2"}})), kWantQueue},
          {"requested cpu increased, still too little", event(kNode, kUpdateNodeAllocatable), pod,
           obj(node({{"cpu", "100m"}, {"example.com/gpu", "2"}, {"pods", "10"}})),
           obj(node({{"cpu", "500m"}, {"example.com/gpu", "2"}, {"pods", "10"}})), kWantSkip},
          {"only memory increased", event(kNode, kUpdateNodeAllocatable), cpuOnly,
           obj(node({{"cpu", "4"}, {"memory", "1Gi"}, {"pods", "10"}})),
           obj(node({{"cpu", "4"}, {"memory", "2Gi"}, {"pods", "10"}})), kWantSkip},
          {"cpu increased, pod requests nothing", event(kNode, kUpdateNodeAllocatable), noRequests,
           obj(node({{"cpu", "1"}, {"pods", "10"}})), obj(node({{"cpu", "2"}, {"pods", "10"}})),
           kWantSkip},
          {"allocatable decreased", event(kNode, kUpdateNodeAllocatable), pod, obj(node(big)),
           obj(node({{"cpu", "2"}, {"example.com/gpu", "1"}, {"pods", "10"}})), kWantSkip},
          {"node taint update", event(kNode, kUpdateNodeTaint), pod, obj(node(big)),
           obj(node(big).taint("k", "v", "NoSchedule")), kNotRegistered},
          {"node label update", event(kNode, kUpdateNodeLabel), pod, obj(node(big)),
           obj(node(big).label("k", "v")), kNotRegistered},
          {"node condition update", event(kNode, kUpdateNodeCondition), pod, obj(node(big)),
           obj(node(big)), kNotRegistered},
          {"node deleted", event(kNode, kDelete), pod, obj(node(big)), {}, kNotRegistered},
      });
}

TEST(NodeResourcesFitTest, QueueingHintsIgnoredResources) {
  const api::Pod pod = PodWrapper("pod").req({{"cpu", "1"}, {"example.com/gpu", "1"}}).obj();
  const auto node = NodeWrapper("n1").capacity({{"cpu", "4"}, {"pods", "10"}});
  // The Filter does not check ignored resources, nor does the hint.
  testutil::expectHints(
      *makeFit({{"ignoredResources", {"example.com/gpu"}}}),
      {{"ignored resource", event(EventResource::kNode, kAdd), pod, {}, obj(node), kWantQueue}});
  testutil::expectHints(
      *makeFit({{"ignoredResourceGroups", {"example.com"}}}),
      {{"ignored group", event(EventResource::kNode, kAdd), pod, {}, obj(node), kWantQueue}});
  testutil::expectHints(
      *makeFit({{"ignoredResourceGroups", {"other.com"}}}),
      {{"other group", event(EventResource::kNode, kAdd), pod, {}, obj(node), kWantSkip}});
}

TEST(NodeResourcesFitTest, QueueingHintsAskTheCacheWhetherTheFreedNodeFits) {
  constexpr auto kAssigned = EventResource::kAssignedPod;
  // n1 (4 cpu) as the cache holds it after the change: 3 cpu in use, 1 free.
  const auto n1 = NodeWrapper("n1").capacity({{"cpu", "4"}, {"memory", "8Gi"}, {"pods", "10"}});
  testutil::FakeHandle cache(testutil::FakeLister(
      {testutil::makeNodeInfo(n1, {PodWrapper("a").nodeName("n1").req({{"cpu", "2"}}),
                                   PodWrapper("b").nodeName("n1").req({{"cpu", "1"}})})}));
  auto fit = makeFit(nullptr, cache);
  const api::Pod one = PodWrapper("one").req({{"cpu", "1"}}).obj();
  const api::Pod two = PodWrapper("two").req({{"cpu", "2"}}).obj();
  const auto gone = PodWrapper("gone").nodeName("n1").req({{"cpu", "1"}});
  const auto elsewhere = PodWrapper("gone").nodeName("n9").req({{"cpu", "1"}});
  testutil::expectHints(
      *fit,
      {
          {"fits the freed node", event(kAssigned, kDelete), one, obj(gone), {}, kWantQueue},
          {"does not fit the freed node", event(kAssigned, kDelete), two, obj(gone), {}, kWantSkip},
          {"node unknown to the cache: as upstream",
           event(kAssigned, kDelete),
           two,
           obj(elsewhere),
           {},
           kWantQueue},
          {"scaled down, now fits", event(kAssigned, kUpdatePodScaleDown), one,
           obj(PodWrapper("b").nodeName("n1").req({{"cpu", "2"}})),
           obj(PodWrapper("b").nodeName("n1").req({{"cpu", "1"}})), kWantQueue},
          {"scaled down, still does not fit", event(kAssigned, kUpdatePodScaleDown), two,
           obj(PodWrapper("b").nodeName("n1").req({{"cpu", "2"}})),
           obj(PodWrapper("b").nodeName("n1").req({{"cpu", "1"}})), kWantSkip},
      });
}

TEST(NodeResourcesFitTest, QueueingHintsCountPodsNominatedToTheFreedNode) {
  constexpr auto kAssigned = EventResource::kAssignedPod;
  constexpr auto kUnscheduled = EventResource::kUnscheduledPod;
  // n1 after a victim left: 3 of 4 cpu in use, 1 free. "waiting" (1 cpu, priority 10)
  // preempted there and waits for its other victims; the Filter counts it for pods of priority
  // up to 10, so the free cpu is only free for pods above it.
  const auto n1 = NodeWrapper("n1").capacity({{"cpu", "4"}, {"memory", "8Gi"}, {"pods", "10"}});
  testutil::FakeHandle cache(testutil::FakeLister(
      {testutil::makeNodeInfo(n1, {PodWrapper("a").nodeName("n1").req({{"cpu", "2"}}),
                                   PodWrapper("b").nodeName("n1").req({{"cpu", "1"}})})}));
  api::Pod waiting = PodWrapper("waiting").req({{"cpu", "1"}}).priority(10).obj();
  waiting.status.nominatedNodeName = "n1";
  cache.nominate("n1", std::make_shared<PodInfo>(std::make_shared<const api::Pod>(waiting),
                                                 features::Gates{}));
  auto fit = makeFit(nullptr, cache);
  const auto gone = PodWrapper("gone").nodeName("n1").req({{"cpu", "1"}});
  auto pending = [](int32_t priority) {
    return PodWrapper("pending").req({{"cpu", "1"}}).priority(priority).obj();
  };
  api::Pod otherNominee = PodWrapper("nominee").req({{"cpu", "1"}}).priority(10).obj();
  otherNominee.status.nominatedNodeName = "n1";
  testutil::expectHints(
      *fit,
      {
          {"same priority: the room is reserved",
           event(kAssigned, kDelete),
           pending(10),
           obj(gone),
           {},
           kWantSkip},
          {"lower priority: reserved as well",
           event(kAssigned, kDelete),
           pending(5),
           obj(gone),
           {},
           kWantSkip},
          {"higher priority: the nominee does not count",
           event(kAssigned, kDelete),
           pending(11),
           obj(gone),
           {},
           kWantQueue},
          {"the nominee itself", event(kAssigned, kDelete), waiting, obj(gone), {}, kWantQueue},
          {"the nominee deleted: its room is free again",
           event(kUnscheduled, kDelete),
           pending(10),
           obj(waiting),
           {},
           kWantQueue},
          {"another unscheduled nominee deleted: the room stays reserved",
           event(kUnscheduled, kDelete),
           pending(10),
           obj(otherNominee),
           {},
           kWantSkip},
      });
}

TEST(NodeResourcesFitTest, FactoryRejectsInvalidArgs) {
  testutil::FakeHandle h;
  try {
    (void)makePlugin(nodeResourcesFitFactory(),
                     nlohmann::json::parse(R"({"scoringStrategy": {"type": "Foo"}})"), h);
    ADD_FAILURE() << "no error";
  } catch (const PluginArgsError& e) {
    EXPECT_EQ(std::string(e.what()),
              "scoringStrategy.type: Unsupported value: \"Foo\": supported values: "
              "\"LeastAllocated\", \"MostAllocated\", \"RequestedToCapacityRatio\"");
  }
}

// ---- Score --------------------------------------------------------------------------------

struct ScoreCase {
  std::string name;
  PodWrapper pod;
  // Each node with the pods already on it.
  std::vector<std::pair<NodeWrapper, std::vector<PodWrapper>>> nodes;
  nlohmann::json args;
  std::vector<int64_t> want;
};

class NodeResourcesFitScoreTest : public ::testing::TestWithParam<ScoreCase> {};

TEST_P(NodeResourcesFitScoreTest, Score) {
  const ScoreCase& c = GetParam();
  auto pl = makeFit(c.args);
  EXPECT_FALSE(pl->hasNormalizeScore());
  std::vector<std::shared_ptr<NodeInfo>> infos;
  std::vector<const NodeInfo*> nodes;
  for (const auto& [node, pods] : c.nodes) {
    std::vector<PodWrapper> named = pods;
    for (size_t i = 0; i < named.size(); ++i) {
      named[i].name(node.obj().metadata.name + "-pod" + std::to_string(i));
    }
    infos.push_back(testutil::makeNodeInfo(node, named));
    nodes.push_back(infos.back().get());
  }
  CycleState state;
  ASSERT_TRUE(pl->preScore(state, c.pod.obj(), nodes).ok());
  std::vector<int64_t> got;
  std::vector<int64_t> gotWithoutPreScore;
  CycleState empty;
  for (const NodeInfo* ni : nodes) {
    int64_t score = -1;
    ASSERT_TRUE(pl->score(state, c.pod.obj(), *ni, score).ok());
    got.push_back(score);
    int64_t direct = -1;
    ASSERT_TRUE(pl->score(empty, c.pod.obj(), *ni, direct).ok());
    gotWithoutPreScore.push_back(direct);
  }
  EXPECT_EQ(got, c.want);
  EXPECT_EQ(gotWithoutPreScore, c.want);
}

NodeWrapper node(const std::string& name, const ResourcePairs& capacity) {
  return NodeWrapper(name).capacity(capacity);
}

nlohmann::json strategy(const std::string& type, const nlohmann::json& resources = nullptr,
                        const nlohmann::json& shape = nullptr) {
  nlohmann::json s = {{"type", type}};
  if (!resources.is_null()) s["resources"] = resources;
  if (!shape.is_null()) s["requestedToCapacityRatio"] = {{"shape", shape}};
  return {{"scoringStrategy", s}};
}

const PodWrapper kPod1 = PodWrapper().req({{"cpu", "1"}, {"memory", "2000"}});

// Worked by hand (integer divisions as upstream):
//   node1 (4 cpu, 10000 B, a pod of 1 cpu / 2000 B): cpu 2000m/4000m, memory 4000/10000
//   node2 (6 cpu, 10000 B, empty):                    cpu 1000m/6000m, memory 2000/10000
INSTANTIATE_TEST_SUITE_P(
    Table, NodeResourcesFitScoreTest,
    ::testing::Values(
        // least: node1 (50 + 60) / 2 = 55; node2 (83 + 80) / 2 = 81.
        ScoreCase{"leastAllocated",
                  kPod1,
                  {{node("node1", {{"cpu", "4"}, {"memory", "10000"}}), {kPod1}},
                   {node("node2", {{"cpu", "6"}, {"memory", "10000"}}), {}}},
                  nullptr,
                  {55, 81}},
        // node1 (50*3 + 60) / 4 = 52; node2 (83*3 + 80) / 4 = 82.
        ScoreCase{"leastAllocatedWeighted",
                  kPod1,
                  {{node("node1", {{"cpu", "4"}, {"memory", "10000"}}), {kPod1}},
                   {node("node2", {{"cpu", "6"}, {"memory", "10000"}}), {}}},
                  strategy("LeastAllocated",
                           {{{"name", "cpu"}, {"weight", 3}}, {{"name", "memory"}, {"weight", 1}}}),
                  {52, 82}},
        // most: node1 (50 + 40) / 2 = 45; node2 (16 + 20) / 2 = 18.
        ScoreCase{"mostAllocated",
                  kPod1,
                  {{node("node1", {{"cpu", "4"}, {"memory", "10000"}}), {kPod1}},
                   {node("node2", {{"cpu", "6"}, {"memory", "10000"}}), {}}},
                  strategy("MostAllocated"),
                  {45, 18}},
        // A pod without requests counts 100m cpu and 200Mi memory, on both sides:
        //   empty node:  cpu 3900*100/4000 = 97, memory (1Gi-200Mi)*100/1Gi = 80 -> 88
        //   one such pod: cpu 3800*100/4000 = 95, memory (1Gi-400Mi)*100/1Gi = 60 -> 77
        ScoreCase{"bestEffortUsesNonZeroDefaults",
                  PodWrapper().req({}),
                  {{node("empty", {{"cpu", "4"}, {"memory", "1Gi"}}), {}},
                   {node("busy", {{"cpu", "4"}, {"memory", "1Gi"}}), {PodWrapper().req({})}}},
                  nullptr,
                  {88, 77}},
        // most with defaults above capacity: memory 200Mi > 10000 B is clamped to 100%:
        //   cpu 100*100/4000 = 2, memory 100 -> 51
        ScoreCase{"mostAllocatedClampsToCapacity",
                  PodWrapper().req({}),
                  {{node("small", {{"cpu", "4"}, {"memory", "10000"}}), {}}},
                  strategy("MostAllocated"),
                  {51}},
        // least with requests above capacity scores that resource 0: cpu 0, memory 80 -> 40
        ScoreCase{"leastAllocatedOverCapacity",
                  PodWrapper().req({{"cpu", "5"}, {"memory", "2000"}}),
                  {{node("n", {{"cpu", "4"}, {"memory", "10000"}}), {}}},
                  nullptr,
                  {40}},
        // A resource with allocatable 0 is left out (no weight): memory only -> 80.
        ScoreCase{"zeroAllocatableSkipped",
                  kPod1,
                  {{node("n", {{"memory", "10000"}}), {}}},
                  nullptr,
                  {80}},
        // Extended resources: counted only where the pod requests them and the node has them.
        //   foo node: cpu 75, memory 80, foo (4-2)*100/4 = 50 -> (75 + 80 + 150) / 5 = 61
        //   plain node: cpu 75, memory 80 -> 77
        ScoreCase{"extendedResource",
                  PodWrapper().req({{"cpu", "1"}, {"memory", "2000"}, {"example.com/foo", "2"}}),
                  {{node("foo", {{"cpu", "4"}, {"memory", "10000"}, {"example.com/foo", "4"}}), {}},
                   {node("plain", {{"cpu", "4"}, {"memory", "10000"}}), {}}},
                  strategy("LeastAllocated", {{{"name", "cpu"}, {"weight", 1}},
                                              {{"name", "memory"}, {"weight", 1}},
                                              {{"name", "example.com/foo"}, {"weight", 3}}}),
                  {61, 77}},
        ScoreCase{
            "extendedResourceNotRequested",
            kPod1,
            {{node("foo", {{"cpu", "4"}, {"memory", "10000"}, {"example.com/foo", "4"}}), {}}},
            strategy("LeastAllocated", {{{"name", "cpu"}, {"weight", 1}},
                                        {{"name", "memory"}, {"weight", 1}},
                                        {{"name", "example.com/foo"}, {"weight", 3}}}),
            {77}},
        // Ephemeral storage uses plain requests: (100-30)*100/100 = 70 with an existing 20.
        ScoreCase{"ephemeralStorage",
                  PodWrapper().req({{"ephemeral-storage", "10"}}),
                  {{node("n", {{"ephemeral-storage", "100"}}),
                    {PodWrapper().req({{"ephemeral-storage", "20"}})}}},
                  strategy("LeastAllocated", {{{"name", "ephemeral-storage"}, {"weight", 1}}}),
                  {70}},
        // The bin-packing docs' worked example (kubernetes.io "Resource Bin Packing"), on the
        // 0-100 scale: shape {0,0},{100,10} becomes {0,0},{100,100}.
        //   node1: foo 3/4 = 75, memory 512Mi/1Gi = 50, cpu 3/8 = 37
        //          round((75*5 + 50*1 + 37*3) / 9) = round(59.6) = 60
        //   node2: foo 4/8 = 50, memory 768Mi/1Gi = 75, cpu 8/8 = 100
        //          round((50*5 + 75*1 + 100*3) / 9) = round(69.4) = 69   -> node 2 wins
        ScoreCase{
            "requestedToCapacityRatioDocsExample",
            PodWrapper().req({{"intel.com/foo", "2"}, {"memory", "256Mi"}, {"cpu", "2"}}),
            {{node("node1", {{"intel.com/foo", "4"}, {"memory", "1Gi"}, {"cpu", "8"}}),
              {PodWrapper().req({{"intel.com/foo", "1"}, {"memory", "256Mi"}, {"cpu", "1"}})}},
             {node("node2", {{"intel.com/foo", "8"}, {"memory", "1Gi"}, {"cpu", "8"}}),
              {PodWrapper().req({{"intel.com/foo", "2"}, {"memory", "512Mi"}, {"cpu", "6"}})}}},
            strategy("RequestedToCapacityRatio",
                     {{{"name", "intel.com/foo"}, {"weight", 5}},
                      {{"name", "memory"}, {"weight", 1}},
                      {{"name", "cpu"}, {"weight", 3}}},
                     {{{"utilization", 0}, {"score", 0}}, {{"utilization", 100}, {"score", 10}}}),
            {60, 69}},
        // A reversed shape spreads: node1 cpu 50% -> 50, memory 40% -> 60 -> 55.
        ScoreCase{
            "requestedToCapacityRatioReversed",
            kPod1,
            {{node("node1", {{"cpu", "4"}, {"memory", "10000"}}), {kPod1}}},
            strategy("RequestedToCapacityRatio", nullptr,
                     {{{"utilization", 0}, {"score", 10}}, {{"utilization", 100}, {"score", 0}}}),
            {55}},
        // Upstream only averages over resources scoring > 0: memory at 0% scores 0 and drops
        // out, leaving cpu 2/4 = 50.
        ScoreCase{
            "requestedToCapacityRatioZeroScoresDropOut",
            PodWrapper().req({{"cpu", "2"}, {"memory", "0"}}),
            {{node("n", {{"cpu", "4"}, {"memory", "10000"}}), {}}},
            strategy("RequestedToCapacityRatio", nullptr,
                     {{{"utilization", 0}, {"score", 0}}, {{"utilization", 100}, {"score", 10}}}),
            {50}},
        // Over capacity counts as 100% utilization.
        ScoreCase{
            "requestedToCapacityRatioOverCapacity",
            PodWrapper().req({{"cpu", "8"}, {"memory", "20000"}}),
            {{node("n", {{"cpu", "4"}, {"memory", "10000"}}), {}}},
            strategy("RequestedToCapacityRatio", nullptr,
                     {{{"utilization", 0}, {"score", 0}}, {{"utilization", 100}, {"score", 10}}}),
            {100}}),
    [](const auto& info) { return info.param.name; });

TEST(ResourceScoreTest, LeastAndMostRequested) {
  EXPECT_EQ(leastRequestedScore(0, 0), 0);
  EXPECT_EQ(leastRequestedScore(5, 4), 0);
  EXPECT_EQ(leastRequestedScore(1, 4), 75);
  EXPECT_EQ(leastRequestedScore(0, 3), 100);
  EXPECT_EQ(mostRequestedScore(0, 0), 0);
  EXPECT_EQ(mostRequestedScore(5, 4), 100);
  EXPECT_EQ(mostRequestedScore(1, 3), 33);
  // No overflow for byte-sized amounts.
  EXPECT_EQ(leastRequestedScore(0, int64_t{1} << 62), 100);
  EXPECT_EQ(mostRequestedScore(int64_t{1} << 61, int64_t{1} << 62), 50);
}

// ---- Extended resources backed by DRA (KEP 5004) ------------------------------------------

namespace dra_extended {

// A NodeResourcesFit whose DeviceClasses serve example.com/gpu and the implicit name of class
// "gpuclass".
std::unique_ptr<NodeResourcesFit> fitWithDra() {
  return std::make_unique<NodeResourcesFit>(
      NodeResourcesFitArgs::fromJson(nullptr), nullptr, [](std::string_view r) {
        return r == "example.com/gpu" || r == "deviceclass.resource.kubernetes.io/gpuclass";
      });
}

Status filterOn(NodeResourcesFit& fit, const api::Pod& pod, const NodeInfo& node) {
  CycleState s;
  PreFilterResult r;
  EXPECT_TRUE(fit.preFilter(s, pod, testutil::FakeHandle().snapshot(), r).ok());
  return fit.filter(s, pod, node);
}

TEST(NodeResourcesFitDraTest, LeavesAResourceADeviceClassServesToDraWhereNoAllocatableListsIt) {
  const api::Pod pod = PodWrapper("p").req({{"cpu", "1"}, {"example.com/gpu", "2"}}).obj();
  const NodeInfo noPlugin{std::make_shared<api::Node>(
      NodeWrapper("dra").capacity({{"cpu", "4"}, {"pods", "10"}}).obj())};
  const NodeInfo withPlugin{std::make_shared<api::Node>(
      NodeWrapper("dp").capacity({{"cpu", "4"}, {"pods", "10"}, {"example.com/gpu", "1"}}).obj())};
  auto fit = fitWithDra();
  EXPECT_TRUE(filterOn(*fit, pod, noPlugin).ok());
  // Where a device plugin serves it, the allocatable decides.
  const Status short1 = filterOn(*fit, pod, withPlugin);
  EXPECT_EQ(short1.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(short1.reasons(), std::vector<std::string>{"Insufficient example.com/gpu"});
  // cpu is still checked on a DRA node.
  const api::Pod big = PodWrapper("p").req({{"cpu", "8"}, {"example.com/gpu", "1"}}).obj();
  EXPECT_EQ(filterOn(*fit, big, noPlugin).reasons(), std::vector<std::string>{"Insufficient cpu"});
  // Without DRA (the gate off, or no class): as before.
  NodeResourcesFit plain(NodeResourcesFitArgs::fromJson(nullptr));
  EXPECT_EQ(filterOn(plain, pod, noPlugin).reasons(),
            std::vector<std::string>{"Insufficient example.com/gpu"});
  // A resource no class serves is checked as ever.
  const api::Pod fpga = PodWrapper("p").req({{"example.com/fpga", "1"}}).obj();
  EXPECT_EQ(filterOn(*fit, fpga, noPlugin).reasons(),
            std::vector<std::string>{"Insufficient example.com/fpga"});
}

api::DeviceClass deviceClass(const std::string& name, std::optional<std::string> ern) {
  api::DeviceClass c;
  c.metadata.name = name;
  c.spec.extendedResourceName = std::move(ern);
  return c;
}

EventObject classObj(const api::DeviceClass& c) {
  return std::make_shared<const api::DeviceClass>(c);
}

// Upstream's Test_isSchedulableAfterDeviceClassChange, and a node added without the resource.
TEST(NodeResourcesFitDraTest, QueueingHintsForDeviceClassesAndNodesWithoutTheResource) {
  const auto kClass = EventResource::kDeviceClass;
  const api::Pod memOnly = PodWrapper("pod").req({{"memory", "2"}}).obj();
  const api::Pod gpu = PodWrapper("pod").req({{"example.com/gpu", "1"}}).obj();
  const api::Pod implicit =
      PodWrapper("pod").req({{"deviceclass.resource.kubernetes.io/gpuclass", "1"}}).obj();
  const api::Pod other = PodWrapper("pod").req({{"example.com/othergpu", "1"}}).obj();
  testutil::expectHints(
      *fitWithDra(), {
                         {"class without extended resource name", event(kClass, kUpdate), memOnly,
                          classObj(deviceClass("c", std::nullopt)),
                          classObj(deviceClass("c", std::nullopt)), kWantSkip},
                         {"same extended resource name", event(kClass, kUpdate), memOnly,
                          classObj(deviceClass("c", "example.com/gpu")),
                          classObj(deviceClass("c", "example.com/gpu")), kWantSkip},
                         {"added, implicit name requested",
                          event(kClass, kAdd),
                          implicit,
                          {},
                          classObj(deviceClass("gpuclass", "example.com/gpu")),
                          kWantQueue},
                         {"added, implicit name not matching",
                          event(kClass, kAdd),
                          implicit,
                          {},
                          classObj(deviceClass("myclass", "example.com/gpu")),
                          kWantSkip},
                         {"added, explicit name not matching",
                          event(kClass, kAdd),
                          other,
                          {},
                          classObj(deviceClass("myclass", "example.com/gpu")),
                          kWantSkip},
                         {"updated, implicit name requested", event(kClass, kUpdate), implicit,
                          classObj(deviceClass("gpuclass", std::nullopt)),
                          classObj(deviceClass("gpuclass", "example.com/gpu")), kWantSkip},
                         {"added, explicit name requested",
                          event(kClass, kAdd),
                          gpu,
                          {},
                          classObj(deviceClass("c", "example.com/gpu")),
                          kWantQueue},
                         {"updated to the requested name", event(kClass, kUpdate), gpu,
                          classObj(deviceClass("c", "example.com/gpu1")),
                          classObj(deviceClass("c", "example.com/gpu")), kWantQueue},
                         {"node added without the resource: DRA may serve it",
                          event(EventResource::kNode, kAdd),
                          gpu,
                          {},
                          obj(NodeWrapper("n").capacity({{"cpu", "4"}, {"pods", "10"}})),
                          kWantQueue},
                     });
  // Without DRA the plugin does not register DeviceClass events.
  NodeResourcesFit plain(NodeResourcesFitArgs::fromJson(nullptr));
  testutil::expectHints(plain, {{"not registered",
                                 event(kClass, kAdd),
                                 gpu,
                                 {},
                                 classObj(deviceClass("c", "example.com/gpu")),
                                 kNotRegistered}});
}

}  // namespace dra_extended

// ---- A pod whose in-place resize waits (KEP 5836) -------------------------------------------

namespace deferred {

testutil::FakeHandle& withResizePreemption(testutil::FakeHandle& h, bool on = true) {
  features::Gates gates;
  gates.force(features::Feature::kInPlacePodVerticalScalingSchedulerPreemption, on);
  h.setFeatures(gates);
  return h;
}

// Runs on 100m, wants 300m; the kubelet deferred it.
PodWrapper grower(const std::string& cpu = "300m") {
  return PodWrapper("grower")
      .uid("grower-uid")
      .nodeName("n1")
      .req({{"cpu", cpu}})
      .allocated({{"cpu", "100m"}})
      .condition("PodResizePending", "True", "Deferred");
}

NodeWrapper n1(const std::string& cpu = "300m") {
  return NodeWrapper("n1").capacity({{"cpu", cpu}, {"memory", "1Gi"}, {"pods", "10"}});
}

}  // namespace deferred

// Upstream's FitsRequest with the cache discrepancy adjusted: the node counts the pod at
// max(desired, allocated); only what it does not count yet must fit, so the check asks whether
// the node is over-allocated with the pod at its new size.
TEST(NodeResourcesFitTest, ResizeDeferredPodIsCheckedForWhatItsNodeDoesNotCountYet) {
  using deferred::grower;
  using deferred::n1;
  struct Case {
    std::string name;
    bool gate;
    PodWrapper pod;
    NodeWrapper node;
    std::vector<PodWrapper> onNode;
    Code want;
    std::vector<std::string> reasons;
  };
  const PodWrapper victim = PodWrapper("victim").nodeName("n1").req({{"cpu", "200m"}});
  const std::vector<Case> cases = {
      {"over-allocated with a victim",
       true,
       grower(),
       n1(),
       {grower(), victim},
       kUnsched,
       {"Insufficient cpu"}},
      {"fits alone", true, grower(), n1(), {grower()}, Code::kSuccess, {}},
      {"desired above allocatable: unresolvable",
       true,
       grower("400m"),
       n1(),
       {grower("400m")},
       Code::kUnschedulableAndUnresolvable,
       {"Insufficient cpu"}},
      {"gate off: checked as a new pod",
       false,
       grower(),
       n1(),
       {grower()},
       kUnsched,
       {"Insufficient cpu"}},
      {"not on this node: checked as a new pod",
       true,
       grower(),
       NodeWrapper("n2").capacity({{"cpu", "300m"}, {"memory", "1Gi"}, {"pods", "10"}}),
       {PodWrapper("x").nodeName("n2").req({{"cpu", "100m"}})},
       kUnsched,
       {"Insufficient cpu"}},
      {"not in the node's pods: checked as a new pod",
       true,
       grower(),
       n1(),
       {PodWrapper("other").nodeName("n1").req({{"cpu", "100m"}})},
       kUnsched,
       {"Insufficient cpu"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    testutil::FakeHandle h;
    auto pl = makeFit(nullptr, deferred::withResizePreemption(h, c.gate));
    EXPECT_TRUE(pl->filtersResizeDeferredPods());
    auto ni = testutil::makeNodeInfo(c.node, c.onNode);
    CycleState state;
    PreFilterResult result;
    testutil::FakeLister lister;
    ASSERT_TRUE(pl->preFilter(state, c.pod.obj(), lister, result).ok());
    Status s = pl->filter(state, c.pod.obj(), *ni);
    EXPECT_EQ(s.code(), c.want) << s.message();
    EXPECT_EQ(s.reasons(), c.reasons);
  }
}

// Upstream's TestDeferredResizeQueueingHints: only its own node can give the pod room.
TEST(NodeResourcesFitTest, ResizeDeferredPodHintsLookAtItsNodeOnly) {
  using deferred::grower;
  using deferred::n1;
  using testutil::event;
  using testutil::kWantQueue;
  using testutil::kWantSkip;
  using testutil::obj;
  constexpr auto kAssigned = EventResource::kAssignedPod;
  // n1 as the cache holds it after the victim left: the grower alone, at 300m of 300m.
  testutil::FakeHandle h(testutil::FakeLister({testutil::makeNodeInfo(n1(), {grower()})}));
  auto fit = makeFit(nullptr, deferred::withResizePreemption(h));
  const api::Pod pod = grower().obj();
  const auto onN1 = PodWrapper("v").nodeName("n1").req({{"cpu", "200m"}});
  const auto onN2 = PodWrapper("v").nodeName("n2").req({{"cpu", "200m"}});
  const auto n2 = NodeWrapper("n2").capacity({{"cpu", "1"}, {"memory", "1Gi"}, {"pods", "10"}});
  testutil::expectHints(
      *fit,
      {
          {"pod deleted on its node", event(kAssigned, kDelete), pod, obj(onN1), {}, kWantQueue},
          {"pod deleted elsewhere", event(kAssigned, kDelete), pod, obj(onN2), {}, kWantSkip},
          {"pod on its node scaled down", event(kAssigned, kUpdatePodScaleDown), pod, obj(onN1),
           obj(PodWrapper("v").nodeName("n1").req({{"cpu", "100m"}})), kWantQueue},
          {"pod elsewhere scaled down", event(kAssigned, kUpdatePodScaleDown), pod, obj(onN2),
           obj(PodWrapper("v").nodeName("n2").req({{"cpu", "100m"}})), kWantSkip},
          {"the pod itself scaled down", event(kAssigned, kUpdatePodScaleDown), pod, obj(grower()),
           obj(grower("200m")), kWantQueue},
          {"its node grew", event(EventResource::kNode, kUpdateNodeAllocatable), pod, obj(n1()),
           obj(n1("600m")), kWantQueue},
          {"another node grew", event(EventResource::kNode, kUpdateNodeAllocatable), pod, obj(n2),
           obj(NodeWrapper("n2").capacity({{"cpu", "2"}, {"memory", "1Gi"}, {"pods", "10"}})),
           kWantSkip},
      });
}

}  // namespace
}  // namespace ksched::plugins
