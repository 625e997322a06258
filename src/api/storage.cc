#include <nlohmann/json.hpp>

#include <ksched/api/decode.h>
#include <ksched/api/storage.h>

namespace ksched::api {
namespace {

void readWithDefault(const nlohmann::json& j, std::string_view key, std::string& out,
                     std::string_view fallback) {
  readField(j, key, out);
  if (out.empty()) out = fallback;
}

}  // namespace

const CSINodeDriver* CSINode::driver(std::string_view name) const noexcept {
  for (const auto& d : spec.drivers) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

std::string persistentVolumeClaimClass(const PersistentVolumeClaim& pvc) {
  auto it = pvc.metadata.annotations.find(kAnnBetaStorageClass);
  if (it != pvc.metadata.annotations.end()) return it->second;
  return pvc.spec.storageClassName.value_or("");
}

std::string persistentVolumeClass(const PersistentVolume& pv) {
  auto it = pv.metadata.annotations.find(kAnnBetaStorageClass);
  if (it != pv.metadata.annotations.end()) return it->second;
  return pv.spec.storageClassName;
}

void from_json(const nlohmann::json& j, GCEPersistentDiskVolumeSource& s) {
  readField(j, "pdName", s.pdName);
  readField(j, "partition", s.partition);
  readField(j, "readOnly", s.readOnly);
}

void from_json(const nlohmann::json& j, AWSElasticBlockStoreVolumeSource& s) {
  readField(j, "volumeID", s.volumeID);
  readField(j, "partition", s.partition);
  readField(j, "readOnly", s.readOnly);
}

void from_json(const nlohmann::json& j, AzureDiskVolumeSource& s) {
  readField(j, "diskName", s.diskName);
  readField(j, "diskURI", s.diskURI);
  readField(j, "readOnly", s.readOnly);
}

void from_json(const nlohmann::json& j, CinderVolumeSource& s) {
  readField(j, "volumeID", s.volumeID);
  readField(j, "readOnly", s.readOnly);
}

void from_json(const nlohmann::json& j, CSIPersistentVolumeSource& s) {
  readField(j, "driver", s.driver);
  readField(j, "volumeHandle", s.volumeHandle);
  readField(j, "readOnly", s.readOnly);
}

void from_json(const nlohmann::json& j, VolumeResourceRequirements& r) {
  readField(j, "requests", r.requests);
  readField(j, "limits", r.limits);
}

void from_json(const nlohmann::json& j, PersistentVolumeClaimSpec& s) {
  readField(j, "accessModes", s.accessModes);
  readField(j, "resources", s.resources);
  readField(j, "storageClassName", s.storageClassName);
  readField(j, "volumeName", s.volumeName);
  readWithDefault(j, "volumeMode", s.volumeMode, kVolumeModeFilesystem);
  readField(j, "selector", s.selector);
  readField(j, "volumeAttributesClassName", s.volumeAttributesClassName);
}

void from_json(const nlohmann::json& j, PersistentVolumeClaimStatus& s) {
  readField(j, "phase", s.phase);
  readField(j, "accessModes", s.accessModes);
  readField(j, "capacity", s.capacity);
}

void from_json(const nlohmann::json& j, PersistentVolumeClaim& c) {
  readField(j, "metadata", c.metadata);
  readField(j, "spec", c.spec);
  readField(j, "status", c.status);
}

void from_json(const nlohmann::json& j, VolumeNodeAffinity& a) {
  readField(j, "required", a.required);
}

void from_json(const nlohmann::json& j, PersistentVolumeSpec& s) {
  readField(j, "capacity", s.capacity);
  readField(j, "accessModes", s.accessModes);
  readField(j, "storageClassName", s.storageClassName);
  readField(j, "claimRef", s.claimRef);
  readField(j, "nodeAffinity", s.nodeAffinity);
  readWithDefault(j, "persistentVolumeReclaimPolicy", s.persistentVolumeReclaimPolicy, "Retain");
  readWithDefault(j, "volumeMode", s.volumeMode, kVolumeModeFilesystem);
  readField(j, "volumeAttributesClassName", s.volumeAttributesClassName);
  readField(j, "csi", s.csi);
  readField(j, "gcePersistentDisk", s.gcePersistentDisk);
  readField(j, "awsElasticBlockStore", s.awsElasticBlockStore);
  readField(j, "azureDisk", s.azureDisk);
  readField(j, "cinder", s.cinder);
}

void from_json(const nlohmann::json& j, PersistentVolumeStatus& s) {
  readField(j, "phase", s.phase);
}

void from_json(const nlohmann::json& j, PersistentVolume& v) {
  readField(j, "metadata", v.metadata);
  readField(j, "spec", v.spec);
  readField(j, "status", v.status);
}

void from_json(const nlohmann::json& j, StorageClass& c) {
  readField(j, "metadata", c.metadata);
  readField(j, "provisioner", c.provisioner);
  readField(j, "parameters", c.parameters);
  readWithDefault(j, "reclaimPolicy", c.reclaimPolicy, "Delete");
  readWithDefault(j, "volumeBindingMode", c.volumeBindingMode, kVolumeBindingImmediate);
  readField(j, "allowedTopologies", c.allowedTopologies);
}

void from_json(const nlohmann::json& j, VolumeNodeResources& r) { readField(j, "count", r.count); }

void from_json(const nlohmann::json& j, CSINodeDriver& d) {
  readField(j, "name", d.name);
  readField(j, "nodeID", d.nodeID);
  readField(j, "topologyKeys", d.topologyKeys);
  readField(j, "allocatable", d.allocatable);
}

void from_json(const nlohmann::json& j, CSINodeSpec& s) { readField(j, "drivers", s.drivers); }

void from_json(const nlohmann::json& j, CSINode& n) {
  readField(j, "metadata", n.metadata);
  readField(j, "spec", n.spec);
}

void from_json(const nlohmann::json& j, CSIDriverSpec& s) {
  readField(j, "storageCapacity", s.storageCapacity);
  readField(j, "preventPodSchedulingIfMissing", s.preventPodSchedulingIfMissing);
}

void from_json(const nlohmann::json& j, CSIDriver& d) {
  readField(j, "metadata", d.metadata);
  readField(j, "spec", d.spec);
}

void from_json(const nlohmann::json& j, CSIStorageCapacity& c) {
  readField(j, "metadata", c.metadata);
  readField(j, "nodeTopology", c.nodeTopology);
  readField(j, "storageClassName", c.storageClassName);
  readField(j, "capacity", c.capacity);
  readField(j, "maximumVolumeSize", c.maximumVolumeSize);
  c.topology = Selector::compile(c.nodeTopology);
}

}  // namespace ksched::api
