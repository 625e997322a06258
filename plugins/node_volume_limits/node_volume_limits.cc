#include "plugins/node_volume_limits/node_volume_limits.h"

#include <openssl/evp.h>

#include <algorithm>
#include <unordered_map>
#include <utility>

#include <ksched/api/features.h>
#include <ksched/api/pod.h>
#include <ksched/api/storage.h>

#include "plugins/helper/random_prefix.h"

namespace ksched::plugins {
namespace {

constexpr std::string_view kCSIAttachLimitPrefix = "attachable-volumes-csi-";
constexpr std::string_view kAttachableVolumesPrefix = "attachable-volumes-";
constexpr size_t kResourceNameLengthLimit = 63;

using ClaimMap = std::unordered_map<std::string, NodeVolumeLimits::CSIVolume>;
using CSINodeMap = std::unordered_map<std::string, std::shared_ptr<const api::CSINode>>;

struct PreFilterState final : StateData {
  // The pod's CSI volumes: unique name -> limit key.
  std::map<std::string, std::string, std::less<>> newVolumes;
  // VolumeLimitScaling: the drivers of those volumes whose CSIDriver sets
  // preventPodSchedulingIfMissing, in name order.
  std::vector<std::string> requiredDrivers;
  // "<ns>/<claim>" of the pods in the snapshot -> their volume (shared between clones).
  std::shared_ptr<const ClaimMap> claims;
  // Claims of pods added by AddPod that the snapshot did not have.
  ClaimMap addedClaims;
  // Node name -> its CSINode (absent when the node has none).
  std::shared_ptr<const CSINodeMap> csiNodes;

  [[nodiscard]] std::unique_ptr<StateData> clone() const override {
    return std::make_unique<PreFilterState>(*this);
  }

  [[nodiscard]] const NodeVolumeLimits::CSIVolume* find(const std::string& key) const {
    if (claims) {
      if (auto it = claims->find(key); it != claims->end()) return &it->second;
    }
    auto it = addedClaims.find(key);
    return it == addedClaims.end() ? nullptr : &it->second;
  }
};

constexpr StateKey<PreFilterState> kPreFilterKey{NodeVolumeLimits::kPreFilterStateKey};

// A driver's limit that the pod's new volumes would exceed on a node: `attached` unique volumes
// there, `added` of the pod not attached yet, the node's `limit` (by the driver's limit key).
struct OverLimit {
  std::string_view key;
  int attached = 0;
  int added = 0;
  int64_t limit = 0;
};

// The limits the pod's volumes would exceed on the node; with `firstOnly`, the first one alone
// (Filter needs no more).
std::vector<OverLimit> overLimits(const PreFilterState* s, const NodeInfo& nodeInfo,
                                  bool firstOnly);

// VolumeLimitScaling: the first required driver the node's CSINode does not list (all of them
// when the node has no CSINode), or nullptr.
const std::string* missingDriver(const PreFilterState& s, const std::string& nodeName) {
  if (s.requiredDrivers.empty()) return nullptr;
  const api::CSINode* csiNode = nullptr;
  if (s.csiNodes) {
    if (auto it = s.csiNodes->find(nodeName); it != s.csiNodes->end()) csiNode = it->second.get();
  }
  for (const std::string& d : s.requiredDrivers) {
    if (csiNode == nullptr || csiNode->driver(d) == nullptr) return &d;
  }
  return nullptr;
}

bool usesClaims(const api::Pod& pod) {
  return std::any_of(pod.spec.volumes.begin(), pod.spec.volumes.end(),
                     [](const api::Volume& v) { return v.persistentVolumeClaim || v.ephemeral; });
}

// The claim name of a PVC-backed volume, or nullopt for other volumes.
std::optional<std::string> claimName(const api::Pod& pod, const api::Volume& v) {
  if (v.persistentVolumeClaim) return v.persistentVolumeClaim->claimName;
  if (v.ephemeral) return api::ephemeralVolumeClaimName(pod, v);
  return std::nullopt;
}

// Upstream ephemeral.VolumeIsForPod: the pod is the claim's controller.
bool controlledBy(const api::PersistentVolumeClaim& pvc, const api::Pod& pod) {
  return std::any_of(
      pvc.metadata.ownerReferences.begin(), pvc.metadata.ownerReferences.end(),
      [&](const api::OwnerReference& r) { return r.controller && r.uid == pod.metadata.uid; });
}

std::string sha1Hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), digest, &len, EVP_sha1(), nullptr) != 1) return {};
  static constexpr std::string_view kHex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 0xf]);
  }
  return out;
}

}  // namespace

NodeVolumeLimits::NodeVolumeLimits(const ClusterListers& listers, std::string unboundVolumePrefix,
                                   bool volumeLimitScaling)
    : listers_(listers),
      unboundVolumePrefix_(unboundVolumePrefix.empty() ? helper::randomString(32)
                                                       : std::move(unboundVolumePrefix)),
      volumeLimitScaling_(volumeLimitScaling) {}

std::string NodeVolumeLimits::csiAttachLimitKey(std::string_view driver) {
  if (kCSIAttachLimitPrefix.size() + driver.size() >= kResourceNameLengthLimit) {
    return std::string(kCSIAttachLimitPrefix) + std::string(driver.substr(0, 23)) +
           sha1Hex(driver).substr(0, 16);
  }
  return std::string(kCSIAttachLimitPrefix) + std::string(driver);
}

NodeVolumeLimits::CSIVolume NodeVolumeLimits::resolveClaim(
    const api::PersistentVolumeClaim& pvc) const {
  auto fromStorageClass = [&]() -> CSIVolume {
    // Not bound yet: count it under its class's provisioner with a placeholder handle.
    const std::string scName = api::persistentVolumeClaimClass(pvc);
    if (scName.empty()) return {};
    auto sc = listers_.getStorageClass(scName);
    if (sc == nullptr || sc->provisioner.empty()) return {};
    return {sc->provisioner + "/" + unboundVolumePrefix_ + "-" + pvc.metadata.namespace_ + "/" +
                pvc.metadata.name,
            csiAttachLimitKey(sc->provisioner), sc->provisioner};
  };
  if (pvc.spec.volumeName.empty()) return fromStorageClass();
  auto pv = listers_.getPersistentVolume(pvc.spec.volumeName);
  if (pv == nullptr) return fromStorageClass();
  if (!pv->spec.csi || pv->spec.csi->driver.empty() || pv->spec.csi->volumeHandle.empty()) {
    return {};
  }
  return {pv->spec.csi->driver + "/" + pv->spec.csi->volumeHandle,
          csiAttachLimitKey(pv->spec.csi->driver), pv->spec.csi->driver};
}

Status NodeVolumeLimits::preFilter(CycleState& state, const api::Pod& pod,
                                   const NodeInfoLister& nodes, PreFilterResult& /*result*/) {
  if (!usesClaims(pod)) return Status::skip();
  auto s = std::make_unique<PreFilterState>();
  const std::string& ns = pod.metadata.namespace_;
  for (const auto& v : pod.spec.volumes) {
    auto claim = claimName(pod, v);
    if (!claim) continue;
    if (claim->empty()) return Status::error("PersistentVolumeClaim had no name");
    auto pvc = listers_.getPersistentVolumeClaim(ns, *claim);
    if (pvc == nullptr) {
      return Status::unresolvable("looking up PVC " + ns + "/" + *claim +
                                  ": persistentvolumeclaim \"" + *claim + "\" not found");
    }
    if (v.ephemeral && !controlledBy(*pvc, pod)) {
      return Status::error("PVC " + ns + "/" + *claim + " was not created for pod " + ns + "/" +
                           pod.metadata.name + " (pod is not owner)");
    }
    CSIVolume vol = resolveClaim(*pvc);
    if (vol.uniqueName.empty()) continue;
    s->newVolumes.emplace(vol.uniqueName, vol.limitKey);
    if (volumeLimitScaling_ &&
        std::ranges::find(s->requiredDrivers, vol.driver) == s->requiredDrivers.end()) {
      auto driver = listers_.getCSIDriver(vol.driver);
      // No CSIDriver object: maybe not a CSI driver at all; allowed (upstream).
      if (driver && driver->spec.preventPodSchedulingIfMissing) {
        s->requiredDrivers.push_back(vol.driver);
      }
    }
  }
  std::ranges::sort(s->requiredDrivers);
  if (!s->newVolumes.empty()) {
    auto claims = std::make_shared<ClaimMap>();
    auto csiNodes = std::make_shared<CSINodeMap>();
    for (const NodeInfo* ni : nodes.list()) {
      if (auto csiNode = listers_.getCSINode(ni->name())) csiNodes->emplace(ni->name(), csiNode);
      for (const auto& existing : ni->pods()) {
        const api::Pod& p = *existing->pod;
        for (const auto& v : p.spec.volumes) {
          auto claim = claimName(p, v);
          if (!claim) continue;
          std::string key = p.metadata.namespace_ + "/" + *claim;
          if (claims->contains(key)) continue;
          auto pvc = listers_.getPersistentVolumeClaim(p.metadata.namespace_, *claim);
          CSIVolume vol;
          if (pvc != nullptr && (!v.ephemeral || controlledBy(*pvc, p))) vol = resolveClaim(*pvc);
          claims->emplace(std::move(key), std::move(vol));
        }
      }
    }
    s->claims = std::move(claims);
    s->csiNodes = std::move(csiNodes);
  }
  state.write(kPreFilterKey, std::move(s));
  return {};
}

Status NodeVolumeLimits::addPod(CycleState& state, const api::Pod& /*podToSchedule*/,
                                const PodInfo& podToAdd, const NodeInfo& /*nodeInfo*/) const {
  PreFilterState* s = state.mutableRead(kPreFilterKey);
  if (s == nullptr || s->newVolumes.empty()) return {};
  const api::Pod& p = *podToAdd.pod;
  for (const auto& v : p.spec.volumes) {
    auto claim = claimName(p, v);
    if (!claim) continue;
    std::string key = p.metadata.namespace_ + "/" + *claim;
    if (s->find(key) != nullptr) continue;
    auto pvc = listers_.getPersistentVolumeClaim(p.metadata.namespace_, *claim);
    CSIVolume vol;
    if (pvc != nullptr && (!v.ephemeral || controlledBy(*pvc, p))) vol = resolveClaim(*pvc);
    s->addedClaims.emplace(std::move(key), std::move(vol));
  }
  return {};
}

Status NodeVolumeLimits::removePod(CycleState& /*state*/, const api::Pod& /*podToSchedule*/,
                                   const PodInfo& /*podToRemove*/,
                                   const NodeInfo& /*nodeInfo*/) const {
  return {};
}

Status NodeVolumeLimits::filter(const CycleState& state, const api::Pod& pod,
                                const NodeInfo& nodeInfo) const {
  if (pod.spec.volumes.empty()) return {};
  const PreFilterState* s = state.read(kPreFilterKey);
  if (s == nullptr) {
    return Status::error("reading \"" + std::string(kPreFilterStateKey) +
                         "\" from cycleState: not found");
  }
  if (s->newVolumes.empty()) return {};
  if (const std::string* missing = missingDriver(*s, nodeInfo.name())) {
    return Status::unschedulable(*missing + " CSI driver is not installed on the node");
  }
  return overLimits(s, nodeInfo, true).empty()
             ? Status()
             : Status::unschedulable(std::string(kErrReasonMaxVolumeCountExceeded));
}

std::vector<std::string> NodeVolumeLimits::explainRejection(const CycleState& state,
                                                            const api::Pod& /*pod*/,
                                                            const NodeInfo& nodeInfo) const {
  std::vector<std::string> out;
  const PreFilterState* s = state.read(kPreFilterKey);
  if (s == nullptr) return out;
  if (const std::string* missing = missingDriver(*s, nodeInfo.name())) {
    out.push_back("the CSIDriver " + *missing +
                  " sets preventPodSchedulingIfMissing and the node's CSINode does not list it");
    return out;
  }
  for (const OverLimit& o : overLimits(s, nodeInfo, false)) {
    // The driver is the unique name's first part ("<driver>/<volumeHandle>").
    std::string driver(o.key);
    for (const auto& [unique, key] : s->newVolumes) {
      if (key == o.key) {
        driver = unique.substr(0, unique.find('/'));
        break;
      }
    }
    out.push_back(std::to_string(o.attached) + " volumes of driver " + driver +
                  " attached, the pod adds " + std::to_string(o.added) + ", limit " +
                  std::to_string(o.limit));
  }
  return out;
}

namespace {

std::vector<OverLimit> overLimits(const PreFilterState* s, const NodeInfo& nodeInfo,
                                  bool firstOnly) {
  std::vector<OverLimit> out;
  std::map<std::string, int64_t, std::less<>> limits;
  for (const auto& [name, value] : nodeInfo.allocatable().scalar) {
    if (name.starts_with(kAttachableVolumesPrefix)) limits[name] = value;
  }
  if (s->csiNodes) {
    if (auto it = s->csiNodes->find(nodeInfo.name()); it != s->csiNodes->end()) {
      for (const auto& d : it->second->spec.drivers) {
        if (d.allocatable && d.allocatable->count) {
          limits[NodeVolumeLimits::csiAttachLimitKey(d.name)] = *d.allocatable->count;
        }
      }
    }
  }
  if (limits.empty()) return out;

  std::map<std::string_view, std::string_view> attached;  // unique name -> limit key
  for (const auto& existing : nodeInfo.pods()) {
    const api::Pod& p = *existing->pod;
    for (const auto& v : p.spec.volumes) {
      auto claim = claimName(p, v);
      if (!claim) continue;
      const NodeVolumeLimits::CSIVolume* vol = s->find(p.metadata.namespace_ + "/" + *claim);
      if (vol != nullptr && !vol->uniqueName.empty()) attached[vol->uniqueName] = vol->limitKey;
    }
  }
  std::map<std::string_view, int> attachedCount;
  for (const auto& [unique, key] : attached) ++attachedCount[key];
  std::map<std::string_view, int> newCount;
  for (const auto& [unique, key] : s->newVolumes) {
    if (!attached.contains(unique)) ++newCount[key];
  }
  for (const auto& [key, count] : newCount) {
    auto limit = limits.find(key);
    if (limit == limits.end()) continue;
    if (attachedCount[key] + count > limit->second) {
      out.push_back({key, attachedCount[key], count, limit->second});
      if (firstOnly) break;
    }
  }
  return out;
}

}  // namespace

std::vector<ClusterEventWithHint> NodeVolumeLimits::eventsToRegister() const {
  return {
      {EventResource::kCSINode, kAdd},
      {EventResource::kCSINode, kUpdate, &NodeVolumeLimits::csiNodeUpdatedHint},
      {EventResource::kPod, kDelete, &NodeVolumeLimits::podDeletedHint},
      {EventResource::kPersistentVolumeClaim, kAdd, &NodeVolumeLimits::pvcAddedHint},
  };
}

QueueingHint NodeVolumeLimits::podDeletedHint(const api::Pod& /*pod*/, const EventObject& oldObj,
                                              const EventObject& /*newObj*/) {
  const api::Pod* deleted = as<api::Pod>(oldObj);
  if (deleted == nullptr) return QueueingHint::kQueue;
  if (deleted->spec.nodeName.empty()) return QueueingHint::kSkip;
  return usesClaims(*deleted) ? QueueingHint::kQueue : QueueingHint::kSkip;
}

QueueingHint NodeVolumeLimits::pvcAddedHint(const api::Pod& pod, const EventObject& /*oldObj*/,
                                            const EventObject& newObj) {
  const api::PersistentVolumeClaim* pvc = as<api::PersistentVolumeClaim>(newObj);
  if (pvc == nullptr) return QueueingHint::kQueue;
  if (pvc->metadata.namespace_ != pod.metadata.namespace_) return QueueingHint::kSkip;
  const bool used =
      std::any_of(pod.spec.volumes.begin(), pod.spec.volumes.end(),
                  [&](const auto& v) { return claimName(pod, v) == pvc->metadata.name; });
  return used ? QueueingHint::kQueue : QueueingHint::kSkip;
}

QueueingHint NodeVolumeLimits::csiNodeUpdatedHint(const api::Pod& /*pod*/,
                                                  const EventObject& oldObj,
                                                  const EventObject& newObj) {
  const api::CSINode* oldNode = as<api::CSINode>(oldObj);
  const api::CSINode* newNode = as<api::CSINode>(newObj);
  if (oldNode == nullptr || newNode == nullptr) return QueueingHint::kQueue;
  auto count = [](const api::CSINodeDriver* d) -> int64_t {
    return d != nullptr && d->allocatable && d->allocatable->count ? *d->allocatable->count : 0;
  };
  for (const api::CSINodeDriver& d : newNode->spec.drivers) {
    if (count(&d) > count(oldNode->driver(d.name))) return QueueingHint::kQueue;
  }
  return QueueingHint::kSkip;
}

PluginFactory nodeVolumeLimitsFactory() {
  return makePluginFactory<NodeVolumeLimits>([](Handle& handle) {
    return std::make_unique<NodeVolumeLimits>(
        handle.listers(), "", handle.features().enabled(features::Feature::kVolumeLimitScaling));
  });
}

}  // namespace ksched::plugins
