#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include <ksched/api/decode.h>
#include <ksched/api/pod.h>

namespace ksched::api {
namespace {

struct SchedulingGate {
  std::string name;
};

void from_json(const nlohmann::json& j, SchedulingGate& g) { readField(j, "name", g.name); }

}  // namespace

const PodCondition* Pod::condition(std::string_view type) const noexcept {
  for (const auto& c : status.conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

const ContainerStatus* Pod::containerStatus(std::string_view name) const noexcept {
  for (const auto& s : status.containerStatuses) {
    if (s.name == name) return &s;
  }
  for (const auto& s : status.initContainerStatuses) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

int32_t podPriority(const Pod& pod) noexcept { return pod.spec.priority.value_or(0); }

std::string ephemeralVolumeClaimName(const Pod& pod, const Volume& volume) {
  return pod.metadata.name + "-" + volume.name;
}

void from_json(const nlohmann::json& j, ContainerResourceClaim& c) {
  readField(j, "name", c.name);
  readField(j, "request", c.request);
}

void from_json(const nlohmann::json& j, ResourceRequirements& r) {
  readField(j, "requests", r.requests);
  readField(j, "limits", r.limits);
  readField(j, "claims", r.claims);
}

void from_json(const nlohmann::json& j, ContainerPort& p) {
  readField(j, "name", p.name);
  readField(j, "containerPort", p.containerPort);
  readField(j, "hostPort", p.hostPort);
  readField(j, "hostIP", p.hostIP);
  readField(j, "protocol", p.protocol);
  if (p.protocol.empty()) p.protocol = kProtocolTCP;
}

void from_json(const nlohmann::json& j, ContainerRestartRule& r) {
  readField(j, "action", r.action);
}

void from_json(const nlohmann::json& j, VolumeMount& m) {
  readField(j, "name", m.name);
  readField(j, "mountPath", m.mountPath);
  readField(j, "bindMountOptions", m.bindMountOptions);
}

void from_json(const nlohmann::json& j, Container& c) {
  readField(j, "name", c.name);
  readField(j, "image", c.image);
  readField(j, "resources", c.resources);
  readField(j, "ports", c.ports);
  readField(j, "restartPolicy", c.restartPolicy);
  readField(j, "restartPolicyRules", c.restartPolicyRules);
  readField(j, "volumeMounts", c.volumeMounts);
}

void from_json(const nlohmann::json& j, PreferredSchedulingTerm& t) {
  readField(j, "weight", t.weight);
  readField(j, "preference", t.preference);
}

void from_json(const nlohmann::json& j, NodeAffinity& a) {
  readField(j, "requiredDuringSchedulingIgnoredDuringExecution",
            a.requiredDuringSchedulingIgnoredDuringExecution);
  readField(j, "preferredDuringSchedulingIgnoredDuringExecution",
            a.preferredDuringSchedulingIgnoredDuringExecution);
}

void from_json(const nlohmann::json& j, PodAffinityTerm& t) {
  readField(j, "labelSelector", t.labelSelector);
  readField(j, "namespaces", t.namespaces);
  readField(j, "topologyKey", t.topologyKey);
  readField(j, "namespaceSelector", t.namespaceSelector);
  readField(j, "matchLabelKeys", t.matchLabelKeys);
  readField(j, "mismatchLabelKeys", t.mismatchLabelKeys);
}

void from_json(const nlohmann::json& j, WeightedPodAffinityTerm& t) {
  readField(j, "weight", t.weight);
  readField(j, "podAffinityTerm", t.podAffinityTerm);
}

void from_json(const nlohmann::json& j, PodAffinity& a) {
  readField(j, "requiredDuringSchedulingIgnoredDuringExecution",
            a.requiredDuringSchedulingIgnoredDuringExecution);
  readField(j, "preferredDuringSchedulingIgnoredDuringExecution",
            a.preferredDuringSchedulingIgnoredDuringExecution);
}

void from_json(const nlohmann::json& j, Affinity& a) {
  readField(j, "nodeAffinity", a.nodeAffinity);
  readField(j, "podAffinity", a.podAffinity);
  readField(j, "podAntiAffinity", a.podAntiAffinity);
}

void from_json(const nlohmann::json& j, TopologySpreadConstraint& c) {
  readField(j, "maxSkew", c.maxSkew);
  readField(j, "topologyKey", c.topologyKey);
  readField(j, "whenUnsatisfiable", c.whenUnsatisfiable);
  readField(j, "labelSelector", c.labelSelector);
  readField(j, "minDomains", c.minDomains);
  readField(j, "nodeAffinityPolicy", c.nodeAffinityPolicy);
  readField(j, "nodeTaintsPolicy", c.nodeTaintsPolicy);
  readField(j, "matchLabelKeys", c.matchLabelKeys);
}

void from_json(const nlohmann::json& j, PersistentVolumeClaimVolumeSource& s) {
  readField(j, "claimName", s.claimName);
  readField(j, "readOnly", s.readOnly);
}

void from_json(const nlohmann::json& j, RBDVolumeSource& s) {
  readField(j, "monitors", s.monitors);
  readField(j, "image", s.image);
  readField(j, "pool", s.pool);
  if (s.pool.empty()) s.pool = "rbd";
  readField(j, "readOnly", s.readOnly);
}

void from_json(const nlohmann::json& j, ISCSIVolumeSource& s) {
  readField(j, "targetPortal", s.targetPortal);
  readField(j, "iqn", s.iqn);
  readField(j, "lun", s.lun);
  readField(j, "readOnly", s.readOnly);
}

void from_json(const nlohmann::json& j, CSIVolumeSource& s) {
  readField(j, "driver", s.driver);
  readField(j, "readOnly", s.readOnly);
}

void from_json(const nlohmann::json& j, Volume& v) {
  readField(j, "name", v.name);
  readField(j, "persistentVolumeClaim", v.persistentVolumeClaim);
  readField(j, "gcePersistentDisk", v.gcePersistentDisk);
  readField(j, "awsElasticBlockStore", v.awsElasticBlockStore);
  readField(j, "azureDisk", v.azureDisk);
  readField(j, "cinder", v.cinder);
  readField(j, "rbd", v.rbd);
  readField(j, "iscsi", v.iscsi);
  readField(j, "csi", v.csi);
  // Sources known only by their presence.
  for (auto [key, flag] : {std::pair{"ephemeral", &v.ephemeral}, std::pair{"emptyDir", &v.emptyDir},
                           std::pair{"hostPath", &v.hostPath}}) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) continue;
    if (!it->is_object()) throw DecodeError(std::string(key) + ": expected an object");
    *flag = true;
  }
}

void from_json(const nlohmann::json& j, PodResourceClaim& c) {
  readField(j, "name", c.name);
  readField(j, "resourceClaimName", c.resourceClaimName);
  readField(j, "resourceClaimTemplateName", c.resourceClaimTemplateName);
}

void from_json(const nlohmann::json& j, PodResourceClaimStatus& s) {
  readField(j, "name", s.name);
  readField(j, "resourceClaimName", s.resourceClaimName);
}

void from_json(const nlohmann::json& j, ContainerExtendedResourceRequest& r) {
  readField(j, "containerName", r.containerName);
  readField(j, "resourceName", r.resourceName);
  readField(j, "requestName", r.requestName);
}

void from_json(const nlohmann::json& j, PodExtendedResourceClaimStatus& s) {
  readField(j, "requestMappings", s.requestMappings);
  readField(j, "resourceClaimName", s.resourceClaimName);
}

void from_json(const nlohmann::json& j, PodSchedulingGroup& g) {
  readField(j, "podGroupName", g.podGroupName);
}

void from_json(const nlohmann::json& j, PodSpec& s) {
  readField(j, "nodeName", s.nodeName);
  readField(j, "resources", s.resources);
  readField(j, "schedulerName", s.schedulerName);
  if (s.schedulerName.empty()) s.schedulerName = kDefaultSchedulerName;
  readField(j, "priority", s.priority);
  readField(j, "priorityClassName", s.priorityClassName);
  readField(j, "preemptionPolicy", s.preemptionPolicy);
  readField(j, "nodeSelector", s.nodeSelector);
  readField(j, "affinity", s.affinity);
  readField(j, "tolerations", s.tolerations);
  readField(j, "topologySpreadConstraints", s.topologySpreadConstraints);
  readField(j, "containers", s.containers);
  readField(j, "initContainers", s.initContainers);
  readField(j, "overhead", s.overhead);
  readField(j, "volumes", s.volumes);
  std::vector<SchedulingGate> gates;
  readField(j, "schedulingGates", gates);
  s.schedulingGates.clear();
  for (auto& g : gates) s.schedulingGates.push_back(std::move(g.name));
  readField(j, "terminationGracePeriodSeconds", s.terminationGracePeriodSeconds);
  readField(j, "hostNetwork", s.hostNetwork);
  readField(j, "hostUsers", s.hostUsers);
  readField(j, "ephemeralContainers", s.ephemeralContainers);
  readField(j, "resourceClaims", s.resourceClaims);
  readField(j, "schedulingGroup", s.schedulingGroup);
}

void from_json(const nlohmann::json& j, PodCondition& c) {
  readField(j, "type", c.type);
  readField(j, "status", c.status);
  readField(j, "reason", c.reason);
  readField(j, "message", c.message);
  readField(j, "lastTransitionTime", c.lastTransitionTime);
}

void from_json(const nlohmann::json& j, ContainerStatus& s) {
  readField(j, "name", s.name);
  readField(j, "allocatedResources", s.allocatedResources);
  readField(j, "resources", s.resources);
}

void from_json(const nlohmann::json& j, PodStatus& s) {
  readField(j, "phase", s.phase);
  readField(j, "conditions", s.conditions);
  readField(j, "nominatedNodeName", s.nominatedNodeName);
  readField(j, "startTime", s.startTime);
  readField(j, "containerStatuses", s.containerStatuses);
  readField(j, "initContainerStatuses", s.initContainerStatuses);
  readField(j, "allocatedResources", s.allocatedResources);
  readField(j, "resources", s.resources);
  readField(j, "resize", s.resize);
  readField(j, "resourceClaimStatuses", s.resourceClaimStatuses);
  readField(j, "extendedResourceClaimStatus", s.extendedResourceClaimStatus);
}

void from_json(const nlohmann::json& j, Pod& p) {
  readField(j, "metadata", p.metadata);
  readField(j, "spec", p.spec);
  readField(j, "status", p.status);
}

void to_json(nlohmann::json& j, const PodCondition& c) {
  j = {{"type", c.type}, {"status", c.status}};
  if (!c.reason.empty()) j["reason"] = c.reason;
  if (!c.message.empty()) j["message"] = c.message;
  if (!c.lastTransitionTime.empty()) j["lastTransitionTime"] = c.lastTransitionTime;
}

}  // namespace ksched::api
