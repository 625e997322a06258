#include "plugins/node_resources_fit/node_resources_fit.h"

#include <algorithm>
#include <functional>
#include <type_traits>
#include <utility>
#include <variant>

#include <ksched/api/features.h>
#include <ksched/api/pod_resources.h>

#include "plugins/helper/device_class_resolver.h"

namespace ksched::plugins {
namespace {

struct PreFilterState final : StateData {
  api::Resource podRequest;
  std::vector<std::string> viaDra;  // NodeResourcesFit::draServable

  [[nodiscard]] std::unique_ptr<StateData> clone() const override {
    return std::make_unique<PreFilterState>(*this);
  }
};

struct PreScoreState final : StateData {
  std::vector<int64_t> podRequests;  // per configured scoring resource

  [[nodiscard]] std::unique_ptr<StateData> clone() const override {
    return std::make_unique<PreScoreState>(*this);
  }
};

constexpr StateKey<PreFilterState> kPreFilterKey{NodeResourcesFit::kPreFilterStateKey};
constexpr StateKey<PreScoreState> kPreScoreKey{NodeResourcesFit::kPreScoreStateKey};

}  // namespace

std::string NodeResourcesFit::insufficientReason(std::string_view resourceName) {
  return "Insufficient " + std::string(resourceName);
}

NodeResourcesFit::NodeResourcesFit(const NodeResourcesFitArgs& args, const Handle* handle,
                                   std::function<bool(std::string_view)> draServes)
    : handle_(handle),
      gates_(handle != nullptr ? handle->features() : features::Gates{}),
      ignoredResources_(args.ignoredResources.begin(), args.ignoredResources.end()),
      ignoredResourceGroups_(args.ignoredResourceGroups.begin(), args.ignoredResourceGroups.end()),
      scorer_(args.scoringStrategy, gates_),
      draServes_(std::move(draServes)) {}

std::vector<std::string> NodeResourcesFit::draServable(const api::Resource& podRequest) const {
  std::vector<std::string> out;
  if (!draServes_) return out;
  for (const auto& [name, quantity] : podRequest.scalar) {
    if (quantity > 0 && draServes_(name)) out.push_back(name);
  }
  return out;
}

api::Resource NodeResourcesFit::computePodResourceRequest(const api::Pod& pod) const {
  return api::schedulingRequestsResource(pod, gates_);
}

bool NodeResourcesFit::ignored(const std::string& resourceName) const {
  if (!api::isExtendedResourceName(resourceName)) return false;
  if (ignoredResources_.contains(resourceName)) return true;
  if (ignoredResourceGroups_.empty()) return false;
  const std::string_view name = resourceName;
  return ignoredResourceGroups_.contains(name.substr(0, name.find('/')));
}

std::vector<NodeResourcesFit::InsufficientResource> NodeResourcesFit::fitsRequest(
    const api::Resource& podRequest, const NodeInfo& nodeInfo) const {
  return fitsAllocatable(podRequest, nodeInfo.allocatable(), nodeInfo.requested(),
                         static_cast<int64_t>(nodeInfo.pods().size()), draServable(podRequest));
}

std::vector<NodeResourcesFit::InsufficientResource> NodeResourcesFit::fitsAllocatable(
    const api::Resource& podRequest, const api::Resource& alloc, const api::Resource& used,
    int64_t podCount, const std::vector<std::string>& viaDra, const api::Resource* counted) const {
  std::vector<InsufficientResource> out;
  if (podCount + 1 > alloc.allowedPodNumber) {
    out.push_back({std::string(api::kResourcePods), std::string(kReasonTooManyPods), 1, podCount,
                   alloc.allowedPodNumber, false});
  }
  if (podRequest.milliCPU == 0 && podRequest.memory == 0 && podRequest.ephemeralStorage == 0 &&
      podRequest.scalar.empty()) {
    return out;
  }

  // The reason string is built only for a resource that does not fit: Filter runs this on
  // every node it visits, and most fit. A pod whose resize waits needs room only for what its
  // node does not count yet (`already`); upstream judges "unresolvable" on the full request for
  // cpu, memory and ephemeral storage, on that difference for scalar resources.
  auto check = [&out](std::string_view resource, std::string_view reason, int64_t request,
                      int64_t inUse, int64_t capacity, int64_t already, bool fullUnresolvable) {
    const int64_t need = std::max<int64_t>(0, request - already);
    if (request > 0 && need > capacity - inUse) {
      out.push_back({std::string(resource), std::string(reason), request, inUse, capacity,
                     (fullUnresolvable ? request : need) > capacity});
    }
  };
  const api::Resource none;
  const api::Resource& had = counted != nullptr ? *counted : none;
  check(api::kResourceCPU, kReasonInsufficientCPU, podRequest.milliCPU, used.milliCPU,
        alloc.milliCPU, had.milliCPU, true);
  check(api::kResourceMemory, kReasonInsufficientMemory, podRequest.memory, used.memory,
        alloc.memory, had.memory, true);
  check(api::kResourceEphemeralStorage, kReasonInsufficientEphemeralStorage,
        podRequest.ephemeralStorage, used.ephemeralStorage, alloc.ephemeralStorage,
        had.ephemeralStorage, true);
  for (const auto& [name, quantity] : podRequest.scalar) {
    if (quantity == 0 || ignored(name)) continue;
    if (!viaDra.empty() && alloc.scalarValue(name) == 0 &&
        std::ranges::find(viaDra, name) != viaDra.end()) {
      continue;  // DynamicResources allocates it on this node
    }
    check(name, insufficientReason(name), quantity, used.scalarValue(name), alloc.scalarValue(name),
          had.scalarValue(name), false);
  }
  return out;
}

bool NodeResourcesFit::resizeDeferred(const api::Pod& pod) const {
  return !pod.spec.nodeName.empty() &&
         gates_.enabled(features::Feature::kInPlacePodVerticalScalingSchedulerPreemption) &&
         api::isPodResizeDeferred(pod);
}

const api::Resource* NodeResourcesFit::countedForDeferred(const api::Pod& pod,
                                                          const NodeInfo& nodeInfo) const {
  if (pod.spec.nodeName != nodeInfo.name() || !resizeDeferred(pod)) return nullptr;
  for (const PodInfoPtr& pi : nodeInfo.pods()) {
    if (pi->pod->metadata.uid == pod.metadata.uid) return &pi->requests;
  }
  return nullptr;
}

Status NodeResourcesFit::preFilter(CycleState& state, const api::Pod& pod,
                                   const NodeInfoLister& /*nodes*/, PreFilterResult& /*result*/) {
  auto s = std::make_unique<PreFilterState>();
  s->podRequest = computePodResourceRequest(pod);
  s->viaDra = draServable(s->podRequest);
  state.write(kPreFilterKey, std::move(s));
  return {};
}

Status NodeResourcesFit::filter(const CycleState& state, const api::Pod& pod,
                                const NodeInfo& nodeInfo) const {
  const PreFilterState* s = state.read(kPreFilterKey);
  if (s == nullptr) {
    return Status::error("error reading \"" + std::string(kPreFilterStateKey) +
                         "\" from cycleState: not found");
  }
  const std::vector<InsufficientResource> insufficient =
      fitsAllocatable(s->podRequest, nodeInfo.allocatable(), nodeInfo.requested(),
                      static_cast<int64_t>(nodeInfo.pods().size()), s->viaDra,
                      pod.spec.nodeName.empty() ? nullptr : countedForDeferred(pod, nodeInfo));
  if (insufficient.empty()) return {};
  Code code = Code::kUnschedulable;
  std::vector<std::string> reasons;
  reasons.reserve(insufficient.size());
  for (const InsufficientResource& r : insufficient) {
    reasons.push_back(r.reason);
    if (r.unresolvable) code = Code::kUnschedulableAndUnresolvable;
  }
  return {code, std::move(reasons)};
}

Status NodeResourcesFit::preScore(CycleState& state, const api::Pod& pod,
                                  const std::vector<const NodeInfo*>& /*nodes*/) {
  auto s = std::make_unique<PreScoreState>();
  s->podRequests = scorer_.podRequests(pod);
  state.write(kPreScoreKey, std::move(s));
  return {};
}

Status NodeResourcesFit::score(const CycleState& state, const api::Pod& pod,
                               const NodeInfo& nodeInfo, int64_t& score) const {
  if (const PreScoreState* s = state.read(kPreScoreKey)) {
    score = scorer_.score(nodeInfo, s->podRequests);
  } else {
    score = scorer_.score(nodeInfo, scorer_.podRequests(pod));
  }
  return {};
}

std::vector<ClusterEventWithHint> NodeResourcesFit::eventsToRegister() const {
  std::vector<ClusterEventWithHint> out = {
      {EventResource::kPod, kDelete | kUpdatePodScaleDown,
       std::bind_front(&NodeResourcesFit::isSchedulableAfterPodEvent, this)},
      {EventResource::kNode, kAdd | kUpdateNodeAllocatable,
       std::bind_front(&NodeResourcesFit::isSchedulableAfterNodeChange, this)},
  };
  if (draServes_) {
    // A pod may wait for a class that serves its extended resource.
    out.push_back({EventResource::kDeviceClass, kAdd | kUpdate,
                   std::bind_front(&NodeResourcesFit::isSchedulableAfterDeviceClassEvent, this)});
  }
  return out;
}

QueueingHint NodeResourcesFit::isSchedulableAfterDeviceClassEvent(const api::Pod& pod,
                                                                  const EventObject& oldObj,
                                                                  const EventObject& newObj) const {
  const api::DeviceClass* after = as<api::DeviceClass>(newObj);
  if (after == nullptr) return QueueingHint::kQueue;
  const api::Resource request = computePodResourceRequest(pod);
  auto requested = [&](std::string_view name) { return request.scalarValue(name) > 0; };
  const std::optional<std::string>& name = after->spec.extendedResourceName;
  const api::DeviceClass* before = as<api::DeviceClass>(oldObj);
  if (before == nullptr) {
    if (name && requested(*name)) return QueueingHint::kQueue;
    return requested("deviceclass.resource.kubernetes.io/" + after->metadata.name)
               ? QueueingHint::kQueue
               : QueueingHint::kSkip;
  }
  return name && before->spec.extendedResourceName != name && requested(*name)
             ? QueueingHint::kQueue
             : QueueingHint::kSkip;
}

QueueingHint NodeResourcesFit::isSchedulableAfterPodEvent(const api::Pod& pod,
                                                          const EventObject& oldObj,
                                                          const EventObject& newObj) const {
  const api::Pod* original = as<api::Pod>(oldObj);
  const api::Pod* modified = as<api::Pod>(newObj);
  if (original == nullptr) return QueueingHint::kQueue;
  // A pod whose resize waits can only gain room on its own node (or by shrinking itself).
  if (const api::Pod* changed = modified != nullptr ? modified : original;
      resizeDeferred(pod) && changed->metadata.uid != pod.metadata.uid &&
      changed->spec.nodeName != pod.spec.nodeName) {
    return QueueingHint::kSkip;
  }
  if (modified == nullptr) {
    // Deleted: a pod on a node held resources, a nominated one reserved them.
    if (!original->spec.nodeName.empty())
      return fitsCurrentNode(pod, original->spec.nodeName, {}, oldObj);
    if (original->status.nominatedNodeName.empty()) return QueueingHint::kSkip;
    return fitsCurrentNode(pod, original->status.nominatedNodeName, original->metadata.uid, oldObj);
  }
  // Scaled down. As upstream isSchedulableAfterPodScaleDown: the requests with the resize
  // status (spec or status may have shrunk) and always with pod-level requests.
  if (modified->metadata.uid == pod.metadata.uid) return QueueingHint::kQueue;
  if (modified->spec.nodeName.empty()) return QueueingHint::kSkip;
  api::PodResourcesOptions options(gates_);
  options.skipPodLevelResources = false;
  const api::Resource before = api::effectiveRequestsResource(*original, options);
  const api::Resource after = api::effectiveRequestsResource(*modified, options);
  for (const auto& [name, q] : api::effectiveRequests(pod, options)) {
    if (q.isZero()) continue;
    bool freed = false;
    if (name == api::kResourceCPU) {
      freed = before.milliCPU > after.milliCPU;
    } else if (name == api::kResourceMemory) {
      freed = before.memory > after.memory;
    } else if (name == api::kResourceEphemeralStorage) {
      freed = before.ephemeralStorage > after.ephemeralStorage;
    } else if (api::isScalarResourceName(name)) {
      freed = before.scalarValue(name) > after.scalarValue(name);
    }
    if (freed) return fitsCurrentNode(pod, modified->spec.nodeName, {}, newObj);
  }
  return QueueingHint::kSkip;
}

namespace {

// The node an event freed room on, as the cache held it when the event's first hint asked. An
// event is judged for every pending pod the plugin rejected; they share one copy of the node
// (a copy per pod was most of the informer's CPU with hundreds of pods waiting to preempt).
// Per thread: hints run on the informer threads and, for pods in flight, the scheduling thread.
struct FreedNode {
  const void* plugin = nullptr;
  EventObject event;  // held, so its address is not reused for another event meanwhile
  std::shared_ptr<const NodeInfo> info;
  std::vector<PodInfoPtr> nominated;
};

const void* address(const EventObject& o) {
  return std::visit(
      [](const auto& p) -> const void* {
        if constexpr (std::is_same_v<std::decay_t<decltype(p)>, std::monostate>) {
          return nullptr;
        } else {
          return p.get();
        }
      },
      o);
}

}  // namespace

QueueingHint NodeResourcesFit::fitsCurrentNode(const api::Pod& pod, const std::string& nodeName,
                                               std::string_view goneUid,
                                               const EventObject& trigger) const {
  if (handle_ == nullptr) return QueueingHint::kQueue;
  thread_local FreedNode freed;
  if (freed.plugin != this || address(trigger) == nullptr ||
      address(freed.event) != address(trigger)) {
    freed.plugin = this;
    freed.event = trigger;
    freed.info = handle_->currentNodeInfo(nodeName);
    freed.nominated =
        freed.info != nullptr ? handle_->nominatedPodsForNode(nodeName) : std::vector<PodInfoPtr>{};
  }
  const NodeInfo* ni = freed.info.get();
  if (ni == nullptr) return QueueingHint::kQueue;
  // As the Filter will see the node: pods nominated to it with the pod's priority or higher
  // (waiting for their own victims to leave) take their room first. Without this, every pod
  // waiting for preemption would be retried whenever any node's victims leave.
  api::Resource used = ni->requested();
  auto count = static_cast<int64_t>(ni->pods().size());
  const int32_t priority = api::podPriority(pod);
  for (const PodInfoPtr& n : freed.nominated) {
    const std::string& uid = n->pod->metadata.uid;
    if (uid == pod.metadata.uid || uid == goneUid || api::podPriority(*n->pod) < priority) continue;
    used.add(n->requests);
    ++count;
  }
  const api::Resource request = computePodResourceRequest(pod);
  return fitsAllocatable(request, ni->allocatable(), used, count, draServable(request),
                         pod.spec.nodeName.empty() ? nullptr : countedForDeferred(pod, *ni))
                 .empty()
             ? QueueingHint::kQueue
             : QueueingHint::kSkip;
}

QueueingHint NodeResourcesFit::isSchedulableAfterNodeChange(const api::Pod& pod,
                                                            const EventObject& oldObj,
                                                            const EventObject& newObj) const {
  const api::Node* modified = as<api::Node>(newObj);
  if (modified == nullptr) return QueueingHint::kQueue;
  if (resizeDeferred(pod) && modified->metadata.name != pod.spec.nodeName) {
    return QueueingHint::kSkip;  // it can only gain room on its own node
  }
  const api::Resource podRequest = computePodResourceRequest(pod);
  const api::Resource alloc = api::Resource::fromList(modified->status.allocatable);
  const std::vector<std::string> viaDra = draServable(podRequest);
  if (!fitsAllocatable(podRequest, alloc, api::Resource{}, 0, viaDra).empty()) {
    return QueueingHint::kSkip;
  }
  const api::Node* original = as<api::Node>(oldObj);
  if (original == nullptr) return QueueingHint::kQueue;

  // Updated: only more of something the pod needs can make it fit.
  const api::Resource was = api::Resource::fromList(original->status.allocatable);
  if (alloc.allowedPodNumber > was.allowedPodNumber) return QueueingHint::kQueue;
  if ((podRequest.milliCPU > 0 && alloc.milliCPU > was.milliCPU) ||
      (podRequest.memory > 0 && alloc.memory > was.memory) ||
      (podRequest.ephemeralStorage > 0 && alloc.ephemeralStorage > was.ephemeralStorage)) {
    return QueueingHint::kQueue;
  }
  for (const auto& [name, quantity] : podRequest.scalar) {
    if (quantity != 0 && alloc.scalarValue(name) > was.scalarValue(name)) {
      return QueueingHint::kQueue;
    }
    // DRA serves it on this node: its devices, not the allocatable, decide.
    if (quantity != 0 && alloc.scalarValue(name) == 0 &&
        std::ranges::find(viaDra, name) != viaDra.end()) {
      return QueueingHint::kQueue;
    }
  }
  return QueueingHint::kSkip;
}

namespace {

// With DRAExtendedResource, the scheduler's DeviceClasses (as DynamicResources knows them) say
// which extended resources DRA serves.
std::function<bool(std::string_view)> draServesFor(Handle& handle) {
  if (!handle.features().enabled(features::Feature::kDRAExtendedResource)) return {};
  auto resolver = helper::DeviceClassResolver::of(handle);
  return [resolver](std::string_view resource) { return resolver->serves(resource); };
}

}  // namespace

PluginFactory nodeResourcesFitFactory() {
  return makePluginFactory<NodeResourcesFit>(decodeAndValidate<NodeResourcesFitArgs>,
                                             [](const NodeResourcesFitArgs& typed, Handle& handle) {
                                               return std::make_unique<NodeResourcesFit>(
                                                   typed, &handle, draServesFor(handle));
                                             });
}

}  // namespace ksched::plugins
