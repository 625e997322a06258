#include "plugins/volume_restrictions/volume_restrictions.h"

#include <algorithm>
#include <set>
#include <string>
#include <utility>

#include <ksched/api/pod.h>
#include <ksched/api/storage.h>
#include <ksched/helper/volume_conflict.h>

#include "plugins/helper/claim_hint.h"

namespace ksched::plugins {
namespace {

struct PreFilterState final : StateData {
  // Names of the pod's PVCs with access mode ReadWriteOncePod.
  std::set<std::string, std::less<>> readWriteOncePodPVCs;
  // References to those PVCs by pods already scheduled (or added by AddPod).
  int conflictingPVCRefCount = 0;

  [[nodiscard]] std::unique_ptr<StateData> clone() const override {
    return std::make_unique<PreFilterState>(*this);
  }

  [[nodiscard]] int refsOf(const api::Pod& pod) const {
    int n = 0;
    for (const auto& v : pod.spec.volumes) {
      if (v.persistentVolumeClaim &&
          readWriteOncePodPVCs.contains(v.persistentVolumeClaim->claimName)) {
        ++n;
      }
    }
    return n;
  }
};

constexpr StateKey<PreFilterState> kPreFilterKey{VolumeRestrictions::kPreFilterStateKey};

bool needsRestrictionsCheck(const api::Volume& v) {
  return v.gcePersistentDisk || v.awsElasticBlockStore || v.rbd || v.iscsi;
}

// "GCE PD pd-1": a disk volume as its details name it; "" for other volumes.
std::string volumeSource(const api::Volume& v) {
  if (v.gcePersistentDisk) return "GCE PD " + v.gcePersistentDisk->pdName;
  if (v.awsElasticBlockStore) return "AWS EBS " + v.awsElasticBlockStore->volumeID;
  if (v.rbd) return "RBD " + v.rbd->pool + "/" + v.rbd->image;
  if (v.iscsi) return "iSCSI " + v.iscsi->iqn;
  return "";
}

// The "<namespace>/<claim>" of a volume's PVC (generic ephemeral volumes too), or "".
std::string claimKey(const api::Pod& pod, const api::Volume& v) {
  if (v.persistentVolumeClaim) {
    return pod.metadata.namespace_ + "/" + v.persistentVolumeClaim->claimName;
  }
  if (v.ephemeral) return pod.metadata.namespace_ + "/" + api::ephemeralVolumeClaimName(pod, v);
  return "";
}

Status stateNotFound() {
  return Status::error("cannot read \"" + std::string(VolumeRestrictions::kPreFilterStateKey) +
                       "\" from cycleState");
}

}  // namespace

bool VolumeRestrictions::isVolumeConflict(const api::Volume& volume, const api::Pod& existing) {
  return helper::volumeConflicts(volume, existing);
}

Status VolumeRestrictions::preFilter(CycleState& state, const api::Pod& pod,
                                     const NodeInfoLister& nodes, PreFilterResult& /*result*/) {
  const bool needsCheck =
      std::any_of(pod.spec.volumes.begin(), pod.spec.volumes.end(), needsRestrictionsCheck);
  auto s = std::make_unique<PreFilterState>();
  for (const auto& v : pod.spec.volumes) {
    if (!v.persistentVolumeClaim) continue;
    const std::string& claim = v.persistentVolumeClaim->claimName;
    auto pvc = listers_.getPersistentVolumeClaim(pod.metadata.namespace_, claim);
    if (pvc == nullptr) {
      return Status::unresolvable("persistentvolumeclaim \"" + claim + "\" not found");
    }
    const auto& modes = pvc->spec.accessModes;
    if (std::find(modes.begin(), modes.end(), api::kReadWriteOncePod) == modes.end()) continue;
    s->readWriteOncePodPVCs.insert(pvc->metadata.name);
  }
  for (const auto& claim : s->readWriteOncePodPVCs) {
    if (nodes.isPVCUsedByPods(pod.metadata.namespace_ + "/" + claim)) ++s->conflictingPVCRefCount;
  }
  if (!needsCheck && s->conflictingPVCRefCount == 0) return Status::skip();
  state.write(kPreFilterKey, std::move(s));
  return {};
}

Status VolumeRestrictions::addPod(CycleState& state, const api::Pod& /*podToSchedule*/,
                                  const PodInfo& podToAdd, const NodeInfo& /*nodeInfo*/) const {
  PreFilterState* s = state.mutableRead(kPreFilterKey);
  if (s == nullptr) return stateNotFound();
  s->conflictingPVCRefCount += s->refsOf(*podToAdd.pod);
  return {};
}

Status VolumeRestrictions::removePod(CycleState& state, const api::Pod& /*podToSchedule*/,
                                     const PodInfo& podToRemove,
                                     const NodeInfo& /*nodeInfo*/) const {
  PreFilterState* s = state.mutableRead(kPreFilterKey);
  if (s == nullptr) return stateNotFound();
  s->conflictingPVCRefCount -= s->refsOf(*podToRemove.pod);
  return {};
}

Status VolumeRestrictions::filter(const CycleState& state, const api::Pod& pod,
                                  const NodeInfo& nodeInfo) const {
  for (const auto& v : pod.spec.volumes) {
    if (!needsRestrictionsCheck(v)) continue;
    for (const auto& existing : nodeInfo.pods()) {
      if (isVolumeConflict(v, *existing->pod)) {
        return Status::unschedulable(std::string(kErrReasonDiskConflict));
      }
    }
  }
  const PreFilterState* s = state.read(kPreFilterKey);
  if (s == nullptr) return stateNotFound();
  if (s->conflictingPVCRefCount > 0) {
    return Status::unschedulable(std::string(kErrReasonReadWriteOncePodConflict));
  }
  return {};
}

std::vector<std::string> VolumeRestrictions::explainRejection(const CycleState& state,
                                                              const api::Pod& pod,
                                                              const NodeInfo& nodeInfo) const {
  std::vector<std::string> out;
  for (const auto& v : pod.spec.volumes) {
    const std::string source = volumeSource(v);
    if (source.empty()) continue;
    for (const auto& existing : nodeInfo.pods()) {
      if (!isVolumeConflict(v, *existing->pod)) continue;
      out.push_back("volume " + v.name + " (" + source + ") is in use by pod " +
                    existing->pod->metadata.key());
      break;
    }
  }
  // ReadWriteOncePod claims used anywhere: PreFilter's set of them, else the claims' access
  // modes from the listers.
  if (handle_ == nullptr) return out;
  const NodeInfoLister& snapshot = handle_->snapshot();
  const PreFilterState* s = state.read(kPreFilterKey);
  for (const auto& v : pod.spec.volumes) {
    if (!v.persistentVolumeClaim) continue;
    const std::string& claim = v.persistentVolumeClaim->claimName;
    const std::string key = claimKey(pod, v);
    if (!snapshot.isPVCUsedByPods(key)) continue;
    if (s != nullptr) {
      if (!s->readWriteOncePodPVCs.contains(claim)) continue;
    } else {
      auto pvc = listers_.getPersistentVolumeClaim(pod.metadata.namespace_, claim);
      if (pvc == nullptr) continue;
      const auto& modes = pvc->spec.accessModes;
      if (std::find(modes.begin(), modes.end(), api::kReadWriteOncePod) == modes.end()) continue;
    }
    std::string text = "PVC " + key + " (ReadWriteOncePod) is in use";
    for (const NodeInfo* ni : snapshot.list()) {
      if (!ni->pvcRefCounts().contains(key)) continue;
      for (const auto& p : ni->pods()) {
        const auto& vs = p->pod->spec.volumes;
        if (std::any_of(vs.begin(), vs.end(),
                        [&](const api::Volume& w) { return claimKey(*p->pod, w) == key; })) {
          text += " by pod " + p->pod->metadata.key() + " on node " + ni->name();
          break;
        }
      }
      break;
    }
    out.push_back(std::move(text));
  }
  return out;
}

std::vector<ClusterEventWithHint> VolumeRestrictions::eventsToRegister() const {
  return {
      {EventResource::kPod, kDelete, &VolumeRestrictions::podDeletedHint},
      {EventResource::kNode, kAdd},
      {EventResource::kPersistentVolumeClaim, kAdd, &VolumeRestrictions::pvcAddedHint},
  };
}

QueueingHint VolumeRestrictions::podDeletedHint(const api::Pod& pod, const EventObject& oldObj,
                                                const EventObject& /*newObj*/) {
  const api::Pod* deleted = as<api::Pod>(oldObj);
  if (deleted == nullptr) return QueueingHint::kQueue;
  if (deleted->metadata.namespace_ != pod.metadata.namespace_) return QueueingHint::kSkip;
  for (const auto& v : pod.spec.volumes) {
    if (needsRestrictionsCheck(v) && isVolumeConflict(v, *deleted)) return QueueingHint::kQueue;
  }
  // A shared claim may be a ReadWriteOncePod one.
  for (const auto& v : pod.spec.volumes) {
    if (!v.persistentVolumeClaim) continue;
    for (const auto& d : deleted->spec.volumes) {
      if (d.persistentVolumeClaim &&
          d.persistentVolumeClaim->claimName == v.persistentVolumeClaim->claimName) {
        return QueueingHint::kQueue;
      }
    }
  }
  return QueueingHint::kSkip;
}

QueueingHint VolumeRestrictions::pvcAddedHint(const api::Pod& pod, const EventObject& /*oldObj*/,
                                              const EventObject& newObj) {
  return queueIfClaimOfPod(pod, newObj);
}

PluginFactory volumeRestrictionsFactory() {
  return makePluginFactory<VolumeRestrictions>([](Handle& handle) {
    return std::make_unique<VolumeRestrictions>(handle.listers(), &handle);
  });
}

bool VolumeRestrictions::signPod(const api::Pod& pod) const {
  return std::none_of(pod.spec.volumes.begin(), pod.spec.volumes.end(),
                      [](const api::Volume& v) { return v.persistentVolumeClaim || v.ephemeral; });
}

}  // namespace ksched::plugins
