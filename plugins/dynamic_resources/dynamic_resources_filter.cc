// Filter (the allocated claims' node selectors, then the allocator on this node), PostFilter
// (deallocating a claim no node can take) and Score (the prioritized lists' choices, with
// device scoring the allocation's quality).
#include <chrono>
#include <set>
#include <string>
#include <vector>

#include <ksched/cluster_api.h>
#include <ksched/helper/normalize_score.h>

#include "plugins/dynamic_resources/dynamic_resources_cycle.h"
#include "util/duration.h"

namespace ksched::plugins {

namespace {

// resource.k8s.io FirstAvailableDeviceRequestMaxSize.
constexpr int64_t kFirstAvailableMaxSize = 8;

}  // namespace

Status DynamicResources::filter(const CycleState& state, const api::Pod& pod,
                                const NodeInfo& nodeInfo) const {
  const Cycle* cycle = state.read(kCycleKey);
  if (cycle == nullptr || cycle->in->none()) return {};
  Cycle::Inner& in = *cycle->in;
  if (in.extended && in.extended->stale) {
    return Status::unresolvable("cannot schedule extended resource claim")
        .withDetails({"the claim " + in.extended->stale->claim->metadata.name +
                      " of an earlier attempt is deleted first"});
  }
  const api::Node& node = *nodeInfo.node();
  std::vector<size_t> unavailable;
  std::vector<std::string> details;
  for (size_t i = 0; i < in.claims.size(); ++i) {
    const api::ResourceClaim& claim = *in.claims[i]->claim;
    if (in.availableOn[i] && !in.availableOn[i]->matches(node)) {
      unavailable.push_back(i);
      details.push_back("claim " + claim.metadata.name +
                        " is allocated on other nodes (its allocation's node selector does not "
                        "match this node)");
      continue;
    }
    if (!in.givenUp[i].empty()) {
      unavailable.push_back(i);
      details.push_back(in.givenUp[i]);
    }
  }
  if (!unavailable.empty()) {
    std::lock_guard lock(in.mu);
    in.unavailable.insert(unavailable.begin(), unavailable.end());
    return Status::unresolvable(std::string(kNotAvailableOnNode)).withDetails(std::move(details));
  }
  const dra::Allocator* allocator = in.allocator.get();
  std::shared_ptr<Cycle::Variant> variant;
  size_t expected = in.toAllocate.size();
  if (in.extended) {
    // A resource this node's allocatable lists comes from a device plugin (NodeResourcesFit
    // checks it); the others from DRA.
    std::vector<std::string> viaDra;
    for (const auto& [resource, c] : in.extended->classOf) {
      if (nodeInfo.allocatable().scalarValue(resource) == 0) viaDra.push_back(resource);
    }
    variant = variantFor(*cycle, pod, viaDra);
    allocator = variant->allocator.get();
    if (variant->claim) ++expected;
  }
  if (allocator == nullptr) return {};
  // Preemption's dry run released claims on this copy: their devices are free here, for an
  // allocator of this call's own.
  std::unique_ptr<dra::Allocator> dryRun;
  dra::DeviceSet inUse;
  if (cycle->removed) {
    const dra::DeviceSet freed = dra::releasedDevices(*cycle->removed);
    if (!freed.empty()) {
      if (in.inUse) {
        for (const auto& id : *in.inUse) {
          if (!freed.contains(id)) inUse.insert(id);
        }
      }
      dryRun = makeAllocator(*cycle, variant ? variant->claim.get() : nullptr, &inUse);
      allocator = dryRun.get();
      if (allocator == nullptr) return {};
    }
  }
  const dra::Result out =
      filterTimeout_.count() > 0
          ? allocator->allocate(
                node,
                dra::Allocator::Clock::now() +
                    std::chrono::duration_cast<dra::Allocator::Clock::duration>(filterTimeout_))
          : allocator->allocate(node);
  if (out.code == dra::Result::Code::kTimedOut) {
    // Unschedulable on this node; other nodes may still do (upstream's).
    return Status::unresolvable(std::string(dra::kTimedOut))
        .withDetails({"the search for devices took longer than filterTimeout (" +
                      util::formatDuration(filterTimeout_) + ") after " +
                      std::to_string(out.steps) + " steps"});
  }
  if (out.code == dra::Result::Code::kError) return Status::error(out.message);
  if (!out.allocated() || out.allocations.size() != expected) {
    std::vector<std::string> details;
    if (!out.reason.empty()) details.push_back(out.reason);
    std::string message = out.message.empty() ? std::string(kCannotAllocate) : out.message;
    // With DRAPreemption, evicting pods that hold devices here may help.
    return Status(preemption_ ? Code::kUnschedulable : Code::kUnschedulableAndUnresolvable,
                  {std::move(message)})
        .withDetails(std::move(details));
  }
  if (dryRun) return {};  // what a dry run found is not this cycle's allocation
  std::lock_guard lock(in.mu);
  in.nodeAllocations[node.metadata.name] = {out.allocations, std::move(variant), out.quality};
  return {};
}

std::pair<PostFilterResult, Status> DynamicResources::postFilter(
    CycleState& state, const api::Pod& pod, const NodeToStatus& /*filteredStatuses*/) {
  const Cycle* cycle = state.read(kCycleKey);
  if (pod.spec.resourceClaims.empty() && (cycle == nullptr || !cycle->in->extended)) {
    return {{}, Status(Code::kUnschedulable, {})};
  }
  if (cycle == nullptr || cycle->in->none()) {
    return {{}, Status::unschedulable("no new claims to deallocate")};
  }
  Cycle::Inner& in = *cycle->in;
  std::set<size_t> unavailable;
  {
    std::lock_guard lock(in.mu);
    unavailable = in.unavailable;
  }
  for (size_t i : unavailable) {
    const dra::ClaimEntry& e = *in.claims[i];
    // An allocation still in flight (a PodGroup member's) is not the apiserver's to undo.
    if (!e.claim->status.allocation) continue;
    const auto& reserved = e.claim->status.reservedFor;
    if (!(reserved.empty() || (reserved.size() == 1 && reserved[0].uid == pod.metadata.uid))) {
      continue;
    }
    ClusterApi* api = handle_.api();
    if (api == nullptr) break;
    const nlohmann::json patch = {
        {"metadata", {{"resourceVersion", e.claim->metadata.resourceVersion}}},
        {"status", {{"allocation", nullptr}, {"reservedFor", nullptr}, {"devices", nullptr}}}};
    // Devices whose binding failed or timed out are not tried again for this claim for a
    // while, so that the next attempt takes others (the driver may fix or taint them).
    if (!in.givenUp[i].empty()) {
      state_->avoid(
          e.claim->metadata.uid, *e.claim->status.allocation,
          std::chrono::steady_clock::now() +
              std::chrono::duration_cast<std::chrono::steady_clock::duration>(bindingTimeout_));
    }
    if (auto err = api->patch(dra::claimPath(e, true), patch, nullptr)) {
      return {{},
              Status::error("deallocating ResourceClaim " + e.claim->metadata.key() + ": " +
                            err->message)};
    }
    // Not assumed: the watch brings the claim deallocated, and that change (allocated before,
    // not now) is the event that retries the pod, as upstream's.
    return {{}, Status::unschedulable("deallocation of ResourceClaim completed")};
  }
  if (in.extended && in.extended->stale) {
    // The claim an earlier attempt created for the extended resources (its binding failed):
    // deleted, so the next attempt starts anew; its deletion brings the pod back.
    if (std::string err = deleteClaim(*in.extended->stale); !err.empty()) {
      return {{}, Status::error(std::move(err))};
    }
    return {{}, Status::unschedulable("deletion of ResourceClaim completed")};
  }
  return {{}, Status::unschedulable("still not schedulable")};
}

Status DynamicResources::preScore(CycleState& state, const api::Pod& /*pod*/,
                                  const std::vector<const NodeInfo*>& /*nodes*/) {
  const Cycle* cycle = state.read(kCycleKey);
  if (cycle == nullptr) return Status::skip();
  if (scoring_.enabled() && (!cycle->in->toAllocate.empty() || cycle->in->extended)) return {};
  for (size_t i : cycle->in->toAllocate) {
    for (const auto& req : cycle->in->claims[i]->claim->spec.requests) {
      if (!req.firstAvailable.empty()) return {};
    }
  }
  return Status::skip();
}

// Upstream's computeScore: per request with a prioritized list, 8 (the list's longest) minus
// the index of the subrequest the allocation used. With device scoring, combined with the
// quality of the node's allocation (dra::combinedScore).
Status DynamicResources::score(const CycleState& state, const api::Pod& /*pod*/,
                               const NodeInfo& nodeInfo, int64_t& score) const {
  score = 0;
  const Cycle* cycle = state.read(kCycleKey);
  if (cycle == nullptr || (cycle->in->toAllocate.empty() && !scoring_.enabled())) return {};
  Cycle::Inner& in = *cycle->in;
  Cycle::NodeAllocation na;
  {
    std::lock_guard lock(in.mu);
    auto it = in.nodeAllocations.find(nodeInfo.node()->metadata.name);
    if (it == in.nodeAllocations.end()) {
      // Nothing allocated here (a device plugin serves the pod's extended resources): nothing
      // split or fragmented either.
      if (scoring_.enabled()) score = dra::combinedScore(0, nullptr);
      return {};
    }
    na = it->second;
  }
  for (size_t k = 0; k < in.toAllocate.size() && k < na.results.size(); ++k) {
    const api::ResourceClaim& claim = *in.claims[in.toAllocate[k]]->claim;
    std::set<std::string, std::less<>> used;
    for (const auto& r : na.results[k].devices) used.insert(r.request);
    for (const auto& req : claim.spec.requests) {
      for (size_t i = 0; i < req.firstAvailable.size(); ++i) {
        if (used.contains(req.name + "/" + req.firstAvailable[i].name)) {
          score += static_cast<int64_t>(kFirstAvailableMaxSize - i);
        }
      }
    }
  }
  if (scoring_.enabled()) score = dra::combinedScore(score, na.quality ? &*na.quality : nullptr);
  return {};
}

Status DynamicResources::normalizeScore(const CycleState& /*state*/, const api::Pod& /*pod*/,
                                        std::vector<NodeScore>& scores) const {
  helper::defaultNormalizeScore(kMaxNodeScore, false, scores);
  return {};
}

}  // namespace ksched::plugins
