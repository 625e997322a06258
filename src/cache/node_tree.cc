#include "cache/node_tree.h"

#include <algorithm>
#include <utility>

namespace ksched::cache {
namespace {

std::string_view labelOr(const api::Labels& labels, std::string_view key,
                         std::string_view fallback) {
  if (auto it = labels.find(key); it != labels.end()) return it->second;
  if (auto it = labels.find(fallback); it != labels.end()) return it->second;
  return {};
}

}  // namespace

std::string zoneKey(const api::Node& node) {
  const auto& labels = node.metadata.labels;
  const std::string_view zone =
      labelOr(labels, api::kLabelTopologyZone, kLabelFailureDomainBetaZone);
  const std::string_view region =
      labelOr(labels, api::kLabelTopologyRegion, kLabelFailureDomainBetaRegion);
  if (zone.empty() && region.empty()) return {};
  std::string key(region);
  key += ':';
  key += '\0';
  key += ':';
  key += zone;
  return key;
}

void NodeTree::insert(const std::string& name, std::string zone) {
  auto [it, inserted] = zones_.try_emplace(zone);
  if (inserted) zoneOrder_.push_back(zone);
  it->second.push_back(name);
  nodeZone_[name] = std::move(zone);
}

bool NodeTree::addNode(const api::Node& node) {
  const std::string& name = node.metadata.name;
  if (nodeZone_.contains(name)) return false;
  insert(name, zoneKey(node));
  return true;
}

bool NodeTree::updateNode(const api::Node& node) {
  const std::string& name = node.metadata.name;
  auto it = nodeZone_.find(name);
  if (it == nodeZone_.end()) return addNode(node);
  std::string zone = zoneKey(node);
  if (it->second == zone) return false;
  removeNode(name);
  insert(name, std::move(zone));
  return true;
}

bool NodeTree::removeNode(std::string_view name) {
  auto it = nodeZone_.find(std::string(name));
  if (it == nodeZone_.end()) return false;
  auto zit = zones_.find(it->second);
  auto& names = zit->second;
  names.erase(std::find(names.begin(), names.end(), name));
  if (names.empty()) {
    zoneOrder_.erase(std::find(zoneOrder_.begin(), zoneOrder_.end(), zit->first));
    zones_.erase(zit);
  }
  nodeZone_.erase(it);
  return true;
}

bool NodeTree::contains(std::string_view name) const {
  return nodeZone_.contains(std::string(name));
}

std::vector<std::string> NodeTree::list() const {
  std::vector<std::string> out;
  out.reserve(nodeZone_.size());
  for (size_t index = 0; out.size() < nodeZone_.size(); ++index) {
    for (const auto& zone : zoneOrder_) {
      const auto& names = zones_.at(zone);
      if (index < names.size()) out.push_back(names[index]);
    }
  }
  return out;
}

}  // namespace ksched::cache
