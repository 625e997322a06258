// Scheduler preemption for in-place resize (KEP 5836) through SchedulerCore's seam: upstream's
// TestDeferredResizeQueueingHandlers (the feed queues an assigned pod whose resize the kubelet
// deferred, updates it, takes it out when the condition clears or the pod goes) and the end of
// its cycle (it makes room on its node by preemption, or parks; never a binding, a nomination, a
// FailedScheduling event or a status patch of its own).
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <ksched/testing/fakes.h>

#include "config/profile.h"
#include "plugins/registry.h"
#include "scheduler/scheduler_core.h"
#include "tests/support/scheduler_core_test_util.h"

namespace ksched::scheduler {
namespace {

using namespace std::chrono_literals;
using ksched::testing::FakeClusterApi;
using ksched::testing::NodeWrapper;
using ksched::testing::PodWrapper;
using queue::SchedulingQueue;
using schedulertest::callsOf;
using schedulertest::eventually;
using schedulertest::RecordingSink;

struct Core {
  explicit Core(bool gate = true) {
    Options o;
    o.features.force(features::Feature::kInPlacePodVerticalScalingSchedulerPreemption, gate);
    o.profiles = {config::defaultProfile(o.features)};
    o.binderThreads = 2;
    o.parallelism = 2;
    o.queue.podInitialBackoff = 60s;
    o.queue.podMaxBackoff = 60s;
    Environment env;
    env.api = &api;
    env.events = &events;
    core = std::make_unique<SchedulerCore>(std::move(env), plugins::inTreeRegistry(), std::move(o));
    core->onNodeAdd(
        NodeWrapper("n1").capacity({{"cpu", "300m"}, {"memory", "1Gi"}, {"pods", "10"}}).ptr());
  }
  ~Core() { core->stop(); }

  [[nodiscard]] std::vector<std::string> queued(SchedulingQueue::QueueKind kind) const {
    return core->queue().pendingPodKeysForTest(kind);
  }

  FakeClusterApi api;
  RecordingSink events;
  std::unique_ptr<SchedulerCore> core;
};

// Runs on n1 with 100m allocated and wants 300m.
PodWrapper grower(bool deferred = true, int32_t priority = 1000) {
  auto p = PodWrapper("grower")
               .uid("grower-uid")
               .nodeName("n1")
               .priority(priority)
               .req({{"cpu", "300m"}})
               .allocated({{"cpu", "100m"}});
  if (deferred) p.condition("PodResizePending", "True", "Deferred");
  return p;
}

PodPtr victim() {
  return PodWrapper("victim")
      .uid("victim-uid")
      .nodeName("n1")
      .priority(0)
      .req({{"cpu", "200m"}})
      .ptr();
}

using QueueKind = SchedulingQueue::QueueKind;

TEST(ResizePreemptionFeed, AssignedDeferredPodIsQueuedOnAdd) {
  Core c;
  c.core->onPodAdd(grower().ptr());
  EXPECT_EQ(c.queued(QueueKind::kActive), std::vector<std::string>{"default/grower"});
  EXPECT_NE(c.core->cache().nodeInfo("n1"), nullptr);
  EXPECT_EQ(c.core->cache().nodeInfo("n1")->pods().size(), size_t{1}) << "and counted on its node";
}

TEST(ResizePreemptionFeed, NotQueuedWithTheGateOffOrWithoutADeferral) {
  Core off(false);
  off.core->onPodAdd(grower().ptr());
  EXPECT_TRUE(off.queued(QueueKind::kActive).empty());
  Core on;
  on.core->onPodAdd(grower(false).ptr());
  on.core->onPodAdd(PodWrapper("infeasible")
                        .nodeName("n1")
                        .condition("PodResizePending", "True", "Infeasible")
                        .ptr());
  EXPECT_TRUE(on.queued(QueueKind::kActive).empty());
}

TEST(ResizePreemptionFeed, UpdatesMoveThePodInAndOut) {
  Core c;
  const PodPtr running = grower(false).ptr();
  const PodPtr deferred = grower().ptr();
  c.core->onPodAdd(running);
  c.core->onPodUpdate(running, deferred);
  EXPECT_EQ(c.queued(QueueKind::kActive), std::vector<std::string>{"default/grower"})
      << "the update that defers the resize queues it";
  const PodPtr stillDeferred = grower().label("k", "v").ptr();
  c.core->onPodUpdate(deferred, stillDeferred);
  EXPECT_EQ(c.queued(QueueKind::kActive), std::vector<std::string>{"default/grower"});
  EXPECT_EQ(c.core->queue().pendingPods().at(0)->metadata.labels.at("k"), "v")
      << "updated in place";
  const PodPtr actuated = grower(false).label("k", "v").ptr();
  c.core->onPodUpdate(stillDeferred, actuated);
  EXPECT_TRUE(c.queued(QueueKind::kActive).empty()) << "the condition cleared: out of the queue";
  c.core->onPodUpdate(actuated, stillDeferred);
  c.core->onPodDelete(stillDeferred);
  EXPECT_TRUE(c.queued(QueueKind::kActive).empty()) << "deleted: out of the queue";
  EXPECT_TRUE(c.core->cache().nodeInfo("n1")->pods().empty()) << "and out of the cache";
}

// Over-allocated (300m of 300m for the grower at its new size, 200m for the victim): the victim
// goes, nothing is bound, and the grower hears nothing of it; then it fits and parks.
TEST(ResizePreemptionCycle, MakesRoomOnItsNodeThenParksQuietly) {
  Core c;
  const PodPtr v = victim();
  c.core->onPodAdd(v);
  c.core->onPodAdd(grower().ptr());
  c.core->startScheduling();
  ASSERT_TRUE(eventually([&] { return !callsOf(c.api, "delete").empty(); }));
  EXPECT_EQ(callsOf(c.api, "delete")[0].target, "default/victim");
  c.core->onPodDelete(v);  // the feed sees it go: the grower's node has room
  ASSERT_TRUE(eventually([&] { return c.core->stats().attempts >= 2; }));
  ASSERT_TRUE(eventually([&] {
    return c.queued(QueueKind::kUnschedulable) == std::vector<std::string>{"default/grower"};
  })) << "parked, waiting for the kubelet";
  std::this_thread::sleep_for(100ms);
  EXPECT_TRUE(callsOf(c.api, "bind").empty());
  for (const auto& call : callsOf(c.api, "patchStatus")) {
    EXPECT_NE(call.target, "default/grower") << call.body.dump();
  }
  EXPECT_TRUE(c.events.withReason("FailedScheduling").empty());
  EXPECT_EQ(c.events.withReason("Preempted").size(), size_t{1});
  EXPECT_TRUE(c.core->queue().nominatedPodsForNode("n1").empty());
}

// A pod of the same priority is no victim: the grower stays queued, and nothing is deleted.
TEST(ResizePreemptionCycle, NoVictimOfItsOwnPriority) {
  Core c;
  c.core->onPodAdd(PodWrapper("peer").nodeName("n1").priority(1000).req({{"cpu", "200m"}}).ptr());
  c.core->onPodAdd(grower().ptr());
  c.core->startScheduling();
  ASSERT_TRUE(eventually([&] {
    return c.queued(QueueKind::kUnschedulable) == std::vector<std::string>{"default/grower"};
  }));
  EXPECT_TRUE(callsOf(c.api, "delete").empty());
  EXPECT_TRUE(callsOf(c.api, "patchStatus").empty());
  EXPECT_TRUE(c.events.withReason("FailedScheduling").empty());
}

}  // namespace
}  // namespace ksched::scheduler
