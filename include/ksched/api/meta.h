// Object metadata shared by every Kubernetes kind ksched reads.
//
// Decoding contract (every kind in src/api/):
//   - `void from_json(const nlohmann::json&, T&)` decodes a kind. Unknown fields are ignored,
//     missing fields keep their defaults. A field present with the wrong JSON type throws
//     `ksched::api::DecodeError` naming the field path, so callers can log and skip the object.
//   - Decoding never keeps the JSON tree: only typed members survive.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ksched::api {

// Thrown when an object from the API has a field of the wrong type or an unparsable value.
class DecodeError : public std::runtime_error {
 public:
  explicit DecodeError(const std::string& what) : std::runtime_error(what) {}
};

using Labels = std::map<std::string, std::string, std::less<>>;

struct OwnerReference {
  std::string apiVersion;
  std::string kind;
  std::string name;
  std::string uid;
  bool controller = false;

  friend bool operator==(const OwnerReference&, const OwnerReference&) = default;
};

struct ObjectMeta {
  std::string name;
  std::string namespace_;  // "namespace" in JSON; empty for cluster-scoped kinds
  std::string uid;
  std::string resourceVersion;
  int64_t generation = 0;
  Labels labels;
  Labels annotations;
  std::vector<OwnerReference> ownerReferences;
  std::string creationTimestamp;                 // RFC 3339 as served
  std::optional<std::string> deletionTimestamp;  // set while terminating
  std::optional<int64_t> deletionGracePeriodSeconds;

  // "namespace/name", or "name" for cluster-scoped objects: the store key informers use.
  [[nodiscard]] std::string key() const {
    return namespace_.empty() ? name : namespace_ + "/" + name;
  }

  friend bool operator==(const ObjectMeta&, const ObjectMeta&) = default;
};

void from_json(const nlohmann::json& j, OwnerReference& o);
void from_json(const nlohmann::json& j, ObjectMeta& m);
void to_json(nlohmann::json& j, const ObjectMeta& m);

// metav1.Condition (PodGroups, ResourceClaims' device status); decoded in pod_group.cc.
struct Condition {
  std::string type;
  std::string status;  // "True", "False", "Unknown"
  std::string reason;
  std::string message;
  std::string lastTransitionTime;  // RFC 3339
  std::optional<int64_t> observedGeneration;

  friend bool operator==(const Condition&, const Condition&) = default;
};
void from_json(const nlohmann::json& j, Condition& c);
void to_json(nlohmann::json& j, const Condition& c);

}  // namespace ksched::api
