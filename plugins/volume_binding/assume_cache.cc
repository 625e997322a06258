#include "plugins/volume_binding/assume_cache.h"

#include <utility>

namespace ksched::plugins::volume_binding {
namespace {

template <typename T>
std::shared_ptr<const T> overlay(const std::shared_ptr<const T>& informer,
                                 const std::shared_ptr<const T>& assumed) {
  if (!informer || !assumed) return informer;
  return informer->metadata.resourceVersion == assumed->metadata.resourceVersion ? assumed
                                                                                 : informer;
}

std::string pvcKey(std::string_view ns, std::string_view name) {
  std::string k(ns);
  k += '/';
  k += name;
  return k;
}

}  // namespace

PVPtr AssumeCache::getPV(const ClusterListers& listers, std::string_view name) const {
  PVPtr informer = listers.getPersistentVolume(name);
  std::lock_guard lock(mu_);
  auto it = pvs_.find(name);
  return overlay(informer, it == pvs_.end() ? nullptr : it->second);
}

std::vector<PVPtr> AssumeCache::listPVs(const ClusterListers& listers,
                                        std::string_view className) const {
  ObjectList<api::PersistentVolume> all = listers.persistentVolumes();
  std::vector<PVPtr> out;
  std::lock_guard lock(mu_);
  for (const PVPtr& informer : all) {
    auto it = pvs_.find(informer->metadata.name);
    PVPtr pv = overlay(informer, it == pvs_.end() ? nullptr : it->second);
    if (api::persistentVolumeClass(*pv) == className) out.push_back(std::move(pv));
  }
  return out;
}

PVCPtr AssumeCache::getPVC(const ClusterListers& listers, std::string_view ns,
                           std::string_view name) const {
  PVCPtr informer = listers.getPersistentVolumeClaim(ns, name);
  std::lock_guard lock(mu_);
  auto it = pvcs_.find(pvcKey(ns, name));
  return overlay(informer, it == pvcs_.end() ? nullptr : it->second);
}

void AssumeCache::assumePV(PVPtr pv) {
  std::lock_guard lock(mu_);
  std::string name = pv->metadata.name;
  pvs_[std::move(name)] = std::move(pv);
}

void AssumeCache::restorePV(std::string_view name) {
  std::lock_guard lock(mu_);
  if (auto it = pvs_.find(name); it != pvs_.end()) pvs_.erase(it);
}

void AssumeCache::assumePVC(PVCPtr pvc) {
  std::lock_guard lock(mu_);
  pvcs_[pvcKey(pvc->metadata.namespace_, pvc->metadata.name)] = std::move(pvc);
}

void AssumeCache::restorePVC(std::string_view ns, std::string_view name) {
  std::lock_guard lock(mu_);
  if (auto it = pvcs_.find(pvcKey(ns, name)); it != pvcs_.end()) pvcs_.erase(it);
}

size_t AssumeCache::sizeForTest() const {
  std::lock_guard lock(mu_);
  return pvs_.size() + pvcs_.size();
}

}  // namespace ksched::plugins::volume_binding
