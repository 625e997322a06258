#include "extender/encode.h"

namespace ksched::extender {
namespace {

using nlohmann::json;

json encodeResources(const api::ResourceList& list) {
  json j = json::object();
  for (const auto& [name, q] : list) j[name] = q;
  return j;
}

json encodeStrings(const std::vector<std::string>& v) {
  json j = json::array();
  for (const auto& s : v) j.push_back(s);
  return j;
}

json encodeNodeSelectorRequirements(const std::vector<api::NodeSelectorRequirement>& reqs) {
  json out = json::array();
  for (const auto& r : reqs) {
    json j = {{"key", r.key}, {"operator", std::string(api::toString(r.operator_))}};
    if (!r.values.empty()) j["values"] = encodeStrings(r.values);
    out.push_back(std::move(j));
  }
  return out;
}

json encodeNodeSelectorTerm(const api::NodeSelectorTerm& t) {
  json j = json::object();
  if (!t.matchExpressions.empty()) {
    j["matchExpressions"] = encodeNodeSelectorRequirements(t.matchExpressions);
  }
  if (!t.matchFields.empty()) j["matchFields"] = encodeNodeSelectorRequirements(t.matchFields);
  return j;
}

json encodePodAffinityTerm(const api::PodAffinityTerm& t) {
  json j = {{"topologyKey", t.topologyKey}};
  if (t.labelSelector) j["labelSelector"] = *t.labelSelector;
  if (!t.namespaces.empty()) j["namespaces"] = encodeStrings(t.namespaces);
  if (t.namespaceSelector) j["namespaceSelector"] = *t.namespaceSelector;
  if (!t.matchLabelKeys.empty()) j["matchLabelKeys"] = encodeStrings(t.matchLabelKeys);
  if (!t.mismatchLabelKeys.empty()) j["mismatchLabelKeys"] = encodeStrings(t.mismatchLabelKeys);
  return j;
}

json encodePodAffinity(const api::PodAffinity& a) {
  json j = json::object();
  if (!a.requiredDuringSchedulingIgnoredDuringExecution.empty()) {
    json req = json::array();
    for (const auto& t : a.requiredDuringSchedulingIgnoredDuringExecution) {
      req.push_back(encodePodAffinityTerm(t));
    }
    j["requiredDuringSchedulingIgnoredDuringExecution"] = std::move(req);
  }
  if (!a.preferredDuringSchedulingIgnoredDuringExecution.empty()) {
    json pref = json::array();
    for (const auto& t : a.preferredDuringSchedulingIgnoredDuringExecution) {
      pref.push_back(
          {{"weight", t.weight}, {"podAffinityTerm", encodePodAffinityTerm(t.podAffinityTerm)}});
    }
    j["preferredDuringSchedulingIgnoredDuringExecution"] = std::move(pref);
  }
  return j;
}

json encodeAffinity(const api::Affinity& a) {
  json j = json::object();
  if (a.nodeAffinity) {
    json na = json::object();
    if (const auto& req = a.nodeAffinity->requiredDuringSchedulingIgnoredDuringExecution) {
      json terms = json::array();
      for (const auto& t : req->nodeSelectorTerms) terms.push_back(encodeNodeSelectorTerm(t));
      na["requiredDuringSchedulingIgnoredDuringExecution"] = {{"nodeSelectorTerms", terms}};
    }
    if (!a.nodeAffinity->preferredDuringSchedulingIgnoredDuringExecution.empty()) {
      json pref = json::array();
      for (const auto& t : a.nodeAffinity->preferredDuringSchedulingIgnoredDuringExecution) {
        pref.push_back(
            {{"weight", t.weight}, {"preference", encodeNodeSelectorTerm(t.preference)}});
      }
      na["preferredDuringSchedulingIgnoredDuringExecution"] = std::move(pref);
    }
    j["nodeAffinity"] = std::move(na);
  }
  if (a.podAffinity) j["podAffinity"] = encodePodAffinity(*a.podAffinity);
  if (a.podAntiAffinity) j["podAntiAffinity"] = encodePodAffinity(*a.podAntiAffinity);
  return j;
}

json encodeRequirements(const api::ResourceRequirements& r) {
  json res = json::object();
  if (!r.requests.empty()) res["requests"] = encodeResources(r.requests);
  if (!r.limits.empty()) res["limits"] = encodeResources(r.limits);
  return res;
}

json encodeContainerStatuses(const std::vector<api::ContainerStatus>& statuses) {
  json out = json::array();
  for (const auto& s : statuses) {
    json j = {{"name", s.name}};
    if (!s.allocatedResources.empty()) {
      j["allocatedResources"] = encodeResources(s.allocatedResources);
    }
    if (s.resources) j["resources"] = encodeRequirements(*s.resources);
    out.push_back(std::move(j));
  }
  return out;
}

json encodeContainer(const api::Container& c) {
  json j = {{"name", c.name}};
  if (!c.image.empty()) j["image"] = c.image;
  j["resources"] = encodeRequirements(c.resources);
  if (!c.ports.empty()) {
    json ports = json::array();
    for (const auto& p : c.ports) {
      json pj = {{"containerPort", p.containerPort}, {"protocol", p.protocol}};
      if (!p.name.empty()) pj["name"] = p.name;
      if (p.hostPort != 0) pj["hostPort"] = p.hostPort;
      if (!p.hostIP.empty()) pj["hostIP"] = p.hostIP;
      ports.push_back(std::move(pj));
    }
    j["ports"] = std::move(ports);
  }
  if (c.restartPolicy) j["restartPolicy"] = *c.restartPolicy;
  return j;
}

json encodeToleration(const api::Toleration& t) {
  json j = json::object();
  if (!t.key.empty()) j["key"] = t.key;
  if (!t.operator_.empty()) j["operator"] = t.operator_;
  if (!t.value.empty()) j["value"] = t.value;
  if (!t.effect.empty()) j["effect"] = t.effect;
  if (t.tolerationSeconds) j["tolerationSeconds"] = *t.tolerationSeconds;
  return j;
}

json encodeTaint(const api::Taint& t) {
  json j = {{"key", t.key}, {"effect", t.effect}};
  if (!t.value.empty()) j["value"] = t.value;
  if (t.timeAdded) j["timeAdded"] = *t.timeAdded;
  return j;
}

json encodeVolume(const api::Volume& v) {
  json j = {{"name", v.name}};
  auto ro = [](json& o, bool readOnly) {
    if (readOnly) o["readOnly"] = true;
  };
  if (const auto& s = v.persistentVolumeClaim) {
    json o = {{"claimName", s->claimName}};
    ro(o, s->readOnly);
    j["persistentVolumeClaim"] = std::move(o);
  } else if (const auto& g = v.gcePersistentDisk) {
    json o = {{"pdName", g->pdName}};
    if (g->partition != 0) o["partition"] = g->partition;
    ro(o, g->readOnly);
    j["gcePersistentDisk"] = std::move(o);
  } else if (const auto& a = v.awsElasticBlockStore) {
    json o = {{"volumeID", a->volumeID}};
    if (a->partition != 0) o["partition"] = a->partition;
    ro(o, a->readOnly);
    j["awsElasticBlockStore"] = std::move(o);
  } else if (const auto& d = v.azureDisk) {
    json o = {{"diskName", d->diskName}, {"diskURI", d->diskURI}};
    ro(o, d->readOnly);
    j["azureDisk"] = std::move(o);
  } else if (const auto& c = v.cinder) {
    json o = {{"volumeID", c->volumeID}};
    ro(o, c->readOnly);
    j["cinder"] = std::move(o);
  } else if (const auto& r = v.rbd) {
    json o = {{"monitors", encodeStrings(r->monitors)}, {"image", r->image}, {"pool", r->pool}};
    ro(o, r->readOnly);
    j["rbd"] = std::move(o);
  } else if (const auto& i = v.iscsi) {
    json o = {{"targetPortal", i->targetPortal}, {"iqn", i->iqn}, {"lun", i->lun}};
    ro(o, i->readOnly);
    j["iscsi"] = std::move(o);
  } else if (const auto& c = v.csi) {
    json o = {{"driver", c->driver}};
    ro(o, c->readOnly);
    j["csi"] = std::move(o);
  } else if (v.ephemeral) {
    j["ephemeral"] = json::object();
  }
  return j;
}

json encodeTopologySpreadConstraint(const api::TopologySpreadConstraint& c) {
  json j = {{"maxSkew", c.maxSkew},
            {"topologyKey", c.topologyKey},
            {"whenUnsatisfiable", c.whenUnsatisfiable}};
  if (c.labelSelector) j["labelSelector"] = *c.labelSelector;
  if (c.minDomains) j["minDomains"] = *c.minDomains;
  if (c.nodeAffinityPolicy) j["nodeAffinityPolicy"] = *c.nodeAffinityPolicy;
  if (c.nodeTaintsPolicy) j["nodeTaintsPolicy"] = *c.nodeTaintsPolicy;
  if (!c.matchLabelKeys.empty()) j["matchLabelKeys"] = encodeStrings(c.matchLabelKeys);
  return j;
}

}  // namespace

json encodeObjectMeta(const api::ObjectMeta& m) {
  json j = {{"name", m.name}};
  if (!m.namespace_.empty()) j["namespace"] = m.namespace_;
  if (!m.uid.empty()) j["uid"] = m.uid;
  if (!m.resourceVersion.empty()) j["resourceVersion"] = m.resourceVersion;
  if (m.generation != 0) j["generation"] = m.generation;
  if (!m.creationTimestamp.empty()) j["creationTimestamp"] = m.creationTimestamp;
  if (m.deletionTimestamp) j["deletionTimestamp"] = *m.deletionTimestamp;
  if (m.deletionGracePeriodSeconds) {
    j["deletionGracePeriodSeconds"] = *m.deletionGracePeriodSeconds;
  }
  if (!m.labels.empty()) j["labels"] = m.labels;
  if (!m.annotations.empty()) j["annotations"] = m.annotations;
  if (!m.ownerReferences.empty()) {
    json refs = json::array();
    for (const auto& o : m.ownerReferences) {
      json r = {{"apiVersion", o.apiVersion}, {"kind", o.kind}, {"name", o.name}, {"uid", o.uid}};
      if (o.controller) r["controller"] = true;
      refs.push_back(std::move(r));
    }
    j["ownerReferences"] = std::move(refs);
  }
  return j;
}

json encodePod(const api::Pod& pod) {
  const api::PodSpec& s = pod.spec;
  json spec = json::object();
  json containers = json::array();
  for (const auto& c : s.containers) containers.push_back(encodeContainer(c));
  spec["containers"] = std::move(containers);
  if (!s.initContainers.empty()) {
    json init = json::array();
    for (const auto& c : s.initContainers) init.push_back(encodeContainer(c));
    spec["initContainers"] = std::move(init);
  }
  spec["schedulerName"] = s.schedulerName;
  if (!s.nodeName.empty()) spec["nodeName"] = s.nodeName;
  if (s.priority) spec["priority"] = *s.priority;
  if (!s.priorityClassName.empty()) spec["priorityClassName"] = s.priorityClassName;
  if (s.preemptionPolicy) spec["preemptionPolicy"] = *s.preemptionPolicy;
  if (!s.nodeSelector.empty()) spec["nodeSelector"] = s.nodeSelector;
  if (s.affinity) spec["affinity"] = encodeAffinity(*s.affinity);
  if (!s.tolerations.empty()) {
    json tols = json::array();
    for (const auto& t : s.tolerations) tols.push_back(encodeToleration(t));
    spec["tolerations"] = std::move(tols);
  }
  if (!s.topologySpreadConstraints.empty()) {
    json tsc = json::array();
    for (const auto& c : s.topologySpreadConstraints) {
      tsc.push_back(encodeTopologySpreadConstraint(c));
    }
    spec["topologySpreadConstraints"] = std::move(tsc);
  }
  if (!s.overhead.empty()) spec["overhead"] = encodeResources(s.overhead);
  if (s.resources) spec["resources"] = encodeRequirements(*s.resources);
  if (!s.volumes.empty()) {
    json vols = json::array();
    for (const auto& v : s.volumes) vols.push_back(encodeVolume(v));
    spec["volumes"] = std::move(vols);
  }
  if (!s.schedulingGates.empty()) {
    json gates = json::array();
    for (const auto& g : s.schedulingGates) gates.push_back({{"name", g}});
    spec["schedulingGates"] = std::move(gates);
  }
  if (s.terminationGracePeriodSeconds) {
    spec["terminationGracePeriodSeconds"] = *s.terminationGracePeriodSeconds;
  }

  json status = json::object();
  if (!pod.status.phase.empty()) status["phase"] = pod.status.phase;
  if (!pod.status.conditions.empty()) {
    json conds = json::array();
    for (const auto& c : pod.status.conditions) conds.push_back(c);
    status["conditions"] = std::move(conds);
  }
  if (!pod.status.nominatedNodeName.empty()) {
    status["nominatedNodeName"] = pod.status.nominatedNodeName;
  }
  if (pod.status.startTime) status["startTime"] = *pod.status.startTime;
  const api::PodStatus& st = pod.status;
  if (!st.containerStatuses.empty()) {
    status["containerStatuses"] = encodeContainerStatuses(st.containerStatuses);
  }
  if (!st.initContainerStatuses.empty()) {
    status["initContainerStatuses"] = encodeContainerStatuses(st.initContainerStatuses);
  }
  if (!st.allocatedResources.empty()) {
    status["allocatedResources"] = encodeResources(st.allocatedResources);
  }
  if (st.resources) status["resources"] = encodeRequirements(*st.resources);
  if (!st.resize.empty()) status["resize"] = st.resize;

  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", encodeObjectMeta(pod.metadata)},
          {"spec", std::move(spec)},
          {"status", std::move(status)}};
}

json encodeNode(const api::Node& node) {
  json spec = json::object();
  if (node.spec.unschedulable) spec["unschedulable"] = true;
  if (!node.spec.taints.empty()) {
    json taints = json::array();
    for (const auto& t : node.spec.taints) taints.push_back(encodeTaint(t));
    spec["taints"] = std::move(taints);
  }
  json status = json::object();
  if (!node.status.capacity.empty()) status["capacity"] = encodeResources(node.status.capacity);
  if (!node.status.allocatable.empty()) {
    status["allocatable"] = encodeResources(node.status.allocatable);
  }
  if (!node.status.conditions.empty()) {
    json conds = json::array();
    for (const auto& c : node.status.conditions) {
      conds.push_back({{"type", c.type}, {"status", c.status}});
    }
    status["conditions"] = std::move(conds);
  }
  if (!node.status.images.empty()) {
    json images = json::array();
    for (const auto& i : node.status.images) {
      images.push_back({{"names", encodeStrings(i.names)}, {"sizeBytes", i.sizeBytes}});
    }
    status["images"] = std::move(images);
  }
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", encodeObjectMeta(node.metadata)},
          {"spec", std::move(spec)},
          {"status", std::move(status)}};
}

}  // namespace ksched::extender
