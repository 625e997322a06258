// The Simulator with the load-aware plugins: NodeMetrics read with the cluster (files, or the
// live metrics API) are what the plugins' KubernetesMetricsServer provider reads, as of now.
// docs/load-aware.md's worked example: three 8-cpu nodes at 70 %, 20 % and 50 % cpu,
// TargetLoadPacking (target 40) and LoadAwareFilter (cpu 65).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include <ksched/sim.h>

#include "tests/support/sim_test_util.h"

namespace ksched::sim {
namespace {

using testutil::find;
using testutil::load;
using testutil::placement;
using testutil::pod;

constexpr std::string_view kLoadAware = R"(
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: TargetLoadPacking
      - name: LoadAwareFilter
  pluginConfig:
  - name: TargetLoadPacking
    args:
      targetUtilization: 40
  - name: LoadAwareFilter
    args:
      usageThresholds: {cpu: 65}
)";

std::string node(const std::string& name) {
  return "apiVersion: v1\nkind: Node\nmetadata: {name: " + name +
         "}\nstatus:\n  allocatable: {cpu: \"8\", memory: 32Gi, pods: \"110\"}\n"
         "  capacity: {cpu: \"8\", memory: 32Gi, pods: \"110\"}\n";
}

std::string reading(const std::string& name, const std::string& cpu, const std::string& at) {
  return "apiVersion: metrics.k8s.io/v1beta1\nkind: NodeMetrics\nmetadata: {name: " + name +
         "}\ntimestamp: \"" + at + "\"\nwindow: 30s\nusage: {cpu: " + cpu + ", memory: 8Gi}\n";
}

// Readings taken long ago count as of now: the newest is now, the others as much older.
Cluster threeNodes(const std::string& lw0At = "2026-01-01T12:00:00Z") {
  return load(node("lw-0") + "---\n" + node("lw-1") + "---\n" + node("lw-2") + "---\n" +
              reading("lw-0", "5600m", lw0At) + "---\n" +
              reading("lw-1", "1600m", "2026-01-01T12:00:00Z") + "---\n" +
              reading("lw-2", "4000m", "2026-01-01T12:00:00Z"));
}

TEST(SimulatorLoadTest, APodGoesToTheNodeTheReadingsScoreHighest) {
  Simulator sim(threeNodes(), {.config = std::string(kLoadAware)});
  const Result r = sim.schedule({pod("web", 100)});
  // lw-0 is filtered out (70 % + 1 % > 65 %), lw-1 scores 73 against lw-2's 32.
  EXPECT_EQ(placement(find(r, "web")), "lw-1");
  EXPECT_TRUE(r.unreadKinds.empty()) << "the NodeMetrics are read, not skipped";
}

TEST(SimulatorLoadTest, WithoutReadingsTheNodesAreScoredByTheirRequests) {
  Cluster c = load(node("lw-0") + "---\n" + node("lw-1") + "---\n" + node("lw-2"));
  Simulator sim(c, {.config = std::string(kLoadAware)});
  // No reading anywhere: lw-0 is not filtered, and the empty nodes tie on their requests.
  EXPECT_EQ(find(sim.schedule({pod("web", 100)}), "web").tiedWith.size(), 2u);
}

TEST(SimulatorLoadTest, AReadingOlderThanTheOthersByMoreThanStaleAfterIsNotBelieved) {
  // Every node at 70 %: the filter leaves none. lw-0's reading 10 minutes older than the
  // others is stale (staleAfter 3m): lw-0 is scored by its requests and passes.
  auto hot = [](const std::string& lw0At) {
    return load(node("lw-0") + "---\n" + node("lw-1") + "---\n" + reading("lw-0", "5600m", lw0At) +
                "---\n" + reading("lw-1", "5600m", "2026-01-01T12:00:00Z"));
  };
  Simulator fresh(hot("2026-01-01T12:00:00Z"), {.config = std::string(kLoadAware)});
  EXPECT_FALSE(find(fresh.schedule({pod("web", 100)}), "web").node);
  Simulator stale(hot("2026-01-01T11:50:00Z"), {.config = std::string(kLoadAware)});
  EXPECT_EQ(placement(find(stale.schedule({pod("web", 100)}), "web")), "lw-0");
}

TEST(SimulatorLoadTest, PodsPlacedInOneRunCountOnTheirNodeUntilTheNextReading) {
  Simulator sim(threeNodes(), {.config = std::string(kLoadAware)});
  std::vector<PodPtr> burst;
  for (int i = 0; i < 40; ++i) burst.push_back(pod("web-" + std::to_string(i), 100));
  const Result r = sim.schedule(burst);
  std::map<std::string, int> perNode;
  for (const auto& p : r.pods) {
    if (p.node) ++perNode[*p.node];
  }
  // Each pod adds its predicted 150m (1.9 %) on lw-1 until lw-1 looks as busy as lw-2: both
  // take pods; lw-0 stays filtered out.
  EXPECT_GT(perNode["lw-1"], 0);
  EXPECT_GT(perNode["lw-2"], 0);
  EXPECT_EQ(perNode["lw-0"], 0);
}

}  // namespace
}  // namespace ksched::sim
