// The volume plugins (NodeVolumeLimits, VolumeZone, VolumeRestrictions) against the real
// apiserver: CSINodes, PVs and PVCs created through the API, placements read back from it.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include <ksched/api/decode.h>
#include <ksched/api/pod.h>

#include "client/errors.h"
#include "cluster.h"
#include "objects.h"
#include "running_scheduler.h"
#include "scheduling.h"

namespace ksched::testing {
namespace {

constexpr char kDriver[] = "test.csi.example.com";
constexpr char kZoneDriver[] = "zone.csi.example.com";
constexpr char kZoneLabel[] = "topology.kubernetes.io/zone";

nlohmann::json zonedNode(const std::string& name, const std::string& zone) {
  auto n = sizedNode(name, "4", "16Gi");
  n["metadata"]["labels"] = {{"kubernetes.io/hostname", name}, {kZoneLabel, zone}};
  return n;
}

nlohmann::json csiNode(const std::string& node, int count) {
  return {{"apiVersion", "storage.k8s.io/v1"},
          {"kind", "CSINode"},
          {"metadata", {{"name", node}}},
          {"spec",
           {{"drivers",
             {{{"name", kDriver}, {"nodeID", node}, {"allocatable", {{"count", count}}}}}}}}};
}

// A PV of `driver` pre-bound to ns/claim, and the claim naming it.
void createBoundClaim(RestClient& c, const std::string& ns, const std::string& claim,
                      const std::string& pv, const std::string& driver,
                      nlohmann::json pvLabels = nlohmann::json::object()) {
  c.post("/api/v1/persistentvolumes",
         {{"apiVersion", "v1"},
          {"kind", "PersistentVolume"},
          {"metadata", {{"name", pv}, {"labels", std::move(pvLabels)}}},
          {"spec",
           {{"capacity", {{"storage", "1Gi"}}},
            {"accessModes", {"ReadWriteOnce"}},
            {"persistentVolumeReclaimPolicy", "Retain"},
            {"storageClassName", ""},
            {"claimRef", {{"namespace", ns}, {"name", claim}}},
            {"csi", {{"driver", driver}, {"volumeHandle", pv + "-handle"}}}}}});
  c.post("/api/v1/namespaces/" + ns + "/persistentvolumeclaims",
         {{"apiVersion", "v1"},
          {"kind", "PersistentVolumeClaim"},
          {"metadata", {{"name", claim}, {"namespace", ns}}},
          {"spec",
           {{"accessModes", {"ReadWriteOnce"}},
            {"storageClassName", ""},
            {"volumeName", pv},
            {"resources", {{"requests", {{"storage", "1Gi"}}}}}}}});
}

nlohmann::json podWithClaim(const std::string& ns, const std::string& name,
                            const std::string& claim) {
  auto p = sizedPod(ns, name, "100m");
  p["spec"]["volumes"] = {{{"name", "data"}, {"persistentVolumeClaim", {{"claimName", claim}}}}};
  return p;
}

std::string nodeOf(RestClient& c, const std::string& ns, const std::string& pod) {
  return api::decode<api::Pod>(c.get("/api/v1/namespaces/" + ns + "/pods/" + pod)).spec.nodeName;
}

void deleteIgnoringNotFound(RestClient& c, const std::string& path) {
  try {
    c.del(path);
  } catch (const client::ApiError& e) {
    if (!e.isNotFound()) throw;
  }
}

class VolumePluginsIntegration : public NamespacedTest {
 protected:
  void SetUp() override { deleteAllNodes(TestCluster::get().admin()); }
  void TearDown() override {
    NamespacedTest::TearDown();
    auto& admin = TestCluster::get().admin();
    for (const auto& path : cleanup_) deleteIgnoringNotFound(admin, path);
  }
  // Cluster-scoped objects to delete after the test.
  std::vector<std::string> cleanup_;
};

// Node A allows 1 volume of the driver, node B 3: four pods with one volume each fill both,
// a fifth fits nowhere, and a pod reusing a volume already attached on A still fits there.
TEST_F(VolumePluginsIntegration, CSIVolumeLimitsPerNode) {
  auto& admin = TestCluster::get().admin();
  const std::string ns = useNamespace("vol-limits");
  admin.post("/api/v1/nodes", zonedNode("vol-a", "zone-1"));
  admin.post("/api/v1/nodes", zonedNode("vol-b", "zone-1"));
  admin.post("/apis/storage.k8s.io/v1/csinodes", csiNode("vol-a", 1));
  admin.post("/apis/storage.k8s.io/v1/csinodes", csiNode("vol-b", 3));
  cleanup_.push_back("/apis/storage.k8s.io/v1/csinodes/vol-a");
  cleanup_.push_back("/apis/storage.k8s.io/v1/csinodes/vol-b");
  for (int i = 0; i < 5; ++i) {
    const std::string n = std::to_string(i);
    createBoundClaim(admin, ns, "claim-" + n, "vol-limits-pv-" + n, kDriver);
    cleanup_.push_back("/api/v1/persistentvolumes/vol-limits-pv-" + n);
  }
  RunningScheduler sched;
  for (int i = 0; i < 4; ++i) {
    const std::string n = std::to_string(i);
    admin.post("/api/v1/namespaces/" + ns + "/pods", podWithClaim(ns, "p" + n, "claim-" + n));
  }
  ASSERT_EQ(waitAllBound(admin, ns, 4), 4u);
  std::map<std::string, int> perNode;
  std::string onA;
  for (const auto& p : listPods(admin, ns)) {
    ++perNode[p.spec.nodeName];
    if (p.spec.nodeName == "vol-a") onA = p.spec.volumes.at(0).persistentVolumeClaim->claimName;
  }
  EXPECT_EQ(perNode, (std::map<std::string, int>{{"vol-a", 1}, {"vol-b", 3}}));
  ASSERT_FALSE(onA.empty());

  admin.post("/api/v1/namespaces/" + ns + "/pods", podWithClaim(ns, "p4", "claim-4"));
  EXPECT_TRUE(eventually([&] {
    auto q = api::decode<api::Pod>(admin.get("/api/v1/namespaces/" + ns + "/pods/p4"));
    const auto* c = q.condition("PodScheduled");
    return c != nullptr && c->status == "False" &&
           c->message.starts_with("0/2 nodes are available: 2 node(s) exceed max volume count.");
  })) << admin.get("/api/v1/namespaces/" + ns + "/pods/p4")["status"].dump();
  EXPECT_EQ(nodeOf(admin, ns, "p4"), "");

  // The volume of A's pod is attached there already: a second pod using it does not count it
  // again and fits only on A (B is full).
  admin.post("/api/v1/namespaces/" + ns + "/pods", podWithClaim(ns, "again", onA));
  EXPECT_TRUE(eventually([&] { return nodeOf(admin, ns, "again") == "vol-a"; }));
  EXPECT_EQ(nodeOf(admin, ns, "p4"), "");
}

// Each PV is labelled with one zone: its pod lands on the node of that zone.
TEST_F(VolumePluginsIntegration, VolumeZoneSendsPodsToTheirVolumesZone) {
  auto& admin = TestCluster::get().admin();
  const std::string ns = useNamespace("vol-zone");
  admin.post("/api/v1/nodes", zonedNode("zone-a-node", "zone-a"));
  admin.post("/api/v1/nodes", zonedNode("zone-b-node", "zone-b"));
  for (const std::string zone : {"zone-a", "zone-b"}) {
    createBoundClaim(admin, ns, "claim-" + zone, "vol-zone-pv-" + zone, kZoneDriver,
                     {{kZoneLabel, zone}});
    cleanup_.push_back("/api/v1/persistentvolumes/vol-zone-pv-" + zone);
  }
  RunningScheduler sched;
  for (int i = 0; i < 3; ++i) {
    for (const std::string zone : {"zone-a", "zone-b"}) {
      admin.post("/api/v1/namespaces/" + ns + "/pods",
                 podWithClaim(ns, zone + "-" + std::to_string(i), "claim-" + zone));
    }
  }
  ASSERT_EQ(waitAllBound(admin, ns, 6), 6u);
  for (const auto& p : listPods(admin, ns)) {
    EXPECT_EQ(p.spec.nodeName, p.metadata.name.substr(0, 6) + "-node") << p.metadata.name;
  }
}

// The same GCE persistent disk mounted read-write by two pods: never on the same node, and a
// third such pod fits nowhere (v1.20's apiserver has no ReadWriteOncePod access mode, so that
// part of VolumeRestrictions is covered by unit tests only).
TEST_F(VolumePluginsIntegration, SameGCEDiskConflictsOnANode) {
  auto& admin = TestCluster::get().admin();
  const std::string ns = useNamespace("vol-disk");
  admin.post("/api/v1/nodes", zonedNode("disk-a", "zone-1"));
  admin.post("/api/v1/nodes", zonedNode("disk-b", "zone-1"));
  RunningScheduler sched;
  auto withDisk = [&](const std::string& name) {
    auto p = sizedPod(ns, name, "100m");
    p["spec"]["volumes"] = {
        {{"name", "disk"}, {"gcePersistentDisk", {{"pdName", "shared-disk"}, {"fsType", "ext4"}}}}};
    return p;
  };
  admin.post("/api/v1/namespaces/" + ns + "/pods", withDisk("d0"));
  admin.post("/api/v1/namespaces/" + ns + "/pods", withDisk("d1"));
  ASSERT_EQ(waitAllBound(admin, ns, 2), 2u);
  EXPECT_NE(nodeOf(admin, ns, "d0"), nodeOf(admin, ns, "d1"));
  admin.post("/api/v1/namespaces/" + ns + "/pods", withDisk("d2"));
  EXPECT_TRUE(eventually([&] {
    auto q = api::decode<api::Pod>(admin.get("/api/v1/namespaces/" + ns + "/pods/d2"));
    const auto* c = q.condition("PodScheduled");
    return c != nullptr && c->status == "False" &&
           c->message.starts_with("0/2 nodes are available: 2 node(s) had no available disk.");
  })) << admin.get("/api/v1/namespaces/" + ns + "/pods/d2")["status"].dump();
  EXPECT_EQ(nodeOf(admin, ns, "d2"), "");
}

}  // namespace
}  // namespace ksched::testing
