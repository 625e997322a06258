#include <nlohmann/json.hpp>

#include <ksched/api/decode.h>
#include <ksched/api/workloads.h>

namespace ksched::api {

void from_json(const nlohmann::json& j, NamespaceStatus& s) { readField(j, "phase", s.phase); }

void from_json(const nlohmann::json& j, Namespace& n) {
  readField(j, "metadata", n.metadata);
  readField(j, "status", n.status);
}

void from_json(const nlohmann::json& j, ServiceSpec& s) { readField(j, "selector", s.selector); }

void from_json(const nlohmann::json& j, Service& s) {
  readField(j, "metadata", s.metadata);
  readField(j, "spec", s.spec);
}

void from_json(const nlohmann::json& j, ReplicaSetSpec& s) {
  readField(j, "replicas", s.replicas);
  readField(j, "selector", s.selector);
}

void from_json(const nlohmann::json& j, ReplicaSet& r) {
  readField(j, "metadata", r.metadata);
  readField(j, "spec", r.spec);
}

void from_json(const nlohmann::json& j, StatefulSetSpec& s) {
  readField(j, "replicas", s.replicas);
  readField(j, "selector", s.selector);
}

void from_json(const nlohmann::json& j, StatefulSet& s) {
  readField(j, "metadata", s.metadata);
  readField(j, "spec", s.spec);
}

void from_json(const nlohmann::json& j, ReplicationControllerSpec& s) {
  readField(j, "replicas", s.replicas);
  readField(j, "selector", s.selector);
}

void from_json(const nlohmann::json& j, ReplicationController& r) {
  readField(j, "metadata", r.metadata);
  readField(j, "spec", r.spec);
}

}  // namespace ksched::api
