#include <algorithm>
#include <array>

#include <ksched/helper/node_declared_features.h>

namespace ksched::plugins::helper {
namespace {

bool restartsAllContainers(const api::PodSpec& spec) {
  auto any = [](const std::vector<api::Container>& containers) {
    return std::any_of(containers.begin(), containers.end(), [](const api::Container& c) {
      return std::any_of(c.restartPolicyRules.begin(), c.restartPolicyRules.end(),
                         [](const api::ContainerRestartRule& r) {
                           return r.action == api::kContainerRestartRuleActionRestartAllContainers;
                         });
    });
  };
  return any(spec.containers) || any(spec.initContainers);
}

bool hostNetworkInUserNamespace(const api::PodSpec& spec) {
  return spec.hostNetwork && spec.hostUsers.has_value() && !*spec.hostUsers;
}

bool usesBindMountOptions(const api::PodSpec& spec) {
  auto any = [](const std::vector<api::Container>& containers) {
    return std::any_of(containers.begin(), containers.end(), [](const api::Container& c) {
      return std::any_of(c.volumeMounts.begin(), c.volumeMounts.end(),
                         [](const api::VolumeMount& m) { return !m.bindMountOptions.empty(); });
    });
  };
  return any(spec.containers) || any(spec.initContainers) || any(spec.ephemeralContainers);
}

// Upstream's AllFeatures, in name order. The in-place resize features are inferred from pod
// updates only (the kubelet's admission), the DRA and websocket ones by other components.
constexpr std::array<DeclaredFeature, 9> kRegistry = {{
    {"DRANodeAllocatableResources", "1.38", nullptr, ""},
    {"DRAOptionalNodeOperations", "1.38", nullptr, ""},
    {"ExtendWebSocketsToKubelet", "1.36", nullptr, ""},
    {"InPlacePodLevelResourcesVerticalScaling", "1.35", nullptr, ""},
    {"InPlacePodVerticalScalingInitContainers", "1.36", nullptr, ""},
    {"InPlacePodVerticalScalingMemoryBackedVolumes", "1.38", nullptr, ""},
    {"RestartAllContainersOnContainerExits", "1.35", &restartsAllContainers,
     "a restartPolicyRules action RestartAllContainers"},
    {"UserNamespacesHostNetworkSupport", "1.36", &hostNetworkInUserNamespace,
     "hostNetwork with hostUsers false"},
    {"VolumeBindMountOptions", "1.38", &usesBindMountOptions, "bindMountOptions on a volume mount"},
}};

constexpr bool inNameOrder() {
  for (size_t i = 1; i < kRegistry.size(); ++i) {
    if (!(kRegistry[i - 1].name < kRegistry[i].name)) return false;
  }
  return kRegistry.size() <= 32;
}
static_assert(inNameOrder(), "the registry is in name order and fits a FeatureSet");

}  // namespace

std::span<const DeclaredFeature> declaredFeatureRegistry() noexcept { return kRegistry; }

std::vector<std::string_view> FeatureSet::names() const {
  std::vector<std::string_view> out;
  for (size_t i = 0; i < kRegistry.size(); ++i) {
    if (contains(i)) out.push_back(kRegistry[i].name);
  }
  return out;
}

FeatureSet requiredFeatures(const api::Pod& pod) {
  FeatureSet out;
  for (size_t i = 0; i < kRegistry.size(); ++i) {
    if (kRegistry[i].neededBy != nullptr && kRegistry[i].neededBy(pod.spec)) out.add(i);
  }
  return out;
}

FeatureSet declaredFeatures(const api::Node& node) {
  FeatureSet out;
  for (const auto& name : node.status.declaredFeatures) {
    auto it =
        std::lower_bound(kRegistry.begin(), kRegistry.end(), name,
                         [](const DeclaredFeature& f, const std::string& n) { return f.name < n; });
    if (it != kRegistry.end() && it->name == name) {
      out.add(static_cast<size_t>(it - kRegistry.begin()));
    }
  }
  return out;
}

}  // namespace ksched::plugins::helper
