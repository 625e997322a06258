#include "plugins/dynamic_resources/dynamic_resources.h"

#include <spdlog/spdlog.h>

#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>

#include <ksched/api/decode.h>
#include <ksched/api/features.h>
#include <ksched/api/pod.h>
#include <ksched/cluster_api.h>

namespace ksched::plugins {

namespace {

using dra::ClaimEntryPtr;

bool reservedFor(const api::Pod& pod, const api::ResourceClaim& claim) {
  for (const auto& r : claim.status.reservedFor) {
    if (r.uid == pod.metadata.uid) return true;
  }
  return false;
}

bool canBeReserved(const api::ResourceClaim& claim) {
  return claim.status.reservedFor.size() < dra::kReservedForMaxSize;
}

bool ownedBy(const api::ResourceClaim& claim, const api::Pod& pod) {
  if (claim.metadata.namespace_ != pod.metadata.namespace_) return false;
  for (const auto& o : claim.metadata.ownerReferences) {
    if (o.controller) return o.uid == pod.metadata.uid;
  }
  return false;
}

// The claim's path for writes, in the API version it was served in.
std::string claimPath(const dra::ClaimEntry& e, bool status) {
  std::string apiVersion = e.raw.value("apiVersion", "");
  if (apiVersion.empty()) apiVersion = "resource.k8s.io/v1";
  const auto& m = e.claim->metadata;
  return "/apis/" + apiVersion + "/namespaces/" + m.namespace_ + "/resourceclaims/" + m.name +
         (status ? "/status" : "");
}

nlohmann::json reservedForJson(const std::vector<api::ResourceClaimConsumerReference>& refs) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : refs) out.push_back(api::toJson(r));
  return out;
}

}  // namespace

// What one cycle knows; copies (preemption's) share it, as upstream's stateData.
struct DynamicResources::Cycle final : StateData {
  struct Inner {
    std::vector<ClaimEntryPtr> claims;
    std::vector<std::optional<api::NodeSelector>> availableOn;  // allocated claims
    std::vector<size_t> toAllocate;  // indices into claims, in the allocator's order
    std::map<std::string, dra::ClassPtr, std::less<>> classes;
    std::shared_ptr<const std::vector<dra::SlicePtr>> slices;
    std::shared_ptr<const dra::DeviceSet> inUse;
    std::unique_ptr<dra::Allocator> allocator;
    std::vector<std::optional<api::AllocationResult>> allocation;  // by claim, from Reserve

    std::mutex mu;  // guards what Filter writes
    std::set<size_t> unavailable;
    std::unordered_map<std::string, std::vector<api::AllocationResult>> nodeAllocations;
  };
  std::shared_ptr<Inner> in = std::make_shared<Inner>();

  [[nodiscard]] std::unique_ptr<StateData> clone() const override {
    return std::make_unique<Cycle>(*this);
  }
};

namespace {
inline constexpr StateKey<DynamicResources::Cycle> kCycleKey{names::kDynamicResources};
}  // namespace

DynamicResources::DynamicResources(Handle& handle, std::shared_ptr<dra::DraState> state)
    : handle_(handle),
      state_(std::move(state)),
      features_(dra::Features::fromGates(features::current())) {}

DynamicResources::PodClaims DynamicResources::podClaims(const api::Pod& pod) const {
  PodClaims out;
  for (const auto& pc : pod.spec.resourceClaims) {
    std::optional<std::string> name;
    bool mustCheckOwner = false;
    if (pc.resourceClaimName) {
      name = pc.resourceClaimName;
    } else if (pc.resourceClaimTemplateName) {
      bool found = false;
      for (const auto& s : pod.status.resourceClaimStatuses) {
        if (s.name == pc.name) {
          found = true;
          name = s.resourceClaimName;
          mustCheckOwner = true;
        }
      }
      if (!found) {
        out.error = "pod \"" + pod.metadata.key() + "\": ResourceClaim not created yet";
        return out;
      }
    } else {
      out.error = "pod \"" + pod.metadata.key() + "\", spec.resourceClaim \"" + pc.name +
                  "\": none of the supported fields are set";
      return out;
    }
    if (!name) continue;  // no claim was needed
    ClaimEntryPtr e = state_->claim(pod.metadata.namespace_, *name);
    if (!e) {
      out.error = "could not find ResourceClaim \"" + pod.metadata.namespace_ + "/" + *name + "\"";
      return out;
    }
    if (e->claim->metadata.deletionTimestamp) {
      out.error = "resourceclaim \"" + *name + "\" is being deleted";
      return out;
    }
    if (mustCheckOwner && !ownedBy(*e->claim, pod)) {
      out.error = "ResourceClaim " + e->claim->metadata.key() + " was not created for pod " +
                  pod.metadata.key() + " (pod is not owner)";
      return out;
    }
    out.claims.push_back(std::move(e));
  }
  return out;
}

Status DynamicResources::preEnqueue(const api::Pod& pod) {
  if (pod.spec.resourceClaims.empty()) return {};
  auto pc = podClaims(pod);
  if (!pc.error.empty()) return Status::unresolvable(std::move(pc.error));
  return {};
}

Status DynamicResources::preFilter(CycleState& state, const api::Pod& pod,
                                   const NodeInfoLister& /*nodes*/, PreFilterResult& /*result*/) {
  auto cycle = std::make_unique<Cycle>();
  Cycle::Inner& in = *cycle->in;
  if (pod.spec.resourceClaims.empty()) {
    state.write(kCycleKey, std::move(cycle));
    return Status::skip();
  }
  auto pc = podClaims(pod);
  if (!pc.error.empty()) {
    state.write(kCycleKey, std::move(cycle));
    return Status::unresolvable(std::move(pc.error));
  }
  if (pc.claims.empty()) {
    state.write(kCycleKey, std::move(cycle));
    return Status::skip();
  }
  in.claims = std::move(pc.claims);
  in.availableOn.resize(in.claims.size());
  in.allocation.resize(in.claims.size());
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
      if (!canBeReserved(claim) && !reservedFor(pod, claim)) {
        result = Status::unresolvable("resourceclaim in use");
        break;
      }
      in.availableOn[i] = claim.status.allocation->nodeSelector;
      continue;
    }
    if (state_->hasPendingAllocation(claim.metadata.uid)) {
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
  if (result.ok() && !in.toAllocate.empty()) {
    in.slices = state_->slices();
    in.inUse = state_->devicesInUse();
    dra::AllocatorInputs inputs;
    for (size_t i : in.toAllocate) inputs.claims.push_back(in.claims[i]->claim.get());
    inputs.deviceClass = [&in](std::string_view name) -> const api::DeviceClass* {
      auto it = in.classes.find(name);
      return it == in.classes.end() ? nullptr : it->second.get();
    };
    inputs.slices = *in.slices;
    inputs.inUse = in.inUse.get();
    inputs.compile = [this](std::string_view expression) { return celCache_.get(expression); };
    inputs.features = features_;
    in.allocator = std::make_unique<dra::Allocator>(std::move(inputs));
  }
  state.write(kCycleKey, std::move(cycle));
  return result;
}

Status DynamicResources::filter(const CycleState& state, const api::Pod& /*pod*/,
                                const NodeInfo& nodeInfo) const {
  const Cycle* cycle = state.read(kCycleKey);
  if (cycle == nullptr || cycle->in->claims.empty()) return {};
  Cycle::Inner& in = *cycle->in;
  const api::Node& node = *nodeInfo.node();
  std::vector<size_t> unavailable;
  for (size_t i = 0; i < in.claims.size(); ++i) {
    if (in.availableOn[i] && !in.availableOn[i]->matches(node)) unavailable.push_back(i);
  }
  if (!unavailable.empty()) {
    std::lock_guard lock(in.mu);
    in.unavailable.insert(unavailable.begin(), unavailable.end());
    std::vector<std::string> details;
    for (size_t i : unavailable) {
      details.push_back("claim " + in.claims[i]->claim->metadata.name +
                        " is allocated on other nodes (its allocation's node selector does not "
                        "match this node)");
    }
    return Status::unresolvable(std::string(kNotAvailableOnNode)).withDetails(std::move(details));
  }
  if (!in.allocator) return {};
  dra::Result out = in.allocator->allocate(node);
  if (out.code == dra::Result::Code::kError || out.code == dra::Result::Code::kTimedOut) {
    return Status::error(std::move(out.message));
  }
  if (!out.allocated() || out.allocations.size() != in.toAllocate.size()) {
    std::vector<std::string> details;
    if (!out.reason.empty()) details.push_back(std::move(out.reason));
    return Status::unresolvable(out.message.empty() ? std::string(kCannotAllocate)
                                                    : std::move(out.message))
        .withDetails(std::move(details));
  }
  std::lock_guard lock(in.mu);
  in.nodeAllocations[node.metadata.name] = std::move(out.allocations);
  return {};
}

std::pair<PostFilterResult, Status> DynamicResources::postFilter(
    CycleState& state, const api::Pod& pod, const NodeToStatus& /*filteredStatuses*/) {
  if (pod.spec.resourceClaims.empty()) return {{}, Status(Code::kUnschedulable, {})};
  const Cycle* cycle = state.read(kCycleKey);
  if (cycle == nullptr || cycle->in->claims.empty()) {
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
    const auto& reserved = e.claim->status.reservedFor;
    if (!(reserved.empty() || (reserved.size() == 1 && reserved[0].uid == pod.metadata.uid))) {
      continue;
    }
    ClusterApi* api = handle_.api();
    if (api == nullptr) break;
    const nlohmann::json patch = {
        {"metadata", {{"resourceVersion", e.claim->metadata.resourceVersion}}},
        {"status", {{"allocation", nullptr}, {"reservedFor", nullptr}}}};
    nlohmann::json written;
    if (auto err = api->patch(claimPath(e, true), patch, &written)) {
      return {{},
              Status::error("deallocating ResourceClaim " + e.claim->metadata.key() + ": " +
                            err->message)};
    }
    try {
      state_->assume(dra::DraState::decodeClaim(written));
    } catch (const std::exception&) {
      // The watch brings the claim as written.
    }
    return {{}, Status::unschedulable("deallocation of ResourceClaim completed")};
  }
  return {{}, Status::unschedulable("still not schedulable")};
}

Status DynamicResources::reserve(CycleState& state, const api::Pod& /*pod*/,
                                 const std::string& nodeName) {
  const Cycle* cycle = state.read(kCycleKey);
  if (cycle == nullptr || cycle->in->claims.empty() || !cycle->in->allocator) return {};
  Cycle::Inner& in = *cycle->in;
  std::vector<api::AllocationResult> allocations;
  {
    std::lock_guard lock(in.mu);
    auto it = in.nodeAllocations.find(nodeName);
    if (it == in.nodeAllocations.end()) {
      return Status::error("claim allocation not found for node");
    }
    allocations = it->second;
  }
  // Filtering is over: the devices-in-use set is let go, so the state changes it in place
  // instead of copying it.
  in.allocator.reset();
  in.inUse.reset();
  if (allocations.size() != in.toAllocate.size()) {
    return Status::error("internal error, have " + std::to_string(allocations.size()) +
                         " allocations, " + std::to_string(in.toAllocate.size()) +
                         " claims to allocate");
  }
  for (size_t k = 0; k < in.toAllocate.size(); ++k) {
    const size_t i = in.toAllocate[k];
    in.allocation[i] = std::move(allocations[k]);
    auto claim = std::make_shared<api::ResourceClaim>(*in.claims[i]->claim);
    claim->status.allocation = in.allocation[i];
    const std::string uid = claim->metadata.uid;
    state_->signalPendingAllocation(uid, std::move(claim));
  }
  return {};
}

void DynamicResources::unreserve(CycleState& state, const api::Pod& pod,
                                 const std::string& /*nodeName*/) {
  const Cycle* cycle = state.read(kCycleKey);
  if (cycle == nullptr || cycle->in->claims.empty()) return;
  Cycle::Inner& in = *cycle->in;
  for (size_t i = 0; i < in.claims.size(); ++i) {
    const dra::ClaimEntry& e = *in.claims[i];
    if (state_->removePendingAllocation(e.claim->metadata.uid)) {
      state_->restore(e.claim->metadata.namespace_, e.claim->metadata.name);
    }
    if (!e.claim->status.allocation || !reservedFor(pod, *e.claim)) continue;
    std::vector<api::ResourceClaimConsumerReference> rest;
    for (const auto& r : e.claim->status.reservedFor) {
      if (r.uid != pod.metadata.uid) rest.push_back(r);
    }
    ClusterApi* api = handle_.api();
    if (api == nullptr) continue;
    const nlohmann::json patch = {
        {"metadata", {{"resourceVersion", e.claim->metadata.resourceVersion}}},
        {"status",
         {{"reservedFor", rest.empty() ? nlohmann::json(nullptr) : reservedForJson(rest)}}}};
    if (auto err = api->patch(claimPath(e, true), patch, nullptr)) {
      spdlog::warn("unreserve: removing pod {} from ResourceClaim {}: {}", pod.metadata.key(),
                   e.claim->metadata.key(), err->message);
    }
  }
}

Status DynamicResources::preBindPreFlight(const CycleState& state, const api::Pod& pod,
                                          const std::string& /*nodeName*/) {
  const Cycle* cycle = state.read(kCycleKey);
  if (cycle == nullptr || cycle->in->claims.empty()) return Status::skip();
  for (const auto& e : cycle->in->claims) {
    if (!reservedFor(pod, *e->claim)) return {};
  }
  return Status::skip();
}

Status DynamicResources::preBind(CycleState& state, const api::Pod& pod,
                                 const std::string& /*nodeName*/) {
  const Cycle* cycle = state.read(kCycleKey);
  if (cycle == nullptr || cycle->in->claims.empty()) return {};
  for (size_t i = 0; i < cycle->in->claims.size(); ++i) {
    if (reservedFor(pod, *cycle->in->claims[i]->claim)) continue;
    if (Status s = bindClaim(*cycle, i, pod); !s.ok()) return s;
  }
  return {};
}

// Writes the allocation (if Reserve made one) and the pod's reservation into the claim:
// the finalizer first (a metadata write), then the status, each with the resourceVersion read
// as precondition; a conflict re-reads the claim and tries again (5 attempts, as
// retry.DefaultRetry).
Status DynamicResources::bindClaim(const Cycle& cycle, size_t index, const api::Pod& pod) {
  Cycle::Inner& in = *cycle.in;
  ClusterApi* api = handle_.api();
  if (api == nullptr) return Status::error("no cluster to write ResourceClaims to");
  ClaimEntryPtr e = in.claims[index];
  const std::optional<api::AllocationResult>& allocation = in.allocation[index];
  const std::string key = e->claim->metadata.key();
  std::string failure;
  bool done = false;
  for (int attempt = 0; attempt < 5 && !done; ++attempt) {
    if (attempt > 0) {
      nlohmann::json fresh;
      if (auto err = api->get(claimPath(*e, false), &fresh)) {
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
        if (auto err = api->patch(claimPath(*e, false), patch, &written)) {
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
    reserved.push_back({"", "pods", pod.metadata.name, pod.metadata.uid});
    nlohmann::json status = {{"reservedFor", reservedForJson(reserved)}};
    if (allocation) status["allocation"] = api::toJson(*allocation);
    const nlohmann::json patch = {{"metadata", {{"resourceVersion", rv}}}, {"status", status}};
    nlohmann::json written;
    if (auto err = api->patch(claimPath(*e, true), patch, &written)) {
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
  if (allocation) state_->removePendingAllocation(in.claims[index]->claim->metadata.uid);
  if (!done) {
    if (failure.empty()) failure = "claim " + key + ": conflicts on every attempt";
    return Status::error(std::move(failure));
  }
  in.claims[index] = e;
  return {};
}

std::vector<ClusterEventWithHint> DynamicResources::eventsToRegister() const {
  auto claimHint = [this](const api::Pod& pod, const EventObject& oldObj,
                          const EventObject& newObj) {
    const api::ResourceClaim* before = as<api::ResourceClaim>(oldObj);
    const api::ResourceClaim* after = as<api::ResourceClaim>(newObj);
    if (after == nullptr) {
      // Deleted: its devices are free if it had any.
      return before != nullptr && before->status.allocation ? QueueingHint::kQueue
                                                            : QueueingHint::kSkip;
    }
    auto pc = podClaims(pod);
    if (!pc.error.empty()) return QueueingHint::kSkip;
    if (before != nullptr && before->status.allocation && !after->status.allocation) {
      return QueueingHint::kQueue;  // deallocated: devices free for anyone
    }
    bool uses = false;
    for (const auto& e : pc.claims) uses = uses || e->claim->metadata.uid == after->metadata.uid;
    if (!uses) return QueueingHint::kSkip;
    if (before == nullptr) return QueueingHint::kQueue;
    return before->status == after->status ? QueueingHint::kSkip : QueueingHint::kQueue;
  };
  auto podHint = [this](const api::Pod& pod, const EventObject& /*oldObj*/,
                        const EventObject& newObj) {
    const api::Pod* modified = as<api::Pod>(newObj);
    if (modified == nullptr || modified->metadata.uid != pod.metadata.uid) {
      return QueueingHint::kSkip;
    }
    return podClaims(*modified).error.empty() ? QueueingHint::kQueue : QueueingHint::kSkip;
  };
  return {
      {EventResource::kNode, kAdd | kUpdateNodeLabel},
      {EventResource::kResourceClaim, kAdd | kUpdate | kDelete, claimHint},
      {EventResource::kPod, kUpdatePodGeneratedResourceClaim, podHint},
      {EventResource::kDeviceClass, kAdd | kUpdate},
      {EventResource::kResourceSlice, kAdd | kUpdate},
  };
}

PluginFactory dynamicResourcesFactory() {
  return makePluginFactory<DynamicResources>([](Handle& h) {
    auto state = h.shared<dra::DraState>(names::kDynamicResources,
                                         [&h] { return std::make_shared<dra::DraState>(h); });
    return std::make_unique<DynamicResources>(h, std::move(state));
  });
}

}  // namespace ksched::plugins
