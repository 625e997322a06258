#include <nlohmann/json.hpp>

#include <ksched/api/decode.h>
#include <ksched/api/meta.h>

namespace ksched::api {

void from_json(const nlohmann::json& j, OwnerReference& o) {
  readField(j, "apiVersion", o.apiVersion);
  readField(j, "kind", o.kind);
  readField(j, "name", o.name);
  readField(j, "uid", o.uid);
  readField(j, "controller", o.controller);
}

void from_json(const nlohmann::json& j, ObjectMeta& m) {
  readField(j, "name", m.name);
  readField(j, "namespace", m.namespace_);
  readField(j, "uid", m.uid);
  readField(j, "resourceVersion", m.resourceVersion);
  readField(j, "generation", m.generation);
  readField(j, "labels", m.labels);
  readField(j, "annotations", m.annotations);
  readField(j, "ownerReferences", m.ownerReferences);
  readField(j, "creationTimestamp", m.creationTimestamp);
  readField(j, "deletionTimestamp", m.deletionTimestamp);
  readField(j, "deletionGracePeriodSeconds", m.deletionGracePeriodSeconds);
}

void to_json(nlohmann::json& j, const ObjectMeta& m) {
  j = nlohmann::json::object();
  j["name"] = m.name;
  if (!m.namespace_.empty()) j["namespace"] = m.namespace_;
  if (!m.uid.empty()) j["uid"] = m.uid;
  if (!m.resourceVersion.empty()) j["resourceVersion"] = m.resourceVersion;
  if (!m.labels.empty()) j["labels"] = m.labels;
  if (!m.annotations.empty()) j["annotations"] = m.annotations;
}

}  // namespace ksched::api
