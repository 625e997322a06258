// Cluster events that can make a rejected pod schedulable (upstream framework.ClusterEvent) and
// the QueueingHints that judge them (upstream framework.QueueingHintFn).
//
// Plugins declare the events they care about (EnqueueExtensions); the queue moves a pod that a
// plugin rejected only on an event that plugin registered, and only if the registration's hint,
// asked about that pod and the changed object, says kQueue.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <ksched/api/features.h>
#include <ksched/api/node.h>
#include <ksched/api/pod.h>
#include <ksched/api/pod_group.h>
#include <ksched/api/policy.h>
#include <ksched/api/resource.h>
#include <ksched/api/storage.h>
#include <ksched/api/workloads.h>

namespace ksched {

enum class EventResource : uint8_t {
  // In a registration: any pod, bound or assumed ones (kAssignedPod) and the unscheduled pod
  // itself (kUnscheduledPod: a pending pod's own update). Incoming events never carry kPod.
  kPod,
  kAssignedPod,
  kUnscheduledPod,
  kNode,
  kPersistentVolume,
  kPersistentVolumeClaim,
  kStorageClass,
  kCSINode,
  kCSIDriver,
  kCSIStorageCapacity,
  kPodDisruptionBudget,
  kNamespace,
  kService,
  // Dynamic Resource Allocation (resource.k8s.io), reported by the plugin that watches them
  // (Handle::clusterEvent).
  kResourceClaim,
  kResourceSlice,
  kDeviceClass,
  // The Workload API (scheduling.k8s.io), reported by the plugin that watches them.
  kPodGroup,
  kCompositePodGroup,
  kWildcard,  // matches every resource
};

// Bit flags, as upstream's ActionType.
enum ActionType : uint32_t {
  kAdd = 1u << 0,
  kDelete = 1u << 1,
  kUpdateNodeAllocatable = 1u << 2,
  kUpdateNodeLabel = 1u << 3,
  kUpdateNodeTaint = 1u << 4,  // taints, or spec.unschedulable turned false
  kUpdateNodeCondition = 1u << 5,
  kUpdateNodeAnnotation = 1u << 6,
  kUpdatePodLabel = 1u << 7,
  kUpdatePodScaleDown = 1u << 8,  // some resource request went down or away
  kUpdatePodTolerations = 1u << 9,
  kUpdatePodSchedulingGatesEliminated = 1u << 10,
  kUpdateOther = 1u << 11,                // a pod update that is none of the above
  kUpdateNodeDeclaredFeature = 1u << 12,  // status.declaredFeatures
  // status.resourceClaimStatuses or status.extendedResourceClaimStatus changed
  kUpdatePodGeneratedResourceClaim = 1u << 13,
  // spec.podPreemptionPolicy changed (KEP 5836, InPlacePodVerticalScalingSchedulerPreemption)
  kUpdateNodePreemptionPolicy = 1u << 14,
  kUpdate = kUpdateNodeAllocatable | kUpdateNodeLabel | kUpdateNodeTaint | kUpdateNodeCondition |
            kUpdateNodeAnnotation | kUpdateNodeDeclaredFeature | kUpdateNodePreemptionPolicy |
            kUpdatePodLabel | kUpdatePodScaleDown | kUpdatePodTolerations |
            kUpdatePodSchedulingGatesEliminated | kUpdatePodGeneratedResourceClaim | kUpdateOther,
  kAll = kAdd | kDelete | kUpdate,
};

// Upstream's names: "Pod", "AssignedPod", "Node", "storage.k8s.io/CSINode", ...
[[nodiscard]] std::string_view resourceName(EventResource r) noexcept;
// Upstream's names of single actions ("Add", "UpdateNodeLabel", kUpdateOther: "Update"), "All",
// "Update"; "" for other combinations.
[[nodiscard]] std::string_view actionName(uint32_t actions) noexcept;

struct ClusterEvent {
  EventResource resource = EventResource::kWildcard;
  uint32_t actions = kAll;
  // Overrides label(); only special events (UnschedulableTimeout, ForceActivate) set it.
  std::string customLabel;

  // For logs and metrics (scheduler_queue_incoming_pods_total{event}): customLabel, else
  // resource name + action name, as upstream ("NodeAdd", "AssignedPodUpdatePodLabel").
  [[nodiscard]] std::string label() const;
  // {kWildcard, kAll}: moves every pod, whatever rejected it.
  [[nodiscard]] bool isWildcard() const noexcept {
    return resource == EventResource::kWildcard && actions == kAll;
  }
  // True if `this` (a registered interest) covers `ev` (an event that happened).
  [[nodiscard]] bool matches(const ClusterEvent& ev) const noexcept {
    if (isWildcard()) return true;
    const bool resourceMatches =
        resource == EventResource::kWildcard || resource == ev.resource ||
        (resource == EventResource::kPod && (ev.resource == EventResource::kAssignedPod ||
                                             ev.resource == EventResource::kUnscheduledPod));
    return resourceMatches && (actions & ev.actions) != 0;
  }
};

// The object an event is about, old or new version. Empty (monostate) for the old version of an
// add and the new version of a delete.
using EventObject = std::variant<
    std::monostate, std::shared_ptr<const api::Pod>, std::shared_ptr<const api::Node>,
    std::shared_ptr<const api::PersistentVolume>, std::shared_ptr<const api::PersistentVolumeClaim>,
    std::shared_ptr<const api::StorageClass>, std::shared_ptr<const api::CSINode>,
    std::shared_ptr<const api::PodDisruptionBudget>, std::shared_ptr<const api::Namespace>,
    std::shared_ptr<const api::Service>, std::shared_ptr<const api::ResourceClaim>,
    std::shared_ptr<const api::ResourceSlice>, std::shared_ptr<const api::DeviceClass>,
    std::shared_ptr<const api::PodGroup>, std::shared_ptr<const api::CompositePodGroup>,
    std::shared_ptr<const api::CSIDriver>, std::shared_ptr<const api::CSIStorageCapacity>>;

// The object if it is a T, else nullptr: `if (const api::Node* n = as<api::Node>(newObj))`.
template <typename T>
[[nodiscard]] const T* as(const EventObject& obj) noexcept {
  const auto* p = std::get_if<std::shared_ptr<const T>>(&obj);
  return p == nullptr ? nullptr : p->get();
}

enum class QueueingHint : uint8_t {
  kSkip,   // the event cannot make the pod schedulable
  kQueue,  // it may: retry the pod (after its backoff)
};

// Asked for a pod the plugin rejected, when an event it registered happens: `oldObj`/`newObj`
// are the changed object before and after (empty for an add's old, a delete's new). Runs on an
// informer thread with the queue locked: fast, thread-safe, no calls into the scheduler. A hint
// that throws counts as kQueue (the error is logged), so no pod is stuck by a bug.
using QueueingHintFn = std::function<QueueingHint(const api::Pod& pod, const EventObject& oldObj,
                                                  const EventObject& newObj)>;

struct ClusterEventWithHint {
  // NOLINTNEXTLINE(google-explicit-constructor): a bare ClusterEvent registers without a hint.
  ClusterEventWithHint(ClusterEvent e, QueueingHintFn h = {})
      : event(std::move(e)), hint(std::move(h)) {}
  ClusterEventWithHint(EventResource r, uint32_t a, QueueingHintFn h = {})
      : event{r, a, {}}, hint(std::move(h)) {}

  ClusterEvent event;
  QueueingHintFn hint;  // empty: always kQueue
};

// Well-known events, labelled as upstream.
namespace events {
inline const ClusterEvent kNodeAdd{EventResource::kNode, kAdd, {}};
inline const ClusterEvent kAssignedPodAdd{EventResource::kAssignedPod, kAdd, {}};
inline const ClusterEvent kAssignedPodDelete{EventResource::kAssignedPod, kDelete, {}};
inline const ClusterEvent kUnschedulableTimeout{EventResource::kWildcard, kAll,
                                                "UnschedulableTimeout"};
inline const ClusterEvent kForceActivate{EventResource::kWildcard, kAll, "ForceActivate"};
}  // namespace events

// How a pod changed, as upstream's PodSchedulingPropertiesChange: one event per kind of change
// (labels, a request scaled down, tolerations, scheduling gates all removed), or one kUpdateOther
// event if none of those; the resource is kAssignedPod if `newPod` has a node, else
// kUnscheduledPod. Status and resourceVersion are not compared: callers skip updates that
// changed nothing a scheduler reads. `gates`: the scheduler's (they say how requests count).
[[nodiscard]] std::vector<ClusterEvent> podSchedulingPropertiesChange(const api::Pod& newPod,
                                                                      const api::Pod& oldPod,
                                                                      const features::Gates& gates);
// Some effective request of the pod went down or went away between `oldPod` and `newPod`, spec or
// in-place resize status (upstream extractPodScaleDown): the kUpdatePodScaleDown change.
[[nodiscard]] bool podScaledDown(const api::Pod& newPod, const api::Pod& oldPod,
                                 const features::Gates& gates);
// How a node changed, as upstream's nodeSchedulingPropertiesChange: kUpdateNodeAllocatable,
// kUpdateNodeLabel, kUpdateNodeTaint (taints, or spec.unschedulable turned false),
// kUpdateNodeCondition (conditions compared as a type -> status map), kUpdateNodeAnnotation,
// kUpdateNodeDeclaredFeature (status.declaredFeatures), kUpdateNodePreemptionPolicy
// (spec.podPreemptionPolicy); empty if none of these changed.
[[nodiscard]] std::vector<ClusterEvent> nodeSchedulingPropertiesChange(const api::Node& newNode,
                                                                       const api::Node& oldNode);

}  // namespace ksched
