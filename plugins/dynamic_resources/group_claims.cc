#include "plugins/dynamic_resources/group_claims.h"

#include <spdlog/spdlog.h>

#include <exception>
#include <utility>

#include <ksched/api/decode.h>

namespace ksched::plugins::dra {

PodGroupIndex::PodGroupIndex(Handle& handle) : handle_(&handle) {
  ObjectWatch what{"PodGroup",
                   std::string(api::kPodGroupsV1beta1),
                   "",
                   {std::string(api::kPodGroupsV1alpha2)},
                   true};
  store_ = handle.watchObjects(
      what, {[this](const UnstructuredPtr& o) { onObject(nullptr, o); },
             [this](const UnstructuredPtr& o, const UnstructuredPtr& n) { onObject(o, n); },
             [this](const UnstructuredPtr& o) { onObject(o, nullptr); }});
}

std::shared_ptr<const api::PodGroup> PodGroupIndex::get(std::string_view ns,
                                                        std::string_view name) const {
  std::lock_guard lock(mu_);
  auto it = groups_.find(api::groupKey(ns, name));
  return it == groups_.end() ? nullptr : it->second;
}

std::shared_ptr<const api::PodGroup> PodGroupIndex::of(const api::Pod& pod) const {
  const std::string* name = pod.spec.podGroupName();
  return name == nullptr ? nullptr : get(pod.metadata.namespace_, *name);
}

void PodGroupIndex::set(std::shared_ptr<const api::PodGroup> pg) {
  std::shared_ptr<const api::PodGroup> old;
  {
    std::lock_guard lock(mu_);
    old = std::exchange(groups_[api::groupKey(pg->metadata.namespace_, pg->metadata.name)], pg);
  }
  // After the index changed: the pods the event brings back resolve their claims anew.
  // GangScheduling tells the queue of every PodGroup change too; this one comes once the claims
  // can be resolved from the new version.
  if (handle_ == nullptr) return;
  if (!old) {
    if (!pg->spec.resourceClaims.empty()) {
      handle_->clusterEvent({EventResource::kPodGroup, kAdd, {}}, std::monostate{},
                            EventObject(pg));
    }
  } else if (groupClaimsChanged(*old, *pg)) {
    handle_->clusterEvent({EventResource::kPodGroup, kUpdateOther, {}}, EventObject(old),
                          EventObject(pg));
  }
}

void PodGroupIndex::remove(std::string_view ns, std::string_view name) {
  std::lock_guard lock(mu_);
  groups_.erase(api::groupKey(ns, name));
}

void PodGroupIndex::onObject(const UnstructuredPtr& oldObj, const UnstructuredPtr& newObj) {
  if (!newObj) {
    if (oldObj) remove(oldObj->metadata.namespace_, oldObj->metadata.name);
    return;
  }
  try {
    set(std::make_shared<const api::PodGroup>(api::decode<api::PodGroup>(newObj->object)));
  } catch (const std::exception& e) {
    // GangScheduling logs the malformed object; the last good version stays in force.
    spdlog::debug("DynamicResources: PodGroup {} not read: {}", newObj->metadata.key(), e.what());
  }
}

const api::PodGroupResourceClaim* groupEntryFor(const api::PodGroup& pg,
                                                const api::PodResourceClaim& pc) {
  for (const auto& c : pg.spec.resourceClaims) {
    if (c.name == pc.name && c.resourceClaimName == pc.resourceClaimName &&
        c.resourceClaimTemplateName == pc.resourceClaimTemplateName) {
      return &c;
    }
  }
  return nullptr;
}

api::ResourceClaimConsumerReference groupReference(const api::PodGroup& pg) {
  return {std::string(api::kSchedulingGroup), std::string(kPodGroupsResource), pg.metadata.name,
          pg.metadata.uid};
}

bool reservedForPodOrGroup(const api::Pod& pod, const api::ResourceClaim& claim, bool acceptGroup) {
  const std::string* group = acceptGroup ? pod.spec.podGroupName() : nullptr;
  for (const auto& r : claim.status.reservedFor) {
    if (r.uid == pod.metadata.uid) return true;
    // A PodGroup cannot be deleted before its pods: its name is enough.
    if (group != nullptr && r.apiGroup == api::kSchedulingGroup &&
        r.resource == kPodGroupsResource && r.name == *group) {
      return true;
    }
  }
  return false;
}

bool ownedByGroup(const api::ResourceClaim& claim, const api::PodGroup& pg) {
  if (claim.metadata.namespace_ != pg.metadata.namespace_) return false;
  for (const auto& o : claim.metadata.ownerReferences) {
    if (o.controller) return o.uid == pg.metadata.uid;
  }
  return false;
}

bool groupClaimsChanged(const api::PodGroup& before, const api::PodGroup& after) {
  return before.spec.resourceClaims != after.spec.resourceClaims ||
         before.status.resourceClaimStatuses != after.status.resourceClaimStatuses;
}

}  // namespace ksched::plugins::dra
