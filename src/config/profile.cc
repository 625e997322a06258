#include "config/profile.h"

namespace ksched::config {

PluginSet defaultMultiPoint() {
  PluginSet s;
  s.enabled = {
      {"SchedulingGates", 0},    {"PrioritySort", 0},
      {"NodeUnschedulable", 0},  {"NodeName", 0},
      {"TaintToleration", 3},    {"NodeAffinity", 2},
      {"NodePorts", 0},          {"NodeResourcesFit", 1},
      {"VolumeRestrictions", 0}, {"NodeVolumeLimits", 0},
      {"VolumeBinding", 0},      {"VolumeZone", 0},
      {"PodTopologySpread", 2},  {"InterPodAffinity", 2},
      {"DefaultPreemption", 0},  {"NodeResourcesBalancedAllocation", 1},
      {"ImageLocality", 1},      {"DefaultBinder", 0},
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
