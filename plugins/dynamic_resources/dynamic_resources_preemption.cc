// Preemption for devices (DRAPreemption, KEP 5690): the PreFilter extensions through which
// preemption's dry run removes and gives back victims, the devices that frees, and the claim
// nominations that hold those devices for the preemptor until it is placed.
#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <ksched/preemption_settling.h>

#include "plugins/dynamic_resources/dynamic_resources_cycle.h"

namespace ksched::plugins {

namespace {

// How long a nomination holds capacity at most (KEP 5690: a backstop, not a model of how long
// the resourceclaim controller takes).
constexpr auto kNominationExpiry = std::chrono::minutes(5);

// Whether the claim counts as deallocated once the pods `removed` are gone: it is allocated and
// every holder is a removed pod (none a PodGroup or another kind of consumer).
bool releasable(const api::ResourceClaim& claim, const std::set<std::string>& removed) {
  if (!claim.status.allocation) return false;
  for (const auto& r : claim.status.reservedFor) {
    if (!r.apiGroup.empty() || r.resource != "pods") return false;
    if (!removed.contains(r.uid)) return false;
  }
  return true;
}

}  // namespace

std::vector<dra::ClaimEntryPtr> DynamicResources::claimsHeldBy(const api::Pod& pod) const {
  std::vector<dra::ClaimEntryPtr> out;
  auto add = [&](const std::string& name) {
    dra::ClaimEntryPtr e = state_->claim(pod.metadata.namespace_, name);
    if (!e) return;
    for (const auto& have : out) {
      if (have->claim->metadata.uid == e->claim->metadata.uid) return;
    }
    out.push_back(std::move(e));
  };
  for (const auto& pc : pod.spec.resourceClaims) {
    if (pc.resourceClaimName) {
      add(*pc.resourceClaimName);
      continue;
    }
    for (const auto& s : pod.status.resourceClaimStatuses) {
      if (s.name == pc.name && s.resourceClaimName) add(*s.resourceClaimName);
    }
  }
  if (const auto& ext = pod.status.extendedResourceClaimStatus) add(ext->resourceClaimName);
  return out;
}

Status DynamicResources::removePod(CycleState& state, const api::Pod& podToSchedule,
                                   const PodInfo& podToRemove, const NodeInfo& /*nodeInfo*/) const {
  Cycle* cycle = state.mutableRead(kCycleKey);
  if (cycle == nullptr || cycle->in->none()) return {};
  // Pods of a PodGroup preempt through workload-aware preemption, which does not call this.
  if (podGroups_ && podGroups_->of(podToSchedule)) return {};
  const api::Pod& victim = *podToRemove.pod;
  if (victim.spec.resourceClaims.empty() && !victim.status.extendedResourceClaimStatus) return {};
  const std::vector<dra::ClaimEntryPtr> held = claimsHeldBy(victim);
  if (held.empty()) return {};
  auto next = cycle->removed
                  ? std::make_shared<std::map<std::string, Cycle::Removed>>(*cycle->removed)
                  : std::make_shared<std::map<std::string, Cycle::Removed>>();
  for (const auto& e : held) {
    Cycle::Removed& r = (*next)[e->claim->metadata.uid];
    r.entry = e;
    r.pods.insert(victim.metadata.uid);
    r.released = releasable(*e->claim, r.pods);
  }
  cycle->removed = std::move(next);
  return {};
}

Status DynamicResources::addPod(CycleState& state, const api::Pod& /*podToSchedule*/,
                                const PodInfo& podToAdd, const NodeInfo& /*nodeInfo*/) const {
  Cycle* cycle = state.mutableRead(kCycleKey);
  if (cycle == nullptr || !cycle->removed) return {};
  const std::string& uid = podToAdd.pod->metadata.uid;
  bool held = false;
  for (const auto& [claimUid, r] : *cycle->removed) held = held || r.pods.contains(uid);
  if (!held) return {};  // a nominated pod, not a victim given back
  auto next = std::make_shared<std::map<std::string, Cycle::Removed>>(*cycle->removed);
  for (auto it = next->begin(); it != next->end();) {
    it->second.pods.erase(uid);
    if (it->second.pods.empty()) {
      it = next->erase(it);
      continue;
    }
    it->second.released = releasable(*it->second.entry->claim, it->second.pods);
    ++it;
  }
  cycle->removed = std::move(next);
  return {};
}

namespace dra {

DeviceSet releasedDevices(const std::map<std::string, DynamicResources::Cycle::Removed>& removed) {
  DeviceSet out;
  for (const auto& [uid, r] : removed) {
    if (!r.released) continue;
    for (const auto& d : r.entry->claim->status.allocation->devices) {
      if (d.adminAccess.value_or(false) || d.shareID) continue;
      out.insert(DeviceId{d.driver, d.pool, d.device});
    }
  }
  return out;
}

void joinPreemptionSettling(PreemptionSettling& settling, std::shared_ptr<DraState> state) {
  PreemptionSettling::Participant p;
  p.settling = [state](const api::Pod& pod) { return state->settling(pod); };
  p.chosen = [state](const CycleState& dryRun, const api::Pod& pod, const std::string& node) {
    const DynamicResources::Cycle* cycle = dryRun.read(kCycleKey);
    DraState::Nomination n;
    n.podUid = pod.metadata.uid;
    n.priority = api::podPriority(pod);
    n.node = node;
    n.expiry = std::chrono::steady_clock::now() + kNominationExpiry;
    if (cycle != nullptr && cycle->removed) {
      for (const auto& [uid, r] : *cycle->removed) {
        if (!r.released) continue;
        const api::ResourceClaim& c = *r.entry->claim;
        n.claims.push_back(
            {claimKey(c.metadata.namespace_, c.metadata.name), uid, *c.status.allocation});
      }
    }
    // A preemption that released no claim replaces an earlier nomination with none.
    if (n.claims.empty()) {
      state->dropNomination(pod.metadata.uid);
    } else {
      state->nominate(std::move(n));
    }
  };
  settling.add(std::move(p));
}

}  // namespace dra

}  // namespace ksched::plugins
