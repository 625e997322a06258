#include <map>

#include <ksched/api/pod_resources.h>
#include <ksched/cluster_event.h>

namespace ksched {

std::string_view resourceName(EventResource r) noexcept {
  switch (r) {
    case EventResource::kPod:
      return "Pod";
    case EventResource::kAssignedPod:
      return "AssignedPod";
    case EventResource::kUnscheduledPod:
      return "UnschedulablePod";
    case EventResource::kNode:
      return "Node";
    case EventResource::kPersistentVolume:
      return "PersistentVolume";
    case EventResource::kPersistentVolumeClaim:
      return "PersistentVolumeClaim";
    case EventResource::kStorageClass:
      return "storage.k8s.io/StorageClass";
    case EventResource::kCSINode:
      return "storage.k8s.io/CSINode";
    case EventResource::kCSIDriver:
      return "storage.k8s.io/CSIDriver";
    case EventResource::kCSIStorageCapacity:
      return "storage.k8s.io/CSIStorageCapacity";
    case EventResource::kPodDisruptionBudget:
      return "policy/PodDisruptionBudget";
    case EventResource::kNamespace:
      return "Namespace";
    case EventResource::kService:
      return "Service";
    case EventResource::kResourceClaim:
      return "resource.k8s.io/ResourceClaim";
    case EventResource::kResourceSlice:
      return "resource.k8s.io/ResourceSlice";
    case EventResource::kDeviceClass:
      return "resource.k8s.io/DeviceClass";
    case EventResource::kPodGroup:
      return "scheduling.k8s.io/PodGroup";
    case EventResource::kCompositePodGroup:
      return "scheduling.k8s.io/CompositePodGroup";
    case EventResource::kWildcard:
      return "*";
  }
  return "";
}

std::string_view actionName(uint32_t actions) noexcept {
  switch (actions) {
    case kAdd:
      return "Add";
    case kDelete:
      return "Delete";
    case kUpdateNodeAllocatable:
      return "UpdateNodeAllocatable";
    case kUpdateNodeLabel:
      return "UpdateNodeLabel";
    case kUpdateNodeTaint:
      return "UpdateNodeTaint";
    case kUpdateNodeCondition:
      return "UpdateNodeCondition";
    case kUpdateNodeAnnotation:
      return "UpdateNodeAnnotation";
    case kUpdateNodeDeclaredFeature:
      return "UpdateNodeDeclaredFeature";
    case kUpdateNodePreemptionPolicy:
      return "UpdateNodePreemptionPolicy";
    case kUpdatePodLabel:
      return "UpdatePodLabel";
    case kUpdatePodScaleDown:
      return "UpdatePodScaleDown";
    case kUpdatePodTolerations:
      return "UpdatePodToleration";
    case kUpdatePodSchedulingGatesEliminated:
      return "UpdatePodSchedulingGatesEliminated";
    case kUpdatePodGeneratedResourceClaim:
      return "UpdatePodGeneratedResourceClaim";
    case kUpdateOther:
    case kUpdate:
      return "Update";
    case kAll:
      return "All";
    default:
      return "";
  }
}

std::string ClusterEvent::label() const {
  if (!customLabel.empty()) return customLabel;
  std::string s(resourceName(resource));
  s += actionName(actions);
  return s;
}

namespace {

std::map<std::string_view, std::string_view> conditionMap(const api::Node& n) {
  std::map<std::string_view, std::string_view> m;
  for (const auto& c : n.status.conditions) m[c.type] = c.status;
  return m;
}

}  // namespace

bool podScaledDown(const api::Pod& newPod, const api::Pod& oldPod, const features::Gates& gates) {
  // Upstream extractPodScaleDown: resize status per InPlacePodVerticalScaling, pod-level requests
  // always, pod-level status totals not read.
  api::PodResourcesOptions options(gates);
  options.skipPodLevelResources = false;
  options.podLevelStatusResources = false;
  const api::ResourceList before = api::effectiveRequests(oldPod, options);
  if (before.empty()) return false;
  const api::ResourceList after = api::effectiveRequests(newPod, options);
  for (const auto& [name, q] : before) {
    auto it = after.find(name);
    if (it == after.end() || q.milliValue() > it->second.milliValue()) return true;
  }
  return false;
}

std::vector<ClusterEvent> podSchedulingPropertiesChange(const api::Pod& newPod,
                                                        const api::Pod& oldPod,
                                                        const features::Gates& gates) {
  const EventResource r =
      newPod.spec.nodeName.empty() ? EventResource::kUnscheduledPod : EventResource::kAssignedPod;
  std::vector<ClusterEvent> out;
  auto add = [&](bool changed, uint32_t a) {
    if (changed) out.push_back(ClusterEvent{r, a, {}});
  };
  add(newPod.metadata.labels != oldPod.metadata.labels, kUpdatePodLabel);
  add(podScaledDown(newPod, oldPod, gates), kUpdatePodScaleDown);
  add(newPod.spec.schedulingGates.empty() && !oldPod.spec.schedulingGates.empty(),
      kUpdatePodSchedulingGatesEliminated);
  // The API only lets tolerations be added, so a different count is a change.
  add(newPod.spec.tolerations.size() != oldPod.spec.tolerations.size(), kUpdatePodTolerations);
  add(newPod.status.resourceClaimStatuses != oldPod.status.resourceClaimStatuses,
      kUpdatePodGeneratedResourceClaim);
  add(out.empty(), kUpdateOther);
  return out;
}

std::vector<ClusterEvent> nodeSchedulingPropertiesChange(const api::Node& newNode,
                                                         const api::Node& oldNode) {
  std::vector<ClusterEvent> out;
  auto add = [&](bool changed, uint32_t a) {
    if (changed) out.push_back(ClusterEvent{EventResource::kNode, a, {}});
  };
  // Only unschedulable -> schedulable can help a pending pod.
  add(newNode.status.allocatable != oldNode.status.allocatable, kUpdateNodeAllocatable);
  add(newNode.metadata.labels != oldNode.metadata.labels, kUpdateNodeLabel);
  add((oldNode.spec.unschedulable && !newNode.spec.unschedulable) ||
          newNode.spec.taints != oldNode.spec.taints,
      kUpdateNodeTaint);
  add(conditionMap(newNode) != conditionMap(oldNode), kUpdateNodeCondition);
  add(newNode.metadata.annotations != oldNode.metadata.annotations, kUpdateNodeAnnotation);
  add(newNode.status.declaredFeatures != oldNode.status.declaredFeatures,
      kUpdateNodeDeclaredFeature);
  add(newNode.spec.disableResizePreemption != oldNode.spec.disableResizePreemption,
      kUpdateNodePreemptionPolicy);
  return out;
}

}  // namespace ksched
