// The default plugins against the real apiserver: placements read back from the apiserver.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <thread>

#include <ksched/api/decode.h>
#include <ksched/api/pod.h>

#include "cluster.h"
#include "objects.h"
#include "running_scheduler.h"
#include "scheduling.h"

namespace ksched::testing {
namespace {

using namespace std::chrono_literals;

nlohmann::json labelledNode(const std::string& name, const std::string& zone,
                            const std::string& cpu = "4") {
  auto n = sizedNode(name, cpu, "16Gi");
  n["metadata"]["labels"] = {{"kubernetes.io/hostname", name},
                             {"topology.kubernetes.io/zone", zone}};
  return n;
}

std::map<std::string, std::string> placements(RestClient& c, const std::string& ns) {
  std::map<std::string, std::string> out;
  for (const auto& p : listPods(c, ns)) out[p.metadata.name] = p.spec.nodeName;
  return out;
}

std::string zoneOf(RestClient& c, const std::string& node) {
  auto n = c.get("/api/v1/nodes/" + node);
  return n["metadata"]["labels"].value("topology.kubernetes.io/zone", "");
}

class PluginsIntegration : public NamespacedTest {
 protected:
  void SetUp() override { deleteAllNodes(TestCluster::get().admin()); }
};

// upstream scheduler_perf's pod-with-pod-anti-affinity template: required anti-affinity on
// hostname against its own label.
TEST_F(PluginsIntegration, RequiredAntiAffinityPutsAtMostOnePodPerNode) {
  auto& admin = TestCluster::get().admin();
  const std::string ns = useNamespace("plug-anti");
  const int nodes = 100;
  parallelFor(nodes, 8, [&](int i) {
    admin.post("/api/v1/nodes",
               labelledNode("anti-" + std::to_string(i), "zone-" + std::to_string(i % 3)));
  });
  RunningScheduler sched;
  auto podWithAnti = [&](const std::string& name) {
    auto p = sizedPod(ns, name, "100m");
    p["metadata"]["labels"] = {{"color", "green"}};
    p["spec"]["affinity"] = {{"podAntiAffinity",
                              {{"requiredDuringSchedulingIgnoredDuringExecution",
                                {{{"labelSelector", {{"matchLabels", {{"color", "green"}}}}},
                                  {"topologyKey", "kubernetes.io/hostname"}}}}}}};
    return p;
  };
  parallelFor(nodes, 8, [&](int i) {
    admin.post("/api/v1/namespaces/" + ns + "/pods", podWithAnti("anti-" + std::to_string(i)));
  });
  ASSERT_EQ(waitAllBound(admin, ns, nodes, 90s), size_t{nodes});
  std::set<std::string> used;
  for (const auto& [pod, node] : placements(admin, ns)) {
    EXPECT_TRUE(used.insert(node).second) << node << " holds two anti-affine pods";
  }
  // One more has nowhere to go, with upstream's reason.
  admin.post("/api/v1/namespaces/" + ns + "/pods", podWithAnti("extra"));
  EXPECT_TRUE(eventually([&] {
    auto p = api::decode<api::Pod>(admin.get("/api/v1/namespaces/" + ns + "/pods/extra"));
    const auto* c = p.condition("PodScheduled");
    return c != nullptr && c->message.starts_with(
                               "0/100 nodes are available: 100 node(s) didn't "
                               "match pod anti-affinity rules.");
  }));
}

TEST_F(PluginsIntegration, TopologySpreadKeepsZoneSkewWithinMaxSkew) {
  auto& admin = TestCluster::get().admin();
  const std::string ns = useNamespace("plug-spread");
  // Zone a has 4 nodes, b 2, c 1: capacity alone would pile pods into zone a.
  int i = 0;
  for (const auto& [zone, count] : std::map<std::string, int>{{"a", 4}, {"b", 2}, {"c", 1}}) {
    for (int k = 0; k < count; ++k) {
      admin.post("/api/v1/nodes", labelledNode("spread-" + std::to_string(i++), zone, "16"));
    }
  }
  RunningScheduler sched;
  const int pods = 30;
  for (int k = 0; k < pods; ++k) {
    auto p = sizedPod(ns, "s-" + std::to_string(k), "100m");
    p["metadata"]["labels"] = {{"app", "spread"}};
    p["spec"]["topologySpreadConstraints"] = {
        {{"maxSkew", 1},
         {"topologyKey", "topology.kubernetes.io/zone"},
         {"whenUnsatisfiable", "DoNotSchedule"},
         {"labelSelector", {{"matchLabels", {{"app", "spread"}}}}}}};
    admin.post("/api/v1/namespaces/" + ns + "/pods", p);
  }
  ASSERT_EQ(waitAllBound(admin, ns, pods, 60s), size_t{pods});
  std::map<std::string, int> perZone;
  for (const auto& [pod, node] : placements(admin, ns)) ++perZone[zoneOf(admin, node)];
  ASSERT_EQ(perZone.size(), 3u);
  int lo = pods, hi = 0;
  for (const auto& [zone, n] : perZone) {
    lo = std::min(lo, n);
    hi = std::max(hi, n);
  }
  EXPECT_LE(hi - lo, 1) << "a=" << perZone["a"] << " b=" << perZone["b"] << " c=" << perZone["c"];
}

TEST_F(PluginsIntegration, RequiredAndPreferredNodeAffinity) {
  auto& admin = TestCluster::get().admin();
  const std::string ns = useNamespace("plug-nodeaff");
  for (const char* zone : {"a", "b", "c"}) {
    admin.post("/api/v1/nodes", labelledNode(std::string("aff-") + zone, zone));
  }
  RunningScheduler sched;
  auto p = sizedPod(ns, "required", "100m");
  p["spec"]["affinity"] = {{"nodeAffinity",
                            {{"requiredDuringSchedulingIgnoredDuringExecution",
                              {{"nodeSelectorTerms",
                                {{{"matchExpressions",
                                   {{{"key", "topology.kubernetes.io/zone"},
                                     {"operator", "In"},
                                     {"values", {"b", "c"}}}}}}}}}},
                             {"preferredDuringSchedulingIgnoredDuringExecution",
                              {{{"weight", 50},
                                {"preference",
                                 {{"matchExpressions",
                                   {{{"key", "topology.kubernetes.io/zone"},
                                     {"operator", "In"},
                                     {"values", {"c"}}}}}}}}}}}}};
  admin.post("/api/v1/namespaces/" + ns + "/pods", p);
  auto impossible = sizedPod(ns, "impossible", "100m");
  impossible["spec"]["nodeSelector"] = {{"topology.kubernetes.io/zone", "z"}};
  admin.post("/api/v1/namespaces/" + ns + "/pods", impossible);
  ASSERT_EQ(waitAllBound(admin, ns, 1), 1u);
  EXPECT_EQ(placements(admin, ns)["required"], "aff-c");  // required b|c, preferred c
  EXPECT_TRUE(eventually([&] {
    auto q = api::decode<api::Pod>(admin.get("/api/v1/namespaces/" + ns + "/pods/impossible"));
    const auto* c = q.condition("PodScheduled");
    return c != nullptr &&
           c->message.starts_with(
               "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.");
  }));
}

TEST_F(PluginsIntegration, HostPortsConflictOnlyOnTheSameProtocolAndIp) {
  auto& admin = TestCluster::get().admin();
  const std::string ns = useNamespace("plug-ports");
  admin.post("/api/v1/nodes", labelledNode("ports-0", "a"));
  admin.post("/api/v1/nodes", labelledNode("ports-1", "a"));
  RunningScheduler sched;
  auto withPort = [&](const std::string& name, int port, const std::string& proto) {
    auto p = sizedPod(ns, name, "100m");
    p["spec"]["containers"][0]["ports"] = {
        {{"containerPort", port}, {"hostPort", port}, {"protocol", proto}}};
    return p;
  };
  for (int k = 0; k < 2; ++k) {
    admin.post("/api/v1/namespaces/" + ns + "/pods",
               withPort("tcp-" + std::to_string(k), 8080, "TCP"));
  }
  admin.post("/api/v1/namespaces/" + ns + "/pods", withPort("udp", 8080, "UDP"));
  ASSERT_EQ(waitAllBound(admin, ns, 3), 3u);
  auto where = placements(admin, ns);
  EXPECT_NE(where["tcp-0"], where["tcp-1"]);  // same TCP port: different nodes
  admin.post("/api/v1/namespaces/" + ns + "/pods", withPort("tcp-2", 8080, "TCP"));
  EXPECT_TRUE(eventually([&] {
    auto q = api::decode<api::Pod>(admin.get("/api/v1/namespaces/" + ns + "/pods/tcp-2"));
    const auto* c = q.condition("PodScheduled");
    return c != nullptr && c->message.starts_with(
                               "0/2 nodes are available: 2 node(s) didn't have free ports "
                               "for the requested pod ports.");
  }));
}

// Preemption whose preemptor has required anti-affinity toward the victims' labels: evicting
// them is what makes the pod fit (InterPodAffinity's RemovePod in the dry run).
TEST_F(PluginsIntegration, PreemptionRemovesAntiAffineVictims) {
  auto& admin = TestCluster::get().admin();
  const std::string ns = useNamespace("plug-preanti");
  try {
    admin.post("/apis/scheduling.k8s.io/v1/priorityclasses",
               {{"metadata", {{"name", "ksched-anti-high"}}}, {"value", 5000}});
  } catch (const client::ApiError& e) {
    if (!e.isConflict()) throw;
  }
  admin.post("/api/v1/nodes", labelledNode("preanti-0", "a"));
  auto victim = sizedPod(ns, "victim", "100m");
  victim["metadata"]["labels"] = {{"team", "red"}};
  victim["spec"]["nodeName"] = "preanti-0";
  victim["spec"]["terminationGracePeriodSeconds"] = 0;
  admin.post("/api/v1/namespaces/" + ns + "/pods", victim);
  RunningScheduler sched;
  auto p = sizedPod(ns, "preemptor", "100m");
  p["spec"]["priorityClassName"] = "ksched-anti-high";
  p["spec"]["affinity"] = {{"podAntiAffinity",
                            {{"requiredDuringSchedulingIgnoredDuringExecution",
                              {{{"labelSelector", {{"matchLabels", {{"team", "red"}}}}},
                                {"topologyKey", "kubernetes.io/hostname"}}}}}}};
  admin.post("/api/v1/namespaces/" + ns + "/pods", p);
  EXPECT_TRUE(eventually([&] { return placements(admin, ns)["preemptor"] == "preanti-0"; }, 30s));
  EXPECT_FALSE(placements(admin, ns).contains("victim"));
}

}  // namespace
}  // namespace ksched::testing
