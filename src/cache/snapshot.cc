#include "cache/snapshot.h"

#include <algorithm>
#include <map>
#include <utility>

#include "cache/node_tree.h"

namespace ksched::cache {

Snapshot Snapshot::fromForTest(std::vector<PodPtr> pods, std::vector<NodePtr> nodes,
                               const features::Gates& gates) {
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
    if (it != infos.end())
      it->second->addPod(std::make_shared<const PodInfo>(std::move(pod), gates));
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
  snapshot.commitListChanges();
  return snapshot;
}

void Snapshot::commitListChanges() {
  if (listRebuilt_) {
    version_ = nextGeneration();
    logStart_ = version_;
    changeLog_.clear();
  } else if (!pendingSlots_.empty()) {
    version_ = nextGeneration();
    if (changeLog_.size() + pendingSlots_.size() > kMaxChangeLog) {
      // Forget the older half (or everything): their versions can no longer be answered.
      const size_t keep = std::min(changeLog_.size(), kMaxChangeLog / 2);
      const size_t drop = changeLog_.size() - keep;
      if (drop > 0) logStart_ = changeLog_[drop - 1].version;
      changeLog_.erase(changeLog_.begin(), changeLog_.begin() + static_cast<std::ptrdiff_t>(drop));
      if (changeLog_.size() + pendingSlots_.size() > kMaxChangeLog) {
        changeLog_.clear();
        logStart_ = version_;
      }
    }
    if (logStart_ != version_) {
      for (size_t slot : pendingSlots_) changeLog_.push_back({version_, slot});
    }
  }
  pendingSlots_.clear();
  listRebuilt_ = false;
}

bool Snapshot::changedSlotsSince(int64_t since, std::vector<size_t>& slots) const {
  if (version_ == 0 || since < logStart_ || since > version_) return false;
  auto first = std::upper_bound(changeLog_.begin(), changeLog_.end(), since,
                                [](int64_t v, const Change& c) { return v < c.version; });
  for (auto it = first; it != changeLog_.end(); ++it) slots.push_back(it->slot);
  return true;
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
  if (entry.listIndex != kNoIndex) {
    list_[entry.listIndex] = raw;
    pendingSlots_.push_back(entry.listIndex);
  }
  if (entry.affinityIndex != kNoIndex) affinityList_[entry.affinityIndex] = raw;
  if (entry.antiAffinityIndex != kNoIndex) antiAffinityList_[entry.antiAffinityIndex] = raw;
  entry.info = std::move(info);
  return inserted;
}

void Snapshot::rebuildLists(const std::vector<std::string>* order) {
  if (order != nullptr) {
    listRebuilt_ = true;
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
