// core/v1 Pod: the fields the scheduler reads.
//
// Defaults applied when a field is missing or empty, as the apiserver's defaulting would:
// spec.schedulerName "default-scheduler", container port protocol "TCP", rbd pool "rbd".
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <ksched/api/boxed.h>
#include <ksched/api/meta.h>
#include <ksched/api/resources.h>
#include <ksched/api/selectors.h>
#include <ksched/api/storage.h>
#include <ksched/api/taints.h>

namespace ksched::api {

inline constexpr std::string_view kDefaultSchedulerName = "default-scheduler";
inline constexpr std::string_view kProtocolTCP = "TCP";
inline constexpr std::string_view kContainerRestartPolicyAlways = "Always";
inline constexpr std::string_view kContainerRestartRuleActionRestart = "Restart";
inline constexpr std::string_view kContainerRestartRuleActionRestartAllContainers =
    "RestartAllContainers";

inline constexpr std::string_view kPodPending = "Pending";
inline constexpr std::string_view kPodRunning = "Running";
inline constexpr std::string_view kPodSucceeded = "Succeeded";
inline constexpr std::string_view kPodFailed = "Failed";

inline constexpr std::string_view kPodConditionScheduled = "PodScheduled";
inline constexpr std::string_view kPodReasonUnschedulable = "Unschedulable";
inline constexpr std::string_view kPodReasonSchedulingGated = "SchedulingGated";
inline constexpr std::string_view kPodReasonSchedulerError = "SchedulerError";
// PodScheduled=False: a PreEnqueue plugin holds the pod back; the scheduler has not tried it.
inline constexpr std::string_view kPodReasonNotReadyForScheduling = "NotReadyForScheduling";

// In-place resize (KEP 1287): the kubelet sets the PodResizePending condition with one of these
// reasons while it cannot apply the spec's new resources.
inline constexpr std::string_view kPodConditionResizePending = "PodResizePending";
inline constexpr std::string_view kPodReasonInfeasible = "Infeasible";
inline constexpr std::string_view kPodReasonDeferred = "Deferred";

inline constexpr std::string_view kPreemptLowerPriority = "PreemptLowerPriority";
inline constexpr std::string_view kPreemptNever = "Never";

inline constexpr std::string_view kDoNotSchedule = "DoNotSchedule";
inline constexpr std::string_view kScheduleAnyway = "ScheduleAnyway";
inline constexpr std::string_view kNodeInclusionPolicyHonor = "Honor";
inline constexpr std::string_view kNodeInclusionPolicyIgnore = "Ignore";

// resources.claims[] of a container (Dynamic Resource Allocation): which of the pod's
// spec.resourceClaims the container uses, and of that claim which request (empty: all).
struct ContainerResourceClaim {
  std::string name;  // an entry of spec.resourceClaims
  std::string request;

  friend bool operator==(const ContainerResourceClaim&, const ContainerResourceClaim&) = default;
};

struct ResourceRequirements {
  ResourceList requests;
  ResourceList limits;
  std::vector<ContainerResourceClaim> claims;  // containers only

  friend bool operator==(const ResourceRequirements&, const ResourceRequirements&) = default;
};

struct ContainerPort {
  std::string name;
  int32_t containerPort = 0;
  int32_t hostPort = 0;  // 0: not exposed on the host
  std::string hostIP;
  std::string protocol{kProtocolTCP};

  friend bool operator==(const ContainerPort&, const ContainerPort&) = default;
};

// One of a container's restartPolicyRules; only the action is read (its exitCodes are not).
struct ContainerRestartRule {
  std::string action;  // "Restart" or "RestartAllContainers"

  friend bool operator==(const ContainerRestartRule&, const ContainerRestartRule&) = default;
};

struct VolumeMount {
  std::string name;
  std::string mountPath;
  std::vector<std::string> bindMountOptions;  // noexec, nodev, nosuid

  friend bool operator==(const VolumeMount&, const VolumeMount&) = default;
};

struct Container {
  std::string name;
  std::string image;
  ResourceRequirements resources;
  std::vector<ContainerPort> ports;
  std::optional<std::string> restartPolicy;  // init containers only: "Always" makes a sidecar
  std::vector<ContainerRestartRule> restartPolicyRules;
  std::vector<VolumeMount> volumeMounts;

  // restartPolicy == "Always": a sidecar (restartable init container) when in initContainers.
  [[nodiscard]] bool isRestartable() const noexcept {
    return restartPolicy && *restartPolicy == kContainerRestartPolicyAlways;
  }

  friend bool operator==(const Container&, const Container&) = default;
};

struct PreferredSchedulingTerm {
  int32_t weight = 0;
  NodeSelectorTerm preference;

  friend bool operator==(const PreferredSchedulingTerm&, const PreferredSchedulingTerm&) = default;
};

struct NodeAffinity {
  std::optional<NodeSelector> requiredDuringSchedulingIgnoredDuringExecution;
  std::vector<PreferredSchedulingTerm> preferredDuringSchedulingIgnoredDuringExecution;

  friend bool operator==(const NodeAffinity&, const NodeAffinity&) = default;
};

struct PodAffinityTerm {
  std::optional<LabelSelector> labelSelector;  // nullopt selects no pods
  std::vector<std::string> namespaces;
  std::string topologyKey;
  std::optional<LabelSelector> namespaceSelector;
  std::vector<std::string> matchLabelKeys;
  std::vector<std::string> mismatchLabelKeys;

  friend bool operator==(const PodAffinityTerm&, const PodAffinityTerm&) = default;
};

struct WeightedPodAffinityTerm {
  int32_t weight = 0;
  PodAffinityTerm podAffinityTerm;

  friend bool operator==(const WeightedPodAffinityTerm&, const WeightedPodAffinityTerm&) = default;
};

// Used for both spec.affinity.podAffinity and spec.affinity.podAntiAffinity.
struct PodAffinity {
  std::vector<PodAffinityTerm> requiredDuringSchedulingIgnoredDuringExecution;
  std::vector<WeightedPodAffinityTerm> preferredDuringSchedulingIgnoredDuringExecution;

  friend bool operator==(const PodAffinity&, const PodAffinity&) = default;
};
using PodAntiAffinity = PodAffinity;

struct Affinity {
  std::optional<NodeAffinity> nodeAffinity;
  std::optional<PodAffinity> podAffinity;
  std::optional<PodAntiAffinity> podAntiAffinity;

  friend bool operator==(const Affinity&, const Affinity&) = default;
};

struct TopologySpreadConstraint {
  int32_t maxSkew = 0;
  std::string topologyKey;
  std::string whenUnsatisfiable;  // DoNotSchedule or ScheduleAnyway
  std::optional<LabelSelector> labelSelector;
  std::optional<int32_t> minDomains;
  std::optional<std::string> nodeAffinityPolicy;  // Honor / Ignore; nullopt means Honor
  std::optional<std::string> nodeTaintsPolicy;    // Honor / Ignore; nullopt means Ignore
  std::vector<std::string> matchLabelKeys;

  friend bool operator==(const TopologySpreadConstraint&,
                         const TopologySpreadConstraint&) = default;
};

struct PersistentVolumeClaimVolumeSource {
  std::string claimName;
  bool readOnly = false;

  friend bool operator==(const PersistentVolumeClaimVolumeSource&,
                         const PersistentVolumeClaimVolumeSource&) = default;
};

struct RBDVolumeSource {
  std::vector<std::string> monitors;
  std::string image;
  std::string pool = "rbd";
  bool readOnly = false;

  friend bool operator==(const RBDVolumeSource&, const RBDVolumeSource&) = default;
};

struct ISCSIVolumeSource {
  std::string targetPortal;
  std::string iqn;
  int32_t lun = 0;
  bool readOnly = false;

  friend bool operator==(const ISCSIVolumeSource&, const ISCSIVolumeSource&) = default;
};

struct CSIVolumeSource {
  std::string driver;
  bool readOnly = false;

  friend bool operator==(const CSIVolumeSource&, const CSIVolumeSource&) = default;
};

// One pod volume; at most one source is set (the others stay nullopt/false).
struct Volume {
  std::string name;
  std::optional<PersistentVolumeClaimVolumeSource> persistentVolumeClaim;
  std::optional<GCEPersistentDiskVolumeSource> gcePersistentDisk;
  std::optional<AWSElasticBlockStoreVolumeSource> awsElasticBlockStore;
  std::optional<AzureDiskVolumeSource> azureDisk;
  std::optional<CinderVolumeSource> cinder;
  std::optional<RBDVolumeSource> rbd;
  std::optional<ISCSIVolumeSource> iscsi;
  bool ephemeral = false;  // a generic ephemeral volume (claim "<pod name>-<volume name>")
  std::optional<CSIVolumeSource> csi;
  // Node-local storage (only whether there is one; no plugin reads them): eviction tools keep
  // such pods where they are (ksched advise, docs/advise.md).
  bool emptyDir = false;
  bool hostPath = false;

  friend bool operator==(const Volume&, const Volume&) = default;
};

// spec.resourceClaims[] (Dynamic Resource Allocation): exactly one of the two names is set in
// a valid pod.
struct PodResourceClaim {
  std::string name;  // unique in the pod; containers refer to the claim by it
  std::optional<std::string> resourceClaimName;
  std::optional<std::string> resourceClaimTemplateName;

  friend bool operator==(const PodResourceClaim&, const PodResourceClaim&) = default;
};

// status.resourceClaimStatuses[]: the ResourceClaim generated from a template claim.
struct PodResourceClaimStatus {
  std::string name;                              // the entry of spec.resourceClaims
  std::optional<std::string> resourceClaimName;  // unset: no claim was needed

  friend bool operator==(const PodResourceClaimStatus&, const PodResourceClaimStatus&) = default;
};

// status.extendedResourceClaimStatus.requestMappings[] (extended resources backed by DRA,
// KEP 5004): which request of the generated claim serves a container's extended resource.
struct ContainerExtendedResourceRequest {
  std::string containerName;
  std::string resourceName;  // the extended resource, e.g. example.com/gpu
  std::string requestName;   // the request in the claim

  friend bool operator==(const ContainerExtendedResourceRequest&,
                         const ContainerExtendedResourceRequest&) = default;
};

// status.extendedResourceClaimStatus: the ResourceClaim the scheduler created for the pod's
// extended resources that a DeviceClass provides.
struct PodExtendedResourceClaimStatus {
  std::vector<ContainerExtendedResourceRequest> requestMappings;
  std::string resourceClaimName;

  friend bool operator==(const PodExtendedResourceClaimStatus&,
                         const PodExtendedResourceClaimStatus&) = default;
};

// spec.schedulingGroup (GenericWorkload): the PodGroup the pod belongs to, in its namespace.
// Immutable; the PodGroup may be created after the pod.
struct PodSchedulingGroup {
  std::optional<std::string> podGroupName;

  friend bool operator==(const PodSchedulingGroup&, const PodSchedulingGroup&) = default;
};

struct PodSpec {
  std::string nodeName;
  // Pod-level requests and limits (KEP 2837, spec.resources); nullopt when not set.
  Boxed<ResourceRequirements> resources;
  std::string schedulerName{kDefaultSchedulerName};
  std::optional<int32_t> priority;
  std::string priorityClassName;
  std::optional<std::string> preemptionPolicy;
  Labels nodeSelector;
  Boxed<Affinity> affinity;
  std::vector<Toleration> tolerations;
  std::vector<TopologySpreadConstraint> topologySpreadConstraints;
  std::vector<Container> containers;
  std::vector<Container> initContainers;
  ResourceList overhead;
  std::vector<Volume> volumes;
  std::vector<std::string> schedulingGates;  // the gates' names
  std::optional<int64_t> terminationGracePeriodSeconds;
  bool hostNetwork = false;
  std::optional<bool> hostUsers;  // unset: true (the host's user namespace)
  // Read for their volumeMounts (NodeDeclaredFeatures); they request no resources and hold no
  // ports, so nothing else looks at them.
  std::vector<Container> ephemeralContainers;
  std::vector<PodResourceClaim> resourceClaims;
  Boxed<PodSchedulingGroup> schedulingGroup;

  // The PodGroup's name, or nullptr when the pod belongs to none.
  [[nodiscard]] const std::string* podGroupName() const noexcept {
    return schedulingGroup && schedulingGroup->podGroupName ? &*schedulingGroup->podGroupName
                                                            : nullptr;
  }
  friend bool operator==(const PodSpec&, const PodSpec&) = default;
};

struct PodCondition {
  std::string type;
  std::string status;
  std::string reason;
  std::string message;
  std::string lastTransitionTime;  // RFC 3339; empty when unset

  friend bool operator==(const PodCondition&, const PodCondition&) = default;
};

// status.containerStatuses[] / initContainerStatuses[]: what the kubelet allocated to a
// container and what it runs with (in-place resize). An empty list means "not reported", as
// the apiserver omits empty maps.
struct ContainerStatus {
  std::string name;
  ResourceList allocatedResources;
  Boxed<ResourceRequirements> resources;  // nullopt: not reported

  friend bool operator==(const ContainerStatus&, const ContainerStatus&) = default;
};

struct PodStatus {
  std::string phase;
  std::vector<PodCondition> conditions;
  std::string nominatedNodeName;
  std::optional<std::string> startTime;  // RFC 3339
  std::vector<ContainerStatus> containerStatuses;
  std::vector<ContainerStatus> initContainerStatuses;
  // Pod-level totals the kubelet reports (InPlacePodLevelResourcesVerticalScaling): what it
  // allocated to the pod and what the pod runs with; both include spec.overhead.
  ResourceList allocatedResources;
  Boxed<ResourceRequirements> resources;
  // The resize status of Kubernetes before 1.33 ("Proposed", "InProgress", "Deferred",
  // "Infeasible"); decoded for display, no calculation reads it (upstream reads the
  // PodResizePending condition since 1.33).
  std::string resize;
  std::vector<PodResourceClaimStatus> resourceClaimStatuses;
  Boxed<PodExtendedResourceClaimStatus> extendedResourceClaimStatus;

  friend bool operator==(const PodStatus&, const PodStatus&) = default;
};

struct Pod {
  ObjectMeta metadata;
  PodSpec spec;
  PodStatus status;

  // The condition of that type, or nullptr.
  [[nodiscard]] const PodCondition* condition(std::string_view type) const noexcept;
  // The status of the container or init container of that name (containers first), or nullptr.
  [[nodiscard]] const ContainerStatus* containerStatus(std::string_view name) const noexcept;
};

// spec.priority, or 0 when unset (upstream corev1helpers.PodPriority).
[[nodiscard]] int32_t podPriority(const Pod& pod) noexcept;
// What two pods are compared for. Both comparisons read the whole pod with the object model's
// defaulted operator== (a field added to the object model is compared by both), less the
// exceptions listed once, each with its reason, in src/api/pod_compare.cc.
enum class PodComparison : uint8_t {
  // An update of a pod: did it change anything that can change scheduling it (the queue's
  // upstream isPodUpdated)? Its metadata and spec; not its status.
  kUpdate,
  // Two pods: is every scheduling decision that reads only the pod's namespace, labels, spec
  // and status the same for both (opportunistic batching, KEP 5598)? Not their identity
  // (names, uids, annotations, owners), nor the names of volumes and mounts.
  kSchedulingInputs,
};
[[nodiscard]] bool samePod(const Pod& a, const Pod& b, PodComparison purpose);

// samePod(a, b, PodComparison::kSchedulingInputs). A pod with a generic ephemeral volume (its
// claim is named after the pod) is like no other.
[[nodiscard]] inline bool sameSchedulingInputs(const Pod& a, const Pod& b) {
  return samePod(a, b, PodComparison::kSchedulingInputs);
}
// The PVC name of a generic ephemeral volume: "<pod name>-<volume name>".
[[nodiscard]] std::string ephemeralVolumeClaimName(const Pod& pod, const Volume& volume);

void from_json(const nlohmann::json& j, ContainerResourceClaim& c);
void from_json(const nlohmann::json& j, ResourceRequirements& r);
void from_json(const nlohmann::json& j, ContainerPort& p);
void from_json(const nlohmann::json& j, ContainerRestartRule& r);
void from_json(const nlohmann::json& j, VolumeMount& m);
void from_json(const nlohmann::json& j, Container& c);
void from_json(const nlohmann::json& j, PreferredSchedulingTerm& t);
void from_json(const nlohmann::json& j, NodeAffinity& a);
void from_json(const nlohmann::json& j, PodAffinityTerm& t);
void from_json(const nlohmann::json& j, WeightedPodAffinityTerm& t);
void from_json(const nlohmann::json& j, PodAffinity& a);
void from_json(const nlohmann::json& j, Affinity& a);
void from_json(const nlohmann::json& j, TopologySpreadConstraint& c);
void from_json(const nlohmann::json& j, PersistentVolumeClaimVolumeSource& s);
void from_json(const nlohmann::json& j, RBDVolumeSource& s);
void from_json(const nlohmann::json& j, ISCSIVolumeSource& s);
void from_json(const nlohmann::json& j, CSIVolumeSource& s);
void from_json(const nlohmann::json& j, Volume& v);
void from_json(const nlohmann::json& j, PodResourceClaim& c);
void from_json(const nlohmann::json& j, PodResourceClaimStatus& s);
void from_json(const nlohmann::json& j, ContainerExtendedResourceRequest& r);
void from_json(const nlohmann::json& j, PodExtendedResourceClaimStatus& s);
void from_json(const nlohmann::json& j, PodSchedulingGroup& g);
void from_json(const nlohmann::json& j, PodSpec& s);
void from_json(const nlohmann::json& j, PodCondition& c);
void from_json(const nlohmann::json& j, ContainerStatus& s);
void from_json(const nlohmann::json& j, PodStatus& s);
void from_json(const nlohmann::json& j, Pod& p);
// For status updates: type and status always, the rest when non-empty.
void to_json(nlohmann::json& j, const PodCondition& c);

}  // namespace ksched::api
