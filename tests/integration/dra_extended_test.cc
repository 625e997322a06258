// Extended resources backed by DRA (KEP 5004) through a running scheduler and the real
// apiserver: unlike spec.resourceClaims, a plain `example.com/gpu` request is a pod the v1.20
// apiserver stores, so this is the whole path with real pods. The DeviceClass, slices and the
// claims the scheduler creates are real objects (the CRDs of tests/integration/crds).
//   - A pod whose node has no slice yet stays pending (explain says which claim and request
//     found no device); the slice that appears later wakes it (the ResourceSlice hint) and it
//     binds, with its claim created, allocated and reserved.
//   - Pods never share a device: with two devices and three pods, two bind on distinct
//     devices and the third waits; `ksched explain` on the live cluster says both are in use.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <thread>

#include "client/errors.h"
#include "cluster.h"
#include "dra.h"
#include "explain_cli.h"
#include "objects.h"
#include "running_scheduler.h"
#include "scheduler/explain.h"
#include "scheduling.h"

namespace ksched::testing {
namespace {

using nlohmann::json;

constexpr const char* kNs = "dra-ext";
constexpr const char* kNode = "ext-n1";

json gpuPod(const std::string& name) {
  json p = podJson(kNs, name);
  p["spec"]["schedulerName"] = "default-scheduler";
  p["spec"]["containers"][0]["resources"] = {{"requests", {{"example.com/gpu", "1"}}},
                                             {"limits", {{"example.com/gpu", "1"}}}};
  return p;
}

json slice(int devices) {
  json list = json::array();
  for (int i = 0; i < devices; ++i) list.push_back({{"name", "gpu-" + std::to_string(i)}});
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceSlice"},
          {"metadata", {{"name", "ext-n1-gpus"}}},
          {"spec",
           {{"driver", "ext.example.com"},
            {"nodeName", kNode},
            {"pool", {{"name", kNode}, {"generation", 1}, {"resourceSliceCount", 1}}},
            {"devices", list}}}};
}

std::string nodeOf(RestClient& c, const std::string& name) {
  return c.get(std::string("/api/v1/namespaces/") + kNs + "/pods/" + name)["spec"].value("nodeName",
                                                                                         "");
}

// The claims of the namespace, by the uid of the pod that owns each.
std::map<std::string, json> claimsByPod(RestClient& c) {
  std::map<std::string, json> out;
  for (auto& claim :
       c.list(std::string(kResourceApi) + "/namespaces/" + kNs + "/resourceclaims").items) {
    for (const auto& o : claim["metadata"].value("ownerReferences", json::array())) {
      out[o.value("uid", "")] = claim;
    }
  }
  return out;
}

class DraExtended : public NamespacedTest {
 protected:
  void SetUp() override {
    auto& admin = TestCluster::get().admin();
    installResourceCrds(admin);
    useNamespace(kNs);
    deleteAllNodes(admin);
    deleteClaims(admin, kNs);
    removeIfThere(admin, std::string(kResourceApi) + "/resourceslices/ext-n1-gpus");
    removeIfThere(admin, std::string(kResourceApi) + "/deviceclasses/ext-gpu");
    admin.post("/api/v1/nodes", sizedNode(kNode, "8", "16Gi"));
    admin.post(std::string(kResourceApi) + "/deviceclasses",
               extendedGpuClass("ext-gpu", "ext.example.com"));
  }

  void TearDown() override {
    NamespacedTest::TearDown();
    deleteAllNodes(TestCluster::get().admin());
  }
};

TEST_F(DraExtended, ASliceThatAppearsLaterWakesThePodAndItsClaimIsWritten) {
  auto& admin = TestCluster::get().admin();
  RunningScheduler sched;
  const json created = admin.post(std::string("/api/v1/namespaces/") + kNs + "/pods", gpuPod("p1"));
  const std::string uid = created["metadata"].value("uid", "");

  // No device anywhere: NodeResourcesFit leaves example.com/gpu to DRA (no allocatable lists
  // it), and DynamicResources finds nothing to allocate.
  ASSERT_TRUE(eventually([&] {
    return !eventsByPod(admin, kNs, "FailedScheduling")["p1"].empty();
  })) << "no FailedScheduling event for p1";
  EXPECT_EQ(nodeOf(admin, "p1"), "");
  const auto events = eventsByPod(admin, kNs, "FailedScheduling")["p1"];
  EXPECT_NE(events.front().find("cannot allocate all claims"), std::string::npos) << events.front();

  // explain reads the DRA objects as the scheduler does: it names the plugin, the claim and the
  // request that found no device on the node.
  const std::string table = scheduler::toTable(sched->explain(kNs, "p1", ""));
  EXPECT_NE(table.find("DynamicResources"), std::string::npos) << table;
  EXPECT_NE(table.find("claim <extended-resources>, request container-0-request-0"),
            std::string::npos)
      << table;

  admin.post(std::string(kResourceApi) + "/resourceslices", slice(2));
  ASSERT_TRUE(eventually([&] { return nodeOf(admin, "p1") == kNode; }))
      << "p1 was not woken by the slice";

  const auto claims = claimsByPod(admin);
  ASSERT_TRUE(claims.contains(uid)) << "no claim owned by p1";
  const json& claim = claims.at(uid);
  EXPECT_EQ(
      claim["metadata"]["annotations"].value("resource.kubernetes.io/extended-resource-claim", ""),
      "true");
  EXPECT_TRUE(claim["metadata"]["name"].get<std::string>().starts_with("p1-extended-resources-"));
  EXPECT_EQ(claim["metadata"]["finalizers"],
            json::array({"resource.kubernetes.io/delete-protection"}));
  const json& request = claim["spec"]["devices"]["requests"][0];
  EXPECT_EQ(request.value("name", ""), "container-0-request-0");
  EXPECT_EQ(request["exactly"].value("deviceClassName", ""), "ext-gpu");
  EXPECT_EQ(request["exactly"].value("count", 0), 1);
  const json& results = claim["status"]["allocation"]["devices"]["results"];
  ASSERT_EQ(results.size(), 1u) << claim.dump();
  EXPECT_EQ(results[0].value("pool", ""), kNode);
  EXPECT_EQ(results[0].value("request", ""), "container-0-request-0");
  EXPECT_EQ(claim["status"]["reservedFor"][0].value("uid", ""), uid);
}

TEST_F(DraExtended, PodsNeverShareADeviceAndTheOneWithoutWaits) {
  auto& admin = TestCluster::get().admin();
  admin.post(std::string(kResourceApi) + "/resourceslices", slice(2));
  RunningScheduler sched;
  for (const char* name : {"a", "b", "c"}) {
    admin.post(std::string("/api/v1/namespaces/") + kNs + "/pods", gpuPod(name));
  }
  ASSERT_TRUE(
      eventually([&] { return waitAllBound(admin, kNs, 2, std::chrono::seconds(1)) >= 2; }));
  std::this_thread::sleep_for(std::chrono::seconds(2));  // the third would have bound by now
  std::set<std::string> devices;
  int bound = 0;
  for (const auto& p : listPods(admin, kNs)) {
    if (p.spec.nodeName.empty()) continue;
    ++bound;
  }
  EXPECT_EQ(bound, 2);
  for (const auto& [uid, claim] : claimsByPod(admin)) {
    for (const auto& r : claim["status"]["allocation"]["devices"]["results"]) {
      devices.insert(r.value("device", ""));
    }
  }
  EXPECT_EQ(devices, (std::set<std::string>{"gpu-0", "gpu-1"}));

  // `ksched explain` on the live cluster reads the slices, the class and the claims the
  // scheduler wrote: the waiting pod finds both devices in use.
  std::string waiting;
  for (const auto& p : listPods(admin, kNs)) {
    if (p.spec.nodeName.empty()) waiting = p.metadata.name;
  }
  const CliRun r = explainCli("-n " + std::string(kNs) + " " + waiting);
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("DynamicResources"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("all 2 matching devices of class \"ext-gpu\" are in use on this node"),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace ksched::testing
