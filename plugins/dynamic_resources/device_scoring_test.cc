// Device scoring in DynamicResources (device_scoring.cc): its arguments and their errors, Score
// ranking the node where a pod's GPUs fit in one PCIe root above the one where they are split,
// explain's account of each score, and nothing of it when the arguments leave it off.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "plugins/dynamic_resources/dynamic_resources.h"
#include "tests/support/dra_plugin_json.h"
#include "tests/support/plugin_test_util.h"

namespace ksched::plugins {
namespace {

using dra::testjson::meta;
using nlohmann::json;
using testutil::NodeWrapper;
using testutil::PodWrapper;

const features::Gates kGates;

// `roots[i]` is the PCIe root of gpu-i.
json gpuSlice(const std::string& node, const std::vector<std::string>& roots) {
  json devices = json::array();
  for (size_t i = 0; i < roots.size(); ++i) {
    devices.push_back(
        {{"name", "gpu-" + std::to_string(i)},
         {"attributes", {{"resource.kubernetes.io/pcieRoot", {{"string", roots[i]}}}}}});
  }
  return dra::testjson::nodeSlice(node, std::move(devices));
}

class DeviceScoringTest : public ::testing::Test {
 protected:
  DeviceScoringTest() : state(std::make_shared<dra::DraState>()) {
    state->onClass(
        {{"apiVersion", "resource.k8s.io/v1"},
         {"kind", "DeviceClass"},
         {"metadata", meta("gpu")},
         {"spec",
          {{"selectors",
            json::array({{{"cel", {{"expression", "device.driver == \"gpu.example.com\""}}}}})}}}});
    // n1 alternates its roots; n2 has its four GPUs under one.
    state->onSlice(gpuSlice("n1", {"pci0000:00", "pci0000:40", "pci0000:00", "pci0000:40"}));
    state->onSlice(gpuSlice("n2", {"pci0000:80", "pci0000:80", "pci0000:80", "pci0000:80"}));
    state->onClaim(
        {{"apiVersion", "resource.k8s.io/v1"},
         {"kind", "ResourceClaim"},
         {"metadata", meta("four", "ml")},
         {"spec",
          {{"devices",
            {{"requests",
              json::array({{{"name", "gpus"},
                            {"exactly", {{"deviceClassName", "gpu"}, {"count", n}}}}})}}}}}});
    pod = PodWrapper("p").obj();
    pod.metadata.namespace_ = "ml";
    pod.metadata.uid = "p-uid";
    pod.spec.resourceClaims = {{"gpus", std::string("four"), std::nullopt}};
  }

  // Filter, PreScore, Score, NormalizeScore on n1 and n2; the normalized scores.
  std::vector<int64_t> scores(DynamicResources& plugin, CycleState& s) {
    PreFilterResult r;
    EXPECT_TRUE(plugin.preFilter(s, pod, handle.snapshot(), r).ok());
    EXPECT_TRUE(plugin.filter(s, pod, n1).ok());
    EXPECT_TRUE(plugin.filter(s, pod, n2).ok());
    EXPECT_TRUE(plugin.preScore(s, pod, {&n1, &n2}).ok());
    std::vector<NodeScore> out = {{"n1", -1}, {"n2", -1}};
    EXPECT_TRUE(plugin.score(s, pod, n1, out[0].score).ok());
    EXPECT_TRUE(plugin.score(s, pod, n2, out[1].score).ok());
    raw = {out[0].score, out[1].score};
    EXPECT_TRUE(plugin.normalizeScore(s, pod, out).ok());
    return {out[0].score, out[1].score};
  }

  static constexpr int n = 4;
  testing::FakeHandle handle;
  std::shared_ptr<dra::DraState> state;
  api::Pod pod;
  std::vector<int64_t> raw;
  NodeInfo n1{std::make_shared<api::Node>(NodeWrapper("n1").obj())};
  NodeInfo n2{std::make_shared<api::Node>(NodeWrapper("n2").obj())};
};

TEST_F(DeviceScoringTest, TheNodeWhereTheGpusShareARootScoresHigher) {
  DynamicResources plugin(
      handle, state,
      DynamicResourcesArgs::fromJson(
          {{"deviceScoring", {{"topologyAttribute", "resource.kubernetes.io/pcieRoot"}}}}, kGates));
  CycleState s;
  EXPECT_EQ(scores(plugin, s), (std::vector<int64_t>{50, 100}));
  EXPECT_EQ(raw, (std::vector<int64_t>{50, 100}));
  EXPECT_EQ(plugin.explainScore(s, pod, n1),
            "device score 50: 4 devices split over 2 pcieRoot values, 2 in pci0000:00");
  EXPECT_EQ(plugin.explainScore(s, pod, n2), "device score 100: 4 devices in pcieRoot pci0000:80");
}

TEST_F(DeviceScoringTest, OffScoreIsSkippedAndExplainSaysNothing) {
  DynamicResources plugin(handle, state, DynamicResourcesArgs::fromJson(nullptr, kGates));
  CycleState s;
  PreFilterResult r;
  ASSERT_TRUE(plugin.preFilter(s, pod, handle.snapshot(), r).ok());
  ASSERT_TRUE(plugin.filter(s, pod, n1).ok());
  EXPECT_TRUE(plugin.preScore(s, pod, {&n1}).isSkip());
  int64_t score = -1;
  ASSERT_TRUE(plugin.score(s, pod, n1, score).ok());
  EXPECT_EQ(score, 0);
  EXPECT_EQ(plugin.explainScore(s, pod, n1), "");
}

// A prioritized list's choice outranks any device score; a node where nothing was allocated
// (a device plugin serves the pod there) splits and fragments nothing.
TEST(DeviceScoringCombined, TheListsChoiceFirstThenTheDevices) {
  const dra::Result::Quality split{50, ""};
  const dra::Result::Quality aligned{100, ""};
  EXPECT_EQ(dra::combinedScore(0, &split), 50);
  EXPECT_EQ(dra::combinedScore(0, nullptr), 100);
  EXPECT_GT(dra::combinedScore(8, &split), dra::combinedScore(7, &aligned));
  EXPECT_GT(dra::combinedScore(8, &aligned), dra::combinedScore(8, &split));
}

TEST(DeviceScoringArgsTest, DecodesTheFieldsAndNamesWhatIsWrong) {
  const DynamicResourcesArgs defaults = DynamicResourcesArgs::fromJson(nullptr, kGates);
  EXPECT_FALSE(defaults.deviceScoring.enabled());
  EXPECT_FALSE(DynamicResourcesArgs::fromJson({{"deviceScoring", json::object()}}, kGates)
                   .deviceScoring.enabled());
  const DynamicResourcesArgs set = DynamicResourcesArgs::fromJson(
      {{"deviceScoring",
        {{"topologyAttribute", "resource.kubernetes.io/pcieRoot"}, {"packPartitions", true}}}},
      kGates);
  EXPECT_EQ(set.deviceScoring.topologyAttribute, "resource.kubernetes.io/pcieRoot");
  EXPECT_TRUE(set.deviceScoring.packPartitions);
  EXPECT_EQ(set.filterTimeout, std::chrono::seconds(10));  // the rest keeps its defaults

  const struct {
    json scoring;
    std::string error;
  } bad[] = {
      {{{"topologyAttribute", "pcieRoot"}},
       "deviceScoring.topologyAttribute: Invalid value: \"pcieRoot\": must be a fully qualified "
       "attribute name with a domain (e.g. resource.kubernetes.io/pcieRoot)"},
      {{{"topologyAttribute", ""}}, "deviceScoring.topologyAttribute: Invalid value: \"\": must"},
      {{{"topologyAttribute", "Example.com/root"}},
       "deviceScoring.topologyAttribute: Invalid value: \"Example.com/root\": the domain must be "
       "a lowercase DNS subdomain of at most 63 characters"},
      {{{"topologyAttribute", "example.com/9root"}},
       "deviceScoring.topologyAttribute: Invalid value: \"example.com/9root\": the name must be a "
       "C identifier (letters, digits, '_') of at most 32 characters"},
      {{{"topologyAttribute", "example.com/"}}, "the name must be a C identifier"},
      {{{"topologyAttribute", 7}}, "deviceScoring.topologyAttribute: expected a string"},
      {{{"packPartitions", "yes"}}, "deviceScoring.packPartitions: expected a boolean"},
      {{{"pcieRoot", true}}, "deviceScoring.pcieRoot: unknown field"},
      {"on", "deviceScoring: expected an object, got string"},
  };
  for (const auto& b : bad) {
    try {
      (void)DynamicResourcesArgs::fromJson({{"deviceScoring", b.scoring}}, kGates);
      ADD_FAILURE() << b.scoring.dump() << " was accepted";
    } catch (const PluginArgsError& e) {
      EXPECT_NE(std::string(e.what()).find(b.error), std::string::npos) << e.what();
    }
  }
  features::Gates noPartitions;
  noPartitions.force(features::Feature::kDRAPartitionableDevices, false);
  try {
    (void)DynamicResourcesArgs::fromJson({{"deviceScoring", {{"packPartitions", true}}}},
                                         noPartitions);
    ADD_FAILURE() << "packPartitions accepted with its gate off";
  } catch (const PluginArgsError& e) {
    EXPECT_EQ(std::string(e.what()),
              "deviceScoring.packPartitions: Forbidden: DRAPartitionableDevices feature gate is "
              "disabled");
  }
}

}  // namespace
}  // namespace ksched::plugins
