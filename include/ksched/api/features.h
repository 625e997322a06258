// Feature gates, as kube-scheduler takes them (--feature-gates Name=true,Other=false).
//
// The known gates are upstream's gates that touch scheduling, with upstream's names, stages and
// the defaults of Kubernetes 1.37 (docs/compatibility.md lists each with what ksched does with
// it). A gate ksched implements switches behaviour; the others are accepted so that a
// kube-scheduler command line keeps working, and docs/compatibility.md says what ksched does.
//
// A set of gates is a value (Gates), not a process-wide setting: the daemon parses its
// --feature-gates into one and hands it down (the scheduler core, each framework and through the
// Handle its plugins, the configuration's default plugins), so one process can run two
// simulations with different gates side by side. Reading a gate is an array lookup.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ksched::features {

enum class Feature : uint8_t {
  kCompositePodGroup,
  kDRAAdminAccess,
  kDRAConsumableCapacity,
  kDRADerivedAttributes,
  kDRADeviceBindingConditions,
  kDRADeviceCompatibilityGroups,
  kDRADeviceTaintRules,
  kDRADeviceTaints,
  kDRAExtendedResource,
  kDRAFractionalCapacityRange,
  kDRAListTypeAttributes,
  kDRANodeAllocatableResources,
  kDRAOptionalNodeOperations,
  kDRAPartitionableDevices,
  kDRAPreemption,
  kDRAPrioritizedList,
  kDRAResourceClaimDeviceStatus,
  kDRASchedulerFilterTimeout,
  kDRAWorkloadResourceClaims,
  kDynamicResourceAllocation,
  kGenericWorkload,
  kInPlacePodLevelResourcesVerticalScaling,
  kInPlacePodVerticalScaling,
  kInPlacePodVerticalScalingSchedulerPreemption,
  kInterPodAffinityHostnameFastPath,
  kMatchLabelKeysInPodAffinity,
  kMatchLabelKeysInPodTopologySpread,
  kMatchLabelKeysInPodTopologySpreadSelectorMerge,
  kNodeDeclaredFeatures,
  kNodeInclusionPolicyInPodTopologySpread,
  kNominatedNodeNameForExpectation,
  kOpportunisticBatching,
  kPodGroupPreemptionPolicy,
  kPodLevelResources,
  kPodObservedGenerationTracking,
  kSchedulerAsyncAPICalls,
  kSchedulerAsyncPreemption,
  kSchedulerPopFromBackoffQ,
  kSchedulerPreEnqueuePodStatus,
  kSchedulerPreQueueingHints,
  kSidecarContainers,
  kStorageCapacityScoring,
  kTaintTolerationComparisonOperators,
  kTopologyAwareWorkloadScheduling,
  kVolumeAttributesClass,
  kVolumeLimitScaling,
  kCount,
};

enum class Stage : uint8_t { kAlpha, kBeta, kGA, kDeprecated };

// "ALPHA", "BETA", "GA", "DEPRECATED" (upstream's prerelease names).
[[nodiscard]] std::string_view stageName(Stage stage) noexcept;

// What ksched does with a gate (docs/compatibility.md has the details per gate).
enum class Support : uint8_t {
  kSwitches,   // the gate switches ksched's behaviour as upstream's
  kAlwaysOn,   // ksched always behaves as with the gate on; setting it false changes nothing
  kNoEffect,   // about upstream's internals (speed, API calls): accepted, changes nothing
  kNotYet,     // ksched lacks the feature: accepted, changes nothing (a warning when set)
  kRefusedOn,  // ksched lacks it, and on it would change what pods mean: true is an error
};

struct Spec {
  Feature feature;
  std::string_view name;
  Stage stage;
  bool defaultValue;
  bool lockToDefault;  // setting it to the other value is an error
  Support support;
};

// Every known gate, in name order.
[[nodiscard]] std::span<const Spec> specs() noexcept;
[[nodiscard]] const Spec& spec(Feature feature) noexcept;
// The gate of that (case-sensitive) name, or nullptr.
[[nodiscard]] const Spec* find(std::string_view name) noexcept;

class Gates {
 public:
  Gates() noexcept;  // every gate at its default

  [[nodiscard]] bool enabled(Feature feature) const noexcept {
    return values_[static_cast<size_t>(feature)];
  }

  // Applies a --feature-gates value: "Name=true,Other=false" (spaces around items ignored;
  // AllAlpha and AllBeta set every alpha or beta gate not named in the same value). On an error
  // nothing changes and the result is upstream's message, e.g. "unrecognized feature gate: X"
  // or "cannot set feature gate X to false, feature is locked to true". A gate of another
  // component (NodeSwap, a kubelet's) is accepted and changes nothing; check() warns of it.
  [[nodiscard]] std::optional<std::string> set(std::string_view flagValue);
  // One gate by name; the same errors.
  [[nodiscard]] std::optional<std::string> set(std::string_view name, bool value);
  // For tests and the simulator: no lock check.
  void force(Feature feature, bool value) noexcept {
    values_[static_cast<size_t>(feature)] = value;
  }

  // The gates that differ from their defaults, "Name=value" in name order, comma-separated.
  [[nodiscard]] std::string changed() const;
  // What ksched cannot honour in these gates: `errors` for gates it refuses to run with (a
  // kRefusedOn gate set true), `warnings` for changed gates that change nothing in ksched and
  // for gates of other components set (kube-scheduler's process accepts those too).
  void check(std::vector<std::string>& errors, std::vector<std::string>& warnings) const;

  friend bool operator==(const Gates&, const Gates&) = default;

 private:
  std::array<bool, static_cast<size_t>(Feature::kCount)> values_{};
  // Gates of other components that were set, "Name=value" in name order.
  std::vector<std::string> others_;
};

// The lines --help lists: "AllAlpha=true|false (ALPHA - default=false)", "AllBeta=...", then
// each alpha and beta gate "Name=true|false (BETA - default=true)", as upstream (GA and
// deprecated gates are accepted but not listed).
[[nodiscard]] std::vector<std::string> knownFeatures();

}  // namespace ksched::features
