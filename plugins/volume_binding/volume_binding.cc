#include "plugins/volume_binding/volume_binding.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <utility>

#include <ksched/api/features.h>
#include <ksched/api/node.h>
#include <ksched/api/pod.h>
#include <ksched/helper/args_json.h>
#include <ksched/helper/field_error.h>
#include <ksched/registry.h>

namespace ksched::plugins {

using volume_binding::PodVolumes;
using volume_binding::PVCPtr;
using volume_binding::PVPtr;
using volume_binding::State;

VolumeBindingArgs decodeVolumeBindingArgs(const nlohmann::json& j, const features::Gates& gates) {
  VolumeBindingArgs a;
  const bool scoring = gates.enabled(features::Feature::kStorageCapacityScoring);
  std::vector<helper::FieldError> errs;
  const nlohmann::json* shape = nullptr;
  if (!j.is_null()) {
    helper::expectObject(j, "",
                         {helper::kApiVersionKey, helper::kKindKey, "bindTimeoutSeconds", "shape"});
    helper::readInt64(j, "bindTimeoutSeconds", "", a.bindTimeoutSeconds);
    shape = helper::member(j, "shape");
  }
  // Upstream ValidateVolumeBindingArgs.
  if (a.bindTimeoutSeconds < 0) {
    errs.push_back(helper::invalid("bindTimeoutSeconds", a.bindTimeoutSeconds,
                                   "invalid BindTimeoutSeconds, should not be a negative value"));
  }
  if (shape != nullptr && !scoring) {
    errs.push_back(helper::invalid(
        "shape", std::string_view(shape->dump()),
        "unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring"));
  } else if (shape != nullptr) {
    a.shape = helper::readShape(*shape, "shape");
    // Upstream defaults an empty list too (SetDefaults_VolumeBindingArgs: len(Shape) == 0).
  }
  if (scoring && a.shape.empty()) {
    a.shape = {{0, helper::kMaxCustomPriorityScore}, {100, 0}};
  }
  if (scoring) {
    for (helper::FieldError& e : helper::validateFunctionShape(a.shape, "shape")) {
      errs.push_back(std::move(e));
    }
  }
  helper::throwIfAny(errs);
  return a;
}

namespace {

// The in-tree plugins whose volumes a CSI driver serves on the node.
constexpr std::string_view kAnnMigratedPlugins = "storage.alpha.kubernetes.io/migrated-plugins";

// A claim a pod volume refers to.
struct PodClaim {
  std::string name;
  bool ephemeral = false;
};

std::vector<PodClaim> podClaims(const api::Pod& pod) {
  std::vector<PodClaim> out;
  for (const api::Volume& v : pod.spec.volumes) {
    if (v.persistentVolumeClaim) {
      out.push_back({v.persistentVolumeClaim->claimName, false});
    } else if (v.ephemeral) {
      out.push_back({api::ephemeralVolumeClaimName(pod, v), true});
    }
  }
  return out;
}

bool controlledBy(const api::ObjectMeta& meta, const std::string& uid) {
  return std::ranges::any_of(meta.ownerReferences, [&](const api::OwnerReference& o) {
    return o.controller && o.uid == uid;
  });
}

std::string dq(std::string_view s) { return "\"" + std::string(s) + "\""; }

std::string claimKey(const api::PersistentVolumeClaim& c) {
  return c.metadata.namespace_ + "/" + c.metadata.name;
}

}  // namespace

VolumeBinding::VolumeBinding(VolumeBindingArgs args, Handle& handle)
    : args_(std::move(args)), handle_(handle) {
  if (handle_.features().enabled(features::Feature::kStorageCapacityScoring) &&
      !args_.shape.empty()) {
    std::vector<helper::FunctionShapePoint> points;
    for (const helper::UtilizationShapePoint& p : args_.shape) {
      points.push_back(
          {p.utilization, int64_t{p.score} * (kMaxNodeScore / helper::kMaxCustomPriorityScore)});
    }
    scorer_.emplace(std::move(points));
  }
}

Status VolumeBinding::preFilter(CycleState& state, const api::Pod& pod,
                                const NodeInfoLister& /*nodes*/, PreFilterResult& /*result*/) {
  const ClusterListers& listers = handle_.listers();
  const std::vector<PodClaim> claims = podClaims(pod);
  for (const PodClaim& c : claims) {
    PVCPtr pvc = listers.getPersistentVolumeClaim(pod.metadata.namespace_, c.name);
    if (!pvc) return Status::unresolvable("persistentvolumeclaim " + dq(c.name) + " not found");
    if (pvc->metadata.deletionTimestamp) {
      return Status::unresolvable("persistentvolumeclaim " + dq(c.name) + " is being deleted");
    }
    if (c.ephemeral && !controlledBy(pvc->metadata, pod.metadata.uid)) {
      return Status::unresolvable("PVC " + claimKey(*pvc) + " was not created for pod " +
                                  pod.metadata.namespace_ + "/" + pod.metadata.name +
                                  " (pod is not owner)");
    }
  }
  auto data = std::make_shared<State::Data>();
  if (claims.empty()) {
    data->skip = true;
    state.write(volume_binding::kStateKey, std::make_unique<State>(std::move(data)));
    return Status::skip();
  }

  bool unboundImmediate = false;
  for (const PodClaim& c : claims) {
    PVCPtr pvc = cache_.getPVC(listers, pod.metadata.namespace_, c.name);
    if (!pvc) {
      return Status::error("error getting PVC " + dq(pod.metadata.namespace_ + "/" + c.name) +
                           ": not found");
    }
    if (volume_binding::isClaimFullyBound(*pvc)) {
      data->boundClaims.push_back(std::move(pvc));
      continue;
    }
    bool delayed = false;
    if (std::string cls = api::persistentVolumeClaimClass(*pvc); !cls.empty()) {
      if (auto sc = listers.getStorageClass(cls)) {
        delayed = sc->volumeBindingMode == api::kVolumeBindingWaitForFirstConsumer;
      }
    }
    if (delayed && pvc->spec.volumeName.empty()) {
      data->claimsToBind.push_back(std::move(pvc));
    } else {
      unboundImmediate = true;
    }
  }
  if (unboundImmediate) return Status::unresolvable(std::string(kErrReasonUnboundImmediate));
  for (const PVCPtr& pvc : data->claimsToBind) {
    std::string cls = api::persistentVolumeClaimClass(*pvc);
    if (!data->unboundVolumesByClass.contains(cls)) {
      data->unboundVolumesByClass.emplace(cls, cache_.listPVs(listers, cls));
    }
  }
  findCapacityCandidates(*data);
  state.write(volume_binding::kStateKey, std::make_unique<State>(std::move(data)));
  return {};
}

Status VolumeBinding::filter(const CycleState& state, const api::Pod& /*pod*/,
                             const NodeInfo& nodeInfo) const {
  const api::Node* node = nodeInfo.node();
  if (node == nullptr) return Status::error("node not found");
  const State* st = state.read(volume_binding::kStateKey);
  if (st == nullptr) return Status::error("reading \"VolumeBinding\" from cycleState: not found");
  State::Data& s = st->data();
  if (s.skip) return {};

  auto decision = std::make_shared<PodVolumes>();
  std::vector<std::string> reasons;
  if (Status err = findPodVolumes(s, *node, *decision, reasons); !err.ok()) return err;
  if (!reasons.empty()) return {Code::kUnschedulableAndUnresolvable, std::move(reasons)};
  std::lock_guard lock(s.mu);
  s.podVolumesByNode[node->metadata.name] = std::move(decision);
  return {};
}

Status VolumeBinding::findPodVolumes(const State::Data& s, const api::Node& node, PodVolumes& out,
                                     std::vector<std::string>& reasons) const {
  const api::Labels& labels = node.metadata.labels;
  out.nodeLabels = labels;
  bool boundSatisfied = true;
  bool boundPVsFound = true;
  bool unboundSatisfied = true;
  bool sufficientStorage = true;
  auto collect = [&] {
    if (!boundSatisfied) reasons.emplace_back(kErrReasonNodeConflict);
    if (!unboundSatisfied) reasons.emplace_back(kErrReasonBindConflict);
    if (!sufficientStorage) reasons.emplace_back(kErrReasonNotEnoughSpace);
    if (!boundPVsFound) reasons.emplace_back(kErrReasonPVNotExist);
    return Status::success();
  };

  for (const PVCPtr& claim : s.boundClaims) {
    PVPtr pv = cache_.getPV(handle_.listers(), claim->spec.volumeName);
    if (!pv) {
      boundPVsFound = false;
      break;
    }
    if (!volume_binding::pvNodeAffinityMatches(*pv, labels)) {
      boundSatisfied = false;
      break;
    }
  }
  if (!boundSatisfied || !boundPVsFound || s.claimsToBind.empty()) return collect();

  std::vector<PVCPtr> toMatch;
  std::vector<PVCPtr> toProvision;
  for (const PVCPtr& claim : s.claimsToBind) {
    auto it = claim->metadata.annotations.find(api::kAnnSelectedNode);
    if (it == claim->metadata.annotations.end()) {
      toMatch.push_back(claim);
    } else if (it->second != node.metadata.name) {
      unboundSatisfied = false;
      return collect();
    } else {
      toProvision.push_back(claim);
    }
  }
  if (!toMatch.empty()) {
    std::ranges::stable_sort(toMatch, [](const PVCPtr& a, const PVCPtr& b) {
      return volume_binding::requestedStorage(*a) < volume_binding::requestedStorage(*b);
    });
    std::map<std::string, PVPtr, std::less<>> chosen;
    static const std::vector<PVPtr> kNone;
    for (const PVCPtr& claim : toMatch) {
      auto it = s.unboundVolumesByClass.find(api::persistentVolumeClaimClass(*claim));
      const std::vector<PVPtr>& pvs = it == s.unboundVolumesByClass.end() ? kNone : it->second;
      PVPtr pv = volume_binding::findMatchingVolume(*claim, pvs, labels, chosen);
      if (!pv) {
        toProvision.push_back(claim);
        unboundSatisfied = false;
        continue;
      }
      chosen.emplace(pv->metadata.name, pv);
      out.staticBindings.push_back({pv, claim});
    }
  }
  if (!toProvision.empty()) {
    std::vector<std::shared_ptr<const api::CSIStorageCapacity>> capacities;
    if (Status err = checkVolumeProvisions(s, toProvision, node, unboundSatisfied,
                                           sufficientStorage, capacities);
        !err.ok()) {
      return err;
    }
    if (unboundSatisfied && sufficientStorage) {
      out.dynamicProvisions = std::move(toProvision);
      out.provisionCapacities = std::move(capacities);
    }
  }
  return collect();
}

Status VolumeBinding::checkVolumeProvisions(
    const State::Data& s, const std::vector<PVCPtr>& claims, const api::Node& node, bool& satisfied,
    bool& sufficient,
    std::vector<std::shared_ptr<const api::CSIStorageCapacity>>& capacities) const {
  satisfied = false;
  sufficient = true;
  for (const PVCPtr& claim : claims) {
    std::string cls = api::persistentVolumeClaimClass(*claim);
    if (cls.empty()) return Status::error("no class for claim " + dq(claimKey(*claim)));
    auto sc = handle_.listers().getStorageClass(cls);
    if (!sc) return Status::error("failed to find storage class " + dq(cls));
    if (sc->provisioner.empty() || sc->provisioner == volume_binding::kNotSupportedProvisioner) {
      return {};
    }
    if (!api::matchTopologySelectorTerms(sc->allowedTopologies, node.metadata.labels)) return {};
    bool enough = true;
    capacities.push_back(findCapacity(s, *claim, node, enough));
    if (!enough) {
      satisfied = true;  // upstream: provisionable, but not here
      sufficient = false;
      return {};
    }
  }
  satisfied = true;
  return {};
}

bool VolumeBinding::podVolumesBound(const api::Pod& pod) const {
  for (const PodClaim& c : podClaims(pod)) {
    PVCPtr pvc = cache_.getPVC(handle_.listers(), pod.metadata.namespace_, c.name);
    if (!pvc || !volume_binding::isClaimFullyBound(*pvc)) return false;
  }
  return true;
}

Status VolumeBinding::reserve(CycleState& state, const api::Pod& pod, const std::string& nodeName) {
  State* st = state.mutableRead(volume_binding::kStateKey);
  if (st == nullptr) return Status::error("reading \"VolumeBinding\" from cycleState: not found");
  State::Data& s = st->data();
  std::shared_ptr<PodVolumes> pv;
  {
    std::lock_guard lock(s.mu);
    if (auto it = s.podVolumesByNode.find(nodeName); it != s.podVolumesByNode.end()) {
      pv = it->second;
    }
  }
  if (!pv || podVolumesBound(pod)) {
    s.allBound = true;
    return {};
  }
  for (PodVolumes::StaticBinding& b : pv->staticBindings) {
    bool dirty = false;
    PVPtr assumed = volume_binding::bindVolumeToClaim(b.pv, *b.pvc, dirty);
    if (dirty) cache_.assumePV(assumed);
    b.pv = std::move(assumed);
  }
  for (PVCPtr& claim : pv->dynamicProvisions) {
    auto clone = std::make_shared<api::PersistentVolumeClaim>(*claim);
    clone->metadata.annotations[std::string(api::kAnnSelectedNode)] = nodeName;
    cache_.assumePVC(clone);
    claim = std::move(clone);
  }
  s.allBound = false;
  return {};
}

void VolumeBinding::revert(const PodVolumes& pv) {
  for (const PodVolumes::StaticBinding& b : pv.staticBindings)
    cache_.restorePV(b.pv->metadata.name);
  for (const PVCPtr& c : pv.dynamicProvisions) {
    cache_.restorePVC(c->metadata.namespace_, c->metadata.name);
  }
}

void VolumeBinding::unreserve(CycleState& state, const api::Pod& /*pod*/,
                              const std::string& nodeName) {
  State* st = state.mutableRead(volume_binding::kStateKey);
  if (st == nullptr) return;
  State::Data& s = st->data();
  std::shared_ptr<PodVolumes> pv;
  {
    std::lock_guard lock(s.mu);
    if (auto it = s.podVolumesByNode.find(nodeName); it != s.podVolumesByNode.end()) {
      pv = it->second;
    }
  }
  if (pv) revert(*pv);
}

Status VolumeBinding::preBindPreFlight(const CycleState& state, const api::Pod& /*pod*/,
                                       const std::string& /*nodeName*/) {
  const State* st = state.read(volume_binding::kStateKey);
  if (st == nullptr) return Status::error("reading \"VolumeBinding\" from cycleState: not found");
  const State::Data& s = st->data();
  if (s.skip || s.allBound) return Status::skip();
  return {};
}

Status VolumeBinding::preBind(CycleState& state, const api::Pod& pod, const std::string& nodeName) {
  State* st = state.mutableRead(volume_binding::kStateKey);
  if (st == nullptr) return Status::error("reading \"VolumeBinding\" from cycleState: not found");
  State::Data& s = st->data();
  if (s.skip || s.allBound) return {};
  std::shared_ptr<PodVolumes> assumed;
  {
    std::lock_guard lock(s.mu);
    if (auto it = s.podVolumesByNode.find(nodeName); it != s.podVolumesByNode.end()) {
      assumed = it->second;
    }
  }
  if (!assumed) return Status::error("no pod volumes found for node " + dq(nodeName));
  ClusterApi* client = handle_.api();
  if (client == nullptr) return Status::error("binding volumes: no API client");

  // The objects as written: their resourceVersions tell when the informers caught up.
  PodVolumes written;
  written.nodeLabels = assumed->nodeLabels;
  try {
    for (const PodVolumes::StaticBinding& b : assumed->staticBindings) {
      nlohmann::json meta = {{"resourceVersion", b.pv->metadata.resourceVersion}};
      if (auto it = b.pv->metadata.annotations.find(volume_binding::kAnnBoundByController);
          it != b.pv->metadata.annotations.end()) {
        meta["annotations"] = {{it->first, it->second}};
      }
      nlohmann::json patch = {{"metadata", meta},
                              {"spec", {{"claimRef", nlohmann::json(*b.pv->spec.claimRef)}}}};
      nlohmann::json out;
      if (ApiResult r =
              client->patch("/api/v1/persistentvolumes/" + b.pv->metadata.name, patch, &out)) {
        revert(*assumed);
        return Status::error(r->message);
      }
      auto updated =
          std::make_shared<const api::PersistentVolume>(out.get<api::PersistentVolume>());
      written.staticBindings.push_back({std::move(updated), b.pvc});
    }
    for (const PVCPtr& c : assumed->dynamicProvisions) {
      nlohmann::json patch = {
          {"metadata",
           {{"resourceVersion", c->metadata.resourceVersion},
            {"annotations", {{std::string(api::kAnnSelectedNode), nodeName}}}}}};
      nlohmann::json out;
      if (ApiResult r = client->patch("/api/v1/namespaces/" + c->metadata.namespace_ +
                                          "/persistentvolumeclaims/" + c->metadata.name,
                                      patch, &out)) {
        revert(*assumed);
        return Status::error(r->message);
      }
      auto updated =
          std::make_shared<const api::PersistentVolumeClaim>(out.get<api::PersistentVolumeClaim>());
      written.dynamicProvisions.push_back(std::move(updated));
    }
  } catch (const std::exception& e) {
    revert(*assumed);
    return Status::error(e.what());
  }

  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(args_.bindTimeoutSeconds);
  // Checked at once, then every poll interval: the objects may be bound already (simulate's
  // in-memory PV controller binds them within the write).
  for (;;) {
    bool done = false;
    Status st2 = checkBindings(pod, nodeName, written, done);
    if (!st2.ok()) {
      revert(*assumed);
      return Status::error("binding volumes: " + st2.message());
    }
    if (done) {
      revert(*assumed);  // the informers hold the bound objects now
      return {};
    }
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline) break;
    {
      std::unique_lock lock(closeMu_);
      if (closeCv_.wait_until(lock, std::min(now + pollInterval_, deadline),
                              [this] { return closed_; })) {
        revert(*assumed);
        return Status::error("binding volumes: scheduler is shutting down");
      }
    }
  }
  revert(*assumed);
  return Status::error("binding volumes: context deadline exceeded");
}

void VolumeBinding::close() {
  {
    std::lock_guard lock(closeMu_);
    closed_ = true;
  }
  closeCv_.notify_all();
}

Status VolumeBinding::checkBindings(const api::Pod& pod, const std::string& nodeName,
                                    const PodVolumes& pv, bool& done) const {
  done = false;
  const ClusterListers& listers = handle_.listers();
  if (ApiResult r = handle_.api()->get(
          "/api/v1/namespaces/" + pod.metadata.namespace_ + "/pods/" + pod.metadata.name,
          nullptr)) {
    if (r->isNotFound()) return Status::error("pod does not exist any more: " + r->message);
    return {};  // transient: check again on the next tick
  }
  auto affinityError = [&](const api::PersistentVolume& v) {
    return Status::error("pv " + dq(v.metadata.name) + " node affinity doesn't match node " +
                         dq(nodeName) + ": no matching NodeSelectorTerms");
  };
  for (const PodVolumes::StaticBinding& b : pv.staticBindings) {
    PVPtr cur = listers.getPersistentVolume(b.pv->metadata.name);
    if (!cur) {
      return Status::error("failed to check binding: persistentvolume " + dq(b.pv->metadata.name) +
                           " not found");
    }
    PVCPtr pvc = listers.getPersistentVolumeClaim(b.pvc->metadata.namespace_, b.pvc->metadata.name);
    if (!pvc) {
      return Status::error("failed to check binding: persistentvolumeclaim " +
                           dq(b.pvc->metadata.name) + " not found");
    }
    if (volume_binding::compareResourceVersion(b.pv->metadata.resourceVersion,
                                               cur->metadata.resourceVersion) > 0) {
      return {};
    }
    if (!volume_binding::pvNodeAffinityMatches(*cur, pv.nodeLabels)) return affinityError(*cur);
    if (!cur->spec.claimRef || cur->spec.claimRef->uid.empty()) {
      return Status::error("ClaimRef got reset for pv " + dq(cur->metadata.name));
    }
    if (!volume_binding::isClaimFullyBound(*pvc)) return {};
  }
  for (const PVCPtr& claim : pv.dynamicProvisions) {
    PVCPtr pvc = listers.getPersistentVolumeClaim(claim->metadata.namespace_, claim->metadata.name);
    if (!pvc) {
      return Status::error("failed to check provisioning pvc: persistentvolumeclaim " +
                           dq(claim->metadata.name) + " not found");
    }
    if (volume_binding::compareResourceVersion(claim->metadata.resourceVersion,
                                               pvc->metadata.resourceVersion) > 0) {
      return {};
    }
    if (pvc->metadata.annotations.empty()) {
      return Status::error("selectedNode annotation reset for PVC " + dq(pvc->metadata.name));
    }
    auto it = pvc->metadata.annotations.find(api::kAnnSelectedNode);
    if (it == pvc->metadata.annotations.end() || it->second != nodeName) {
      return Status::error("provisioning failed for PVC " + dq(pvc->metadata.name));
    }
    if (!pvc->spec.volumeName.empty()) {
      PVPtr bound = listers.getPersistentVolume(pvc->spec.volumeName);
      if (!bound) return {};
      if (!volume_binding::pvNodeAffinityMatches(*bound, pv.nodeLabels)) {
        return affinityError(*bound);
      }
    }
    if (!volume_binding::isClaimFullyBound(*pvc)) return {};
  }
  done = true;
  return {};
}

std::vector<ClusterEventWithHint> VolumeBinding::eventsToRegister() const {
  return {
      {EventResource::kStorageClass, kAdd | kUpdate, &VolumeBinding::storageClassChangeHint},
      {EventResource::kPersistentVolumeClaim, kAdd | kUpdate, &VolumeBinding::pvcChangeHint},
      {EventResource::kPersistentVolume, kAdd | kUpdate},
      {EventResource::kNode, kAdd | kUpdateNodeLabel},
      {EventResource::kCSINode, kAdd | kUpdate, &VolumeBinding::csiNodeChangeHint},
      {EventResource::kCSIDriver, kUpdate, &VolumeBinding::csiDriverChangeHint},
      {EventResource::kCSIStorageCapacity, kAdd | kUpdate, &VolumeBinding::capacityChangeHint},
  };
}

QueueingHint VolumeBinding::storageClassChangeHint(const api::Pod& /*pod*/,
                                                   const EventObject& oldObj,
                                                   const EventObject& newObj) {
  const api::StorageClass* oldSC = as<api::StorageClass>(oldObj);
  const api::StorageClass* newSC = as<api::StorageClass>(newObj);
  if (oldSC == nullptr || newSC == nullptr) return QueueingHint::kQueue;
  // volumeBindingMode is immutable.
  return oldSC->allowedTopologies != newSC->allowedTopologies ? QueueingHint::kQueue
                                                              : QueueingHint::kSkip;
}

QueueingHint VolumeBinding::pvcChangeHint(const api::Pod& pod, const EventObject& /*oldObj*/,
                                          const EventObject& newObj) {
  const api::PersistentVolumeClaim* pvc = as<api::PersistentVolumeClaim>(newObj);
  if (pvc == nullptr) return QueueingHint::kQueue;
  if (pvc->metadata.namespace_ != pod.metadata.namespace_) return QueueingHint::kSkip;
  const auto claims = podClaims(pod);
  const bool used = std::any_of(claims.begin(), claims.end(),
                                [&](const PodClaim& c) { return c.name == pvc->metadata.name; });
  return used ? QueueingHint::kQueue : QueueingHint::kSkip;
}

QueueingHint VolumeBinding::csiNodeChangeHint(const api::Pod& /*pod*/, const EventObject& oldObj,
                                              const EventObject& newObj) {
  const api::CSINode* oldNode = as<api::CSINode>(oldObj);
  const api::CSINode* newNode = as<api::CSINode>(newObj);
  if (oldNode == nullptr || newNode == nullptr) return QueueingHint::kQueue;
  auto migrated = [](const api::CSINode& n) -> std::string_view {
    auto it = n.metadata.annotations.find(kAnnMigratedPlugins);
    return it == n.metadata.annotations.end() ? std::string_view() : it->second;
  };
  return migrated(*oldNode) != migrated(*newNode) ? QueueingHint::kQueue : QueueingHint::kSkip;
}

PluginFactory volumeBindingFactory() {
  return makePluginFactory<VolumeBinding>(
      [](const nlohmann::json& args, const features::Gates& gates) {
        return decodeVolumeBindingArgs(args, gates);
      },
      [](const VolumeBindingArgs& typed, Handle& handle) {
        return std::make_unique<VolumeBinding>(typed, handle);
      });
}

bool VolumeBinding::signPod(const api::Pod& pod) const {
  return std::none_of(pod.spec.volumes.begin(), pod.spec.volumes.end(),
                      [](const api::Volume& v) { return v.persistentVolumeClaim || v.ephemeral; });
}

}  // namespace ksched::plugins
