#include "plugins/non_csi_volume_limits/non_csi_volume_limits.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <ksched/api/storage.h>

#include "tests/support/hint_test_util.h"
#include "tests/support/plugin_test_util.h"

namespace ksched::plugins {
namespace {

using testutil::NodeWrapper;
using testutil::PodWrapper;

constexpr char kExceeded[] = "node(s) exceed max volume count";
constexpr auto kEBS = InTreeVolumeType::kAWSEBS;
constexpr auto kGCE = InTreeVolumeType::kGCEPD;
constexpr auto kAzure = InTreeVolumeType::kAzureDisk;
constexpr auto kCinder = InTreeVolumeType::kCinder;

// v1.20's filter names, which its tests use as StorageClass names and in object names.
std::string filterName(InTreeVolumeType t) {
  switch (t) {
    case InTreeVolumeType::kAWSEBS:
      return "EBS";
    case InTreeVolumeType::kGCEPD:
      return "GCE";
    case InTreeVolumeType::kAzureDisk:
      return "AzureDisk";
    case InTreeVolumeType::kCinder:
      return "Cinder";
  }
  return "";
}

// A pod with one volume per entry: "ebs:<id>", "gce:<pd>", "azure:<disk>", "cinder:<id>",
// "pvc:<claim>", or "host" (a volume of no counted source).
api::Pod podWith(const std::vector<std::string>& volumes, const std::string& name = "pod") {
  api::Pod p = PodWrapper(name).obj();
  for (const auto& spec : volumes) {
    api::Volume v;
    v.name = "v" + std::to_string(p.spec.volumes.size());
    const std::string arg = spec.substr(spec.find(':') + 1);
    if (spec.starts_with("ebs:")) {
      v.awsElasticBlockStore = api::AWSElasticBlockStoreVolumeSource{arg, 0, false};
    } else if (spec.starts_with("gce:")) {
      v.gcePersistentDisk = api::GCEPersistentDiskVolumeSource{arg, 0, false};
    } else if (spec.starts_with("azure:")) {
      v.azureDisk = api::AzureDiskVolumeSource{arg, "uri-" + arg, false};
    } else if (spec.starts_with("cinder:")) {
      v.cinder = api::CinderVolumeSource{arg, false};
    } else if (spec.starts_with("pvc:")) {
      v.persistentVolumeClaim = api::PersistentVolumeClaimVolumeSource{arg, false};
    }
    p.spec.volumes.push_back(std::move(v));
  }
  return p;
}

std::shared_ptr<NodeInfo> nodeWithPods(const NodeWrapper& node, const std::vector<api::Pod>& pods) {
  auto ni = testutil::makeNodeInfo(node);
  int i = 0;
  for (api::Pod p : pods) {
    p.metadata.name = "existing-" + std::to_string(i);
    p.metadata.uid = "existing-uid-" + std::to_string(i++);
    p.spec.nodeName = node.obj().metadata.name;
    ni->addPod(std::make_shared<const PodInfo>(std::make_shared<const api::Pod>(std::move(p)), features::Gates{}));
  }
  return ni;
}

api::PersistentVolumeClaim pvc(std::string name, std::string volumeName,
                               std::optional<std::string> storageClass) {
  api::PersistentVolumeClaim c;
  c.metadata.name = std::move(name);
  c.metadata.namespace_ = "default";
  c.spec.volumeName = std::move(volumeName);
  c.spec.storageClassName = std::move(storageClass);
  return c;
}

// v1.20's getFakePVCLister, getFakePVLister and getFakeCSIStorageClassLister: every bound PV is
// an EBS volume, whatever the filter (so the GCE and Azure tables count no PVC).
void addV120Objects(StaticClusterListers& l, InTreeVolumeType t, const std::string& provisioner) {
  const std::string f = filterName(t);
  l.add(pvc("some" + f + "Vol", "some" + f + "Vol", f));
  l.add(pvc("someNon" + f + "Vol", "someNon" + f + "Vol", f));
  l.add(pvc("pvcWithDeletedPV", "pvcWithDeletedPV", f));
  l.add(pvc("anotherPVCWithDeletedPV", "anotherPVCWithDeletedPV", f));
  l.add(pvc("unboundPVC", "", f));
  l.add(pvc("anotherUnboundPVC", "", f));
  l.add(pvc("unboundPVCwithDefaultSCPod", "", "standard-sc"));
  l.add(pvc("unboundPVCwithInvalidSCPod", "", "invalid-sc"));
  api::PersistentVolume some;
  some.metadata.name = "some" + f + "Vol";
  std::string id = f + "Vol";
  std::transform(id.begin(), id.end(), id.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  some.spec.awsElasticBlockStore = api::AWSElasticBlockStoreVolumeSource{id, 0, false};
  l.add(some);
  api::PersistentVolume none;
  none.metadata.name = "someNon" + f + "Vol";
  l.add(none);
  api::StorageClass sc;
  sc.metadata.name = f;
  sc.provisioner = provisioner;
  l.add(sc);
}

// v1.20's test pods.
struct Pods {
  api::Pod oneVol = podWith({"ebs:ovp"});
  api::Pod twoVol = podWith({"ebs:tvp1", "ebs:tvp2"});
  api::Pod splitVols = podWith({"host", "ebs:svp"});
  api::Pod nonApplicable = podWith({"host"});
  api::Pod deletedPVC = podWith({"pvc:deletedPVC"});
  api::Pod twoDeletedPVC = podWith({"pvc:deletedPVC", "pvc:anotherDeletedPVC"});
  api::Pod deletedPV = podWith({"pvc:pvcWithDeletedPV"});
  api::Pod deletedPV2 = podWith({"pvc:pvcWithDeletedPV"});
  api::Pod anotherDeletedPV = podWith({"pvc:anotherPVCWithDeletedPV"});
  api::Pod empty = podWith({});
  api::Pod unboundPVC = podWith({"pvc:unboundPVC"});
  api::Pod unboundPVC2 = podWith({"pvc:unboundPVC"});
  api::Pod anotherUnboundPVC = podWith({"pvc:anotherUnboundPVC"});
  api::Pod unboundPVCwithInvalidSC = podWith({"pvc:unboundPVCwithInvalidSCPod"});
  api::Pod unboundPVCwithDefaultSC = podWith({"pvc:unboundPVCwithDefaultSCPod"});
  api::Pod twoVolCinder = podWith({"cinder:tvp1", "cinder:tvp2"});
  api::Pod oneVolCinder = podWith({"cinder:ovp"});

  [[nodiscard]] static api::Pod onePVC(InTreeVolumeType t) {
    return podWith({"pvc:some" + filterName(t) + "Vol"});
  }
  [[nodiscard]] static api::Pod splitPVC(InTreeVolumeType t) {
    return podWith({"pvc:someNon" + filterName(t) + "Vol", "pvc:some" + filterName(t) + "Vol"});
  }
};

struct Case {
  std::string name;
  api::Pod newPod;
  std::vector<api::Pod> existingPods;
  int64_t maxVols;  // node allocatable of the type's limit key
  bool wantUnschedulable;
};

// Runs `cases` for `type` with v1.20's objects (StorageClass `provisioner`).
void runTable(InTreeVolumeType type, const std::string& provisioner,
              const std::vector<Case>& cases) {
  testutil::FakeHandle h;
  addV120Objects(h.mutableListers(), type, provisioner);
  NonCSIVolumeLimits pl(type, h.listers(), std::nullopt, "prefix");
  for (const Case& c : cases) {
    SCOPED_TRACE(filterName(type) + ": " + c.name);
    auto ni = nodeWithPods(NodeWrapper("node-for-max-pd-test-1")
                               .capacity({{std::string(NonCSIVolumeLimits::limitKey(type)),
                                           std::to_string(c.maxVols)}}),
                           c.existingPods);
    CycleState state;
    const Status s = pl.filter(state, c.newPod, *ni);
    if (c.wantUnschedulable) {
      EXPECT_EQ(s.code(), Code::kUnschedulable);
      EXPECT_EQ(s.message(), kExceeded);
    } else {
      EXPECT_TRUE(s.ok()) << s.message();
    }
  }
}

// v1.20 TestEBSLimits.
TEST(NonCSIVolumeLimitsTest, EBSLimits) {
  const Pods p;
  const api::Pod onePVC = Pods::onePVC(kEBS);
  runTable(
      kEBS, "kubernetes.io/aws-ebs",
      {
          {"fits when node capacity >= new pod's EBS volumes",
           p.oneVol,
           {p.twoVol, p.oneVol},
           4,
           false},
          {"doesn't fit when node capacity < new pod's EBS volumes", p.twoVol, {p.oneVol}, 2, true},
          {"new pod's count ignores non-EBS volumes", p.splitVols, {p.twoVol}, 3, false},
          {"existing pods' counts ignore non-EBS volumes",
           p.twoVol,
           {p.splitVols, p.nonApplicable, p.empty},
           3,
           false},
          {"new pod's count considers PVCs backed by EBS volumes",
           onePVC,
           {p.splitVols, p.nonApplicable, p.empty},
           3,
           false},
          {"new pod's count ignores PVCs not backed by EBS volumes",
           Pods::splitPVC(kEBS),
           {p.splitVols, p.oneVol},
           3,
           false},
          {"existing pods' counts considers PVCs backed by EBS volumes",
           p.twoVol,
           {p.oneVol, onePVC},
           3,
           true},
          {"already-mounted EBS volumes are always ok to allow",
           p.twoVol,
           {p.oneVol, p.twoVol, onePVC},
           4,
           false},
          {"the same EBS volumes are not counted multiple times",
           p.splitVols,
           {p.oneVol, p.oneVol, onePVC},
           3,
           false},
          {"missing PVC is not counted towards the PV limit (1)",
           onePVC,
           {p.oneVol, p.deletedPVC},
           1,
           true},
          {"missing PVC is not counted towards the PV limit (2)",
           onePVC,
           {p.oneVol, p.deletedPVC},
           2,
           false},
          {"two missing PVCs are not counted towards the PV limit twice",
           onePVC,
           {p.oneVol, p.twoDeletedPVC},
           2,
           false},
          {"unbound PVC with invalid SC is not counted towards the PV limit",
           p.unboundPVCwithInvalidSC,
           {p.oneVol},
           1,
           false},
          {"unbound PVC from different provisioner is not counted towards the PV limit",
           p.unboundPVCwithDefaultSC,
           {p.oneVol},
           1,
           false},
          {"pod with missing PV is counted towards the PV limit (2)",
           onePVC,
           {p.oneVol, p.deletedPV},
           2,
           true},
          {"pod with missing PV is counted towards the PV limit (3)",
           onePVC,
           {p.oneVol, p.deletedPV},
           3,
           false},
          {"two pods missing the same PV are counted towards the PV limit only once",
           p.deletedPV2,
           {p.oneVol, p.deletedPV},
           2,
           false},
          {"two pods missing different PVs are counted towards the PV limit twice",
           p.anotherDeletedPV,
           {p.oneVol, p.deletedPV},
           2,
           true},
          {"pod with unbound PVC is counted towards the PV limit (2)",
           onePVC,
           {p.oneVol, p.unboundPVC},
           2,
           true},
          {"pod with unbound PVC is counted towards the PV limit (3)",
           onePVC,
           {p.oneVol, p.unboundPVC},
           3,
           false},
          {"the same unbound PVC in multiple pods is counted towards the PV limit only once",
           p.unboundPVC2,
           {p.oneVol, p.unboundPVC},
           2,
           false},
          {"two different unbound PVCs are counted towards the PV limit as two volumes",
           p.anotherUnboundPVC,
           {p.oneVol, p.unboundPVC},
           2,
           true},
      });
}

// v1.20 TestGCEPDLimits and TestAzureDiskLimits: one table. Their pods use EBS volumes and the
// StorageClass has no provisioner, so nothing is counted and every case fits.
std::vector<Case> gceAndAzureCases(InTreeVolumeType t) {
  const Pods p;
  const api::Pod onePVC = Pods::onePVC(t);
  return {
      {"fits when node capacity >= new pod's volumes", p.oneVol, {p.twoVol, p.oneVol}, 4, false},
      {"fit when node capacity < new pod's volumes", p.twoVol, {p.oneVol}, 2, false},
      {"new pod's count ignores volumes of other types", p.splitVols, {p.twoVol}, 3, false},
      {"existing pods' counts ignore volumes of other types",
       p.twoVol,
       {p.splitVols, p.nonApplicable, p.empty},
       3,
       false},
      {"new pod's count considers PVCs backed by volumes of the type",
       onePVC,
       {p.splitVols, p.nonApplicable, p.empty},
       3,
       false},
      {"new pod's count ignores PVCs not backed by volumes of the type",
       Pods::splitPVC(t),
       {p.splitVols, p.oneVol},
       3,
       false},
      {"existing pods' counts considers PVCs backed by volumes of the type",
       p.twoVol,
       {p.oneVol, onePVC},
       3,
       false},
      {"already-mounted volumes are always ok to allow",
       p.twoVol,
       {p.oneVol, p.twoVol, onePVC},
       4,
       false},
      {"the same volumes are not counted multiple times",
       p.splitVols,
       {p.oneVol, p.oneVol, onePVC},
       3,
       false},
      {"pod with missing PVC (2)", onePVC, {p.oneVol, p.deletedPVC}, 2, false},
      {"pod with missing PVC (3)", onePVC, {p.oneVol, p.deletedPVC}, 3, false},
      {"pod with missing two PVCs", onePVC, {p.oneVol, p.twoDeletedPVC}, 3, false},
      {"pod with missing PV (2)", onePVC, {p.oneVol, p.deletedPV}, 2, false},
      {"pod with missing PV (3)", onePVC, {p.oneVol, p.deletedPV}, 3, false},
      {"two pods missing the same PV", p.deletedPV2, {p.oneVol, p.deletedPV}, 2, false},
      {"two pods missing different PVs", p.anotherDeletedPV, {p.oneVol, p.deletedPV}, 2, false},
      {"pod with unbound PVC (2)", onePVC, {p.oneVol, p.unboundPVC}, 2, false},
      {"pod with unbound PVC (3)", onePVC, {p.oneVol, p.unboundPVC}, 3, false},
      {"the same unbound PVC in multiple pods", p.unboundPVC2, {p.oneVol, p.unboundPVC}, 2, false},
      {"two different unbound PVCs", p.anotherUnboundPVC, {p.oneVol, p.unboundPVC}, 2, false},
  };
}

TEST(NonCSIVolumeLimitsTest, GCEPDLimits) { runTable(kGCE, "", gceAndAzureCases(kGCE)); }

TEST(NonCSIVolumeLimitsTest, AzureDiskLimits) { runTable(kAzure, "", gceAndAzureCases(kAzure)); }

// v1.20 TestCinderLimits.
TEST(NonCSIVolumeLimitsTest, CinderLimits) {
  const Pods p;
  runTable(kCinder, "",
           {
               {"fits when node capacity >= new pod's Cinder volumes",
                p.oneVolCinder,
                {p.twoVolCinder},
                4,
                false},
               {"not fit when node capacity < new pod's Cinder volumes",
                p.oneVolCinder,
                {p.twoVolCinder},
                2,
                true},
           });
}

// Each type counts its own sources, inline and through PVs, and a claim not bound yet by its
// in-tree provisioner.
TEST(NonCSIVolumeLimitsTest, EachTypeCountsItsOwnSources) {
  struct TypeCase {
    InTreeVolumeType type;
    std::string inlineA, inlineB, provisioner;
    void (*setPV)(api::PersistentVolume&, const std::string&);
  };
  const std::vector<TypeCase> types = {
      {kEBS, "ebs:a", "ebs:b", "kubernetes.io/aws-ebs",
       [](api::PersistentVolume& pv, const std::string& id) {
         pv.spec.awsElasticBlockStore = api::AWSElasticBlockStoreVolumeSource{id, 0, false};
       }},
      {kGCE, "gce:a", "gce:b", "kubernetes.io/gce-pd",
       [](api::PersistentVolume& pv, const std::string& id) {
         pv.spec.gcePersistentDisk = api::GCEPersistentDiskVolumeSource{id, 0, false};
       }},
      {kAzure, "azure:a", "azure:b", "kubernetes.io/azure-disk",
       [](api::PersistentVolume& pv, const std::string& id) {
         pv.spec.azureDisk = api::AzureDiskVolumeSource{id, "uri", false};
       }},
      {kCinder, "cinder:a", "cinder:b", "kubernetes.io/cinder",
       [](api::PersistentVolume& pv, const std::string& id) {
         pv.spec.cinder = api::CinderVolumeSource{id, false};
       }},
  };
  for (const TypeCase& t : types) {
    SCOPED_TRACE(filterName(t.type));
    testutil::FakeHandle h;
    api::PersistentVolume pv;
    pv.metadata.name = "pv-a";
    t.setPV(pv, "a");  // the same disk as the inline volume "a"
    h.mutableListers().add(pv);
    h.mutableListers().add(pvc("bound-a", "pv-a", std::nullopt));
    h.mutableListers().add(pvc("unbound", "", "in-tree"));
    h.mutableListers().add(pvc("unbound-other", "", "other"));
    api::StorageClass inTree;
    inTree.metadata.name = "in-tree";
    inTree.provisioner = t.provisioner;
    h.mutableListers().add(inTree);
    api::StorageClass other;
    other.metadata.name = "other";
    other.provisioner = "example.com/csi";
    h.mutableListers().add(other);
    NonCSIVolumeLimits pl(t.type, h.listers(), std::nullopt, "prefix");
    EXPECT_EQ(pl.name(), std::string(t.type == kEBS     ? "EBSLimits"
                                     : t.type == kGCE   ? "GCEPDLimits"
                                     : t.type == kAzure ? "AzureDiskLimits"
                                                        : "CinderLimits"));
    const NodeWrapper node =
        NodeWrapper("n").capacity({{std::string(NonCSIVolumeLimits::limitKey(t.type)), "2"}});
    CycleState state;
    // "a" (inline) and the PV of "bound-a" are the same disk: 2 volumes with "b".
    auto ni = nodeWithPods(node, {podWith({t.inlineA}), podWith({"pvc:bound-a"})});
    EXPECT_TRUE(pl.filter(state, podWith({t.inlineB}), *ni).ok());
    // The unbound claim of the in-tree class is a third volume.
    EXPECT_EQ(pl.filter(state, podWith({t.inlineB, "pvc:unbound"}), *ni).code(),
              Code::kUnschedulable);
    // A claim of another provisioner is not counted.
    EXPECT_TRUE(pl.filter(state, podWith({t.inlineB, "pvc:unbound-other"}), *ni).ok());
    // Volumes of the other types are not counted.
    for (const TypeCase& o : types) {
      if (o.type == t.type) continue;
      EXPECT_TRUE(pl.filter(state, podWith({t.inlineB, o.inlineA, o.inlineB}), *ni).ok());
    }
  }
}

TEST(NonCSIVolumeLimitsTest, DefaultLimits) {
  struct LimitCase {
    std::string name;
    InTreeVolumeType type;
    NodeWrapper node;
    int64_t want;
  };
  const std::vector<LimitCase> cases = {
      {"EBS", kEBS, NodeWrapper("n"), 39},
      {"EBS m4", kEBS, NodeWrapper("n").label("node.kubernetes.io/instance-type", "m4.large"), 39},
      {"EBS m5 (stable label)", kEBS,
       NodeWrapper("n").label("node.kubernetes.io/instance-type", "m5.large"), 25},
      {"EBS c5 (beta label)", kEBS,
       NodeWrapper("n").label("beta.kubernetes.io/instance-type", "c5.xlarge"), 25},
      {"EBS r5", kEBS, NodeWrapper("n").label("beta.kubernetes.io/instance-type", "r5d.2xlarge"),
       25},
      {"EBS t3 anywhere", kEBS,
       NodeWrapper("n").label("node.kubernetes.io/instance-type", "t3.micro"), 25},
      {"EBS z1d anywhere", kEBS,
       NodeWrapper("n").label("node.kubernetes.io/instance-type", "z1d.large"), 25},
      {"EBS a1 (5 not second)", kEBS,
       NodeWrapper("n").label("node.kubernetes.io/instance-type", "a1.m5"), 39},
      {"EBS label of another key", kEBS, NodeWrapper("n").label("instance-type", "m5.large"), 39},
      {"GCE PD", kGCE, NodeWrapper("n").label("node.kubernetes.io/instance-type", "m5.large"), 16},
      {"Azure Disk", kAzure, NodeWrapper("n"), 16},
      {"Cinder", kCinder, NodeWrapper("n"), 256},
  };
  for (const LimitCase& c : cases) {
    EXPECT_EQ(NonCSIVolumeLimits::defaultMaxVolumes(c.type, c.node.obj()), c.want) << c.name;
  }
}

// The limit applies: allocatable, else the override, else the default.
TEST(NonCSIVolumeLimitsTest, LimitSources) {
  testutil::FakeHandle h;
  std::vector<api::Pod> existing;
  for (int i = 0; i < 25; ++i) existing.push_back(podWith({"ebs:vol-" + std::to_string(i)}));
  const api::Pod pod = podWith({"ebs:new"});
  CycleState state;
  auto nitro = nodeWithPods(NodeWrapper("n").label("node.kubernetes.io/instance-type", "m5.large"),
                            existing);
  auto plain = nodeWithPods(NodeWrapper("n"), existing);
  auto withAllocatable = nodeWithPods(NodeWrapper("n")
                                          .label("node.kubernetes.io/instance-type", "m5.large")
                                          .capacity({{"attachable-volumes-aws-ebs", "30"}}),
                                      existing);

  NonCSIVolumeLimits byDefault(kEBS, h.listers());
  EXPECT_EQ(byDefault.filter(state, pod, *nitro).code(), Code::kUnschedulable);
  EXPECT_TRUE(byDefault.filter(state, pod, *plain).ok());
  EXPECT_TRUE(byDefault.filter(state, pod, *withAllocatable).ok());

  NonCSIVolumeLimits overridden(kEBS, h.listers(), 20);
  EXPECT_EQ(overridden.filter(state, pod, *plain).code(), Code::kUnschedulable);
  EXPECT_TRUE(overridden.filter(state, pod, *withAllocatable).ok());  // allocatable wins

  NonCSIVolumeLimits large(kEBS, h.listers(), 26);
  EXPECT_TRUE(large.filter(state, pod, *nitro).ok());
}

// v1.20 TestGetMaxVols, plus the forms Go's strconv.Atoi accepts.
TEST(NonCSIVolumeLimitsTest, ParseMaxVolumes) {
  EXPECT_EQ(NonCSIVolumeLimits::parseMaxVolumes("invalid"), std::nullopt);
  EXPECT_EQ(NonCSIVolumeLimits::parseMaxVolumes("-2"), std::nullopt);
  EXPECT_EQ(NonCSIVolumeLimits::parseMaxVolumes("40"), 40);
  EXPECT_EQ(NonCSIVolumeLimits::parseMaxVolumes("+7"), 7);
  EXPECT_EQ(NonCSIVolumeLimits::parseMaxVolumes("0"), std::nullopt);
  EXPECT_EQ(NonCSIVolumeLimits::parseMaxVolumes(""), std::nullopt);
  EXPECT_EQ(NonCSIVolumeLimits::parseMaxVolumes(" 4"), std::nullopt);
  EXPECT_EQ(NonCSIVolumeLimits::parseMaxVolumes("4x"), std::nullopt);
  EXPECT_EQ(NonCSIVolumeLimits::parseMaxVolumes("99999999999999999999"), std::nullopt);
  EXPECT_EQ(NonCSIVolumeLimits::parseMaxVolumes(nullptr), std::nullopt);
}

// The factories read KUBE_MAX_PD_VOLS when they build the plugin, not per pod.
TEST(NonCSIVolumeLimitsTest, FactoriesReadTheEnvironmentOnce) {
  testutil::FakeHandle h;
  ASSERT_EQ(setenv("KUBE_MAX_PD_VOLS", "1", 1), 0);  // NOLINT(concurrency-mt-unsafe)
  auto plugin = makePlugin(gcePdLimitsFactory(), nullptr, h);
  ASSERT_EQ(unsetenv("KUBE_MAX_PD_VOLS"), 0);  // NOLINT(concurrency-mt-unsafe)
  auto& pl = dynamic_cast<NonCSIVolumeLimits&>(*plugin);
  EXPECT_EQ(pl.name(), "GCEPDLimits");
  CycleState state;
  auto ni = nodeWithPods(NodeWrapper("n"), {podWith({"gce:a"})});
  EXPECT_EQ(pl.filter(state, podWith({"gce:b"}), *ni).code(), Code::kUnschedulable);
  EXPECT_TRUE(pl.filter(state, podWith({"gce:a"}), *ni).ok());

  EXPECT_EQ(makePlugin(ebsLimitsFactory(), nullptr, h)->name(), "EBSLimits");
  EXPECT_EQ(makePlugin(azureDiskLimitsFactory(), nullptr, h)->name(), "AzureDiskLimits");
  EXPECT_EQ(makePlugin(cinderLimitsFactory(), nullptr, h)->name(), "CinderLimits");
  auto unset = makePlugin(gcePdLimitsFactory(), nullptr, h);
  EXPECT_TRUE(
      dynamic_cast<NonCSIVolumeLimits&>(*unset).filter(state, podWith({"gce:b"}), *ni).ok());
}

TEST(NonCSIVolumeLimitsTest, Errors) {
  testutil::FakeHandle h;
  NonCSIVolumeLimits pl(kEBS, h.listers());
  CycleState state;
  auto ni = testutil::makeNodeInfo(NodeWrapper("n"));
  const Status noName = pl.filter(state, podWith({"pvc:"}), *ni);
  EXPECT_EQ(noName.code(), Code::kError);
  EXPECT_EQ(noName.message(), "PersistentVolumeClaim had no name");

  NodeInfo withoutNode(std::string("gone"));
  const Status noNode = pl.filter(state, podWith({"ebs:a"}), withoutNode);
  EXPECT_EQ(noNode.code(), Code::kError);
  EXPECT_EQ(noNode.message(), "node not found");
  // Nothing to count: the node is not looked at.
  EXPECT_TRUE(pl.filter(state, podWith({"gce:a"}), withoutNode).ok());

  // An existing pod's claim without a name is an Error too.
  auto bad = nodeWithPods(NodeWrapper("n"), {podWith({"pvc:"})});
  EXPECT_EQ(pl.filter(state, podWith({"ebs:a"}), *bad).code(), Code::kError);
}

TEST(NonCSIVolumeLimitsTest, QueueingHints) {
  struct HintCase {
    std::string name;
    ClusterEvent event;
    EventObject oldObj;
    EventObject newObj;
    std::optional<QueueingHint> want;
  };
  using testutil::obj;
  constexpr auto kQueue = QueueingHint::kQueue;
  constexpr auto kSkip = QueueingHint::kSkip;
  const ClusterEvent podDelete{EventResource::kAssignedPod, kDelete, {}};
  const ClusterEvent pvcAdd{EventResource::kPersistentVolumeClaim, kAdd, {}};
  auto bound = [](const std::vector<std::string>& volumes) {
    api::Pod p = podWith(volumes, "existing");
    p.spec.nodeName = "node";
    return obj(std::move(p));
  };
  auto claimIn = [](std::string name, std::string ns) {
    api::PersistentVolumeClaim c = pvc(std::move(name), "", std::nullopt);
    c.metadata.namespace_ = std::move(ns);
    return obj(std::move(c));
  };
  const EventObject none;
  const NodeWrapper node("node");
  const std::vector<HintCase> cases = {
      {"node added", testutil::event(EventResource::kNode, kAdd), none, obj(node.obj()), kQueue},
      {"node allocatable changed", testutil::event(EventResource::kNode, kUpdateNodeAllocatable),
       obj(node.obj()), obj(node.obj()), kQueue},
      {"node label changed", testutil::event(EventResource::kNode, kUpdateNodeLabel),
       obj(node.obj()), obj(node.obj()), kQueue},
      {"node taint change is not registered",
       testutil::event(EventResource::kNode, kUpdateNodeTaint), obj(node.obj()), obj(node.obj()),
       std::nullopt},
      {"deleted pod had an EBS volume", podDelete, bound({"ebs:a"}), none, kQueue},
      {"deleted pod had a claim", podDelete, bound({"pvc:c"}), none, kQueue},
      {"deleted pod had a GCE volume only", podDelete, bound({"gce:a"}), none, kSkip},
      {"deleted pod had no volumes", podDelete, bound({}), none, kSkip},
      {"deleted unscheduled pod", testutil::event(EventResource::kUnscheduledPod, kDelete),
       obj(podWith({"ebs:a"})), none, kSkip},
      {"the pod's claim added", pvcAdd, none, claimIn("c", "default"), kQueue},
      {"the pod's claim updated", testutil::event(EventResource::kPersistentVolumeClaim, kUpdate),
       claimIn("c", "default"), claimIn("c", "default"), kQueue},
      {"another claim added", pvcAdd, none, claimIn("d", "default"), kSkip},
      {"a claim of that name in another namespace", pvcAdd, none, claimIn("c", "other"), kSkip},
  };
  testutil::FakeHandle h;
  NonCSIVolumeLimits pl(kEBS, h.listers());
  const api::Pod pod = podWith({"pvc:c", "ebs:x"});
  for (const HintCase& c : cases) {
    EXPECT_EQ(testutil::hintName(testutil::hintFor(pl, c.event, pod, c.oldObj, c.newObj)),
              testutil::hintName(c.want))
        << c.name;
  }
}

// What the plugin says of its rejections (FilterExplainer): the volumes attached, those the pod
// adds, the limit and where it comes from.
TEST(NonCSIVolumeLimitsExplain, NamesTheCountTheLimitAndItsSource) {
  testutil::FakeHandle h;
  const api::Pod pod = podWith({"ebs:new", "ebs:a"});
  const CycleState state;
  const std::vector<api::Pod> two{podWith({"ebs:a"}), podWith({"ebs:b"})};
  auto allocatable =
      nodeWithPods(NodeWrapper("n").capacity({{"attachable-volumes-aws-ebs", "2"}}), two);
  auto plain = nodeWithPods(NodeWrapper("n"), two);

  NonCSIVolumeLimits byDefault(kEBS, h.listers());
  ASSERT_EQ(byDefault.filter(state, pod, *allocatable).code(), Code::kUnschedulable);
  EXPECT_EQ(byDefault.explainRejection(state, pod, *allocatable),
            std::vector<std::string>{"2 volumes of driver kubernetes.io/aws-ebs attached, the pod "
                                     "adds 1, limit 2 (node allocatable "
                                     "attachable-volumes-aws-ebs)"});
  EXPECT_TRUE(byDefault.explainRejection(state, pod, *plain).empty()) << "it fits: nothing to say";

  NonCSIVolumeLimits overridden(kEBS, h.listers(), 2);
  ASSERT_EQ(overridden.filter(state, pod, *plain).code(), Code::kUnschedulable);
  EXPECT_EQ(overridden.explainRejection(state, pod, *plain),
            std::vector<std::string>{"2 volumes of driver kubernetes.io/aws-ebs attached, the pod "
                                     "adds 1, limit 2 (KUBE_MAX_PD_VOLS)"});

  std::vector<api::Pod> many;
  for (int i = 0; i < 25; ++i) many.push_back(podWith({"ebs:vol-" + std::to_string(i)}));
  auto nitro =
      nodeWithPods(NodeWrapper("n").label("node.kubernetes.io/instance-type", "m5.large"), many);
  ASSERT_EQ(byDefault.filter(state, pod, *nitro).code(), Code::kUnschedulable);
  EXPECT_EQ(byDefault.explainRejection(state, pod, *nitro),
            std::vector<std::string>{"25 volumes of driver kubernetes.io/aws-ebs attached, the "
                                     "pod adds 2, limit 25 (default)"});
}

}  // namespace
}  // namespace ksched::plugins
