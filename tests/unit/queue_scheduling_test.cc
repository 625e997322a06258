#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "queue/scheduling_queue.h"

namespace ksched::queue {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Kind = SchedulingQueue::QueueKind;
using Keys = std::vector<std::string>;

constexpr char kGatePlugin[] = "SchedulingGates";
constexpr char kFit[] = "NodeResourcesFit";
constexpr char kTaints[] = "TaintToleration";

class FakeClock {
 public:
  [[nodiscard]] std::chrono::steady_clock::time_point now() const {
    return std::chrono::steady_clock::time_point{} + std::chrono::hours(1) +
           milliseconds(ms_.load());
  }
  void advance(milliseconds d) { ms_ += d.count(); }

 private:
  std::atomic<int64_t> ms_{0};
};

PodPtr makePod(const std::string& name, int32_t priority = 0, std::vector<std::string> gates = {}) {
  auto p = std::make_shared<api::Pod>();
  p->metadata.name = name;
  p->metadata.namespace_ = "ns";
  p->metadata.uid = "uid-" + name;
  p->metadata.resourceVersion = "1";
  p->spec.priority = priority;
  p->spec.schedulingGates = std::move(gates);
  return p;
}

PodPtr withLabel(const PodPtr& pod, const std::string& k, const std::string& v) {
  auto p = std::make_shared<api::Pod>(*pod);
  p->metadata.labels[k] = v;
  p->metadata.resourceVersion += "1";
  return p;
}

Status gatesPreEnqueue(const api::Pod& pod) {
  if (pod.spec.schedulingGates.empty()) return {};
  return Status::unresolvable("waiting for scheduling gates").withPlugin(kGatePlugin);
}

class SchedulingQueueTest : public ::testing::Test {
 protected:
  std::unique_ptr<SchedulingQueue> makeQueue(
      std::map<std::string, std::vector<ClusterEvent>> pluginEvents = {}, Options opts = {}) {
    opts.clock = [this] { return clock_.now(); };
    opts.onIncoming = [this](std::string_view q, std::string_view ev) {
      std::lock_guard lock(incomingMu_);
      ++incoming_[std::string(q) + "/" + std::string(ev)];
    };
    return std::make_unique<SchedulingQueue>(std::move(opts), nullptr, gatesPreEnqueue,
                                             std::move(pluginEvents));
  }

  // Pops `name` (must be next) and hands it back as rejected by `plugins` in its cycle.
  static void popAndFail(SchedulingQueue& q, const std::string& name,
                         std::set<std::string, std::less<>> plugins, bool moveDuringCycle = false) {
    auto info = q.popFor({}, milliseconds(0));
    ASSERT_NE(info, nullptr);
    ASSERT_EQ(info->pod().metadata.name, name);
    const int64_t cycle = q.schedulingCycle();
    if (moveDuringCycle) q.moveAllToActiveOrBackoffQueue(events::kNodeAdd);
    info->unschedulablePlugins = std::move(plugins);
    ASSERT_TRUE(q.addUnschedulableIfNotPresent(std::move(info), cycle));
  }

  static Keys keys(const SchedulingQueue& q, Kind k) { return q.pendingPodKeysForTest(k); }

  int incoming(const std::string& key) {
    std::lock_guard lock(incomingMu_);
    auto it = incoming_.find(key);
    return it == incoming_.end() ? 0 : it->second;
  }

  FakeClock clock_;
  std::mutex incomingMu_;
  std::map<std::string, int> incoming_;
};

TEST_F(SchedulingQueueTest, PopOrdersByPriorityThenTimestamp) {
  auto q = makeQueue();
  const std::vector<std::pair<std::string, int32_t>> adds = {
      {"low", 0}, {"high", 10}, {"mid", 5}, {"high2", 10}, {"low2", 0}};
  for (const auto& [name, prio] : adds) {
    q->add(makePod(name, prio));
    clock_.advance(milliseconds(1));
  }
  EXPECT_EQ(keys(*q, Kind::kActive), (Keys{"ns/high", "ns/high2", "ns/mid", "ns/low", "ns/low2"}));
  std::vector<std::string> popped;
  while (auto info = q->popFor({}, milliseconds(0))) {
    popped.push_back(info->pod().metadata.name);
    EXPECT_EQ(info->attempts, 1);
  }
  EXPECT_EQ(popped, (Keys{"high", "high2", "mid", "low", "low2"}));
  EXPECT_EQ(q->schedulingCycle(), 5);
}

TEST(QueueBackoffTest, DurationDoublesAndCaps) {
  const struct {
    int attempts;
    milliseconds want;
  } cases[] = {{0, seconds(1)}, {1, seconds(1)},  {2, seconds(2)},  {3, seconds(4)},
               {4, seconds(8)}, {5, seconds(10)}, {6, seconds(10)}, {60, seconds(10)}};
  for (const auto& c : cases) {
    EXPECT_EQ(backoffDuration(c.attempts, seconds(1), seconds(10)), c.want) << c.attempts;
  }
  EXPECT_EQ(backoffDuration(3, milliseconds(0), seconds(10)), milliseconds(0));
}

TEST_F(SchedulingQueueTest, BackoffIsMeasuredFromTheLastFailure) {
  const struct {
    int attempts;
    milliseconds backoff;
  } cases[] = {{1, seconds(1)}, {2, seconds(2)},  {3, seconds(4)},
               {4, seconds(8)}, {5, seconds(10)}, {6, seconds(10)}};
  for (const auto& c : cases) {
    auto q = makeQueue();
    q->add(makePod("p"));
    auto info = q->popFor({}, milliseconds(0));
    ASSERT_NE(info, nullptr);
    info->attempts = c.attempts;
    clock_.advance(seconds(3));  // the failure is what counts, not the add
    ASSERT_TRUE(q->addUnschedulableIfNotPresent(std::move(info), q->schedulingCycle()));
    EXPECT_EQ(keys(*q, Kind::kBackoff), Keys{"ns/p"}) << c.attempts;  // error: no plugins
    clock_.advance(c.backoff - milliseconds(1));
    q->flushBackoffQCompleted();
    EXPECT_EQ(q->counts().backoff, 1u) << c.attempts;
    clock_.advance(milliseconds(1));
    q->flushBackoffQCompleted();
    EXPECT_EQ(keys(*q, Kind::kActive), Keys{"ns/p"}) << c.attempts;
  }
  EXPECT_EQ(incoming("backoff/ScheduleAttemptFailure"), 6);
  EXPECT_EQ(incoming("active/BackoffComplete"), 6);
}

TEST_F(SchedulingQueueTest, BackoffQueueOrderedByExpiry) {
  auto q = makeQueue();
  for (const char* name : {"a", "b"}) q->add(makePod(name));
  auto a = q->popFor({}, milliseconds(0));
  auto b = q->popFor({}, milliseconds(0));
  a->attempts = 4;  // 8s
  b->attempts = 1;  // 1s
  ASSERT_TRUE(q->addUnschedulableIfNotPresent(std::move(a), q->schedulingCycle()));
  ASSERT_TRUE(q->addUnschedulableIfNotPresent(std::move(b), q->schedulingCycle()));
  EXPECT_EQ(keys(*q, Kind::kBackoff), (Keys{"ns/b", "ns/a"}));
  clock_.advance(seconds(1));
  q->flushBackoffQCompleted();
  EXPECT_EQ(keys(*q, Kind::kActive), Keys{"ns/b"});
  EXPECT_EQ(keys(*q, Kind::kBackoff), Keys{"ns/a"});
}

TEST_F(SchedulingQueueTest, EventsMoveOnlyInterestedUnschedulablePods) {
  const ClusterEvent taintUpdate{EventResource::kNode, kUpdateNodeTaint, "NodeTaintChange"};
  auto q =
      makeQueue({{kFit, {events::kNodeAdd, events::kAssignedPodDelete}}, {kTaints, {taintUpdate}}});
  for (const char* name : {"fit", "taint", "other"}) {  // "other": a plugin without events
    q->add(makePod(name));
    clock_.advance(milliseconds(1));
  }
  popAndFail(*q, "fit", {kFit});
  popAndFail(*q, "taint", {kTaints});
  popAndFail(*q, "other", {"Custom"});
  EXPECT_EQ(keys(*q, Kind::kUnschedulable), (Keys{"ns/fit", "ns/other", "ns/taint"}));
  EXPECT_EQ(incoming("unschedulable/ScheduleAttemptFailure"), 3);

  // Uninterested for "fit" and "taint"; "other" is interested in everything. Still backing off.
  q->moveAllToActiveOrBackoffQueue(events::kAssignedPodAdd);
  EXPECT_EQ(keys(*q, Kind::kUnschedulable), (Keys{"ns/fit", "ns/taint"}));
  EXPECT_EQ(keys(*q, Kind::kBackoff), Keys{"ns/other"});
  EXPECT_EQ(incoming("backoff/AssignedPodAdd"), 1);

  // Interested for "fit", backing off -> backoffQ.
  clock_.advance(milliseconds(500));
  q->moveAllToActiveOrBackoffQueue(events::kNodeAdd);
  EXPECT_EQ(keys(*q, Kind::kUnschedulable), Keys{"ns/taint"});
  EXPECT_EQ(keys(*q, Kind::kBackoff), (Keys{"ns/other", "ns/fit"}));

  // Interested for "taint", backoff over -> activeQ.
  clock_.advance(seconds(1));
  q->moveAllToActiveOrBackoffQueue(taintUpdate);
  EXPECT_EQ(keys(*q, Kind::kUnschedulable), Keys{});
  EXPECT_EQ(keys(*q, Kind::kActive), Keys{"ns/taint"});
  EXPECT_EQ(incoming("active/NodeTaintChange"), 1);
  EXPECT_EQ(q->moveRequestCycleForTest(), 3);
}

TEST_F(SchedulingQueueTest, MoveRequestDuringTheCycleSendsTheFailedPodToBackoff) {
  const struct {
    const char* name;
    bool moveDuringCycle;
    bool moveBeforeCycle;
    Kind want;
  } cases[] = {
      {"no move request", false, false, Kind::kUnschedulable},
      {"move request during the cycle", true, false, Kind::kBackoff},
      {"move request before the cycle", false, true, Kind::kUnschedulable},
  };
  for (const auto& c : cases) {
    auto q = makeQueue({{kFit, {events::kNodeAdd}}});
    q->add(makePod("p"));
    if (c.moveBeforeCycle) q->moveAllToActiveOrBackoffQueue(events::kNodeAdd);
    popAndFail(*q, "p", {kFit}, c.moveDuringCycle);
    EXPECT_EQ(keys(*q, c.want), Keys{"ns/p"}) << c.name;
  }
}

TEST_F(SchedulingQueueTest, ErrorsGoToBackoff) {
  auto q = makeQueue();
  q->add(makePod("p"));
  popAndFail(*q, "p", {});
  EXPECT_EQ(keys(*q, Kind::kBackoff), Keys{"ns/p"});
}

TEST_F(SchedulingQueueTest, UnschedulableLeftoverFlushAfterMaxDuration) {
  auto q = makeQueue({{kFit, {events::kNodeAdd}}});
  q->add(makePod("p"));
  popAndFail(*q, "p", {kFit});
  clock_.advance(std::chrono::minutes(5));
  q->flushUnschedulablePodsLeftover();
  EXPECT_EQ(keys(*q, Kind::kUnschedulable), Keys{"ns/p"});
  clock_.advance(milliseconds(1));
  q->flushUnschedulablePodsLeftover();
  EXPECT_EQ(keys(*q, Kind::kActive), Keys{"ns/p"});
  EXPECT_EQ(incoming("active/UnschedulableTimeout"), 1);
}

TEST_F(SchedulingQueueTest, GatedPodsWaitUntilAnUpdateRemovesTheGates) {
  auto q = makeQueue();
  auto gated = makePod("g", 0, {"example.com/gate"});
  q->add(gated);
  EXPECT_EQ(keys(*q, Kind::kGated), Keys{"ns/g"});
  EXPECT_EQ(q->counts().active, 0u);
  EXPECT_EQ(incoming("gated/PodAdd"), 1);

  // Events, timeouts and backoff flushes leave gated pods alone.
  q->moveAllToActiveOrBackoffQueue(events::kNodeAdd);
  clock_.advance(std::chrono::minutes(10));
  q->flushUnschedulablePodsLeftover();
  q->flushBackoffQCompleted();
  EXPECT_EQ(keys(*q, Kind::kGated), Keys{"ns/g"});

  // An update that keeps the gates: still gated, not counted again.
  auto relabeled = withLabel(gated, "a", "b");
  q->update(gated, relabeled);
  EXPECT_EQ(keys(*q, Kind::kGated), Keys{"ns/g"});
  EXPECT_EQ(incoming("gated/PodUpdate"), 0);

  auto ungated = std::make_shared<api::Pod>(*relabeled);
  ungated->spec.schedulingGates.clear();
  q->update(relabeled, ungated);
  EXPECT_EQ(keys(*q, Kind::kActive), Keys{"ns/g"});
  EXPECT_EQ(q->counts().gated, 0u);
  EXPECT_EQ(incoming("active/PodUpdate"), 1);
  auto info = q->popFor({}, milliseconds(0));
  ASSERT_NE(info, nullptr);
  EXPECT_TRUE(info->gatingPlugin.empty());
  EXPECT_EQ(info->initialAttemptTimestamp, clock_.now());  // the gated time does not count
}

TEST_F(SchedulingQueueTest, GatedPodsAreRecheckedOnEventsTheirGateRegistered) {
  const ClusterEvent claimAdd{EventResource::kPersistentVolumeClaim, kAdd, "PvcAdd"};
  bool admit = false;
  auto q = std::make_unique<SchedulingQueue>(
      Options{.clock = [this] { return clock_.now(); }}, nullptr,
      [&](const api::Pod&) {
        return admit ? Status{} : Status::unschedulable("no").withPlugin("Claims");
      },
      std::map<std::string, std::vector<ClusterEvent>>{{"Claims", {claimAdd}}});
  q->add(makePod("g"));
  EXPECT_EQ(keys(*q, Kind::kGated), Keys{"ns/g"});
  q->moveAllToActiveOrBackoffQueue(claimAdd);
  EXPECT_EQ(keys(*q, Kind::kGated), Keys{"ns/g"});
  admit = true;
  q->moveAllToActiveOrBackoffQueue(events::kNodeAdd);  // not registered by the gate
  EXPECT_EQ(keys(*q, Kind::kGated), Keys{"ns/g"});
  q->moveAllToActiveOrBackoffQueue(claimAdd);
  EXPECT_EQ(keys(*q, Kind::kActive), Keys{"ns/g"});
}

TEST_F(SchedulingQueueTest, UpdateInActiveQueueReordersInPlace) {
  auto q = makeQueue();
  auto a = makePod("a", 1);
  q->add(a);
  q->add(makePod("b", 5));
  auto a2 = std::make_shared<api::Pod>(*a);
  a2->spec.priority = 10;
  q->update(a, a2);
  EXPECT_EQ(keys(*q, Kind::kActive), (Keys{"ns/a", "ns/b"}));
  auto info = q->popFor({}, milliseconds(0));
  EXPECT_EQ(info->podInfo->pod, a2);
}

TEST_F(SchedulingQueueTest, UpdateInBackoffQueueKeepsTheBackoff) {
  auto q = makeQueue();
  auto p = makePod("p");
  q->add(p);
  popAndFail(*q, "p", {});
  auto p2 = withLabel(p, "x", "y");
  q->update(p, p2);
  EXPECT_EQ(keys(*q, Kind::kBackoff), Keys{"ns/p"});
  clock_.advance(seconds(1));
  q->flushBackoffQCompleted();
  auto info = q->popFor({}, milliseconds(0));
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->podInfo->pod, p2);
  EXPECT_EQ(info->attempts, 2);
}

TEST_F(SchedulingQueueTest, UpdateInUnschedulablePods) {
  const struct {
    const char* name;
    bool statusOnly;
    milliseconds elapsed;
    Kind want;
  } cases[] = {
      {"status-only update stays", true, seconds(5), Kind::kUnschedulable},
      {"spec update while backing off", false, milliseconds(100), Kind::kBackoff},
      {"spec update after backoff", false, seconds(2), Kind::kActive},
  };
  for (const auto& c : cases) {
    auto q = makeQueue({{kFit, {events::kNodeAdd}}});
    auto p = makePod("p");
    q->add(p);
    popAndFail(*q, "p", {kFit});
    clock_.advance(c.elapsed);
    auto p2 = std::make_shared<api::Pod>(*p);
    p2->metadata.resourceVersion = "2";
    if (c.statusOnly) {
      p2->status.conditions.push_back({.type = "PodScheduled", .status = "False"});
    } else {
      p2->spec.tolerations.push_back({.key = "k", .operator_ = "Exists"});
    }
    q->update(p, p2);
    EXPECT_EQ(keys(*q, c.want), Keys{"ns/p"}) << c.name;
    EXPECT_EQ(q->pendingPods().at(0), p2) << c.name;
  }
}

TEST_F(SchedulingQueueTest, UpdateOfAnUnknownOrInFlightPodAddsIt) {
  auto q = makeQueue();
  auto p = makePod("p");
  q->add(p);
  auto inFlight = q->popFor({}, milliseconds(0));
  const int64_t cycle = q->schedulingCycle();
  q->update(p, withLabel(p, "a", "b"));
  EXPECT_EQ(keys(*q, Kind::kActive), Keys{"ns/p"});
  EXPECT_EQ(incoming("active/PodUpdate"), 1);
  inFlight->unschedulablePlugins = {kFit};
  EXPECT_FALSE(q->addUnschedulableIfNotPresent(std::move(inFlight), cycle));
  EXPECT_EQ(q->counts().unschedulable, 0u);
}

TEST_F(SchedulingQueueTest, AddReplacesAnExistingEntry) {
  auto q = makeQueue();
  auto p = makePod("p");
  q->add(p);
  popAndFail(*q, "p", {kFit});
  q->add(p);
  const auto c = q->counts();
  EXPECT_EQ(c.active, 1u);
  EXPECT_EQ(c.unschedulable, 0u);
  EXPECT_EQ(q->popFor({}, milliseconds(0))->attempts, 1);
}

TEST_F(SchedulingQueueTest, RemoveFromEveryQueue) {
  auto q = makeQueue();
  auto active = makePod("active");
  auto backoff = makePod("backoff");
  auto unsched = makePod("unsched");
  auto gated = makePod("gated", 0, {"gate"});
  q->add(backoff);
  popAndFail(*q, "backoff", {});
  q->add(unsched);
  popAndFail(*q, "unsched", {kFit});
  q->add(active);
  q->add(gated);
  q->addNominatedPod(std::make_shared<PodInfo>(active), "node-1");
  auto c = q->counts();
  EXPECT_EQ(c.active + c.backoff + c.unschedulable + c.gated, 4u);
  for (const auto& p : {active, backoff, unsched, gated}) q->remove(*p);
  c = q->counts();
  EXPECT_EQ(c.active + c.backoff + c.unschedulable + c.gated, 0u);
  EXPECT_TRUE(q->nominatedPodsForNode("node-1").empty());
  EXPECT_TRUE(q->pendingPods().empty());
}

TEST_F(SchedulingQueueTest, ActivateMovesToActiveQueue) {
  auto q = makeQueue({{kFit, {events::kNodeAdd}}});
  auto p = makePod("p");
  q->add(p);
  popAndFail(*q, "p", {kFit});
  q->activate({p, makePod("unknown")});
  EXPECT_EQ(keys(*q, Kind::kActive), Keys{"ns/p"});
  EXPECT_EQ(incoming("active/ForceActivate"), 1);
}

TEST_F(SchedulingQueueTest, PopBlocksUntilAPodArrivesOrClose) {
  auto q = makeQueue();
  EXPECT_EQ(q->popFor({}, milliseconds(20)), nullptr);

  std::unique_ptr<QueuedPodInfo> got;
  {
    std::jthread popper([&](std::stop_token st) { got = q->pop(st); });
    q->add(makePod("p"));
  }
  ASSERT_NE(got, nullptr);
  EXPECT_EQ(got->pod().metadata.name, "p");

  {
    std::jthread popper([&](std::stop_token st) { got = q->pop(st); });
    // Destroying the jthread requests stop: pop returns nullptr.
  }
  EXPECT_EQ(got, nullptr);

  got = std::make_unique<QueuedPodInfo>();
  {
    std::jthread popper([&](std::stop_token st) { got = q->pop(st); });
    q->close();
    popper.join();
  }
  EXPECT_EQ(got, nullptr);
  q->add(makePod("late"));
  EXPECT_EQ(q->popFor({}, milliseconds(0)), nullptr);
}

TEST_F(SchedulingQueueTest, FlushThreadMovesExpiredBackoffs) {
  auto q = makeQueue({}, Options{.backoffFlushPeriod = milliseconds(2),
                                 .unschedulableFlushPeriod = milliseconds(2)});
  q->add(makePod("b"));
  clock_.advance(milliseconds(1));
  q->add(makePod("u"));
  popAndFail(*q, "b", {});
  popAndFail(*q, "u", {kFit});
  q->run();
  q->run();  // idempotent
  clock_.advance(std::chrono::minutes(6));
  auto first = q->popFor({}, seconds(10));
  auto second = q->popFor({}, seconds(10));
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  q->close();
  q->close();
}

TEST_F(SchedulingQueueTest, ConcurrentUseIsSafe) {
  auto q = makeQueue({}, Options{.backoffFlushPeriod = milliseconds(1),
                                 .unschedulableFlushPeriod = milliseconds(1)});
  q->run();
  constexpr int kPods = 200;
  std::jthread scheduler([&](std::stop_token st) {
    while (auto info = q->pop(st)) {
      const int64_t cycle = q->schedulingCycle();
      q->addNominatedPod(info->podInfo, "n");
      if (info->attempts < 2) {
        info->unschedulablePlugins = {kFit};
        q->addUnschedulableIfNotPresent(std::move(info), cycle);
      }
    }
  });
  std::jthread informer([&] {
    for (int i = 0; i < kPods; ++i) {
      auto p = makePod("p" + std::to_string(i), i % 7);
      q->add(p);
      if (i % 3 == 0) q->update(p, withLabel(p, "i", std::to_string(i)));
      if (i % 5 == 0) q->remove(*p);
    }
  });
  std::jthread events([&] {
    for (int i = 0; i < 50; ++i) {
      q->moveAllToActiveOrBackoffQueue(events::kNodeAdd);
      clock_.advance(seconds(1));
      (void)q->counts();
      (void)q->nominatedPodsForNode("n");
    }
  });
  informer.join();
  events.join();
  q->close();
  scheduler.join();
  // The point is the absence of races (run under TSan); the totals must still add up.
  const auto c = q->counts();
  EXPECT_LE(c.active + c.backoff + c.unschedulable + c.gated, static_cast<size_t>(kPods));
  EXPECT_EQ(c.gated, 0u);
}

}  // namespace
}  // namespace ksched::queue
