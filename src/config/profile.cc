#include "config/profile.h"

#include <ksched/plugin_names.h>

namespace ksched::config {

PluginSet defaultMultiPoint() {
  const auto ref = [](std::string_view name, int32_t weight) {
    return PluginRef{std::string(name), weight};
  };
  PluginSet s;
  s.enabled = {
      ref(names::kSchedulingGates, 0),    ref(names::kPrioritySort, 0),
      ref(names::kNodeUnschedulable, 0),  ref(names::kNodeName, 0),
      ref(names::kTaintToleration, 3),    ref(names::kNodeAffinity, 2),
      ref(names::kNodePorts, 0),          ref(names::kNodeResourcesFit, 1),
      ref(names::kVolumeRestrictions, 0), ref(names::kNodeVolumeLimits, 0),
      ref(names::kVolumeBinding, 0),      ref(names::kVolumeZone, 0),
      ref(names::kPodTopologySpread, 2),  ref(names::kInterPodAffinity, 2),
      ref(names::kDefaultPreemption, 0),  ref(names::kNodeResourcesBalancedAllocation, 1),
      ref(names::kImageLocality, 1),      ref(names::kDefaultBinder, 0),
  };
  return s;
}

Profile defaultProfile(std::string schedulerName) {
  Profile p;
  p.schedulerName = std::move(schedulerName);
  p.plugins.multiPoint = defaultMultiPoint();
  return p;
}

}  // namespace ksched::config
