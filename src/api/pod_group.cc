// Decoders of the Workload API (pod_group.h): scheduling.k8s.io v1beta1, v1alpha2 and v1alpha3
// into one model. Errors name the field path as readField does for every other kind.
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include <ksched/api/decode.h>
#include <ksched/api/pod_group.h>

namespace ksched::api {

void from_json(const nlohmann::json& j, Condition& c) {
  readField(j, "type", c.type);
  readField(j, "status", c.status);
  readField(j, "reason", c.reason);
  readField(j, "message", c.message);
  readField(j, "lastTransitionTime", c.lastTransitionTime);
  readField(j, "observedGeneration", c.observedGeneration);
}

// type, status, reason, message and lastTransitionTime are required fields of metav1.Condition:
// always written, empty or not; observedGeneration only when known.
void to_json(nlohmann::json& j, const Condition& c) {
  j = nlohmann::json{{"type", c.type},
                     {"status", c.status},
                     {"reason", c.reason},
                     {"message", c.message},
                     {"lastTransitionTime", c.lastTransitionTime}};
  if (c.observedGeneration) j["observedGeneration"] = *c.observedGeneration;
}

void from_json(const nlohmann::json& j, PodGroupResourceClaim& c) {
  readField(j, "name", c.name);
  readField(j, "resourceClaimName", c.resourceClaimName);
  readField(j, "resourceClaimTemplateName", c.resourceClaimTemplateName);
}

void from_json(const nlohmann::json& j, PodGroupResourceClaimStatus& s) {
  readField(j, "name", s.name);
  readField(j, "resourceClaimName", s.resourceClaimName);
}

void from_json(const nlohmann::json& j, PodGroupStatus& s) {
  readField(j, "conditions", s.conditions);
  readField(j, "resourceClaimStatuses", s.resourceClaimStatuses);
}

const Condition* PodGroupStatus::condition(std::string_view type) const noexcept {
  for (const auto& c : conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

std::string_view PodGroup::initiallyScheduledType() const noexcept {
  return apiVersion == "scheduling.k8s.io/v1alpha2" ? kPodGroupScheduledV1alpha2
                                                    : kPodGroupInitiallyScheduled;
}

// Named, not anonymous: the api layer is compiled in unity batches, and its files' anonymous
// namespaces would share one.
namespace pod_group_json {

using nlohmann::json;

// v1alpha3 serves v1beta1's shape (and CompositePodGroup); v1alpha2 the first one.
enum class GroupShape { kV1alpha2, kV1beta1 };

struct TopologyConstraint {
  std::string key;
};

void from_json(const json& j, TopologyConstraint& t) { readField(j, "key", t.key); }

struct NamedTemplate {
  std::string name;
};

void from_json(const json& j, NamedTemplate& t) { readField(j, "name", t.name); }

// Runs read(j[key]) when the member is present and not null, one field further down: the
// errors it throws get "key." in front, as readField's do. The member must be an object.
template <typename F>
void objectField(const json& j, std::string_view key, F&& read) {
  if (!j.is_object()) throw DecodeError("expected an object");
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  if (!it->is_object()) {
    throw DecodeError(std::string(key) + ": expected an object, got " + it->type_name());
  }
  try {
    read(*it);
  } catch (const DecodeError& e) {
    throw DecodeError(std::string(key) + "." + e.what());
  } catch (const json::exception& e) {
    throw DecodeError(std::string(key) + ": " + e.what());
  }
}

// The object's apiVersion (or, when it names none, `listed`), checked against the versions
// that serve the kind.
GroupShape readVersion(const json& j, std::string_view listed, bool compositeOnly,
                       std::string& apiVersion) {
  if (!j.is_object()) throw DecodeError(std::string("expected an object, got ") + j.type_name());
  readField(j, "apiVersion", apiVersion);
  if (apiVersion.empty()) apiVersion = listed;
  const std::string_view served = compositeOnly ? "scheduling.k8s.io/v1alpha3"
                                                : "scheduling.k8s.io/v1beta1, v1alpha2 or v1alpha3";
  if (apiVersion.empty()) throw DecodeError("apiVersion: missing (" + std::string(served) + ")");
  if (apiVersion == "scheduling.k8s.io/v1alpha3") return GroupShape::kV1beta1;
  if (!compositeOnly) {
    if (apiVersion == "scheduling.k8s.io/v1beta1") return GroupShape::kV1beta1;
    if (apiVersion == "scheduling.k8s.io/v1alpha2") return GroupShape::kV1alpha2;
  }
  throw DecodeError("apiVersion: \"" + apiVersion + "\" is not a version ksched reads (" +
                    std::string(served) + ")");
}

// spec.schedulingPolicy: exactly one of basic and gang; gang's `countKey` (minCount,
// minGroupCount) at least 1.
PodGroupSchedulingPolicy readPolicy(const json& spec, const std::string& countKey) {
  PodGroupSchedulingPolicy p;
  bool present = false;
  bool basic = false;
  objectField(spec, "schedulingPolicy", [&](const json& policy) {
    present = true;
    objectField(policy, "basic", [&](const json&) { basic = true; });
    objectField(policy, "gang", [&](const json& gang) {
      std::optional<int32_t> count;
      readField(gang, countKey, count);
      if (!count) throw DecodeError(countKey + ": missing (at least 1)");
      if (*count < 1) {
        throw DecodeError(countKey + ": must be at least 1, got " + std::to_string(*count));
      }
      p.gangMinCount = count;
    });
  });
  if (!present) throw DecodeError("schedulingPolicy: missing (exactly one of basic, gang)");
  if (basic == p.gang()) {
    throw DecodeError(std::string("schedulingPolicy: exactly one of basic, gang must be set") +
                      (basic ? ", got both" : ""));
  }
  return p;
}

// disruptionMode: "Pod" | "PodGroup" in v1alpha2; {single: {}} | {all: {}} since. Unset: single.
DisruptionMode readDisruptionMode(const json& spec, GroupShape shape) {
  if (shape == GroupShape::kV1alpha2) {
    std::string mode;
    readField(spec, "disruptionMode", mode);
    if (mode.empty() || mode == "Pod") return DisruptionMode::kSingle;
    if (mode == "PodGroup") return DisruptionMode::kAll;
    throw DecodeError("disruptionMode: \"" + mode + "\" is not Pod or PodGroup");
  }
  bool present = false;
  bool single = false;
  bool all = false;
  objectField(spec, "disruptionMode", [&](const json& mode) {
    present = true;
    objectField(mode, "single", [&](const json&) { single = true; });
    objectField(mode, "all", [&](const json&) { all = true; });
  });
  if (present && single == all) {
    throw DecodeError(std::string("disruptionMode: exactly one of single, all must be set") +
                      (all ? ", got both" : ""));
  }
  return all ? DisruptionMode::kAll : DisruptionMode::kSingle;
}

void readCommon(const json& spec, GroupShape shape, const std::string& countKey,
                GroupSpecCommon& s) {
  readField(spec, "parentCompositePodGroupName", s.parentCompositePodGroupName);
  if (shape == GroupShape::kV1alpha2) {
    objectField(spec, "podGroupTemplateRef", [&](const json& ref) {
      objectField(ref, "workload", [&](const json& w) {
        WorkloadReference r;
        readField(w, "workloadName", r.workloadName);
        readField(w, "podGroupTemplateName", r.templateName);
        s.workloadRef = std::move(r);
      });
    });
  } else {
    objectField(spec, "workloadRef", [&](const json& w) {
      WorkloadReference r;
      readField(w, "workloadName", r.workloadName);
      readField(w, "templateName", r.templateName);
      s.workloadRef = std::move(r);
    });
  }
  s.schedulingPolicy = readPolicy(spec, countKey);
  objectField(spec, "schedulingConstraints", [&](const json& c) {
    std::vector<TopologyConstraint> topology;
    readField(c, "topology", topology);
    for (auto& t : topology) s.topologyKeys.push_back(std::move(t.key));
  });
  s.disruptionMode = readDisruptionMode(spec, shape);
  readField(spec, "priorityClassName", s.priorityClassName);
  readField(spec, "priority", s.priority);
  readField(spec, "preemptionPolicy", s.preemptionPolicy);
}

// spec is required: a group without one has no scheduling policy.
template <typename F>
void readSpec(const json& j, F&& read) {
  bool present = false;
  objectField(j, "spec", [&](const json& spec) {
    present = true;
    read(spec);
  });
  if (!present) throw DecodeError("spec.schedulingPolicy: missing (exactly one of basic, gang)");
}

}  // namespace pod_group_json

PodGroup decodePodGroup(const nlohmann::json& j, std::string_view listedApiVersion) {
  PodGroup pg;
  const pod_group_json::GroupShape shape =
      pod_group_json::readVersion(j, listedApiVersion, false, pg.apiVersion);
  readField(j, "metadata", pg.metadata);
  pod_group_json::readSpec(j, [&](const nlohmann::json& spec) {
    pod_group_json::readCommon(spec, shape, "minCount", pg.spec);
    readField(spec, "resourceClaims", pg.spec.resourceClaims);
  });
  readField(j, "status", pg.status);
  return pg;
}

CompositePodGroup decodeCompositePodGroup(const nlohmann::json& j,
                                          std::string_view listedApiVersion) {
  CompositePodGroup cpg;
  const pod_group_json::GroupShape shape =
      pod_group_json::readVersion(j, listedApiVersion, true, cpg.apiVersion);
  readField(j, "metadata", cpg.metadata);
  pod_group_json::readSpec(j, [&](const nlohmann::json& spec) {
    pod_group_json::readCommon(spec, shape, "minGroupCount", cpg.spec);
  });
  readField(j, "status", cpg.status);
  return cpg;
}

Workload decodeWorkload(const nlohmann::json& j, std::string_view listedApiVersion) {
  Workload w;
  pod_group_json::readVersion(j, listedApiVersion, false, w.apiVersion);
  readField(j, "metadata", w.metadata);
  pod_group_json::objectField(j, "spec", [&](const nlohmann::json& spec) {
    auto names = [&](std::string_view key, std::vector<std::string>& out) {
      std::vector<pod_group_json::NamedTemplate> templates;
      readField(spec, key, templates);
      for (auto& t : templates) out.push_back(std::move(t.name));
    };
    names("podGroupTemplates", w.podGroupTemplateNames);
    names("compositePodGroupTemplates", w.compositePodGroupTemplateNames);
  });
  return w;
}

void from_json(const nlohmann::json& j, PodGroup& pg) { pg = decodePodGroup(j, {}); }

void from_json(const nlohmann::json& j, CompositePodGroup& cpg) {
  cpg = decodeCompositePodGroup(j, {});
}

void from_json(const nlohmann::json& j, Workload& w) { w = decodeWorkload(j, {}); }

}  // namespace ksched::api
