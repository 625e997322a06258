#include "plugins/legacy_resource_scoring/legacy_resource_scoring.h"

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <ksched/helper/resource_allocation_v120.h>
#include <ksched/registry.h>

#include "tests/support/plugin_test_util.h"

namespace ksched::plugins {
namespace {

using testutil::NodeWrapper;
using testutil::PodWrapper;

// v1.20's makeNode.
NodeWrapper makeNode(const std::string& name, int64_t milliCPU, int64_t memory) {
  return NodeWrapper(name).capacity(
      {{"cpu", std::to_string(milliCPU) + "m"}, {"memory", std::to_string(memory)}});
}

// v1.20's makeNodeWithExtendedResource (memory in bytes).
NodeWrapper makeNodeWithExtended(const std::string& name, int64_t milliCPU, int64_t memory,
                                 const testutil::ResourcePairs& extended) {
  testutil::ResourcePairs all = {{"cpu", std::to_string(milliCPU) + "m"},
                                 {"memory", std::to_string(memory)}};
  all.insert(all.end(), extended.begin(), extended.end());
  return NodeWrapper(name).capacity(all);
}

// v1.20's test pods.
PodWrapper noResources(const std::string& name = "pod") { return PodWrapper(name); }
PodWrapper cpuOnly(const std::string& name = "pod") {
  return PodWrapper(name)
      .req({{"cpu", "1000m"}, {"memory", "0"}})
      .req({{"cpu", "2000m"}, {"memory", "0"}});
}
PodWrapper cpuAndMemory(const std::string& name = "pod") {
  return PodWrapper(name)
      .req({{"cpu", "1000m"}, {"memory", "2000"}})
      .req({{"cpu", "2000m"}, {"memory", "3000"}});
}
PodWrapper bigCPUAndMemory() {
  return PodWrapper()
      .req({{"cpu", "2000m"}, {"memory", "4000"}})
      .req({{"cpu", "3000m"}, {"memory", "5000"}});
}
// v1.20's makePod of the RequestedToCapacityRatio tests (explicit requests, even 0).
PodWrapper makePod(const std::string& name, int64_t milliCPU, int64_t memory) {
  return PodWrapper(name).req(
      {{"cpu", std::to_string(milliCPU) + "m"}, {"memory", std::to_string(memory)}});
}

struct NodeCase {
  NodeWrapper node;
  std::vector<PodWrapper> pods;  // on the node
};

struct ScoreCase {
  std::string name;
  std::string plugin;
  nlohmann::json args;
  PodWrapper pod;
  std::vector<NodeCase> nodes;
  std::vector<int64_t> want;
};

std::unique_ptr<Plugin> build(const std::string& plugin, const nlohmann::json& args) {
  testutil::FakeHandle h;
  if (plugin == "NodeResourcesLeastAllocated")
    return makePlugin(nodeResourcesLeastAllocatedFactory(), args, h);
  if (plugin == "NodeResourcesMostAllocated")
    return makePlugin(nodeResourcesMostAllocatedFactory(), args, h);
  return makePlugin(requestedToCapacityRatioFactory(), args, h);
}

class LegacyResourceScoringTest : public ::testing::TestWithParam<ScoreCase> {};

TEST_P(LegacyResourceScoringTest, Score) {
  const ScoreCase& c = GetParam();
  auto plugin = build(c.plugin, c.args);
  auto& pl = dynamic_cast<LegacyResourceScoring&>(*plugin);
  EXPECT_EQ(pl.name(), c.plugin);
  EXPECT_FALSE(pl.hasNormalizeScore());
  std::vector<int64_t> got;
  int n = 0;
  for (const NodeCase& nc : c.nodes) {
    std::vector<PodWrapper> pods;
    for (PodWrapper p : nc.pods) {
      const std::string name = "existing-" + std::to_string(n++);
      pods.push_back(p.name(name).uid(name).nodeName(nc.node.obj().metadata.name));
    }
    auto ni = testutil::makeNodeInfo(nc.node, pods);
    CycleState state;
    int64_t score = -1;
    ASSERT_TRUE(pl.score(state, c.pod.obj(), *ni, score).ok());
    got.push_back(score);
  }
  EXPECT_EQ(got, c.want);
}

const nlohmann::json kDefault = nullptr;
const nlohmann::json kMemory2Cpu1 = {
    {"resources", {{{"name", "memory"}, {"weight", 2}}, {{"name", "cpu"}, {"weight", 1}}}}};
// v1.20 TestRequestedToCapacityRatio's args.
const nlohmann::json kLeastShape = {
    {"shape", {{{"utilization", 0}, {"score", 10}}, {{"utilization", 100}, {"score", 0}}}},
    {"resources", {{{"name", "memory"}, {"weight", 1}}, {{"name", "cpu"}, {"weight", 1}}}}};
// v1.20 TestResourceBinPacking*'s args.
const nlohmann::json kFooShape = {
    {"shape", {{{"utilization", 0}, {"score", 0}}, {{"utilization", 100}, {"score", 1}}}},
    {"resources", {{{"name", "intel.com/foo"}, {"weight", 1}}}}};
const nlohmann::json kFooBarShape = {
    {"shape", {{{"utilization", 0}, {"score", 0}}, {{"utilization", 100}, {"score", 1}}}},
    {"resources",
     {{{"name", "intel.com/foo"}, {"weight", 3}}, {{"name", "intel.com/bar"}, {"weight", 5}}}}};

constexpr int64_t kMi = 1024 * 1024;
const testutil::ResourcePairs kFoo8 = {{"intel.com/foo", "8"}};
const testutil::ResourcePairs kFoo4 = {{"intel.com/foo", "4"}};
const testutil::ResourcePairs kFoo8Bar4 = {{"intel.com/foo", "8"}, {"intel.com/bar", "4"}};
const testutil::ResourcePairs kFoo4Bar8 = {{"intel.com/foo", "4"}, {"intel.com/bar", "8"}};

// v1.20 TestNodeResourcesLeastAllocated.
INSTANTIATE_TEST_SUITE_P(
    LeastAllocated, LegacyResourceScoringTest,
    ::testing::Values(
        ScoreCase{
            "nothingScheduledNothingRequested",
            "NodeResourcesLeastAllocated",
            kDefault,
            noResources(),
            {{makeNode("machine1", 4000, 10000), {}}, {makeNode("machine2", 4000, 10000), {}}},
            {100, 100}},
        ScoreCase{
            "differentlySizedMachines",
            "NodeResourcesLeastAllocated",
            kDefault,
            cpuAndMemory(),
            {{makeNode("machine1", 4000, 10000), {}}, {makeNode("machine2", 6000, 10000), {}}},
            {37, 50}},
        ScoreCase{"noResourcesRequestedPodsScheduled",
                  "NodeResourcesLeastAllocated",
                  kDefault,
                  noResources(),
                  {{makeNode("machine1", 4000, 10000), {noResources(), noResources()}},
                   {makeNode("machine2", 4000, 10000), {noResources(), noResources()}}},
                  {100, 100}},
        ScoreCase{"noResourcesRequestedPodsScheduledWithResources",
                  "NodeResourcesLeastAllocated",
                  kDefault,
                  noResources(),
                  {{makeNode("machine1", 10000, 20000), {cpuOnly(), cpuOnly()}},
                   {makeNode("machine2", 10000, 20000), {cpuOnly(), cpuAndMemory()}}},
                  {70, 57}},
        ScoreCase{"resourcesRequestedPodsScheduledWithResources",
                  "NodeResourcesLeastAllocated",
                  kDefault,
                  cpuAndMemory(),
                  {{makeNode("machine1", 10000, 20000), {cpuOnly()}},
                   {makeNode("machine2", 10000, 20000), {cpuAndMemory()}}},
                  {57, 45}},
        ScoreCase{"resourcesRequestedDifferentlySizedMachines",
                  "NodeResourcesLeastAllocated",
                  kDefault,
                  cpuAndMemory(),
                  {{makeNode("machine1", 10000, 20000), {cpuOnly()}},
                   {makeNode("machine2", 10000, 50000), {cpuAndMemory()}}},
                  {57, 60}},
        ScoreCase{"requestedExceedsCapacity",
                  "NodeResourcesLeastAllocated",
                  kDefault,
                  cpuOnly(),
                  {{makeNode("machine1", 4000, 10000), {cpuOnly()}},
                   {makeNode("machine2", 4000, 10000), {cpuAndMemory()}}},
                  {50, 25}},
        ScoreCase{"zeroNodeResources",
                  "NodeResourcesLeastAllocated",
                  kDefault,
                  noResources(),
                  {{makeNode("machine1", 0, 0), {cpuOnly()}},
                   {makeNode("machine2", 0, 0), {cpuAndMemory()}}},
                  {0, 0}},
        ScoreCase{
            "differentWeights",
            "NodeResourcesLeastAllocated",
            kMemory2Cpu1,
            cpuAndMemory(),
            {{makeNode("machine1", 4000, 10000), {}}, {makeNode("machine2", 6000, 10000), {}}},
            {41, 50}},
        // Beyond v1.20's table: a best-effort pod counts 100m / 200Mi: cpu (1000 - 100) / 1000
        // -> 90, memory (1000 - 200) Mi / 1000 Mi -> 80.
        ScoreCase{"bestEffortPodCountsNonZeroRequests",
                  "NodeResourcesLeastAllocated",
                  kDefault,
                  PodWrapper().req({}),
                  {{NodeWrapper("n").capacity({{"cpu", "1"}, {"memory", "1000Mi"}}), {}}},
                  {85}},
        // A resource the node lacks is not left out: cpu 100 with memory, "example.com/gpu"
        // 0 -> (100 + 100 + 0) / 3.
        ScoreCase{"missingScalarResourceCountsZero",
                  "NodeResourcesLeastAllocated",
                  nlohmann::json{{"resources",
                                  {{{"name", "cpu"}, {"weight", 1}},
                                   {{"name", "memory"}, {"weight", 1}},
                                   {{"name", "example.com/gpu"}, {"weight", 1}}}}},
                  noResources(),
                  {{makeNode("machine1", 4000, 10000), {}}},
                  {66}},
        // v1.20 keeps one entry per name, with the last weight: cpu 25 (w1), memory 50 (w2).
        ScoreCase{"duplicateNameLastWeightWins",
                  "NodeResourcesLeastAllocated",
                  nlohmann::json{{"resources",
                                  {{{"name", "memory"}, {"weight", 5}},
                                   {{"name", "cpu"}, {"weight", 1}},
                                   {{"name", "memory"}, {"weight", 2}}}}},
                  cpuAndMemory(),
                  {{makeNode("machine1", 4000, 10000), {}}},
                  {41}}),
    [](const auto& info) { return info.param.name; });

// v1.20 TestNodeResourcesMostAllocated.
INSTANTIATE_TEST_SUITE_P(
    MostAllocated, LegacyResourceScoringTest,
    ::testing::Values(
        ScoreCase{
            "nothingScheduledNothingRequested",
            "NodeResourcesMostAllocated",
            kDefault,
            noResources(),
            {{makeNode("machine1", 4000, 10000), {}}, {makeNode("machine2", 4000, 10000), {}}},
            {0, 0}},
        ScoreCase{
            "differentlySizedMachines",
            "NodeResourcesMostAllocated",
            kDefault,
            cpuAndMemory(),
            {{makeNode("machine1", 4000, 10000), {}}, {makeNode("machine2", 6000, 10000), {}}},
            {62, 50}},
        ScoreCase{"noResourcesRequestedPodsScheduledWithResources",
                  "NodeResourcesMostAllocated",
                  kDefault,
                  noResources(),
                  {{makeNode("machine1", 10000, 20000), {cpuOnly(), cpuOnly()}},
                   {makeNode("machine2", 10000, 20000), {cpuOnly(), cpuAndMemory()}}},
                  {30, 42}},
        ScoreCase{"resourcesRequestedPodsScheduledWithResources",
                  "NodeResourcesMostAllocated",
                  kDefault,
                  cpuAndMemory(),
                  {{makeNode("machine1", 10000, 20000), {cpuOnly()}},
                   {makeNode("machine2", 10000, 20000), {cpuAndMemory()}}},
                  {42, 55}},
        // More than the node: that resource scores 0 (current upstream caps it at 100).
        ScoreCase{
            "requestedMoreThanTheNode",
            "NodeResourcesMostAllocated",
            kDefault,
            bigCPUAndMemory(),
            {{makeNode("machine1", 4000, 10000), {}}, {makeNode("machine2", 10000, 8000), {}}},
            {45, 25}},
        ScoreCase{
            "differentWeights",
            "NodeResourcesMostAllocated",
            kMemory2Cpu1,
            cpuAndMemory(),
            {{makeNode("machine1", 4000, 10000), {}}, {makeNode("machine2", 6000, 10000), {}}},
            {58, 50}},
        // v1.20 adds the cpu overhead's whole-core value to the pod's millicores: 500m -> 1,
        // so cpu is (3000 + 1) / 4000 -> 75, memory (5000 + 1000) / 10000 -> 60.
        ScoreCase{"cpuOverheadInWholeCores",
                  "NodeResourcesMostAllocated",
                  kDefault,
                  cpuAndMemory().overhead({{"cpu", "500m"}, {"memory", "1000"}}),
                  {{makeNode("machine1", 4000, 10000), {}}},
                  {67}}),
    [](const auto& info) { return info.param.name; });

// v1.20 TestRequestedToCapacityRatio, TestResourceBinPackingSingleExtended and
// TestResourceBinPackingMultipleExtended.
INSTANTIATE_TEST_SUITE_P(
    RequestedToCapacityRatio, LegacyResourceScoringTest,
    ::testing::Values(
        ScoreCase{"nothingScheduledNothingRequested",
                  "RequestedToCapacityRatio",
                  kLeastShape,
                  makePod("pod", 0, 0),
                  {{makeNode("node1", 4000, 10000), {makePod("p", 0, 0)}},
                   {makeNode("node2", 4000, 10000), {makePod("p", 0, 0)}}},
                  {100, 100}},
        // cpu 100 - 1000 * 100 / 4000 = 75 -> 25, memory 50 -> 50: round(37.5) = 38.
        ScoreCase{"resourcesRequestedDifferentlySizedMachines",
                  "RequestedToCapacityRatio",
                  kLeastShape,
                  makePod("pod", 3000, 5000),
                  {{makeNode("node1", 4000, 10000), {makePod("p", 0, 0)}},
                   {makeNode("node2", 6000, 10000), {makePod("p", 0, 0)}}},
                  {38, 50}},
        ScoreCase{"noResourcesRequestedPodsScheduledWithResources",
                  "RequestedToCapacityRatio",
                  kLeastShape,
                  makePod("pod", 0, 0),
                  {{makeNode("node1", 4000, 10000), {makePod("p", 3000, 5000)}},
                   {makeNode("node2", 6000, 10000), {makePod("p", 3000, 5000)}}},
                  {38, 50}},
        ScoreCase{"singleExtendedNothingRequested",
                  "RequestedToCapacityRatio",
                  kFooShape,
                  noResources(),
                  {{makeNodeWithExtended("machine1", 4000, 10000 * kMi, kFoo8), {}},
                   {makeNodeWithExtended("machine2", 4000, 10000 * kMi, kFoo4), {}}},
                  {0, 0}},
        ScoreCase{"singleExtendedRequested",
                  "RequestedToCapacityRatio",
                  kFooShape,
                  PodWrapper().req({{"intel.com/foo", "2"}}),
                  {{makeNodeWithExtended("machine1", 4000, 10000 * kMi, kFoo8), {}},
                   {makeNodeWithExtended("machine2", 4000, 10000 * kMi, kFoo4), {}}},
                  {2, 5}},
        ScoreCase{"singleExtendedOnNodeWithExistingPod",
                  "RequestedToCapacityRatio",
                  kFooShape,
                  PodWrapper().req({{"intel.com/foo", "2"}}),
                  {{makeNodeWithExtended("machine1", 4000, 10000 * kMi, kFoo8), {}},
                   {makeNodeWithExtended("machine2", 4000, 10000 * kMi, kFoo4),
                    {PodWrapper().req({{"intel.com/foo", "2"}})}}},
                  {2, 10}},
        ScoreCase{"singleExtendedMoreRequested",
                  "RequestedToCapacityRatio",
                  kFooShape,
                  PodWrapper().req({{"intel.com/foo", "4"}}),
                  {{makeNodeWithExtended("machine1", 4000, 10000 * kMi, kFoo8), {}},
                   {makeNodeWithExtended("machine2", 4000, 10000 * kMi, kFoo4), {}}},
                  {5, 10}},
        ScoreCase{"multipleExtendedNothingRequested",
                  "RequestedToCapacityRatio",
                  kFooBarShape,
                  noResources(),
                  {{makeNodeWithExtended("machine1", 4000, 10000 * kMi, kFoo8Bar4), {}},
                   {makeNodeWithExtended("machine2", 4000, 10000 * kMi, kFoo4Bar8), {}}},
                  {0, 0}},
        ScoreCase{"multipleExtendedRequested",
                  "RequestedToCapacityRatio",
                  kFooBarShape,
                  PodWrapper().req({{"intel.com/foo", "2"}, {"intel.com/bar", "2"}}),
                  {{makeNodeWithExtended("machine1", 4000, 10000 * kMi, kFoo8Bar4), {}},
                   {makeNodeWithExtended("machine2", 4000, 10000 * kMi, kFoo4Bar8), {}}},
                  {4, 3}},
        ScoreCase{"multipleExtendedOnNodeWithExistingPod",
                  "RequestedToCapacityRatio",
                  kFooBarShape,
                  PodWrapper().req({{"intel.com/foo", "2"}, {"intel.com/bar", "2"}}),
                  {{makeNodeWithExtended("machine1", 4000, 10000 * kMi, kFoo8Bar4), {}},
                   {makeNodeWithExtended("machine2", 4000, 10000 * kMi, kFoo4Bar8),
                    {PodWrapper().req({{"intel.com/foo", "2"}, {"intel.com/bar", "2"}})}}},
                  {4, 7}},
        ScoreCase{"multipleExtendedMoreRequested",
                  "RequestedToCapacityRatio",
                  kFooBarShape,
                  PodWrapper().req({{"intel.com/foo", "4"}, {"intel.com/bar", "2"}}),
                  {{makeNodeWithExtended("machine1", 4000, 10000 * kMi, kFoo8Bar4), {}},
                   {makeNodeWithExtended("machine2", 4000, 10000 * kMi, kFoo4Bar8), {}}},
                  {5, 5}},
        // v1.20's utilization is 100 - (3 - 1) * 100 / 3 = 34 (current upstream: 33), and a
        // resource the node lacks counts as fully utilized: round((34 * 1 + 100 * 1) / 2) = 67.
        ScoreCase{"utilizationRoundsUpAndMissingResourceIsFull",
                  "RequestedToCapacityRatio",
                  nlohmann::json{
                      {"shape",
                       {{{"utilization", 0}, {"score", 0}}, {{"utilization", 100}, {"score", 10}}}},
                      {"resources",
                       {{{"name", "intel.com/foo"}, {"weight", 1}},
                        {{"name", "intel.com/bar"}, {"weight", 1}}}}},
                  PodWrapper().req({{"intel.com/foo", "1"}}),
                  {{makeNodeWithExtended("machine1", 4000, 10000, {{"intel.com/foo", "3"}}), {}}},
                  {67}}),
    [](const auto& info) { return info.param.name; });

std::string factoryError(const std::string& plugin, const nlohmann::json& args) {
  try {
    (void)build(plugin, args);
  } catch (const PluginArgsError& e) {
    return e.what();
  }
  return "";
}

nlohmann::json resources(const std::vector<std::pair<std::string, int64_t>>& r) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [name, weight] : r) out.push_back({{"name", name}, {"weight", weight}});
  return out;
}

// v1.20's error cases of TestNodeResourcesLeastAllocated / MostAllocated.
TEST(LegacyAllocatedArgsTest, Validation) {
  for (const std::string plugin : {"NodeResourcesLeastAllocated", "NodeResourcesMostAllocated"}) {
    SCOPED_TRACE(plugin);
    EXPECT_EQ(factoryError(plugin, {{"resources", resources({{"memory", -1}, {"cpu", 1}})}}),
              "resources[0].weight: resource Weight of memory should be a positive value, got -1");
    EXPECT_EQ(factoryError(plugin, {{"resources", resources({{"memory", 1}, {"cpu", 0}})}}),
              "resources[1].weight: resource Weight of cpu should be a positive value, got 0");
    EXPECT_EQ(factoryError(plugin, {{"resources", resources({{"memory", 120}})}}),
              "resources[0].weight: resource Weight of memory should be less than 100, got 120");
    // v1beta1 does not default a weight left out.
    EXPECT_EQ(factoryError(plugin, {{"resources", {{{"name", "cpu"}}}}}),
              "resources[0].weight: resource Weight of cpu should be a positive value, got 0");
    EXPECT_EQ(factoryError(plugin, {{"resources", resources({{"memory", 100}})}}), "");
    EXPECT_EQ(factoryError(plugin, nullptr), "");
  }
}

TEST(LegacyAllocatedArgsTest, Decoding) {
  const auto want = defaultScoringResources();
  EXPECT_EQ(LegacyAllocatedArgs::fromJson(nullptr).resources, want);
  EXPECT_EQ(LegacyAllocatedArgs::fromJson(nlohmann::json::object()).resources, want);
  EXPECT_EQ(LegacyAllocatedArgs::fromJson({{"resources", nlohmann::json::array()}}).resources,
            want);
  const auto args =
      LegacyAllocatedArgs::fromJson({{"apiVersion", "kubescheduler.config.k8s.io/v1beta1"},
                                     {"kind", "NodeResourcesLeastAllocatedArgs"},
                                     {"resources", resources({{"nvidia.com/gpu", 3}})}});
  EXPECT_EQ(args.resources, (std::vector<ResourceSpec>{{"nvidia.com/gpu", 3}}));
  EXPECT_NE(factoryError("NodeResourcesLeastAllocated", {{"foo", 1}}), "");
  EXPECT_EQ(factoryError("NodeResourcesMostAllocated", {{"resources", "cpu"}}),
            "resources: expected an array, got string");
  EXPECT_NE(factoryError("NodeResourcesMostAllocated",
                         {{"resources", {{{"name", "cpu"}, {"weight", 1}, {"extra", 1}}}}}),
            "");
  EXPECT_NE(factoryError("NodeResourcesMostAllocated",
                         {{"resources", {{{"name", "cpu"}, {"weight", "1"}}}}}),
            "");
}

nlohmann::json shape(const std::vector<std::pair<int, int>>& points) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [u, s] : points) out.push_back({{"utilization", u}, {"score", s}});
  return out;
}

// v1.20 validateFunctionShape and validateResourcesNoMax.
TEST(RequestedToCapacityRatioArgsTest, Validation) {
  struct Case {
    nlohmann::json args;
    std::string want;
  };
  const std::string rtcr = "RequestedToCapacityRatio";
  const std::vector<Case> cases = {
      {nullptr, "shape: at least one point must be specified"},
      {{{"shape", nlohmann::json::array()}}, "shape: at least one point must be specified"},
      {{{"shape", shape({{10, 1}, {10, 2}})}},
       "shape[1].utilization: utilization values must be sorted. Utilization[0]==10 >= "
       "Utilization[1]==10"},
      {{{"shape", shape({{10, 1}, {20, 2}, {15, 3}})}},
       "shape[2].utilization: utilization values must be sorted. Utilization[1]==20 >= "
       "Utilization[2]==15"},
      {{{"shape", shape({{-10, 1}, {20, 2}})}},
       "shape[0].utilization: utilization values must not be less than 0. Utilization[0]==-10"},
      {{{"shape", shape({{10, 1}, {101, 2}})}},
       "shape[1].utilization: utilization values must not be greater than 100. "
       "Utilization[1]==101"},
      {{{"shape", shape({{10, -1}, {20, 2}})}},
       "shape[0].score: score values must not be less than 0. Score[0]==-1"},
      {{{"shape", shape({{10, 1}, {20, 11}})}},
       "shape[1].score: score values must not be greater than 10. Score[1]==11"},
      {{{"shape", shape({{10, 1}})}, {"resources", resources({{"cpu", 1}, {"memory", 0}})}},
       "resources[1].weight: resource memory weight 0 must not be less than 1"},
      {{{"shape", shape({{10, 1}})}, {"resources", resources({{"cpu", -2}})}},
       "resources[0].weight: resource cpu weight -2 must not be less than 1"},
      // Shape errors come first.
      {{{"shape", shape({{10, 11}})}, {"resources", resources({{"cpu", 0}})}},
       "shape[0].score: score values must not be greater than 10. Score[0]==11"},
      // No upper bound on weights.
      {{{"shape", shape({{0, 0}, {100, 10}})}, {"resources", resources({{"cpu", 1000}})}}, ""},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(factoryError(rtcr, c.args), c.want) << c.args.dump();
  }
}

TEST(RequestedToCapacityRatioArgsTest, Decoding) {
  const auto args = RequestedToCapacityRatioArgs::fromJson(
      {{"kind", "RequestedToCapacityRatioArgs"}, {"shape", shape({{0, 0}, {100, 10}})}});
  EXPECT_EQ(args.shape, (std::vector<UtilizationShapePoint>{{0, 0}, {100, 10}}));
  EXPECT_EQ(args.resources, defaultScoringResources());
  EXPECT_NE(factoryError("RequestedToCapacityRatio", {{"shape", shape({{0, 0}})}, {"foo", 1}}), "");
  EXPECT_NE(factoryError("RequestedToCapacityRatio",
                         {{"shape", {{{"utilization", 0}, {"score", 0}, {"x", 0}}}}}),
            "");
  EXPECT_EQ(factoryError("RequestedToCapacityRatio", {{"shape", 1}}),
            "shape: expected an array, got number");
}

TEST(ResourceAllocationV120Test, PodRequest) {
  // Containers without cpu/memory requests count 100m / 200Mi; an explicit 0 stays 0; init
  // containers are a max; overhead adds whole units (cpu rounded up to cores).
  const api::Pod pod = PodWrapper()
                           .req({})
                           .req({{"cpu", "0"}, {"example.com/foo", "2"}})
                           .initReq({{"cpu", "150m"}, {"memory", "1Gi"}, {"example.com/foo", "1"}})
                           .overhead({{"cpu", "250m"}, {"memory", "10"}, {"example.com/foo", "1"}})
                           .obj();
  EXPECT_EQ(helper::podRequestV120(pod, "cpu"), 150 + 1);
  EXPECT_EQ(helper::podRequestV120(pod, "memory"), 1024 * kMi + 10);
  EXPECT_EQ(helper::podRequestV120(pod, "example.com/foo"), 3);
  EXPECT_EQ(helper::podRequestV120(pod, "ephemeral-storage"), 0);
  EXPECT_EQ(helper::podRequestV120(pod, "pods"), 0);
  EXPECT_EQ(helper::podRequestV120(PodWrapper().obj(), "cpu"), 0);
}

TEST(ResourceAllocationV120Test, ScoreWithoutNodeIsError) {
  auto plugin = build("NodeResourcesLeastAllocated", nullptr);
  NodeInfo withoutNode(std::string("gone"));
  CycleState state;
  int64_t score = 0;
  const Status s = dynamic_cast<LegacyResourceScoring&>(*plugin).score(state, PodWrapper().obj(),
                                                                       withoutNode, score);
  EXPECT_EQ(s.code(), Code::kError);
  EXPECT_EQ(s.message(), "node not found");
}

TEST(ResourceAllocationV120Test, MostRequestedScore) {
  EXPECT_EQ(mostRequestedScoreV120(0, 0), 0);
  EXPECT_EQ(mostRequestedScoreV120(5, 4), 0);
  EXPECT_EQ(mostRequestedScoreV120(4, 4), 100);
  EXPECT_EQ(mostRequestedScoreV120(1, 3), 33);
}

}  // namespace
}  // namespace ksched::plugins
