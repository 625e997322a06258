#include "queue/pod_update.h"

#include <algorithm>
#include <optional>
#include <string_view>
#include <vector>

namespace ksched::queue {
namespace {

// Declared before the templates so that eq() on vectors and optionals finds them.
bool eq(const api::OwnerReference& a, const api::OwnerReference& b);
bool eq(const api::ResourceRequirements& a, const api::ResourceRequirements& b);
bool eq(const api::ContainerStatus& a, const api::ContainerStatus& b);
bool eq(const api::ContainerPort& a, const api::ContainerPort& b);
bool eq(const api::Container& a, const api::Container& b);
bool eq(const api::PreferredSchedulingTerm& a, const api::PreferredSchedulingTerm& b);
bool eq(const api::NodeAffinity& a, const api::NodeAffinity& b);
bool eq(const api::PodAffinityTerm& a, const api::PodAffinityTerm& b);
bool eq(const api::WeightedPodAffinityTerm& a, const api::WeightedPodAffinityTerm& b);
bool eq(const api::PodAffinity& a, const api::PodAffinity& b);
bool eq(const api::Affinity& a, const api::Affinity& b);
bool eq(const api::TopologySpreadConstraint& a, const api::TopologySpreadConstraint& b);
bool eq(const api::PersistentVolumeClaimVolumeSource& a,
        const api::PersistentVolumeClaimVolumeSource& b);
bool eq(const api::GCEPersistentDiskVolumeSource& a, const api::GCEPersistentDiskVolumeSource& b);
bool eq(const api::AWSElasticBlockStoreVolumeSource& a,
        const api::AWSElasticBlockStoreVolumeSource& b);
bool eq(const api::AzureDiskVolumeSource& a, const api::AzureDiskVolumeSource& b);
bool eq(const api::CinderVolumeSource& a, const api::CinderVolumeSource& b);
bool eq(const api::RBDVolumeSource& a, const api::RBDVolumeSource& b);
bool eq(const api::ISCSIVolumeSource& a, const api::ISCSIVolumeSource& b);
bool eq(const api::CSIVolumeSource& a, const api::CSIVolumeSource& b);
bool eq(const api::Volume& a, const api::Volume& b);

template <typename T>
bool eq(const T& a, const T& b) {
  return a == b;
}

template <typename T>
bool eq(const std::optional<T>& a, const std::optional<T>& b) {
  if (a.has_value() != b.has_value()) return false;
  return !a || eq(*a, *b);
}

template <typename T>
bool eq(const std::vector<T>& a, const std::vector<T>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const T& x, const T& y) { return eq(x, y); });
}

bool eq(const api::OwnerReference& a, const api::OwnerReference& b) {
  return a.apiVersion == b.apiVersion && a.kind == b.kind && a.name == b.name && a.uid == b.uid &&
         a.controller == b.controller;
}

bool eq(const api::ResourceRequirements& a, const api::ResourceRequirements& b) {
  return a.requests == b.requests && a.limits == b.limits;
}

bool eq(const api::ContainerStatus& a, const api::ContainerStatus& b) {
  return a.name == b.name && a.allocatedResources == b.allocatedResources &&
         eq(a.resources, b.resources);
}

bool eq(const api::ContainerPort& a, const api::ContainerPort& b) {
  return a.name == b.name && a.containerPort == b.containerPort && a.hostPort == b.hostPort &&
         a.hostIP == b.hostIP && a.protocol == b.protocol;
}

bool eq(const api::Container& a, const api::Container& b) {
  return a.name == b.name && a.image == b.image && a.resources.requests == b.resources.requests &&
         a.resources.limits == b.resources.limits && eq(a.ports, b.ports) &&
         a.restartPolicy == b.restartPolicy && a.restartPolicyRules == b.restartPolicyRules &&
         a.volumeMounts == b.volumeMounts;
}

bool eq(const api::PreferredSchedulingTerm& a, const api::PreferredSchedulingTerm& b) {
  return a.weight == b.weight && a.preference == b.preference;
}

bool eq(const api::NodeAffinity& a, const api::NodeAffinity& b) {
  return a.requiredDuringSchedulingIgnoredDuringExecution ==
             b.requiredDuringSchedulingIgnoredDuringExecution &&
         eq(a.preferredDuringSchedulingIgnoredDuringExecution,
            b.preferredDuringSchedulingIgnoredDuringExecution);
}

bool eq(const api::PodAffinityTerm& a, const api::PodAffinityTerm& b) {
  return a.labelSelector == b.labelSelector && a.namespaces == b.namespaces &&
         a.topologyKey == b.topologyKey && a.namespaceSelector == b.namespaceSelector &&
         a.matchLabelKeys == b.matchLabelKeys && a.mismatchLabelKeys == b.mismatchLabelKeys;
}

bool eq(const api::WeightedPodAffinityTerm& a, const api::WeightedPodAffinityTerm& b) {
  return a.weight == b.weight && eq(a.podAffinityTerm, b.podAffinityTerm);
}

bool eq(const api::PodAffinity& a, const api::PodAffinity& b) {
  return eq(a.requiredDuringSchedulingIgnoredDuringExecution,
            b.requiredDuringSchedulingIgnoredDuringExecution) &&
         eq(a.preferredDuringSchedulingIgnoredDuringExecution,
            b.preferredDuringSchedulingIgnoredDuringExecution);
}

bool eq(const api::Affinity& a, const api::Affinity& b) {
  return eq(a.nodeAffinity, b.nodeAffinity) && eq(a.podAffinity, b.podAffinity) &&
         eq(a.podAntiAffinity, b.podAntiAffinity);
}

bool eq(const api::TopologySpreadConstraint& a, const api::TopologySpreadConstraint& b) {
  return a.maxSkew == b.maxSkew && a.topologyKey == b.topologyKey &&
         a.whenUnsatisfiable == b.whenUnsatisfiable && a.labelSelector == b.labelSelector &&
         a.minDomains == b.minDomains && a.nodeAffinityPolicy == b.nodeAffinityPolicy &&
         a.nodeTaintsPolicy == b.nodeTaintsPolicy && a.matchLabelKeys == b.matchLabelKeys;
}

bool eq(const api::PersistentVolumeClaimVolumeSource& a,
        const api::PersistentVolumeClaimVolumeSource& b) {
  return a.claimName == b.claimName && a.readOnly == b.readOnly;
}

bool eq(const api::GCEPersistentDiskVolumeSource& a, const api::GCEPersistentDiskVolumeSource& b) {
  return a.pdName == b.pdName && a.partition == b.partition && a.readOnly == b.readOnly;
}

bool eq(const api::AWSElasticBlockStoreVolumeSource& a,
        const api::AWSElasticBlockStoreVolumeSource& b) {
  return a.volumeID == b.volumeID && a.partition == b.partition && a.readOnly == b.readOnly;
}

bool eq(const api::AzureDiskVolumeSource& a, const api::AzureDiskVolumeSource& b) {
  return a.diskName == b.diskName && a.diskURI == b.diskURI && a.readOnly == b.readOnly;
}

bool eq(const api::CinderVolumeSource& a, const api::CinderVolumeSource& b) {
  return a.volumeID == b.volumeID && a.readOnly == b.readOnly;
}

bool eq(const api::RBDVolumeSource& a, const api::RBDVolumeSource& b) {
  return a.monitors == b.monitors && a.image == b.image && a.pool == b.pool &&
         a.readOnly == b.readOnly;
}

bool eq(const api::ISCSIVolumeSource& a, const api::ISCSIVolumeSource& b) {
  return a.targetPortal == b.targetPortal && a.iqn == b.iqn && a.lun == b.lun &&
         a.readOnly == b.readOnly;
}

bool eq(const api::CSIVolumeSource& a, const api::CSIVolumeSource& b) {
  return a.driver == b.driver && a.readOnly == b.readOnly;
}

bool eq(const api::Volume& a, const api::Volume& b) {
  return a.name == b.name && eq(a.persistentVolumeClaim, b.persistentVolumeClaim) &&
         eq(a.gcePersistentDisk, b.gcePersistentDisk) &&
         eq(a.awsElasticBlockStore, b.awsElasticBlockStore) && eq(a.azureDisk, b.azureDisk) &&
         eq(a.cinder, b.cinder) && eq(a.rbd, b.rbd) && eq(a.iscsi, b.iscsi) &&
         a.ephemeral == b.ephemeral && eq(a.csi, b.csi);
}

bool metaEqual(const api::ObjectMeta& a, const api::ObjectMeta& b) {
  return a.name == b.name && a.namespace_ == b.namespace_ && a.uid == b.uid &&
         a.labels == b.labels && a.annotations == b.annotations &&
         eq(a.ownerReferences, b.ownerReferences) && a.creationTimestamp == b.creationTimestamp &&
         a.deletionTimestamp == b.deletionTimestamp &&
         a.deletionGracePeriodSeconds == b.deletionGracePeriodSeconds;
}

bool specEqual(const api::PodSpec& a, const api::PodSpec& b) {
  return a.nodeName == b.nodeName && eq(a.resources, b.resources) &&
         a.schedulerName == b.schedulerName && a.priority == b.priority &&
         a.priorityClassName == b.priorityClassName && a.preemptionPolicy == b.preemptionPolicy &&
         a.nodeSelector == b.nodeSelector && eq(a.affinity, b.affinity) &&
         a.tolerations == b.tolerations &&
         eq(a.topologySpreadConstraints, b.topologySpreadConstraints) &&
         eq(a.containers, b.containers) && eq(a.initContainers, b.initContainers) &&
         a.overhead == b.overhead && eq(a.volumes, b.volumes) &&
         a.schedulingGates == b.schedulingGates &&
         a.terminationGracePeriodSeconds == b.terminationGracePeriodSeconds &&
         a.hostNetwork == b.hostNetwork && a.hostUsers == b.hostUsers &&
         eq(a.ephemeralContainers, b.ephemeralContainers) && a.resourceClaims == b.resourceClaims;
}

}  // namespace

bool isPodUpdated(const api::Pod& oldPod, const api::Pod& newPod) {
  return !metaEqual(oldPod.metadata, newPod.metadata) || !specEqual(oldPod.spec, newPod.spec);
}

bool podResizeStatusChanged(const api::Pod& oldPod, const api::Pod& newPod) {
  const api::PodStatus& a = oldPod.status;
  const api::PodStatus& b = newPod.status;
  auto resizeReason = [](const api::Pod& p) -> std::string_view {
    const api::PodCondition* c = p.condition(api::kPodConditionResizePending);
    return c != nullptr ? std::string_view(c->reason) : std::string_view();
  };
  return !eq(a.containerStatuses, b.containerStatuses) ||
         !eq(a.initContainerStatuses, b.initContainerStatuses) ||
         a.allocatedResources != b.allocatedResources || !eq(a.resources, b.resources) ||
         resizeReason(oldPod) != resizeReason(newPod);
}

}  // namespace ksched::queue
