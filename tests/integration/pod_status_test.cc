// What the scheduler writes into a pod's status on a real apiserver, per gate:
//   SchedulerPreEnqueuePodStatus: a pod a PreEnqueue plugin holds back says why
//     (PodScheduled=False NotReadyForScheduling, the plugin's message, a Warning Event) once
//     the rejection has lasted 5 s, once per message, and not at all if it ends sooner.
//   NominatedNodeNameForExpectation: a pod waiting at Permit shows the node it is going to in
//     status.nominatedNodeName; once bound the nomination is gone (this apiserver, v1.20, does
//     not clear it at binding: the scheduler does).
// An in-process scheduler with two test plugins that read the pod's annotations: TestHold
// (PreEnqueue: rejects with the value of test.ksched.io/hold) and TestWait (Permit: waits while
// test.ksched.io/wait is set, and allows the pod once it is removed).
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include <ksched/api/features.h>

#include "running_scheduler.h"
#include "scheduling.h"

namespace ksched::testing {
namespace {

using namespace std::chrono_literals;

constexpr char kHold[] = "test.ksched.io/hold";
constexpr char kWait[] = "test.ksched.io/wait";

std::string annotationOf(const api::Pod& pod, const std::string& key) {
  auto it = pod.metadata.annotations.find(key);
  return it == pod.metadata.annotations.end() ? "" : it->second;
}

class TestHold final : public PreEnqueuePlugin {
 public:
  [[nodiscard]] std::string_view name() const override { return "TestHold"; }
  Status preEnqueue(const api::Pod& pod) override {
    const std::string hold = annotationOf(pod, kHold);
    return hold.empty() ? Status() : Status::unresolvable(hold);
  }
};

class TestWait final : public PermitPlugin {
 public:
  explicit TestWait(Handle& handle) : handle_(handle) {
    handle.addPodEventHandlers({.onAdd = {},
                                .onUpdate =
                                    [this](const PodPtr&, const PodPtr& pod) {
                                      if (!annotationOf(*pod, kWait).empty()) return;
                                      if (auto wp = handle_.getWaitingPod(pod->metadata.uid)) {
                                        wp->allow(name());
                                      }
                                    },
                                .onDelete = {}});
  }
  [[nodiscard]] std::string_view name() const override { return "TestWait"; }
  Status permit(CycleState&, const api::Pod& pod, const std::string&,
                std::chrono::milliseconds& timeout) override {
    if (annotationOf(pod, kWait).empty()) return {};
    timeout = 120s;
    return Status::wait();
  }

 private:
  Handle& handle_;
};

class PodStatusIntegration : public NamespacedTest {
 protected:
  void SetUp() override {
    auto& admin = TestCluster::get().admin();
    deleteAllNodes(admin);
    admin.post("/api/v1/nodes", sizedNode("status-0", "4", "8Gi"));
  }

  // A scheduler with the test plugins, running with `gates`.
  static std::unique_ptr<RunningScheduler> start(const features::Gates& gates = {}) {
    Registry registry = plugins::inTreeRegistry();
    registry.add("TestHold", [](Handle&) { return std::make_unique<TestHold>(); });
    registry.add("TestWait", [](Handle& h) { return std::make_unique<TestWait>(h); });
    auto opts = RunningScheduler::defaultOptions();
    opts.features = gates;
    opts.profiles[0].plugins.preEnqueue.enabled.push_back({"TestHold", 0});
    opts.profiles[0].plugins.permit.enabled.push_back({"TestWait", 0});
    return std::make_unique<RunningScheduler>(opts, registry);
  }

  api::Pod get(const std::string& name) {
    return api::decode<api::Pod>(
        TestCluster::get().admin().get("/api/v1/namespaces/" + ns() + "/pods/" + name));
  }
  // Sets (or, with "", removes) an annotation; the pod's new resourceVersion.
  std::string annotate(const std::string& name, const std::string& key, const std::string& value) {
    nlohmann::json patch = {
        {"metadata",
         {{"annotations",
           {{key, value.empty() ? nlohmann::json(nullptr) : nlohmann::json(value)}}}}}};
    return TestCluster::get()
        .admin()
        .patch("/api/v1/namespaces/" + ns() + "/pods/" + name, patch)["metadata"]
        .value("resourceVersion", "");
  }
  void create(const std::string& name, const std::string& key = "", const std::string& value = "") {
    auto p = sizedPod(ns(), name, "1");
    if (!key.empty()) p["metadata"]["annotations"][key] = value;
    TestCluster::get().admin().post("/api/v1/namespaces/" + ns() + "/pods", p);
  }
  // The pod's PodScheduled condition as "<status>/<reason>/<message>", "" without one.
  std::string scheduled(const std::string& name) {
    const api::Pod p = get(name);
    const auto* c = p.condition("PodScheduled");
    return c == nullptr ? "" : c->status + "/" + c->reason + "/" + c->message;
  }
  std::vector<std::string> notReadyEvents(const std::string& name) {
    return eventsByPod(TestCluster::get().admin(), ns(), "NotReadyForScheduling")[name];
  }
  const std::string& ns() const { return nsName_; }
  std::string nsName_;
};

TEST_F(PodStatusIntegration, APodHeldAtPreEnqueueSaysWhyUntilItIsBound) {
  nsName_ = useNamespace("status-preenqueue");
  auto sched = start();
  create("held", kHold, "waiting for 2 more pods of gang g");
  // A rejection that ends within the delay says nothing.
  create("brief", kHold, "waiting for 1 more pod");
  std::this_thread::sleep_for(1s);
  annotate("brief", kHold, "");

  std::this_thread::sleep_for(2s);
  EXPECT_EQ(scheduled("held"), "") << "written before the rejection lasted 5 s";
  const std::string want = "False/NotReadyForScheduling/waiting for 2 more pods of gang g";
  EXPECT_TRUE(eventually([&] { return scheduled("held") == want; }, 10s)) << scheduled("held");
  EXPECT_TRUE(eventually([&] { return notReadyEvents("held").size() == 1; }));
  EXPECT_EQ(notReadyEvents("held"), std::vector<std::string>{"waiting for 2 more pods of gang g"});
  for (const auto& e : TestCluster::get()
                           .admin()
                           .list("/apis/events.k8s.io/v1/namespaces/" + ns() + "/events")
                           .items) {
    if (e.value("reason", "") == "NotReadyForScheduling") {
      EXPECT_EQ(e.value("type", ""), "Warning");
    }
  }

  // Checked again with the same verdict (another annotation changed): no second write.
  const std::string rv = annotate("held", "unrelated", "x");
  std::this_thread::sleep_for(7s);
  EXPECT_EQ(get("held").metadata.resourceVersion, rv) << "the pod was written again";
  EXPECT_EQ(notReadyEvents("held").size(), 1u);

  // Another message replaces it.
  annotate("held", kHold, "waiting for 1 more pod of gang g");
  EXPECT_TRUE(eventually(
      [&] {
        return scheduled("held") == "False/NotReadyForScheduling/waiting for 1 more pod of gang g";
      },
      10s))
      << scheduled("held");

  // Let go: bound, and the binding's PodScheduled=True replaced the rejection.
  annotate("held", kHold, "");
  EXPECT_TRUE(eventually([&] { return get("held").spec.nodeName == "status-0"; }, 20s));
  EXPECT_TRUE(eventually([&] { return scheduled("held") == "True//"; })) << scheduled("held");
  std::this_thread::sleep_for(6s);  // the removal of the condition found nothing to remove
  EXPECT_EQ(scheduled("held"), "True//");

  EXPECT_EQ(get("brief").spec.nodeName, "status-0");
  EXPECT_EQ(scheduled("brief"), "True//");
  EXPECT_TRUE(notReadyEvents("brief").empty());
}

TEST_F(PodStatusIntegration, WithTheGateOffAHeldPodGetsNoStatus) {
  nsName_ = useNamespace("status-preenqueue-off");
  features::Gates off;
  off.force(features::Feature::kSchedulerPreEnqueuePodStatus, false);
  auto sched = start(off);
  create("held", kHold, "waiting");
  std::this_thread::sleep_for(7s);
  EXPECT_EQ(scheduled("held"), "");
  EXPECT_TRUE(notReadyEvents("held").empty());
  annotate("held", kHold, "");
  EXPECT_TRUE(eventually([&] { return get("held").spec.nodeName == "status-0"; }, 20s));
}

TEST_F(PodStatusIntegration, APodWaitingAtPermitIsNominatedUntilItIsBound) {
  nsName_ = useNamespace("status-nominated");
  auto sched = start();
  create("waiting", kWait, "1");
  create("plain");
  EXPECT_TRUE(eventually([&] { return get("waiting").status.nominatedNodeName == "status-0"; }))
      << "not nominated while it waits";
  EXPECT_EQ(get("waiting").spec.nodeName, "");
  // A pod bound without waiting (no PreBind work either) gets no nomination.
  EXPECT_TRUE(eventually([&] { return get("plain").spec.nodeName == "status-0"; }));
  EXPECT_EQ(get("plain").status.nominatedNodeName, "");

  annotate("waiting", kWait, "");
  EXPECT_TRUE(eventually([&] { return get("waiting").spec.nodeName == "status-0"; }));
  EXPECT_TRUE(eventually([&] { return get("waiting").status.nominatedNodeName.empty(); }))
      << "the nomination outlived the binding";
  EXPECT_EQ(scheduled("waiting"), "True//");
}

TEST_F(PodStatusIntegration, WithTheGateOffNoNominationIsWritten) {
  nsName_ = useNamespace("status-nominated-off");
  features::Gates off;
  off.force(features::Feature::kNominatedNodeNameForExpectation, false);
  auto sched = start(off);
  create("waiting", kWait, "1");
  std::this_thread::sleep_for(2s);
  const api::Pod p = get("waiting");
  EXPECT_EQ(p.spec.nodeName, "");
  EXPECT_EQ(p.status.nominatedNodeName, "");
  annotate("waiting", kWait, "");
  EXPECT_TRUE(eventually([&] { return get("waiting").spec.nodeName == "status-0"; }));
  EXPECT_EQ(get("waiting").status.nominatedNodeName, "");
}

}  // namespace
}  // namespace ksched::testing
