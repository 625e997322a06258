#include <algorithm>
#include <atomic>
#include <utility>

#include <ksched/api/pod_resources.h>
#include <ksched/node_info.h>

namespace ksched {
namespace {

constexpr std::string_view kBindAllHostIP = "0.0.0.0";

std::atomic<int64_t> generationCounter{0};

std::pair<std::string_view, std::string_view> sanitize(std::string_view ip,
                                                       std::string_view protocol) {
  if (ip.empty()) ip = kBindAllHostIP;
  if (protocol.empty()) protocol = api::kProtocolTCP;
  return {ip, protocol};
}

bool hasAnyTerm(const std::optional<api::PodAffinity>& a) {
  return a && (!a->requiredDuringSchedulingIgnoredDuringExecution.empty() ||
               !a->preferredDuringSchedulingIgnoredDuringExecution.empty());
}

// Removes the entry with that uid by swapping in the last one (order is not kept).
bool eraseByUid(std::vector<PodInfoPtr>& pods, std::string_view uid) {
  for (size_t i = 0; i < pods.size(); ++i) {
    if (pods[i]->pod->metadata.uid == uid) {
      if (i + 1 != pods.size()) pods[i] = std::move(pods.back());
      pods.pop_back();
      return true;
    }
  }
  return false;
}

}  // namespace

int64_t nextGeneration() noexcept {
  return generationCounter.fetch_add(1, std::memory_order_relaxed) + 1;
}

PodInfo::PodInfo(PodPtr p, const features::Gates& gates) : pod(std::move(p)) {
  if (!pod) return;
  api::NodePodRequests amounts = api::nodePodRequests(*pod, gates);
  requests = std::move(amounts.requests);
  nonZeroMilliCPU = amounts.nonZeroMilliCPU;
  nonZeroMemory = amounts.nonZeroMemory;
  if (const auto& affinity = pod->spec.affinity) {
    hasAffinity = hasAnyTerm(affinity->podAffinity) || hasAnyTerm(affinity->podAntiAffinity);
    hasRequiredAntiAffinity =
        affinity->podAntiAffinity &&
        !affinity->podAntiAffinity->requiredDuringSchedulingIgnoredDuringExecution.empty();
  }
}

void HostPortInfo::add(std::string_view ip, std::string_view protocol, int32_t port) {
  if (port <= 0) return;
  auto [i, p] = sanitize(ip, protocol);
  auto it = ports_.find(i);
  if (it == ports_.end()) it = ports_.emplace(std::string(i), decltype(it->second){}).first;
  ++it->second[{std::string(p), port}];
}

void HostPortInfo::remove(std::string_view ip, std::string_view protocol, int32_t port) {
  if (port <= 0) return;
  auto [i, p] = sanitize(ip, protocol);
  auto it = ports_.find(i);
  if (it == ports_.end()) return;
  auto pit = it->second.find({std::string(p), port});
  if (pit == it->second.end()) return;
  if (--pit->second <= 0) it->second.erase(pit);
  if (it->second.empty()) ports_.erase(it);
}

bool HostPortInfo::conflicts(std::string_view ip, std::string_view protocol, int32_t port) const {
  if (port <= 0) return false;
  auto [i, p] = sanitize(ip, protocol);
  const std::pair<std::string, int32_t> key{std::string(p), port};
  if (i == kBindAllHostIP) {
    return std::any_of(ports_.begin(), ports_.end(),
                       [&](const auto& entry) { return entry.second.contains(key); });
  }
  for (std::string_view candidate : {kBindAllHostIP, i}) {
    auto it = ports_.find(candidate);
    if (it != ports_.end() && it->second.contains(key)) return true;
  }
  return false;
}

size_t HostPortInfo::size() const {
  size_t n = 0;
  for (const auto& [ip, entries] : ports_) n += entries.size();
  return n;
}

void NodeInfo::bump() { generation_ = nextGeneration(); }

void NodeInfo::setNode(NodePtr node) {
  if (!node) {
    removeNode();
    return;
  }
  node_ = std::move(node);
  name_ = node_->metadata.name;
  allocatable_ = api::Resource::fromList(node_->status.allocatable);
  const auto& capacity = node_->status.capacity;
  auto cpu = capacity.find("cpu");
  capacityMilliCPU_ = cpu == capacity.end() ? 0 : cpu->second.milliValue();
  auto memory = capacity.find("memory");
  capacityMemory_ = memory == capacity.end() ? 0 : memory->second.value();
  declaredFeatures_ = plugins::helper::declaredFeatures(*node_);
  std::map<std::string, ImageStateSummary, std::less<>> states;
  for (const auto& image : node_->status.images) {
    for (const auto& imageName : image.names) {
      if (states.contains(imageName)) continue;
      ImageStateSummary summary{.size = image.sizeBytes};
      if (auto old = imageStates_.find(imageName); old != imageStates_.end()) {
        summary.numNodes = old->second.numNodes;
      }
      states.emplace(imageName, summary);
    }
  }
  imageStates_ = std::move(states);
  bump();
}

void NodeInfo::removeNode() {
  node_.reset();
  allocatable_ = {};
  capacityMilliCPU_ = capacityMemory_ = 0;
  declaredFeatures_ = {};
  imageStates_.clear();
  bump();
}

namespace {

// Calls fn(port) for every host port the pod holds: its containers' and its sidecars' (init
// containers with restartPolicy Always), as upstream's NodeInfo and NodePorts count them.
template <typename Fn>
void forEachHeldPort(const api::Pod& pod, Fn fn) {
  for (const auto& container : pod.spec.containers) {
    for (const auto& port : container.ports) fn(port);
  }
  for (const auto& container : pod.spec.initContainers) {
    if (!container.isRestartable()) continue;
    for (const auto& port : container.ports) fn(port);
  }
}

// Calls fn("<namespace>/<claimName>") for every PVC the pod's volumes reference.
template <typename Fn>
void forEachPVCKey(const api::Pod& pod, Fn fn) {
  for (const auto& volume : pod.spec.volumes) {
    if (volume.persistentVolumeClaim) {
      fn(pod.metadata.namespace_ + "/" + volume.persistentVolumeClaim->claimName);
    } else if (volume.ephemeral) {
      fn(pod.metadata.namespace_ + "/" + api::ephemeralVolumeClaimName(pod, volume));
    }
  }
}

}  // namespace

void NodeInfo::addPod(PodInfoPtr pod) {
  requested_.add(pod->requests);
  nonZeroRequested_.milliCPU += pod->nonZeroMilliCPU;
  nonZeroRequested_.memory += pod->nonZeroMemory;
  forEachHeldPort(*pod->pod, [&](const api::ContainerPort& port) {
    usedPorts_.add(port.hostIP, port.protocol, port.hostPort);
  });
  forEachPVCKey(*pod->pod, [&](std::string key) { ++pvcRefCounts_[std::move(key)]; });
  if (pod->hasAffinity) podsWithAffinity_.push_back(pod);
  if (pod->hasRequiredAntiAffinity) podsWithRequiredAntiAffinity_.push_back(pod);
  pods_.push_back(std::move(pod));
  bump();
}

bool NodeInfo::removePod(std::string_view uid) {
  auto it = std::find_if(pods_.begin(), pods_.end(),
                         [&](const PodInfoPtr& p) { return p->pod->metadata.uid == uid; });
  if (it == pods_.end()) return false;
  const PodInfoPtr pod = *it;
  eraseByUid(pods_, uid);
  if (pod->hasAffinity) eraseByUid(podsWithAffinity_, uid);
  if (pod->hasRequiredAntiAffinity) eraseByUid(podsWithRequiredAntiAffinity_, uid);
  requested_.sub(pod->requests);
  nonZeroRequested_.milliCPU -= pod->nonZeroMilliCPU;
  nonZeroRequested_.memory -= pod->nonZeroMemory;
  forEachHeldPort(*pod->pod, [&](const api::ContainerPort& port) {
    usedPorts_.remove(port.hostIP, port.protocol, port.hostPort);
  });
  forEachPVCKey(*pod->pod, [&](const std::string& key) {
    auto it = pvcRefCounts_.find(key);
    if (it != pvcRefCounts_.end() && --it->second <= 0) pvcRefCounts_.erase(it);
  });
  bump();
  return true;
}

void NodeInfo::setImageStates(std::map<std::string, ImageStateSummary, std::less<>> states) {
  imageStates_ = std::move(states);
  bump();
}

void NodeInfo::setImageNumNodes(std::string_view image, int32_t numNodes) {
  if (auto it = imageStates_.find(image); it != imageStates_.end()) it->second.numNodes = numNodes;
}

const PodInfo* NodeInfo::findPod(std::string_view uid) const noexcept {
  for (const auto& p : pods_) {
    if (p->pod->metadata.uid == uid) return p.get();
  }
  return nullptr;
}

}  // namespace ksched
