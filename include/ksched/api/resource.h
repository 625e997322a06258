// Dynamic Resource Allocation kinds (resource.k8s.io): ResourceSlice, DeviceClass,
// ResourceClaim, ResourceClaimTemplate, in the shape of resource.k8s.io/v1 (Kubernetes 1.34+).
//
// The decoders read v1, v1beta2 and v1beta1 objects into this one shape (v1beta1 nests a
// device's fields under "basic" and puts a request's fields on the request itself; v1beta2 and
// v1 put them under "exactly"), as the apiserver's conversion does. Only what the scheduler
// reads is kept; a claim's allocation is also written back (toJson).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <ksched/api/meta.h>
#include <ksched/api/quantity.h>
#include <ksched/api/selectors.h>

namespace ksched::api {

inline constexpr std::string_view kResourceGroup = "resource.k8s.io";

inline constexpr std::string_view kAllocationModeExactCount = "ExactCount";
inline constexpr std::string_view kAllocationModeAll = "All";

inline constexpr std::string_view kDeviceTaintNoSchedule = "NoSchedule";
inline constexpr std::string_view kDeviceTaintNoExecute = "NoExecute";
inline constexpr std::string_view kDeviceTaintNone = "None";

inline constexpr std::string_view kAllocationConfigFromClass = "FromClass";
inline constexpr std::string_view kAllocationConfigFromClaim = "FromClaim";

// A device attribute: exactly one of int, bool, string, version (a semver string), or one of
// their list forms ints, bools, strings, versions (DRAListTypeAttributes, alpha; never empty).
// The list forms are always decoded; whether the allocator sees them is the gate's business.
struct DeviceAttribute {
  struct Version {
    std::string value;
    friend bool operator==(const Version&, const Version&) = default;
  };
  using Ints = std::vector<int64_t>;
  using Bools = std::vector<bool>;
  using Strings = std::vector<std::string>;
  using Versions = std::vector<Version>;
  // The scalars first, then the lists in the same order: index() % 4 is the element type.
  std::variant<int64_t, bool, std::string, Version, Ints, Bools, Strings, Versions> value;

  [[nodiscard]] bool isList() const noexcept { return value.index() >= 4; }

  friend bool operator==(const DeviceAttribute&, const DeviceAttribute&) = default;
};

// Attribute and capacity names are "name" or "domain/name"; a name without a domain belongs to
// the device's driver. The maps are keyed as they appear in the object.
using DeviceAttributes = std::map<std::string, DeviceAttribute, std::less<>>;

// capacity.<name>.requestPolicy (consumable capacity, alpha): kept for the allocator to refuse
// what it cannot honour.
struct CapacityRequestPolicy {
  std::optional<Quantity> defaultValue;  // "default" in JSON
  std::vector<Quantity> validValues;
  std::optional<Quantity> validRangeMin, validRangeMax, validRangeStep;

  friend bool operator==(const CapacityRequestPolicy&, const CapacityRequestPolicy&) = default;
};

struct DeviceCapacity {
  Quantity value;
  std::optional<CapacityRequestPolicy> requestPolicy;

  friend bool operator==(const DeviceCapacity&, const DeviceCapacity&) = default;
};
using DeviceCapacities = std::map<std::string, DeviceCapacity, std::less<>>;

// counters: name -> value.
using Counters = std::map<std::string, Quantity, std::less<>>;

// spec.sharedCounters[] of a slice.
struct CounterSet {
  std::string name;
  Counters counters;

  friend bool operator==(const CounterSet&, const CounterSet&) = default;
};

// devices[].consumesCounters[].
struct DeviceCounterConsumption {
  std::string counterSet;
  Counters counters;

  friend bool operator==(const DeviceCounterConsumption&,
                         const DeviceCounterConsumption&) = default;
};

struct DeviceTaint {
  std::string key;
  std::string value;
  std::string effect;  // NoSchedule, NoExecute, None
  std::optional<std::string> timeAdded;

  friend bool operator==(const DeviceTaint&, const DeviceTaint&) = default;
};

struct DeviceToleration {
  std::string key;
  std::string operator_;  // "operator" in JSON: Equal (default) or Exists
  std::string value;
  std::string effect;  // empty: every effect
  std::optional<int64_t> tolerationSeconds;

  // As upstream's resourceclaim.ToleratesTaint: a non-empty key must equal the taint's (Exists
  // with an empty key matches every key), a non-empty effect must equal the taint's, Equal (or
  // no operator) compares values; any other operator tolerates nothing.
  [[nodiscard]] bool tolerates(const DeviceTaint& taint) const noexcept;

  friend bool operator==(const DeviceToleration&, const DeviceToleration&) = default;
};

// One device of a slice.
struct Device {
  std::string name;
  DeviceAttributes attributes;
  DeviceCapacities capacity;
  std::vector<DeviceCounterConsumption> consumesCounters;
  // Per-device node selection (when the slice says perDeviceNodeSelection): one of these.
  std::optional<std::string> nodeName;
  std::optional<NodeSelector> nodeSelector;
  std::optional<bool> allNodes;
  std::vector<DeviceTaint> taints;
  std::optional<bool> bindsToNode;
  std::vector<std::string> bindingConditions;
  std::vector<std::string> bindingFailureConditions;
  std::optional<bool> allowMultipleAllocations;

  friend bool operator==(const Device&, const Device&) = default;
};

struct ResourcePool {
  std::string name;
  int64_t generation = 0;
  int64_t resourceSliceCount = 0;

  friend bool operator==(const ResourcePool&, const ResourcePool&) = default;
};

struct ResourceSliceSpec {
  std::string driver;
  ResourcePool pool;
  // Exactly one of these says which nodes can reach the devices.
  std::optional<std::string> nodeName;
  std::optional<NodeSelector> nodeSelector;
  std::optional<bool> allNodes;
  std::optional<bool> perDeviceNodeSelection;
  std::vector<Device> devices;
  std::vector<CounterSet> sharedCounters;

  friend bool operator==(const ResourceSliceSpec&, const ResourceSliceSpec&) = default;
};

struct ResourceSlice {
  ObjectMeta metadata;  // cluster-scoped
  ResourceSliceSpec spec;
};

// selectors[]: only CEL exists.
struct DeviceSelector {
  std::string celExpression;  // cel.expression

  friend bool operator==(const DeviceSelector&, const DeviceSelector&) = default;
};

// config[] of a class or claim: opaque driver parameters, carried into the allocation.
struct DeviceConfiguration {
  std::vector<std::string> requests;  // claims only: the requests it applies to (empty: all)
  std::string driver;                 // opaque.driver
  std::string opaque;                 // opaque.parameters, serialized JSON

  friend bool operator==(const DeviceConfiguration& a, const DeviceConfiguration& b) {
    return a.requests == b.requests && a.driver == b.driver && a.opaque == b.opaque;
  }
};

struct DeviceClassSpec {
  std::vector<DeviceSelector> selectors;
  std::vector<DeviceConfiguration> config;
  std::optional<std::string> extendedResourceName;  // KEP 5004

  friend bool operator==(const DeviceClassSpec&, const DeviceClassSpec&) = default;
};

struct DeviceClass {
  ObjectMeta metadata;  // cluster-scoped
  DeviceClassSpec spec;
};

// capacity.requests of a request (consumable capacity).
using CapacityRequirements = std::map<std::string, Quantity, std::less<>>;

// One way to satisfy a request: the request itself ("exactly") or one of firstAvailable.
struct ExactDeviceRequest {
  std::string deviceClassName;
  std::vector<DeviceSelector> selectors;
  std::string allocationMode = std::string(kAllocationModeExactCount);  // ExactCount or All
  int64_t count = 1;                                                    // ExactCount only
  std::optional<bool> adminAccess;
  std::vector<DeviceToleration> tolerations;
  CapacityRequirements capacity;

  friend bool operator==(const ExactDeviceRequest&, const ExactDeviceRequest&) = default;
};

struct DeviceSubRequest {
  std::string name;
  ExactDeviceRequest request;  // adminAccess is never set on a subrequest

  friend bool operator==(const DeviceSubRequest&, const DeviceSubRequest&) = default;
};

struct DeviceRequest {
  std::string name;
  // Exactly one of the two.
  std::optional<ExactDeviceRequest> exactly;
  std::vector<DeviceSubRequest> firstAvailable;

  friend bool operator==(const DeviceRequest&, const DeviceRequest&) = default;
};

struct DeviceConstraint {
  std::vector<std::string> requests;  // empty: every request of the claim
  std::optional<std::string> matchAttribute;
  std::optional<std::string> distinctAttribute;

  friend bool operator==(const DeviceConstraint&, const DeviceConstraint&) = default;
};

struct ResourceClaimSpec {
  std::vector<DeviceRequest> requests;  // devices.requests
  std::vector<DeviceConstraint> constraints;
  std::vector<DeviceConfiguration> config;

  friend bool operator==(const ResourceClaimSpec&, const ResourceClaimSpec&) = default;
};

// status.allocation.devices.results[].
struct DeviceRequestAllocationResult {
  std::string request;  // "<request>" or "<request>/<subrequest>"
  std::string driver;
  std::string pool;
  std::string device;
  std::optional<bool> adminAccess;
  std::vector<DeviceToleration> tolerations;
  std::vector<std::string> bindingConditions;
  std::vector<std::string> bindingFailureConditions;
  std::optional<std::string> shareID;
  std::map<std::string, Quantity, std::less<>> consumedCapacity;

  friend bool operator==(const DeviceRequestAllocationResult&,
                         const DeviceRequestAllocationResult&) = default;
};

// status.allocation.devices.config[].
struct DeviceAllocationConfiguration {
  std::string source;  // FromClass or FromClaim
  DeviceConfiguration config;

  friend bool operator==(const DeviceAllocationConfiguration&,
                         const DeviceAllocationConfiguration&) = default;
};

struct AllocationResult {
  std::vector<DeviceRequestAllocationResult> devices;  // devices.results
  std::vector<DeviceAllocationConfiguration> config;   // devices.config
  std::optional<NodeSelector> nodeSelector;
  std::optional<std::string> allocationTimestamp;

  friend bool operator==(const AllocationResult&, const AllocationResult&) = default;
};

// status.reservedFor[].
struct ResourceClaimConsumerReference {
  std::string apiGroup;  // "" for pods
  std::string resource;  // "pods"
  std::string name;
  std::string uid;

  friend bool operator==(const ResourceClaimConsumerReference&,
                         const ResourceClaimConsumerReference&) = default;
};

// status.devices[] (DRAResourceClaimDeviceStatus): what the driver says of an allocated device;
// the scheduler reads the conditions (binding conditions, DRADeviceBindingConditions).
struct AllocatedDeviceStatus {
  std::string driver;
  std::string pool;
  std::string device;
  std::optional<std::string> shareID;
  std::vector<Condition> conditions;

  friend bool operator==(const AllocatedDeviceStatus&, const AllocatedDeviceStatus&) = default;
  // The condition of `type`, null if none.
  [[nodiscard]] const Condition* condition(std::string_view type) const noexcept {
    for (const auto& c : conditions) {
      if (c.type == type) return &c;
    }
    return nullptr;
  }
};

struct ResourceClaimStatus {
  std::optional<AllocationResult> allocation;
  std::vector<ResourceClaimConsumerReference> reservedFor;
  std::vector<AllocatedDeviceStatus> devices;

  friend bool operator==(const ResourceClaimStatus&, const ResourceClaimStatus&) = default;
};

struct ResourceClaim {
  ObjectMeta metadata;
  ResourceClaimSpec spec;
  ResourceClaimStatus status;
};

struct ResourceClaimTemplate {
  ObjectMeta metadata;
  ObjectMeta claimMetadata;  // spec.metadata
  ResourceClaimSpec spec;    // spec.spec
};

// A DeviceTaintRule (DRADeviceTaintRules; resource.k8s.io/v1beta2, v1alpha3 before): the
// devices its selector picks carry its taint, as if their slices listed it. An unset selector
// field matches any.
struct DeviceTaintRule {
  ObjectMeta metadata;
  std::optional<std::string> driver;  // spec.deviceSelector.driver
  std::optional<std::string> pool;    // spec.deviceSelector.pool
  std::optional<std::string> device;  // spec.deviceSelector.device
  DeviceTaint taint;                  // spec.taint
};

// Decoding: throw DecodeError naming the field in upstream's notation
// (`spec.devices[1].attributes[dra.example.com/model]: exactly one of int, bool, string, version,
// ints, bools, strings, versions must be set`). The apiVersion of `j` picks the shape (v1, v1beta2,
// v1beta1); without one, v1; any other version is a DecodeError. Defaults as the apiserver applies
// them: allocationMode ExactCount and then count 1 (requests and subrequests), toleration operator
// Equal. In v1beta1, as its conversion does, a request's own fields make its `exactly` when any is
// set, and a slice's nodeName "" and allNodes false are unset. A device attribute must have exactly
// one of int, bool, string, version, ints, bools, strings, versions; a list must not be empty and
// each of its items is checked as the scalar would be (`...attributes[numa].ints[1]: expected an
// integer, got string`). A selector without `cel` keeps an empty expression, which does not
// compile. Opaque parameters are kept as their compact JSON text.
void from_json(const nlohmann::json& j, ResourceSlice& s);
void from_json(const nlohmann::json& j, DeviceClass& c);
void from_json(const nlohmann::json& j, ResourceClaim& c);
void from_json(const nlohmann::json& j, ResourceClaimTemplate& t);
// Any version (its fields are the same in each).
void from_json(const nlohmann::json& j, DeviceTaintRule& r);

// As from_json, for an object that may not say its apiVersion: the items of a LIST page of a
// built-in kind carry none. `listVersion` ("resource.k8s.io/v1beta1", ...) picks the shape when
// `j` has no apiVersion.
void decodeResource(const nlohmann::json& j, std::string_view listVersion, ResourceSlice& s);
void decodeResource(const nlohmann::json& j, std::string_view listVersion, DeviceClass& c);
void decodeResource(const nlohmann::json& j, std::string_view listVersion, ResourceClaim& c);
void decodeResource(const nlohmann::json& j, std::string_view listVersion,
                    ResourceClaimTemplate& t);

// status.allocation as resource.k8s.io/v1 writes it (for the claim's status update), empty
// fields left out; decoding it gives `a` back (a toleration without an operator comes back with
// Equal). Opaque parameters are written as the JSON they hold (as a string when they are not
// JSON).
[[nodiscard]] nlohmann::json toJson(const AllocationResult& a);
[[nodiscard]] nlohmann::json toJson(const ResourceClaimConsumerReference& r);

}  // namespace ksched::api
