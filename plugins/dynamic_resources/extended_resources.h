// Extended resources backed by DRA (KEP 5004, DRAExtendedResource): a pod that asks for
// `example.com/gpu: 2` in a container, where a DeviceClass has spec.extendedResourceName
// "example.com/gpu" (or for `deviceclass.resource.kubernetes.io/<class>: 2`), gets its devices
// through one ResourceClaim the scheduler creates for it at PreBind, on nodes whose
// allocatable does not list that resource (a device plugin serves it where it does).
//
// This file holds the pure parts, as upstream words them: which names qualify, and the claim's
// requests with the container mappings that go into status.extendedResourceClaimStatus.
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include <ksched/api/pod.h>
#include <ksched/api/resource.h>

namespace ksched::plugins::dra {

// The claim's name while it exists only in memory (not a valid object name, as upstream's).
inline constexpr std::string_view kExtendedClaimInMemoryName = "<extended-resources>";

// An extended resource name ("example.com/gpu") or an implicit class resource
// ("deviceclass.resource.kubernetes.io/<class>").
[[nodiscard]] bool isDraExtendedResourceName(std::string_view name) noexcept;

// Whether any container (init containers included) requests a name of that kind: a cheap test
// before the pod's requests are summed.
[[nodiscard]] bool requestsDraExtendedResourceName(const api::Pod& pod) noexcept;

struct ExtendedRequests {
  std::vector<api::DeviceRequest> requests;  // sorted by name
  std::vector<api::ContainerExtendedResourceRequest> mappings;
};

// The requests of the pod's extended-resources claim for the resources DRA serves on a node
// (`classOf`: resource -> DeviceClass name), as upstream's createRequestsAndMappings:
//   - one ExactCount request per container and resource, named
//     "container-<i>-request-<j>" (i: the container's index in initContainers + containers,
//     j: the resource's index among the container's requests sorted by name), count = the
//     request in whole units (a fractional or zero request asks for nothing);
//   - regular containers and sidecars each get their own request;
//   - an init container that runs to completion first reuses the requests of the sidecars and
//     containers after it, asking only for what they lack; of those init containers only the
//     largest request is kept, and the others' mappings point to it.
[[nodiscard]] ExtendedRequests extendedResourceRequests(
    const api::Pod& pod, const std::map<std::string, std::string, std::less<>>& classOf);

// The ResourceClaim to POST for `pod`'s extended resources in `apiVersion`'s shape
// ("resource.k8s.io/v1", v1beta2 or v1beta1): generateName "<pod>-extended-resources-", the
// annotation resource.kubernetes.io/extended-resource-claim "true", the pod as controller
// owner, the delete-protection finalizer, and `requests`.
[[nodiscard]] nlohmann::json extendedClaimObject(const api::Pod& pod,
                                                 const std::vector<api::DeviceRequest>& requests,
                                                 std::string_view apiVersion);

// status.extendedResourceClaimStatus for a merge patch of the pod's status.
[[nodiscard]] nlohmann::json extendedClaimStatusPatch(
    const std::vector<api::ContainerExtendedResourceRequest>& mappings, std::string_view claimName);

}  // namespace ksched::plugins::dra
