// The Workload API of scheduling.k8s.io (KEP-4671 gang scheduling, KEP-5732 topology-aware
// placement, KEP-6012 composite groups, KEP-5710 group preemption policy, KEP-5729 claims on
// groups): Workload, PodGroup and CompositePodGroup, as the scheduler reads them.
//
// Served as scheduling.k8s.io/v1beta1 (1.37; Workload, PodGroup), v1alpha2 (1.36; the same
// kinds in their first shape) and v1alpha3 (1.37, CompositePodGroup and its copies of the
// others). The decoders take every version and fill one model:
//   v1alpha2 PodGroup spec.podGroupTemplateRef.workload.{workloadName,podGroupTemplateName}
//            -> workloadRef; disruptionMode "Pod" | "PodGroup" -> kSingle | kAll;
//            condition "PodGroupScheduled" is its PodGroupInitiallyScheduled.
//   v1beta1  spec.workloadRef.{workloadName,templateName}; disruptionMode {single: {}} | {all: {}}.
// A pod joins a group with spec.schedulingGroup.podGroupName: the PodGroup of that name in the
// pod's namespace (which may not exist yet).
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <ksched/api/meta.h>

namespace ksched::api {

inline constexpr std::string_view kSchedulingGroup = "scheduling.k8s.io";
inline constexpr std::string_view kPodGroupsV1beta1 = "/apis/scheduling.k8s.io/v1beta1/podgroups";
inline constexpr std::string_view kPodGroupsV1alpha2 = "/apis/scheduling.k8s.io/v1alpha2/podgroups";
inline constexpr std::string_view kWorkloadsV1beta1 = "/apis/scheduling.k8s.io/v1beta1/workloads";
inline constexpr std::string_view kWorkloadsV1alpha2 = "/apis/scheduling.k8s.io/v1alpha2/workloads";
inline constexpr std::string_view kCompositePodGroupsV1alpha3 =
    "/apis/scheduling.k8s.io/v1alpha3/compositepodgroups";

// Condition types and reasons of PodGroup / CompositePodGroup status.
inline constexpr std::string_view kPodGroupInitiallyScheduled = "PodGroupInitiallyScheduled";
inline constexpr std::string_view kPodGroupScheduledV1alpha2 = "PodGroupScheduled";
inline constexpr std::string_view kCompositePodGroupInitiallyScheduled =
    "CompositePodGroupInitiallyScheduled";
inline constexpr std::string_view kPodGroupDisruptionTarget = "DisruptionTarget";
inline constexpr std::string_view kPodGroupReasonScheduled = "Scheduled";
inline constexpr std::string_view kPodGroupReasonUnschedulable = "Unschedulable";
inline constexpr std::string_view kPodGroupReasonSchedulerError = "SchedulerError";
inline constexpr std::string_view kPodGroupReasonPreemptionByScheduler = "PreemptionByScheduler";

// spec.schedulingPolicy: basic (no gang) when `gangMinCount` is unset.
struct PodGroupSchedulingPolicy {
  std::optional<int32_t> gangMinCount;  // gang.minCount (>= 1); CompositePodGroup: minGroupCount

  [[nodiscard]] bool gang() const noexcept { return gangMinCount.has_value(); }
  // What must be placed together: minCount for a gang, 1 for basic (upstream getMinCount).
  [[nodiscard]] int32_t minCount() const noexcept { return gangMinCount.value_or(1); }
  friend bool operator==(const PodGroupSchedulingPolicy&,
                         const PodGroupSchedulingPolicy&) = default;
};

// spec.resourceClaims[]: one claim shared by every pod of the group (DRAWorkloadResourceClaims).
struct PodGroupResourceClaim {
  std::string name;
  std::optional<std::string> resourceClaimName;
  std::optional<std::string> resourceClaimTemplateName;

  friend bool operator==(const PodGroupResourceClaim&, const PodGroupResourceClaim&) = default;
};

enum class DisruptionMode { kSingle, kAll };

struct WorkloadReference {
  std::string workloadName;
  std::string templateName;

  friend bool operator==(const WorkloadReference&, const WorkloadReference&) = default;
};

// Fields common to PodGroup and CompositePodGroup specs.
struct GroupSpecCommon {
  std::optional<std::string> parentCompositePodGroupName;  // unset: the root of its tree
  std::optional<WorkloadReference> workloadRef;
  PodGroupSchedulingPolicy schedulingPolicy;
  // schedulingConstraints.topology[].key (at most one): every pod of the group on nodes with
  // the same value of this label.
  std::vector<std::string> topologyKeys;
  DisruptionMode disruptionMode = DisruptionMode::kSingle;
  std::string priorityClassName;
  std::optional<int32_t> priority;
  std::optional<std::string> preemptionPolicy;  // "PreemptLowerPriority" | "Never"

  friend bool operator==(const GroupSpecCommon&, const GroupSpecCommon&) = default;
};

struct PodGroupSpec : GroupSpecCommon {
  std::vector<PodGroupResourceClaim> resourceClaims;

  friend bool operator==(const PodGroupSpec&, const PodGroupSpec&) = default;
};

struct PodGroupResourceClaimStatus {
  std::string name;
  std::optional<std::string> resourceClaimName;

  friend bool operator==(const PodGroupResourceClaimStatus&,
                         const PodGroupResourceClaimStatus&) = default;
};

struct PodGroupStatus {
  std::vector<Condition> conditions;
  std::vector<PodGroupResourceClaimStatus> resourceClaimStatuses;

  [[nodiscard]] const Condition* condition(std::string_view type) const noexcept;
  friend bool operator==(const PodGroupStatus&, const PodGroupStatus&) = default;
};

struct PodGroup {
  std::string apiVersion;  // as served: "scheduling.k8s.io/v1beta1", ".../v1alpha2", ...
  ObjectMeta metadata;
  PodGroupSpec spec;
  PodGroupStatus status;

  // The condition type this version calls PodGroupInitiallyScheduled ("PodGroupScheduled" in
  // v1alpha2).
  [[nodiscard]] std::string_view initiallyScheduledType() const noexcept;
};

struct CompositePodGroup {
  std::string apiVersion;
  ObjectMeta metadata;
  GroupSpecCommon spec;  // schedulingPolicy.gangMinCount is gang.minGroupCount
  PodGroupStatus status;
};

// Workload: the templates controllers stamp PodGroups from. The scheduler reads the template
// names only (to tell a PodGroup's workloadRef that names no template).
struct Workload {
  std::string apiVersion;
  ObjectMeta metadata;
  std::vector<std::string> podGroupTemplateNames;
  std::vector<std::string> compositePodGroupTemplateNames;
};

// Decoders for every served version (the object's apiVersion says which); api::DecodeError
// naming the field for a malformed object, or an apiVersion that is not scheduling.k8s.io's.
void from_json(const nlohmann::json& j, PodGroup& pg);
void from_json(const nlohmann::json& j, CompositePodGroup& cpg);
void from_json(const nlohmann::json& j, Workload& w);

// The same for an object that may name no apiVersion: the items of a LIST of a built-in kind
// come without one (watch events and GETs carry it). Such an object is read as
// `listedApiVersion`, the version of the collection listed ("scheduling.k8s.io/v1beta1");
// from_json is these with none.
[[nodiscard]] PodGroup decodePodGroup(const nlohmann::json& j, std::string_view listedApiVersion);
[[nodiscard]] CompositePodGroup decodeCompositePodGroup(const nlohmann::json& j,
                                                        std::string_view listedApiVersion);
[[nodiscard]] Workload decodeWorkload(const nlohmann::json& j, std::string_view listedApiVersion);

// "<namespace>/<name>", the key of a group in maps and messages.
[[nodiscard]] inline std::string groupKey(std::string_view ns, std::string_view name) {
  std::string k;
  k.reserve(ns.size() + name.size() + 1);
  k.append(ns).append("/").append(name);
  return k;
}

}  // namespace ksched::api
