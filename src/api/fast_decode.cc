// The readers of the fast path of include/ksched/api/fast_decode.h (the parsing and the public
// functions are in fast_decode_text.cc). Each reader mirrors its from_json
// counterpart (src/api/pod.cc, node.cc, meta.cc, taints.cc, resources.cc, quantity.cc) and returns
// false to decline wherever that counterpart would throw, or could read the value differently:
//   - a field missing or null leaves the member as a fresh object holds it (then any default a
//     from_json fills in, e.g. the port's protocol), a repeated key is read again (the last one
//     wins, as in a JSON tree);
//   - integers must fit the member; a JSON integer that is not negative is read as the tree reads
//     an unsigned one (which matters to Quantity);
//   - anything of another type than the member's declines.
#include <simdjson.h>

#include <concepts>
#include <exception>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <ksched/api/decode.h>
#include <ksched/api/fast_decode.h>

#include "fast_decode_read.h"

namespace ksched::api {
namespace {

using simdjson::SUCCESS;
using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::element_type;
using simdjson::dom::object;

// --- Scalars and containers -------------------------------------------------------------------

bool get(element e, std::string& out) {
  std::string_view s;
  if (e.get_string().get(s) != SUCCESS) return false;
  out.assign(s);
  return true;
}

bool get(element e, bool& out) { return e.get_bool().get(out) == SUCCESS; }

template <std::integral I>
requires(!std::same_as<I, bool>) bool get(element e, I& out) {
  if (e.type() == element_type::INT64) {
    int64_t v = 0;
    if (e.get_int64().get(v) != SUCCESS || !std::in_range<I>(v)) return false;
    out = static_cast<I>(v);
    return true;
  }
  if (e.type() == element_type::UINT64) {
    uint64_t v = 0;
    if (e.get_uint64().get(v) != SUCCESS || !std::in_range<I>(v)) return false;
    out = static_cast<I>(v);
    return true;
  }
  return false;
}

// As from_json(json, Quantity&): a string, or an integer (a tree holds one that is not negative
// as unsigned, which that decoder reads through its decimal text). Other numbers decline.
bool get(element e, Quantity& q) {
  try {
    switch (e.type()) {
      case element_type::STRING: {
        std::string_view s;
        if (e.get_string().get(s) != SUCCESS) return false;
        q = Quantity::parse(s);
        return true;
      }
      case element_type::INT64: {
        int64_t v = 0;
        if (e.get_int64().get(v) != SUCCESS) return false;
        q = v >= 0 ? Quantity::parse(std::to_string(v)) : Quantity::fromValue(v);
        return true;
      }
      case element_type::UINT64: {
        uint64_t v = 0;
        if (e.get_uint64().get(v) != SUCCESS) return false;
        q = Quantity::parse(std::to_string(v));
        return true;
      }
      default:
        return false;
    }
  } catch (const std::exception&) {
    return false;
  }
}

// A JSON object as a map (ResourceList, Labels).
template <typename Map>
bool getMap(element e, Map& out) {
  object o;
  if (e.get_object().get(o) != SUCCESS) return false;
  out.clear();
  for (auto [key, value] : o) {
    typename Map::mapped_type v{};
    if (!get(value, v)) return false;
    out.insert_or_assign(std::string(key), std::move(v));
  }
  return true;
}
bool get(element e, ResourceList& out) { return getMap(e, out); }
bool get(element e, Labels& out) { return getMap(e, out); }

template <typename T>
bool get(element e, std::vector<T>& out);
template <OptionalField O>
bool get(element e, O& out);
bool get(element e, OwnerReference& r);
bool get(element e, ObjectMeta& m);
bool get(element e, ContainerResourceClaim& c);
bool get(element e, ResourceRequirements& r);
bool get(element e, ContainerPort& p);
bool get(element e, ContainerRestartRule& r);
bool get(element e, VolumeMount& m);
bool get(element e, Container& c);
bool get(element e, Toleration& t);
bool get(element e, PersistentVolumeClaimVolumeSource& s);
bool get(element e, CSIVolumeSource& s);
bool get(element e, Volume& vol);
bool get(element e, PodResourceClaim& c);
bool get(element e, PodResourceClaimStatus& s);
bool get(element e, PodSchedulingGroup& g);
bool get(element e, PodSpec& s);
bool get(element e, PodCondition& c);
bool get(element e, ContainerStatus& s);
bool get(element e, PodStatus& s);
bool get(element e, Taint& t);
bool get(element e, NodeSpec& s);
bool get(element e, ContainerImage& i);
bool get(element e, NodeCondition& c);
bool get(element e, NodeStatus& s);

// A member read from a field's value: null leaves what a fresh object holds.
template <typename T>
bool field(element e, T& member) {
  if (e.is_null()) {
    member = T{};
    return true;
  }
  return get(e, member);
}

// The fields of an object into a fresh `out`: `on(key, value)` reads the ones the object model
// holds (false: decline) and skips the others.
template <typename T, typename F>
bool fields(element e, T& out, F&& on) {
  object o;
  if (e.get_object().get(o) != SUCCESS) return false;
  out = T{};
  for (auto [key, value] : o) {
    if (!on(key, value)) return false;
  }
  return true;
}

// --- Rare fields: their own decoders, over a JSON tree of that field alone -------------------

nlohmann::json tree(element e) {
  switch (e.type()) {
    case element_type::ARRAY: {
      auto j = nlohmann::json::array();
      for (element x : array(e)) j.push_back(tree(x));
      return j;
    }
    case element_type::OBJECT: {
      auto j = nlohmann::json::object();
      for (auto [key, value] : object(e)) j[std::string(key)] = tree(value);
      return j;
    }
    case element_type::INT64: {
      const int64_t v = int64_t(e);
      return v >= 0 ? nlohmann::json(static_cast<uint64_t>(v)) : nlohmann::json(v);
    }
    case element_type::UINT64:
      return nlohmann::json(uint64_t(e));
    case element_type::DOUBLE:
      return nlohmann::json(double(e));
    case element_type::STRING:
      return nlohmann::json(std::string(std::string_view(e)));
    case element_type::BOOL:
      return nlohmann::json(bool(e));
    case element_type::NULL_VALUE:
      break;
  }
  return nullptr;
}

template <typename T>
bool viaTree(element e, T& member) {
  try {
    T v{};
    tree(e).get_to(v);
    member = std::move(v);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}
template <OptionalField O>
bool viaTree(element e, O& member) {
  typename O::value_type v{};
  if (!viaTree(e, v)) return false;
  member = std::move(v);
  return true;
}
template <typename T>
bool treeField(element e, T& member) {
  if (e.is_null()) {
    member = T{};
    return true;
  }
  return viaTree(e, member);
}

// --- The object model ------------------------------------------------------------------------

bool get(element e, OwnerReference& r) {
  return fields(e, r, [&r](std::string_view k, element v) {
    if (k == "apiVersion") return field(v, r.apiVersion);
    if (k == "kind") return field(v, r.kind);
    if (k == "name") return field(v, r.name);
    if (k == "uid") return field(v, r.uid);
    if (k == "controller") return field(v, r.controller);
    return true;
  });
}

bool get(element e, ObjectMeta& m) {
  return fields(e, m, [&m](std::string_view k, element v) {
    if (k == "name") return field(v, m.name);
    if (k == "namespace") return field(v, m.namespace_);
    if (k == "uid") return field(v, m.uid);
    if (k == "resourceVersion") return field(v, m.resourceVersion);
    if (k == "generation") return field(v, m.generation);
    if (k == "labels") return field(v, m.labels);
    if (k == "annotations") return field(v, m.annotations);
    if (k == "ownerReferences") return field(v, m.ownerReferences);
    if (k == "creationTimestamp") return field(v, m.creationTimestamp);
    if (k == "deletionTimestamp") return field(v, m.deletionTimestamp);
    if (k == "deletionGracePeriodSeconds") return field(v, m.deletionGracePeriodSeconds);
    return true;
  });
}

bool get(element e, ContainerResourceClaim& c) {
  return fields(e, c, [&c](std::string_view k, element v) {
    if (k == "name") return field(v, c.name);
    if (k == "request") return field(v, c.request);
    return true;
  });
}

bool get(element e, ResourceRequirements& r) {
  return fields(e, r, [&r](std::string_view k, element v) {
    if (k == "requests") return field(v, r.requests);
    if (k == "limits") return field(v, r.limits);
    if (k == "claims") return field(v, r.claims);
    return true;
  });
}

bool get(element e, ContainerPort& p) {
  const bool ok = fields(e, p, [&p](std::string_view k, element v) {
    if (k == "name") return field(v, p.name);
    if (k == "containerPort") return field(v, p.containerPort);
    if (k == "hostPort") return field(v, p.hostPort);
    if (k == "hostIP") return field(v, p.hostIP);
    if (k == "protocol") return field(v, p.protocol);
    return true;
  });
  if (ok && p.protocol.empty()) p.protocol = kProtocolTCP;
  return ok;
}

bool get(element e, ContainerRestartRule& r) {
  return fields(e, r, [&r](std::string_view k, element v) {
    return k == "action" ? field(v, r.action) : true;
  });
}

bool get(element e, VolumeMount& m) {
  return fields(e, m, [&m](std::string_view k, element v) {
    if (k == "name") return field(v, m.name);
    if (k == "mountPath") return field(v, m.mountPath);
    if (k == "bindMountOptions") return field(v, m.bindMountOptions);
    return true;
  });
}

bool get(element e, Container& c) {
  return fields(e, c, [&c](std::string_view k, element v) {
    if (k == "name") return field(v, c.name);
    if (k == "image") return field(v, c.image);
    if (k == "resources") return field(v, c.resources);
    if (k == "ports") return field(v, c.ports);
    if (k == "restartPolicy") return field(v, c.restartPolicy);
    if (k == "restartPolicyRules") return field(v, c.restartPolicyRules);
    if (k == "volumeMounts") return field(v, c.volumeMounts);
    return true;
  });
}

bool get(element e, Toleration& t) {
  return fields(e, t, [&t](std::string_view k, element v) {
    if (k == "key") return field(v, t.key);
    if (k == "operator") return field(v, t.operator_);
    if (k == "value") return field(v, t.value);
    if (k == "effect") return field(v, t.effect);
    if (k == "tolerationSeconds") return field(v, t.tolerationSeconds);
    return true;
  });
}

bool get(element e, PersistentVolumeClaimVolumeSource& s) {
  return fields(e, s, [&s](std::string_view k, element v) {
    if (k == "claimName") return field(v, s.claimName);
    if (k == "readOnly") return field(v, s.readOnly);
    return true;
  });
}

bool get(element e, CSIVolumeSource& s) {
  return fields(e, s, [&s](std::string_view k, element v) {
    if (k == "driver") return field(v, s.driver);
    if (k == "readOnly") return field(v, s.readOnly);
    return true;
  });
}

bool get(element e, Volume& vol) {
  return fields(e, vol, [&vol](std::string_view k, element v) {
    if (k == "name") return field(v, vol.name);
    if (k == "persistentVolumeClaim") return field(v, vol.persistentVolumeClaim);
    if (k == "csi") return field(v, vol.csi);
    // Sources known only by their presence (a generic ephemeral volume, node-local storage).
    for (auto [key, flag] :
         {std::pair{"ephemeral", &vol.ephemeral}, std::pair{"emptyDir", &vol.emptyDir},
          std::pair{"hostPath", &vol.hostPath}}) {
      if (k != key) continue;
      *flag = !v.is_null();
      return v.is_null() || v.is_object();
    }
    if (k == "gcePersistentDisk") return treeField(v, vol.gcePersistentDisk);
    if (k == "awsElasticBlockStore") return treeField(v, vol.awsElasticBlockStore);
    if (k == "azureDisk") return treeField(v, vol.azureDisk);
    if (k == "cinder") return treeField(v, vol.cinder);
    if (k == "rbd") return treeField(v, vol.rbd);
    if (k == "iscsi") return treeField(v, vol.iscsi);
    return true;
  });
}

bool get(element e, PodResourceClaim& c) {
  return fields(e, c, [&c](std::string_view k, element v) {
    if (k == "name") return field(v, c.name);
    if (k == "resourceClaimName") return field(v, c.resourceClaimName);
    if (k == "resourceClaimTemplateName") return field(v, c.resourceClaimTemplateName);
    return true;
  });
}

bool get(element e, PodResourceClaimStatus& s) {
  return fields(e, s, [&s](std::string_view k, element v) {
    if (k == "name") return field(v, s.name);
    if (k == "resourceClaimName") return field(v, s.resourceClaimName);
    return true;
  });
}

bool get(element e, PodSchedulingGroup& g) {
  return fields(e, g, [&g](std::string_view k, element v) {
    return k == "podGroupName" ? field(v, g.podGroupName) : true;
  });
}

// spec.schedulingGates: [{"name": ...}], the names kept.
bool getGates(element e, std::vector<std::string>& out) {
  array a;
  if (e.get_array().get(a) != SUCCESS) return false;
  out.clear();
  for (element x : a) {
    std::string name;
    if (!fields(x, name, [&name](std::string_view k, element v) {
          return k == "name" ? field(v, name) : true;
        })) {
      return false;
    }
    out.push_back(std::move(name));
  }
  return true;
}

bool get(element e, PodSpec& s) {
  const bool ok = fields(e, s, [&s](std::string_view k, element v) {
    if (k == "containers") return field(v, s.containers);
    if (k == "nodeName") return field(v, s.nodeName);
    if (k == "schedulerName") return field(v, s.schedulerName);
    if (k == "tolerations") return field(v, s.tolerations);
    if (k == "priority") return field(v, s.priority);
    if (k == "volumes") return field(v, s.volumes);
    if (k == "priorityClassName") return field(v, s.priorityClassName);
    if (k == "preemptionPolicy") return field(v, s.preemptionPolicy);
    if (k == "nodeSelector") return field(v, s.nodeSelector);
    if (k == "terminationGracePeriodSeconds") return field(v, s.terminationGracePeriodSeconds);
    if (k == "initContainers") return field(v, s.initContainers);
    if (k == "resources") return field(v, s.resources);
    if (k == "overhead") return field(v, s.overhead);
    if (k == "hostNetwork") return field(v, s.hostNetwork);
    if (k == "hostUsers") return field(v, s.hostUsers);
    if (k == "schedulingGates") {
      if (v.is_null()) return s.schedulingGates.clear(), true;
      return getGates(v, s.schedulingGates);
    }
    if (k == "ephemeralContainers") return field(v, s.ephemeralContainers);
    if (k == "resourceClaims") return field(v, s.resourceClaims);
    if (k == "schedulingGroup") return field(v, s.schedulingGroup);
    if (k == "affinity") return treeField(v, s.affinity);
    if (k == "topologySpreadConstraints") return treeField(v, s.topologySpreadConstraints);
    return true;
  });
  if (ok && s.schedulerName.empty()) s.schedulerName = kDefaultSchedulerName;
  return ok;
}

bool get(element e, PodCondition& c) {
  return fields(e, c, [&c](std::string_view k, element v) {
    if (k == "type") return field(v, c.type);
    if (k == "status") return field(v, c.status);
    if (k == "reason") return field(v, c.reason);
    if (k == "message") return field(v, c.message);
    if (k == "lastTransitionTime") return field(v, c.lastTransitionTime);
    return true;
  });
}

bool get(element e, ContainerStatus& s) {
  return fields(e, s, [&s](std::string_view k, element v) {
    if (k == "name") return field(v, s.name);
    if (k == "allocatedResources") return field(v, s.allocatedResources);
    if (k == "resources") return field(v, s.resources);
    return true;
  });
}

bool get(element e, PodStatus& s) {
  return fields(e, s, [&s](std::string_view k, element v) {
    if (k == "phase") return field(v, s.phase);
    if (k == "conditions") return field(v, s.conditions);
    if (k == "nominatedNodeName") return field(v, s.nominatedNodeName);
    if (k == "startTime") return field(v, s.startTime);
    if (k == "containerStatuses") return field(v, s.containerStatuses);
    if (k == "initContainerStatuses") return field(v, s.initContainerStatuses);
    if (k == "allocatedResources") return field(v, s.allocatedResources);
    if (k == "resources") return field(v, s.resources);
    if (k == "resize") return field(v, s.resize);
    if (k == "resourceClaimStatuses") return field(v, s.resourceClaimStatuses);
    if (k == "extendedResourceClaimStatus") {
      return treeField(v, s.extendedResourceClaimStatus);
    }
    return true;
  });
}

bool get(element e, Pod& p) {
  return fields(e, p, [&p](std::string_view k, element v) {
    if (k == "metadata") return field(v, p.metadata);
    if (k == "spec") return field(v, p.spec);
    if (k == "status") return field(v, p.status);
    return true;
  });
}

bool get(element e, Taint& t) {
  return fields(e, t, [&t](std::string_view k, element v) {
    if (k == "key") return field(v, t.key);
    if (k == "value") return field(v, t.value);
    if (k == "effect") return field(v, t.effect);
    if (k == "timeAdded") return field(v, t.timeAdded);
    return true;
  });
}

bool get(element e, NodeSpec& s) {
  return fields(e, s, [&s](std::string_view k, element v) {
    if (k == "unschedulable") return field(v, s.unschedulable);
    if (k == "taints") return field(v, s.taints);
    if (k == "podPreemptionPolicy") {
      // As node.cc reads it: an object's disableResizePreemption; any other value is ignored.
      s.disableResizePreemption.clear();
      object policy;
      if (v.get_object().get(policy) != SUCCESS) return true;
      for (auto [key, value] : policy) {
        if (key == "disableResizePreemption" && !field(value, s.disableResizePreemption)) {
          return false;
        }
      }
      return true;
    }
    return true;
  });
}

bool get(element e, ContainerImage& i) {
  return fields(e, i, [&i](std::string_view k, element v) {
    if (k == "names") return field(v, i.names);
    if (k == "sizeBytes") return field(v, i.sizeBytes);
    return true;
  });
}

bool get(element e, NodeCondition& c) {
  return fields(e, c, [&c](std::string_view k, element v) {
    if (k == "type") return field(v, c.type);
    if (k == "status") return field(v, c.status);
    return true;
  });
}

bool get(element e, NodeStatus& s) {
  return fields(e, s, [&s](std::string_view k, element v) {
    if (k == "capacity") return field(v, s.capacity);
    if (k == "allocatable") return field(v, s.allocatable);
    if (k == "images") return field(v, s.images);
    if (k == "conditions") return field(v, s.conditions);
    if (k == "declaredFeatures") return field(v, s.declaredFeatures);
    return true;
  });
}

bool get(element e, Node& n) {
  return fields(e, n, [&n](std::string_view k, element v) {
    if (k == "metadata") return field(v, n.metadata);
    if (k == "spec") return field(v, n.spec);
    if (k == "status") return field(v, n.status);
    return true;
  });
}

template <typename T>
bool get(element e, std::vector<T>& out) {
  array a;
  if (e.get_array().get(a) != SUCCESS) return false;
  out.clear();
  out.reserve(a.size());
  for (element x : a) {
    T v{};
    if (!get(x, v)) return false;
    out.push_back(std::move(v));
  }
  return true;
}

template <OptionalField O>
bool get(element e, O& out) {
  typename O::value_type v{};
  if (!get(e, v)) return false;
  out = std::move(v);
  return true;
}

}  // namespace

namespace fastdecode {
bool read(element e, Pod& out) { return get(e, out); }
bool read(element e, Node& out) { return get(e, out); }
bool readString(element e, std::string& out) { return get(e, out); }
}  // namespace fastdecode

}  // namespace ksched::api
