#include "plugins/non_csi_volume_limits/non_csi_volume_limits.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <utility>

#include <ksched/api/node.h>
#include <ksched/api/pod.h>
#include <ksched/api/storage.h>

#include "plugins/helper/claim_hint.h"
#include "plugins/helper/random_prefix.h"

namespace ksched::plugins {
namespace {

constexpr std::string_view kLabelInstanceTypeStable = "node.kubernetes.io/instance-type";
constexpr std::string_view kLabelInstanceTypeBeta = "beta.kubernetes.io/instance-type";

// v1.20's EBSNitroLimitRegex "^[cmr]5.*|t3|z1d" (unanchored search).
bool isNitroInstanceType(std::string_view t) {
  const bool c5m5r5 = t.size() >= 2 && (t[0] == 'c' || t[0] == 'm' || t[0] == 'r') && t[1] == '5';
  return c5m5r5 || t.find("t3") != std::string_view::npos ||
         t.find("z1d") != std::string_view::npos;
}

std::string_view instanceType(const api::Node& node) {
  for (std::string_view key : {kLabelInstanceTypeStable, kLabelInstanceTypeBeta}) {
    if (auto it = node.metadata.labels.find(key); it != node.metadata.labels.end()) {
      return it->second;
    }
  }
  return {};
}

}  // namespace

NonCSIVolumeLimits::NonCSIVolumeLimits(InTreeVolumeType type, const ClusterListers& listers,
                                       std::optional<int64_t> maxVolumesOverride,
                                       std::string unboundVolumePrefix)
    : type_(type),
      listers_(listers),
      maxVolumesOverride_(maxVolumesOverride),
      unboundVolumePrefix_(unboundVolumePrefix.empty() ? helper::randomString(32)
                                                       : std::move(unboundVolumePrefix)) {}

std::string_view NonCSIVolumeLimits::name() const {
  switch (type_) {
    case InTreeVolumeType::kAWSEBS:
      return kEBSName;
    case InTreeVolumeType::kGCEPD:
      return kGCEPDName;
    case InTreeVolumeType::kAzureDisk:
      return kAzureDiskName;
    case InTreeVolumeType::kCinder:
      return kCinderName;
  }
  return kEBSName;
}

std::string_view NonCSIVolumeLimits::limitKey(InTreeVolumeType type) noexcept {
  switch (type) {
    case InTreeVolumeType::kAWSEBS:
      return "attachable-volumes-aws-ebs";
    case InTreeVolumeType::kGCEPD:
      return "attachable-volumes-gce-pd";
    case InTreeVolumeType::kAzureDisk:
      return "attachable-volumes-azure-disk";
    case InTreeVolumeType::kCinder:
      return "attachable-volumes-cinder";
  }
  return {};
}

std::string_view NonCSIVolumeLimits::provisioner(InTreeVolumeType type) noexcept {
  switch (type) {
    case InTreeVolumeType::kAWSEBS:
      return "kubernetes.io/aws-ebs";
    case InTreeVolumeType::kGCEPD:
      return "kubernetes.io/gce-pd";
    case InTreeVolumeType::kAzureDisk:
      return "kubernetes.io/azure-disk";
    case InTreeVolumeType::kCinder:
      return "kubernetes.io/cinder";
  }
  return {};
}

int64_t NonCSIVolumeLimits::defaultMaxVolumes(InTreeVolumeType type, const api::Node& node) {
  switch (type) {
    case InTreeVolumeType::kAWSEBS:
      return isNitroInstanceType(instanceType(node)) ? kDefaultMaxEBSNitroVolumes
                                                     : kDefaultMaxEBSVolumes;
    case InTreeVolumeType::kGCEPD:
      return kDefaultMaxGCEPDVolumes;
    case InTreeVolumeType::kAzureDisk:
      return kDefaultMaxAzureDiskVolumes;
    case InTreeVolumeType::kCinder:
      return kDefaultMaxCinderVolumes;
  }
  return -1;
}

std::optional<int64_t> NonCSIVolumeLimits::parseMaxVolumes(const char* raw) {
  if (raw == nullptr) return std::nullopt;
  std::string_view s(raw);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return std::nullopt;
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size() || value <= 0) return std::nullopt;
  return value;
}

std::optional<int64_t> NonCSIVolumeLimits::maxVolumesFromEnv() {
  return parseMaxVolumes(
      std::getenv(std::string(kMaxPDVolsEnv).c_str()));  // NOLINT(concurrency-mt-unsafe)
}

const std::string* NonCSIVolumeLimits::inlineID(const api::Volume& v) const noexcept {
  switch (type_) {
    case InTreeVolumeType::kAWSEBS:
      return v.awsElasticBlockStore ? &v.awsElasticBlockStore->volumeID : nullptr;
    case InTreeVolumeType::kGCEPD:
      return v.gcePersistentDisk ? &v.gcePersistentDisk->pdName : nullptr;
    case InTreeVolumeType::kAzureDisk:
      return v.azureDisk ? &v.azureDisk->diskName : nullptr;
    case InTreeVolumeType::kCinder:
      return v.cinder ? &v.cinder->volumeID : nullptr;
  }
  return nullptr;
}

const std::string* NonCSIVolumeLimits::persistentVolumeID(
    const api::PersistentVolume& pv) const noexcept {
  const api::PersistentVolumeSpec& s = pv.spec;
  switch (type_) {
    case InTreeVolumeType::kAWSEBS:
      return s.awsElasticBlockStore ? &s.awsElasticBlockStore->volumeID : nullptr;
    case InTreeVolumeType::kGCEPD:
      return s.gcePersistentDisk ? &s.gcePersistentDisk->pdName : nullptr;
    case InTreeVolumeType::kAzureDisk:
      return s.azureDisk ? &s.azureDisk->diskName : nullptr;
    case InTreeVolumeType::kCinder:
      return s.cinder ? &s.cinder->volumeID : nullptr;
  }
  return nullptr;
}

bool NonCSIVolumeLimits::matchesProvisioner(const api::PersistentVolumeClaim& pvc) const {
  if (!pvc.spec.storageClassName) return false;
  auto sc = listers_.getStorageClass(*pvc.spec.storageClassName);
  return sc != nullptr && sc->provisioner == provisioner(type_);
}

Status NonCSIVolumeLimits::collectVolumes(const std::vector<api::Volume>& volumes,
                                          const std::string& ns, std::set<std::string>& ids) const {
  for (const api::Volume& v : volumes) {
    if (const std::string* id = inlineID(v)) {
      ids.insert(*id);
      continue;
    }
    if (!v.persistentVolumeClaim) continue;
    const std::string& claim = v.persistentVolumeClaim->claimName;
    if (claim.empty()) return Status::error("PersistentVolumeClaim had no name");
    auto pvc = listers_.getPersistentVolumeClaim(ns, claim);
    if (pvc == nullptr) continue;
    auto pv =
        pvc->spec.volumeName.empty() ? nullptr : listers_.getPersistentVolume(pvc->spec.volumeName);
    if (pv == nullptr) {
      // Not bound yet, or its PV is gone: counted when it will be of this type.
      if (matchesProvisioner(*pvc)) ids.insert(unboundVolumePrefix_ + "-" + ns + "/" + claim);
      continue;
    }
    if (const std::string* id = persistentVolumeID(*pv)) ids.insert(*id);
  }
  return {};
}

Status NonCSIVolumeLimits::filter(const CycleState& /*state*/, const api::Pod& pod,
                                  const NodeInfo& nodeInfo) const {
  Usage u;
  if (Status s = usage(pod, nodeInfo, u); !s.ok()) return s.isSkip() ? Status() : s;
  if (u.attached + u.added > u.limit) {
    return Status::unschedulable(std::string(kErrReasonMaxVolumeCountExceeded));
  }
  return {};
}

std::vector<std::string> NonCSIVolumeLimits::explainRejection(const CycleState& /*state*/,
                                                              const api::Pod& pod,
                                                              const NodeInfo& nodeInfo) const {
  Usage u;
  if (!usage(pod, nodeInfo, u).ok() || u.attached + u.added <= u.limit) return {};
  return {std::to_string(u.attached) + " volumes of driver " + std::string(provisioner(type_)) +
          " attached, the pod adds " + std::to_string(u.added) + ", limit " +
          std::to_string(u.limit) + " (" + u.limitFrom + ")"};
}

Status NonCSIVolumeLimits::usage(const api::Pod& pod, const NodeInfo& nodeInfo, Usage& out) const {
  if (pod.spec.volumes.empty()) return Status::skip();
  std::set<std::string> newVolumes;
  if (Status s = collectVolumes(pod.spec.volumes, pod.metadata.namespace_, newVolumes); !s.ok()) {
    return s;
  }
  if (newVolumes.empty()) return Status::skip();
  const api::Node* node = nodeInfo.node();
  if (node == nullptr) return Status::error("node not found");

  std::set<std::string> existing;
  for (const PodInfoPtr& p : nodeInfo.pods()) {
    if (Status s = collectVolumes(p->pod->spec.volumes, p->pod->metadata.namespace_, existing);
        !s.ok()) {
      return s;
    }
  }
  out.attached = static_cast<int64_t>(existing.size());
  out.added = std::count_if(newVolumes.begin(), newVolumes.end(),
                            [&](const std::string& id) { return !existing.contains(id); });
  out.limit = maxVolumesOverride_.value_or(defaultMaxVolumes(type_, *node));
  out.limitFrom = maxVolumesOverride_ ? std::string(kMaxPDVolsEnv) : "default";
  const auto& scalar = nodeInfo.allocatable().scalar;
  if (auto it = scalar.find(std::string(limitKey(type_))); it != scalar.end()) {
    out.limit = it->second;
    out.limitFrom = "node allocatable " + it->first;
  }
  return {};
}

std::vector<ClusterEventWithHint> NonCSIVolumeLimits::eventsToRegister() const {
  return {
      {EventResource::kNode, kAdd | kUpdateNodeAllocatable | kUpdateNodeLabel},
      {EventResource::kPod, kDelete,
       [this](const api::Pod& pod, const EventObject& oldObj, const EventObject& newObj) {
         return podDeletedHint(pod, oldObj, newObj);
       }},
      {EventResource::kPersistentVolumeClaim, kAdd | kUpdate,
       [](const api::Pod& pod, const EventObject& /*oldObj*/, const EventObject& newObj) {
         return queueIfClaimOfPod(pod, newObj);
       }},
  };
}

QueueingHint NonCSIVolumeLimits::podDeletedHint(const api::Pod& /*pod*/, const EventObject& oldObj,
                                                const EventObject& /*newObj*/) const {
  const api::Pod* deleted = as<api::Pod>(oldObj);
  if (deleted == nullptr) return QueueingHint::kQueue;
  if (deleted->spec.nodeName.empty()) return QueueingHint::kSkip;
  const bool relevant = std::any_of(
      deleted->spec.volumes.begin(), deleted->spec.volumes.end(),
      [&](const api::Volume& v) { return inlineID(v) != nullptr || v.persistentVolumeClaim; });
  return relevant ? QueueingHint::kQueue : QueueingHint::kSkip;
}

PluginFactory ebsLimitsFactory() {
  return makePluginFactory<NonCSIVolumeLimits>([](Handle& handle) {
    return std::make_unique<NonCSIVolumeLimits>(InTreeVolumeType::kAWSEBS, handle.listers(),
                                                NonCSIVolumeLimits::maxVolumesFromEnv());
  });
}

PluginFactory gcePdLimitsFactory() {
  return makePluginFactory<NonCSIVolumeLimits>([](Handle& handle) {
    return std::make_unique<NonCSIVolumeLimits>(InTreeVolumeType::kGCEPD, handle.listers(),
                                                NonCSIVolumeLimits::maxVolumesFromEnv());
  });
}

PluginFactory azureDiskLimitsFactory() {
  return makePluginFactory<NonCSIVolumeLimits>([](Handle& handle) {
    return std::make_unique<NonCSIVolumeLimits>(InTreeVolumeType::kAzureDisk, handle.listers(),
                                                NonCSIVolumeLimits::maxVolumesFromEnv());
  });
}

PluginFactory cinderLimitsFactory() {
  return makePluginFactory<NonCSIVolumeLimits>([](Handle& handle) {
    return std::make_unique<NonCSIVolumeLimits>(InTreeVolumeType::kCinder, handle.listers(),
                                                NonCSIVolumeLimits::maxVolumesFromEnv());
  });
}

}  // namespace ksched::plugins
