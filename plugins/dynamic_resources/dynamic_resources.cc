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
#include <ksched/api/pod_resources.h>
#include <ksched/cluster_api.h>
#include <ksched/helper/args_json.h>
#include <ksched/helper/field_error.h>
#include <ksched/helper/normalize_score.h>

#include "plugins/dynamic_resources/extended_resources.h"
#include "plugins/helper/device_class_resolver.h"
#include "util/duration.h"

namespace ksched::plugins {

namespace {

using dra::ClaimEntryPtr;

// resource.k8s.io FirstAvailableDeviceRequestMaxSize.
constexpr int64_t kFirstAvailableMaxSize = 8;

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

// What nodes that serve the same extended resources through DRA (those not in their
// allocatable) share: the claim for them and the allocator of the pod's claims plus it.
struct dra::ExtendedVariant {
  std::shared_ptr<const api::ResourceClaim> claim;  // null: no extended resource via DRA
  std::vector<api::ContainerExtendedResourceRequest> mappings;
  std::unique_ptr<dra::Allocator> allocator;  // null: nothing to allocate
};

// What one cycle knows; copies (preemption's) share it, as upstream's stateData.
struct DynamicResources::Cycle final : StateData {
  // KEP 5004: the pod's extended resources that DeviceClasses serve.
  struct Extended {
    std::map<std::string, dra::ClassPtr, std::less<>> classOf;  // resource -> its class
    // A claim an earlier attempt created: no node takes the pod until PostFilter deleted it.
    ClaimEntryPtr stale;
    std::string uid;  // the in-memory claim's, for its allocation in flight
  };
  using Variant = dra::ExtendedVariant;
  struct NodeAllocation {
    std::vector<api::AllocationResult> results;  // the claims to allocate, then the variant's
    std::shared_ptr<Variant> variant;            // null without extended resources
  };
  struct Inner {
    std::vector<ClaimEntryPtr> claims;
    std::optional<Extended> extended;
    std::vector<std::optional<api::NodeSelector>> availableOn;  // allocated claims
    std::vector<size_t> toAllocate;  // indices into claims, in the allocator's order
    std::map<std::string, dra::ClassPtr, std::less<>> classes;
    std::shared_ptr<const std::vector<dra::SlicePtr>> slices;
    std::shared_ptr<const dra::SliceIndex> sliceIndex;  // of slices
    std::shared_ptr<const dra::DeviceSet> inUse;
    std::unique_ptr<dra::Allocator> allocator;
    std::vector<std::optional<api::AllocationResult>> allocation;  // by claim, from Reserve

    std::mutex mu;  // guards what Filter writes
    std::set<size_t> unavailable;
    std::unordered_map<std::string, NodeAllocation> nodeAllocations;
    std::map<std::vector<std::string>, std::shared_ptr<Variant>> variants;  // by DRA resources

    // From Reserve on: the extended resources' claim for the chosen node and its allocation;
    // from PreBind on, the claim as created (Unreserve deletes it).
    std::shared_ptr<Variant> chosen;
    std::optional<api::AllocationResult> extendedAllocation;
    ClaimEntryPtr created;

    // Nothing for the plugin to do: no claims, no extended resources DRA serves.
    [[nodiscard]] bool none() const { return claims.empty() && !extended; }
    // Drops the allocators (and with them the devices-in-use set): filtering is over.
    void releaseAllocators() {
      std::lock_guard lock(mu);
      allocator.reset();
      for (auto& [key, v] : variants) v->allocator.reset();
      variants.clear();
      inUse.reset();
    }
  };
  std::shared_ptr<Inner> in = std::make_shared<Inner>();

  [[nodiscard]] std::unique_ptr<StateData> clone() const override {
    return std::make_unique<Cycle>(*this);
  }
};

namespace {
inline constexpr StateKey<DynamicResources::Cycle> kCycleKey{names::kDynamicResources};
}  // namespace

DynamicResources::DynamicResources(Handle& handle, std::shared_ptr<dra::DraState> state,
                                   const DynamicResourcesArgs& args)
    : handle_(handle),
      state_(std::move(state)),
      features_(dra::Features::fromGates(handle.features())),
      extendedResources_(handle.features().enabled(features::Feature::kDRAExtendedResource)),
      filterTimeout_(handle.features().enabled(features::Feature::kDRASchedulerFilterTimeout)
                         ? args.filterTimeout
                         : std::chrono::nanoseconds(0)) {}

DynamicResourcesArgs DynamicResourcesArgs::fromJson(const nlohmann::json& j,
                                                    const features::Gates& gates) {
  DynamicResourcesArgs args;
  if (j.is_null()) return args;
  helper::expectObject(
      j, "", {helper::kApiVersionKey, helper::kKindKey, "filterTimeout", "bindingTimeout"});
  std::vector<helper::FieldError> errs;
  auto duration = [&](std::string_view key, std::chrono::nanoseconds& out) -> bool {
    std::string text;
    if (!helper::readString(j, key, "", text)) return false;
    const auto d = util::parseDuration(text);
    if (!d) {
      throw PluginArgsError(std::string(key) + ": invalid duration " + helper::quote(text));
    }
    out = *d;
    return true;
  };
  if (duration("filterTimeout", args.filterTimeout)) {
    if (!gates.enabled(features::Feature::kDRASchedulerFilterTimeout)) {
      errs.push_back(
          {"filterTimeout", "Forbidden: DRASchedulingFilterTimeout feature gate is disabled"});
    } else if (args.filterTimeout.count() < 0) {
      errs.push_back(helper::invalid("filterTimeout", util::formatDuration(args.filterTimeout),
                                     "must be zero or positive"));
    }
  }
  if (duration("bindingTimeout", args.bindingTimeout)) {
    if (!gates.enabled(features::Feature::kDRADeviceBindingConditions) ||
        !gates.enabled(features::Feature::kDRAResourceClaimDeviceStatus)) {
      errs.push_back({"bindingTimeout",
                      "Forbidden: DRADeviceBindingConditions or DRAResourceClaimDeviceStatus "
                      "feature gate is disabled"});
    } else if (args.bindingTimeout < std::chrono::seconds(1)) {
      errs.push_back(helper::invalid("bindingTimeout", util::formatDuration(args.bindingTimeout),
                                     "must be at least 1 second"));
    }
  }
  helper::throwIfAny(errs);
  return args;
}

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
  }
  if (in.none()) return finish(Status::skip());
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
  if (result.ok() && in.extended) {
    for (const auto& [resource, c] : in.extended->classOf) in.classes.emplace(c->metadata.name, c);
  }
  if (result.ok() && (!in.toAllocate.empty() || in.extended)) {
    in.slices = state_->slices();
    in.sliceIndex = sliceIndexFor(in.slices);
    in.inUse = state_->devicesInUse();
    // With extended resources the allocators wait for Filter: which of them DRA serves
    // depends on the node.
    if (!in.extended) in.allocator = makeAllocator(*cycle, nullptr);
  }
  return finish(std::move(result));
}

std::unique_ptr<dra::Allocator> DynamicResources::makeAllocator(
    const Cycle& cycle, const api::ResourceClaim* extendedClaim) const {
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
  inputs.inUse = in.inUse.get();
  inputs.compile = [this](std::string_view expression) { return celCache_.get(expression); };
  inputs.features = features_;
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
    return Status::unresolvable(out.message.empty() ? std::string(kCannotAllocate) : out.message)
        .withDetails(std::move(details));
  }
  std::lock_guard lock(in.mu);
  in.nodeAllocations[node.metadata.name] = {out.allocations, std::move(variant)};
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
    if (auto err = api->patch(claimPath(e, false), patch, nullptr); err && !err->isNotFound()) {
      return "remove finalizer of ResourceClaim " + m.key() + ": " + err->message;
    }
  }
  if (auto err = api->remove(claimPath(e, false), {{"uid", m.uid}}); err && !err->isNotFound()) {
    return "delete ResourceClaim " + m.key() + ": " + err->message;
  }
  return {};
}

Status DynamicResources::preScore(CycleState& state, const api::Pod& /*pod*/,
                                  const std::vector<const NodeInfo*>& /*nodes*/) {
  const Cycle* cycle = state.read(kCycleKey);
  if (cycle == nullptr) return Status::skip();
  for (size_t i : cycle->in->toAllocate) {
    for (const auto& req : cycle->in->claims[i]->claim->spec.requests) {
      if (!req.firstAvailable.empty()) return {};
    }
  }
  return Status::skip();
}

// Upstream's computeScore: per request with a prioritized list, 8 (the list's longest) minus
// the index of the subrequest the allocation used.
Status DynamicResources::score(const CycleState& state, const api::Pod& /*pod*/,
                               const NodeInfo& nodeInfo, int64_t& score) const {
  score = 0;
  const Cycle* cycle = state.read(kCycleKey);
  if (cycle == nullptr || cycle->in->toAllocate.empty()) return {};
  Cycle::Inner& in = *cycle->in;
  Cycle::NodeAllocation na;
  {
    std::lock_guard lock(in.mu);
    auto it = in.nodeAllocations.find(nodeInfo.node()->metadata.name);
    if (it == in.nodeAllocations.end()) return {};
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
  return {};
}

Status DynamicResources::normalizeScore(const CycleState& /*state*/, const api::Pod& /*pod*/,
                                        std::vector<NodeScore>& scores) const {
  helper::defaultNormalizeScore(kMaxNodeScore, false, scores);
  return {};
}

Status DynamicResources::reserve(CycleState& state, const api::Pod& /*pod*/,
                                 const std::string& nodeName) {
  const Cycle* cycle = state.read(kCycleKey);
  if (cycle == nullptr || cycle->in->none()) return {};
  Cycle::Inner& in = *cycle->in;
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
    state_->signalPendingAllocation(uid, std::move(claim));
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
  if (cycle == nullptr || cycle->in->none()) return Status::skip();
  if (cycle->in->chosen) return {};
  for (const auto& e : cycle->in->claims) {
    if (!reservedFor(pod, *e->claim)) return {};
  }
  return Status::skip();
}

Status DynamicResources::preBind(CycleState& state, const api::Pod& pod,
                                 const std::string& /*nodeName*/) {
  const Cycle* cycle = state.read(kCycleKey);
  if (cycle == nullptr || cycle->in->none()) return {};
  Cycle::Inner& in = *cycle->in;
  for (size_t i = 0; i < in.claims.size(); ++i) {
    if (reservedFor(pod, *in.claims[i]->claim)) continue;
    ClaimEntryPtr e = in.claims[i];
    const std::string pendingUid = e->claim->metadata.uid;
    if (Status s = bindClaim(e, in.allocation[i], pendingUid, pod); !s.ok()) return s;
    in.claims[i] = std::move(e);
  }
  if (in.chosen) return bindExtendedClaim(*cycle, pod);
  return {};
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
  if (Status s = bindClaim(e, in.extendedAllocation, in.extended->uid, pod); !s.ok()) return s;
  in.created = e;
  const std::string& name = e->claim->metadata.name;
  if (auto err = api->patchPodStatus(pod, dra::extendedClaimStatusPatch(in.chosen->mappings, name),
                                     "application/merge-patch+json")) {
    return Status::error("update pod " + pod.metadata.key() +
                         " ExtendedResourceClaimStatus: " + err->message);
  }
  return {};
}

// Writes the allocation (if Reserve made one) and the pod's reservation into the claim:
// the finalizer first (a metadata write), then the status, each with the resourceVersion read
// as precondition; a conflict re-reads the claim and tries again (5 attempts, as
// retry.DefaultRetry).
Status DynamicResources::bindClaim(ClaimEntryPtr& claimEntry,
                                   const std::optional<api::AllocationResult>& allocation,
                                   const std::string& pendingUid, const api::Pod& pod) {
  ClusterApi* api = handle_.api();
  if (api == nullptr) return Status::error("no cluster to write ResourceClaims to");
  ClaimEntryPtr e = claimEntry;
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
  if (allocation) state_->removePendingAllocation(pendingUid);
  if (!done) {
    if (failure.empty()) failure = "claim " + key + ": conflicts on every attempt";
    return Status::error(std::move(failure));
  }
  claimEntry = std::move(e);
  return {};
}

std::vector<ClusterEventWithHint> DynamicResources::eventsToRegister() const {
  auto claimHint = [this](const api::Pod& pod, const EventObject& oldObj,
                          const EventObject& newObj) {
    const api::ResourceClaim* before = as<api::ResourceClaim>(oldObj);
    const api::ResourceClaim* after = as<api::ResourceClaim>(newObj);
    if (after == nullptr) {
      // Deleted: its devices are free if it had any; the pod's own extended-resources claim
      // from an earlier attempt was what held it back.
      if (before == nullptr) return QueueingHint::kSkip;
      if (before->status.allocation) return QueueingHint::kQueue;
      for (const auto& o : before->metadata.ownerReferences) {
        if (o.controller && o.uid == pod.metadata.uid &&
            before->metadata.annotations.contains(dra::kExtendedResourceClaimAnnotation)) {
          return QueueingHint::kQueue;
        }
      }
      return QueueingHint::kSkip;
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
  return makePluginFactory<DynamicResources>(
      [](const nlohmann::json& args, const features::Gates& gates) {
        return DynamicResourcesArgs::fromJson(args, gates);
      },
      [](const DynamicResourcesArgs& args, Handle& h) {
        auto state = h.shared<dra::DraState>(names::kDynamicResources,
                                             [&h] { return std::make_shared<dra::DraState>(h); });
        if (h.features().enabled(features::Feature::kDRAExtendedResource)) {
          helper::DeviceClassResolver::of(h)->set([state](std::string_view resource) {
            return dra::isDraExtendedResourceName(resource) &&
                   state->classForExtendedResource(resource) != nullptr;
          });
        }
        return std::make_unique<DynamicResources>(h, std::move(state), args);
      });
}

bool DynamicResources::signPod(const api::Pod& pod) const {
  return pod.spec.resourceClaims.empty() &&
         !(extendedResources_ && dra::requestsDraExtendedResourceName(pod));
}

}  // namespace ksched::plugins
