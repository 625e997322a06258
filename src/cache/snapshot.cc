#include "cache/snapshot.h"

#include <algorithm>
#include <map>
#include <utility>

#include "cache/node_tree.h"

namespace ksched::cache {

Snapshot Snapshot::fromForTest(std::vector<PodPtr> pods, std::vector<NodePtr> nodes) {
  std::map<std::string, int32_t, std::less<>> imageNodes;
  NodeTree tree;
  std::unordered_map<std::string, std::shared_ptr<NodeInfo>> infos;
  for (auto& node : nodes) {
    if (!tree.addNode(*node)) continue;
    auto info = std::make_shared<NodeInfo>(node);
    for (const auto& [image, state] : info->imageStates()) ++imageNodes[image];
    infos.emplace(node->metadata.name, std::move(info));
  }
  for (auto& pod : pods) {
    auto it = infos.find(pod->spec.nodeName);
    if (it != infos.end()) it->second->addPod(std::make_shared<const PodInfo>(std::move(pod)));
  }
  Snapshot snapshot;
  for (auto& [name, info] : infos) {
    for (const auto& [image, count] : imageNodes) info->setImageNumNodes(image, count);
    snapshot.generation_ = std::max(snapshot.generation_, info->generation());
    snapshot.put(std::move(info));
  }
  const std::vector<std::string> order = tree.list();
  snapshot.rebuildLists(&order);
  snapshot.rebuildUsedPVCs();
  return snapshot;
}

void Snapshot::rebuildUsedPVCs() {
  usedPVCs_.clear();
  for (const auto& [name, entry] : nodes_) {
    for (const auto& [key, count] : entry.info->pvcRefCounts()) usedPVCs_.insert(key);
  }
}

const NodeInfo* Snapshot::get(std::string_view nodeName) const {
  auto it = nodes_.find(nodeName);
  return it == nodes_.end() ? nullptr : it->second.info.get();
}

std::shared_ptr<const NodeInfo> Snapshot::getShared(std::string_view nodeName) const {
  auto it = nodes_.find(nodeName);
  return it == nodes_.end() ? nullptr : it->second.info;
}

bool Snapshot::put(std::shared_ptr<const NodeInfo> info) {
  auto [it, inserted] = nodes_.try_emplace(info->name());
  Entry& entry = it->second;
  const NodeInfo* raw = info.get();
  if (entry.listIndex != kNoIndex) list_[entry.listIndex] = raw;
  if (entry.affinityIndex != kNoIndex) affinityList_[entry.affinityIndex] = raw;
  if (entry.antiAffinityIndex != kNoIndex) antiAffinityList_[entry.antiAffinityIndex] = raw;
  entry.info = std::move(info);
  return inserted;
}

void Snapshot::rebuildLists(const std::vector<std::string>* order) {
  if (order != nullptr) {
    for (auto& [name, entry] : nodes_) entry.listIndex = kNoIndex;
    list_.clear();
    list_.reserve(order->size());
    for (const auto& name : *order) {
      auto it = nodes_.find(name);
      if (it == nodes_.end()) continue;
      it->second.listIndex = list_.size();
      list_.push_back(it->second.info.get());
    }
  }
  affinityList_.clear();
  antiAffinityList_.clear();
  for (auto& [name, entry] : nodes_) {
    entry.affinityIndex = kNoIndex;
    entry.antiAffinityIndex = kNoIndex;
  }
  for (const NodeInfo* info : list_) {
    Entry& entry = nodes_.find(info->name())->second;
    if (!info->podsWithAffinity().empty()) {
      entry.affinityIndex = affinityList_.size();
      affinityList_.push_back(info);
    }
    if (!info->podsWithRequiredAntiAffinity().empty()) {
      entry.antiAffinityIndex = antiAffinityList_.size();
      antiAffinityList_.push_back(info);
    }
  }
}

}  // namespace ksched::cache
