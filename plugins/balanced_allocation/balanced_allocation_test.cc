#include "plugins/balanced_allocation/balanced_allocation.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <ksched/api/features.h>
#include <ksched/registry.h>

#include "tests/support/plugin_test_util.h"

namespace ksched::plugins {
namespace {

using testutil::NodeWrapper;
using testutil::PodWrapper;

struct NodeCase {
  NodeWrapper node;
  std::vector<PodWrapper> pods;
};

struct ScoreCase {
  std::string name;
  nlohmann::json args;
  PodWrapper pod;
  std::vector<NodeCase> nodes;
  std::vector<int64_t> want;
};

class BalancedAllocationScoreTest : public ::testing::TestWithParam<ScoreCase> {};

TEST_P(BalancedAllocationScoreTest, Score) {
  const ScoreCase& c = GetParam();
  testutil::FakeHandle h;
  auto plugin = makePlugin(nodeResourcesBalancedAllocationFactory(), c.args, h);
  auto& pl = dynamic_cast<NodeResourcesBalancedAllocation&>(*plugin);
  EXPECT_EQ(pl.name(), "NodeResourcesBalancedAllocation");
  EXPECT_FALSE(pl.hasNormalizeScore());
  std::vector<std::shared_ptr<NodeInfo>> infos;
  std::vector<const NodeInfo*> nodes;
  for (const auto& n : c.nodes) {
    infos.push_back(testutil::makeNodeInfo(n.node, n.pods));
    nodes.push_back(infos.back().get());
  }
  CycleState state;
  ASSERT_TRUE(pl.preScore(state, c.pod.obj(), nodes).ok());
  CycleState empty;  // Score without PreScore computes the same.
  std::vector<int64_t> got;
  for (const NodeInfo* ni : nodes) {
    int64_t score = -1;
    ASSERT_TRUE(pl.score(state, c.pod.obj(), *ni, score).ok());
    int64_t fallback = -1;
    ASSERT_TRUE(pl.score(empty, c.pod.obj(), *ni, fallback).ok());
    EXPECT_EQ(score, fallback);
    got.push_back(score);
  }
  EXPECT_EQ(got, c.want);
}

PodWrapper cpuAndMemory() {
  return PodWrapper()
      .req({{"cpu", "1000m"}, {"memory", "2000"}})
      .req({{"cpu", "2000m"}, {"memory", "3000"}});
}
PodWrapper cpuOnly(const std::string& name = "cpu-only") {
  return PodWrapper(name).req({{"cpu", "1000m"}}).req({{"cpu", "2000m"}});
}

const nlohmann::json kGPUArgs = {
    {"resources", {{{"name", "cpu"}}, {{"name", "memory"}}, {{"name", "nvidia.com/gpu"}}}}};

// Cases from upstream's TestNodeResourcesBalancedAllocation where they carry over.
INSTANTIATE_TEST_SUITE_P(
    Table, BalancedAllocationScoreTest,
    ::testing::Values(
        // node1: cpu 3000/4000 = 0.75, memory 5000/10000 = 0.5 -> (1 - 0.125) * 100 = 87.
        // node2: 0.5, 0.5 -> 100.
        ScoreCase{"differentlySizedNodes",
                  nullptr,
                  cpuAndMemory(),
                  {{NodeWrapper("node1").capacity({{"cpu", "4000m"}, {"memory", "10000"}}), {}},
                   {NodeWrapper("node2").capacity({{"cpu", "6000m"}, {"memory", "10000"}}), {}}},
                  {87, 100}},
        // node1: cpu (3000 + 3000)/10000 = 0.6, memory 5000/20000 = 0.25 -> 82.
        // node2: cpu 0.6, memory (5000 + 5000)/50000 = 0.2 -> 80.
        ScoreCase{"podsScheduledWithResources",
                  nullptr,
                  cpuAndMemory(),
                  {{NodeWrapper("node1").capacity({{"cpu", "10000m"}, {"memory", "20000"}}),
                    {cpuOnly("p1").nodeName("node1")}},
                   {NodeWrapper("node2").capacity({{"cpu", "10000m"}, {"memory", "50000"}}),
                    {cpuAndMemory().name("p2").uid("p2").nodeName("node2")}}},
                  {82, 80}},
        // Plain requests are used, not the 100m / 200Mi defaults: the existing pod without
        // requests counts for nothing. cpu 3000/6000 = 0.5, memory 0 -> 75.
        ScoreCase{"existingBestEffortPodCountsNothing",
                  nullptr,
                  cpuOnly(),
                  {{NodeWrapper("node1").capacity({{"cpu", "6000m"}, {"memory", "10000"}}),
                    {PodWrapper("be").nodeName("node1")}}},
                  {75}},
        // cpu (3000 + 3000)/4000 capped at 1, memory 0 -> 50.
        ScoreCase{"requestedExceedsCapacity",
                  nullptr,
                  cpuOnly(),
                  {{NodeWrapper("node1").capacity({{"cpu", "4000m"}, {"memory", "10000"}}),
                    {cpuOnly("p1").nodeName("node1")}}},
                  {50}},
        // A node without memory: only cpu counts -> std 0 -> 100.
        ScoreCase{"zeroAllocatableSkipped",
                  nullptr,
                  cpuAndMemory(),
                  {{NodeWrapper("node1").capacity({{"cpu", "4000m"}}), {}}},
                  {100}},
        // fractions 0.25, 0.5, 0.25: population std sqrt(0.041667/3) = 0.11785 -> 88.
        ScoreCase{"threeResources",
                  kGPUArgs,
                  PodWrapper().req({{"cpu", "1000m"}, {"memory", "2000"}, {"nvidia.com/gpu", "1"}}),
                  {{NodeWrapper("node1").capacity(
                        {{"cpu", "4000m"}, {"memory", "4000"}, {"nvidia.com/gpu", "4"}}),
                    {}}},
                  {88}},
        // The pod does not request the extended resource: it is left out -> 0.25, 0.5 -> 87.
        ScoreCase{"unrequestedExtendedResourceSkipped",
                  kGPUArgs,
                  PodWrapper().req({{"cpu", "1000m"}, {"memory", "2000"}}),
                  {{NodeWrapper("node1").capacity(
                        {{"cpu", "4000m"}, {"memory", "4000"}, {"nvidia.com/gpu", "4"}}),
                    {}}},
                  {87}},
        // The node lacks the extended resource the pod requests: left out -> 87.
        ScoreCase{"extendedResourceMissingOnNode",
                  kGPUArgs,
                  PodWrapper().req({{"cpu", "1000m"}, {"memory", "2000"}, {"nvidia.com/gpu", "1"}}),
                  {{NodeWrapper("node1").capacity({{"cpu", "4000m"}, {"memory", "4000"}}), {}}},
                  {87}}),
    [](const auto& info) { return info.param.name; });

const nlohmann::json kV120 = {{"formula", "v1.20"}};

PodWrapper v120CpuOnly(const std::string& name = "cpu-only") {
  return PodWrapper(name)
      .req({{"cpu", "1000m"}, {"memory", "0"}})
      .req({{"cpu", "2000m"}, {"memory", "0"}});
}
NodeWrapper v120Node(const std::string& name, int64_t milliCPU, int64_t memory) {
  return NodeWrapper(name).capacity(
      {{"cpu", std::to_string(milliCPU) + "m"}, {"memory", std::to_string(memory)}});
}
PodWrapper on(PodWrapper p, const std::string& name, const std::string& node) {
  return p.name(name).uid(name).nodeName(node);
}

// formula v1.20: v1.20's TestNodeResourcesBalancedAllocation (non-zero requests, cpu and
// memory, 1 - |difference|).
INSTANTIATE_TEST_SUITE_P(
    V120, BalancedAllocationScoreTest,
    ::testing::Values(
        ScoreCase{
            "nothingScheduledNothingRequested",
            kV120,
            PodWrapper(),
            {{v120Node("machine1", 4000, 10000), {}}, {v120Node("machine2", 4000, 10000), {}}},
            {100, 100}},
        // machine1: cpu 0.75, memory 0.5 -> 75 (the current formula gives 87).
        ScoreCase{
            "differentlySizedMachines",
            kV120,
            cpuAndMemory(),
            {{v120Node("machine1", 4000, 10000), {}}, {v120Node("machine2", 6000, 10000), {}}},
            {75, 100}},
        ScoreCase{"noResourcesRequestedPodsScheduled",
                  kV120,
                  PodWrapper(),
                  {{v120Node("machine1", 4000, 10000),
                    {on(PodWrapper(), "a", "machine1"), on(PodWrapper(), "b", "machine1")}},
                   {v120Node("machine2", 4000, 10000),
                    {on(PodWrapper(), "c", "machine2"), on(PodWrapper(), "d", "machine2")}}},
                  {100, 100}},
        ScoreCase{"noResourcesRequestedPodsScheduledWithResources",
                  kV120,
                  PodWrapper(),
                  {{v120Node("machine1", 10000, 20000),
                    {on(v120CpuOnly(), "a", "machine1"), on(v120CpuOnly(), "b", "machine1")}},
                   {v120Node("machine2", 10000, 20000),
                    {on(v120CpuOnly(), "c", "machine2"), on(cpuAndMemory(), "d", "machine2")}}},
                  {40, 65}},
        ScoreCase{"resourcesRequestedPodsScheduledWithResources",
                  kV120,
                  cpuAndMemory(),
                  {{v120Node("machine1", 10000, 20000), {on(v120CpuOnly(), "a", "machine1")}},
                   {v120Node("machine2", 10000, 20000), {on(cpuAndMemory(), "b", "machine2")}}},
                  {65, 90}},
        ScoreCase{"resourcesRequestedDifferentlySizedMachines",
                  kV120,
                  cpuAndMemory(),
                  {{v120Node("machine1", 10000, 20000), {on(v120CpuOnly(), "a", "machine1")}},
                   {v120Node("machine2", 10000, 50000), {on(cpuAndMemory(), "b", "machine2")}}},
                  {65, 60}},
        // A fraction >= 1 scores 0.
        ScoreCase{"requestedExceedsCapacity",
                  kV120,
                  v120CpuOnly(),
                  {{v120Node("machine1", 4000, 10000), {on(v120CpuOnly(), "a", "machine1")}},
                   {v120Node("machine2", 4000, 10000), {on(cpuAndMemory(), "b", "machine2")}}},
                  {0, 0}},
        ScoreCase{"zeroNodeResources",
                  kV120,
                  PodWrapper(),
                  {{v120Node("machine1", 0, 0), {on(v120CpuOnly(), "a", "machine1")}},
                   {v120Node("machine2", 0, 0), {on(cpuAndMemory(), "b", "machine2")}}},
                  {0, 0}},
        // v1.20's volume case with BalanceAttachedNodeVolumes off (its default): machine3 cpu
        // 3000/3500, memory 5000/40000 -> 26; machine4 cpu 0.75, memory 0.5 -> 75.
        ScoreCase{
            "attachedVolumesNotBalanced",
            kV120,
            PodWrapper(),
            {{v120Node("machine3", 3500, 40000), {on(cpuAndMemory(), "a", "machine3")}},
             {v120Node("machine4", 4000, 10000),
              {on(cpuAndMemory(), "b", "machine4"), on(PodWrapper()
                                                           .req({{"cpu", "0m"}, {"memory", "0"}})
                                                           .req({{"cpu", "0m"}, {"memory", "0"}}),
                                                       "c", "machine4")}}},
            {26, 75}},
        // A best-effort pod is scored with 100m / 200Mi: cpu 0.1, memory 0.2 -> 90.
        ScoreCase{"bestEffortPodScored",
                  kV120,
                  PodWrapper().req({}),
                  {{NodeWrapper("n").capacity({{"cpu", "1"}, {"memory", "1000Mi"}}), {}}},
                  {90}},
        // Only cpu and memory, whatever resources say: the GPU is not looked at.
        ScoreCase{"cpuAndMemoryOnly",
                  nlohmann::json{{"formula", "v1.20"},
                                 {"resources", {{{"name", "cpu"}}, {{"name", "nvidia.com/gpu"}}}}},
                  PodWrapper().req({{"cpu", "1000m"}, {"memory", "2000"}, {"nvidia.com/gpu", "4"}}),
                  {{NodeWrapper("node1").capacity(
                        {{"cpu", "4000m"}, {"memory", "4000"}, {"nvidia.com/gpu", "4"}}),
                    {}}},
                  {75}}),
    [](const auto& info) { return info.param.name; });

TEST(BalancedAllocationTest, V120DoesNotSkipBestEffortPods) {
  testutil::FakeHandle h;
  auto plugin = makePlugin(nodeResourcesBalancedAllocationFactory(), kV120, h);
  auto& pl = dynamic_cast<NodeResourcesBalancedAllocation&>(*plugin);
  auto ni = testutil::makeNodeInfo(NodeWrapper().capacity({{"cpu", "4"}, {"memory", "4Gi"}}));
  CycleState state;
  EXPECT_TRUE(pl.preScore(state, PodWrapper().obj(), {ni.get()}).ok());
  int64_t score = -1;
  ASSERT_TRUE(pl.score(state, PodWrapper().obj(), *ni, score).ok());
  EXPECT_EQ(score, 100);
}

TEST(BalancedAllocationTest, BestEffortPodIsSkipped) {
  testutil::FakeHandle h;
  auto plugin = makePlugin(nodeResourcesBalancedAllocationFactory(), nullptr, h);
  auto& pl = dynamic_cast<NodeResourcesBalancedAllocation&>(*plugin);
  auto ni = testutil::makeNodeInfo(NodeWrapper().capacity({{"cpu", "4"}, {"memory", "4Gi"}}));
  CycleState state;
  EXPECT_TRUE(pl.preScore(state, PodWrapper().obj(), {ni.get()}).isSkip());
  int64_t score = -1;
  ASSERT_TRUE(pl.score(state, PodWrapper().obj(), *ni, score).ok());
  EXPECT_EQ(score, 0);
}

// Pod-level requests replace the containers' sum (cpu 3 of 4, memory 1Gi of 4Gi: fractions
// 0.75 and 0.25, score 75); with PodLevelResources off the containers count (0.25 and 0.25).
TEST(BalancedAllocationTest, PodLevelRequests) {
  const api::Pod pod =
      PodWrapper().req({{"cpu", "1"}, {"memory", "1Gi"}}).podReq({{"cpu", "3"}}).obj();
  auto ni = testutil::makeNodeInfo(NodeWrapper().capacity({{"cpu", "4"}, {"memory", "4Gi"}}));
  for (const auto& [gate, want] : {std::pair{true, 75}, std::pair{false, 100}}) {
    SCOPED_TRACE(gate);
    testutil::FakeHandle h;
    features::Gates gates;
    gates.force(features::Feature::kPodLevelResources, gate);
    h.setFeatures(gates);
    auto plugin = makePlugin(nodeResourcesBalancedAllocationFactory(), nullptr, h);
    auto& pl = dynamic_cast<NodeResourcesBalancedAllocation&>(*plugin);
    CycleState state;
    ASSERT_TRUE(pl.preScore(state, pod, {ni.get()}).ok());
    int64_t score = -1;
    ASSERT_TRUE(pl.score(state, pod, *ni, score).ok());
    EXPECT_EQ(score, want);
  }
}

TEST(BalancedAllocationTest, Scorer) {
  EXPECT_EQ(balancedResourceScore({}, {}), 100);
  EXPECT_EQ(balancedResourceScore({1, 0}, {2, 0}), 100);
  EXPECT_EQ(balancedResourceScore({0, 4}, {4, 4}), 50);
  EXPECT_EQ(balancedResourceScore({8, 4}, {4, 4}), 100);  // both capped at 1
  EXPECT_EQ(balancedResourceScore({1, 2, 3}, {4, 4, 0}), 87);
}

TEST(BalancedAllocationArgsTest, Defaults) {
  const auto want = defaultScoringResources();
  EXPECT_EQ(NodeResourcesBalancedAllocationArgs::fromJson(nullptr).resources, want);
  EXPECT_EQ(NodeResourcesBalancedAllocationArgs::fromJson(nlohmann::json::object()).resources,
            want);
  EXPECT_EQ(NodeResourcesBalancedAllocationArgs::fromJson({{"resources", nlohmann::json::array()}})
                .resources,
            want);
  const auto args = NodeResourcesBalancedAllocationArgs::fromJson(
      {{"kind", "NodeResourcesBalancedAllocationArgs"},
       {"resources", {{{"name", "cpu"}}, {{"name", "nvidia.com/gpu"}, {"weight", 1}}}}});
  EXPECT_EQ(args.resources, (std::vector<ResourceSpec>{{"cpu", 1}, {"nvidia.com/gpu", 1}}));
  EXPECT_TRUE(args.validationErrors().empty());
}

std::string factoryError(const nlohmann::json& args) {
  testutil::FakeHandle h;
  try {
    (void)makePlugin(nodeResourcesBalancedAllocationFactory(), args, h);
  } catch (const PluginArgsError& e) {
    return e.what();
  }
  return "";
}

TEST(BalancedAllocationArgsTest, Validation) {
  EXPECT_EQ(factoryError({{"resources", {{{"name", "cpu"}, {"weight", 2}}}}}),
            "resources[0].weight: Invalid value: 2: must be 1");
  EXPECT_EQ(factoryError({{"resources", {{{"name", "cpu"}}, {{"name", "cpu"}}}}}),
            "resources[1].name: Duplicate value: \"cpu\"");
  const auto args = NodeResourcesBalancedAllocationArgs::fromJson(
      {{"resources", {{{"name", "cpu"}, {"weight", -1}}, {{"name", "cpu"}, {"weight", 3}}}}});
  const auto errs = args.validationErrors();
  ASSERT_EQ(errs.size(), 3u);
  EXPECT_EQ(errs[0].toString(), "resources[0].weight: Invalid value: -1: must be 1");
  EXPECT_EQ(errs[1].toString(), "resources[1].name: Duplicate value: \"cpu\"");
  EXPECT_EQ(errs[2].toString(), "resources[1].weight: Invalid value: 3: must be 1");
}

TEST(BalancedAllocationArgsTest, Formula) {
  EXPECT_EQ(NodeResourcesBalancedAllocationArgs::fromJson(nullptr).formula, "");
  EXPECT_EQ(NodeResourcesBalancedAllocationArgs::fromJson(kV120).formula, "v1.20");
  EXPECT_EQ(factoryError({{"formula", ""}}), "");
  EXPECT_EQ(factoryError(kV120), "");
  EXPECT_EQ(factoryError({{"formula", "x"}}),
            "formula: Unsupported value: \"x\": supported values: \"\", \"v1.20\"");
  EXPECT_EQ(factoryError({{"formula", 1}}), "formula: expected a string, got number");
}

TEST(BalancedAllocationArgsTest, StrictDecoding) {
  EXPECT_NE(factoryError({{"foo", 1}}), "");
  EXPECT_EQ(factoryError({{"resources", "cpu"}}), "resources: expected an array, got string");
  EXPECT_NE(factoryError({{"resources", {{{"name", "cpu"}, {"weight", "x"}}}}}), "");
  EXPECT_NE(factoryError({{"resources", {{{"name", "cpu"}, {"extra", 1}}}}}), "");
  EXPECT_EQ(factoryError(nullptr), "");
}

}  // namespace
}  // namespace ksched::plugins
