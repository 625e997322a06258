#include <nlohmann/json.hpp>
#include <utility>

#include <ksched/api/decode.h>
#include <ksched/api/object_reference.h>

namespace ksched::api {

ObjectReference objectReferenceTo(std::string apiVersion, std::string kind,
                                  const ObjectMeta& meta) {
  ObjectReference r;
  r.apiVersion = std::move(apiVersion);
  r.kind = std::move(kind);
  r.namespace_ = meta.namespace_;
  r.name = meta.name;
  r.uid = meta.uid;
  r.resourceVersion = meta.resourceVersion;
  return r;
}

void from_json(const nlohmann::json& j, ObjectReference& r) {
  readField(j, "apiVersion", r.apiVersion);
  readField(j, "kind", r.kind);
  readField(j, "namespace", r.namespace_);
  readField(j, "name", r.name);
  readField(j, "uid", r.uid);
  readField(j, "resourceVersion", r.resourceVersion);
  readField(j, "fieldPath", r.fieldPath);
}

void to_json(nlohmann::json& j, const ObjectReference& r) {
  j = nlohmann::json::object();
  auto put = [&j](const char* key, const std::string& v) {
    if (!v.empty()) j[key] = v;
  };
  put("apiVersion", r.apiVersion);
  put("kind", r.kind);
  put("namespace", r.namespace_);
  put("name", r.name);
  put("uid", r.uid);
  put("resourceVersion", r.resourceVersion);
  put("fieldPath", r.fieldPath);
}

}  // namespace ksched::api
