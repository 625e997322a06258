#include <algorithm>
#include <nlohmann/json.hpp>

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

namespace {

bool sameMounts(const std::vector<VolumeMount>& a, const std::vector<VolumeMount>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const VolumeMount& x, const VolumeMount& y) {
                      return x.mountPath == y.mountPath && x.bindMountOptions == y.bindMountOptions;
                    });
}

bool sameContainers(const std::vector<Container>& a, const std::vector<Container>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const Container& x, const Container& y) {
                      return x.name == y.name && x.image == y.image && x.resources == y.resources &&
                             x.ports == y.ports && x.restartPolicy == y.restartPolicy &&
                             x.restartPolicyRules == y.restartPolicyRules &&
                             sameMounts(x.volumeMounts, y.volumeMounts);
                    });
}

// A volume that some plugin reads: one of the sources the decoder keeps.
bool hasSource(const Volume& v) {
  return v.persistentVolumeClaim || v.gcePersistentDisk || v.awsElasticBlockStore || v.azureDisk ||
         v.cinder || v.rbd || v.iscsi || v.ephemeral || v.csi;
}

// The volumes with a source, in order, by source (their names are not read).
bool sameVolumes(const std::vector<Volume>& a, const std::vector<Volume>& b) {
  auto i = a.begin();
  auto j = b.begin();
  while (true) {
    while (i != a.end() && !hasSource(*i)) ++i;
    while (j != b.end() && !hasSource(*j)) ++j;
    if (i == a.end() || j == b.end()) return i == a.end() && j == b.end();
    if (i->ephemeral || j->ephemeral) return false;
    Volume x = *i;
    x.name = j->name;
    if (!(x == *j)) return false;
    ++i;
    ++j;
  }
}

}  // namespace

bool sameSchedulingInputs(const Pod& a, const Pod& b) {
  const PodSpec& x = a.spec;
  const PodSpec& y = b.spec;
  return a.metadata.namespace_ == b.metadata.namespace_ && a.metadata.labels == b.metadata.labels &&
         x.nodeName == y.nodeName && x.schedulerName == y.schedulerName &&
         x.priority == y.priority && x.priorityClassName == y.priorityClassName &&
         x.preemptionPolicy == y.preemptionPolicy && x.resources == y.resources &&
         x.overhead == y.overhead && x.nodeSelector == y.nodeSelector && x.affinity == y.affinity &&
         x.tolerations == y.tolerations &&
         x.topologySpreadConstraints == y.topologySpreadConstraints &&
         x.schedulingGates == y.schedulingGates && x.hostNetwork == y.hostNetwork &&
         x.hostUsers == y.hostUsers && x.resourceClaims == y.resourceClaims &&
         sameContainers(x.containers, y.containers) &&
         sameContainers(x.initContainers, y.initContainers) &&
         sameContainers(x.ephemeralContainers, y.ephemeralContainers) &&
         sameVolumes(x.volumes, y.volumes) &&
         a.status.nominatedNodeName == b.status.nominatedNodeName &&
         a.status.containerStatuses == b.status.containerStatuses &&
         a.status.initContainerStatuses == b.status.initContainerStatuses &&
         a.status.allocatedResources == b.status.allocatedResources &&
         a.status.resources == b.status.resources &&
         a.status.resourceClaimStatuses == b.status.resourceClaimStatuses &&
         a.status.extendedResourceClaimStatus == b.status.extendedResourceClaimStatus &&
         a.status.conditions.size() == b.status.conditions.size() &&
         std::equal(a.status.conditions.begin(), a.status.conditions.end(),
                    b.status.conditions.begin(), [](const PodCondition& c, const PodCondition& d) {
                      return c.type == d.type && c.status == d.status;
                    });
}

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
  auto it = j.find("ephemeral");
  if (it != j.end() && !it->is_null()) {
    if (!it->is_object()) throw DecodeError("ephemeral: expected an object");
    v.ephemeral = true;
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
