// Preemption against the real apiserver: PriorityClasses, victims deleted, nominations,
// PodDisruptionBudgets, preemptionPolicy Never.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <string>
#include <thread>

#include <ksched/api/decode.h>
#include <ksched/api/pod.h>

#include "cluster.h"
#include "config/profile.h"
#include "objects.h"
#include "running_scheduler.h"
#include "scheduling.h"

namespace ksched::testing {
namespace {

using namespace std::chrono_literals;

// A pod of `priorityClass` asking for `cpu`, deleted at once when preempted (no kubelet here
// to finish a graceful termination); optionally bound to `node` and labelled.
nlohmann::json prioPod(const std::string& ns, const std::string& name, const std::string& cpu,
                       const std::string& priorityClass, const std::string& node = "",
                       const nlohmann::json& labels = nullptr) {
  auto p = sizedPod(ns, name, cpu);
  p["spec"]["priorityClassName"] = priorityClass;
  p["spec"]["terminationGracePeriodSeconds"] = 0;
  if (!node.empty()) p["spec"]["nodeName"] = node;
  if (!labels.is_null()) p["metadata"]["labels"] = labels;
  return p;
}

std::map<std::string, std::string> placements(RestClient& c, const std::string& ns) {
  std::map<std::string, std::string> out;
  for (const auto& p : listPods(c, ns)) out[p.metadata.name] = p.spec.nodeName;
  return out;
}

class PreemptionIntegration : public NamespacedTest {
 protected:
  void SetUp() override {
    auto& admin = TestCluster::get().admin();
    deleteAllNodes(admin);
    ensurePriorityClass(admin, "ksched-low", 100);
    ensurePriorityClass(admin, "ksched-high", 1000);
    ensurePriorityClass(admin, "ksched-high-never", 1000, "Never");
  }
};

TEST_F(PreemptionIntegration, HighPriorityPodsEvictTheFewestLowPriorityPods) {
  auto& admin = TestCluster::get().admin();
  const std::string ns = useNamespace("preempt-basic");
  const int nodes = 10;
  for (int i = 0; i < nodes; ++i)
    admin.post("/api/v1/nodes", sizedNode("pre-basic-" + std::to_string(i), "4", "16Gi"));
  RunningScheduler sched;
  // 4 x 900m per node: 400m left on each.
  parallelFor(4 * nodes, 8, [&](int i) {
    admin.post("/api/v1/namespaces/" + ns + "/pods",
               prioPod(ns, "low-" + std::to_string(i), "900m", "ksched-low"));
  });
  ASSERT_EQ(waitAllBound(admin, ns, 4 * nodes), size_t{4 * nodes});
  // Each 3000m preemptor needs three of a node's four low pods gone.
  for (int i = 0; i < nodes; ++i) {
    admin.post("/api/v1/namespaces/" + ns + "/pods",
               prioPod(ns, "high-" + std::to_string(i), "3", "ksched-high"));
  }
  EXPECT_TRUE(eventually(
      [&] {
        int highBound = 0;
        for (const auto& [name, node] : placements(admin, ns)) {
          if (name.starts_with("high-") && !node.empty()) ++highBound;
        }
        return highBound == nodes;
      },
      90s));
  auto final = placements(admin, ns);
  int low = 0;
  std::map<std::string, int> highPerNode;
  for (const auto& [name, node] : final) {
    if (name.starts_with("low-")) ++low;
    if (name.starts_with("high-")) ++highPerNode[node];
  }
  EXPECT_EQ(low, nodes);  // 3 victims per node, no more
  EXPECT_EQ(highPerNode.size(), size_t{nodes});
  expectNoNodeOvercommitted(admin);
  // Events are sent asynchronously: they may trail the bindings.
  std::map<std::string, std::vector<std::string>> preempted;
  EXPECT_TRUE(eventually([&] {
    preempted = eventsByPod(admin, ns, "Preempted");
    return preempted.size() >= size_t{3 * nodes};
  }));
  EXPECT_EQ(preempted.size(), size_t{3 * nodes});
  for (const auto& [pod, notes] : preempted) {
    ASSERT_FALSE(notes.empty());
    EXPECT_TRUE(notes[0].starts_with("Preempted by pod ")) << notes[0];
  }
}

TEST_F(PreemptionIntegration, PDBSteersPreemptionAndIsViolatedOnlyWhenNoOtherNodeHelps) {
  auto& admin = TestCluster::get().admin();
  const std::string ns = useNamespace("preempt-pdb");
  admin.post("/api/v1/nodes", sizedNode("pre-pdb-a", "4", "16Gi"));
  admin.post("/api/v1/nodes", sizedNode("pre-pdb-b", "4", "16Gi"));
  const std::string policy = *admin.pickVersion({"policy/v1", "policy/v1beta1"});
  // No disruption controller runs here: status.disruptionsAllowed stays 0, so the PDB
  // protects every pod it selects.
  admin.post("/apis/" + policy + "/namespaces/" + ns + "/poddisruptionbudgets",
             {{"metadata", {{"name", "keep"}}},
              {"spec", {{"minAvailable", 1}, {"selector", {{"matchLabels", {{"app", "keep"}}}}}}}});
  admin.post("/api/v1/namespaces/" + ns + "/pods",
             prioPod(ns, "protected", "3", "ksched-low", "pre-pdb-a", {{"app", "keep"}}));
  admin.post("/api/v1/namespaces/" + ns + "/pods",
             prioPod(ns, "plain", "3", "ksched-low", "pre-pdb-b", {{"app", "other"}}));
  RunningScheduler sched;
  ASSERT_TRUE(eventually([&] { return sched->listers().podDisruptionBudgets(ns).size() == 1; }));

  admin.post("/api/v1/namespaces/" + ns + "/pods", prioPod(ns, "first", "3", "ksched-high"));
  ASSERT_TRUE(eventually([&] { return placements(admin, ns)["first"] == "pre-pdb-b"; }, 30s));
  EXPECT_FALSE(placements(admin, ns).contains("plain"));
  EXPECT_EQ(placements(admin, ns)["protected"], "pre-pdb-a");

  // Now only the protected pod's node can make room.
  admin.post("/api/v1/namespaces/" + ns + "/pods", prioPod(ns, "second", "3", "ksched-high"));
  ASSERT_TRUE(eventually([&] { return placements(admin, ns)["second"] == "pre-pdb-a"; }, 30s));
  EXPECT_FALSE(placements(admin, ns).contains("protected"));
  expectNoNodeOvercommitted(admin);
}

TEST_F(PreemptionIntegration, PolicyNeverAndEqualPriorityDoNotPreempt) {
  auto& admin = TestCluster::get().admin();
  const std::string ns = useNamespace("preempt-never");
  admin.post("/api/v1/nodes", sizedNode("pre-never-0", "4", "16Gi"));
  admin.post("/api/v1/namespaces/" + ns + "/pods",
             prioPod(ns, "low", "3", "ksched-low", "pre-never-0"));
  admin.post("/api/v1/namespaces/" + ns + "/pods",
             prioPod(ns, "peer", "500m", "ksched-high", "pre-never-0"));
  RunningScheduler sched;
  admin.post("/api/v1/namespaces/" + ns + "/pods", prioPod(ns, "never", "3", "ksched-high-never"));
  admin.post("/api/v1/namespaces/" + ns + "/pods", prioPod(ns, "same", "3", "ksched-low"));
  auto message = [&](const std::string& name) {
    auto p = api::decode<api::Pod>(admin.get("/api/v1/namespaces/" + ns + "/pods/" + name));
    const auto* c = p.condition("PodScheduled");
    return c == nullptr ? std::string() : c->message;
  };
  EXPECT_TRUE(eventually([&] {
    return message("never") ==
           "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to "
           "preemptionPolicy=Never.";
  })) << message("never");
  EXPECT_TRUE(eventually([&] {
    return message("same") ==
           "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 "
           "No preemption victims found for incoming pod.";
  })) << message("same");
  std::this_thread::sleep_for(1s);
  auto final = placements(admin, ns);
  EXPECT_EQ(final["low"], "pre-never-0");
  EXPECT_EQ(final["never"], "");
  EXPECT_EQ(final["same"], "");
  EXPECT_TRUE(eventsByPod(admin, ns, "Preempted").empty());
}

TEST_F(PreemptionIntegration, PreemptorIsNominatedWhileVictimsTerminate) {
  auto& admin = TestCluster::get().admin();
  const std::string ns = useNamespace("preempt-nominate");
  admin.post("/api/v1/nodes", sizedNode("pre-nom-0", "4", "16Gi"));
  // A graceful victim: without a kubelet it stays Terminating, so the preemptor stays
  // nominated and nothing else may take its room.
  auto victim = prioPod(ns, "slow", "3", "ksched-low", "pre-nom-0");
  victim["spec"]["terminationGracePeriodSeconds"] = 3600;
  admin.post("/api/v1/namespaces/" + ns + "/pods", victim);
  RunningScheduler sched;
  admin.post("/api/v1/namespaces/" + ns + "/pods", prioPod(ns, "vip", "3", "ksched-high"));
  EXPECT_TRUE(eventually([&] {
    auto p = api::decode<api::Pod>(admin.get("/api/v1/namespaces/" + ns + "/pods/vip"));
    return p.status.nominatedNodeName == "pre-nom-0";
  })) << "vip was not nominated";
  // The victim is deleted off the scheduling thread, independently of the status write.
  api::Pod slow;
  EXPECT_TRUE(eventually([&] {
    slow = api::decode<api::Pod>(admin.get("/api/v1/namespaces/" + ns + "/pods/slow"));
    return slow.metadata.deletionTimestamp.has_value();
  })) << "slow was not deleted";
  const auto* dt = slow.condition("DisruptionTarget");
  ASSERT_NE(dt, nullptr);
  EXPECT_EQ(dt->reason, "PreemptionByScheduler");
  // A lower-priority newcomer does not take the room reserved for vip, even once it is free.
  admin.post("/api/v1/namespaces/" + ns + "/pods", prioPod(ns, "sneaky", "2", "ksched-low"));
  admin.del("/api/v1/namespaces/" + ns + "/pods/slow", {{"gracePeriodSeconds", 0}});
  EXPECT_TRUE(eventually([&] { return placements(admin, ns)["vip"] == "pre-nom-0"; }, 30s));
  std::this_thread::sleep_for(1s);
  EXPECT_EQ(placements(admin, ns)["sneaky"], "");
  expectNoNodeOvercommitted(admin);
}

// Scheduler preemption for in-place resize (KEP 5836,
// InPlacePodVerticalScalingSchedulerPreemption): a running pod whose resize the kubelet deferred
// (the condition as a 1.37 kubelet writes it; the v1.20 apiserver stores it, and the pod's spec
// already holds the desired size) makes room on its own node by evicting a lower-priority pod
// there, and nowhere else. It is not nominated, gets no FailedScheduling event, and its
// PodScheduled is not touched.
TEST_F(PreemptionIntegration, DeferredResizeEvictsALowerPriorityPodOnItsNodeOnly) {
  auto& admin = TestCluster::get().admin();
  const std::string ns = useNamespace("preempt-resize");
  admin.post("/api/v1/nodes", sizedNode("pre-resize-0", "1", "4Gi"));
  admin.post("/api/v1/nodes", sizedNode("pre-resize-1", "1", "4Gi"));
  const std::string pods = "/api/v1/namespaces/" + ns + "/pods";
  // 1200m on a 1-cpu node once the grower counts at its new size (600m): over-allocated.
  admin.post(pods, prioPod(ns, "victim", "600m", "ksched-low", "pre-resize-0"));
  admin.post(pods, prioPod(ns, "bystander", "600m", "ksched-low", "pre-resize-1"));
  admin.post(pods, prioPod(ns, "grower", "600m", "ksched-high", "pre-resize-0"));
  auto opts = RunningScheduler::defaultOptions();
  ASSERT_EQ(opts.features.set("InPlacePodVerticalScalingSchedulerPreemption=true"), std::nullopt);
  opts.profiles = {config::defaultProfile(opts.features)};
  RunningScheduler sched(opts);
  std::this_thread::sleep_for(1s);
  EXPECT_EQ(placements(admin, ns).size(), size_t{3}) << "nothing is evicted before the deferral";
  // The kubelet defers the resize: the update queues the pod.
  admin.patch(pods + "/grower/status",
              {{"status",
                {{"conditions",
                  {{{"type", "PodResizePending"},
                    {"status", "True"},
                    {"reason", "Deferred"},
                    {"message", "Node didn't have enough capacity: cpu"}}}}}}},
              "application/strategic-merge-patch+json");
  EXPECT_TRUE(eventually([&] { return !placements(admin, ns).contains("victim"); }, 30s))
      << "the lower-priority pod on the grower's node was not evicted";
  std::map<std::string, std::vector<std::string>> preempted;
  EXPECT_TRUE(eventually([&] {
    preempted = eventsByPod(admin, ns, "Preempted");
    return preempted.contains("victim");
  }));
  ASSERT_EQ(preempted["victim"].size(), size_t{1});
  const std::string growerUid = api::decode<api::Pod>(admin.get(pods + "/grower")).metadata.uid;
  EXPECT_EQ(preempted["victim"][0], "Preempted by pod " + growerUid + " on node pre-resize-0");
  std::this_thread::sleep_for(2s);  // the grower's next cycle: it fits, it waits for the kubelet
  auto final = placements(admin, ns);
  EXPECT_EQ(final["bystander"], "pre-resize-1");
  EXPECT_EQ(final["grower"], "pre-resize-0");
  const auto grower = api::decode<api::Pod>(admin.get(pods + "/grower"));
  EXPECT_EQ(grower.status.nominatedNodeName, "");
  EXPECT_EQ(grower.condition("PodScheduled"), nullptr);
  EXPECT_FALSE(eventsByPod(admin, ns, "FailedScheduling").contains("grower"));
  EXPECT_EQ(preempted.size(), size_t{1}) << "only the victim";
}

}  // namespace
}  // namespace ksched::testing
