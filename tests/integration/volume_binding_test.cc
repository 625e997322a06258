// VolumeBinding against the real apiserver and kube-controller-manager's PV controller:
// placements, claim bindings and annotations read back from the apiserver.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include <ksched/api/decode.h>
#include <ksched/api/pod.h>
#include <ksched/api/storage.h>

#include "cluster.h"
#include "objects.h"
#include "running_scheduler.h"
#include "scheduling.h"

namespace ksched::testing {
namespace {

using namespace std::chrono_literals;

nlohmann::json storageClassJson(const std::string& name, const std::string& provisioner,
                                const std::string& mode,
                                nlohmann::json allowedTopologies = nullptr) {
  nlohmann::json sc = {{"apiVersion", "storage.k8s.io/v1"},
                       {"kind", "StorageClass"},
                       {"metadata", {{"name", name}}},
                       {"provisioner", provisioner},
                       {"volumeBindingMode", mode}};
  if (!allowedTopologies.is_null()) sc["allowedTopologies"] = std::move(allowedTopologies);
  return sc;
}

nlohmann::json hostnameAffinity(const std::string& node) {
  return {
      {"required",
       {{"nodeSelectorTerms",
         {{{"matchExpressions",
            {{{"key", "kubernetes.io/hostname"}, {"operator", "In"}, {"values", {node}}}}}}}}}}};
}

nlohmann::json localPV(const std::string& name, const std::string& cls, const std::string& size,
                       const std::string& node) {
  return {{"apiVersion", "v1"},
          {"kind", "PersistentVolume"},
          {"metadata", {{"name", name}}},
          {"spec",
           {{"capacity", {{"storage", size}}},
            {"accessModes", {"ReadWriteOnce"}},
            {"persistentVolumeReclaimPolicy", "Retain"},
            {"storageClassName", cls},
            {"local", {{"path", "/mnt/" + name}}},
            {"nodeAffinity", hostnameAffinity(node)}}}};
}

nlohmann::json claimJson(const std::string& ns, const std::string& name, const std::string& cls,
                         const std::string& size) {
  return {{"apiVersion", "v1"},
          {"kind", "PersistentVolumeClaim"},
          {"metadata", {{"name", name}, {"namespace", ns}}},
          {"spec",
           {{"accessModes", {"ReadWriteOnce"}},
            {"storageClassName", cls},
            {"resources", {{"requests", {{"storage", size}}}}}}}};
}

nlohmann::json podWithClaim(const std::string& ns, const std::string& name,
                            const std::string& claim) {
  auto p = sizedPod(ns, name, "100m");
  p["spec"]["volumes"] = {{{"name", "data"}, {"persistentVolumeClaim", {{"claimName", claim}}}}};
  return p;
}

// The default profile with VolumeBinding's bind timeout cut to 60 s, so that a failing test does
// not hold the scheduler's shutdown for the default 600 s.
scheduler::Options volumeOptions() {
  scheduler::Options o = RunningScheduler::defaultOptions();
  o.profiles[0].pluginConfig.push_back({"VolumeBinding", {{"bindTimeoutSeconds", 60}}});
  return o;
}

class VolumeBindingIntegration : public NamespacedTest {
 protected:
  void SetUp() override {
    TestCluster::get().startControllerManager();
    auto& admin = TestCluster::get().admin();
    deleteAllNodes(admin);
    for (const char* zone : {"a", "b", "c"}) {
      const std::string name = std::string("vb-") + zone;
      admin.post("/api/v1/nodes",
                 nodeJson(name, {{"topology.kubernetes.io/zone", std::string("zone-") + zone}}));
    }
  }
  void TearDown() override {
    NamespacedTest::TearDown();
    auto& admin = TestCluster::get().admin();
    auto tryDelete = [&](const std::string& path) {
      try {
        admin.del(path);
      } catch (const client::ApiError& e) {
        if (!e.isNotFound()) ADD_FAILURE() << e.what();
      }
    };
    for (const auto& [ns, name] : claims_) {
      tryDelete("/api/v1/namespaces/" + ns + "/persistentvolumeclaims/" + name);
    }
    for (const auto& name : pvs_) tryDelete("/api/v1/persistentvolumes/" + name);
    for (const auto& name : classes_) tryDelete("/apis/storage.k8s.io/v1/storageclasses/" + name);
    for (const auto& path : others_) tryDelete(path);
  }
  // Creates `object` at `collection`; deleted again after the test at `collection`/name.
  void create(const std::string& collection, const nlohmann::json& object) {
    TestCluster::get().admin().post(collection, object);
    others_.push_back(collection + "/" + object["metadata"]["name"].get<std::string>());
  }

  void createClass(const nlohmann::json& sc) {
    TestCluster::get().admin().post("/apis/storage.k8s.io/v1/storageclasses", sc);
    classes_.push_back(sc["metadata"]["name"].get<std::string>());
  }
  void createPV(const nlohmann::json& pv) {
    TestCluster::get().admin().post("/api/v1/persistentvolumes", pv);
    pvs_.push_back(pv["metadata"]["name"].get<std::string>());
  }
  nlohmann::json createClaim(const nlohmann::json& pvc) {
    const std::string ns = pvc["metadata"]["namespace"].get<std::string>();
    claims_.emplace_back(ns, pvc["metadata"]["name"].get<std::string>());
    return TestCluster::get().admin().post("/api/v1/namespaces/" + ns + "/persistentvolumeclaims",
                                           pvc);
  }
  api::PersistentVolumeClaim getClaim(const std::string& ns, const std::string& name) {
    return api::decode<api::PersistentVolumeClaim>(TestCluster::get().admin().get(
        "/api/v1/namespaces/" + ns + "/persistentvolumeclaims/" + name));
  }
  // The node ksched wrote into the claim's volume.kubernetes.io/selected-node within 30 s ("" if
  // none).
  std::string selectedNode(const std::string& ns, const std::string& claim) {
    std::string selected;
    EXPECT_TRUE(eventually(
        [&] {
          auto pvc = getClaim(ns, claim);
          auto it = pvc.metadata.annotations.find(api::kAnnSelectedNode);
          if (it == pvc.metadata.annotations.end()) return false;
          selected = it->second;
          return true;
        },
        30s));
    return selected;
  }
  api::Pod getPod(const std::string& ns, const std::string& name) {
    return api::decode<api::Pod>(
        TestCluster::get().admin().get("/api/v1/namespaces/" + ns + "/pods/" + name));
  }

 private:
  std::vector<std::pair<std::string, std::string>> claims_;
  std::vector<std::string> pvs_;
  std::vector<std::string> classes_;
  std::vector<std::string> others_;
};

// A local PV on vb-b, a WaitForFirstConsumer class without provisioner: the pod can only go to
// vb-b, and the PV controller binds the claim to that PV once ksched wrote its claimRef.
TEST_F(VolumeBindingIntegration, StaticLocalVolumeDecidesTheNode) {
  auto& admin = TestCluster::get().admin();
  const std::string ns = useNamespace("vb-static");
  createClass(storageClassJson("vb-local", "kubernetes.io/no-provisioner", "WaitForFirstConsumer"));
  createPV(localPV("vb-local-b", "vb-local", "1Gi", "vb-b"));
  // Too small for the claim, on another node.
  createPV(localPV("vb-local-a-small", "vb-local", "100Mi", "vb-a"));
  createClaim(claimJson(ns, "data", "vb-local", "500Mi"));
  RunningScheduler sched(volumeOptions());
  admin.post("/api/v1/namespaces/" + ns + "/pods", podWithClaim(ns, "web", "data"));
  ASSERT_EQ(waitAllBound(admin, ns, 1, 60s), 1u);
  EXPECT_EQ(getPod(ns, "web").spec.nodeName, "vb-b");
  api::PersistentVolumeClaim pvc = getClaim(ns, "data");
  EXPECT_EQ(pvc.status.phase, "Bound");
  EXPECT_EQ(pvc.spec.volumeName, "vb-local-b");
  auto pv = api::decode<api::PersistentVolume>(admin.get("/api/v1/persistentvolumes/vb-local-b"));
  ASSERT_TRUE(pv.spec.claimRef.has_value());
  EXPECT_EQ(pv.spec.claimRef->name, "data");
  EXPECT_EQ(pv.spec.claimRef->namespace_, ns);
  EXPECT_EQ(pv.spec.claimRef->uid, pvc.metadata.uid);
  EXPECT_EQ(pv.status.phase, "Bound");
}

// An Immediate class that nothing provisions: the claim stays Pending and the pod is rejected
// by VolumeBinding's PreFilter with upstream's message.
TEST_F(VolumeBindingIntegration, UnboundImmediateClaimKeepsThePodPending) {
  auto& admin = TestCluster::get().admin();
  const std::string ns = useNamespace("vb-immediate");
  createClass(storageClassJson("vb-immediate", "example.com/nobody", "Immediate"));
  createClaim(claimJson(ns, "data", "vb-immediate", "1Gi"));
  RunningScheduler sched(volumeOptions());
  admin.post("/api/v1/namespaces/" + ns + "/pods", podWithClaim(ns, "web", "data"));
  const std::string want =
      "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/3 "
      "nodes are available: 3 Preemption is not helpful for scheduling.";
  std::string got;
  EXPECT_TRUE(eventually(
      [&] {
        const api::Pod pod = getPod(ns, "web");
        const auto* c = pod.condition("PodScheduled");
        if (c == nullptr) return false;
        got = c->status + " " + c->reason + " " + c->message;
        return c->status == "False" && c->message == want;
      },
      30s))
      << got;
  EXPECT_TRUE(getPod(ns, "web").spec.nodeName.empty());
}

// A WaitForFirstConsumer class with a provisioner that only serves zone-c: ksched selects vb-c
// on the claim; the test then plays the provisioner and the pod binds once the PV controller
// has bound the claim.
TEST_F(VolumeBindingIntegration, DynamicProvisioningSelectsTheNode) {
  auto& admin = TestCluster::get().admin();
  const std::string ns = useNamespace("vb-dynamic");
  createClass(
      storageClassJson("vb-dynamic", "example.com/fake-provisioner", "WaitForFirstConsumer",
                       {{{"matchLabelExpressions",
                          {{{"key", "topology.kubernetes.io/zone"}, {"values", {"zone-c"}}}}}}}));
  auto claim = createClaim(claimJson(ns, "data", "vb-dynamic", "1Gi"));
  RunningScheduler sched(volumeOptions());
  admin.post("/api/v1/namespaces/" + ns + "/pods", podWithClaim(ns, "web", "data"));
  const std::string selected = selectedNode(ns, "data");
  EXPECT_EQ(selected, "vb-c");
  // Not bound yet: PreBind waits for the volume.
  EXPECT_TRUE(getPod(ns, "web").spec.nodeName.empty());

  auto pv = localPV("vb-provisioned", "vb-dynamic", "1Gi", selected);
  pv["metadata"]["annotations"] = {
      {"pv.kubernetes.io/provisioned-by", "example.com/fake-provisioner"}};
  pv["spec"]["persistentVolumeReclaimPolicy"] = "Delete";
  pv["spec"]["claimRef"] = {{"kind", "PersistentVolumeClaim"},
                            {"apiVersion", "v1"},
                            {"namespace", ns},
                            {"name", "data"},
                            {"uid", claim["metadata"]["uid"]}};
  createPV(pv);
  ASSERT_EQ(waitAllBound(admin, ns, 1, 60s), 1u);
  EXPECT_EQ(getPod(ns, "web").spec.nodeName, "vb-c");
  auto pvc = getClaim(ns, "data");
  EXPECT_EQ(pvc.status.phase, "Bound");
  EXPECT_EQ(pvc.spec.volumeName, "vb-provisioned");
}

// Storage capacity on the real apiserver (its CSIStorageCapacity v1alpha1 and CSIDriver
// storageCapacity, which the test control plane turns on): a 20Gi claim of a driver that reports
// capacity is not provisioned on vb-a (5Gi free) and goes to vb-b (100Gi) rather than vb-c
// (50Gi): StorageCapacityScoring prefers the most free storage. ksched writes the selected node.
TEST_F(VolumeBindingIntegration, StorageCapacityDecidesWhereAClaimIsProvisioned) {
  const std::string ns = useNamespace("vb-capacity");
  const std::string driver = "vb-capacity.csi.example.com";
  create("/apis/storage.k8s.io/v1/csidrivers",
         {{"apiVersion", "storage.k8s.io/v1"},
          {"kind", "CSIDriver"},
          {"metadata", {{"name", driver}}},
          {"spec", {{"attachRequired", false}, {"storageCapacity", true}}}});
  createClass(storageClassJson("vb-capacity", driver, "WaitForFirstConsumer"));
  for (const auto& [zone, size] : std::vector<std::pair<std::string, std::string>>{
           {"a", "5Gi"}, {"b", "100Gi"}, {"c", "50Gi"}}) {
    create("/apis/storage.k8s.io/v1alpha1/namespaces/" + ns + "/csistoragecapacities",
           {{"apiVersion", "storage.k8s.io/v1alpha1"},
            {"kind", "CSIStorageCapacity"},
            {"metadata", {{"name", "vb-" + zone}, {"namespace", ns}}},
            {"storageClassName", "vb-capacity"},
            {"nodeTopology", {{"matchLabels", {{"topology.kubernetes.io/zone", "zone-" + zone}}}}},
            {"capacity", size}});
  }
  // The apiserver kept the driver's opt-in (it drops the field without the gate).
  ASSERT_EQ(
      TestCluster::get().admin().get("/apis/storage.k8s.io/v1/csidrivers/" + driver)["spec"].value(
          "storageCapacity", false),
      true);
  createClaim(claimJson(ns, "data", "vb-capacity", "20Gi"));
  RunningScheduler sched(volumeOptions());
  auto& admin = TestCluster::get().admin();
  admin.post("/api/v1/namespaces/" + ns + "/pods", podWithClaim(ns, "db", "data"));
  const std::string selected = selectedNode(ns, "data");
  EXPECT_EQ(selected, "vb-b");

  // A claim no node has room for: the pod stays pending with upstream's reason on every node.
  createClaim(claimJson(ns, "huge", "vb-capacity", "200Gi"));
  admin.post("/api/v1/namespaces/" + ns + "/pods", podWithClaim(ns, "huge", "huge"));
  std::string message;
  ASSERT_TRUE(eventually(
      [&] {
        for (const auto& c : getPod(ns, "huge").status.conditions) {
          if (c.type == "PodScheduled" && c.status == "False") message = c.message;
        }
        return !message.empty();
      },
      30s));
  EXPECT_EQ(message,
            "0/3 nodes are available: 3 node(s) did not have enough free storage. preemption: 0/3 "
            "nodes are available: 3 Preemption is not helpful for scheduling.");
}

}  // namespace
}  // namespace ksched::testing
