#include <string>

#include <ksched/api/pod_resources.h>

namespace ksched::api {
namespace {

ResourceList withNonMissing(const ResourceList& requests, const ResourceList& nonMissing) {
  ResourceList out = requests;
  for (const auto& [name, q] : nonMissing) {
    if (!requests.contains(name)) out.emplace(name, q);
  }
  return out;
}

}  // namespace

ResourceList effectiveRequests(const Pod& pod, const PodResourcesOptions& options) {
  const bool fill = !options.nonMissingContainerRequests.empty();
  auto requestsOf = [&](const Container& c) {
    return fill ? withNonMissing(c.resources.requests, options.nonMissingContainerRequests)
                : c.resources.requests;
  };

  ResourceList reqs;
  for (const Container& c : pod.spec.containers) addResourceList(reqs, requestsOf(c));

  ResourceList sidecars;
  ResourceList initMax;
  for (const Container& c : pod.spec.initContainers) {
    ResourceList use = requestsOf(c);
    if (c.isRestartable()) {
      addResourceList(reqs, use);
      addResourceList(sidecars, use);
      use = sidecars;
    } else {
      addResourceList(use, sidecars);
    }
    maxResourceList(initMax, use);
  }
  maxResourceList(reqs, initMax);

  if (!options.excludeOverhead) addResourceList(reqs, pod.spec.overhead);
  return reqs;
}

ResourceList nonZeroRequests(const Pod& pod) {
  PodResourcesOptions options;
  options.nonMissingContainerRequests.emplace(kResourceCPU,
                                              Quantity::fromMilli(kDefaultMilliCPURequest));
  options.nonMissingContainerRequests.emplace(kResourceMemory,
                                              Quantity::fromValue(kDefaultMemoryRequest));
  return effectiveRequests(pod, options);
}

Resource effectiveRequestsResource(const Pod& pod) {
  return Resource::fromList(effectiveRequests(pod));
}

}  // namespace ksched::api
