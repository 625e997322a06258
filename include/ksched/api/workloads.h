// Kinds the scheduler reads for their selectors or labels: Namespace, Service, ReplicaSet,
// StatefulSet (apps/v1) and ReplicationController.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

#include <ksched/api/meta.h>
#include <ksched/api/selectors.h>

namespace ksched::api {

struct NamespaceStatus {
  std::string phase;  // "Active" or "Terminating"
};

// Namespace labels (for namespaceSelector) are metadata.labels.
struct Namespace {
  ObjectMeta metadata;
  NamespaceStatus status;
};

struct ServiceSpec {
  // nullopt (no selector) selects no pods; an empty map selects all pods (upstream).
  std::optional<Labels> selector;
};

struct Service {
  ObjectMeta metadata;
  ServiceSpec spec;
};

struct ReplicaSetSpec {
  std::optional<int32_t> replicas;
  std::optional<LabelSelector> selector;
};

struct ReplicaSet {
  ObjectMeta metadata;
  ReplicaSetSpec spec;
};

struct StatefulSetSpec {
  std::optional<int32_t> replicas;
  std::optional<LabelSelector> selector;
};

struct StatefulSet {
  ObjectMeta metadata;
  StatefulSetSpec spec;
};

struct ReplicationControllerSpec {
  std::optional<int32_t> replicas;
  Labels selector;  // equality-based; use Selector::fromSet
};

struct ReplicationController {
  ObjectMeta metadata;
  ReplicationControllerSpec spec;
};

void from_json(const nlohmann::json& j, NamespaceStatus& s);
void from_json(const nlohmann::json& j, Namespace& n);
void from_json(const nlohmann::json& j, ServiceSpec& s);
void from_json(const nlohmann::json& j, Service& s);
void from_json(const nlohmann::json& j, ReplicaSetSpec& s);
void from_json(const nlohmann::json& j, ReplicaSet& r);
void from_json(const nlohmann::json& j, StatefulSetSpec& s);
void from_json(const nlohmann::json& j, StatefulSet& s);
void from_json(const nlohmann::json& j, ReplicationControllerSpec& s);
void from_json(const nlohmann::json& j, ReplicationController& r);

}  // namespace ksched::api
