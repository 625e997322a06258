// The PodGroup API of scheduler-plugins (scheduling.x-k8s.io/v1alpha1) as Coscheduling reads and
// writes it, and how a pod names its group.
//
// A pod joins a group in one of two ways:
//   - scheduling.x-k8s.io/pod-group: <name>  -> the PodGroup <name> in the pod's namespace
//     (minMember, minResources, scheduleTimeoutSeconds come from it);
//   - pod-group.scheduling.sigs.k8s.io/name: <name> with
//     pod-group.scheduling.sigs.k8s.io/min-available: "<N>"  -> a group without an object (the
//     label form of scheduler-plugins' first Coscheduling), minMember = N.
// When a pod has both, the PodGroup label wins.
#pragma once

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include <ksched/api/meta.h>
#include <ksched/api/pod.h>
#include <ksched/api/resources.h>
#include <ksched/object_watch.h>

namespace ksched::plugins::coscheduling {

inline constexpr std::string_view kPodGroupLabel = "scheduling.x-k8s.io/pod-group";
inline constexpr std::string_view kLegacyNameLabel = "pod-group.scheduling.sigs.k8s.io/name";
inline constexpr std::string_view kLegacyMinAvailableLabel =
    "pod-group.scheduling.sigs.k8s.io/min-available";
inline constexpr std::string_view kApiVersion = "scheduling.x-k8s.io/v1alpha1";
inline constexpr std::string_view kKind = "PodGroup";
inline constexpr std::string_view kCollectionPath = "/apis/scheduling.x-k8s.io/v1alpha1/podgroups";

// PodGroupPhase values.
inline constexpr std::string_view kPhasePending = "Pending";
inline constexpr std::string_view kPhaseScheduling = "Scheduling";
inline constexpr std::string_view kPhaseScheduled = "Scheduled";
inline constexpr std::string_view kPhaseRunning = "Running";
inline constexpr std::string_view kPhaseFailed = "Failed";
inline constexpr std::string_view kPhaseFinished = "Finished";

struct PodGroupStatus {
  std::string phase;
  std::string occupiedBy;
  int32_t scheduled = 0;
  int32_t running = 0;
  int32_t succeeded = 0;
  int32_t failed = 0;
  std::string scheduleStartTime;  // RFC 3339, "" when unset

  friend bool operator==(const PodGroupStatus&, const PodGroupStatus&) = default;
};

struct PodGroup {
  api::ObjectMeta metadata;
  int32_t minMember = 0;
  std::optional<api::ResourceList> minResources;
  std::optional<int32_t> scheduleTimeoutSeconds;
  PodGroupStatus status;
  std::chrono::system_clock::time_point created{};  // metadata.creationTimestamp
};

// Decodes a PodGroup; throws api::DecodeError naming the field.
[[nodiscard]] PodGroup decodePodGroup(const nlohmann::json& j);
// The status as the merge patch of podgroups/<name>/status writes it (zero counts included).
[[nodiscard]] nlohmann::json statusToJson(const PodGroupStatus& s);

// The group a pod belongs to, from its labels.
struct GroupRef {
  std::string ns;
  std::string name;
  bool labelForm = false;     // pod-group.scheduling.sigs.k8s.io/* labels, no PodGroup object
  int32_t minAvailable = -1;  // label form: the min-available label, -1 when not a positive int

  // "<namespace>/<name>": the PodGroup's key; label-form groups are kept apart with a prefix.
  [[nodiscard]] std::string key() const {
    return labelForm ? "label:" + ns + "/" + name : ns + "/" + name;
  }
  [[nodiscard]] std::string fullName() const { return ns + "/" + name; }
};
[[nodiscard]] std::optional<GroupRef> groupOf(const api::Pod& pod);

}  // namespace ksched::plugins::coscheduling
