// PreFilter: the pod's claims (and the extended resources DeviceClasses serve), the classes
// they name, and the allocator of those to allocate over the slices and the devices in use.
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <ksched/api/pod_resources.h>

#include "plugins/dynamic_resources/binding_conditions.h"
#include "plugins/dynamic_resources/dynamic_resources_cycle.h"
#include "plugins/dynamic_resources/extended_resources.h"

namespace ksched::plugins {

namespace {

bool canBeReserved(const api::ResourceClaim& claim) {
  return claim.status.reservedFor.size() < dra::kReservedForMaxSize;
}

}  // namespace

Status DynamicResources::preFilter(CycleState& state, const api::Pod& pod,
                                   const NodeInfoLister& /*nodes*/, PreFilterResult& /*result*/) {
  auto cycle = std::make_unique<Cycle>();
  Cycle::Inner& in = *cycle->in;
  auto finish = [&](Status s) {
    state.write(kCycleKey, std::move(cycle));
    return s;
  };
  if (extendedResources_ && dra::requestsDraExtendedResourceName(pod)) {
    Cycle::Extended ext;
    for (const auto& [name, quantity] :
         api::schedulingRequestsResource(pod, handle_.features()).scalar) {
      if (quantity <= 0 || !dra::isDraExtendedResourceName(name)) continue;
      if (dra::ClassPtr c = state_->classForExtendedResource(name)) ext.classOf.emplace(name, c);
    }
    if (!ext.classOf.empty()) {
      ext.stale = state_->extendedResourceClaim(pod.metadata.uid);
      ext.uid = "extended-resources/" + pod.metadata.uid;
      in.extended = std::move(ext);
    }
  }
  if (!pod.spec.resourceClaims.empty()) {
    auto pc = podClaims(pod);
    if (!pc.error.empty()) return finish(Status::unresolvable(std::move(pc.error)));
    in.claims = std::move(pc.claims);
    in.forGroup = std::move(pc.forGroup);
    if (pc.podGroup) {
      in.groupKey = api::groupKey(pc.podGroup->metadata.namespace_, pc.podGroup->metadata.name);
      in.podGroup = std::move(pc.podGroup);
    }
  }
  if (in.none()) return finish(Status::skip());
  in.availableOn.resize(in.claims.size());
  in.givenUp.resize(in.claims.size());
  in.allocation.resize(in.claims.size());
  in.forGroup.resize(in.claims.size());
  in.sharesPending.resize(in.claims.size());
  in.holdsPending.resize(in.claims.size());
  Status result;
  auto classFor = [&](const std::string& className, const std::string& request) -> bool {
    if (className.empty()) {
      result = Status::error("request " + request + ": unsupported request type");
      return false;
    }
    if (in.classes.contains(className)) return true;
    dra::ClassPtr c = state_->deviceClass(className);
    if (!c) {
      result = Status::unresolvable("request " + request + ": device class " + className +
                                    " does not exist");
      return false;
    }
    in.classes.emplace(className, std::move(c));
    return true;
  };
  for (size_t i = 0; i < in.claims.size() && result.ok(); ++i) {
    const api::ResourceClaim& claim = *in.claims[i]->claim;
    if (claim.status.allocation) {
      if (!canBeReserved(claim) && !dra::reservedForPodOrGroup(pod, claim, podGroups_ != nullptr)) {
        result = Status::unresolvable("resourceclaim in use");
        break;
      }
      in.availableOn[i] = claim.status.allocation->nodeSelector;
      if (features_.deviceBindingAndStatus) {
        const dra::BindingState st = dra::bindingState(claim);
        if (st.code == dra::BindingState::Code::kFailed) {
          in.givenUp[i] = st.message;
        } else if (st.code == dra::BindingState::Code::kPending &&
                   dra::bindingTimedOut(claim, bindingTimeout_, std::chrono::system_clock::now())) {
          in.givenUp[i] = "claim " + claim.metadata.name + " binding timeout";
        }
      }
      continue;
    }
    if (state_->hasPendingAllocation(claim.metadata.uid)) {
      // The group's claim, allocated by a member placed before this one and not written yet:
      // this pod takes that allocation and must land where it is reachable.
      const dra::ClaimPtr pending =
          in.forGroup[i] != 0 ? state_->pendingAllocationOf(claim.metadata.uid, in.groupKey)
                              : nullptr;
      if (pending && pending->status.allocation) {
        in.availableOn[i] = pending->status.allocation->nodeSelector;
        in.allocation[i] = pending->status.allocation;
        in.sharesPending[i] = 1;
        continue;
      }
      result = Status::unresolvable("resource claim " + claim.metadata.key() +
                                    " is in the process of being allocated");
      break;
    }
    in.toAllocate.push_back(i);
    for (const auto& r : claim.spec.requests) {
      if (r.firstAvailable.empty()) {
        if (!classFor(r.exactly ? r.exactly->deviceClassName : "", r.name)) break;
        continue;
      }
      if (!features_.prioritizedList) {
        result =
            Status::unresolvable("resource claim " + claim.metadata.key() + ", request " + r.name +
                                 ": has subrequests, but the DRAPrioritizedList feature is "
                                 "disabled");
        break;
      }
      bool ok = true;
      for (const auto& sub : r.firstAvailable) {
        if (!classFor(sub.request.deviceClassName, r.name + "/" + sub.name)) {
          ok = false;
          break;
        }
      }
      if (!ok) break;
    }
  }
  if (result.ok() && in.extended) {
    for (const auto& [resource, c] : in.extended->classOf) in.classes.emplace(c->metadata.name, c);
  }
  if (result.ok() && (!in.toAllocate.empty() || in.extended)) {
    in.slices = state_->slices();
    in.sliceIndex = sliceIndexFor(in.slices);
    std::vector<std::string> uids;
    for (size_t i : in.toAllocate) uids.push_back(in.claims[i]->claim->metadata.uid);
    if (in.extended) uids.push_back(dra::podAvoidKey(pod));
    in.inUse = state_->devicesInUseFor(uids, &pod);
    // With extended resources the allocators wait for Filter: which of them DRA serves
    // depends on the node.
    if (!in.extended) in.allocator = makeAllocator(*cycle, nullptr);
  }
  return finish(std::move(result));
}

std::unique_ptr<dra::Allocator> DynamicResources::makeAllocator(
    const Cycle& cycle, const api::ResourceClaim* extendedClaim,
    const dra::DeviceSet* inUse) const {
  Cycle::Inner& in = *cycle.in;
  dra::AllocatorInputs inputs;
  for (size_t i : in.toAllocate) inputs.claims.push_back(in.claims[i]->claim.get());
  if (extendedClaim != nullptr) inputs.claims.push_back(extendedClaim);
  if (inputs.claims.empty()) return nullptr;
  inputs.deviceClass = [&in](std::string_view name) -> const api::DeviceClass* {
    auto it = in.classes.find(name);
    return it == in.classes.end() ? nullptr : it->second.get();
  };
  inputs.slices = *in.slices;
  inputs.sliceIndex = in.sliceIndex;
  inputs.inUse = inUse != nullptr ? inUse : in.inUse.get();
  inputs.compile = [this](std::string_view expression) { return celCache_.get(expression); };
  inputs.features = features_;
  inputs.scoring = scoring_;
  return std::make_unique<dra::Allocator>(std::move(inputs));
}

std::shared_ptr<const dra::SliceIndex> DynamicResources::sliceIndexFor(
    const std::shared_ptr<const std::vector<dra::SlicePtr>>& slices) const {
  std::lock_guard lock(sliceIndexMu_);
  if (slices != indexedSlices_ || sliceIndex_ == nullptr) {
    sliceIndex_ = dra::indexSlices(*slices);
    indexedSlices_ = slices;
  }
  return sliceIndex_;
}

std::shared_ptr<dra::ExtendedVariant> DynamicResources::variantFor(
    const Cycle& cycle, const api::Pod& pod, const std::vector<std::string>& viaDra) const {
  Cycle::Inner& in = *cycle.in;
  std::lock_guard lock(in.mu);
  auto& slot = in.variants[viaDra];
  if (slot) return slot;
  auto v = std::make_shared<Cycle::Variant>();
  if (!viaDra.empty()) {
    std::map<std::string, std::string, std::less<>> classOf;
    for (const auto& r : viaDra) classOf.emplace(r, in.extended->classOf.at(r)->metadata.name);
    dra::ExtendedRequests reqs = dra::extendedResourceRequests(pod, classOf);
    if (!reqs.requests.empty()) {
      auto claim = std::make_shared<api::ResourceClaim>();
      claim->metadata.name = std::string(dra::kExtendedClaimInMemoryName);
      claim->metadata.namespace_ = pod.metadata.namespace_;
      claim->metadata.uid = in.extended->uid;
      claim->metadata.annotations.emplace(std::string(dra::kExtendedResourceClaimAnnotation),
                                          "true");
      claim->metadata.ownerReferences.push_back(
          {"v1", "Pod", pod.metadata.name, pod.metadata.uid, true});
      claim->spec.requests = std::move(reqs.requests);
      v->claim = std::move(claim);
      v->mappings = std::move(reqs.mappings);
    }
  }
  v->allocator = makeAllocator(cycle, v->claim.get());
  slot = v;
  return v;
}

}  // namespace ksched::plugins
