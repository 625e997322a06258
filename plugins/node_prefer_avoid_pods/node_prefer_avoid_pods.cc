#include "plugins/node_prefer_avoid_pods/node_prefer_avoid_pods.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <utility>

#include <ksched/api/node.h>
#include <ksched/api/pod.h>
#include <ksched/api/rfc3339.h>
#include <ksched/api/utf8.h>

namespace ksched::plugins {
namespace {

// A value of the wrong type (Go's UnmarshalTypeError) or an unparsable time.
class AnnotationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

using api::equalFold;

// The member of `obj` for the Go field with JSON name `name`: an exact match, else one that
// matches ignoring case. nullptr when absent or null.
const nlohmann::json* field(const nlohmann::json& obj, std::string_view name) {
  const nlohmann::json* found = nullptr;
  if (auto it = obj.find(name); it != obj.end()) {
    found = &*it;
  } else {
    for (const auto& [key, value] : obj.items()) {
      if (equalFold(key, name)) {
        found = &value;
        break;
      }
    }
  }
  return found == nullptr || found->is_null() ? nullptr : found;
}

// The object at `name` in `obj`, nullptr when absent or null; throws for another type.
const nlohmann::json* objectField(const nlohmann::json& obj, std::string_view name) {
  const nlohmann::json* v = field(obj, name);
  if (v != nullptr && !v->is_object()) {
    throw AnnotationError(std::string(name) + ": expected an object, got " + v->type_name());
  }
  return v;
}

std::string stringField(const nlohmann::json& obj, std::string_view name) {
  const nlohmann::json* v = field(obj, name);
  if (v == nullptr) return {};
  if (!v->is_string()) {
    throw AnnotationError(std::string(name) + ": expected a string, got " + v->type_name());
  }
  return v->get<std::string>();
}

bool boolField(const nlohmann::json& obj, std::string_view name) {
  const nlohmann::json* v = field(obj, name);
  if (v == nullptr) return false;
  if (!v->is_boolean()) {
    throw AnnotationError(std::string(name) + ": expected a boolean, got " + v->type_name());
  }
  return v->get<bool>();
}

// metav1.OwnerReference.
api::OwnerReference decodeOwnerReference(const nlohmann::json& j) {
  api::OwnerReference ref;
  ref.apiVersion = stringField(j, "apiVersion");
  ref.kind = stringField(j, "kind");
  ref.name = stringField(j, "name");
  ref.uid = stringField(j, "uid");
  ref.controller = boolField(j, "controller");
  (void)boolField(j, "blockOwnerDeletion");
  return ref;
}

// v1.PreferAvoidPodsEntry: its podController, if any.
std::optional<api::OwnerReference> decodeEntry(const nlohmann::json& j) {
  if (j.is_null()) return std::nullopt;
  if (!j.is_object()) {
    throw AnnotationError(std::string("preferAvoidPods: expected an object, got ") + j.type_name());
  }
  if (const nlohmann::json* t = field(j, "evictionTime")) {
    if (!t->is_string() || !api::parseRFC3339(t->get<std::string>())) {
      throw AnnotationError("evictionTime: not an RFC 3339 time: " + t->dump());
    }
  }
  (void)stringField(j, "reason");
  (void)stringField(j, "message");
  const nlohmann::json* signature = objectField(j, "podSignature");
  if (signature == nullptr) return std::nullopt;
  const nlohmann::json* controller = objectField(*signature, "podController");
  if (controller == nullptr) return std::nullopt;
  return decodeOwnerReference(*controller);
}

// metav1.GetControllerOf, when it is a ReplicationController or a ReplicaSet.
const api::OwnerReference* avoidableController(const api::Pod& pod) {
  for (const api::OwnerReference& ref : pod.metadata.ownerReferences) {
    if (!ref.controller) continue;
    if (ref.kind == "ReplicationController" || ref.kind == "ReplicaSet") return &ref;
    return nullptr;
  }
  return nullptr;
}

}  // namespace

std::optional<std::vector<api::OwnerReference>> NodePreferAvoidPods::avoidedControllers(
    std::string_view annotation) {
  std::vector<api::OwnerReference> out;
  if (annotation.empty()) return out;
  try {
    const nlohmann::json j = nlohmann::json::parse(annotation);
    if (j.is_null()) return out;
    if (!j.is_object())
      throw AnnotationError(std::string("expected an object, got ") + j.type_name());
    const nlohmann::json* list = field(j, "preferAvoidPods");
    if (list == nullptr) return out;
    if (!list->is_array()) {
      throw AnnotationError(std::string("preferAvoidPods: expected an array, got ") +
                            list->type_name());
    }
    for (const nlohmann::json& entry : *list) {
      if (auto ref = decodeEntry(entry)) out.push_back(std::move(*ref));
    }
  } catch (const std::exception& e) {
    spdlog::debug("cannot decode annotation {}: {}", kPreferAvoidPodsAnnotationKey, e.what());
    return std::nullopt;
  }
  return out;
}

Status NodePreferAvoidPods::score(const CycleState& /*state*/, const api::Pod& pod,
                                  const NodeInfo& nodeInfo, int64_t& score) const {
  score = 0;
  const api::Node* node = nodeInfo.node();
  if (node == nullptr) return Status::error("node not found");
  score = kMaxNodeScore;
  const api::OwnerReference* controller = avoidableController(pod);
  if (controller == nullptr) return {};
  const auto& annotations = node->metadata.annotations;
  auto it = annotations.find(kPreferAvoidPodsAnnotationKey);
  if (it == annotations.end()) return {};
  const auto avoided = avoidedControllers(it->second);
  if (!avoided) return {};
  for (const api::OwnerReference& ref : *avoided) {
    if (ref.kind == controller->kind && ref.uid == controller->uid) {
      score = 0;
      break;
    }
  }
  return {};
}

PluginFactory nodePreferAvoidPodsFactory() {
  return makePluginFactory<NodePreferAvoidPods>(
      [](Handle&) { return std::make_unique<NodePreferAvoidPods>(); });
}

}  // namespace ksched::plugins
