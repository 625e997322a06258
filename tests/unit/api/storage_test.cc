#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include <ksched/api/storage.h>

#include "tests/support/api_test_util.h"

namespace ksched::api {
namespace {

using testing::decodeError;
using testing::decodeString;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(PersistentVolumeClaimTest, Decodes) {
  const auto c = decodeString<PersistentVolumeClaim>(R"({
    "metadata": {"name": "data", "namespace": "prod"},
    "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}},
             "storageClassName": "fast", "volumeName": "pv-1", "volumeMode": "Block",
             "selector": {"matchLabels": {"tier": "gold"}}},
    "status": {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "10Gi"}}})");
  EXPECT_THAT(c.spec.accessModes, ElementsAre(kReadWriteOnce));
  EXPECT_EQ(c.spec.resources.requests.at("storage").value(), 10'737'418'240);
  EXPECT_EQ(c.spec.storageClassName, "fast");
  EXPECT_EQ(c.spec.volumeName, "pv-1");
  EXPECT_EQ(c.spec.volumeMode, kVolumeModeBlock);
  EXPECT_TRUE(Selector::compile(c.spec.selector).matches({{"tier", "gold"}}));
  EXPECT_EQ(c.status.phase, kVolumeBound);
  EXPECT_EQ(c.status.capacity.at("storage"), Quantity::parse("10Gi"));
}

TEST(PersistentVolumeClaimTest, StorageClassResolution) {
  struct Case {
    std::string name;
    std::string json;
    std::optional<std::string> field;
    std::string effective;
  };
  const std::vector<Case> cases = {
      {"missingMeansDefaultClass", R"({"spec": {}})", std::nullopt, ""},
      {"nullMeansDefaultClass", R"({"spec": {"storageClassName": null}})", std::nullopt, ""},
      {"emptyMeansNoClass", R"({"spec": {"storageClassName": ""}})", std::string(""), ""},
      {"named", R"({"spec": {"storageClassName": "fast"}})", std::string("fast"), "fast"},
      {"betaAnnotationWins",
       R"({"metadata": {"annotations": {"volume.beta.kubernetes.io/storage-class": "old"}},
           "spec": {"storageClassName": "fast"}})",
       std::string("fast"), "old"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const auto pvc = decodeString<PersistentVolumeClaim>(c.json);
    EXPECT_EQ(pvc.spec.storageClassName, c.field);
    EXPECT_EQ(persistentVolumeClaimClass(pvc), c.effective);
    EXPECT_EQ(pvc.spec.volumeMode, kVolumeModeFilesystem);
    EXPECT_FALSE(pvc.spec.selector.has_value());
  }
}

TEST(PersistentVolumeTest, Decodes) {
  const auto v = decodeString<PersistentVolume>(R"({
    "metadata": {"name": "pv-1"},
    "spec": {"capacity": {"storage": "100Gi"}, "accessModes": ["ReadWriteOnce", "ReadOnlyMany"],
             "storageClassName": "fast",
             "claimRef": {"kind": "PersistentVolumeClaim", "namespace": "prod", "name": "data", "uid": "c-1"},
             "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
               {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["z1"]}]}]}},
             "persistentVolumeReclaimPolicy": "Delete", "volumeMode": "Block",
             "csi": {"driver": "pd.csi.storage.gke.io", "volumeHandle": "projects/p/disks/d"}},
    "status": {"phase": "Bound"}})");
  EXPECT_EQ(v.spec.capacity.at("storage").value(), 107'374'182'400);
  EXPECT_THAT(v.spec.accessModes, ElementsAre(kReadWriteOnce, kReadOnlyMany));
  EXPECT_EQ(persistentVolumeClass(v), "fast");
  ASSERT_TRUE(v.spec.claimRef.has_value());
  EXPECT_EQ(v.spec.claimRef->namespace_, "prod");
  EXPECT_EQ(v.spec.claimRef->name, "data");
  EXPECT_EQ(v.spec.claimRef->uid, "c-1");
  ASSERT_TRUE(v.spec.nodeAffinity.has_value());
  ASSERT_TRUE(v.spec.nodeAffinity->required.has_value());
  EXPECT_TRUE(v.spec.nodeAffinity->required->matches({{"topology.kubernetes.io/zone", "z1"}}, "n"));
  EXPECT_FALSE(
      v.spec.nodeAffinity->required->matches({{"topology.kubernetes.io/zone", "z2"}}, "n"));
  EXPECT_EQ(v.spec.persistentVolumeReclaimPolicy, "Delete");
  EXPECT_EQ(v.spec.volumeMode, kVolumeModeBlock);
  ASSERT_TRUE(v.spec.csi.has_value());
  EXPECT_EQ(v.spec.csi->driver, "pd.csi.storage.gke.io");
  EXPECT_EQ(v.spec.csi->volumeHandle, "projects/p/disks/d");
  EXPECT_FALSE(v.spec.gcePersistentDisk.has_value());
  EXPECT_EQ(v.status.phase, kVolumeBound);
}

TEST(PersistentVolumeTest, InTreeSourcesAndDefaults) {
  const auto gce = decodeString<PersistentVolume>(
      R"({"spec": {"gcePersistentDisk": {"pdName": "disk-1", "partition": 1, "readOnly": true}}})");
  ASSERT_TRUE(gce.spec.gcePersistentDisk.has_value());
  EXPECT_EQ(gce.spec.gcePersistentDisk->pdName, "disk-1");
  EXPECT_EQ(gce.spec.gcePersistentDisk->partition, 1);
  EXPECT_TRUE(gce.spec.gcePersistentDisk->readOnly);
  EXPECT_EQ(gce.spec.persistentVolumeReclaimPolicy, "Retain");
  EXPECT_EQ(gce.spec.volumeMode, kVolumeModeFilesystem);
  EXPECT_FALSE(gce.spec.claimRef.has_value());
  EXPECT_FALSE(gce.spec.nodeAffinity.has_value());
  EXPECT_EQ(persistentVolumeClass(gce), "");

  const auto ebs = decodeString<PersistentVolume>(
      R"({"metadata": {"annotations": {"volume.beta.kubernetes.io/storage-class": "gp2"}},
          "spec": {"awsElasticBlockStore": {"volumeID": "aws://us-east-1a/vol-1"}}})");
  ASSERT_TRUE(ebs.spec.awsElasticBlockStore.has_value());
  EXPECT_EQ(ebs.spec.awsElasticBlockStore->volumeID, "aws://us-east-1a/vol-1");
  EXPECT_EQ(persistentVolumeClass(ebs), "gp2");
}

TEST(PersistentVolumeTest, DecodesAzureDiskAndCinder) {
  const auto azure = decodeString<PersistentVolume>(
      R"({"spec": {"azureDisk": {"diskName": "d1", "diskURI": "uri://d1", "readOnly": true}}})");
  ASSERT_TRUE(azure.spec.azureDisk.has_value());
  EXPECT_EQ(azure.spec.azureDisk->diskName, "d1");
  EXPECT_EQ(azure.spec.azureDisk->diskURI, "uri://d1");
  EXPECT_TRUE(azure.spec.azureDisk->readOnly);
  EXPECT_FALSE(azure.spec.cinder.has_value());

  const auto cinder = decodeString<PersistentVolume>(R"({"spec": {"cinder": {"volumeID": "c1"}}})");
  ASSERT_TRUE(cinder.spec.cinder.has_value());
  EXPECT_EQ(cinder.spec.cinder->volumeID, "c1");
  EXPECT_FALSE(cinder.spec.cinder->readOnly);
}

TEST(StorageClassTest, Decodes) {
  struct Case {
    std::string name;
    std::string json;
    std::string bindingMode;
    std::string reclaimPolicy;
    size_t topologies;
  };
  const std::vector<Case> cases = {
      {"defaults",
       R"({"metadata": {"name": "std"}, "provisioner": "kubernetes.io/no-provisioner"})",
       "Immediate", "Delete", 0},
      {"waitForFirstConsumer",
       R"({"provisioner": "ebs.csi.aws.com", "volumeBindingMode": "WaitForFirstConsumer",
           "reclaimPolicy": "Retain", "parameters": {"type": "gp3"},
           "allowedTopologies": [{"matchLabelExpressions": [
             {"key": "topology.kubernetes.io/zone", "values": ["z1", "z2"]}]}]})",
       "WaitForFirstConsumer", "Retain", 1},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const auto sc = decodeString<StorageClass>(c.json);
    EXPECT_EQ(sc.volumeBindingMode, c.bindingMode);
    EXPECT_EQ(sc.reclaimPolicy, c.reclaimPolicy);
    EXPECT_EQ(sc.allowedTopologies.size(), c.topologies);
  }
  const auto sc = decodeString<StorageClass>(cases[1].json);
  EXPECT_EQ(sc.provisioner, "ebs.csi.aws.com");
  EXPECT_EQ(sc.parameters.at("type"), "gp3");
  EXPECT_TRUE(
      matchTopologySelectorTerms(sc.allowedTopologies, {{"topology.kubernetes.io/zone", "z2"}}));
  EXPECT_FALSE(
      matchTopologySelectorTerms(sc.allowedTopologies, {{"topology.kubernetes.io/zone", "z3"}}));
}

TEST(CSINodeTest, Decodes) {
  const auto n = decodeString<CSINode>(R"({
    "metadata": {"name": "node-1"},
    "spec": {"drivers": [
      {"name": "ebs.csi.aws.com", "nodeID": "i-123", "topologyKeys": ["topology.ebs.csi.aws.com/zone"],
       "allocatable": {"count": 25}},
      {"name": "nolimit.csi.example.com", "nodeID": "n1"},
      {"name": "nocount.csi.example.com", "nodeID": "n1", "allocatable": {}}]}})");
  ASSERT_EQ(n.spec.drivers.size(), 3u);
  const CSINodeDriver* ebs = n.driver("ebs.csi.aws.com");
  ASSERT_NE(ebs, nullptr);
  EXPECT_EQ(ebs->nodeID, "i-123");
  EXPECT_THAT(ebs->topologyKeys, ElementsAre("topology.ebs.csi.aws.com/zone"));
  ASSERT_TRUE(ebs->allocatable.has_value());
  EXPECT_EQ(ebs->allocatable->count, 25);
  EXPECT_FALSE(n.driver("nolimit.csi.example.com")->allocatable.has_value());
  ASSERT_TRUE(n.driver("nocount.csi.example.com")->allocatable.has_value());
  EXPECT_FALSE(n.driver("nocount.csi.example.com")->allocatable->count.has_value());
  EXPECT_EQ(n.driver("missing"), nullptr);
}

TEST(StorageDecodeTest, MalformedInputNamesTheField) {
  struct Case {
    std::string name;
    std::string error;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"pvcRequest",
       decodeError<PersistentVolumeClaim>(
           R"({"spec": {"resources": {"requests": {"storage": "10GB"}}}})"),
       "spec.resources.requests.storage: quantity \"10GB\": unknown suffix \"GB\""},
      {"pvcAccessModes", decodeError<PersistentVolumeClaim>(R"({"spec": {"accessModes": "RWO"}})"),
       "spec.accessModes:"},
      {"pvcClassNumber", decodeError<PersistentVolumeClaim>(R"({"spec": {"storageClassName": 1}})"),
       "spec.storageClassName:"},
      {"pvCapacity", decodeError<PersistentVolume>(R"({"spec": {"capacity": {"storage": "x"}}})"),
       "spec.capacity.storage: quantity \"x\""},
      {"pvClaimRefName", decodeError<PersistentVolume>(R"({"spec": {"claimRef": {"name": 1}}})"),
       "spec.claimRef.name:"},
      {"pvNodeAffinityOperator",
       decodeError<PersistentVolume>(
           R"({"spec": {"nodeAffinity": {"required": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "a", "operator": "Near"}]}]}}}})"),
       "spec.nodeAffinity.required.nodeSelectorTerms.matchExpressions.operator"},
      {"scParameters", decodeError<StorageClass>(R"({"parameters": {"type": 3}})"), "parameters:"},
      {"csiCount",
       decodeError<CSINode>(R"({"spec": {"drivers": [{"allocatable": {"count": "5"}}]}})"),
       "spec.drivers.allocatable.count:"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_THAT(c.error, HasSubstr(c.message));
  }
}

}  // namespace
}  // namespace ksched::api
