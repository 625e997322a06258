// The Simulator (ksched/sim.h) with configurations: scoring strategies, invalid files, extenders,
// gangs (Coscheduling), scheduling gates, out-of-tree plugins and maxAttempts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <ksched/sim.h>
#include <ksched/testing/fakes.h>

#include "tests/support/sim_test_util.h"

namespace ksched::sim {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using ::testing::UnorderedElementsAre;
using ::testing::UnorderedElementsAreArray;
using testutil::bindings;
using testutil::boundPod;
using testutil::find;
using testutil::load;
using testutil::node;
using testutil::placement;
using testutil::pod;
using testutil::podOf;

constexpr std::string_view kMostAllocated = R"(
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
)";

// ---- configuration ----

TEST(SimulatorTest, MostAllocatedPacksWhereTheDefaultSpreads) {
  Cluster c;
  c.nodes = {node("busy", 4), node("idle", 4)};
  c.pods = {boundPod("a", 2000, "busy")};

  Simulator spread(c);
  EXPECT_EQ(placement(find(spread.schedule({pod("p", 1000)}), "p")), "idle");

  Simulator packed(c, {.config = std::string(kMostAllocated)});
  EXPECT_EQ(placement(find(packed.schedule({pod("p", 1000)}), "p")), "busy");
}

TEST(SimulatorTest, InvalidConfigThrowsWithTheFieldPath) {
  std::string config(kMostAllocated);
  config.replace(config.find("MostAllocated"), 13, "Fullest");
  try {
    Simulator sim(Cluster{}, {.config = config, .configName = "my.yaml"});
    FAIL() << "no ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("my.yaml"));
    EXPECT_THAT(e.what(), HasSubstr("profiles[0].pluginConfig[0].args.scoringStrategy.type"));
    EXPECT_THAT(e.what(), HasSubstr("Fullest"));
  }
}

TEST(SimulatorTest, ExtendersAreDropped) {
  const std::string config = R"(
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
extenders:
- urlPrefix: http://127.0.0.1:1/
  filterVerb: filter
)";
  Cluster c;
  c.nodes = {node("n1", 4)};
  Simulator sim(c, {.config = config});
  EXPECT_EQ(placement(sim.canSchedule(*pod("p", 1000))), "n1");
}

// ---- gangs (Coscheduling) ----

constexpr std::string_view kGangConfig = R"(
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: Coscheduling
    queueSort:
      enabled:
      - name: Coscheduling
      disabled:
      - name: "*"
  pluginConfig:
  - name: Coscheduling
    args:
      permitWaitingTimeSeconds: 60
)";

// Nodes of 1 cpu each, a PodGroup "train" (minMember 3) and its three pending pods of 1 cpu.
std::string gangCluster(int nodes) {
  std::string y;
  for (int i = 1; i <= nodes; ++i) {
    y += "apiVersion: v1\nkind: Node\nmetadata:\n  name: n" + std::to_string(i) +
         "\nstatus:\n  allocatable:\n    cpu: 1\n    memory: 4Gi\n    pods: 110\n---\n";
  }
  y += R"(apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata:
  name: train
  namespace: default
spec:
  minMember: 3
)";
  for (int i = 0; i < 3; ++i) {
    y += "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: worker-" + std::to_string(i) +
         "\n  namespace: default\n  labels:\n    scheduling.x-k8s.io/pod-group: train\n"
         "spec:\n  containers:\n  - name: c\n    resources:\n      requests:\n        cpu: 1\n";
  }
  return y;
}

TEST(SimulatorTest, GangWithRoomIsPlacedWhole) {
  Cluster c = load(gangCluster(3));
  ASSERT_EQ(c.others.count("scheduling.x-k8s.io/v1alpha1/PodGroup"), 1u);
  Simulator sim(c, {.config = std::string(kGangConfig)});
  const Result r = sim.schedule();
  ASSERT_EQ(r.pods.size(), 3u);
  std::vector<std::string> nodes;
  for (const PodResult& p : r.pods) {
    EXPECT_EQ(p.origin, "pending");
    ASSERT_TRUE(p.node.has_value()) << p.name << ": " << p.reason;
    nodes.push_back(*p.node);
  }
  EXPECT_THAT(nodes, UnorderedElementsAre("n1", "n2", "n3"));
  EXPECT_EQ(r.scheduled, 3u);
}

TEST(SimulatorTest, GangWithoutRoomPlacesNoneAndSaysWhy) {
  Cluster c = load(gangCluster(2));
  Simulator sim(c, {.config = std::string(kGangConfig)});
  const Result r = sim.schedule();
  ASSERT_EQ(r.pods.size(), 3u);
  EXPECT_EQ(r.scheduled, 0u);
  EXPECT_EQ(r.unschedulable, 3u);
  std::vector<std::string> reasons;
  for (const PodResult& p : r.pods) {
    EXPECT_FALSE(p.node.has_value()) << p.name << " on " << *p.node;
    reasons.push_back(p.name + ": " + p.reason);
  }
  // The third pod fits no node; PostFilter releases the two waiting at Permit. The third is
  // tried once more (the room they gave back) and is turned away: the group waits for room.
  EXPECT_THAT(reasons, UnorderedElementsAreArray(std::vector<std::string>{
                           "worker-0: optimistic rejection in PostFilter: pod worker-2 of "
                           "PodGroup default/train fits no node",
                           "worker-1: optimistic rejection in PostFilter: pod worker-2 of "
                           "PodGroup default/train fits no node",
                           "worker-2: 0/2 nodes are available: podGroup default/train failed "
                           "recently: its pods do not all fit; it waits for room to free up. "
                           "preemption: 0/2 nodes are available: 2 Preemption is not helpful for "
                           "scheduling."}));
  for (const auto& [name, nodeName] : bindings(sim)) EXPECT_EQ(nodeName, "") << name;
}

// ---- scheduling gates, attempts ----

TEST(SimulatorTest, GatedPodIsNotAttempted) {
  Cluster c;
  c.nodes = {node("n1", 4)};
  Simulator sim(c);
  const Result r = sim.schedule(
      {podOf("gated", 1000).schedulingGates({"example.com/wait"}).ptr(), pod("free", 1000)});
  const PodResult& gated = find(r, "gated");
  EXPECT_FALSE(gated.node.has_value());
  EXPECT_EQ(gated.attempts, 0);
  EXPECT_THAT(gated.reason, StartsWith("not attempted"));
  EXPECT_EQ(placement(find(r, "free")), "n1");
  EXPECT_EQ(r.unschedulable, 1u);
}

// A Filter that fails with an error on every node.
class AlwaysError final : public FilterPlugin {
 public:
  static constexpr std::string_view kName = "AlwaysError";
  [[nodiscard]] std::string_view name() const override { return kName; }
  [[nodiscard]] Status filter(const CycleState& /*state*/, const api::Pod& /*pod*/,
                              const NodeInfo& /*nodeInfo*/) const override {
    return Status::error("the disk is on fire");
  }
};

// A PreBind that never succeeds, and asks for a retry whenever a bound pod goes away: the
// binding it failed frees room, which requeues the pod itself, and so on.
class NeverReady final : public PreBindPlugin, public EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "NeverReady";
  [[nodiscard]] std::string_view name() const override { return kName; }
  Status preBind(CycleState& /*state*/, const api::Pod& /*pod*/,
                 const std::string& /*nodeName*/) override {
    return Status::unschedulable("the volume is not ready");
  }
  [[nodiscard]] std::vector<ClusterEventWithHint> eventsToRegister() const override {
    return {events::kAssignedPodDelete};
  }
};

Registry testPlugins() {
  Registry r;
  r.add(std::string(AlwaysError::kName),
        [](Handle& /*handle*/) { return std::make_unique<AlwaysError>(); });
  r.add(std::string(NeverReady::kName),
        [](Handle& /*handle*/) { return std::make_unique<NeverReady>(); });
  return r;
}

std::string enabling(const std::string& point, std::string_view plugin) {
  return R"(
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    )" + point +
         ":\n      enabled:\n      - name: " + std::string(plugin) + "\n";
}

TEST(SimulatorTest, MaxAttemptsEndsARunThatWouldNot) {
  Cluster c;
  c.nodes = {node("n1", 4)};
  Simulator sim(c, {.config = enabling("preBind", NeverReady::kName), .maxAttempts = 4},
                testPlugins());
  const Result r = sim.schedule({pod("doomed", 1000)});
  const PodResult& doomed = find(r, "doomed");
  EXPECT_FALSE(doomed.node.has_value());
  EXPECT_EQ(doomed.attempts, 4);
  EXPECT_EQ(r.attempts, 4u);
  EXPECT_THAT(doomed.reason, HasSubstr("the volume is not ready"));
  EXPECT_EQ(bindings(sim)["doomed"], "");
}

TEST(SimulatorTest, AnErrorEndsTheRun) {
  Cluster c;
  c.nodes = {node("n1", 4)};
  Simulator sim(c, {.config = enabling("filter", AlwaysError::kName)}, testPlugins());
  const Result r = sim.schedule({pod("doomed", 1000)});
  const PodResult& doomed = find(r, "doomed");
  EXPECT_FALSE(doomed.node.has_value());
  EXPECT_EQ(doomed.reason, "running \"AlwaysError\" filter plugin: the disk is on fire");
}

TEST(SimulatorTest, OutOfTreePluginNamedLikeAnInTreeOneIsAConfigError) {
  Registry outOfTree;
  outOfTree.add("NodeResourcesFit",
                [](Handle& /*handle*/) { return std::make_unique<AlwaysError>(); });
  EXPECT_THROW(Simulator(Cluster{}, {}, outOfTree), ConfigError);
}

}  // namespace
}  // namespace ksched::sim
