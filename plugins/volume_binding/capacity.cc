// VolumeBinding's storage capacity: the CSIStorageCapacity check of dynamic provisioning
// (upstream hasEnoughCapacity), StorageCapacityScoring's PreScore and Score, and the
// queueing hints of CSIDriver and CSIStorageCapacity events.
#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <tuple>

#include <ksched/api/pod.h>
#include <ksched/api/storage.h>

#include "plugins/volume_binding/volume_binding.h"

namespace ksched::plugins {

using volume_binding::PodVolumes;
using volume_binding::PVCPtr;
using volume_binding::State;

namespace {

// Upstream volumeLimit: the largest volume the object allows, maximumVolumeSize when set.
const api::Quantity* volumeLimit(const api::CSIStorageCapacity& c) {
  if (c.maximumVolumeSize) return &*c.maximumVolumeSize;
  return c.capacity ? &*c.capacity : nullptr;
}

int64_t storageRequest(const api::PersistentVolumeClaim& pvc) {
  return volume_binding::requestedStorage(pvc).value();
}

}  // namespace

void VolumeBinding::findCapacityCandidates(State::Data& s) const {
  const ClusterListers& listers = handle_.listers();
  ObjectList<api::CSIStorageCapacity> all;  // listed once, for the first claim that needs it
  bool listed = false;
  for (const PVCPtr& claim : s.claimsToBind) {
    if (!claim->spec.resources.requests.contains("storage")) continue;
    const std::string cls = api::persistentVolumeClaimClass(*claim);
    auto sc = cls.empty() ? nullptr : listers.getStorageClass(cls);
    if (!sc) continue;
    auto driver = listers.getCSIDriver(sc->provisioner);
    // Not a CSI driver, or one that does not report capacity: nothing to check.
    if (!driver || !driver->spec.storageCapacity) continue;
    if (!listed) {
      all = listers.csiStorageCapacities();
      // Upstream takes the first match in its informer's order; by namespace and name here,
      // so that the choice (and the score) does not depend on the order objects arrived in.
      std::ranges::sort(all, [](const auto& a, const auto& b) {
        return std::tie(a->metadata.namespace_, a->metadata.name) <
               std::tie(b->metadata.namespace_, b->metadata.name);
      });
      listed = true;
    }
    const int64_t size = storageRequest(*claim);
    auto& candidates = s.capacityCandidates[claim.get()];
    for (const auto& c : all) {
      if (c->storageClassName != cls || !c->nodeTopology) continue;
      const api::Quantity* limit = volumeLimit(*c);
      if (limit != nullptr && limit->value() >= size) candidates.push_back(c);
    }
  }
}

std::shared_ptr<const api::CSIStorageCapacity> VolumeBinding::findCapacity(
    const State::Data& s, const api::PersistentVolumeClaim& claim, const api::Node& node,
    bool& sufficient) {
  sufficient = true;
  auto it = s.capacityCandidates.find(&claim);
  if (it == s.capacityCandidates.end()) return nullptr;
  for (const auto& c : it->second) {
    if (c->topology.matches(node.metadata.labels)) return c;
  }
  sufficient = false;
  return nullptr;
}

Status VolumeBinding::preScore(CycleState& state, const api::Pod& /*pod*/,
                               const std::vector<const NodeInfo*>& /*nodes*/) {
  if (!scorer_) return Status::skip();
  const State* st = state.read(volume_binding::kStateKey);
  if (st == nullptr) return Status::error("reading \"VolumeBinding\" from cycleState: not found");
  // All claims bound: nothing is chosen per node, every score would be 0.
  if (st->data().skip || st->data().claimsToBind.empty()) return Status::skip();
  return {};
}

Status VolumeBinding::score(const CycleState& state, const api::Pod& /*pod*/,
                            const NodeInfo& nodeInfo, int64_t& score) const {
  score = 0;
  if (!scorer_) return {};
  const State* st = state.read(volume_binding::kStateKey);
  if (st == nullptr) return Status::error("reading \"VolumeBinding\" from cycleState: not found");
  State::Data& s = st->data();
  std::shared_ptr<PodVolumes> pv;
  {
    std::lock_guard lock(s.mu);
    auto it = s.podVolumesByNode.find(nodeInfo.name());
    if (it == s.podVolumesByNode.end()) return {};
    pv = it->second;
  }
  struct Resource {
    int64_t requested = 0;
    int64_t capacity = 0;
  };
  std::map<std::string, Resource, std::less<>> byClass;
  if (!pv->staticBindings.empty()) {
    // Only the static bindings count when there are any (upstream).
    for (const PodVolumes::StaticBinding& b : pv->staticBindings) {
      Resource& r = byClass[b.pv->spec.storageClassName];
      r.requested += storageRequest(*b.pvc);
      if (auto it = b.pv->spec.capacity.find("storage"); it != b.pv->spec.capacity.end()) {
        r.capacity += it->second.value();
      }
    }
  } else {
    for (size_t i = 0; i < pv->dynamicProvisions.size() && i < pv->provisionCapacities.size();
         ++i) {
      const auto& cap = pv->provisionCapacities[i];
      if (!cap) continue;
      Resource& r = byClass[api::persistentVolumeClaimClass(*pv->dynamicProvisions[i])];
      // The class's capacity on the node, once: claims of one class share it. An object with
      // only maximumVolumeSize has no known capacity (0: scored as full; upstream would crash).
      r.capacity = cap->capacity ? cap->capacity->value() : 0;
      r.requested += storageRequest(*pv->dynamicProvisions[i]);
    }
  }
  if (byClass.empty()) return {};
  int64_t sum = 0;
  for (const auto& [cls, r] : byClass) {
    constexpr int64_t kMaxUtilization = 100;
    const int64_t utilization = r.capacity == 0 || r.requested > r.capacity
                                    ? kMaxUtilization
                                    : r.requested * kMaxUtilization / r.capacity;
    sum += (*scorer_)(utilization);
  }
  score = std::llround(static_cast<double>(sum) / static_cast<double>(byClass.size()));
  return {};
}

QueueingHint VolumeBinding::csiDriverChangeHint(const api::Pod& pod, const EventObject& oldObj,
                                                const EventObject& newObj) {
  const api::CSIDriver* oldDriver = as<api::CSIDriver>(oldObj);
  const api::CSIDriver* newDriver = as<api::CSIDriver>(newObj);
  if (oldDriver == nullptr || newDriver == nullptr) return QueueingHint::kQueue;
  for (const api::Volume& v : pod.spec.volumes) {
    if (!v.csi || v.csi->driver != newDriver->metadata.name) continue;
    if (oldDriver->spec.storageCapacity && !newDriver->spec.storageCapacity) {
      return QueueingHint::kQueue;
    }
  }
  return QueueingHint::kSkip;
}

QueueingHint VolumeBinding::capacityChangeHint(const api::Pod& /*pod*/, const EventObject& oldObj,
                                               const EventObject& newObj) {
  const api::CSIStorageCapacity* oldCap = as<api::CSIStorageCapacity>(oldObj);
  const api::CSIStorageCapacity* newCap = as<api::CSIStorageCapacity>(newObj);
  if (oldCap == nullptr || newCap == nullptr) return QueueingHint::kQueue;
  const api::Quantity* oldLimit = volumeLimit(*oldCap);
  const api::Quantity* newLimit = volumeLimit(*newCap);
  return newLimit != nullptr && (oldLimit == nullptr || newLimit->value() > oldLimit->value())
             ? QueueingHint::kQueue
             : QueueingHint::kSkip;
}

}  // namespace ksched::plugins
