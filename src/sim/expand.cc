#include "sim/expand.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include <ksched/api/decode.h>

namespace ksched::sim {
namespace {

using nlohmann::json;

constexpr std::string_view kTemplateHash = "sim";

std::string_view withoutNlohmannPrefix(std::string_view m) {
  if (m.starts_with("[json.exception.")) {
    if (const size_t p = m.find("] "); p != std::string_view::npos) m.remove_prefix(p + 2);
  }
  return m;
}

struct Located {
  std::string field;  // from the node walked, with indexes
  std::string message;
  const json* leaf = nullptr;
};

std::string joinField(std::string head, const std::string& tail) {
  if (tail.empty()) return head;
  if (tail.front() != '[') head += '.';
  return head + tail;
}

// How surely `l` is the value the message is about: quoted (2), its type named (1).
int culprit(const Located& l) {
  const json& v = *l.leaf;
  if (v.is_string()) {
    if (l.message.find('"' + v.get_ref<const std::string&>() + '"') != std::string::npos) return 2;
  } else if (v.is_primitive() && l.message.find(v.dump()) != std::string::npos) {
    return 2;
  }
  const std::string type = v.type_name();
  if (l.message.find("but is " + type) != std::string::npos ||
      l.message.find("got " + type) != std::string::npos) {
    return 1;
  }
  return 0;
}

std::optional<Located> walk(const json& node, std::string_view what) {
  std::optional<Located> best;
  if (node.is_object()) {
    size_t bestLen = 0;
    for (auto it = node.begin(); it != node.end(); ++it) {
      const std::string& k = it.key();
      if (k.empty() || k.size() <= bestLen || !what.starts_with(k)) continue;
      const std::string_view rest = what.substr(k.size());
      if (rest.starts_with(": ")) {
        best = Located{k, std::string(withoutNlohmannPrefix(rest.substr(2))), &it.value()};
        bestLen = k.size();
      } else if (rest.starts_with('.')) {
        if (auto sub = walk(it.value(), rest.substr(1))) {
          sub->field = joinField(k, sub->field);
          best = std::move(sub);
          bestLen = k.size();
        }
      }
    }
  } else if (node.is_array()) {
    int bestScore = -1;
    for (size_t i = 0; i < node.size(); ++i) {
      auto sub = walk(node[i], what);
      if (!sub) continue;
      const int score = culprit(*sub);
      if (score <= bestScore) continue;
      sub->field = joinField("[" + std::to_string(i) + "]", sub->field);
      best = std::move(sub);
      bestScore = score;
    }
  }
  return best;
}

const json* member(const json& j, std::string_view key) {
  if (!j.is_object()) return nullptr;
  const auto it = j.find(key);
  return it == j.end() || it->is_null() ? nullptr : &*it;
}

const json& specOf(const Controller& c) {
  static const json kEmpty = json::object();
  const json* spec = member(c.object, "spec");
  return spec != nullptr ? *spec : kEmpty;
}

void checkCount(std::optional<int32_t> n, const std::string& field) {
  if (n && *n < 0) throw FieldError(field, std::to_string(*n) + ": must be 0 or more");
  if (n && *n > kMaxPodsPerController) {
    throw FieldError(field, std::to_string(*n) + " pods: more than simulate expands from one " +
                                "object (" + std::to_string(kMaxPodsPerController) + ")");
  }
}

// spec.<key> as an int32 count: nullopt when absent; negative or too many is a FieldError.
std::optional<int32_t> countField(const Controller& c, std::string_view key) {
  std::optional<int32_t> out;
  const std::string field = "spec." + std::string(key);
  try {
    api::readField(specOf(c), key, out);
  } catch (const api::DecodeError& e) {
    throw FieldError(field, locateDecodeError(specOf(c), e.what()).second);
  }
  checkCount(out, field);
  return out;
}

template <typename T>
std::optional<T> decodeField(const Controller& c, std::string_view key) {
  std::optional<T> out;
  try {
    api::readField(specOf(c), key, out);
  } catch (const api::DecodeError& e) {
    auto [f, m] = locateDecodeError(specOf(c), e.what());
    throw FieldError("spec." + f, m);
  }
  return out;
}

// spec.template as the pod every copy starts from: namespace, owner and a pending state set.
api::Pod templatePod(const Controller& c, const api::OwnerReference& owner) {
  const json* tmpl = member(specOf(c), "template");
  if (tmpl == nullptr || !tmpl->is_object()) {
    throw FieldError("spec.template", "missing: the pods' template is needed");
  }
  json pod = json::object();
  if (const json* m = member(*tmpl, "metadata")) pod["metadata"] = *m;
  if (const json* s = member(*tmpl, "spec")) pod["spec"] = *s;
  api::Pod p;
  try {
    p = api::decode<api::Pod>(pod);
  } catch (const api::DecodeError& e) {
    auto [f, m] = locateDecodeError(pod, e.what());
    throw FieldError(joinField("spec.template", f), m);
  }
  p.metadata.name.clear();
  p.metadata.uid.clear();
  p.metadata.namespace_ = c.ns;
  p.metadata.ownerReferences = {owner};
  p.spec.nodeName.clear();
  p.status = api::PodStatus{};
  p.status.phase = std::string(api::kPodPending);
  return p;
}

void addPod(api::Pod pod, std::string name, Cluster& into) {
  pod.metadata.uid = simUid("Pod", pod.metadata.namespace_, name);
  pod.metadata.name = std::move(name);
  into.pods.push_back(std::make_shared<const api::Pod>(std::move(pod)));
}

api::OwnerReference ownerOf(const Controller& c, std::string apiVersion, std::string kind) {
  return api::OwnerReference{std::move(apiVersion), std::move(kind), c.name, c.uid, true};
}

template <typename T>
T decodeController(const Controller& c) {
  try {
    T out = api::decode<T>(c.object);
    out.metadata.namespace_ = c.ns;
    out.metadata.uid = c.uid;
    return out;
  } catch (const api::DecodeError& e) {
    auto [f, m] = locateDecodeError(c.object, e.what());
    throw FieldError(f, m);
  }
}

}  // namespace

std::pair<std::string, std::string> locateDecodeError(const json& root, std::string_view what) {
  if (auto l = walk(root, what)) return {std::move(l->field), std::move(l->message)};
  // Not found in the object (a path the api layer renders differently): as the error says it.
  const size_t colon = what.find(": ");
  if (colon == std::string_view::npos ||
      what.substr(0, colon).find(' ') != std::string_view::npos) {
    return {"", std::string(withoutNlohmannPrefix(what))};
  }
  return {std::string(what.substr(0, colon)),
          std::string(withoutNlohmannPrefix(what.substr(colon + 2)))};
}

std::string simUid(std::string_view kind, std::string_view ns, std::string_view name) {
  std::string out = "sim-";
  if (kind != "Pod") (out += kind) += '-';
  if (!ns.empty()) (out += ns) += '-';
  return out += name;
}

void expandDeployment(const Controller& c, Cluster& into) {
  const int32_t replicas = countField(c, "replicas").value_or(1);
  auto selector = decodeField<api::LabelSelector>(c, "selector");

  api::ReplicaSet rs;
  rs.metadata.name = c.name + "-" + std::string(kTemplateHash);
  rs.metadata.namespace_ = c.ns;
  rs.metadata.uid = simUid("ReplicaSet", c.ns, rs.metadata.name);
  rs.metadata.ownerReferences = {ownerOf(c, "apps/v1", "Deployment")};
  const Controller rsAsController{c.object, rs.metadata.name, c.ns, rs.metadata.uid};
  api::Pod pod = templatePod(rsAsController, ownerOf(rsAsController, "apps/v1", "ReplicaSet"));
  pod.metadata.labels.insert_or_assign("pod-template-hash", std::string(kTemplateHash));
  rs.metadata.labels = pod.metadata.labels;
  // As the deployment controller: the Deployment's selector plus the template hash (apps/v1
  // requires a selector; without one, the template's labels).
  if (!selector) selector = api::LabelSelector{};
  if (selector->empty()) selector->matchLabels = pod.metadata.labels;
  selector->matchLabels.insert_or_assign("pod-template-hash", std::string(kTemplateHash));
  rs.spec.replicas = replicas;
  rs.spec.selector = std::move(selector);

  for (int32_t i = 0; i < replicas; ++i)
    addPod(pod, rs.metadata.name + "-" + std::to_string(i), into);
  into.replicaSets.push_back(std::move(rs));
}

void expandReplicaSet(const Controller& c, Cluster& into) {
  auto rs = decodeController<api::ReplicaSet>(c);
  checkCount(rs.spec.replicas, "spec.replicas");
  const int32_t replicas = rs.spec.replicas.value_or(1);
  const api::Pod pod = templatePod(c, ownerOf(c, "apps/v1", "ReplicaSet"));
  for (int32_t i = 0; i < replicas; ++i) addPod(pod, c.name + "-" + std::to_string(i), into);
  into.replicaSets.push_back(std::move(rs));
}

void expandReplicationController(const Controller& c, Cluster& into) {
  auto rc = decodeController<api::ReplicationController>(c);
  checkCount(rc.spec.replicas, "spec.replicas");
  const int32_t replicas = rc.spec.replicas.value_or(1);
  const api::Pod pod = templatePod(c, ownerOf(c, "v1", "ReplicationController"));
  // The apiserver defaults an empty selector to the template's labels.
  if (rc.spec.selector.empty()) rc.spec.selector = pod.metadata.labels;
  for (int32_t i = 0; i < replicas; ++i) addPod(pod, c.name + "-" + std::to_string(i), into);
  into.replicationControllers.push_back(std::move(rc));
}

void expandStatefulSet(const Controller& c, Cluster& into) {
  auto sts = decodeController<api::StatefulSet>(c);
  checkCount(sts.spec.replicas, "spec.replicas");
  const int32_t replicas = sts.spec.replicas.value_or(1);
  api::Pod pod = templatePod(c, ownerOf(c, "apps/v1", "StatefulSet"));
  pod.metadata.labels.insert_or_assign("controller-revision-hash",
                                       c.name + "-" + std::string(kTemplateHash));

  // volumeClaimTemplates: each pod gets the claim "<template>-<set>-<i>" in place of a volume of
  // the template's name, and the claim is created (Pending) as the controller does.
  std::vector<api::PersistentVolumeClaim> claims;
  if (const json* vcts = member(specOf(c), "volumeClaimTemplates")) {
    if (!vcts->is_array()) throw FieldError("spec.volumeClaimTemplates", "expected an array");
    for (size_t t = 0; t < vcts->size(); ++t) {
      const std::string field = "spec.volumeClaimTemplates[" + std::to_string(t) + "]";
      try {
        claims.push_back(api::decode<api::PersistentVolumeClaim>((*vcts)[t]));
      } catch (const api::DecodeError& e) {
        auto [f, m] = locateDecodeError((*vcts)[t], e.what());
        throw FieldError(joinField(field, f), m);
      }
      if (claims.back().metadata.name.empty())
        throw FieldError(field + ".metadata.name", "missing");
    }
  }

  for (int32_t i = 0; i < replicas; ++i) {
    const std::string name = c.name + "-" + std::to_string(i);
    api::Pod copy = pod;
    copy.metadata.labels.insert_or_assign("statefulset.kubernetes.io/pod-name", name);
    copy.metadata.labels.insert_or_assign("apps.kubernetes.io/pod-index", std::to_string(i));
    for (const api::PersistentVolumeClaim& tmpl : claims) {
      api::PersistentVolumeClaim claim = tmpl;
      claim.metadata.name = tmpl.metadata.name + "-" + name;
      claim.metadata.namespace_ = c.ns;
      claim.metadata.uid = simUid("PersistentVolumeClaim", c.ns, claim.metadata.name);
      if (sts.spec.selector) {
        for (const auto& [k, v] : sts.spec.selector->matchLabels) claim.metadata.labels[k] = v;
      }
      claim.status = api::PersistentVolumeClaimStatus{};
      claim.status.phase = "Pending";
      api::Volume volume;
      volume.name = tmpl.metadata.name;
      volume.persistentVolumeClaim = api::PersistentVolumeClaimVolumeSource{claim.metadata.name};
      auto same = [&](const api::Volume& v) { return v.name == volume.name; };
      if (auto it = std::ranges::find_if(copy.spec.volumes, same); it != copy.spec.volumes.end()) {
        *it = std::move(volume);
      } else {
        copy.spec.volumes.push_back(std::move(volume));
      }
      into.persistentVolumeClaims.push_back(std::move(claim));
    }
    addPod(std::move(copy), name, into);
  }
  into.statefulSets.push_back(std::move(sts));
}

void expandJob(const Controller& c, Cluster& into) {
  int32_t pods = countField(c, "parallelism").value_or(1);
  if (const auto completions = countField(c, "completions")) pods = std::min(pods, *completions);
  if (decodeField<bool>(c, "suspend").value_or(false)) pods = 0;
  const bool indexed = decodeField<std::string>(c, "completionMode").value_or("") == "Indexed";

  api::Pod pod = templatePod(c, ownerOf(c, "batch/v1", "Job"));
  for (const char* key : {"batch.kubernetes.io/controller-uid", "controller-uid"}) {
    pod.metadata.labels.insert_or_assign(key, c.uid);
  }
  for (const char* key : {"batch.kubernetes.io/job-name", "job-name"}) {
    pod.metadata.labels.insert_or_assign(key, c.name);
  }
  for (int32_t i = 0; i < pods; ++i) {
    api::Pod copy = pod;
    if (indexed) {
      copy.metadata.labels.insert_or_assign("batch.kubernetes.io/job-completion-index",
                                            std::to_string(i));
      copy.metadata.annotations.insert_or_assign("batch.kubernetes.io/job-completion-index",
                                                 std::to_string(i));
    }
    addPod(std::move(copy), c.name + "-" + std::to_string(i), into);
  }
}

}  // namespace ksched::sim
