// Storage kinds: PersistentVolumeClaim, PersistentVolume, StorageClass (storage.k8s.io/v1),
// CSINode, CSIDriver and CSIStorageCapacity, plus the in-tree volume sources shared with pods.
//
// Defaults applied when a field is missing or empty, as the apiserver's defaulting would:
// volumeMode "Filesystem" (PV and PVC), persistentVolumeReclaimPolicy "Retain",
// StorageClass reclaimPolicy "Delete" and volumeBindingMode "Immediate".
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <ksched/api/meta.h>
#include <ksched/api/object_reference.h>
#include <ksched/api/quantity.h>
#include <ksched/api/resources.h>
#include <ksched/api/selectors.h>

namespace ksched::api {

inline constexpr std::string_view kReadWriteOnce = "ReadWriteOnce";
inline constexpr std::string_view kReadOnlyMany = "ReadOnlyMany";
inline constexpr std::string_view kReadWriteMany = "ReadWriteMany";
inline constexpr std::string_view kReadWriteOncePod = "ReadWriteOncePod";

inline constexpr std::string_view kVolumeModeFilesystem = "Filesystem";
inline constexpr std::string_view kVolumeModeBlock = "Block";

inline constexpr std::string_view kVolumeBindingImmediate = "Immediate";
inline constexpr std::string_view kVolumeBindingWaitForFirstConsumer = "WaitForFirstConsumer";

// PersistentVolume phases; claims use Pending, Bound and Lost.
inline constexpr std::string_view kVolumePending = "Pending";
inline constexpr std::string_view kVolumeAvailable = "Available";
inline constexpr std::string_view kVolumeBound = "Bound";
inline constexpr std::string_view kVolumeReleased = "Released";
inline constexpr std::string_view kVolumeFailed = "Failed";
inline constexpr std::string_view kClaimLost = "Lost";

inline constexpr std::string_view kAnnBetaStorageClass = "volume.beta.kubernetes.io/storage-class";
inline constexpr std::string_view kAnnSelectedNode = "volume.kubernetes.io/selected-node";
inline constexpr std::string_view kAnnBindCompleted = "pv.kubernetes.io/bind-completed";

struct GCEPersistentDiskVolumeSource {
  std::string pdName;
  int32_t partition = 0;
  bool readOnly = false;

  friend bool operator==(const GCEPersistentDiskVolumeSource&,
                         const GCEPersistentDiskVolumeSource&) = default;
};

struct AWSElasticBlockStoreVolumeSource {
  std::string volumeID;
  int32_t partition = 0;
  bool readOnly = false;

  friend bool operator==(const AWSElasticBlockStoreVolumeSource&,
                         const AWSElasticBlockStoreVolumeSource&) = default;
};

// Only the fields the scheduler reads (the in-tree volume limits count disks by name).
struct AzureDiskVolumeSource {
  std::string diskName;
  std::string diskURI;
  bool readOnly = false;

  friend bool operator==(const AzureDiskVolumeSource&, const AzureDiskVolumeSource&) = default;
};

struct CinderVolumeSource {
  std::string volumeID;
  bool readOnly = false;

  friend bool operator==(const CinderVolumeSource&, const CinderVolumeSource&) = default;
};

struct CSIPersistentVolumeSource {
  std::string driver;
  std::string volumeHandle;
  bool readOnly = false;
};

struct VolumeResourceRequirements {
  ResourceList requests;
  ResourceList limits;
};

struct PersistentVolumeClaimSpec {
  std::vector<std::string> accessModes;
  VolumeResourceRequirements resources;
  std::optional<std::string> storageClassName;  // nullopt: default class; "": no class
  std::string volumeName;
  std::string volumeMode{kVolumeModeFilesystem};
  std::optional<LabelSelector> selector;
  // VolumeAttributesClass (GA 1.34): "" when unset; a claim matches only PVs of its class.
  std::string volumeAttributesClassName;
};

struct PersistentVolumeClaimStatus {
  std::string phase;
  std::vector<std::string> accessModes;
  ResourceList capacity;
};

struct PersistentVolumeClaim {
  ObjectMeta metadata;
  PersistentVolumeClaimSpec spec;
  PersistentVolumeClaimStatus status;
};

struct VolumeNodeAffinity {
  std::optional<NodeSelector> required;
};

struct PersistentVolumeSpec {
  ResourceList capacity;
  std::vector<std::string> accessModes;
  std::string storageClassName;
  std::optional<ObjectReference> claimRef;
  std::optional<VolumeNodeAffinity> nodeAffinity;
  std::string persistentVolumeReclaimPolicy = "Retain";
  std::string volumeMode{kVolumeModeFilesystem};
  std::string volumeAttributesClassName;  // "" when unset
  std::optional<CSIPersistentVolumeSource> csi;
  std::optional<GCEPersistentDiskVolumeSource> gcePersistentDisk;
  std::optional<AWSElasticBlockStoreVolumeSource> awsElasticBlockStore;
  std::optional<AzureDiskVolumeSource> azureDisk;
  std::optional<CinderVolumeSource> cinder;
};

struct PersistentVolumeStatus {
  std::string phase;
};

struct PersistentVolume {
  ObjectMeta metadata;
  PersistentVolumeSpec spec;
  PersistentVolumeStatus status;
};

struct StorageClass {
  ObjectMeta metadata;
  std::string provisioner;
  std::map<std::string, std::string, std::less<>> parameters;
  std::string reclaimPolicy = "Delete";
  std::string volumeBindingMode{kVolumeBindingImmediate};
  std::vector<TopologySelectorTerm> allowedTopologies;
};

struct VolumeNodeResources {
  std::optional<int32_t> count;  // max unique volumes of this driver on the node; nullopt: no limit
};

struct CSINodeDriver {
  std::string name;
  std::string nodeID;
  std::vector<std::string> topologyKeys;
  std::optional<VolumeNodeResources> allocatable;
};

struct CSINodeSpec {
  std::vector<CSINodeDriver> drivers;
};

struct CSINode {
  ObjectMeta metadata;  // name is the node's name
  CSINodeSpec spec;

  // The driver with that name, or nullptr.
  [[nodiscard]] const CSINodeDriver* driver(std::string_view name) const noexcept;
};

// Only the fields the scheduler reads.
struct CSIDriverSpec {
  // The driver reports CSIStorageCapacity objects: VolumeBinding checks them before choosing
  // a node for a claim to provision. Unset: false.
  bool storageCapacity = false;
  // VolumeLimitScaling (KEP-5030): pods with volumes of this driver go only to nodes whose
  // CSINode lists the driver. Unset: false.
  bool preventPodSchedulingIfMissing = false;
};

struct CSIDriver {
  ObjectMeta metadata;  // name is the driver's name
  CSIDriverSpec spec;
};

// Storage a driver can provision for one class in one topology segment (storage.k8s.io/v1,
// v1beta1 before 1.24).
struct CSIStorageCapacity {
  ObjectMeta metadata;
  std::optional<LabelSelector> nodeTopology;  // nullopt: no node has access
  std::string storageClassName;
  std::optional<Quantity> capacity;
  std::optional<Quantity> maximumVolumeSize;
  // nodeTopology compiled once at decode time.
  Selector topology;
};

// Upstream GetPersistentVolumeClaimClass: the beta annotation, else spec.storageClassName, else "".
[[nodiscard]] std::string persistentVolumeClaimClass(const PersistentVolumeClaim& pvc);
// Upstream GetPersistentVolumeClass: the beta annotation, else spec.storageClassName.
[[nodiscard]] std::string persistentVolumeClass(const PersistentVolume& pv);

void from_json(const nlohmann::json& j, GCEPersistentDiskVolumeSource& s);
void from_json(const nlohmann::json& j, AWSElasticBlockStoreVolumeSource& s);
void from_json(const nlohmann::json& j, AzureDiskVolumeSource& s);
void from_json(const nlohmann::json& j, CinderVolumeSource& s);
void from_json(const nlohmann::json& j, CSIPersistentVolumeSource& s);
void from_json(const nlohmann::json& j, VolumeResourceRequirements& r);
void from_json(const nlohmann::json& j, PersistentVolumeClaimSpec& s);
void from_json(const nlohmann::json& j, PersistentVolumeClaimStatus& s);
void from_json(const nlohmann::json& j, PersistentVolumeClaim& c);
void from_json(const nlohmann::json& j, VolumeNodeAffinity& a);
void from_json(const nlohmann::json& j, PersistentVolumeSpec& s);
void from_json(const nlohmann::json& j, PersistentVolumeStatus& s);
void from_json(const nlohmann::json& j, PersistentVolume& v);
void from_json(const nlohmann::json& j, StorageClass& c);
void from_json(const nlohmann::json& j, VolumeNodeResources& r);
void from_json(const nlohmann::json& j, CSINodeDriver& d);
void from_json(const nlohmann::json& j, CSINodeSpec& s);
void from_json(const nlohmann::json& j, CSINode& n);
void from_json(const nlohmann::json& j, CSIDriverSpec& s);
void from_json(const nlohmann::json& j, CSIDriver& d);
void from_json(const nlohmann::json& j, CSIStorageCapacity& c);

}  // namespace ksched::api
