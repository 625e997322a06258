#include "config/profile.h"

#include <ksched/api/features.h>
#include <ksched/plugin_names.h>

namespace ksched::config {

PluginSet defaultMultiPoint(const features::Gates& gates) {
  using features::Feature;
  PluginSet s;
  auto add = [&s](std::string_view name, int32_t weight = 0) {
    s.enabled.push_back(PluginRef{std::string(name), weight});
  };
  // Upstream getDefaultPlugins.
  add(names::kSchedulingGates);
  add(names::kPrioritySort);
  add(names::kNodeUnschedulable);
  add(names::kNodeName);
  add(names::kTaintToleration, 3);
  add(names::kNodeAffinity, 2);
  add(names::kNodePorts);
  // Upstream applyFeatureGates inserts it right before NodeResourcesFit.
  if (gates.enabled(Feature::kInPlacePodVerticalScalingSchedulerPreemption)) {
    add(names::kDeferredPodScheduling);
  }
  add(names::kNodeResourcesFit, 1);
  add(names::kVolumeRestrictions);
  add(names::kNodeVolumeLimits);
  add(names::kVolumeBinding);
  add(names::kVolumeZone);
  add(names::kPodTopologySpread, 2);
  add(names::kInterPodAffinity, 2);
  // Before DefaultPreemption: better to free an idle claim than to evict a pod.
  if (gates.enabled(Feature::kDynamicResourceAllocation)) add(names::kDynamicResources, 2);
  add(names::kDefaultPreemption);
  add(names::kNodeResourcesBalancedAllocation, 1);
  add(names::kImageLocality, 1);
  add(names::kDefaultBinder);
  // Upstream applyFeatureGates, for the plugins ksched has.
  if (gates.enabled(Feature::kNodeDeclaredFeatures)) add(names::kNodeDeclaredFeatures);
  if (gates.enabled(Feature::kGenericWorkload)) add(names::kGangScheduling);
  if (gates.enabled(Feature::kTopologyAwareWorkloadScheduling)) {
    add(names::kTopologyPlacementGenerator);
    add(names::kPodGroupPodsCount, 1);
  }
  return s;
}

Profile defaultProfile(const features::Gates& gates, std::string schedulerName) {
  Profile p;
  p.schedulerName = std::move(schedulerName);
  p.plugins.multiPoint = defaultMultiPoint(gates);
  return p;
}

}  // namespace ksched::config
