#include "queue/nominator.h"

#include <algorithm>
#include <utility>

namespace ksched::queue {

void Nominator::addNominatedPod(PodInfoPtr podInfo, const std::string& nodeName) {
  std::lock_guard lock(mu_);
  addLocked(std::move(podInfo), nodeName);
}

void Nominator::addNominatedPodFromStatus(PodInfoPtr podInfo) {
  std::lock_guard lock(mu_);
  const std::string nodeName = podInfo->pod->status.nominatedNodeName;
  addLocked(std::move(podInfo), nodeName);
}

void Nominator::readdNominatedPod(PodInfoPtr podInfo) {
  std::lock_guard lock(mu_);
  std::string nodeName = podInfo->pod->status.nominatedNodeName;
  if (auto it = nodeByUid_.find(podInfo->pod->metadata.uid); it != nodeByUid_.end()) {
    nodeName = it->second;
  }
  addLocked(std::move(podInfo), nodeName);
}

void Nominator::deleteNominatedPodIfExists(const api::Pod& pod) {
  std::lock_guard lock(mu_);
  deleteLocked(pod.metadata.uid);
}

void Nominator::updateNominatedPod(const api::Pod& oldPod, PodInfoPtr newPodInfo) {
  std::lock_guard lock(mu_);
  std::string nodeName = newPodInfo->pod->status.nominatedNodeName;
  if (oldPod.status.nominatedNodeName.empty() && nodeName.empty()) {
    if (auto it = nodeByUid_.find(oldPod.metadata.uid); it != nodeByUid_.end()) {
      nodeName = it->second;
    }
  }
  deleteLocked(oldPod.metadata.uid);
  addLocked(std::move(newPodInfo), nodeName);
}

std::vector<PodInfoPtr> Nominator::nominatedPodsForNode(const std::string& nodeName) const {
  if (count_.load(std::memory_order_acquire) == 0) return {};
  std::lock_guard lock(mu_);
  auto it = byNode_.find(nodeName);
  return it == byNode_.end() ? std::vector<PodInfoPtr>{} : it->second;
}

std::string Nominator::nominatedNodeFor(const std::string& uid) const {
  if (count_.load(std::memory_order_acquire) == 0) return {};
  std::lock_guard lock(mu_);
  auto it = nodeByUid_.find(uid);
  return it == nodeByUid_.end() ? std::string{} : it->second;
}

size_t Nominator::size() const {
  std::lock_guard lock(mu_);
  return nodeByUid_.size();
}

void Nominator::addLocked(PodInfoPtr podInfo, const std::string& nodeName) {
  const std::string& uid = podInfo->pod->metadata.uid;
  deleteLocked(uid);
  if (nodeName.empty()) return;
  nodeByUid_[uid] = nodeName;
  byNode_[nodeName].push_back(std::move(podInfo));
  count_.store(nodeByUid_.size(), std::memory_order_release);
}

void Nominator::deleteLocked(const std::string& uid) {
  auto it = nodeByUid_.find(uid);
  if (it == nodeByUid_.end()) return;
  auto nodeIt = byNode_.find(it->second);
  if (nodeIt != byNode_.end()) {
    auto& pods = nodeIt->second;
    std::erase_if(pods, [&](const PodInfoPtr& p) { return p->pod->metadata.uid == uid; });
    if (pods.empty()) byNode_.erase(nodeIt);
  }
  nodeByUid_.erase(it);
  count_.store(nodeByUid_.size(), std::memory_order_release);
}

}  // namespace ksched::queue
