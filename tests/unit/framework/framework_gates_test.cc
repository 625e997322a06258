// Feature gates are a value each framework holds: two frameworks with different gates, built
// and run side by side in one process, each behave as their own gates say.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include <ksched/api/features.h>
#include <ksched/testing/fakes.h>

#include "cache/snapshot.h"
#include "config/profile.h"
#include "framework/framework.h"
#include "plugins/registry.h"
#include "tests/support/framework_test_plugins.h"

namespace ksched {
namespace {

using features::Feature;
using testing::NodeWrapper;
using testing::PodWrapper;

// The default profile of the in-tree plugins, built and run with `gates`.
struct GatedFramework {
  explicit GatedFramework(const features::Gates& g)
      : gates(g), fwk(config::defaultProfile(gates), plugins::inTreeRegistry(), services()) {}

  framework::Services services() {
    framework::Services s = env.services();
    s.features = gates;
    return s;
  }
  // The Filter verdict on `node` for `pod`, after PreFilter.
  Status filter(const api::Pod& pod, const cache::Snapshot& snapshot, const std::string& node) {
    fwk.setSnapshot(&snapshot);
    CycleState state;
    PreFilterResult result;
    Status s = fwk.runPreFilterPlugins(state, pod, result);
    if (s.ok()) s = fwk.runFilterPlugins(state, pod, *snapshot.get(node));
    fwk.setSnapshot(nullptr);
    return s;
  }

  frameworktest::Env env;
  features::Gates gates;
  framework::Framework fwk;
};

features::Gates with(Feature feature, bool value) {
  features::Gates g;
  g.force(feature, value);
  return g;
}

TEST(FrameworkGatesTest, TwoFrameworksWithDifferentGatesBehaveEachAsItsGatesSay) {
  GatedFramework on(with(Feature::kTaintTolerationComparisonOperators, true));
  GatedFramework off(with(Feature::kTaintTolerationComparisonOperators, false));
  EXPECT_TRUE(on.fwk.features().enabled(Feature::kTaintTolerationComparisonOperators));
  EXPECT_FALSE(off.fwk.features().enabled(Feature::kTaintTolerationComparisonOperators));

  // A node whose SLA taint is above what the pod's Gt toleration asks: tolerated only where
  // the comparison operators are on.
  const auto snapshot = cache::Snapshot::fromForTest(
      {}, {NodeWrapper("n1")
               .capacity({{"cpu", "4"}, {"memory", "8Gi"}, {"pods", "10"}})
               .taint("sla", "950", "NoSchedule")
               .ptr()});
  const api::Pod pod = PodWrapper("p").uid("p").toleration("sla", "Gt", "900", "").obj();
  // Interleaved, and then at once on two threads: neither framework sees the other's gates.
  for (int round = 0; round < 3; ++round) {
    EXPECT_TRUE(on.filter(pod, snapshot, "n1").ok());
    const Status rejected = off.filter(pod, snapshot, "n1");
    EXPECT_FALSE(rejected.ok());
    EXPECT_EQ(rejected.plugin(), "TaintToleration");
  }
  Status fromOn, fromOff;
  {
    std::jthread a([&] { fromOn = on.filter(pod, snapshot, "n1"); });
    std::jthread b([&] { fromOff = off.filter(pod, snapshot, "n1"); });
  }
  EXPECT_TRUE(fromOn.ok());
  EXPECT_FALSE(fromOff.ok());
}

TEST(FrameworkGatesTest, TheDefaultPluginsFollowEachFrameworksGates) {
  GatedFramework withDra(with(Feature::kDynamicResourceAllocation, true));
  GatedFramework withoutDra(with(Feature::kDynamicResourceAllocation, false));
  auto filters = [](const GatedFramework& g) {
    return g.fwk.pluginsPerExtensionPoint().at("Filter");
  };
  auto has = [](const std::vector<std::string>& names, const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  EXPECT_TRUE(has(filters(withDra), "DynamicResources"));
  EXPECT_FALSE(has(filters(withoutDra), "DynamicResources"));
}

}  // namespace
}  // namespace ksched
