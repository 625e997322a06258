#include "plugins/volume_zone/volume_zone.h"

#include <algorithm>
#include <array>
#include <set>
#include <string>
#include <utility>

#include <ksched/api/pod.h>
#include <ksched/api/storage.h>

#include "plugins/helper/claim_hint.h"

namespace ksched::plugins {
namespace {

constexpr std::string_view kBetaZone = "failure-domain.beta.kubernetes.io/zone";
constexpr std::string_view kBetaRegion = "failure-domain.beta.kubernetes.io/region";
constexpr std::string_view kZone = "topology.kubernetes.io/zone";
constexpr std::string_view kRegion = "topology.kubernetes.io/region";
constexpr std::array<std::string_view, 4> kTopologyLabels = {kBetaZone, kBetaRegion, kZone,
                                                             kRegion};

std::string_view toGALabel(std::string_view key) {
  if (key == kBetaRegion) return kRegion;
  if (key == kBetaZone) return kZone;
  return key;
}

struct PVTopology {
  std::string pvName;
  std::string key;
  std::set<std::string, std::less<>> values;

  friend bool operator==(const PVTopology&, const PVTopology&) = default;
};

struct PreFilterState final : StateData {
  std::vector<PVTopology> topologies;

  [[nodiscard]] std::unique_ptr<StateData> clone() const override {
    return std::make_unique<PreFilterState>(*this);
  }
};

constexpr StateKey<PreFilterState> kPreFilterKey{VolumeZone::kPreFilterStateKey};

std::string_view trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\n\r\f\v");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t\n\r\f\v");
  return s.substr(b, e - b + 1);
}

// A "__"-separated label value as a set (upstream LabelZonesToSet); false when an element is
// empty.
bool labelZonesToSet(std::string_view value, std::set<std::string, std::less<>>& out) {
  out.clear();
  while (true) {
    const auto pos = value.find("__");
    const std::string_view part = trim(value.substr(0, pos));
    if (part.empty()) return false;
    out.emplace(part);
    if (pos == std::string_view::npos) return true;
    value.remove_prefix(pos + 2);
  }
}

// The PV's zone/region labels; malformed ones are ignored.
std::vector<PVTopology> pvTopologies(const api::PersistentVolume& pv) {
  std::vector<PVTopology> out;
  for (std::string_view key : kTopologyLabels) {
    auto it = pv.metadata.labels.find(key);
    if (it == pv.metadata.labels.end()) continue;
    PVTopology t{pv.metadata.name, std::string(key), {}};
    if (!labelZonesToSet(it->second, t.values)) continue;
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace

Status VolumeZone::preFilter(CycleState& state, const api::Pod& pod,
                             const NodeInfoLister& /*nodes*/, PreFilterResult& /*result*/) {
  auto s = std::make_unique<PreFilterState>();
  for (const auto& v : pod.spec.volumes) {
    if (!v.persistentVolumeClaim) continue;
    const std::string& claim = v.persistentVolumeClaim->claimName;
    if (claim.empty()) return Status::unresolvable("PersistentVolumeClaim had no name");
    auto pvc = listers_.getPersistentVolumeClaim(pod.metadata.namespace_, claim);
    if (pvc == nullptr) {
      return Status::unresolvable("persistentvolumeclaim \"" + claim + "\" not found");
    }
    const std::string& pvName = pvc->spec.volumeName;
    if (pvName.empty()) {
      const std::string scName = api::persistentVolumeClaimClass(*pvc);
      if (scName.empty()) {
        return Status::unresolvable("PersistentVolumeClaim had no pv name and storageClass name");
      }
      auto sc = listers_.getStorageClass(scName);
      if (sc == nullptr) {
        return Status::unresolvable("storageclass.storage.k8s.io \"" + scName + "\" not found");
      }
      if (sc->volumeBindingMode == api::kVolumeBindingWaitForFirstConsumer) continue;
      return Status::unresolvable("PersistentVolume had no name");
    }
    auto pv = listers_.getPersistentVolume(pvName);
    if (pv == nullptr) return Status::unresolvable("persistentvolume \"" + pvName + "\" not found");
    for (PVTopology& t : pvTopologies(*pv)) s->topologies.push_back(std::move(t));
  }
  if (s->topologies.empty()) return Status::skip();
  state.write(kPreFilterKey, std::move(s));
  return {};
}

Status VolumeZone::filter(const CycleState& state, const api::Pod& pod,
                          const NodeInfo& nodeInfo) const {
  if (pod.spec.volumes.empty()) return {};
  const PreFilterState* s = state.read(kPreFilterKey);
  if (s == nullptr) {
    return Status::error("reading \"" + std::string(kPreFilterStateKey) +
                         "\" from cycleState: not found");
  }
  const api::Node* node = nodeInfo.node();
  if (node == nullptr) return Status::error("node not found");
  const auto& labels = node->metadata.labels;
  bool constrained = false;
  for (std::string_view key : kTopologyLabels) constrained |= labels.contains(key);
  // A node without zone labels (single-zone cluster) accepts any volume.
  if (!constrained) return {};
  for (const auto& t : s->topologies) {
    auto it = labels.find(t.key);
    if (it == labels.end()) it = labels.find(toGALabel(t.key));
    if (it == labels.end() || !t.values.contains(it->second)) {
      return Status::unresolvable(std::string(kErrReasonConflict));
    }
  }
  return {};
}

std::vector<std::string> VolumeZone::explainRejection(const CycleState& /*state*/,
                                                      const api::Pod& pod,
                                                      const NodeInfo& nodeInfo) const {
  std::vector<std::string> out;
  const api::Node* node = nodeInfo.node();
  if (node == nullptr) return out;
  // Zones before regions, each key with the GA key a beta one also matches.
  constexpr std::array<std::pair<std::string_view, std::string_view>, 4> kKeys{{
      {kZone, kZone},
      {kBetaZone, kZone},
      {kRegion, kRegion},
      {kBetaRegion, kRegion},
  }};
  const api::Labels& labels = node->metadata.labels;
  for (const auto& v : pod.spec.volumes) {
    if (!v.persistentVolumeClaim) continue;
    auto pvc = listers_.getPersistentVolumeClaim(pod.metadata.namespace_,
                                                 v.persistentVolumeClaim->claimName);
    if (pvc == nullptr || pvc->spec.volumeName.empty()) continue;
    auto pv = listers_.getPersistentVolume(pvc->spec.volumeName);
    if (pv == nullptr) continue;
    for (const auto& [key, ga] : kKeys) {
      auto want = pv->metadata.labels.find(std::string(key));
      if (want == pv->metadata.labels.end()) continue;
      auto have = labels.find(std::string(key));
      if (have == labels.end()) have = labels.find(std::string(ga));
      // A "__"-separated value is a set of zones.
      const std::string set = "__" + want->second + "__";
      if (have != labels.end() && set.find("__" + have->second + "__") != std::string::npos) {
        continue;
      }
      out.push_back("volume " + v.name + ": PV " + pv->metadata.name + " is in " +
                    std::string(key) + "=" + want->second + ", " +
                    (have == labels.end() ? "node has no " + std::string(ga) + " label"
                                          : "node has " + have->first + "=" + have->second));
    }
  }
  return out;
}

std::vector<ClusterEventWithHint> VolumeZone::eventsToRegister() const {
  return {
      {EventResource::kStorageClass, kAdd, &VolumeZone::storageClassAddedHint},
      {EventResource::kNode, kAdd | kUpdateNodeLabel},
      {EventResource::kPersistentVolumeClaim, kAdd | kUpdate, &VolumeZone::pvcChangeHint},
      {EventResource::kPersistentVolume, kAdd | kUpdate, &VolumeZone::pvChangeHint},
  };
}

QueueingHint VolumeZone::storageClassAddedHint(const api::Pod& /*pod*/,
                                               const EventObject& /*oldObj*/,
                                               const EventObject& newObj) {
  const api::StorageClass* sc = as<api::StorageClass>(newObj);
  if (sc == nullptr) return QueueingHint::kQueue;
  return sc->volumeBindingMode == api::kVolumeBindingWaitForFirstConsumer ? QueueingHint::kQueue
                                                                          : QueueingHint::kSkip;
}

QueueingHint VolumeZone::pvcChangeHint(const api::Pod& pod, const EventObject& /*oldObj*/,
                                       const EventObject& newObj) {
  return queueIfClaimOfPod(pod, newObj);
}

QueueingHint VolumeZone::pvChangeHint(const api::Pod& /*pod*/, const EventObject& oldObj,
                                      const EventObject& newObj) {
  const api::PersistentVolume* oldPV = as<api::PersistentVolume>(oldObj);
  const api::PersistentVolume* newPV = as<api::PersistentVolume>(newObj);
  if (oldPV == nullptr || newPV == nullptr) return QueueingHint::kQueue;
  return pvTopologies(*oldPV) != pvTopologies(*newPV) ? QueueingHint::kQueue : QueueingHint::kSkip;
}

PluginFactory volumeZoneFactory() {
  return makePluginFactory<VolumeZone>(
      [](Handle& handle) { return std::make_unique<VolumeZone>(handle.listers()); });
}

}  // namespace ksched::plugins
