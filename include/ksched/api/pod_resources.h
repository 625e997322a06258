// Effective pod requests, as upstream component-helpers resource.PodRequests computes them:
//
//   requests = max( sum(containers) + sum(sidecars),
//                   max over init containers i of init_use(i) )  + overhead
//
// where a sidecar is an init container with restartPolicy "Always", init_use of a regular init
// container is its request plus the sidecars declared before it, and init_use of a sidecar is
// the sum of the sidecars up to and including it. max and sum are per resource name. Pod-level
// resources (spec.resources) and in-place resize status are not considered.
#pragma once

#include <cstdint>

#include <ksched/api/pod.h>
#include <ksched/api/resources.h>

namespace ksched::api {

// Upstream scheduler defaults for containers without a cpu/memory request, used for scoring so
// that "best effort" pods still spread (schedutil.DefaultMilliCPURequest/DefaultMemoryRequest).
inline constexpr int64_t kDefaultMilliCPURequest = 100;                // 0.1 core
inline constexpr int64_t kDefaultMemoryRequest = 200LL * 1024 * 1024;  // 200 MiB

struct PodResourcesOptions {
  // Leave spec.overhead out of the result.
  bool excludeOverhead = false;
  // For each (container or init container) that has no request for one of these names, use this
  // amount instead (upstream NonMissingContainerRequests). An explicit zero request is kept.
  ResourceList nonMissingContainerRequests;
};

// The pod's effective requests (see above).
[[nodiscard]] ResourceList effectiveRequests(const Pod& pod,
                                             const PodResourcesOptions& options = {});

// effectiveRequests with cpu 100m and memory 200Mi for containers that lack those requests.
[[nodiscard]] ResourceList nonZeroRequests(const Pod& pod);

// effectiveRequests as integers (Resource::fromList).
[[nodiscard]] Resource effectiveRequestsResource(const Pod& pod);

}  // namespace ksched::api
