// The Simulator (ksched/sim.h) with the default profile: capacity, placement, seeds, preemption,
// a drain, transactions, canSchedule.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <ksched/sim.h>
#include <ksched/testing/fakes.h>

#include "tests/support/sim_test_util.h"

namespace ksched::sim {
namespace {

using ksched::testing::PodWrapper;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::UnorderedElementsAre;
using testutil::bindings;
using testutil::boundPod;
using testutil::find;
using testutil::node;
using testutil::nodeMilli;
using testutil::placement;
using testutil::placements;
using testutil::pod;
using testutil::podOf;

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

TEST(SimulatorTest, PodsHandedOverAreLetGoOnceTheRunHoldsItsCopy) {
  Cluster c;
  c.nodes = {node("small", 2), node("large", 16)};
  Simulator sim(c);
  std::vector<PodPtr> batch = {pod("p1", 1000), pod("p2", 1000)};
  const std::weak_ptr<const api::Pod> first = batch.front();
  const Result r = sim.schedule(std::move(batch), "handed");
  EXPECT_TRUE(first.expired()) << "the simulator kept the pod it was handed";
  EXPECT_THAT(placements(r), ElementsAre("p1@large", "p2@large"));
  EXPECT_EQ(r.pods.at(0).origin, "handed");
  // Given by reference, the caller's pods stay the caller's.
  const std::vector<PodPtr> kept = {pod("p3", 1000)};
  (void)sim.schedule(kept);
  EXPECT_EQ(kept.front().use_count(), 1);
  EXPECT_EQ(bindings(sim).at("p3"), "large");
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
  EXPECT_THAT(first.tiedWith, Not(Contains(*first.node)));
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

TEST(SimulatorTest, ACordonedNodeTakesNoPodAndKeepsItsOwnUntilUncordoned) {
  Cluster c;
  c.nodes = {node("n1", 4), node("n2", 4)};
  c.pods = {boundPod("a", 1000, "n1")};
  Simulator sim(c);
  sim.cordon("n1");
  EXPECT_EQ(bindings(sim).at("a"), "n1");
  EXPECT_EQ(sim.capacity(PodWrapper("web").req({{"cpu", "1"}}).obj()).fits, 4);
  sim.cordon("n1", false);
  EXPECT_EQ(sim.capacity(PodWrapper("web").req({{"cpu", "1"}}).obj()).fits, 7);
  EXPECT_THROW(sim.cordon("nope"), std::invalid_argument);
}

TEST(SimulatorTest, AnEvictedPodComesBackPendingAndFreesItsRoom) {
  Cluster c;
  c.nodes = {node("n1", 2)};
  c.pods = {boundPod("a", 2000, "n1"), pod("waiting", 100)};
  Simulator sim(c);
  const PodPtr back = sim.evict("default", "a");
  EXPECT_EQ(back->spec.nodeName, "");
  EXPECT_EQ(back->status.phase, "Pending");
  EXPECT_FALSE(bindings(sim).contains("a"));
  EXPECT_EQ(sim.capacity(PodWrapper("web").req({{"cpu", "1"}}).obj()).fits, 2);
  EXPECT_THROW((void)sim.evict("default", "waiting"), std::invalid_argument);
  EXPECT_THROW((void)sim.evict("default", "a"), std::invalid_argument);
}

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

}  // namespace
}  // namespace ksched::sim
