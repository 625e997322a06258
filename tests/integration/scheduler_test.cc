#include "scheduler/scheduler.h"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <ksched/api/decode.h>
#include <ksched/api/pod.h>
#include <ksched/api/pod_resources.h>

#include "cluster.h"
#include "objects.h"
#include "plugins/registry.h"
#include "running_scheduler.h"
#include "scheduling.h"

namespace ksched::testing {
namespace {

using client::RestClient;
using namespace std::chrono_literals;

// Binds through the apiserver, except that the first binding of each pod is answered as the
// apiserver answers when its etcd is unavailable: 409 Conflict carrying the storage's error.
class StorageFailingBinder final : public BindPlugin {
 public:
  explicit StorageFailingBinder(Handle& h) : handle_(h) {}
  std::string_view name() const override { return "StorageFailingBinder"; }
  Status bind(CycleState&, const api::Pod& pod, const std::string& node) override {
    {
      std::lock_guard lock(mu_);
      if (refused_.insert(pod.metadata.uid).second) {
        return Status::error("Operation cannot be fulfilled on pods/binding \"" +
                             pod.metadata.name +
                             "\": rpc error: code = Unavailable desc = transport is closing")
            .withHttpCode(409);
      }
    }
    if (auto r = handle_.api()->bindPod(pod, node)) {
      return Status::error(r->message).withHttpCode(r->code);
    }
    return {};
  }

 private:
  Handle& handle_;
  std::mutex mu_;
  std::set<std::string> refused_;  // guarded by mu_
};

// A 409 from pods/binding does not always mean "bound already": the pod the informer still
// has pending is tried again (after its backoff) instead of being dropped from the queue.
TEST(SchedulerIntegration, BindingRefusedWith409ByAFailingStorageIsTriedAgain) {
  auto& admin = TestCluster::get().admin();
  deleteAllNodes(admin);
  const std::string ns = "sched-bind-409";
  ensureNamespace(admin, ns);
  for (int i = 0; i < 3; ++i)
    admin.post("/api/v1/nodes", sizedNode("bind409-" + std::to_string(i), "4", "8Gi"));
  Registry registry = plugins::inTreeRegistry();
  registry.add("StorageFailingBinder",
               [](Handle& h) { return std::make_unique<StorageFailingBinder>(h); });
  auto opts = RunningScheduler::defaultOptions();
  opts.profiles[0].plugins.bind.disabled = {{"DefaultBinder"}};
  opts.profiles[0].plugins.bind.enabled = {{"StorageFailingBinder"}};
  RunningScheduler sched(opts, registry);
  for (int i = 0; i < 10; ++i) {
    admin.post("/api/v1/namespaces/" + ns + "/pods",
               sizedPod(ns, "p-" + std::to_string(i), "100m"));
  }
  EXPECT_EQ(waitAllBound(admin, ns, 10, 30s), 10u);
  // The apiserver has a binding before the binder that sent it counts it.
  EXPECT_TRUE(eventually([&] { return sched->stats().scheduled == 10u; }, 5s))
      << sched->stats().scheduled << " scheduled";
  EXPECT_EQ(sched->stats().bindConflicts, 10u);
  EXPECT_TRUE(eventsByPod(admin, ns, "FailedScheduling").empty()) << "refusals are not failures";
  deleteAllPods(admin, ns);
}

TEST(SchedulerIntegration, Binds100PodsOnto10NodesWithinAllocatable) {
  auto& admin = TestCluster::get().admin();
  deleteAllNodes(admin);
  const std::string ns = "sched-basic";
  ensureNamespace(admin, ns);
  for (int i = 0; i < 10; ++i)
    admin.post("/api/v1/nodes", sizedNode("basic-" + std::to_string(i), "2", "4Gi"));
  RunningScheduler sched;
  // 100 x 150m = 15 cores of 20: at most 13 fit on a node.
  parallelFor(100, 8, [&](int i) {
    admin.post("/api/v1/namespaces/" + ns + "/pods",
               sizedPod(ns, "p-" + std::to_string(i), "150m"));
  });
  EXPECT_EQ(waitAllBound(admin, ns, 100), 100u);
  expectNoNodeOvercommitted(admin);
  std::map<std::string, int> perNode;
  for (const auto& p : listPods(admin, ns)) {
    EXPECT_TRUE(p.spec.nodeName.rfind("basic-", 0) == 0) << p.spec.nodeName;
    ++perNode[p.spec.nodeName];
  }
  EXPECT_EQ(perNode.size(), 10u) << "LeastAllocated spreads over every node";
  EXPECT_TRUE(eventually([&] { return eventsByPod(admin, ns, "Scheduled").size() == 100; }));
  auto ev = eventsByPod(admin, ns, "Scheduled");
  const auto pod0 = api::decode<api::Pod>(admin.get("/api/v1/namespaces/" + ns + "/pods/p-0"));
  ASSERT_EQ(ev["p-0"].size(), 1u);
  EXPECT_EQ(ev["p-0"][0], "Successfully assigned " + ns + "/p-0 to " + pod0.spec.nodeName);
  EXPECT_EQ(sched->stats().scheduled, 100u);
}

TEST(SchedulerIntegration, TooBigPodIsUnschedulableUntilABigNodeArrives) {
  auto& admin = TestCluster::get().admin();
  deleteAllNodes(admin);
  const std::string ns = "sched-big";
  ensureNamespace(admin, ns);
  admin.post("/api/v1/nodes", sizedNode("small-0", "2", "4Gi"));
  admin.post("/api/v1/nodes", sizedNode("small-1", "2", "4Gi"));
  RunningScheduler sched;
  admin.post("/api/v1/namespaces/" + ns + "/pods", sizedPod(ns, "big", "3"));
  // Larger than either node: preemption cannot help either.
  const std::string want =
      "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 "
      "Preemption is not helpful for scheduling.";
  std::string got;
  EXPECT_TRUE(eventually([&] {
    auto p = api::decode<api::Pod>(admin.get("/api/v1/namespaces/" + ns + "/pods/big"));
    const auto* c = p.condition("PodScheduled");
    if (c == nullptr) return false;
    got = c->status + "/" + c->reason + "/" + c->message;
    return got == "False/Unschedulable/" + want;
  })) << got;
  EXPECT_TRUE(eventually([&] {
    auto ev = eventsByPod(admin, ns, "FailedScheduling");
    return !ev["big"].empty() && ev["big"][0] == want;
  }));

  // A node that fits arrives: the NodeAdd event moves the pod at once, not the 5-minute flush.
  const auto t0 = std::chrono::steady_clock::now();
  admin.post("/api/v1/nodes", sizedNode("large-0", "4", "8Gi"));
  EXPECT_EQ(waitAllBound(admin, ns, 1, 15s), 1u);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 15s);
  auto p = api::decode<api::Pod>(admin.get("/api/v1/namespaces/" + ns + "/pods/big"));
  EXPECT_EQ(p.spec.nodeName, "large-0");
}

TEST(SchedulerIntegration, TaintsAreAvoidedAndTolerationsLandOnTaintedNodes) {
  auto& admin = TestCluster::get().admin();
  deleteAllNodes(admin);
  const std::string ns = "sched-taints";
  ensureNamespace(admin, ns);
  admin.post("/api/v1/nodes",
             sizedNode("tainted", "8", "16Gi",
                       {{{"key", "dedicated"}, {"value", "gpu"}, {"effect", "NoSchedule"}}}));
  admin.post("/api/v1/nodes", sizedNode("plain", "8", "16Gi"));
  RunningScheduler sched;
  parallelFor(5, 4, [&](int i) {
    admin.post("/api/v1/namespaces/" + ns + "/pods",
               sizedPod(ns, "plain-" + std::to_string(i), "100m"));
  });
  ASSERT_EQ(waitAllBound(admin, ns, 5), 5u);
  for (const auto& p : listPods(admin, ns)) EXPECT_EQ(p.spec.nodeName, "plain") << p.metadata.name;

  admin.patch("/api/v1/nodes/plain", {{"spec", {{"unschedulable", true}}}});
  // The scheduler must have seen the cordon before the next pods arrive.
  ASSERT_TRUE(eventually([&] {
    NodePtr n = sched->node("plain");
    return n != nullptr && n->spec.unschedulable;
  }));
  auto tolerating = sizedPod(ns, "tolerating", "100m");
  tolerating["spec"]["tolerations"] = {
      {{"key", "dedicated"}, {"operator", "Equal"}, {"value", "gpu"}, {"effect", "NoSchedule"}}};
  admin.post("/api/v1/namespaces/" + ns + "/pods", tolerating);
  admin.post("/api/v1/namespaces/" + ns + "/pods", sizedPod(ns, "intolerant", "100m"));
  EXPECT_TRUE(eventually([&] {
    auto p = api::decode<api::Pod>(admin.get("/api/v1/namespaces/" + ns + "/pods/tolerating"));
    return p.spec.nodeName == "tainted";
  }));
  EXPECT_TRUE(eventually([&] {
    auto p = api::decode<api::Pod>(admin.get("/api/v1/namespaces/" + ns + "/pods/intolerant"));
    const auto* c = p.condition("PodScheduled");
    return c != nullptr &&
           c->message ==
               "0/2 nodes are available: 1 node(s) had untolerated taint(s), 1 "
               "node(s) were unschedulable. preemption: 0/2 nodes are available: 2 Preemption is "
               "not helpful for scheduling.";
  }));
}

TEST(SchedulerIntegration, PodsOfAnotherSchedulerAreLeftAlone) {
  auto& admin = TestCluster::get().admin();
  deleteAllNodes(admin);
  const std::string ns = "sched-other";
  ensureNamespace(admin, ns);
  admin.post("/api/v1/nodes", sizedNode("other-0", "4", "8Gi"));
  RunningScheduler sched;
  auto foreign = sizedPod(ns, "foreign", "100m");
  foreign["spec"]["schedulerName"] = "someone-else";
  admin.post("/api/v1/namespaces/" + ns + "/pods", foreign);
  admin.post("/api/v1/namespaces/" + ns + "/pods", sizedPod(ns, "ours", "100m"));
  EXPECT_TRUE(eventually([&] {
    return !api::decode<api::Pod>(admin.get("/api/v1/namespaces/" + ns + "/pods/ours"))
                .spec.nodeName.empty();
  }));
  std::this_thread::sleep_for(1s);
  auto p = api::decode<api::Pod>(admin.get("/api/v1/namespaces/" + ns + "/pods/foreign"));
  EXPECT_TRUE(p.spec.nodeName.empty());
  EXPECT_EQ(p.condition("PodScheduled"), nullptr);
  EXPECT_TRUE(eventsByPod(admin, ns, "FailedScheduling").empty());
}

TEST(SchedulerIntegration, PodsDeletedWhileQueuedOrBindingLeaveTheCacheConsistent) {
  auto& admin = TestCluster::get().admin();
  deleteAllNodes(admin);
  const std::string ns = "sched-churn";
  ensureNamespace(admin, ns);
  for (int i = 0; i < 5; ++i)
    admin.post("/api/v1/nodes", sizedNode("churn-" + std::to_string(i), "4", "8Gi"));
  RunningScheduler sched;
  // Unschedulable pods, deleted while they sit in the queue.
  parallelFor(30, 4, [&](int i) {
    admin.post("/api/v1/namespaces/" + ns + "/pods",
               sizedPod(ns, "huge-" + std::to_string(i), "64"));
  });
  // Schedulable pods deleted as fast as they are created: some while queued, some while binding.
  std::jthread deleter([&] {
    for (int i = 0; i < 200; ++i) {
      try {
        admin.del("/api/v1/namespaces/" + ns + "/pods/c-" + std::to_string(i),
                  {{"gracePeriodSeconds", 0}});
      } catch (const client::ApiError& e) {
        if (!e.isNotFound()) throw;
        std::this_thread::sleep_for(2ms);
        --i;  // not created yet
      }
    }
  });
  parallelFor(200, 4, [&](int i) {
    admin.post("/api/v1/namespaces/" + ns + "/pods",
               sizedPod(ns, "c-" + std::to_string(i), "100m"));
  });
  deleter.join();
  parallelFor(30, 4, [&](int i) {
    admin.del("/api/v1/namespaces/" + ns + "/pods/huge-" + std::to_string(i),
              {{"gracePeriodSeconds", 0}});
  });
  // Then normal pods still schedule.
  parallelFor(20, 4, [&](int i) {
    admin.post("/api/v1/namespaces/" + ns + "/pods",
               sizedPod(ns, "after-" + std::to_string(i), "100m"));
  });
  EXPECT_EQ(waitAllBound(admin, ns, 20), 20u);
  // The cache agrees with the apiserver: every bound pod, nothing assumed, nothing queued.
  EXPECT_TRUE(eventually([&] {
    size_t bound = 0;
    for (const auto& j : admin.list("/api/v1/pods").items) {
      bound += j["spec"].value("nodeName", "").empty() ? 0 : 1;
    }
    auto c = sched->queue().counts();
    return sched->cache().podCount() == bound && sched->cache().assumedPodCount() == 0 &&
           c.active + c.backoff + c.unschedulable + c.gated == 0;
  })) << "cache pods "
      << sched->cache().podCount() << ", assumed " << sched->cache().assumedPodCount();
  expectNoNodeOvercommitted(admin);
}

}  // namespace
}  // namespace ksched::testing

namespace ksched::testing {
namespace {

TEST(SchedulerIntegration, ListersSeeServicesNamespacesPdbsAndClaims) {
  auto& admin = TestCluster::get().admin();
  const std::string ns = "sched-listers";
  ensureNamespace(admin, ns);
  admin.patch("/api/v1/namespaces/" + ns, {{"metadata", {{"labels", {{"team", "blue"}}}}}},
              "application/merge-patch+json");
  RunningScheduler sched;
  const std::string policy = *admin.pickVersion({"policy/v1", "policy/v1beta1"});
  admin.post("/api/v1/namespaces/" + ns + "/services",
             {{"metadata", {{"name", "web"}}},
              {"spec", {{"selector", {{"app", "web"}}}, {"ports", {{{"port", 80}}}}}}});
  admin.post("/apis/" + policy + "/namespaces/" + ns + "/poddisruptionbudgets",
             {{"metadata", {{"name", "web-pdb"}}},
              {"spec", {{"minAvailable", 1}, {"selector", {{"matchLabels", {{"app", "web"}}}}}}}});
  admin.post("/api/v1/namespaces/" + ns + "/persistentvolumeclaims",
             {{"metadata", {{"name", "data"}}},
              {"spec",
               {{"accessModes", {"ReadWriteOnce"}},
                {"storageClassName", ""},
                {"resources", {{"requests", {{"storage", "1Gi"}}}}}}}});
  const ClusterListers& l = sched->listers();
  EXPECT_TRUE(eventually([&] {
    auto svcs = l.services(ns);
    auto pdbs = l.podDisruptionBudgets(ns);
    auto nsObj = l.getNamespace(ns);
    // find, not at(): a lookup that throws would end the wait instead of retrying it.
    auto has = [](const auto& m, const std::string& k, const std::string& v) {
      auto it = m.find(k);
      return it != m.end() && it->second == v;
    };
    return svcs.size() == 1 && svcs[0]->spec.selector &&
           has(*svcs[0]->spec.selector, "app", "web") && pdbs.size() == 1 &&
           pdbs[0]->metadata.name == "web-pdb" && nsObj != nullptr &&
           has(nsObj->metadata.labels, "team", "blue") &&
           l.getPersistentVolumeClaim(ns, "data") != nullptr;
  }));
  EXPECT_TRUE(l.services("default").empty() ||
              l.services("default")[0]->metadata.namespace_ == "default");
  admin.del("/api/v1/namespaces/" + ns + "/services/web");
  EXPECT_TRUE(eventually([&] { return l.services(ns).empty(); }));
}

}  // namespace
}  // namespace ksched::testing
