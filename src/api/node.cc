#include <nlohmann/json.hpp>

#include <ksched/api/decode.h>
#include <ksched/api/node.h>

namespace ksched::api {

const NodeCondition* Node::condition(std::string_view type) const noexcept {
  for (const auto& c : status.conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

void from_json(const nlohmann::json& j, NodeSpec& s) {
  readField(j, "unschedulable", s.unschedulable);
  readField(j, "taints", s.taints);
  if (auto it = j.find("podPreemptionPolicy"); it != j.end() && it->is_object()) {
    readField(*it, "disableResizePreemption", s.disableResizePreemption);
  }
}

void from_json(const nlohmann::json& j, ContainerImage& i) {
  readField(j, "names", i.names);
  readField(j, "sizeBytes", i.sizeBytes);
}

void from_json(const nlohmann::json& j, NodeCondition& c) {
  readField(j, "type", c.type);
  readField(j, "status", c.status);
}

void from_json(const nlohmann::json& j, NodeStatus& s) {
  readField(j, "capacity", s.capacity);
  readField(j, "allocatable", s.allocatable);
  readField(j, "images", s.images);
  readField(j, "conditions", s.conditions);
  readField(j, "declaredFeatures", s.declaredFeatures);
}

void from_json(const nlohmann::json& j, Node& n) {
  readField(j, "metadata", n.metadata);
  readField(j, "spec", n.spec);
  readField(j, "status", n.status);
}

}  // namespace ksched::api
