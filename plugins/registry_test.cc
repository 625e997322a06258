#include "plugins/registry.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/support/plugin_test_util.h"

namespace ksched::plugins {
namespace {

class Dummy final : public Plugin {
 public:
  [[nodiscard]] std::string_view name() const override { return "Dummy"; }
};

std::unique_ptr<Dummy> newDummy(Handle& /*handle*/) { return std::make_unique<Dummy>(); }

TEST(RegistryTest, AddFindNames) {
  Registry r;
  r.add("B", newDummy);
  r.add("A", newDummy);
  EXPECT_NE(r.find("A"), nullptr);
  EXPECT_EQ(r.find("C"), nullptr);
  EXPECT_EQ(r.names(), (std::vector<std::string>{"A", "B"}));
}

TEST(RegistryTest, DuplicateIsError) {
  Registry r;
  r.add("A", newDummy);
  try {
    r.add("A", newDummy);
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "plugin \"A\" is already registered");
  }
}

TEST(RegistryTest, MergeRejectsDuplicatesAtomically) {
  Registry r;
  r.add("A", newDummy);
  Registry other;
  other.add("B", newDummy);
  other.add("A", newDummy);
  EXPECT_THROW(r.merge(other), std::invalid_argument);
  EXPECT_EQ(r.names(), std::vector<std::string>{"A"});

  Registry outOfTree;
  outOfTree.add("C", newDummy);
  r.merge(outOfTree);
  EXPECT_EQ(r.names(), (std::vector<std::string>{"A", "C"}));
}

TEST(InTreeRegistryTest, ListsEveryPluginByUpstreamName) {
  Registry r = inTreeRegistry();
  const std::vector<std::string> want = {"AzureDiskLimits",
                                         "CinderLimits",
                                         "Coscheduling",
                                         "DefaultBinder",
                                         "DefaultPreemption",
                                         "DeferredPodScheduling",
                                         "DynamicResources",
                                         "EBSLimits",
                                         "GCEPDLimits",
                                         "GangScheduling",
                                         "ImageLocality",
                                         "InterPodAffinity",
                                         "LoadAwareFilter",
                                         "LoadVariationRiskBalancing",
                                         "NodeAffinity",
                                         "NodeDeclaredFeatures",
                                         "NodeLabel",
                                         "NodeName",
                                         "NodePorts",
                                         "NodePreferAvoidPods",
                                         "NodeResourcesBalancedAllocation",
                                         "NodeResourcesFit",
                                         "NodeResourcesLeastAllocated",
                                         "NodeResourcesMostAllocated",
                                         "NodeUnschedulable",
                                         "NodeVolumeLimits",
                                         "PodGroupPodsCount",
                                         "PodTopologySpread",
                                         "PrioritySort",
                                         "RequestedToCapacityRatio",
                                         "SchedulingGates",
                                         "SelectorSpread",
                                         "ServiceAffinity",
                                         "TaintToleration",
                                         "TargetLoadPacking",
                                         "TopologyPlacementGenerator",
                                         "VolumeBinding",
                                         "VolumeRestrictions",
                                         "VolumeZone"};
  EXPECT_EQ(r.names(), want);
  testutil::FakeHandle h;
  for (const std::string& name : want) {
    const PluginFactory* f = r.find(name);
    ASSERT_NE(f, nullptr) << name;
    // RequestedToCapacityRatio has no default shape.
    const nlohmann::json args =
        name == "RequestedToCapacityRatio"
            ? nlohmann::json{{"shape", {{{"utilization", 0}, {"score", 0}}}}}
            : nlohmann::json();
    std::unique_ptr<Plugin> p = makePlugin(*f, args, h);
    ASSERT_NE(p, nullptr) << name;
    EXPECT_EQ(p->name(), name);
    // What validation knows of the plugin without building it is what the built plugin serves.
    EXPECT_EQ(f->points, extensionPointsOf(*p)) << name;
  }
}

TEST(InTreeRegistryTest, OutOfTreeDuplicateOfInTreeIsError) {
  Registry r = inTreeRegistry();
  Registry outOfTree;
  outOfTree.add("NodeName", newDummy);
  EXPECT_THROW(r.merge(outOfTree), std::invalid_argument);
}

}  // namespace
}  // namespace ksched::plugins
