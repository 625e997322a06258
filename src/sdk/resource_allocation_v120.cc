#include <algorithm>
#include <cmath>

#include <ksched/api/pod_resources.h>
#include <ksched/api/resources.h>
#include <ksched/helper/resource_allocation_v120.h>
#include <ksched/plugin.h>

namespace ksched::plugins::helper {
namespace {

// v1.20 GetNonzeroRequestForResource.
int64_t containerRequest(const api::ResourceList& requests, std::string_view resource) {
  const auto it = requests.find(resource);
  if (resource == api::kResourceCPU) {
    return it == requests.end() ? api::kDefaultMilliCPURequest : it->second.milliValue();
  }
  if (resource == api::kResourceMemory) {
    return it == requests.end() ? api::kDefaultMemoryRequest : it->second.value();
  }
  if (resource == api::kResourceEphemeralStorage || api::isScalarResourceName(resource)) {
    return it == requests.end() ? 0 : it->second.value();
  }
  return 0;
}

double fractionOfCapacity(const RequestedAndAllocatable& r) {
  if (r.allocatable == 0) return 1;
  return static_cast<double>(r.requested) / static_cast<double>(r.allocatable);
}

}  // namespace

int64_t podRequestV120(const api::Pod& pod, std::string_view resource) {
  int64_t request = 0;
  for (const api::Container& c : pod.spec.containers) {
    request += containerRequest(c.resources.requests, resource);
  }
  for (const api::Container& c : pod.spec.initContainers) {
    request = std::max(request, containerRequest(c.resources.requests, resource));
  }
  if (auto it = pod.spec.overhead.find(resource); it != pod.spec.overhead.end()) {
    request += it->second.value();
  }
  return request;
}

RequestedAndAllocatable requestedAndAllocatableV120(const NodeInfo& nodeInfo,
                                                    std::string_view resource, int64_t podRequest) {
  const api::Resource& alloc = nodeInfo.allocatable();
  if (resource == api::kResourceCPU) {
    return {nodeInfo.nonZeroRequested().milliCPU + podRequest, alloc.milliCPU};
  }
  if (resource == api::kResourceMemory) {
    return {nodeInfo.nonZeroRequested().memory + podRequest, alloc.memory};
  }
  if (resource == api::kResourceEphemeralStorage) {
    return {nodeInfo.requested().ephemeralStorage + podRequest, alloc.ephemeralStorage};
  }
  if (api::isScalarResourceName(resource)) {
    return {nodeInfo.requested().scalarValue(resource) + podRequest, alloc.scalarValue(resource)};
  }
  return {};
}

int64_t balancedResourceScoreV120(const NodeInfo& nodeInfo, const api::Pod& pod) {
  const double cpu = fractionOfCapacity(requestedAndAllocatableV120(
      nodeInfo, api::kResourceCPU, podRequestV120(pod, api::kResourceCPU)));
  const double memory = fractionOfCapacity(requestedAndAllocatableV120(
      nodeInfo, api::kResourceMemory, podRequestV120(pod, api::kResourceMemory)));
  if (cpu >= 1 || memory >= 1) return 0;
  return static_cast<int64_t>((1 - std::abs(cpu - memory)) * static_cast<double>(kMaxNodeScore));
}

}  // namespace ksched::plugins::helper
