// Reserve (the node's allocation in flight), Unreserve (undone, and the pod out of
// reservedFor) and PreBind (the claims' finalizer, allocation and reservation written; the
// claim for extended resources created): every write DynamicResources makes to a claim.
#include <spdlog/spdlog.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <ksched/api/rfc3339.h>
#include <ksched/cluster_api.h>

#include "plugins/dynamic_resources/binding_conditions.h"
#include "plugins/dynamic_resources/dynamic_resources_cycle.h"
#include "plugins/dynamic_resources/extended_resources.h"

namespace ksched::plugins {

using dra::ClaimEntryPtr;

namespace {

// The reservedFor entry of a pod.
api::ResourceClaimConsumerReference podReference(const api::Pod& pod) {
  return {"", "pods", pod.metadata.name, pod.metadata.uid};
}

}  // namespace

// Takes the delete-protection finalizer off the claim, then deletes it (uid precondition);
// the error text, or "" when done (or gone already).
std::string DynamicResources::deleteClaim(const dra::ClaimEntry& e) const {
  ClusterApi* api = handle_.api();
  if (api == nullptr) return "no cluster to delete ResourceClaims in";
  const auto& m = e.claim->metadata;
  nlohmann::json finalizers = nlohmann::json::array();
  bool had = false;
  if (const auto meta = e.raw.find("metadata"); meta != e.raw.end()) {
    for (const auto& f : meta->value("finalizers", nlohmann::json::array())) {
      if (f.is_string() && f.get<std::string>() == dra::kFinalizer) {
        had = true;
      } else {
        finalizers.push_back(f);
      }
    }
  }
  if (had) {
    const nlohmann::json patch = {{"metadata", {{"finalizers", finalizers}}}};
    if (auto err = api->patch(dra::claimPath(e, false), patch, nullptr);
        err && !err->isNotFound()) {
      return "remove finalizer of ResourceClaim " + m.key() + ": " + err->message;
    }
  }
  if (auto err = api->remove(dra::claimPath(e, false), {{"uid", m.uid}});
      err && !err->isNotFound()) {
    return "delete ResourceClaim " + m.key() + ": " + err->message;
  }
  return {};
}

Status DynamicResources::reserve(CycleState& state, const api::Pod& pod,
                                 const std::string& nodeName) {
  const Cycle* cycle = state.read(kCycleKey);
  if (cycle == nullptr || cycle->in->none()) return {};
  // Placed: what its preemption freed need not be held for it any longer.
  if (preemption_) state_->dropNomination(pod.metadata.uid);
  Cycle::Inner& in = *cycle->in;
  for (size_t i = 0; i < in.claims.size(); ++i) {
    // The allocation an earlier member of the group made: held until this pod's PreBind or
    // Unreserve. Gone meanwhile: written, the claim carries it now.
    if (in.sharesPending[i] != 0) {
      in.holdsPending[i] = state_->sharePendingAllocation(in.claims[i]->claim->metadata.uid);
    }
  }
  if (in.toAllocate.empty() && !in.extended) return {};
  Cycle::NodeAllocation na;
  bool found = false;
  {
    std::lock_guard lock(in.mu);
    auto it = in.nodeAllocations.find(nodeName);
    if (it != in.nodeAllocations.end()) {
      na = it->second;
      found = true;
    }
  }
  // Filtering is over: the devices-in-use set is let go, so the state changes it in place
  // instead of copying it.
  in.releaseAllocators();
  if (!found) {
    // Only extended resources, and device plugins serve them all on this node.
    if (in.toAllocate.empty()) return {};
    return Status::error("claim allocation not found for node");
  }
  std::vector<api::AllocationResult>& allocations = na.results;
  const bool extended = na.variant && na.variant->claim;
  const size_t want = in.toAllocate.size() + (extended ? 1 : 0);
  if (allocations.size() != want) {
    return Status::error("internal error, have " + std::to_string(allocations.size()) +
                         " allocations, " + std::to_string(want) + " claims to allocate");
  }
  if (extended) {
    in.chosen = na.variant;
    in.extendedAllocation = allocations.back();
    auto claim = std::make_shared<api::ResourceClaim>(*na.variant->claim);
    claim->status.allocation = in.extendedAllocation;
    state_->signalPendingAllocation(in.extended->uid, std::move(claim));
  }
  for (size_t k = 0; k < in.toAllocate.size(); ++k) {
    const size_t i = in.toAllocate[k];
    in.allocation[i] = std::move(allocations[k]);
    auto claim = std::make_shared<api::ResourceClaim>(*in.claims[i]->claim);
    claim->status.allocation = in.allocation[i];
    const std::string uid = claim->metadata.uid;
    if (in.forGroup[i] != 0) {
      // The members placed after this one take this allocation (PreFilter).
      state_->signalPendingAllocation(uid, std::move(claim), in.groupKey);
      in.holdsPending[i] = 1;
    } else {
      state_->signalPendingAllocation(uid, std::move(claim));
    }
  }
  return {};
}

void DynamicResources::unreserve(CycleState& state, const api::Pod& pod,
                                 const std::string& /*nodeName*/) {
  const Cycle* cycle = state.read(kCycleKey);
  if (cycle == nullptr || cycle->in->none()) return;
  Cycle::Inner& in = *cycle->in;
  if (in.extended) {
    state_->removePendingAllocation(in.extended->uid);
    if (in.created) {
      // PreBind created it: a claim for a pod not bound would keep its devices.
      if (std::string err = deleteClaim(*in.created); !err.empty()) {
        spdlog::warn("unreserve of pod {}: {}", pod.metadata.key(), err);
      } else {
        state_->restore(in.created->claim->metadata.namespace_, in.created->claim->metadata.name);
      }
      in.created.reset();
    }
  }
  for (size_t i = 0; i < in.claims.size(); ++i) {
    const dra::ClaimEntry& e = *in.claims[i];
    // A claim on the group: this pod gives back its hold only; the last one takes the
    // allocation back. Its reservation is the group's, not this pod's: it stays.
    if (in.forGroup[i] != 0) {
      if (in.holdsPending[i] != 0 && state_->removePendingAllocation(e.claim->metadata.uid)) {
        state_->restore(e.claim->metadata.namespace_, e.claim->metadata.name);
      }
      in.holdsPending[i] = 0;
      continue;
    }
    if (state_->removePendingAllocation(e.claim->metadata.uid)) {
      state_->restore(e.claim->metadata.namespace_, e.claim->metadata.name);
    }
    if (!e.claim->status.allocation || !dra::reservedFor(pod, *e.claim)) continue;
    std::vector<api::ResourceClaimConsumerReference> rest;
    for (const auto& r : e.claim->status.reservedFor) {
      if (r.uid != pod.metadata.uid) rest.push_back(r);
    }
    ClusterApi* api = handle_.api();
    if (api == nullptr) continue;
    const nlohmann::json patch = {
        {"metadata", {{"resourceVersion", e.claim->metadata.resourceVersion}}},
        {"status",
         {{"reservedFor", rest.empty() ? nlohmann::json(nullptr) : dra::reservedForJson(rest)}}}};
    if (auto err = api->patch(dra::claimPath(e, true), patch, nullptr)) {
      spdlog::warn("unreserve: removing pod {} from ResourceClaim {}: {}", pod.metadata.key(),
                   e.claim->metadata.key(), err->message);
    }
  }
}

Status DynamicResources::preBindPreFlight(const CycleState& state, const api::Pod& pod,
                                          const std::string& /*nodeName*/) {
  const Cycle* cycle = state.read(kCycleKey);
  if (cycle == nullptr || cycle->in->none()) return Status::skip();
  if (cycle->in->chosen) return {};
  for (const auto& e : cycle->in->claims) {
    if (!dra::reservedForPodOrGroup(pod, *e->claim, podGroups_ != nullptr)) return {};
  }
  return Status::skip();
}

Status DynamicResources::preBind(CycleState& state, const api::Pod& pod,
                                 const std::string& nodeName) {
  const Cycle* cycle = state.read(kCycleKey);
  if (cycle == nullptr || cycle->in->none()) return {};
  Cycle::Inner& in = *cycle->in;
  const bool acceptGroup = podGroups_ != nullptr;
  for (size_t i = 0; i < in.claims.size(); ++i) {
    if (in.forGroup[i] != 0) {
      if (Status s = bindGroupClaim(*cycle, i, pod); !s.ok()) return s;
      continue;
    }
    if (dra::reservedForPodOrGroup(pod, *in.claims[i]->claim, acceptGroup)) continue;
    ClaimEntryPtr e = in.claims[i];
    const std::string pendingUid = e->claim->metadata.uid;
    if (Status s = bindClaim(e, in.allocation[i], pendingUid, podReference(pod)); !s.ok()) {
      return s;
    }
    in.claims[i] = std::move(e);
  }
  if (in.chosen) {
    if (Status s = bindExtendedClaim(*cycle, pod); !s.ok()) return s;
  }
  if (!features_.deviceBindingAndStatus) return {};
  bool conditions = in.created && dra::hasBindingConditions(*in.created->claim);
  for (const auto& e : in.claims) conditions = conditions || dra::hasBindingConditions(*e->claim);
  if (!conditions) return {};
  handle_.eventRecorder().event(pod, "Normal", "BindingConditionsPending", "Scheduling",
                                "waiting for binding conditions for device on node " + nodeName);
  in.bindingDeadline =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(bindingTimeout_);
  return checkBindingConditions(*cycle, pod, std::nullopt);
}

// Creates the claim for the pod's extended resources (with the finalizer), writes its
// allocation and reservation, then names it in the pod's status.extendedResourceClaimStatus.
Status DynamicResources::bindExtendedClaim(const Cycle& cycle, const api::Pod& pod) {
  Cycle::Inner& in = *cycle.in;
  ClusterApi* api = handle_.api();
  if (api == nullptr) return Status::error("no cluster to write ResourceClaims to");
  const std::string apiVersion = state_->apiVersion();
  const std::string collection =
      "/apis/" + apiVersion + "/namespaces/" + pod.metadata.namespace_ + "/resourceclaims";
  nlohmann::json created;
  if (auto err = api->create(
          collection, dra::extendedClaimObject(pod, in.chosen->claim->spec.requests, apiVersion),
          &created)) {
    state_->removePendingAllocation(in.extended->uid);
    return Status::error("create claim for extended resources " + pod.metadata.namespace_ + "/" +
                         pod.metadata.name + "-extended-resources-: " + err->message);
  }
  ClaimEntryPtr e;
  try {
    e = dra::DraState::decodeClaim(created);
  } catch (const std::exception& ex) {
    state_->removePendingAllocation(in.extended->uid);
    return Status::error("create claim for extended resources: " + std::string(ex.what()));
  }
  in.created = e;
  if (Status s = bindClaim(e, in.extendedAllocation, in.extended->uid, podReference(pod));
      !s.ok()) {
    return s;
  }
  in.created = e;
  const std::string& name = e->claim->metadata.name;
  if (auto err = api->patchPodStatus(pod, dra::extendedClaimStatusPatch(in.chosen->mappings, name),
                                     "application/merge-patch+json")) {
    return Status::error("update pod " + pod.metadata.key() +
                         " ExtendedResourceClaimStatus: " + err->message);
  }
  return {};
}

Status DynamicResources::bindGroupClaim(const Cycle& cycle, size_t i, const api::Pod& pod) {
  Cycle::Inner& in = *cycle.in;
  // The members bind in parallel: one at a time, each sees what the one before wrote.
  std::lock_guard lock(groupBindMu_);
  const api::ResourceClaim& seen = *in.claims[i]->claim;
  ClaimEntryPtr e = state_->claim(seen.metadata.namespace_, seen.metadata.name);
  if (!e) e = in.claims[i];
  if (dra::reservedForPodOrGroup(pod, *e->claim, true)) {
    // Written by a member bound before: its allocation is in the claim now.
    if (in.holdsPending[i] != 0) state_->dropPendingAllocation(seen.metadata.uid);
    in.claims[i] = std::move(e);
    return {};
  }
  std::optional<api::AllocationResult> allocation;
  if (!e->claim->status.allocation) allocation = in.allocation[i];
  if (Status s = bindClaim(e, allocation, seen.metadata.uid, dra::groupReference(*in.podGroup));
      !s.ok()) {
    return s;
  }
  in.claims[i] = std::move(e);
  return {};
}

// Writes the allocation (if Reserve made one) and the reservation (the pod's or its PodGroup's)
// into the claim: the finalizer first (a metadata write), then the status, each with the
// resourceVersion read as precondition; a conflict re-reads the claim and tries again (5 attempts,
// as retry.DefaultRetry).
Status DynamicResources::bindClaim(ClaimEntryPtr& claimEntry,
                                   const std::optional<api::AllocationResult>& allocation,
                                   const std::string& pendingUid,
                                   const api::ResourceClaimConsumerReference& consumer) {
  // A claim on a PodGroup: other members may hold its allocation in flight; written, it is
  // theirs too (dropped for all), failed, each gives back its own hold in Unreserve.
  const bool forGroup = consumer.resource == dra::kPodGroupsResource;
  ClusterApi* api = handle_.api();
  if (api == nullptr) return Status::error("no cluster to write ResourceClaims to");
  ClaimEntryPtr e = claimEntry;
  const std::string key = e->claim->metadata.key();
  std::string failure;
  bool done = false;
  for (int attempt = 0; attempt < 5 && !done; ++attempt) {
    if (attempt > 0) {
      nlohmann::json fresh;
      if (auto err = api->get(dra::claimPath(*e, false), &fresh)) {
        failure = "get updated claim " + key + " after conflict: " + err->message;
        break;
      }
      try {
        e = dra::DraState::decodeClaim(fresh);
      } catch (const std::exception& ex) {
        failure = "get updated claim " + key + " after conflict: " + ex.what();
        break;
      }
    }
    const api::ResourceClaim& claim = *e->claim;
    if (claim.metadata.deletionTimestamp) {
      failure = "claim " + key + " got deleted in the meantime";
      break;
    }
    std::string rv = claim.metadata.resourceVersion;
    if (allocation) {
      if (claim.status.allocation) {
        failure = "claim " + key + " got allocated elsewhere in the meantime";
        break;
      }
      nlohmann::json finalizers = nlohmann::json::array();
      bool has = false;
      if (const auto m = e->raw.find("metadata"); m != e->raw.end() && m->contains("finalizers")) {
        for (const auto& f : (*m)["finalizers"]) {
          finalizers.push_back(f);
          has = has || (f.is_string() && f.get<std::string>() == dra::kFinalizer);
        }
      }
      if (!has) {
        finalizers.push_back(std::string(dra::kFinalizer));
        nlohmann::json written;
        const nlohmann::json patch = {
            {"metadata", {{"resourceVersion", rv}, {"finalizers", finalizers}}}};
        if (auto err = api->patch(dra::claimPath(*e, false), patch, &written)) {
          if (err->code == 409) continue;
          failure = "add finalizer to claim " + key + ": " + err->message;
          break;
        }
        try {
          e = dra::DraState::decodeClaim(written);
        } catch (const std::exception& ex) {
          failure = "add finalizer to claim " + key + ": " + ex.what();
          break;
        }
        rv = e->claim->metadata.resourceVersion;
      }
    }
    auto reserved = e->claim->status.reservedFor;
    reserved.push_back(consumer);
    nlohmann::json status = {{"reservedFor", dra::reservedForJson(reserved)}};
    if (allocation) {
      api::AllocationResult written = *allocation;
      // When the allocation was made: the binding timeout counts from it.
      if (features_.deviceBindingAndStatus && !written.allocationTimestamp) {
        written.allocationTimestamp = api::formatRFC3339(std::chrono::system_clock::now());
      }
      status["allocation"] = api::toJson(written);
    }
    const nlohmann::json patch = {{"metadata", {{"resourceVersion", rv}}}, {"status", status}};
    nlohmann::json written;
    if (auto err = api->patch(dra::claimPath(*e, true), patch, &written)) {
      if (err->code == 409) continue;
      failure = std::string(allocation ? "add allocation and reservation to claim "
                                       : "add reservation to claim ") +
                key + ": " + err->message;
      break;
    }
    try {
      e = dra::DraState::decodeClaim(written);
      state_->assume(e);
    } catch (const std::exception& ex) {
      spdlog::warn("ResourceClaim {} as written: {}", key, ex.what());
    }
    done = true;
  }
  if (forGroup) {
    if (done) state_->dropPendingAllocation(pendingUid);
  } else if (allocation) {
    state_->removePendingAllocation(pendingUid);
  }
  if (!done) {
    if (failure.empty()) failure = "claim " + key + ": conflicts on every attempt";
    return Status::error(std::move(failure));
  }
  claimEntry = std::move(e);
  return {};
}

}  // namespace ksched::plugins
