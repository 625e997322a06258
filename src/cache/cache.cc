#include "cache/cache.h"

#include <pthread.h>

#include <algorithm>
#include <utility>

namespace ksched::cache {
namespace {

std::string describe(const api::Pod& pod) {
  return pod.metadata.key() + " (" + pod.metadata.uid + ")";
}

std::map<std::string_view, int64_t> imageNames(const api::Node* node) {
  std::map<std::string_view, int64_t> names;
  if (node == nullptr) return names;
  for (const auto& image : node->status.images) {
    for (const auto& name : image.names) names.emplace(name, image.sizeBytes);
  }
  return names;
}

}  // namespace

Cache::Cache(CacheOptions options) : options_(std::move(options)) {
  if (!options_.clock) options_.clock = [] { return Clock::now(); };
}

Cache::~Cache() { stopCleanup(); }

void Cache::touch(NodeList::iterator it) { nodeList_.splice(nodeList_.begin(), nodeList_, it); }

NodeInfo& Cache::nodeInfoFor(const std::string& name) {
  auto it = nodes_.find(name);
  if (it == nodes_.end()) {
    nodeList_.emplace_front(name);
    it = nodes_.emplace(name, nodeList_.begin()).first;
  } else {
    touch(it->second);
  }
  return *it->second;
}

void Cache::dropIfEmpty(NodeList::iterator it) {
  if (!it->pods().empty() || it->node() != nullptr) return;
  nodes_.erase(it->name());
  nodeList_.erase(it);
}

void Cache::addPodLocked(PodInfoPtr pod, bool assumed) {
  const std::string& uid = pod->pod->metadata.uid;
  nodeInfoFor(pod->pod->spec.nodeName).addPod(pod);
  if (assumed) assumedPods_.insert(uid);
  pods_.insert_or_assign(uid, PodState{.info = std::move(pod)});
}

void Cache::removePodLocked(const PodInfo& pod) {
  auto it = nodes_.find(pod.pod->spec.nodeName);
  if (it == nodes_.end()) return;
  if (!it->second->removePod(pod.pod->metadata.uid)) return;
  touch(it->second);
  dropIfEmpty(it->second);
}

Status Cache::assumePod(PodInfoPtr pod) {
  if (!pod || !pod->pod) return Status::error("assumePod: no pod");
  if (pod->pod->spec.nodeName.empty()) {
    return Status::error("pod " + describe(*pod->pod) + " has no node name, cannot be assumed");
  }
  std::lock_guard lock(mu_);
  if (pods_.contains(pod->pod->metadata.uid)) {
    return Status::error("pod " + describe(*pod->pod) + " is in the cache, so can't be assumed");
  }
  addPodLocked(std::move(pod), true);
  return {};
}

void Cache::finishBinding(std::string_view uid) {
  std::lock_guard lock(mu_);
  auto it = pods_.find(uid);
  if (it == pods_.end() || !assumedPods_.contains(uid)) return;
  it->second.bindingFinished = true;
  if (options_.assumedPodTTL.count() > 0) {
    it->second.deadline =
        options_.clock() + std::chrono::duration_cast<Clock::duration>(options_.assumedPodTTL);
  } else {
    it->second.deadline.reset();
  }
}

Status Cache::forgetPod(std::string_view uid) {
  std::lock_guard lock(mu_);
  auto it = pods_.find(uid);
  if (it == pods_.end()) {
    return Status::error("pod " + std::string(uid) + " is not in the cache, cannot be forgotten");
  }
  auto assumed = assumedPods_.find(uid);
  if (assumed == assumedPods_.end()) {
    return Status::error("pod " + describe(*it->second.info->pod) +
                         " wasn't assumed so cannot be forgotten");
  }
  removePodLocked(*it->second.info);
  assumedPods_.erase(assumed);
  pods_.erase(it);
  return {};
}

Status Cache::addPod(PodPtr pod) {
  if (!pod) return Status::error("addPod: no pod");
  if (pod->spec.nodeName.empty()) {
    return Status::error("pod " + describe(*pod) + " is not bound, cannot be added");
  }
  auto info = std::make_shared<const PodInfo>(std::move(pod), options_.features);
  std::lock_guard lock(mu_);
  const std::string& uid = info->pod->metadata.uid;
  auto it = pods_.find(uid);
  if (it != pods_.end()) {
    auto assumed = assumedPods_.find(uid);
    if (assumed == assumedPods_.end()) {
      return Status::error("pod " + describe(*info->pod) + " was already in added state");
    }
    removePodLocked(*it->second.info);
    assumedPods_.erase(assumed);
    pods_.erase(it);
  }
  addPodLocked(std::move(info), false);
  return {};
}

Status Cache::updatePod(const PodPtr& oldPod, PodPtr newPod) {
  if (!newPod) return Status::error("updatePod: no pod");
  if (newPod->spec.nodeName.empty()) {
    return Status::error("pod " + describe(*newPod) + " is not bound, cannot be updated");
  }
  const std::string uid = oldPod ? oldPod->metadata.uid : newPod->metadata.uid;
  auto info = std::make_shared<const PodInfo>(std::move(newPod), options_.features);
  std::lock_guard lock(mu_);
  auto it = pods_.find(uid);
  if (it == pods_.end()) {
    return Status::error("pod " + describe(*info->pod) +
                         " is not added to scheduler cache, so cannot be updated");
  }
  if (assumedPods_.contains(uid)) {
    return Status::error("assumed pod " + describe(*info->pod) + " should not be updated");
  }
  removePodLocked(*it->second.info);
  pods_.erase(it);
  addPodLocked(std::move(info), false);
  return {};
}

Status Cache::removePod(const api::Pod& pod) {
  std::lock_guard lock(mu_);
  auto it = pods_.find(pod.metadata.uid);
  if (it == pods_.end()) {
    return Status::error("pod " + describe(pod) +
                         " is not found in scheduler cache, so cannot be removed from it");
  }
  removePodLocked(*it->second.info);
  assumedPods_.erase(pod.metadata.uid);
  pods_.erase(it);
  return {};
}

bool Cache::isAssumed(std::string_view uid) const {
  std::lock_guard lock(mu_);
  return assumedPods_.contains(uid);
}

PodInfoPtr Cache::getPod(std::string_view uid) const {
  std::lock_guard lock(mu_);
  auto it = pods_.find(uid);
  return it == pods_.end() ? nullptr : it->second.info;
}

void Cache::imageChanged(const std::string& name, ImageState& state) {
  if (!options_.refreshImageNumNodes) return;
  if (state.changedAt != 0) imageChanges_.erase(state.changedAt);
  state.changedAt = nextGeneration();
  imageChanges_.emplace(state.changedAt, name);
}

void Cache::updateImages(const std::string& nodeName, const api::Node* oldNode,
                         const api::Node* newNode) {
  const auto before = imageNames(oldNode);
  const auto after = imageNames(newNode);
  for (const auto& [name, size] : before) {
    if (after.contains(name)) continue;
    auto it = images_.find(name);
    if (it == images_.end()) continue;
    it->second.nodes.erase(nodeName);
    if (it->second.nodes.empty()) {
      if (it->second.changedAt != 0) imageChanges_.erase(it->second.changedAt);
      images_.erase(it);
    } else {
      imageChanged(it->first, it->second);
    }
  }
  for (const auto& [name, size] : after) {
    if (before.contains(name)) continue;
    auto [it, inserted] = images_.try_emplace(std::string(name));
    if (inserted) it->second.size = size;
    it->second.nodes.insert(nodeName);
    imageChanged(it->first, it->second);
  }
}

void Cache::upsertNodeLocked(NodePtr node) {
  const std::string name = node->metadata.name;
  NodeInfo& info = nodeInfoFor(name);
  updateImages(name, info.node(), node.get());
  if (tree_.updateNode(*node)) treeGeneration_ = nextGeneration();
  info.setNode(std::move(node));
}

void Cache::addNode(NodePtr node) {
  if (!node) return;
  std::lock_guard lock(mu_);
  upsertNodeLocked(std::move(node));
}

void Cache::updateNode(const NodePtr& /*oldNode*/, NodePtr newNode) {
  if (!newNode) return;
  std::lock_guard lock(mu_);
  upsertNodeLocked(std::move(newNode));
}

Status Cache::removeNode(const api::Node& node) {
  std::lock_guard lock(mu_);
  auto it = nodes_.find(node.metadata.name);
  if (it == nodes_.end() || it->second->node() == nullptr) {
    return Status::error("node " + node.metadata.name + " is not found");
  }
  const NodeList::iterator pos = it->second;
  const NodePtr previous = pos->nodePtr();
  updateImages(pos->name(), previous.get(), nullptr);
  if (tree_.removeNode(pos->name())) treeGeneration_ = nextGeneration();
  pos->removeNode();
  touch(pos);
  dropIfEmpty(pos);
  return {};
}

size_t Cache::cleanupExpiredAssumedPods(Clock::time_point now) {
  std::lock_guard lock(mu_);
  size_t expired = 0;
  for (auto uid = assumedPods_.begin(); uid != assumedPods_.end();) {
    auto it = pods_.find(*uid);
    const PodState& state = it->second;
    if (!state.bindingFinished || !state.deadline || now <= *state.deadline) {
      ++uid;
      continue;
    }
    removePodLocked(*state.info);
    pods_.erase(it);
    uid = assumedPods_.erase(uid);
    ++expired;
  }
  return expired;
}

size_t Cache::cleanupExpiredAssumedPods() { return cleanupExpiredAssumedPods(options_.clock()); }

void Cache::cleanupLoop(const std::stop_token& stop, std::chrono::milliseconds period) {
  while (!stop.stop_requested()) {
    cleanupExpiredAssumedPods();
    std::unique_lock lock(cleanupMu_);
    cleanupCv_.wait_for(lock, stop, period, [] { return false; });
  }
}

void Cache::startCleanup(std::chrono::milliseconds period) {
  stopCleanup();
  cleanupThread_ = std::jthread([this, period](const std::stop_token& stop) {
    pthread_setname_np(pthread_self(), "cache-cleanup");
    cleanupLoop(stop, period);
  });
}

void Cache::stopCleanup() {
  if (!cleanupThread_.joinable()) return;
  cleanupThread_.request_stop();
  cleanupThread_.join();
}

std::shared_ptr<const NodeInfo> Cache::nodeInfo(std::string_view name) const {
  std::lock_guard lock(mu_);
  auto it = nodes_.find(name);
  if (it == nodes_.end() || it->second->node() == nullptr) return nullptr;
  // One event asks about one node for every pending pod: copy it once.
  if (lastCopy_ == nullptr || lastCopy_->name() != name ||
      lastCopy_->generation() != it->second->generation()) {
    lastCopy_ = std::make_shared<const NodeInfo>(*it->second);
  }
  return lastCopy_;
}

std::shared_ptr<const NodeInfo> Cache::copyForSnapshot(const NodeInfo& info) const {
  auto copy = std::make_shared<NodeInfo>(info);
  for (const auto& [name, summary] : info.imageStates()) {
    if (auto it = images_.find(name); it != images_.end()) {
      copy->setImageNumNodes(name, static_cast<int32_t>(it->second.nodes.size()));
    }
  }
  return copy;
}

size_t Cache::updateSnapshot(Snapshot& snapshot) {
  std::lock_guard lock(mu_);
  const int64_t since = snapshot.generation_;
  size_t copies = 0;
  bool rebuildAll = snapshot.treeGeneration_ != treeGeneration_;
  bool rebuildAffinity = false;
  bool rebuildPVCs = false;
  auto samePVCKeys = [](const NodeInfo& a, const NodeInfo& b) {
    const auto& x = a.pvcRefCounts();
    const auto& y = b.pvcRefCounts();
    return x.size() == y.size() &&
           std::equal(x.begin(), x.end(), y.begin(),
                      [](const auto& l, const auto& r) { return l.first == r.first; });
  };
  auto copyIn = [&](const NodeInfo& info) {
    auto copy = copyForSnapshot(info);
    if (const NodeInfo* old = snapshot.get(info.name()); old == nullptr) {
      rebuildAll = true;
    } else {
      rebuildAffinity |= old->podsWithAffinity().empty() != copy->podsWithAffinity().empty();
      rebuildAffinity |= old->podsWithRequiredAntiAffinity().empty() !=
                         copy->podsWithRequiredAntiAffinity().empty();
      rebuildPVCs |= !samePVCKeys(*old, *copy);
    }
    snapshot.put(std::move(copy));
    ++copies;
  };

  for (const NodeInfo& info : nodeList_) {
    if (info.generation() <= since) break;
    if (info.node() != nullptr) copyIn(info);
  }
  int64_t generation = std::max(since, nodeList_.empty() ? 0 : nodeList_.front().generation());

  for (auto change = imageChanges_.upper_bound(since); change != imageChanges_.end(); ++change) {
    const std::string& image = change->second;
    const ImageState& state = images_.at(image);
    const auto numNodes = static_cast<int32_t>(state.nodes.size());
    for (const auto& nodeName : state.nodes) {
      const NodeInfo* existing = snapshot.get(nodeName);
      if (existing == nullptr) continue;
      auto summary = existing->imageStates().find(image);
      if (summary != existing->imageStates().end() && summary->second.numNodes == numNodes) {
        continue;
      }
      auto live = nodes_.find(nodeName);
      if (live != nodes_.end() && live->second->node() != nullptr) copyIn(*live->second);
    }
  }
  if (!imageChanges_.empty()) generation = std::max(generation, imageChanges_.rbegin()->first);
  snapshot.generation_ = generation;

  if (rebuildAll) {
    std::erase_if(snapshot.nodes_, [&](const auto& entry) { return !tree_.contains(entry.first); });
    const std::vector<std::string> order = tree_.list();
    snapshot.rebuildLists(&order);
    snapshot.treeGeneration_ = treeGeneration_;
  } else if (rebuildAffinity) {
    snapshot.rebuildLists(nullptr);
  }
  if (rebuildAll || rebuildPVCs) snapshot.rebuildUsedPVCs();
  snapshot.commitListChanges();
  return copies;
}

size_t Cache::nodeCount() const {
  std::lock_guard lock(mu_);
  return nodes_.size();
}

size_t Cache::podCount() const {
  std::lock_guard lock(mu_);
  return pods_.size();
}

size_t Cache::assumedPodCount() const {
  std::lock_guard lock(mu_);
  return assumedPods_.size();
}

}  // namespace ksched::cache
