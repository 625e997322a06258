#include <algorithm>
#include <cctype>

#include <ksched/api/features.h>

#include "other_gates.h"

namespace ksched::features {
namespace {

using enum Stage;
using enum Support;
using F = Feature;

// Upstream's stages and defaults at Kubernetes 1.37 (pkg/features and the scheduler's own
// feature list), name order.
constexpr std::array<Spec, static_cast<size_t>(Feature::kCount)> kSpecs = {{
    {F::kCompositePodGroup, "CompositePodGroup", kAlpha, false, false, kSwitches},
    {F::kDRAAdminAccess, "DRAAdminAccess", kGA, true, true, kAlwaysOn},
    {F::kDRAConsumableCapacity, "DRAConsumableCapacity", kBeta, true, false, kSwitches},
    {F::kDRADerivedAttributes, "DRADerivedAttributes", kAlpha, false, false, kNotYet},
    {F::kDRADeviceBindingConditions, "DRADeviceBindingConditions", kBeta, true, false, kSwitches},
    {F::kDRADeviceCompatibilityGroups, "DRADeviceCompatibilityGroups", kAlpha, false, false,
     kNotYet},
    {F::kDRADeviceTaintRules, "DRADeviceTaintRules", kGA, true, false, kSwitches},
    {F::kDRADeviceTaints, "DRADeviceTaints", kGA, true, false, kSwitches},
    {F::kDRAExtendedResource, "DRAExtendedResource", kGA, true, true, kSwitches},
    {F::kDRAFractionalCapacityRange, "DRAFractionalCapacityRange", kBeta, true, false, kNotYet},
    {F::kDRAListTypeAttributes, "DRAListTypeAttributes", kAlpha, false, false, kSwitches},
    {F::kDRANodeAllocatableResources, "DRANodeAllocatableResources", kAlpha, false, false, kNotYet},
    {F::kDRAOptionalNodeOperations, "DRAOptionalNodeOperations", kAlpha, false, false, kNotYet},
    {F::kDRAPartitionableDevices, "DRAPartitionableDevices", kBeta, true, false, kSwitches},
    // KEP 5690: planned for 1.37 and not in it; the KEP's gate, off by default.
    {F::kDRAPreemption, "DRAPreemption", kBeta, false, false, kSwitches},
    {F::kDRAPrioritizedList, "DRAPrioritizedList", kGA, true, true, kAlwaysOn},
    {F::kDRAResourceClaimDeviceStatus, "DRAResourceClaimDeviceStatus", kGA, true, true, kAlwaysOn},
    {F::kDRASchedulerFilterTimeout, "DRASchedulerFilterTimeout", kBeta, true, false, kSwitches},
    {F::kDRAWorkloadResourceClaims, "DRAWorkloadResourceClaims", kBeta, false, false, kSwitches},
    {F::kDynamicResourceAllocation, "DynamicResourceAllocation", kGA, true, true, kAlwaysOn},
    {F::kGenericWorkload, "GenericWorkload", kBeta, false, false, kSwitches},
    {F::kInPlacePodLevelResourcesVerticalScaling, "InPlacePodLevelResourcesVerticalScaling", kBeta,
     true, false, kSwitches},
    {F::kInPlacePodVerticalScaling, "InPlacePodVerticalScaling", kGA, true, true, kSwitches},
    {F::kInPlacePodVerticalScalingSchedulerPreemption,
     "InPlacePodVerticalScalingSchedulerPreemption", kAlpha, false, false, kSwitches},
    {F::kInterPodAffinityHostnameFastPath, "InterPodAffinityHostnameFastPath", kAlpha, false, false,
     kNoEffect},
    {F::kMatchLabelKeysInPodAffinity, "MatchLabelKeysInPodAffinity", kGA, true, true, kAlwaysOn},
    {F::kMatchLabelKeysInPodTopologySpread, "MatchLabelKeysInPodTopologySpread", kBeta, true, false,
     kSwitches},
    {F::kMatchLabelKeysInPodTopologySpreadSelectorMerge,
     "MatchLabelKeysInPodTopologySpreadSelectorMerge", kBeta, true, false, kNoEffect},
    {F::kNodeDeclaredFeatures, "NodeDeclaredFeatures", kGA, true, true, kSwitches},
    {F::kNodeInclusionPolicyInPodTopologySpread, "NodeInclusionPolicyInPodTopologySpread", kGA,
     true, true, kAlwaysOn},
    {F::kNominatedNodeNameForExpectation, "NominatedNodeNameForExpectation", kBeta, true, false,
     kSwitches},
    {F::kOpportunisticBatching, "OpportunisticBatching", kBeta, true, false, kSwitches},
    {F::kPodGroupPreemptionPolicy, "PodGroupPreemptionPolicy", kAlpha, false, false, kSwitches},
    {F::kPodLevelResources, "PodLevelResources", kBeta, true, false, kSwitches},
    {F::kPodObservedGenerationTracking, "PodObservedGenerationTracking", kGA, true, true,
     kAlwaysOn},
    {F::kSchedulerAsyncAPICalls, "SchedulerAsyncAPICalls", kBeta, false, false, kNoEffect},
    {F::kSchedulerAsyncPreemption, "SchedulerAsyncPreemption", kBeta, true, false, kAlwaysOn},
    {F::kSchedulerPopFromBackoffQ, "SchedulerPopFromBackoffQ", kBeta, true, false, kAlwaysOn},
    {F::kSchedulerPreEnqueuePodStatus, "SchedulerPreEnqueuePodStatus", kBeta, true, false,
     kSwitches},
    {F::kSchedulerPreQueueingHints, "SchedulerPreQueueingHints", kAlpha, false, false, kNotYet},
    {F::kSidecarContainers, "SidecarContainers", kGA, true, true, kAlwaysOn},
    {F::kStorageCapacityScoring, "StorageCapacityScoring", kBeta, true, false, kSwitches},
    {F::kTaintTolerationComparisonOperators, "TaintTolerationComparisonOperators", kAlpha, false,
     false, kSwitches},
    {F::kTopologyAwareWorkloadScheduling, "TopologyAwareWorkloadScheduling", kAlpha, false, false,
     kSwitches},
    {F::kVolumeAttributesClass, "VolumeAttributesClass", kGA, true, true, kSwitches},
    {F::kVolumeLimitScaling, "VolumeLimitScaling", kBeta, true, false, kSwitches},
}};

constexpr bool specsInOrder() {
  for (size_t i = 0; i < kSpecs.size(); ++i) {
    if (static_cast<size_t>(kSpecs[i].feature) != i) return false;
    if (i > 0 && !(kSpecs[i - 1].name < kSpecs[i].name)) return false;
  }
  return true;
}
static_assert(specsInOrder(), "kSpecs follows the Feature enum, in name order");

constexpr std::string_view kAllAlpha = "AllAlpha";
constexpr std::string_view kAllBeta = "AllBeta";

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Go's strconv.ParseBool.
std::optional<bool> parseBool(std::string_view s) {
  for (std::string_view t : {"1", "t", "T", "TRUE", "true", "True"}) {
    if (s == t) return true;
  }
  for (std::string_view f : {"0", "f", "F", "FALSE", "false", "False"}) {
    if (s == f) return false;
  }
  return std::nullopt;
}

std::string boolText(bool v) { return v ? "true" : "false"; }

}  // namespace

std::string_view stageName(Stage stage) noexcept {
  switch (stage) {
    case kAlpha:
      return "ALPHA";
    case kBeta:
      return "BETA";
    case kGA:
      return "GA";
    case kDeprecated:
      return "DEPRECATED";
  }
  return "";
}

std::span<const Spec> specs() noexcept { return kSpecs; }

const Spec& spec(Feature feature) noexcept { return kSpecs[static_cast<size_t>(feature)]; }

const Spec* find(std::string_view name) noexcept {
  auto it = std::lower_bound(kSpecs.begin(), kSpecs.end(), name,
                             [](const Spec& s, std::string_view n) { return s.name < n; });
  return it != kSpecs.end() && it->name == name ? &*it : nullptr;
}

Gates::Gates() noexcept {
  for (const Spec& s : kSpecs) values_[static_cast<size_t>(s.feature)] = s.defaultValue;
}

std::optional<std::string> Gates::set(std::string_view name, bool value) {
  const Spec* s = find(name);
  if (s == nullptr) {
    if (!isOtherComponentGate(name)) return "unrecognized feature gate: " + std::string(name);
    // Another component's gate: accepted as kube-scheduler's process accepts it, and kept to
    // warn about.
    const std::string setting = std::string(name) + "=" + boolText(value);
    std::erase_if(others_, [&](const std::string& o) {
      return o.size() > name.size() && o.compare(0, name.size(), name) == 0 &&
             o[name.size()] == '=';
    });
    others_.push_back(setting);
    std::sort(others_.begin(), others_.end());
    return std::nullopt;
  }
  if (s->lockToDefault && value != s->defaultValue) {
    return "cannot set feature gate " + std::string(name) + " to " + boolText(value) +
           ", feature is locked to " + boolText(s->defaultValue);
  }
  values_[static_cast<size_t>(s->feature)] = value;
  return std::nullopt;
}

std::optional<std::string> Gates::set(std::string_view flagValue) {
  // pflag's mapStringBool: comma-separated "key=value", both trimmed; an empty value is no item.
  std::vector<std::pair<std::string, bool>> items;
  size_t start = 0;
  while (start <= flagValue.size()) {
    size_t comma = flagValue.find(',', start);
    if (comma == std::string_view::npos) comma = flagValue.size();
    std::string_view item = trim(flagValue.substr(start, comma - start));
    start = comma + 1;
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      return "missing bool value for " + std::string(item);
    }
    const std::string_view key = trim(item.substr(0, eq));
    const std::string_view text = trim(item.substr(eq + 1));
    const auto v = parseBool(text);
    if (!v) {
      return "invalid value of " + std::string(key) + "=" + std::string(text) +
             ", err: strconv.ParseBool: parsing \"" + std::string(text) + "\": invalid syntax";
    }
    items.emplace_back(std::string(key), *v);
  }
  Gates next = *this;
  std::optional<bool> allAlpha;
  std::optional<bool> allBeta;
  std::vector<std::string_view> named;
  for (const auto& [key, v] : items) {
    if (key == kAllAlpha) {
      allAlpha = v;
      continue;
    }
    if (key == kAllBeta) {
      allBeta = v;
      continue;
    }
    if (auto err = next.set(key, v)) return err;
    named.push_back(key);
  }
  for (const Spec& s : kSpecs) {
    if (std::find(named.begin(), named.end(), s.name) != named.end() || s.lockToDefault) continue;
    if (s.stage == kAlpha && allAlpha) next.values_[static_cast<size_t>(s.feature)] = *allAlpha;
    if (s.stage == kBeta && allBeta) next.values_[static_cast<size_t>(s.feature)] = *allBeta;
  }
  *this = next;
  return std::nullopt;
}

std::string Gates::changed() const {
  std::string out;
  for (const Spec& s : kSpecs) {
    if (enabled(s.feature) == s.defaultValue) continue;
    if (!out.empty()) out += ',';
    out += std::string(s.name) + "=" + boolText(enabled(s.feature));
  }
  return out;
}

void Gates::check(std::vector<std::string>& errors, std::vector<std::string>& warnings) const {
  for (const std::string& setting : others_) {
    warnings.push_back("feature gate " + setting +
                       ": a gate of other Kubernetes components, not of the scheduler; ksched "
                       "accepts it and it changes nothing (docs/compatibility.md)");
  }
  for (const Spec& s : kSpecs) {
    const bool v = enabled(s.feature);
    if (v == s.defaultValue) continue;
    const std::string setting = std::string(s.name) + "=" + boolText(v);
    if (s.support == kRefusedOn && v) {
      errors.push_back("feature gate " + setting +
                       " is not supported by ksched yet: the pods it concerns would be scheduled "
                       "wrongly (docs/compatibility.md)");
    } else if (s.support == kNotYet || s.support == kRefusedOn) {
      warnings.push_back("feature gate " + setting +
                         ": ksched does not have this feature yet, it changes nothing "
                         "(docs/compatibility.md)");
    } else if (s.support == kAlwaysOn || s.support == kNoEffect) {
      warnings.push_back(
          "feature gate " + setting + ": changes nothing in ksched " +
          (s.support == kAlwaysOn ? "(it always behaves as with the gate on; " : "(") +
          "docs/compatibility.md)");
    }
  }
}

std::vector<std::string> knownFeatures() {
  std::vector<std::string> out = {"AllAlpha=true|false (ALPHA - default=false)",
                                  "AllBeta=true|false (BETA - default=false)"};
  for (const Spec& s : kSpecs) {
    if (s.stage == kGA || s.stage == kDeprecated) continue;
    out.push_back(std::string(s.name) + "=true|false (" + std::string(stageName(s.stage)) +
                  " - default=" + boolText(s.defaultValue) + ")");
  }
  return out;
}

}  // namespace ksched::features
