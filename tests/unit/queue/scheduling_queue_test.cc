#include "queue/scheduling_queue.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace ksched::queue {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Kind = SchedulingQueue::QueueKind;
using Keys = std::vector<std::string>;

constexpr char kGatePlugin[] = "SchedulingGates";
constexpr char kFit[] = "NodeResourcesFit";
constexpr char kTaints[] = "TaintToleration";
constexpr char kProfile[] = "default-scheduler";

using PluginEvents = std::map<std::string, std::vector<ClusterEventWithHint>, std::less<>>;
QueueingHintMap oneProfile(PluginEvents events) { return {{kProfile, std::move(events)}}; }

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
  p->spec.schedulerName = kProfile;
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
  std::unique_ptr<SchedulingQueue> makeQueue(PluginEvents pluginEvents = {}, Options opts = {}) {
    opts.clock = [this] { return clock_.now(); };
    opts.onIncoming = [this](std::string_view q, std::string_view ev) {
      std::lock_guard lock(incomingMu_);
      ++incoming_[std::string(q) + "/" + std::string(ev)];
    };
    return std::make_unique<SchedulingQueue>(std::move(opts), nullptr, gatesPreEnqueue,
                                             oneProfile(std::move(pluginEvents)));
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
  } cases[] = {{0, seconds(0)}, {1, seconds(1)},  {2, seconds(2)},  {3, seconds(4)},
               {4, seconds(8)}, {5, seconds(10)}, {6, seconds(10)}, {60, seconds(10)}};
  for (const auto& c : cases) {
    EXPECT_EQ(backoffDuration(c.attempts, seconds(1), seconds(10)), c.want) << c.attempts;
  }
  EXPECT_EQ(backoffDuration(3, milliseconds(0), seconds(10)), milliseconds(0));
}

TEST_F(SchedulingQueueTest, BackoffIsMeasuredFromTheLastFailure) {
  const struct {
    int errors;  // consecutive errors, this one included
    milliseconds backoff;
  } cases[] = {{1, seconds(1)}, {2, seconds(2)},  {3, seconds(4)},
               {4, seconds(8)}, {5, seconds(10)}, {6, seconds(10)}};
  for (const auto& c : cases) {
    auto q = makeQueue();
    q->add(makePod("p"));
    auto info = q->popFor({}, milliseconds(0));
    ASSERT_NE(info, nullptr);
    info->consecutiveErrors = c.errors - 1;
    info->unschedulableCount = 7;  // errors count while there are some
    clock_.advance(seconds(3));    // the failure is what counts, not the add
    ASSERT_TRUE(q->addUnschedulableIfNotPresent(std::move(info), q->schedulingCycle()));
    EXPECT_EQ(keys(*q, Kind::kBackoff), Keys{"ns/p"}) << c.errors;  // error: no plugins
    // A pod that failed with an error is not popped before its backoff ends.
    EXPECT_EQ(q->popFor({}, milliseconds(0)), nullptr);
    clock_.advance(c.backoff - milliseconds(1));
    q->flushBackoffQCompleted();
    EXPECT_EQ(q->counts().backoff, 1u) << c.errors;
    clock_.advance(milliseconds(1));
    q->flushBackoffQCompleted();
    EXPECT_EQ(keys(*q, Kind::kActive), Keys{"ns/p"}) << c.errors;
  }
  EXPECT_EQ(incoming("backoff/ScheduleAttemptFailure"), 6);
  EXPECT_EQ(incoming("active/BackoffComplete"), 6);
}

TEST_F(SchedulingQueueTest, BackoffQueueOrderedByExpiry) {
  auto q = makeQueue();
  for (const char* name : {"a", "b"}) q->add(makePod(name));
  auto a = q->popFor({}, milliseconds(0));
  auto b = q->popFor({}, milliseconds(0));
  a->consecutiveErrors = 3;  // 8s
  b->consecutiveErrors = 0;  // 1s
  ASSERT_TRUE(q->addUnschedulableIfNotPresent(std::move(a), q->schedulingCycle()));
  ASSERT_TRUE(q->addUnschedulableIfNotPresent(std::move(b), q->schedulingCycle()));
  EXPECT_EQ(keys(*q, Kind::kBackoff), (Keys{"ns/b", "ns/a"}));
  clock_.advance(seconds(1));
  q->flushBackoffQCompleted();
  EXPECT_EQ(keys(*q, Kind::kActive), Keys{"ns/b"});
  EXPECT_EQ(keys(*q, Kind::kBackoff), Keys{"ns/a"});
}

TEST_F(SchedulingQueueTest, EventsMoveOnlyInterestedUnschedulablePods) {
  const ClusterEvent taintUpdate{EventResource::kNode, kUpdateNodeTaint, {}};
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
  EXPECT_EQ(q->counts().inFlightPods, 0u);

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
  EXPECT_EQ(incoming("active/NodeUpdateNodeTaint"), 1);
}

TEST_F(SchedulingQueueTest, QueueingHintsDecideForEachPod) {
  // Fit's hint here: only a node named after the pod helps it; a node "boom" breaks the hint.
  auto hint = [](const api::Pod& pod, const EventObject& oldObj, const EventObject& newObj) {
    EXPECT_EQ(as<api::Node>(oldObj), nullptr);
    const api::Node* node = as<api::Node>(newObj);
    if (node == nullptr) throw std::runtime_error("not a node");
    if (node->metadata.name == "boom") throw std::runtime_error("boom");
    return node->metadata.name == pod.metadata.name ? QueueingHint::kQueue : QueueingHint::kSkip;
  };
  std::vector<std::string> hints;
  Options opts;
  opts.onHint = [&](std::string_view plugin, std::string_view event, std::string_view h, double) {
    hints.push_back(std::string(plugin) + "/" + std::string(event) + "/" + std::string(h));
  };
  auto q = makeQueue({{kFit, {ClusterEventWithHint(events::kNodeAdd, hint)}}}, opts);
  for (const char* name : {"a", "b", "c"}) {
    q->add(makePod(name));
    clock_.advance(milliseconds(1));
  }
  popAndFail(*q, "a", {kFit});
  popAndFail(*q, "b", {kFit});
  popAndFail(*q, "c", {kFit});
  clock_.advance(seconds(2));
  auto node = [](const std::string& name) {
    auto n = std::make_shared<api::Node>();
    n->metadata.name = name;
    return n;
  };
  q->moveAllToActiveOrBackoffQueue(events::kNodeAdd, {}, node("b"));
  EXPECT_EQ(keys(*q, Kind::kActive), Keys{"ns/b"});
  EXPECT_EQ(keys(*q, Kind::kUnschedulable), (Keys{"ns/a", "ns/c"}));
  EXPECT_EQ(incoming("active/NodeAdd"), 1);
  // A hint that throws counts as Queue: no pod is stuck by a bug.
  q->moveAllToActiveOrBackoffQueue(events::kNodeAdd, {}, node("boom"));
  EXPECT_EQ(q->counts().active, 3u);
  EXPECT_EQ(q->counts().unschedulable, 0u);
  std::sort(hints.begin(), hints.end());
  EXPECT_EQ(hints, (Keys{"NodeResourcesFit/NodeAdd/Error", "NodeResourcesFit/NodeAdd/Error",
                         "NodeResourcesFit/NodeAdd/Queue", "NodeResourcesFit/NodeAdd/QueueSkip",
                         "NodeResourcesFit/NodeAdd/QueueSkip"}));
}

TEST_F(SchedulingQueueTest, EventsDuringTheCycleAreJudgedWhenThePodFails) {
  auto onlyNodeB = [](const api::Pod&, const EventObject&, const EventObject& newObj) {
    const api::Node* n = as<api::Node>(newObj);
    return n != nullptr && n->metadata.name == "b" ? QueueingHint::kQueue : QueueingHint::kSkip;
  };
  auto node = [](const std::string& name) {
    auto n = std::make_shared<api::Node>();
    n->metadata.name = name;
    return n;
  };
  const struct {
    const char* name;
    std::vector<std::pair<ClusterEvent, std::string>> before, during;  // event, node name
    Kind want;
  } cases[] = {
      {"no event", {}, {}, Kind::kUnschedulable},
      {"registered event during the cycle", {}, {{events::kNodeAdd, "b"}}, Kind::kBackoff},
      {"its hint says skip", {}, {{events::kNodeAdd, "x"}}, Kind::kUnschedulable},
      {"an event the plugin did not register",
       {},
       {{events::kAssignedPodAdd, ""}},
       Kind::kUnschedulable},
      {"registered event before the cycle", {{events::kNodeAdd, "b"}}, {}, Kind::kUnschedulable},
      {"force activation during the cycle", {}, {{events::kForceActivate, ""}}, Kind::kBackoff},
  };
  for (const auto& c : cases) {
    auto q = makeQueue({{kFit, {ClusterEventWithHint(events::kNodeAdd, onlyNodeB)}}});
    auto p = makePod("p");
    q->add(p);
    for (const auto& [ev, n] : c.before) q->moveAllToActiveOrBackoffQueue(ev, {}, node(n));
    auto info = q->popFor({}, milliseconds(0));
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(q->counts().inFlightPods, 1u);
    for (const auto& [ev, n] : c.during) {
      if (ev.isWildcard()) {
        q->activate({p});
      } else {
        q->moveAllToActiveOrBackoffQueue(ev, {}, node(n));
      }
    }
    EXPECT_EQ(
        q->counts().inFlightEvents,
        c.during.size() == 1 && c.during[0].first.resource != EventResource::kAssignedPod ? 1u : 0u)
        << c.name << " (events nobody registered are not kept)";
    info->unschedulablePlugins = {kFit};
    ASSERT_TRUE(q->addUnschedulableIfNotPresent(std::move(info), q->schedulingCycle()));
    EXPECT_EQ(keys(*q, c.want), Keys{"ns/p"}) << c.name;
    const auto counts = q->counts();
    EXPECT_EQ(counts.inFlightPods, 0u) << c.name;
    EXPECT_EQ(counts.inFlightEvents, 0u) << c.name;
  }
}

TEST_F(SchedulingQueueTest, InFlightEventsAreKeptForTheOldestPodInFlight) {
  auto q = makeQueue({{kFit, {events::kNodeAdd}}});
  q->add(makePod("a"));
  clock_.advance(milliseconds(1));
  q->add(makePod("b"));
  auto a = q->popFor({}, milliseconds(0));
  q->moveAllToActiveOrBackoffQueue(events::kNodeAdd);  // seen by a only
  auto b = q->popFor({}, milliseconds(0));
  EXPECT_EQ(q->counts().inFlightEvents, 1u);
  q->done("uid-b");  // b bound: a still needs the event
  EXPECT_EQ(q->counts().inFlightEvents, 1u);
  q->done("uid-b");  // idempotent
  a->unschedulablePlugins = {kFit};
  ASSERT_TRUE(q->addUnschedulableIfNotPresent(std::move(a), q->schedulingCycle()));
  EXPECT_EQ(keys(*q, Kind::kBackoff), Keys{"ns/a"});
  EXPECT_EQ(q->counts().inFlightEvents, 0u);
}

TEST_F(SchedulingQueueTest, PopTakesUnschedulableBackoffWhenActiveIsEmpty) {
  auto q = makeQueue({{kFit, {events::kNodeAdd}}});
  q->add(makePod("p"));
  popAndFail(*q, "p", {kFit});
  q->moveAllToActiveOrBackoffQueue(events::kNodeAdd);
  EXPECT_EQ(keys(*q, Kind::kBackoff), Keys{"ns/p"});
  auto info = q->popFor({}, milliseconds(0));  // backoff not over, nothing else to do
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->attempts, 2);
  EXPECT_EQ(incoming("active/PopFromBackoffQ"), 1);
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
  const ClusterEvent claimAdd{EventResource::kPersistentVolumeClaim, kAdd, {}};
  bool admit = false;
  auto q = std::make_unique<SchedulingQueue>(
      Options{.clock = [this] { return clock_.now(); }}, nullptr,
      [&](const api::Pod&) {
        return admit ? Status{} : Status::unschedulable("no").withPlugin("Claims");
      },
      oneProfile({{"Claims", {claimAdd}}}));
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
  enum class Change { kStatus, kToleration, kLabel };
  const struct {
    const char* name;
    Change change;
    milliseconds elapsed;
    Kind want;
    const char* label;
  } cases[] = {
      {"status-only update stays", Change::kStatus, seconds(5), Kind::kUnschedulable, nullptr},
      {"registered change while backing off", Change::kToleration, milliseconds(100),
       Kind::kBackoff, "backoff/UnschedulablePodUpdatePodToleration"},
      {"registered change after backoff", Change::kToleration, seconds(2), Kind::kActive,
       "active/UnschedulablePodUpdatePodToleration"},
      {"a change no rejecting plugin registered stays", Change::kLabel, seconds(2),
       Kind::kUnschedulable, nullptr},
  };
  for (const auto& c : cases) {
    incoming_.clear();
    auto q = makeQueue({{kTaints, {{EventResource::kPod, kUpdatePodTolerations}}}});
    auto p = makePod("p");
    q->add(p);
    popAndFail(*q, "p", {kTaints});
    clock_.advance(c.elapsed);
    auto p2 = std::make_shared<api::Pod>(*p);
    p2->metadata.resourceVersion = "2";
    switch (c.change) {
      case Change::kStatus:
        p2->status.conditions.push_back({.type = "PodScheduled", .status = "False"});
        break;
      case Change::kToleration:
        p2->spec.tolerations.push_back({.key = "k", .operator_ = "Exists"});
        break;
      case Change::kLabel:
        p2->metadata.labels["a"] = "b";
        break;
    }
    q->update(p, p2);
    EXPECT_EQ(keys(*q, c.want), Keys{"ns/p"}) << c.name;
    EXPECT_EQ(q->pendingPods().at(0), p2) << c.name;
    if (c.label != nullptr) {
      EXPECT_EQ(incoming(c.label), 1) << c.name;
    }
  }
}

TEST(PodSchedulingPropertiesChangeTest, ClassifiesLikeUpstream) {
  api::Pod base;
  base.metadata.labels = {{"app", "a"}};
  api::Container ctr;
  ctr.name = "c";
  ctr.resources.requests = {{"cpu", api::Quantity::parse("500m")},
                            {"memory", api::Quantity::parse("1Gi")}};
  base.spec.containers = {ctr};
  base.spec.schedulingGates = {"g"};
  auto labels = [](const std::vector<ClusterEvent>& evs) {
    Keys out;
    for (const auto& e : evs) out.push_back(e.label());
    return out;
  };
  const struct {
    const char* name;
    std::function<void(api::Pod&)> change;
    Keys want;
  } cases[] = {
      {"nothing the scheduler reads",
       [](api::Pod& p) { p.status.phase = "Running"; },
       {"UnschedulablePodUpdate"}},
      {"label",
       [](api::Pod& p) { p.metadata.labels["x"] = "y"; },
       {"UnschedulablePodUpdatePodLabel"}},
      {"cpu request down",
       [](api::Pod& p) {
         p.spec.containers[0].resources.requests["cpu"] = api::Quantity::parse("100m");
       },
       {"UnschedulablePodUpdatePodScaleDown"}},
      {"cpu request up",
       [](api::Pod& p) {
         p.spec.containers[0].resources.requests["cpu"] = api::Quantity::parse("1");
       },
       {"UnschedulablePodUpdate"}},
      {"memory request removed",
       [](api::Pod& p) { p.spec.containers[0].resources.requests.erase("memory"); },
       {"UnschedulablePodUpdatePodScaleDown"}},
      {"gates removed",
       [](api::Pod& p) { p.spec.schedulingGates.clear(); },
       {"UnschedulablePodUpdatePodSchedulingGatesEliminated"}},
      {"toleration added",
       [](api::Pod& p) { p.spec.tolerations.push_back({.key = "k", .operator_ = "Exists"}); },
       {"UnschedulablePodUpdatePodToleration"}},
      {"label and toleration",
       [](api::Pod& p) {
         p.metadata.labels.clear();
         p.spec.tolerations.push_back({.key = "k", .operator_ = "Exists"});
       },
       {"UnschedulablePodUpdatePodLabel", "UnschedulablePodUpdatePodToleration"}},
      {"bound pod's label",
       [](api::Pod& p) {
         p.spec.nodeName = "n";
         p.metadata.labels["x"] = "y";
       },
       {"AssignedPodUpdatePodLabel"}},
      {"pod-level cpu request below the containers' sum",
       [](api::Pod& p) {
         p.spec.resources.emplace().requests["cpu"] = api::Quantity::parse("200m");
       },
       {"UnschedulablePodUpdatePodScaleDown"}},
      {"the resourceclaim controller names the claim it generated",
       [](api::Pod& p) { p.status.resourceClaimStatuses.push_back({"gpu", "p-gpu-x7k2q"}); },
       {"UnschedulablePodUpdatePodGeneratedResourceClaim"}},
  };
  for (const auto& c : cases) {
    api::Pod changed = base;
    c.change(changed);
    EXPECT_EQ(labels(podSchedulingPropertiesChange(changed, base, features::Gates{})), c.want) << c.name;
  }
}

// In-place resize of a bound pod: the spec goes down first, then the kubelet reports the
// allocated and actual sizes in status. The room is free (UpdatePodScaleDown) only once the
// status says so; while the resize is infeasible the spec does not count.
TEST(PodSchedulingPropertiesChangeTest, ResizeStatusScaleDown) {
  api::Pod bound;
  bound.spec.nodeName = "n";
  api::Container ctr;
  ctr.name = "c";
  ctr.resources.requests = {{"cpu", api::Quantity::parse("2")}};
  bound.spec.containers = {ctr};
  bound.status.containerStatuses = {
      {.name = "c", .allocatedResources = {{"cpu", api::Quantity::parse("2")}}}};
  auto cpu = [](std::string_view q) { return api::ResourceList{{"cpu", api::Quantity::parse(q)}}; };
  auto labels = [](const std::vector<ClusterEvent>& evs) {
    Keys out;
    for (const auto& e : evs) out.push_back(e.label());
    return out;
  };

  api::Pod specDown = bound;
  specDown.spec.containers[0].resources.requests = cpu("1");
  EXPECT_FALSE(podScaledDown(specDown, bound, features::Gates{})) << "spec down, still allocated at 2";

  api::Pod allocatedDown = specDown;
  allocatedDown.status.containerStatuses[0].allocatedResources = cpu("1");
  EXPECT_TRUE(podScaledDown(allocatedDown, specDown, features::Gates{})) << "allocated down";

  api::Pod actualDown = specDown;
  actualDown.status.containerStatuses[0].resources.emplace().requests = cpu("1");
  EXPECT_FALSE(podScaledDown(actualDown, specDown, features::Gates{})) << "actual down, allocated still 2";

  // A resize up that turns out infeasible: spec 4, allocated 2. Counted at 4 while pending,
  // at 2 once the kubelet says Infeasible.
  api::Pod specUp = bound;
  specUp.spec.containers[0].resources.requests = cpu("4");
  api::Pod infeasible = specUp;
  infeasible.status.conditions.push_back(
      {.type = "PodResizePending", .status = "True", .reason = "Infeasible"});
  EXPECT_TRUE(podScaledDown(infeasible, specUp, features::Gates{}));
  EXPECT_EQ(labels(podSchedulingPropertiesChange(infeasible, specUp, features::Gates{})),
            Keys{"AssignedPodUpdatePodScaleDown"});
  api::Pod deferred = specUp;
  deferred.status.conditions.push_back(
      {.type = "PodResizePending", .status = "True", .reason = "Deferred"});
  EXPECT_FALSE(podScaledDown(deferred, specUp, features::Gates{}));
}

TEST(NodeSchedulingPropertiesChangeTest, ClassifiesLikeUpstream) {
  api::Node base;
  base.metadata.name = "n";
  base.metadata.labels = {{"zone", "a"}};
  base.spec.unschedulable = true;
  base.status.conditions = {{"Ready", "True"}, {"MemoryPressure", "False"}};
  auto labels = [](const std::vector<ClusterEvent>& evs) {
    Keys out;
    for (const auto& e : evs) out.push_back(e.label());
    return out;
  };
  const struct {
    const char* name;
    std::function<void(api::Node&)> change;
    Keys want;
  } cases[] = {
      {"heartbeat only", [](api::Node&) {}, {}},
      {"conditions reordered",
       [](api::Node& n) { std::swap(n.status.conditions[0], n.status.conditions[1]); },
       {}},
      {"condition status",
       [](api::Node& n) { n.status.conditions[0].status = "False"; },
       {"NodeUpdateNodeCondition"}},
      {"schedulable again",
       [](api::Node& n) { n.spec.unschedulable = false; },
       {"NodeUpdateNodeTaint"}},
      {"label", [](api::Node& n) { n.metadata.labels["x"] = "y"; }, {"NodeUpdateNodeLabel"}},
      {"taint",
       [](api::Node& n) { n.spec.taints.push_back({.key = "k", .effect = "NoSchedule"}); },
       {"NodeUpdateNodeTaint"}},
      {"allocatable",
       [](api::Node& n) { n.status.allocatable["cpu"] = api::Quantity::parse("4"); },
       {"NodeUpdateNodeAllocatable"}},
      {"annotation",
       [](api::Node& n) { n.metadata.annotations["a"] = "b"; },
       {"NodeUpdateNodeAnnotation"}},
      {"declared features",
       [](api::Node& n) { n.status.declaredFeatures = {"RestartAllContainersOnContainerExits"}; },
       {"NodeUpdateNodeDeclaredFeature"}},
  };
  for (const auto& c : cases) {
    api::Node changed = base;
    c.change(changed);
    EXPECT_EQ(labels(nodeSchedulingPropertiesChange(changed, base)), c.want) << c.name;
  }
  api::Node cordoned = base;
  api::Node uncordoned = base;
  uncordoned.spec.unschedulable = false;
  EXPECT_TRUE(nodeSchedulingPropertiesChange(cordoned, uncordoned).empty())
      << "cordoning cannot help a pending pod";
}

TEST_F(SchedulingQueueTest, UpdateOfAnInFlightPodIsJudgedWhenItFails) {
  auto q = makeQueue({{kTaints, {{EventResource::kPod, kUpdatePodTolerations}}}});
  auto p = makePod("p");
  q->add(p);
  auto inFlight = q->popFor({}, milliseconds(0));
  auto p2 = std::make_shared<api::Pod>(*p);
  p2->spec.tolerations.push_back({.key = "k", .operator_ = "Exists"});
  q->update(p, p2);
  EXPECT_EQ(q->counts().active, 0u) << "not queued twice";
  EXPECT_EQ(q->counts().inFlightEvents, 1u);
  inFlight->podInfo = std::make_shared<PodInfo>(p2, features::Gates{});
  inFlight->unschedulablePlugins = {kTaints};
  ASSERT_TRUE(q->addUnschedulableIfNotPresent(std::move(inFlight), q->schedulingCycle()));
  EXPECT_EQ(keys(*q, Kind::kBackoff), Keys{"ns/p"});
}

TEST_F(SchedulingQueueTest, UpdateOfAnUnknownPodAddsIt) {
  auto q = makeQueue();
  auto p = makePod("p");
  q->update(p, withLabel(p, "a", "b"));
  EXPECT_EQ(keys(*q, Kind::kActive), Keys{"ns/p"});
  EXPECT_EQ(incoming("active/PodUpdate"), 1);
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
  q->addNominatedPod(std::make_shared<PodInfo>(active, features::Gates{}), "node-1");
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
      } else {
        q->done(info->pod().metadata.uid);
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
  EXPECT_EQ(c.inFlightPods, 0u);
  EXPECT_EQ(c.inFlightEvents, 0u);
}

}  // namespace
}  // namespace ksched::queue
