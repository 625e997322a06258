#include <algorithm>
#include <cctype>

#include <ksched/api/features.h>

namespace ksched::features {
namespace {

using enum Stage;
using F = Feature;

// Upstream's stages and defaults at Kubernetes 1.37 (pkg/features and the scheduler's own
// feature list), name order.
constexpr std::array<Spec, static_cast<size_t>(Feature::kCount)> kSpecs = {{
    {F::kCompositePodGroup, "CompositePodGroup", kAlpha, false, false},
    {F::kDRAAdminAccess, "DRAAdminAccess", kGA, true, true},
    {F::kDRAConsumableCapacity, "DRAConsumableCapacity", kBeta, true, false},
    {F::kDRADerivedAttributes, "DRADerivedAttributes", kAlpha, false, false},
    {F::kDRADeviceBindingConditions, "DRADeviceBindingConditions", kBeta, true, false},
    {F::kDRADeviceCompatibilityGroups, "DRADeviceCompatibilityGroups", kAlpha, false, false},
    {F::kDRADeviceTaintRules, "DRADeviceTaintRules", kGA, true, false},
    {F::kDRADeviceTaints, "DRADeviceTaints", kGA, true, false},
    {F::kDRAExtendedResource, "DRAExtendedResource", kGA, true, true},
    {F::kDRAFractionalCapacityRange, "DRAFractionalCapacityRange", kBeta, true, false},
    {F::kDRAListTypeAttributes, "DRAListTypeAttributes", kAlpha, false, false},
    {F::kDRANodeAllocatableResources, "DRANodeAllocatableResources", kAlpha, false, false},
    {F::kDRAOptionalNodeOperations, "DRAOptionalNodeOperations", kAlpha, false, false},
    {F::kDRAPartitionableDevices, "DRAPartitionableDevices", kBeta, true, false},
    {F::kDRAPrioritizedList, "DRAPrioritizedList", kGA, true, true},
    {F::kDRAResourceClaimDeviceStatus, "DRAResourceClaimDeviceStatus", kGA, true, true},
    {F::kDRASchedulerFilterTimeout, "DRASchedulerFilterTimeout", kBeta, true, false},
    {F::kDRAWorkloadResourceClaims, "DRAWorkloadResourceClaims", kBeta, false, false},
    {F::kDynamicResourceAllocation, "DynamicResourceAllocation", kGA, true, true},
    {F::kGenericWorkload, "GenericWorkload", kBeta, false, false},
    {F::kInPlacePodLevelResourcesVerticalScaling, "InPlacePodLevelResourcesVerticalScaling", kBeta,
     true, false},
    {F::kInPlacePodVerticalScaling, "InPlacePodVerticalScaling", kGA, true, true},
    {F::kInPlacePodVerticalScalingSchedulerPreemption,
     "InPlacePodVerticalScalingSchedulerPreemption", kAlpha, false, false},
    {F::kInterPodAffinityHostnameFastPath, "InterPodAffinityHostnameFastPath", kAlpha, false,
     false},
    {F::kMatchLabelKeysInPodAffinity, "MatchLabelKeysInPodAffinity", kGA, true, true},
    {F::kMatchLabelKeysInPodTopologySpread, "MatchLabelKeysInPodTopologySpread", kBeta, true,
     false},
    {F::kMatchLabelKeysInPodTopologySpreadSelectorMerge,
     "MatchLabelKeysInPodTopologySpreadSelectorMerge", kBeta, true, false},
    {F::kNodeDeclaredFeatures, "NodeDeclaredFeatures", kGA, true, true},
    {F::kNodeInclusionPolicyInPodTopologySpread, "NodeInclusionPolicyInPodTopologySpread", kGA,
     true, true},
    {F::kNominatedNodeNameForExpectation, "NominatedNodeNameForExpectation", kBeta, true, false},
    {F::kOpportunisticBatching, "OpportunisticBatching", kBeta, true, false},
    {F::kPodGroupPreemptionPolicy, "PodGroupPreemptionPolicy", kAlpha, false, false},
    {F::kPodLevelResources, "PodLevelResources", kBeta, true, false},
    {F::kPodObservedGenerationTracking, "PodObservedGenerationTracking", kGA, true, true},
    {F::kSchedulerAsyncAPICalls, "SchedulerAsyncAPICalls", kBeta, false, false},
    {F::kSchedulerAsyncPreemption, "SchedulerAsyncPreemption", kBeta, true, false},
    {F::kSchedulerPopFromBackoffQ, "SchedulerPopFromBackoffQ", kBeta, true, false},
    {F::kSchedulerPreEnqueuePodStatus, "SchedulerPreEnqueuePodStatus", kBeta, true, false},
    {F::kSchedulerPreQueueingHints, "SchedulerPreQueueingHints", kAlpha, false, false},
    {F::kSidecarContainers, "SidecarContainers", kGA, true, true},
    {F::kStorageCapacityScoring, "StorageCapacityScoring", kBeta, true, false},
    {F::kTaintTolerationComparisonOperators, "TaintTolerationComparisonOperators", kAlpha, false,
     false},
    {F::kTopologyAwareWorkloadScheduling, "TopologyAwareWorkloadScheduling", kAlpha, false, false},
    {F::kVolumeAttributesClass, "VolumeAttributesClass", kGA, true, true},
    {F::kVolumeLimitScaling, "VolumeLimitScaling", kBeta, true, false},
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

Gates& currentGates() noexcept {
  static Gates gates;
  return gates;
}

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
  if (s == nullptr) return "unrecognized feature gate: " + std::string(name);
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

const Gates& current() noexcept { return currentGates(); }

void setCurrent(const Gates& gates) noexcept { currentGates() = gates; }

}  // namespace ksched::features
