// core/v1 ObjectReference: PersistentVolume.spec.claimRef, Event.involvedObject and the like.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include <ksched/api/meta.h>

namespace ksched::api {

struct ObjectReference {
  std::string apiVersion;
  std::string kind;
  std::string namespace_;  // "namespace" in JSON
  std::string name;
  std::string uid;
  std::string resourceVersion;
  std::string fieldPath;

  friend bool operator==(const ObjectReference&, const ObjectReference&) = default;
};

// A reference to the object with that metadata (namespace, name, uid, resourceVersion).
[[nodiscard]] ObjectReference objectReferenceTo(std::string apiVersion, std::string kind,
                                                const ObjectMeta& meta);

void from_json(const nlohmann::json& j, ObjectReference& r);
// Writes only the non-empty fields.
void to_json(nlohmann::json& j, const ObjectReference& r);

}  // namespace ksched::api
