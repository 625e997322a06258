// The scheduler core's status writes that follow gates, through its seam (a FakeClusterApi and a
// recording EventSink):
//   SchedulerPreEnqueuePodStatus: a pod a PreEnqueue plugin holds back gets PodScheduled=False
//     NotReadyForScheduling with the plugin's message once the rejection has lasted the delay,
//     once per message, with a Warning Event; the condition is removed once the pod passes.
//   NominatedNodeNameForExpectation: status.nominatedNodeName is set before a pod waits at
//     Permit or before PreBind plugins that have work run, never otherwise, and cleared once
//     the pod is bound.
// Test plugins read the pod's labels: "hold" (TestHold rejects with its value), "wait"
// (TestWait waits at Permit until the test allows it), "prebind" (TestPreBind: "work" or
// "error" from its preBindPreFlight, else Skip), "block" (TestBlock holds the scheduling thread
// in the pod's PreFilter until the test releases it).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <ksched/api/features.h>
#include <ksched/testing/fakes.h>

#include "plugins/registry.h"
#include "scheduler/scheduler_core.h"
#include "tests/support/scheduler_core_test_util.h"

namespace ksched::scheduler {
namespace {

using namespace std::chrono_literals;
using features::Feature;
using ksched::testing::FakeClusterApi;
using ksched::testing::NodeWrapper;
using ksched::testing::PodWrapper;
using schedulertest::callsOf;
using schedulertest::eventually;
using schedulertest::RecordingSink;

std::string labelOf(const api::Pod& pod, const std::string& key) {
  auto it = pod.metadata.labels.find(key);
  return it == pod.metadata.labels.end() ? "" : it->second;
}

class TestHold final : public PreEnqueuePlugin {
 public:
  static constexpr std::string_view kName = "TestHold";
  [[nodiscard]] std::string_view name() const override { return kName; }
  Status preEnqueue(const api::Pod& pod) override {
    const std::string hold = labelOf(pod, "hold");
    return hold.empty() ? Status() : Status::unresolvable(hold);
  }
};

class TestBlock final : public PreFilterPlugin {
 public:
  static constexpr std::string_view kName = "TestBlock";
  explicit TestBlock(std::shared_future<void> released) : released_(std::move(released)) {}
  [[nodiscard]] std::string_view name() const override { return kName; }
  Status preFilter(CycleState&, const api::Pod& pod, const NodeInfoLister&,
                   PreFilterResult&) override {
    if (!labelOf(pod, "block").empty()) {
      blocked_ = true;
      released_.wait();
    }
    return Status::skip();
  }
  [[nodiscard]] bool blocked() const { return blocked_; }

 private:
  std::shared_future<void> released_;
  std::atomic<bool> blocked_{false};
};

// Registers one event, so a pod it rejected is not retried at once.
class TestWait final : public PermitPlugin, public EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "TestWait";
  explicit TestWait(Handle& handle) : handle_(handle) {}
  [[nodiscard]] std::string_view name() const override { return kName; }
  Status permit(CycleState&, const api::Pod& pod, const std::string&,
                std::chrono::milliseconds& timeout) override {
    if (labelOf(pod, "wait").empty()) return {};
    timeout = 60s;
    return Status::wait();
  }
  [[nodiscard]] std::vector<ClusterEventWithHint> eventsToRegister() const override {
    return {ClusterEvent{EventResource::kNode, kAdd, {}}};
  }
  bool allow(const std::string& uid) {
    auto wp = handle_.getWaitingPod(uid);
    if (wp) wp->allow(std::string(kName));
    return wp != nullptr;
  }
  bool reject(const std::string& uid) {
    auto wp = handle_.getWaitingPod(uid);
    if (wp) wp->reject(std::string(kName), "the gang gave up");
    return wp != nullptr;
  }

 private:
  Handle& handle_;
};

class TestPreBind final : public PreBindPlugin {
 public:
  static constexpr std::string_view kName = "TestPreBind";
  explicit TestPreBind(FakeClusterApi& api) : api_(api) {}
  [[nodiscard]] std::string_view name() const override { return kName; }
  Status preBindPreFlight(const CycleState&, const api::Pod& pod, const std::string&) override {
    const std::string v = labelOf(pod, "prebind");
    if (v == "work") return {};
    if (v == "error") return Status::error("claims not ready");
    return Status::skip();
  }
  Status preBind(CycleState&, const api::Pod&, const std::string&) override {
    std::lock_guard lock(mu_);
    callsAtPreBind_.push_back(api_.calls());
    return {};
  }
  // The cluster calls made before each preBind call.
  [[nodiscard]] std::vector<std::vector<FakeClusterApi::Call>> callsAtPreBind() const {
    std::lock_guard lock(mu_);
    return callsAtPreBind_;
  }

 private:
  FakeClusterApi& api_;
  mutable std::mutex mu_;
  std::vector<std::vector<FakeClusterApi::Call>> callsAtPreBind_;
};

// A core with the default profile plus the test plugins, a 100 ms delay for PreEnqueue verdicts,
// and one node, running with `gates`.
struct Core {
  explicit Core(const features::Gates& gates = {}) {
    Registry registry = plugins::inTreeRegistry();
    registry.add(std::string(TestHold::kName),
                 [](Handle&) { return std::make_unique<TestHold>(); });
    registry.add(std::string(TestWait::kName), [this](Handle& h) {
      auto p = std::make_unique<TestWait>(h);
      wait = p.get();
      return p;
    });
    registry.add(std::string(TestPreBind::kName), [this](Handle&) {
      auto p = std::make_unique<TestPreBind>(api);
      preBind = p.get();
      return p;
    });
    registry.add(std::string(TestBlock::kName), [this](Handle&) {
      auto p = std::make_unique<TestBlock>(released_.get_future().share());
      block = p.get();
      return p;
    });
    Options o;
    o.features = gates;
    o.profiles = {config::defaultProfile(gates)};
    o.binderThreads = 2;
    o.parallelism = 2;
    o.queue.podInitialBackoff = 60s;
    o.queue.podMaxBackoff = 60s;
    o.preEnqueueStatusDelay = 100ms;
    auto& plugins = o.profiles[0].plugins;
    plugins.preEnqueue.enabled.push_back({std::string(TestHold::kName), 0});
    plugins.permit.enabled.push_back({std::string(TestWait::kName), 0});
    plugins.preBind.enabled.push_back({std::string(TestPreBind::kName), 0});
    plugins.preFilter.enabled.push_back({std::string(TestBlock::kName), 0});
    Environment env;
    env.api = &api;
    env.events = &events;
    core = std::make_unique<SchedulerCore>(std::move(env), registry, std::move(o));
    core->onNodeAdd(
        NodeWrapper("node-a").capacity({{"cpu", "4"}, {"memory", "8Gi"}, {"pods", "110"}}).ptr());
    core->startScheduling();
  }
  ~Core() {
    release();
    core->stop();
  }
  // Lets TestBlock's pod go on.
  void release() {
    if (!released) released_.set_value();
    released = true;
  }

  [[nodiscard]] std::vector<nlohmann::json> patchesOf(const std::string& name) const {
    std::vector<nlohmann::json> out;
    for (const auto& c : callsOf(api, "patchStatus")) {
      if (c.target == "default/" + name) out.push_back(c.body);
    }
    return out;
  }

  FakeClusterApi api;
  RecordingSink events;
  TestWait* wait = nullptr;
  TestPreBind* preBind = nullptr;
  TestBlock* block = nullptr;
  std::promise<void> released_;
  bool released = false;
  std::unique_ptr<SchedulerCore> core;
};

PodWrapper pod(const std::string& name) {
  return std::move(PodWrapper(name).req({{"cpu", "1"}, {"memory", "100Mi"}}));
}

// The pod as the feed shows it after `patch` (a strategic merge patch of PodScheduled and
// nominatedNodeName).
PodPtr patched(const PodPtr& pod, const nlohmann::json& patch) {
  auto p = std::make_shared<api::Pod>(*pod);
  const auto& st = patch.at("status");
  if (st.contains("conditions")) {
    const auto& c = st["conditions"][0];
    p->status.conditions = {{c.value("type", ""), c.value("status", ""), c.value("reason", ""),
                             c.value("message", ""), ""}};
  }
  if (st.contains("nominatedNodeName")) {
    const auto& n = st["nominatedNodeName"];
    p->status.nominatedNodeName = n.is_null() ? "" : n.get<std::string>();
  }
  return p;
}

// ---- SchedulerPreEnqueuePodStatus ----

TEST(SchedulerCoreStatusTest, HeldPodSaysWhyOnceTheRejectionLastedTheDelay) {
  Core c;
  const PodPtr p = pod("p").label("hold", "gang g has 1 of 3 pods").ptr();
  c.core->onPodAdd(p);
  std::this_thread::sleep_for(30ms);
  EXPECT_TRUE(c.patchesOf("p").empty());  // within the delay: nothing yet

  ASSERT_TRUE(eventually([&] { return c.patchesOf("p").size() == 1; }));
  const auto patch = c.patchesOf("p")[0];
  const auto& cond = patch["status"]["conditions"][0];
  EXPECT_EQ(cond["type"], "PodScheduled");
  EXPECT_EQ(cond["status"], "False");
  EXPECT_EQ(cond["reason"], "NotReadyForScheduling");
  EXPECT_EQ(cond["message"], "gang g has 1 of 3 pods");
  EXPECT_FALSE(patch["status"].contains("nominatedNodeName"));
  auto notReady = c.events.withReason("NotReadyForScheduling");
  ASSERT_EQ(notReady.size(), 1u);
  EXPECT_EQ(notReady[0].type, "Warning");
  EXPECT_EQ(notReady[0].object, "default/p");
  EXPECT_EQ(notReady[0].message, "gang g has 1 of 3 pods");

  // The feed shows the condition; the pod is checked again with the same verdict: nothing new.
  const PodPtr written = patched(p, patch);
  c.core->onPodUpdate(p, written);
  auto relabeled = std::make_shared<api::Pod>(*written);
  relabeled->metadata.labels["app"] = "x";
  c.core->onPodUpdate(written, relabeled);
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(c.patchesOf("p").size(), 1u);
  EXPECT_EQ(c.events.withReason("NotReadyForScheduling").size(), 1u);

  // Another message replaces it.
  auto again = std::make_shared<api::Pod>(*relabeled);
  again->metadata.labels["hold"] = "gang g has 2 of 3 pods";
  c.core->onPodUpdate(relabeled, again);
  ASSERT_TRUE(eventually([&] { return c.patchesOf("p").size() == 2; }));
  EXPECT_EQ(c.patchesOf("p")[1]["status"]["conditions"][0]["message"], "gang g has 2 of 3 pods");
  EXPECT_TRUE(callsOf(c.api, "bind").empty());
}

TEST(SchedulerCoreStatusTest, TheConditionCarriesThePodsGenerationWhenItHasOne) {
  Core c;
  api::Pod withGeneration = pod("g").label("hold", "waiting").obj();
  withGeneration.metadata.generation = 3;  // a 1.34+ apiserver counts pod generations
  c.core->onPodAdd(std::make_shared<api::Pod>(withGeneration));
  c.core->onPodAdd(pod("old").label("hold", "waiting").ptr());  // an older apiserver: none
  ASSERT_TRUE(eventually([&] { return c.patchesOf("g").size() == 1; }));
  ASSERT_TRUE(eventually([&] { return c.patchesOf("old").size() == 1; }));
  EXPECT_EQ(c.patchesOf("g")[0]["status"]["conditions"][0]["observedGeneration"], 3);
  EXPECT_FALSE(c.patchesOf("old")[0]["status"]["conditions"][0].contains("observedGeneration"));
}

TEST(SchedulerCoreStatusTest, ARejectionThatEndsWithinTheDelayWritesNothing) {
  Core c;
  const PodPtr p = pod("p").label("hold", "waiting").ptr();
  c.core->onPodAdd(p);
  auto released = std::make_shared<api::Pod>(*p);
  released->metadata.labels.erase("hold");
  c.core->onPodUpdate(p, released);
  ASSERT_TRUE(eventually([&] { return c.core->stats().scheduled == 1; }));
  std::this_thread::sleep_for(300ms);
  EXPECT_TRUE(c.patchesOf("p").empty());
  EXPECT_TRUE(c.events.withReason("NotReadyForScheduling").empty());
}

TEST(SchedulerCoreStatusTest, APodThatPassesHasItsConditionRemoved) {
  // The scheduling thread is held: the pod that passes stays in activeQ, no attempt replaces
  // its condition.
  Core c;
  c.core->onPodAdd(pod("blocker").label("block", "1").ptr());
  ASSERT_TRUE(eventually([&] { return c.block->blocked(); }));
  auto p = std::make_shared<api::Pod>(pod("p").label("hold", "waiting").obj());
  p->status.conditions = {{"Initialized", "True", "", "", ""},
                          {"PodScheduled", "False", "NotReadyForScheduling", "waiting", ""}};
  c.core->onPodAdd(p);  // a scheduler before this one wrote it: nothing to write
  std::this_thread::sleep_for(300ms);
  EXPECT_TRUE(c.patchesOf("p").empty());

  auto released = std::make_shared<api::Pod>(*p);
  released->metadata.labels.erase("hold");
  c.core->onPodUpdate(p, released);
  ASSERT_TRUE(eventually([&] { return c.patchesOf("p").size() == 1; }));
  // A JSON patch: only that condition, only if it still is what the feed showed.
  const nlohmann::json want = nlohmann::json::parse(R"([
      {"op": "test", "path": "/status/conditions/1/type", "value": "PodScheduled"},
      {"op": "test", "path": "/status/conditions/1/reason", "value": "NotReadyForScheduling"},
      {"op": "remove", "path": "/status/conditions/1"}])");
  EXPECT_EQ(c.patchesOf("p")[0], want);
  EXPECT_TRUE(c.events.withReason("NotReadyForScheduling").empty());
  c.release();
  ASSERT_TRUE(eventually([&] { return c.core->stats().scheduled == 2; }));
}

TEST(SchedulerCoreStatusTest, NothingIsWrittenBeforeTheCoreSchedules) {
  // A follower: fed, its queue warm, but it writes nothing until it leads.
  FakeClusterApi api;
  RecordingSink events;
  Registry registry = plugins::inTreeRegistry();
  registry.add(std::string(TestHold::kName), [](Handle&) { return std::make_unique<TestHold>(); });
  Options o;
  o.preEnqueueStatusDelay = 50ms;
  o.profiles[0].plugins.preEnqueue.enabled.push_back({std::string(TestHold::kName), 0});
  Environment env;
  env.api = &api;
  env.events = &events;
  SchedulerCore core(std::move(env), registry, std::move(o));
  const PodPtr p = pod("p").label("hold", "waiting").ptr();
  core.onPodAdd(p);
  std::this_thread::sleep_for(200ms);
  EXPECT_TRUE(api.calls().empty());
  // Leading: what the held pod waits for is written.
  core.startScheduling();
  ASSERT_TRUE(eventually([&] { return callsOf(api, "patchStatus").size() == 1; }));
  EXPECT_EQ(callsOf(api, "patchStatus")[0].body["status"]["conditions"][0]["message"], "waiting");
  core.stop();
}

TEST(SchedulerCoreStatusTest, WithTheGateOffAHeldPodGetsNoStatus) {
  features::Gates off;
  off.force(Feature::kSchedulerPreEnqueuePodStatus, false);
  Core c(off);
  c.core->onPodAdd(pod("p").label("hold", "waiting").ptr());
  std::this_thread::sleep_for(400ms);
  EXPECT_TRUE(c.patchesOf("p").empty());
  EXPECT_TRUE(c.events.withReason("NotReadyForScheduling").empty());
  EXPECT_EQ(c.core->queue().counts().gated, 1u);
}

// ---- NominatedNodeNameForExpectation ----

TEST(SchedulerCoreStatusTest, APodWaitingAtPermitIsNominatedUntilItIsBound) {
  Core c;
  const PodPtr p = pod("p").label("wait", "1").ptr();
  c.core->onPodAdd(p);
  ASSERT_TRUE(eventually([&] { return c.patchesOf("p").size() == 1; }));
  const auto patch = c.patchesOf("p")[0];
  EXPECT_EQ(patch, nlohmann::json::parse(R"({"status": {"nominatedNodeName": "node-a"}})"));
  EXPECT_TRUE(callsOf(c.api, "bind").empty());  // still waiting

  ASSERT_TRUE(c.wait->allow("p-uid"));
  ASSERT_TRUE(eventually([&] { return c.core->stats().scheduled == 1; }));
  EXPECT_EQ(c.patchesOf("p").size(), 1u);
  const auto calls = c.api.calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].verb, "patchStatus");
  EXPECT_EQ(calls[1].verb, "bind");
  EXPECT_EQ(calls[1].body, "node-a");

  // An apiserver before 1.35 leaves the nomination on the bound pod: it is cleared.
  const PodPtr nominated = patched(p, patch);
  c.core->onPodUpdate(p, nominated);
  auto bound = std::make_shared<api::Pod>(*nominated);
  bound->spec.nodeName = "node-a";
  c.core->onPodUpdate(nominated, bound);
  ASSERT_TRUE(eventually([&] { return c.patchesOf("p").size() == 2; }));
  EXPECT_EQ(c.patchesOf("p")[1],
            nlohmann::json::parse(R"({"status": {"nominatedNodeName": null}})"));
}

TEST(SchedulerCoreStatusTest, ABoundPodTheApiserverClearedIsLeftAlone) {
  Core c;
  const PodPtr p = pod("p").ptr();
  c.core->onPodAdd(p);
  ASSERT_TRUE(eventually([&] { return c.core->stats().scheduled == 1; }));
  auto bound = std::make_shared<api::Pod>(*p);
  bound->spec.nodeName = "node-a";
  c.core->onPodUpdate(p, bound);
  std::this_thread::sleep_for(100ms);
  EXPECT_TRUE(c.patchesOf("p").empty());
}

TEST(SchedulerCoreStatusTest, PreBindWithWorkNominatesBeforePreBindRuns) {
  Core c;
  c.core->onPodAdd(pod("p").label("prebind", "work").ptr());
  ASSERT_TRUE(eventually([&] { return c.core->stats().scheduled == 1; }));
  auto atPreBind = c.preBind->callsAtPreBind();
  ASSERT_EQ(atPreBind.size(), 1u);
  ASSERT_EQ(atPreBind[0].size(), 1u);
  EXPECT_EQ(atPreBind[0][0].verb, "patchStatus");
  EXPECT_EQ(atPreBind[0][0].body,
            nlohmann::json::parse(R"({"status": {"nominatedNodeName": "node-a"}})"));
  EXPECT_EQ(c.patchesOf("p").size(), 1u);
  EXPECT_EQ(callsOf(c.api, "bind").size(), 1u);
}

TEST(SchedulerCoreStatusTest, NeitherAPermitWaitNorPreBindWorkWritesNothing) {
  Core c;
  c.core->onPodAdd(pod("p").ptr());
  c.core->onPodAdd(pod("q").label("prebind", "skip").ptr());
  ASSERT_TRUE(eventually([&] { return c.core->stats().scheduled == 2; }));
  EXPECT_TRUE(callsOf(c.api, "patchStatus").empty());
  // PreBind still ran for both (a plugin that says Skip has nothing to do there).
  EXPECT_EQ(c.preBind->callsAtPreBind().size(), 2u);
}

TEST(SchedulerCoreStatusTest, APreBindPreFlightErrorFailsTheBinding) {
  Core c;
  c.core->onPodAdd(pod("p").label("prebind", "error").ptr());
  ASSERT_TRUE(eventually([&] { return !c.events.withReason("FailedScheduling").empty(); }));
  EXPECT_EQ(c.events.withReason("FailedScheduling")[0].message,
            "running PreBindPreFlight \"TestPreBind\": claims not ready");
  EXPECT_TRUE(callsOf(c.api, "bind").empty());
  EXPECT_TRUE(c.preBind->callsAtPreBind().empty());
  EXPECT_EQ(c.core->cache().assumedPodCount(), 0u);
}

TEST(SchedulerCoreStatusTest, ARejectedWaitClearsTheNomination) {
  Core c;
  const PodPtr p = pod("p").label("wait", "1").ptr();
  c.core->onPodAdd(p);
  ASSERT_TRUE(eventually([&] { return c.patchesOf("p").size() == 1; }));
  // The feed does not show the nomination yet: the failure clears it all the same.
  ASSERT_TRUE(c.wait->reject("p-uid"));
  ASSERT_TRUE(eventually([&] { return c.patchesOf("p").size() == 2; }));
  const auto patch = c.patchesOf("p")[1];
  EXPECT_TRUE(patch["status"]["nominatedNodeName"].is_null());
  EXPECT_EQ(patch["status"]["conditions"][0]["reason"], "Unschedulable");
  EXPECT_EQ(patch["status"]["conditions"][0]["message"], "the gang gave up");
}

TEST(SchedulerCoreStatusTest, WithTheGateOffNoNominationIsWritten) {
  features::Gates off;
  off.force(Feature::kNominatedNodeNameForExpectation, false);
  Core c(off);
  const PodPtr p = pod("p").label("wait", "1").ptr();
  c.core->onPodAdd(p);
  c.core->onPodAdd(pod("q").label("prebind", "work").ptr());
  ASSERT_TRUE(eventually([&] { return c.core->stats().scheduled == 1; }));
  ASSERT_TRUE(eventually([&] { return c.core->cache().isAssumed("p-uid"); }));
  std::this_thread::sleep_for(100ms);
  EXPECT_TRUE(callsOf(c.api, "patchStatus").empty());
  // Nor cleared on a bound pod (a preemption's nomination, left by an old apiserver).
  auto bound = std::make_shared<api::Pod>(*p);
  bound->spec.nodeName = "node-a";
  bound->status.nominatedNodeName = "node-a";
  c.core->onPodUpdate(p, bound);
  std::this_thread::sleep_for(100ms);
  EXPECT_TRUE(callsOf(c.api, "patchStatus").empty());
}

}  // namespace
}  // namespace ksched::scheduler
