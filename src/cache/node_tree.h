// NodeTree: node names grouped by zone, listed zone-interleaved (upstream nodeTree).
//
// The zone key is "<region>:\x00:<zone>" from topology.kubernetes.io/{region,zone}, falling
// back to the failure-domain.beta.kubernetes.io labels; "" when a node has neither. list()
// takes the first node of every zone in zone insertion order, then the second of every zone,
// and so on, so that the first nodes the scheduler looks at are spread across zones.
//
// Not thread-safe: the owner (Cache, or Snapshot::fromForTest) serializes access.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <ksched/api/node.h>

namespace ksched::cache {

inline constexpr std::string_view kLabelFailureDomainBetaZone =
    "failure-domain.beta.kubernetes.io/zone";
inline constexpr std::string_view kLabelFailureDomainBetaRegion =
    "failure-domain.beta.kubernetes.io/region";

// Upstream utilnode.GetZoneKey.
[[nodiscard]] std::string zoneKey(const api::Node& node);

class NodeTree {
 public:
  // Appends the node to its zone (a new zone goes last). False if the name is already present.
  bool addNode(const api::Node& node);
  // Moves the node to the end of its new zone when its zone key changed; adds it when unknown.
  // False when nothing changed.
  bool updateNode(const api::Node& node);
  // False if the name is not present. An emptied zone is dropped from the zone order.
  bool removeNode(std::string_view name);

  [[nodiscard]] bool contains(std::string_view name) const;
  [[nodiscard]] size_t numNodes() const noexcept { return nodeZone_.size(); }
  // Zone-interleaved node names.
  [[nodiscard]] std::vector<std::string> list() const;

 private:
  void insert(const std::string& name, std::string zone);

  std::vector<std::string> zoneOrder_;
  std::unordered_map<std::string, std::vector<std::string>> zones_;
  std::unordered_map<std::string, std::string> nodeZone_;  // node name -> zone key
};

}  // namespace ksched::cache
