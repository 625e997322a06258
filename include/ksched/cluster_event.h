// Cluster events that can make a rejected pod schedulable (upstream framework.ClusterEvent).
// Plugins declare the events they care about (EnqueueExtensions); the queue moves a pod that
// a plugin rejected only on an event that plugin registered.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ksched {

enum class EventResource : uint8_t {
  kPod,  // an assigned (bound or assumed) pod
  kNode,
  kPersistentVolume,
  kPersistentVolumeClaim,
  kStorageClass,
  kCSINode,
  kPodDisruptionBudget,
  kNamespace,
  kService,
  kWildcard,  // matches every resource
};

// Bit flags, as upstream's ActionType.
enum ActionType : uint32_t {
  kAdd = 1u << 0,
  kDelete = 1u << 1,
  kUpdateNodeAllocatable = 1u << 2,
  kUpdateNodeLabel = 1u << 3,
  kUpdateNodeTaint = 1u << 4,
  kUpdateNodeCondition = 1u << 5,
  kUpdateNodeAnnotation = 1u << 6,
  kUpdatePodLabel = 1u << 7,
  kUpdatePodScaleDown = 1u << 8,  // a pod's requests went down
  kUpdatePodTolerations = 1u << 9,
  kUpdatePodSchedulingGatesEliminated = 1u << 10,
  kUpdateOther = 1u << 11,  // any other update (also spec.unschedulable of a node)
  kUpdate = kUpdateNodeAllocatable | kUpdateNodeLabel | kUpdateNodeTaint | kUpdateNodeCondition |
            kUpdateNodeAnnotation | kUpdatePodLabel | kUpdatePodScaleDown | kUpdatePodTolerations |
            kUpdatePodSchedulingGatesEliminated | kUpdateOther,
  kAll = kAdd | kDelete | kUpdate,
};

struct ClusterEvent {
  EventResource resource = EventResource::kWildcard;
  uint32_t actions = kAll;
  std::string label;  // for metrics: "NodeAdd", "AssignedPodDelete", "UnschedulableTimeout", ...

  // True if `this` (a registered interest) covers `ev` (an event that happened).
  [[nodiscard]] bool matches(const ClusterEvent& ev) const noexcept {
    return (resource == EventResource::kWildcard || resource == ev.resource) &&
           (actions & ev.actions) != 0;
  }
};

// Well-known events, named like upstream's labels.
namespace events {
inline const ClusterEvent kNodeAdd{EventResource::kNode, kAdd, "NodeAdd"};
inline const ClusterEvent kAssignedPodAdd{EventResource::kPod, kAdd, "AssignedPodAdd"};
inline const ClusterEvent kAssignedPodUpdate{EventResource::kPod, kUpdate, "AssignedPodUpdate"};
inline const ClusterEvent kAssignedPodDelete{EventResource::kPod, kDelete, "AssignedPodDelete"};
inline const ClusterEvent kUnschedulableTimeout{EventResource::kWildcard, kAll,
                                                "UnschedulableTimeout"};
inline const ClusterEvent kForceActivate{EventResource::kWildcard, kAll, "ForceActivate"};
}  // namespace events

}  // namespace ksched
