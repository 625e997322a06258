// Resource names, resource lists and the compact integer Resource the scheduler does arithmetic
// on (upstream framework.Resource).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

#include <ksched/api/quantity.h>

namespace ksched::api {

// Resource name -> amount, as in pod requests/limits and node capacity/allocatable.
using ResourceList = std::map<std::string, Quantity, std::less<>>;

inline constexpr std::string_view kResourceCPU = "cpu";
inline constexpr std::string_view kResourceMemory = "memory";
inline constexpr std::string_view kResourceEphemeralStorage = "ephemeral-storage";
inline constexpr std::string_view kResourcePods = "pods";
inline constexpr std::string_view kResourceStorage = "storage";
inline constexpr std::string_view kResourceHugePagesPrefix = "hugepages-";
inline constexpr std::string_view kResourceAttachableVolumesPrefix = "attachable-volumes-";
inline constexpr std::string_view kResourceDefaultNamespacePrefix = "kubernetes.io/";
inline constexpr std::string_view kResourceRequestsPrefix = "requests.";

// "hugepages-<size>".
[[nodiscard]] bool isHugePageResourceName(std::string_view name) noexcept;
// "attachable-volumes-<plugin>".
[[nodiscard]] bool isAttachableVolumeResourceName(std::string_view name) noexcept;
// Contains "kubernetes.io/" (e.g. "kubernetes.io/batch-slots").
[[nodiscard]] bool isPrefixedNativeResource(std::string_view name) noexcept;
// No '/' at all, or a kubernetes.io/ prefix.
[[nodiscard]] bool isNativeResource(std::string_view name) noexcept;
// Upstream IsExtendedResourceName: not native, not "requests.*", and "requests.<name>" is a
// qualified name (DNS-1123 subdomain prefix, one '/', a name of at most 63 characters).
// True for "example.com/gpu" and "nvidia.com/gpu"; false for "cpu", "kubernetes.io/x",
// "Example.com/gpu", "a/b/c".
[[nodiscard]] bool isExtendedResourceName(std::string_view name) noexcept;
// Upstream scheduler IsScalarResourceName: extended, hugepages, prefixed native or
// attachable-volumes. These go into Resource::scalar.
[[nodiscard]] bool isScalarResourceName(std::string_view name) noexcept;

// The amount for name, or zero when absent.
[[nodiscard]] Quantity quantityOf(const ResourceList& list, std::string_view name);
// into[name] += add[name] for every name in add (upstream addResourceList).
void addResourceList(ResourceList& into, const ResourceList& add);
// into[name] = max(into[name], other[name]) for every name in other (upstream maxResourceList).
void maxResourceList(ResourceList& into, const ResourceList& other);

// Decodes a JSON object of quantities; an error names the resource ("cpu: quantity ...").
void from_json(const nlohmann::json& j, ResourceList& list);

// Integer amounts: cpu in millicores, memory and ephemeral storage in bytes, pod count, and
// scalar resources (see isScalarResourceName) in whole units. Quantities convert with
// milliValue() for cpu and value() otherwise (both round up). Arithmetic saturates.
struct Resource {
  int64_t milliCPU = 0;
  int64_t memory = 0;
  int64_t ephemeralStorage = 0;
  int64_t allowedPodNumber = 0;
  std::map<std::string, int64_t, std::less<>> scalar;

  // Resource::add(list) on a zero Resource.
  static Resource fromList(const ResourceList& list);

  // Adds cpu, memory, ephemeral-storage, pods and scalar resources; ignores other names.
  void add(const ResourceList& list);
  void add(const Resource& other);
  // Subtracts field by field; scalar entries are kept even when they reach zero.
  void sub(const Resource& other);
  // Raises each field to the list's amount (cpu, memory, ephemeral-storage, scalars; not pods).
  void setMaxResource(const ResourceList& list);
  void addScalar(std::string_view name, int64_t amount);
  void setScalar(std::string_view name, int64_t amount);
  // Zero when absent.
  [[nodiscard]] int64_t scalarValue(std::string_view name) const noexcept;
  // All fields zero (absent and zero-valued scalars both count as zero).
  [[nodiscard]] bool isZero() const noexcept;
  // Back to a list: cpu (milli), memory, ephemeral-storage, pods and scalars, non-zero only.
  [[nodiscard]] ResourceList toList() const;

  friend bool operator==(const Resource&, const Resource&) = default;
};

}  // namespace ksched::api
