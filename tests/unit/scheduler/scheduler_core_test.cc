// SchedulerCore driven through its seam: a FakeClusterApi for the cluster's answers, a
// recording EventSink, pods and nodes handed to its feed, and the in-tree plugins (plus a test
// Permit plugin). What is asserted is what a user of the cluster sees: the binding and its node,
// the Events, the PodScheduled=False patch, and where the pod is left in the queue.
#include "scheduler/scheduler_core.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <ksched/testing/fakes.h>

#include "plugins/registry.h"
#include "tests/support/scheduler_core_test_util.h"

namespace ksched::scheduler {
namespace {

using namespace std::chrono_literals;
using ksched::testing::FakeClusterApi;
using ksched::testing::NodeWrapper;
using ksched::testing::PodWrapper;
using schedulertest::callsOf;
using schedulertest::eventually;
using schedulertest::RecordingSink;

// Permit: rejects with "denied by TestPermit" (args.reject) or waits args.waitMs; counts
// Unreserve.
class TestPermit final : public PermitPlugin, public ReservePlugin {
 public:
  static constexpr std::string_view kName = "TestPermit";
  TestPermit(nlohmann::json args, std::atomic<int>* unreserved)
      : args_(std::move(args)), unreserved_(unreserved) {}
  [[nodiscard]] std::string_view name() const override { return kName; }
  Status reserve(CycleState&, const api::Pod&, const std::string&) override { return {}; }
  void unreserve(CycleState&, const api::Pod&, const std::string&) override { ++*unreserved_; }
  Status permit(CycleState&, const api::Pod&, const std::string&,
                std::chrono::milliseconds& timeout) override {
    if (args_.value("reject", false)) return Status::unschedulable("denied by TestPermit");
    if (const int ms = args_.value("waitMs", 0); ms > 0) {
      timeout = std::chrono::milliseconds(ms);
      return Status::wait();
    }
    return {};
  }

 private:
  const nlohmann::json args_;
  std::atomic<int>* unreserved_;
};

NodeWrapper node(const std::string& name, const std::string& cpu) {
  return std::move(NodeWrapper(name).capacity({{"cpu", cpu}, {"memory", "8Gi"}, {"pods", "110"}}));
}

PodWrapper pod(const std::string& name, const std::string& cpu) {
  return std::move(PodWrapper(name).req({{"cpu", cpu}, {"memory", "100Mi"}}));
}

// A core over a FakeClusterApi and a RecordingSink with the default profile (and TestPermit at
// Reserve and Permit when `permitArgs` is set). Backoff is long enough that a failed pod stays
// where the failure put it while the test looks.
struct Core {
  explicit Core(std::optional<nlohmann::json> permitArgs = std::nullopt,
                std::function<void()> cutOff = {}, std::chrono::milliseconds grace = 2s) {
    Registry registry = plugins::inTreeRegistry();
    registry.add(std::string(TestPermit::kName), [this, permitArgs](Handle&) {
      return std::make_unique<TestPermit>(permitArgs.value_or(nlohmann::json::object()),
                                          &unreserved);
    });
    Options o;
    o.binderThreads = 2;
    o.parallelism = 2;
    o.queue.podInitialBackoff = 60s;
    o.queue.podMaxBackoff = 60s;
    o.shutdownGracePeriod = grace;
    if (permitArgs) {
      o.profiles[0].plugins.reserve.enabled.push_back({std::string(TestPermit::kName), 0});
      o.profiles[0].plugins.permit.enabled.push_back({std::string(TestPermit::kName), 0});
    }
    Environment env;
    env.api = &api;
    env.events = &events;
    env.cutOff = std::move(cutOff);
    core = std::make_unique<SchedulerCore>(std::move(env), registry, std::move(o));
  }
  ~Core() { core->stop(); }

  // Feeds the nodes, then starts the loop.
  void start(const std::vector<NodeWrapper>& nodes) {
    for (const auto& n : nodes) core->onNodeAdd(n.ptr());
    core->startScheduling();
  }
  [[nodiscard]] int64_t requestedMilliCPU(const std::string& nodeName) const {
    auto ni = core->cache().nodeInfo(nodeName);
    return ni ? ni->requested().milliCPU : -1;
  }

  FakeClusterApi api;
  RecordingSink events;
  std::atomic<int> unreserved{0};
  std::unique_ptr<SchedulerCore> core;
};

TEST(SchedulerCoreTest, BindsToTheOnlyFittingNode) {
  Core c;
  c.start({node("node-a", "1"), node("node-b", "4")});
  c.core->onPodAdd(pod("p", "2").ptr());

  ASSERT_TRUE(eventually([&] { return c.core->stats().scheduled == 1; }));
  auto binds = callsOf(c.api, "bind");
  ASSERT_EQ(binds.size(), 1u);
  EXPECT_EQ(binds[0].target, "default/p");
  EXPECT_EQ(binds[0].body, "node-b");
  auto scheduled = c.events.withReason("Scheduled");
  ASSERT_EQ(scheduled.size(), 1u);
  EXPECT_EQ(scheduled[0].type, "Normal");
  EXPECT_EQ(scheduled[0].message, "Successfully assigned default/p to node-b");
  EXPECT_EQ(c.events.forgotten(), std::vector<std::string>{"p-uid"});
  // Counted on its node until the feed shows it bound.
  EXPECT_EQ(c.requestedMilliCPU("node-b"), 2000);
  EXPECT_TRUE(c.core->cache().isAssumed("p-uid"));
  EXPECT_TRUE(callsOf(c.api, "patchStatus").empty());
  EXPECT_EQ(c.core->queue().counts().inFlightPods, 0u);

  // The binding shows up: the cache holds the pod as bound, the queue does not.
  c.core->onPodUpdate(pod("p", "2").ptr(), pod("p", "2").nodeName("node-b").ptr());
  EXPECT_FALSE(c.core->cache().isAssumed("p-uid"));
  EXPECT_EQ(c.requestedMilliCPU("node-b"), 2000);
  EXPECT_TRUE(c.core->queue().pendingPods().empty());
}

TEST(SchedulerCoreTest, BindErrorForgetsTheAssumedPodAndRequeuesIt) {
  Core c;
  c.api.answerWith([](const FakeClusterApi::Call& call) -> ApiResult {
    if (call.verb == "bind") return ApiError{500, "InternalError", "bind: 500 InternalError"};
    return std::nullopt;
  });
  c.start({node("node-a", "4")});
  c.core->onPodAdd(pod("p", "2").ptr());

  ASSERT_TRUE(eventually([&] { return !callsOf(c.api, "patchStatus").empty(); }));
  EXPECT_EQ(callsOf(c.api, "bind").size(), 1u);
  EXPECT_EQ(c.core->stats().errors, 1u);
  EXPECT_EQ(c.core->stats().scheduled, 0u);
  // The room it held is free again.
  EXPECT_EQ(c.core->cache().assumedPodCount(), 0u);
  EXPECT_EQ(c.requestedMilliCPU("node-a"), 0);
  EXPECT_EQ(c.unreserved.load(), 0);  // no TestPermit in this profile
  // Back in the queue, waiting out its backoff (the binding's failure freed room on a node
  // while the pod was in flight).
  const auto counts = c.core->queue().counts();
  EXPECT_EQ(counts.backoff, 1u);
  EXPECT_EQ(counts.active + counts.unschedulable, 0u);
  auto failed = c.events.withReason("FailedScheduling");
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].type, "Warning");
  const std::string want = "running Bind plugin \"DefaultBinder\": bind: 500 InternalError";
  EXPECT_EQ(failed[0].message, want);
  const auto patch = callsOf(c.api, "patchStatus")[0].body;
  EXPECT_EQ(patch["status"]["conditions"][0]["reason"], "SchedulerError");
  EXPECT_EQ(patch["status"]["conditions"][0]["message"], want);
  // A failed binding clears a nomination the pod may have had.
  EXPECT_TRUE(patch["status"]["nominatedNodeName"].is_null());
}

TEST(SchedulerCoreTest, BindConflictRequeuesAPendingPodWithoutAFailureEvent) {
  Core c;
  c.api.answerWith([](const FakeClusterApi::Call& call) -> ApiResult {
    if (call.verb == "bind") return ApiError{409, "Conflict", "bind: 409 Conflict"};
    return std::nullopt;
  });
  c.start({node("node-a", "4")});
  c.core->onPodAdd(pod("p", "2").ptr());

  ASSERT_TRUE(eventually([&] { return c.core->stats().bindConflicts == 1; }));
  ASSERT_TRUE(eventually([&] { return c.core->queue().counts().backoff == 1; }));
  EXPECT_EQ(c.core->stats().errors, 0u);
  EXPECT_EQ(c.core->cache().assumedPodCount(), 0u);
  EXPECT_EQ(c.requestedMilliCPU("node-a"), 0);
  // Usually bound already: no FailedScheduling, no PodScheduled=False.
  EXPECT_TRUE(c.events.withReason("FailedScheduling").empty());
  EXPECT_TRUE(callsOf(c.api, "patchStatus").empty());
}

TEST(SchedulerCoreTest, BindConflictOfAPodBoundMeanwhileLeavesTheQueue) {
  Core c;
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  c.api.answerWith([&](const FakeClusterApi::Call& call) -> ApiResult {
    if (call.verb != "bind") return std::nullopt;
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return release; });
    return ApiError{409, "Conflict", "bind: 409 Conflict"};
  });
  c.start({node("node-a", "4")});
  c.core->onPodAdd(pod("p", "2").ptr());
  ASSERT_TRUE(eventually([&] { return callsOf(c.api, "bind").size() == 1; }));
  // Another scheduler bound it while our binding was on the way.
  c.core->onPodUpdate(pod("p", "2").ptr(), pod("p", "2").nodeName("node-a").ptr());
  {
    std::lock_guard lock(mu);
    release = true;
  }
  cv.notify_all();

  ASSERT_TRUE(eventually([&] { return c.core->stats().bindConflicts == 1; }));
  ASSERT_TRUE(eventually([&] { return c.core->queue().counts().inFlightPods == 0; }));
  EXPECT_TRUE(c.core->queue().pendingPods().empty());
  EXPECT_EQ(c.core->cache().assumedPodCount(), 0u);
  EXPECT_EQ(c.requestedMilliCPU("node-a"), 2000);  // as the feed says: bound there
  EXPECT_TRUE(c.events.withReason("FailedScheduling").empty());
}

TEST(SchedulerCoreTest, UnschedulablePodGetsPodScheduledFalseAndAnEvent) {
  Core c;
  c.start({node("node-a", "1"), node("node-b", "1")});
  c.core->onPodAdd(pod("p", "2").ptr());

  ASSERT_TRUE(eventually([&] { return !callsOf(c.api, "patchStatus").empty(); }));
  // Upstream's message, with what preemption (DefaultPreemption, PostFilter) found.
  const std::string want =
      "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 "
      "Preemption is not helpful for scheduling.";
  const auto patch = callsOf(c.api, "patchStatus")[0];
  EXPECT_EQ(patch.target, "default/p");
  const auto& cond = patch.body["status"]["conditions"][0];
  EXPECT_EQ(cond["type"], "PodScheduled");
  EXPECT_EQ(cond["status"], "False");
  EXPECT_EQ(cond["reason"], "Unschedulable");
  EXPECT_EQ(cond["message"], want);
  // No nomination to set or clear: preemption found nothing to do.
  EXPECT_FALSE(patch.body["status"].contains("nominatedNodeName"));
  auto failed = c.events.withReason("FailedScheduling");
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].object, "default/p");
  EXPECT_EQ(failed[0].message, want);
  EXPECT_TRUE(callsOf(c.api, "bind").empty());
  EXPECT_EQ(c.core->stats().unschedulable, 1u);
  EXPECT_EQ(c.core->queue().counts().unschedulable, 1u);
}

// In-place resize of a bound pod, as the feed shows it: the spec goes down, then the kubelet's
// status write reports the smaller allocation. Only that status write frees the room, and it
// must move the pending pod out of the unschedulable pods.
TEST(SchedulerCoreTest, ResizeReportedInStatusRequeuesPendingPods) {
  Core c;
  c.start({node("node-a", "4")});
  const PodWrapper big = pod("big", "3").nodeName("node-a").allocated({{"cpu", "3"}});
  c.core->onPodAdd(big.ptr());
  c.core->onPodAdd(pod("p", "2").ptr());
  ASSERT_TRUE(eventually([&] { return c.core->queue().counts().unschedulable == 1; }));

  api::Pod specDown = big.obj();
  specDown.spec.containers[0].resources.requests["cpu"] = api::Quantity::parse("1");
  const auto specDownPtr = std::make_shared<const api::Pod>(specDown);
  c.core->onPodUpdate(big.ptr(), specDownPtr);
  EXPECT_EQ(c.requestedMilliCPU("node-a"), 3000);  // still allocated at 3
  EXPECT_EQ(c.core->queue().counts().unschedulable, 1u);

  api::Pod allocatedDown = specDown;
  allocatedDown.status.containerStatuses[0].allocatedResources["cpu"] = api::Quantity::parse("1");
  c.core->onPodUpdate(specDownPtr, std::make_shared<const api::Pod>(allocatedDown));
  EXPECT_EQ(c.core->queue().counts().unschedulable, 0u);
  // Out of backoff when the active queue is empty (SchedulerPopFromBackoffQ): p now fits.
  ASSERT_TRUE(eventually([&] { return c.core->stats().scheduled == 1; }));
  auto binds = callsOf(c.api, "bind");
  ASSERT_EQ(binds.size(), 1u);
  EXPECT_EQ(binds[0].target, "default/p");
  EXPECT_EQ(binds[0].body, "node-a");
  EXPECT_EQ(c.requestedMilliCPU("node-a"), 3000);  // big at 1, p at 2
}

TEST(SchedulerCoreTest, ConflictOnTheStatusPatchIsNotRetriedAndKeepsThePodQueued) {
  Core c;
  c.api.answerWith([](const FakeClusterApi::Call& call) -> ApiResult {
    if (call.verb == "patchStatus") return ApiError{409, "Conflict", "patch: 409 Conflict"};
    return std::nullopt;
  });
  c.start({node("node-a", "1")});
  c.core->onPodAdd(pod("p", "2").ptr());

  ASSERT_TRUE(eventually([&] { return callsOf(c.api, "patchStatus").size() == 1; }));
  std::this_thread::sleep_for(100ms);
  // Logged, not retried: the pod's next failed attempt writes again.
  EXPECT_EQ(callsOf(c.api, "patchStatus").size(), 1u);
  EXPECT_EQ(c.core->stats().errors, 0u);
  EXPECT_EQ(c.core->queue().counts().unschedulable, 1u);
  EXPECT_EQ(c.events.withReason("FailedScheduling").size(), 1u);
}

// A pod at resourceVersion 5 that does not fit: its PodScheduled=False goes on the condition
// that the pod is still at 5; the apiserver answers the first try 409 and holds `latest` at the
// pod's path.
std::vector<FakeClusterApi::Call> statusWritesAfterAConflict(const nlohmann::json& latest) {
  std::atomic<int> tries{0};  // outlives the core's threads
  Core c;
  c.api.objectAt("/api/v1/namespaces/default/pods/p", latest);
  c.api.answerWith([&tries](const FakeClusterApi::Call& call) -> ApiResult {
    if (call.verb == "patchStatus" && tries++ == 0) {
      return ApiError{409, "Conflict", "patch: 409 Conflict: the object has been modified"};
    }
    return std::nullopt;
  });
  c.start({node("node-a", "1")});
  api::Pod p = pod("p", "2").obj();
  p.metadata.resourceVersion = "5";
  c.core->onPodAdd(std::make_shared<const api::Pod>(std::move(p)));
  EXPECT_TRUE(eventually([&] { return !callsOf(c.api, "get").empty(); }));
  std::this_thread::sleep_for(100ms);
  return c.api.calls();
}

// The binding of a pod whose answer was lost (the apiserver killed after storing it) leaves the
// feed behind: the pod's failure must not land PodScheduled=False over the binding's True.
TEST(SchedulerCoreTest, APodBoundMeanwhileGetsNoPodScheduledFalse) {
  const auto calls = statusWritesAfterAConflict(
      {{"metadata", {{"name", "p"}, {"uid", "p-uid"}, {"resourceVersion", "9"}}},
       {"spec", {{"nodeName", "node-b"}}}});
  std::vector<nlohmann::json> patches;
  for (const auto& call : calls) {
    if (call.verb == "patchStatus") patches.push_back(call.body);
  }
  ASSERT_EQ(patches.size(), 1u);
  EXPECT_EQ(patches[0]["metadata"]["resourceVersion"], "5");
  EXPECT_EQ(patches[0]["status"]["conditions"][0]["reason"], "Unschedulable");
}

TEST(SchedulerCoreTest, AConflictOnAnUnboundPodIsWrittenAgainOnItsLatestVersion) {
  const auto calls = statusWritesAfterAConflict(
      {{"metadata", {{"name", "p"}, {"uid", "p-uid"}, {"resourceVersion", "9"}}},
       {"spec", nlohmann::json::object()}});
  std::vector<nlohmann::json> patches;
  for (const auto& call : calls) {
    if (call.verb == "patchStatus") patches.push_back(call.body);
  }
  ASSERT_EQ(patches.size(), 2u);
  EXPECT_EQ(patches[0]["metadata"]["resourceVersion"], "5");
  EXPECT_EQ(patches[1]["metadata"]["resourceVersion"], "9");
  EXPECT_EQ(patches[1]["status"]["conditions"][0]["reason"], "Unschedulable");
}

TEST(SchedulerCoreTest, PermitRejectUnreservesAndRequeuesNamingThePlugin) {
  Core c(nlohmann::json{{"reject", true}});
  c.start({node("node-a", "4")});
  c.core->onPodAdd(pod("p", "2").ptr());

  ASSERT_TRUE(eventually([&] { return !callsOf(c.api, "patchStatus").empty(); }));
  EXPECT_EQ(c.unreserved.load(), 1);
  EXPECT_TRUE(callsOf(c.api, "bind").empty());
  EXPECT_EQ(c.core->cache().assumedPodCount(), 0u);
  EXPECT_EQ(c.requestedMilliCPU("node-a"), 0);
  // Waits for an event TestPermit cares about, counted against it.
  const auto counts = c.core->queue().detailedCounts();
  EXPECT_EQ(counts.unschedulable, 1u);
  EXPECT_EQ(counts.unschedulableByPlugin.at({std::string(TestPermit::kName), "default-scheduler"}),
            1u);
  auto failed = c.events.withReason("FailedScheduling");
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].message, "denied by TestPermit");
  const auto patch = callsOf(c.api, "patchStatus")[0].body;
  EXPECT_EQ(patch["status"]["conditions"][0]["reason"], "Unschedulable");
  EXPECT_EQ(patch["status"]["conditions"][0]["message"], "denied by TestPermit");
}

TEST(SchedulerCoreTest, PreemptionDeletesTheVictimAndNominatesTheNode) {
  Core c;
  c.start({node("node-a", "2")});
  c.core->onPodAdd(pod("victim", "2").priority(0).nodeName("node-a").ptr());
  c.core->onPodAdd(pod("preemptor", "2").priority(100).ptr());

  ASSERT_TRUE(eventually([&] { return !callsOf(c.api, "delete").empty(); }));
  // The victim's status is patched too (its DisruptionTarget condition): wait for the
  // preemptor's own patch, which the status writers send apart from the deletion.
  ASSERT_TRUE(eventually([&] {
    for (const auto& p : callsOf(c.api, "patchStatus")) {
      if (p.target == "default/preemptor") return true;
    }
    return false;
  }));
  auto deletes = callsOf(c.api, "delete");
  ASSERT_EQ(deletes.size(), 1u);
  EXPECT_EQ(deletes[0].target, "default/victim");
  // The first patch nominates the node; later attempts (the preemptor is activated once its
  // victims are deleted, before the feed shows them gone) leave the nomination alone.
  std::vector<nlohmann::json> preemptorPatches;
  for (const auto& p : callsOf(c.api, "patchStatus")) {
    if (p.target == "default/preemptor") preemptorPatches.push_back(p.body);
  }
  ASSERT_FALSE(preemptorPatches.empty());
  EXPECT_EQ(preemptorPatches[0]["status"]["nominatedNodeName"], "node-a");
  EXPECT_EQ(preemptorPatches[0]["status"]["conditions"][0]["reason"], "Unschedulable");
  for (size_t i = 1; i < preemptorPatches.size(); ++i) {
    EXPECT_FALSE(preemptorPatches[i]["status"].contains("nominatedNodeName")) << i;
  }
  EXPECT_EQ(c.core->queue().nominatedNodeFor("preemptor-uid"), "node-a");
  EXPECT_EQ(c.events.withReason("Preempted").size(), 1u);
  EXPECT_TRUE(callsOf(c.api, "bind").empty());

  // The victim leaves: the preemptor binds where it was nominated.
  c.core->onPodDelete(pod("victim", "2").priority(0).nodeName("node-a").ptr());
  ASSERT_TRUE(eventually([&] { return c.core->stats().scheduled == 1; }, 15s));
  auto binds = callsOf(c.api, "bind");
  ASSERT_EQ(binds.size(), 1u);
  EXPECT_EQ(binds[0].target, "default/preemptor");
  EXPECT_EQ(binds[0].body, "node-a");
}

TEST(SchedulerCoreTest, StopWhileAPodWaitsAtPermitRejectsItAndForgetsIt) {
  Core c(nlohmann::json{{"waitMs", 60000}});
  c.start({node("node-a", "4")});
  c.core->onPodAdd(pod("p", "2").ptr());
  ASSERT_TRUE(eventually([&] { return c.core->cache().isAssumed("p-uid"); }));

  const auto start = std::chrono::steady_clock::now();
  (void)c.core->stop();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  EXPECT_EQ(c.unreserved.load(), 1);
  EXPECT_EQ(c.core->cache().assumedPodCount(), 0u);
  EXPECT_EQ(c.requestedMilliCPU("node-a"), 0);
  EXPECT_TRUE(callsOf(c.api, "bind").empty());
  EXPECT_EQ(c.events.shutdowns(), 1);
  // Idempotent.
  (void)c.core->stop();
  EXPECT_EQ(c.events.shutdowns(), 1);
}

TEST(SchedulerCoreTest, StopCutsOffABindingThatHangsAtTheGracePeriod) {
  std::mutex mu;
  std::condition_variable cv;
  bool cut = false;
  Core c(
      std::nullopt,
      [&] {
        std::lock_guard lock(mu);
        cut = true;
        cv.notify_all();
      },
      300ms);
  // The bind hangs until the cluster connection is cut off, then fails as an aborted request.
  c.api.answerWith([&](const FakeClusterApi::Call& call) -> ApiResult {
    if (call.verb != "bind") return std::nullopt;
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return cut; });
    return ApiError{0, "", "bind: client stopped"};
  });
  c.start({node("node-a", "4")});
  c.core->onPodAdd(pod("p", "2").ptr());
  ASSERT_TRUE(eventually([&] { return callsOf(c.api, "bind").size() == 1; }));

  const auto start = std::chrono::steady_clock::now();
  (void)c.core->stop();
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_GE(took, 250ms);
  EXPECT_LT(took, 2s);
  EXPECT_TRUE(cut);
  EXPECT_EQ(c.core->cache().assumedPodCount(), 0u);
  EXPECT_EQ(c.requestedMilliCPU("node-a"), 0);
  EXPECT_EQ(c.core->stats().scheduled, 0u);
}

// The daemon's last line ("N events sent, M dropped (K at shutdown)") counts the events a full
// queue dropped while it ran, not only those left queued at the end.
TEST(SchedulerCoreTest, StopReportsEveryDroppedEventAndThoseDroppedAtShutdown) {
  Core c;
  c.start({node("node-a", "4")});
  c.core->onPodAdd(pod("p", "1").ptr());
  ASSERT_TRUE(eventually([&] { return c.core->stats().scheduled == 1; }));
  c.events.setDropped(10001, 3);
  const ShutdownReport report = c.core->stop();
  EXPECT_EQ(report.eventsSent, c.events.sent());
  EXPECT_EQ(report.eventsDroppedTotal, 10001u);
  EXPECT_EQ(report.eventsDropped, 3u);
}

TEST(SchedulerCoreTest, StopWithNothingInFlightDoesNotCutOff) {
  bool cut = false;
  Core c(
      std::nullopt, [&] { cut = true; }, 100ms);
  c.start({node("node-a", "4")});
  (void)c.core->stop();
  std::this_thread::sleep_for(150ms);
  EXPECT_FALSE(cut);
}

}  // namespace
}  // namespace ksched::scheduler
