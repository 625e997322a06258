#include <algorithm>
#include <optional>
#include <string>

#include <ksched/api/pod_resources.h>

namespace ksched::api {
namespace {

// Which list of a container an aggregate sums: nullptr stands for upstream's nil list.
using ContainerList = const ResourceList* (*)(const Container&, const ContainerStatus*,
                                              bool infeasible);

const ResourceList* specList(const Container& c, const ContainerStatus* /*s*/,
                             bool /*infeasible*/) {
  return &c.resources.requests;
}

const ResourceList* allocatedList(const Container& c, const ContainerStatus* s, bool infeasible) {
  if (s != nullptr && !s->allocatedResources.empty()) return &s->allocatedResources;
  if (infeasible) return nullptr;
  return &c.resources.requests;
}

const ResourceList* actualList(const Container& c, const ContainerStatus* s, bool infeasible) {
  if (s != nullptr && s->resources && !s->resources->requests.empty()) {
    return &s->resources->requests;
  }
  if (s != nullptr && !s->allocatedResources.empty()) return &s->allocatedResources;
  if (infeasible) return nullptr;
  return &c.resources.requests;
}

// The sidecar formula over one list per container (see the header).
ResourceList aggregate(const Pod& pod, const ResourceList& nonMissing, bool withStatus,
                       bool infeasible, ContainerList listOf) {
  static const ResourceList kNone;
  ResourceList filled;
  auto requestsOf = [&](const Container& c) -> const ResourceList& {
    const ContainerStatus* s = withStatus ? pod.containerStatus(c.name) : nullptr;
    const ResourceList* list = listOf(c, s, infeasible);
    if (nonMissing.empty()) return list != nullptr ? *list : kNone;
    filled = list != nullptr ? *list : kNone;
    for (const auto& [name, q] : nonMissing) filled.try_emplace(name, q);
    return filled;
  };

  ResourceList reqs;
  for (const Container& c : pod.spec.containers) addResourceList(reqs, requestsOf(c));

  ResourceList sidecars;
  ResourceList initMax;
  for (const Container& c : pod.spec.initContainers) {
    const ResourceList& own = requestsOf(c);
    if (c.isRestartable()) {
      addResourceList(reqs, own);
      addResourceList(sidecars, own);
      maxResourceList(initMax, sidecars);
    } else {
      ResourceList use = own;
      addResourceList(use, sidecars);
      maxResourceList(initMax, use);
    }
  }
  maxResourceList(reqs, initMax);
  return reqs;
}

// Pod-level status totals that stand for the containers' allocated and actual aggregates.
bool podStatusTotalsReported(const Pod& pod) {
  return !pod.status.allocatedResources.empty() && pod.status.resources &&
         !pod.status.resources->requests.empty();
}

// Some container status could make the allocated or actual aggregate differ from the spec's.
bool containerStatusReported(const std::vector<ContainerStatus>& statuses) {
  return std::any_of(statuses.begin(), statuses.end(), [](const ContainerStatus& s) {
    return !s.allocatedResources.empty() || (s.resources && !s.resources->requests.empty());
  });
}

// list[name] -= other[name] for the names list has, never below zero (upstream
// subtractResourceList).
void subtractClamped(ResourceList& list, const ResourceList& other) {
  for (const auto& [name, q] : other) {
    auto it = list.find(name);
    if (it == list.end()) continue;
    it->second -= q;
    if (it->second.sign() < 0) it->second = Quantity{};
  }
}

// The amounts of a pod that asks only through its containers, and only for cpu, memory and
// ephemeral-storage (no init containers, pod-level requests or overhead): nearly every pod a
// scheduler takes in. Summed in place, without the lists the general formula builds for each
// container (this runs for every pod the queue and the cache take in); nullopt for any other
// pod. Missing amounts count as zero, as a name no container asks for reads zero from the
// general formula's list; the sums are exact, rounded once when read, as there.
struct ContainerSums {
  Quantity cpu, memory, storage;
  Quantity nonZeroCPU, nonZeroMemory;  // a container's missing cpu or memory as the defaults
};

std::optional<ContainerSums> containerSums(const Pod& pod) {
  if (!pod.spec.initContainers.empty() || !pod.spec.overhead.empty() || pod.spec.resources) {
    return std::nullopt;
  }
  static const Quantity kCPU = Quantity::fromMilli(kDefaultMilliCPURequest);
  static const Quantity kMemory = Quantity::fromValue(kDefaultMemoryRequest);
  ContainerSums s;
  for (const Container& c : pod.spec.containers) {
    bool cpu = false;
    bool memory = false;
    for (const auto& [name, q] : c.resources.requests) {
      if (name == kResourceCPU) {
        s.cpu += q;
        s.nonZeroCPU += q;
        cpu = true;
      } else if (name == kResourceMemory) {
        s.memory += q;
        s.nonZeroMemory += q;
        memory = true;
      } else if (name == kResourceEphemeralStorage) {
        s.storage += q;
      } else {
        return std::nullopt;
      }
    }
    if (!cpu) s.nonZeroCPU += kCPU;
    if (!memory) s.nonZeroMemory += kMemory;
  }
  return s;
}

// The containers' aggregate reads the resize status under `options`: without any status the
// allocated and actual aggregates are the spec's (a pod not yet running), and the general
// formula skips them.
bool statusCounts(const Pod& pod, const PodResourcesOptions& options) {
  if (!options.useStatusResources) return false;
  return isPodResizeInfeasible(pod) ||
         (options.podLevelStatusResources && podStatusTotalsReported(pod)) ||
         containerStatusReported(pod.status.containerStatuses) ||
         containerStatusReported(pod.status.initContainerStatuses);
}

ResourceList nonZeroDefaults() {
  return {{std::string(kResourceCPU), Quantity::fromMilli(kDefaultMilliCPURequest)},
          {std::string(kResourceMemory), Quantity::fromValue(kDefaultMemoryRequest)}};
}

}  // namespace

bool isSupportedPodLevelResource(std::string_view name) noexcept {
  return name == kResourceCPU || name == kResourceMemory || isHugePageResourceName(name);
}

bool isPodLevelRequestsSet(const Pod& pod) noexcept {
  if (!pod.spec.resources) return false;
  const ResourceList& requests = pod.spec.resources->requests;
  return std::any_of(requests.begin(), requests.end(),
                     [](const auto& entry) { return isSupportedPodLevelResource(entry.first); });
}

bool isPodResizeInfeasible(const Pod& pod) noexcept {
  const PodCondition* c = pod.condition(kPodConditionResizePending);
  return c != nullptr && c->reason == kPodReasonInfeasible;
}

bool isPodResizeDeferred(const Pod& pod) noexcept {
  const PodCondition* c = pod.condition(kPodConditionResizePending);
  return c != nullptr && c->reason == kPodReasonDeferred;
}

ResourceList aggregateContainerRequests(const Pod& pod, const PodResourcesOptions& options) {
  const ResourceList& nonMissing = options.nonMissingContainerRequests;
  ResourceList spec = aggregate(pod, nonMissing, false, false, specList);
  if (!statusCounts(pod, options)) return spec;

  const bool infeasible = isPodResizeInfeasible(pod);
  const bool podTotals = options.podLevelStatusResources && podStatusTotalsReported(pod);
  ResourceList out = infeasible ? ResourceList{} : std::move(spec);
  if (podTotals) {
    maxResourceList(out, pod.status.resources->requests);
    maxResourceList(out, pod.status.allocatedResources);
  } else {
    maxResourceList(out, aggregate(pod, nonMissing, true, infeasible, actualList));
    maxResourceList(out, aggregate(pod, nonMissing, true, infeasible, allocatedList));
  }
  return out;
}

ResourceList effectiveRequests(const Pod& pod, const PodResourcesOptions& options) {
  ResourceList reqs = aggregateContainerRequests(pod, options);

  if (!options.skipPodLevelResources && isPodLevelRequestsSet(pod)) {
    const ResourceList& spec = pod.spec.resources->requests;
    const ResourceList* podLevel = &spec;
    ResourceList resized;
    if (options.useStatusResources && options.podLevelStatusResources &&
        (pod.status.resources || !pod.status.allocatedResources.empty())) {
      ResourceList actual = pod.status.resources ? pod.status.resources->requests : ResourceList{};
      ResourceList allocated = pod.status.allocatedResources;
      subtractClamped(actual, pod.spec.overhead);
      subtractClamped(allocated, pod.spec.overhead);
      if (!isPodResizeInfeasible(pod)) resized = spec;
      maxResourceList(resized, actual);
      maxResourceList(resized, allocated);
      podLevel = &resized;
    }
    for (const auto& [name, q] : *podLevel) {
      if (isSupportedPodLevelResource(name)) reqs.insert_or_assign(name, q);
    }
  }

  if (!options.excludeOverhead) addResourceList(reqs, pod.spec.overhead);
  return reqs;
}

ResourceList nonZeroRequests(const Pod& pod, const features::Gates& gates) {
  PodResourcesOptions options(gates);
  options.nonMissingContainerRequests = nonZeroDefaults();
  return effectiveRequests(pod, options);
}

Resource effectiveRequestsResource(const Pod& pod, const PodResourcesOptions& options) {
  return Resource::fromList(effectiveRequests(pod, options));
}

NodePodRequests nodePodRequests(const Pod& pod, const features::Gates& gates) {
  PodResourcesOptions options(gates);
  if (auto sums = containerSums(pod); sums && !statusCounts(pod, options)) {
    NodePodRequests out;
    out.requests.milliCPU = sums->cpu.milliValue();
    out.requests.memory = sums->memory.value();
    out.requests.ephemeralStorage = sums->storage.value();
    out.nonZeroMilliCPU = sums->nonZeroCPU.milliValue();
    out.nonZeroMemory = sums->nonZeroMemory.value();
    return out;
  }
  const ResourceList requests = effectiveRequests(pod, options);
  NodePodRequests out;
  out.requests = Resource::fromList(requests);

  if (!options.skipPodLevelResources && isPodLevelRequestsSet(pod)) {
    // Only what neither the pod level nor a container requests gets a default.
    if (!requests.contains(kResourceCPU)) {
      options.nonMissingContainerRequests.emplace(kResourceCPU,
                                                  Quantity::fromMilli(kDefaultMilliCPURequest));
    }
    if (!requests.contains(kResourceMemory)) {
      options.nonMissingContainerRequests.emplace(kResourceMemory,
                                                  Quantity::fromValue(kDefaultMemoryRequest));
    }
  } else {
    options.nonMissingContainerRequests = nonZeroDefaults();
  }
  const ResourceList nonZero =
      options.nonMissingContainerRequests.empty() ? requests : effectiveRequests(pod, options);
  out.nonZeroMilliCPU = quantityOf(nonZero, kResourceCPU).milliValue();
  out.nonZeroMemory = quantityOf(nonZero, kResourceMemory).value();
  return out;
}

Resource schedulingRequestsResource(const Pod& pod, const features::Gates& gates) {
  Resource r;
  if (auto sums = containerSums(pod)) {
    r.milliCPU = std::max<int64_t>(0, sums->cpu.milliValue());
    r.memory = std::max<int64_t>(0, sums->memory.value());
    r.ephemeralStorage = std::max<int64_t>(0, sums->storage.value());
    return r;
  }
  PodResourcesOptions options(gates);
  options.useStatusResources = false;
  for (const auto& [name, q] : effectiveRequests(pod, options)) {
    if (name == kResourceCPU) {
      r.milliCPU = std::max(r.milliCPU, q.milliValue());
    } else if (name == kResourceMemory) {
      r.memory = std::max(r.memory, q.value());
    } else if (name == kResourceEphemeralStorage) {
      r.ephemeralStorage = std::max(r.ephemeralStorage, q.value());
    } else if (isScalarResourceName(name)) {
      if (q.value() > 0) r.setScalar(name, q.value());
    }
  }
  return r;
}

}  // namespace ksched::api
