#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <ksched/sim.h>
#include <ksched/testing/fakes.h>

#include "sim/load.h"

namespace ksched::sim {
namespace {

using ksched::testing::NodeWrapper;
using ksched::testing::PodWrapper;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;
using ::testing::UnorderedElementsAreArray;

// A node with `milliCpu`, 2Mi of memory per milli-cpu and room for 110 pods.
NodePtr nodeMilli(const std::string& name, int milliCpu) {
  return NodeWrapper(name)
      .capacity({{"cpu", std::to_string(milliCpu) + "m"},
                 {"memory", std::to_string(2 * milliCpu) + "Mi"},
                 {"pods", "110"}})
      .ptr();
}
NodePtr node(const std::string& name, int cpu) { return nodeMilli(name, 1000 * cpu); }

// A pod asking for `milliCpu` and 2Mi of memory per milli-cpu: the same share of cpu and memory
// of every node above, so that BalancedAllocation scores all nodes alike.
PodWrapper podOf(const std::string& name, int milliCpu) {
  return PodWrapper(name).req(
      {{"cpu", std::to_string(milliCpu) + "m"}, {"memory", std::to_string(2 * milliCpu) + "Mi"}});
}
PodPtr pod(const std::string& name, int milliCpu) { return podOf(name, milliCpu).ptr(); }
PodPtr boundPod(const std::string& name, int milliCpu, const std::string& nodeName,
                int32_t priority = 0) {
  return podOf(name, milliCpu).nodeName(nodeName).priority(priority).ptr();
}

const PodResult& find(const Result& r, const std::string& name,
                      const std::string& origin = "work") {
  for (const PodResult& p : r.pods) {
    if (p.name == name && p.origin == origin) return p;
  }
  throw std::runtime_error("no result for " + origin + " pod " + name);
}

std::string placement(const PodResult& p) { return p.node ? *p.node : "<none: " + p.reason + ">"; }

// name -> node ("" when pending), of the cluster the simulator holds.
std::map<std::string, std::string> bindings(const Simulator& sim) {
  std::map<std::string, std::string> out;
  for (const PodPtr& p : sim.cluster().pods) out[p->metadata.name] = p->spec.nodeName;
  return out;
}

std::vector<std::string> placements(const Result& r) {
  std::vector<std::string> out;
  for (const PodResult& p : r.pods) out.push_back(p.name + "@" + placement(p));
  return out;
}

Cluster load(std::string_view yaml) {
  Cluster c;
  loadText(yaml, "cluster.yaml", LoadAs::kCluster, c);
  checkCluster(c);
  if (!c.skipped.empty()) throw std::runtime_error("skipped: " + c.skipped[0].message);
  return c;
}

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

// ---- capacity ----

TEST(SimulatorTest, CapacityCountsCopiesAndSaysWhyTheNextDoesNotFit) {
  Cluster c;
  c.nodes = {node("n1", 4), node("n2", 4), node("n3", 4)};
  Simulator sim(c);
  const auto cap = sim.capacity(PodWrapper("web").req({{"cpu", "1"}}).obj());
  EXPECT_EQ(cap.fits, 12);
  ASSERT_TRUE(cap.next.has_value());
  EXPECT_FALSE(cap.next->node.has_value());
  EXPECT_EQ(cap.next->reason, "0/3 nodes are available: 3 Insufficient cpu.");
  const auto diagnosis = nlohmann::json::parse(cap.next->diagnosis);
  EXPECT_EQ(diagnosis.at("nodes"), 3);
  ASSERT_FALSE(diagnosis.at("reasons").empty());
  EXPECT_EQ(diagnosis["reasons"][0].at("plugin"), "NodeResourcesFit");
  EXPECT_EQ(diagnosis["reasons"][0].at("count"), 3);
  // Nothing was placed in the simulator's cluster.
  EXPECT_THAT(sim.cluster().pods, IsEmpty());
}

TEST(SimulatorTest, CapacityStopsAtTheLimit) {
  Cluster c;
  c.nodes = {node("n1", 4)};
  Simulator sim(c);
  const auto cap = sim.capacity(PodWrapper("web").req({{"cpu", "1"}}).obj(), 3);
  EXPECT_EQ(cap.fits, 3);
  EXPECT_FALSE(cap.next.has_value());
}

TEST(SimulatorTest, CapacityCountsWhatBoundPodsLeave) {
  Cluster c;
  c.nodes = {node("n1", 4), node("n2", 4)};
  c.pods = {boundPod("a", 3000, "n1"), pod("pending", 4000)};
  Simulator sim(c);
  // 1 cpu left on n1, 4 on n2; the pending pod is not counted as placed.
  EXPECT_EQ(sim.capacity(PodWrapper("web").req({{"cpu", "1"}}).obj()).fits, 5);
}

// ---- placement with the default profile ----

TEST(SimulatorTest, DefaultProfilePlacesOnTheLeastAllocatedNode) {
  Cluster c;
  c.nodes = {node("small", 2), node("medium", 4), node("large", 16)};
  Simulator sim(c);
  const Result r = sim.schedule({pod("p1", 1000), pod("p2", 1000), pod("big", 3000)});
  // large keeps the largest free share after each of them: 15/16, 14/16, 11/16 vs 3/4 at most.
  EXPECT_THAT(placements(r), ElementsAre("p1@large", "p2@large", "big@large"));
  EXPECT_EQ(r.scheduled, 3u);
  EXPECT_EQ(r.unschedulable, 0u);
  for (const PodResult& p : r.pods) {
    EXPECT_THAT(p.tiedWith, IsEmpty()) << p.name;
    EXPECT_EQ(p.attempts, 1) << p.name;
    EXPECT_EQ(p.origin, "work");
    EXPECT_EQ(p.namespace_, "default");
  }
  EXPECT_EQ(bindings(sim), (std::map<std::string, std::string>{
                               {"p1", "large"}, {"p2", "large"}, {"big", "large"}}));
}

TEST(SimulatorTest, HigherPriorityIsPlacedFirstWhenBothWantTheLastRoom) {
  Cluster c;
  c.nodes = {node("n1", 2)};
  Simulator sim(c);
  // Given low first: the queue orders by priority.
  const Result r = sim.schedule(
      {podOf("low", 2000).priority(10).ptr(), podOf("high", 2000).priority(1000).ptr()});
  EXPECT_EQ(placement(find(r, "high")), "n1");
  const PodResult& low = find(r, "low");
  EXPECT_FALSE(low.node.has_value());
  EXPECT_EQ(low.reason,
            "0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient memory. preemption: 0/1 "
            "nodes are available: 1 No preemption victims found for incoming pod.");
  EXPECT_THAT(r.victims, IsEmpty());
  EXPECT_EQ(r.scheduled, 1u);
  EXPECT_EQ(r.unschedulable, 1u);
}

TEST(SimulatorTest, PendingPodsOfTheClusterComeFirstAndOthersSchedulersAreLeftAlone) {
  Cluster c;
  c.nodes = {node("n1", 4)};
  auto theirs = std::make_shared<api::Pod>(podOf("theirs", 1000).obj());
  theirs->spec.schedulerName = "other-scheduler";
  c.pods = {pod("waiting", 1000), theirs};
  Simulator sim(c);
  const Result r = sim.schedule({pod("mine", 1000)});
  ASSERT_EQ(r.pods.size(), 2u);
  EXPECT_EQ(r.pods[0].name, "waiting");
  EXPECT_EQ(r.pods[0].origin, "pending");
  EXPECT_EQ(placement(r.pods[0]), "n1");
  EXPECT_EQ(r.pods[1].name, "mine");
  EXPECT_EQ(placement(r.pods[1]), "n1");
  EXPECT_EQ(bindings(sim)["theirs"], "");
}

// ---- determinism ----

TEST(SimulatorTest, SameSeedSamePlacementsAmongTiedNodes) {
  Cluster c;
  c.nodes = {node("n1", 4), node("n2", 4), node("n3", 4), node("n4", 4)};
  std::vector<PodPtr> work;
  for (int i = 0; i < 6; ++i) work.push_back(pod("p" + std::to_string(i), 1000));

  Simulator a(c, {.seed = 7});
  Simulator b(c, {.seed = 7});
  const Result ra = a.schedule(work);
  const Result rb = b.schedule(work);
  EXPECT_EQ(placements(ra), placements(rb));
  EXPECT_EQ(bindings(a), bindings(b));

  // The first pod saw four equal nodes: the one chosen and the three others it tied with.
  const PodResult& first = ra.pods[0];
  ASSERT_TRUE(first.node.has_value());
  std::vector<std::string> all = first.tiedWith;
  all.push_back(*first.node);
  EXPECT_THAT(all, UnorderedElementsAre("n1", "n2", "n3", "n4"));
  EXPECT_THAT(first.tiedWith, ::testing::Not(::testing::Contains(*first.node)));
  // The second one: the three untouched nodes tie, the first pod's node scores lower.
  const PodResult& second = ra.pods[1];
  ASSERT_TRUE(second.node.has_value());
  EXPECT_NE(*second.node, *first.node);
  EXPECT_EQ(second.tiedWith.size(), 2u);
}

TEST(SimulatorTest, TheSeedDecidesAmongTiedNodes) {
  Cluster c;
  c.nodes = {node("n1", 4), node("n2", 4), node("n3", 4), node("n4", 4)};
  std::set<std::string> chosen;
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    Simulator sim(c, {.seed = seed});
    const auto one = sim.canSchedule(*pod("p", 1000));
    ASSERT_TRUE(one.node.has_value());
    chosen.insert(*one.node);
  }
  EXPECT_GT(chosen.size(), 1u);
}

// ---- preemption ----

// n1 holds a low-priority pod of 1 cpu (1 cpu left); n2 has `n2Milli` free.
Cluster preemptionCluster(int n2Milli) {
  Cluster c;
  c.nodes = {node("n1", 2), nodeMilli("n2", n2Milli)};
  c.pods = {boundPod("victim", 1000, "n1", 0)};
  return c;
}

TEST(SimulatorTest, PreemptionEvictsAndTheVictimIsPlacedElsewhere) {
  Simulator sim(preemptionCluster(1000));
  const Result r = sim.schedule({podOf("urgent", 2000).priority(1000).ptr()});
  EXPECT_EQ(placement(find(r, "urgent")), "n1");
  ASSERT_EQ(r.victims.size(), 1u);
  EXPECT_EQ(r.victims[0].namespace_, "default");
  EXPECT_EQ(r.victims[0].name, "victim");
  EXPECT_EQ(r.victims[0].node, "n1");
  EXPECT_EQ(r.victims[0].preemptor, "default/urgent");
  // Recreated as its controller would, and placed on n2.
  const PodResult& again = find(r, "victim", "preempted");
  EXPECT_EQ(placement(again), "n2");
  EXPECT_NE(again.uid, "victim-uid");
  EXPECT_EQ(bindings(sim),
            (std::map<std::string, std::string>{{"urgent", "n1"}, {"victim", "n2"}}));
}

TEST(SimulatorTest, PreemptedVictimWithNoRoomLeftIsUnschedulable) {
  Simulator sim(preemptionCluster(500));
  const Result r = sim.schedule({podOf("urgent", 2000).priority(1000).ptr()});
  EXPECT_EQ(placement(find(r, "urgent")), "n1");
  ASSERT_EQ(r.victims.size(), 1u);
  EXPECT_EQ(r.victims[0].preemptor, "default/urgent");
  const PodResult& again = find(r, "victim", "preempted");
  EXPECT_FALSE(again.node.has_value());
  // n2 is too small for it whatever is evicted there: preemption cannot help on it.
  EXPECT_EQ(again.reason,
            "0/2 nodes are available: 2 Insufficient cpu, 2 Insufficient memory. preemption: 0/2 "
            "nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption "
            "is not helpful for scheduling.");
  EXPECT_EQ(bindings(sim), (std::map<std::string, std::string>{{"urgent", "n1"}, {"victim", ""}}));
}

TEST(SimulatorTest, PreemptedVictimIsOnlyDeletedWhenItDoesNotComeBack) {
  Simulator sim(preemptionCluster(1000), {.victimsBecomePending = false});
  const Result r = sim.schedule({podOf("urgent", 2000).priority(1000).ptr()});
  EXPECT_EQ(placement(find(r, "urgent")), "n1");
  ASSERT_EQ(r.victims.size(), 1u);
  EXPECT_EQ(r.pods.size(), 1u);
  EXPECT_EQ(bindings(sim), (std::map<std::string, std::string>{{"urgent", "n1"}}));
}

TEST(SimulatorTest, WithoutPreemptionThePodStaysUnschedulable) {
  Simulator sim(preemptionCluster(1000), {.preemption = false});
  const Result r = sim.schedule({podOf("urgent", 2000).priority(1000).ptr()});
  const PodResult& urgent = find(r, "urgent");
  EXPECT_FALSE(urgent.node.has_value());
  EXPECT_EQ(urgent.reason, "0/2 nodes are available: 2 Insufficient cpu, 2 Insufficient memory.");
  EXPECT_THAT(r.victims, IsEmpty());
  EXPECT_EQ(bindings(sim)["victim"], "n1");
}

TEST(SimulatorTest, PreemptPreemptsWhateverTheOptionsSay) {
  Simulator sim(preemptionCluster(1000), {.preemption = false});
  const Result p = sim.preempt(podOf("urgent2", 2000).priority(1000).obj());
  EXPECT_EQ(placement(find(p, "urgent2")), "n1");
  ASSERT_EQ(p.victims.size(), 1u);
  EXPECT_EQ(p.victims[0].name, "victim");
  EXPECT_EQ(p.victims[0].preemptor, "default/urgent2");
}

// ---- a drain, with the library alone ----

TEST(SimulatorTest, DrainedPodsLandElsewhereOrSayWhy) {
  Cluster c;
  c.nodes = {node("n1", 4), node("n2", 4), node("n3", 4)};
  c.pods = {boundPod("a", 2000, "n1"), boundPod("b", 2000, "n1"), boundPod("c", 2000, "n2"),
            boundPod("d", 4000, "n3")};

  // Cordon n1 and take its pods back as work.
  Cluster drained = c;
  std::vector<PodPtr> work;
  for (NodePtr& n : drained.nodes) {
    if (n->metadata.name != "n1") continue;
    auto cordoned = std::make_shared<api::Node>(*n);
    cordoned->spec.unschedulable = true;
    n = cordoned;
  }
  std::erase_if(drained.pods, [&](const PodPtr& p) {
    if (p->spec.nodeName != "n1") return false;
    work.push_back(p);
    return true;
  });
  Simulator sim(drained);
  const Result r = sim.schedule(work, "drained");
  ASSERT_EQ(r.pods.size(), 2u);
  const PodResult& a = find(r, "a", "drained");
  const PodResult& b = find(r, "b", "drained");
  EXPECT_EQ(placement(a), "n2");
  EXPECT_FALSE(b.node.has_value());
  EXPECT_EQ(b.reason,
            "0/3 nodes are available: 1 node(s) were unschedulable, 2 Insufficient cpu, 2 "
            "Insufficient memory. preemption: 0/3 nodes are available: 1 Preemption is not helpful "
            "for scheduling, 2 No preemption victims found for incoming pod.");
  EXPECT_EQ(bindings(sim),
            (std::map<std::string, std::string>{{"a", "n2"}, {"b", ""}, {"c", "n2"}, {"d", "n3"}}));
}

// ---- transactions ----

TEST(SimulatorTest, RevertRestoresTheCluster) {
  Cluster c;
  c.nodes = {node("n1", 4)};
  c.pods = {pod("waiting", 1000)};
  Simulator sim(c);
  sim.begin();
  const Result r = sim.schedule({pod("new", 1000)});
  EXPECT_EQ(r.scheduled, 2u);
  EXPECT_EQ(bindings(sim), (std::map<std::string, std::string>{{"waiting", "n1"}, {"new", "n1"}}));
  sim.revert();
  EXPECT_EQ(bindings(sim), (std::map<std::string, std::string>{{"waiting", ""}}));
  // After the revert, the room is there again.
  EXPECT_EQ(sim.capacity(*pod("x", 1000)).fits, 4);
}

TEST(SimulatorTest, CommitKeepsAndTransactionsNest) {
  Cluster c;
  c.nodes = {node("n1", 4)};
  Simulator sim(c);
  sim.begin();
  (void)sim.schedule({pod("kept", 1000)});
  sim.begin();
  (void)sim.schedule({pod("dropped", 1000)});
  sim.revert();
  sim.commit();
  EXPECT_EQ(bindings(sim), (std::map<std::string, std::string>{{"kept", "n1"}}));
  EXPECT_THROW(sim.revert(), std::logic_error);
  EXPECT_THROW(sim.commit(), std::logic_error);
  EXPECT_EQ(bindings(sim), (std::map<std::string, std::string>{{"kept", "n1"}}));
}

TEST(SimulatorTest, ForkLeavesTheOriginalAlone) {
  Cluster c;
  c.nodes = {node("n1", 4)};
  Simulator sim(c);
  (void)sim.schedule({pod("before", 1000)});
  Simulator copy = sim.fork();
  const Result r = copy.schedule({pod("in-copy", 3000)});
  EXPECT_EQ(placement(find(r, "in-copy")), "n1");
  EXPECT_EQ(bindings(copy),
            (std::map<std::string, std::string>{{"before", "n1"}, {"in-copy", "n1"}}));
  EXPECT_EQ(bindings(sim), (std::map<std::string, std::string>{{"before", "n1"}}));
  EXPECT_EQ(sim.capacity(*pod("x", 1000)).fits, 3);
  EXPECT_EQ(copy.capacity(*pod("x", 1000)).fits, 0);
}

// ---- canSchedule ----

TEST(SimulatorTest, CanScheduleChangesNothing) {
  Cluster c;
  c.nodes = {node("n1", 2)};
  c.pods = {boundPod("a", 1000, "n1")};
  Simulator sim(c);
  const PodResult fits = sim.canSchedule(*pod("small", 1000));
  EXPECT_EQ(placement(fits), "n1");
  EXPECT_EQ(fits.name, "small");
  const PodResult big = sim.canSchedule(*pod("big", 2000));
  EXPECT_FALSE(big.node.has_value());
  EXPECT_EQ(big.reason, "0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient memory.");
  EXPECT_THAT(big.diagnosis, HasSubstr("NodeResourcesFit"));
  EXPECT_EQ(bindings(sim), (std::map<std::string, std::string>{{"a", "n1"}}));
  // Asked twice, the same answer: the first did not take the room.
  EXPECT_EQ(placement(sim.canSchedule(*pod("small", 1000))), "n1");
}

TEST(SimulatorTest, CanScheduleDoesNotPreempt) {
  Simulator sim(preemptionCluster(1000));
  const PodResult r = sim.canSchedule(podOf("urgent", 2000).priority(1000).obj());
  EXPECT_FALSE(r.node.has_value());
  EXPECT_EQ(r.reason, "0/2 nodes are available: 2 Insufficient cpu, 2 Insufficient memory.");
  EXPECT_EQ(bindings(sim)["victim"], "n1");
}

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
  EXPECT_THAT(gated.reason, ::testing::StartsWith("not attempted"));
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
