// core/v1 Node: the fields the scheduler reads.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include <ksched/api/meta.h>
#include <ksched/api/resources.h>
#include <ksched/api/taints.h>

namespace ksched::api {

// Well-known node labels.
inline constexpr std::string_view kLabelHostname = "kubernetes.io/hostname";
inline constexpr std::string_view kLabelTopologyZone = "topology.kubernetes.io/zone";
inline constexpr std::string_view kLabelTopologyRegion = "topology.kubernetes.io/region";

inline constexpr std::string_view kNodeConditionReady = "Ready";
inline constexpr std::string_view kConditionTrue = "True";
inline constexpr std::string_view kConditionFalse = "False";

struct NodeSpec {
  bool unschedulable = false;
  std::vector<Taint> taints;
  // spec.podPreemptionPolicy.disableResizePreemption (KEP 5836): the owners that keep the
  // scheduler from preempting pods for an in-place resize on this node; any one disables it.
  std::vector<std::string> disableResizePreemption;
};

struct ContainerImage {
  std::vector<std::string> names;
  int64_t sizeBytes = 0;
};

struct NodeCondition {
  std::string type;
  std::string status;  // "True", "False", "Unknown"
};

struct NodeStatus {
  ResourceList capacity;
  ResourceList allocatable;
  std::vector<ContainerImage> images;
  std::vector<NodeCondition> conditions;
  // The features the kubelet declares (KEP 5328), sorted and unique as the apiserver requires;
  // empty for a kubelet older than 1.35 or with NodeDeclaredFeatures off.
  std::vector<std::string> declaredFeatures;
};

struct Node {
  ObjectMeta metadata;
  NodeSpec spec;
  NodeStatus status;

  // The condition of that type, or nullptr.
  [[nodiscard]] const NodeCondition* condition(std::string_view type) const noexcept;
};

void from_json(const nlohmann::json& j, NodeSpec& s);
void from_json(const nlohmann::json& j, ContainerImage& i);
void from_json(const nlohmann::json& j, NodeCondition& c);
void from_json(const nlohmann::json& j, NodeStatus& s);
void from_json(const nlohmann::json& j, Node& n);

}  // namespace ksched::api
