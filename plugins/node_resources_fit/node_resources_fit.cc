#include "plugins/node_resources_fit/node_resources_fit.h"

#include <algorithm>
#include <utility>

#include <ksched/api/pod_resources.h>

namespace ksched::plugins {
namespace {

struct PreFilterState final : StateData {
  api::Resource podRequest;

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

NodeResourcesFit::NodeResourcesFit(const NodeResourcesFitArgs& args)
    : ignoredResources_(args.ignoredResources.begin(), args.ignoredResources.end()),
      ignoredResourceGroups_(args.ignoredResourceGroups.begin(), args.ignoredResourceGroups.end()),
      scorer_(args.scoringStrategy) {}

api::Resource NodeResourcesFit::computePodResourceRequest(const api::Pod& pod) {
  api::Resource r;
  for (const auto& [name, q] : api::effectiveRequests(pod)) {
    if (name == api::kResourceCPU) {
      r.milliCPU = std::max(r.milliCPU, q.milliValue());
    } else if (name == api::kResourceMemory) {
      r.memory = std::max(r.memory, q.value());
    } else if (name == api::kResourceEphemeralStorage) {
      r.ephemeralStorage = std::max(r.ephemeralStorage, q.value());
    } else if (api::isScalarResourceName(name)) {
      if (q.value() > 0) r.setScalar(name, q.value());
    }
  }
  return r;
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
  std::vector<InsufficientResource> out;
  const api::Resource& alloc = nodeInfo.allocatable();
  const api::Resource& used = nodeInfo.requested();

  const auto podCount = static_cast<int64_t>(nodeInfo.pods().size());
  if (podCount + 1 > alloc.allowedPodNumber) {
    out.push_back({std::string(api::kResourcePods), std::string(kReasonTooManyPods), 1, podCount,
                   alloc.allowedPodNumber, false});
  }
  if (podRequest.milliCPU == 0 && podRequest.memory == 0 && podRequest.ephemeralStorage == 0 &&
      podRequest.scalar.empty()) {
    return out;
  }

  auto check = [&out](std::string_view resource, std::string reason, int64_t request, int64_t inUse,
                      int64_t capacity) {
    if (request > 0 && request > capacity - inUse) {
      out.push_back(
          {std::string(resource), std::move(reason), request, inUse, capacity, request > capacity});
    }
  };
  check(api::kResourceCPU, std::string(kReasonInsufficientCPU), podRequest.milliCPU, used.milliCPU,
        alloc.milliCPU);
  check(api::kResourceMemory, std::string(kReasonInsufficientMemory), podRequest.memory,
        used.memory, alloc.memory);
  check(api::kResourceEphemeralStorage, std::string(kReasonInsufficientEphemeralStorage),
        podRequest.ephemeralStorage, used.ephemeralStorage, alloc.ephemeralStorage);
  for (const auto& [name, quantity] : podRequest.scalar) {
    if (quantity == 0 || ignored(name)) continue;
    check(name, insufficientReason(name), quantity, used.scalarValue(name),
          alloc.scalarValue(name));
  }
  return out;
}

Status NodeResourcesFit::preFilter(CycleState& state, const api::Pod& pod,
                                   const NodeInfoLister& /*nodes*/, PreFilterResult& /*result*/) {
  auto s = std::make_unique<PreFilterState>();
  s->podRequest = computePodResourceRequest(pod);
  state.write(kPreFilterKey, std::move(s));
  return {};
}

Status NodeResourcesFit::filter(const CycleState& state, const api::Pod& /*pod*/,
                                const NodeInfo& nodeInfo) const {
  const PreFilterState* s = state.read(kPreFilterKey);
  if (s == nullptr) {
    return Status::error("error reading \"" + std::string(kPreFilterStateKey) +
                         "\" from cycleState: not found");
  }
  const std::vector<InsufficientResource> insufficient = fitsRequest(s->podRequest, nodeInfo);
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
  return {
      {EventResource::kPod, kDelete | kUpdatePodScaleDown},
      {EventResource::kNode, kAdd | kUpdateNodeAllocatable | kUpdateNodeTaint | kUpdateNodeLabel},
  };
}

std::unique_ptr<Plugin> newNodeResourcesFit(const nlohmann::json& args, Handle& /*handle*/) {
  NodeResourcesFitArgs typed = NodeResourcesFitArgs::fromJson(args);
  typed.validate();
  return std::make_unique<NodeResourcesFit>(typed);
}

}  // namespace ksched::plugins
