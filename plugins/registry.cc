#include "plugins/registry.h"

#include "plugins/balanced_allocation/balanced_allocation.h"
#include "plugins/coscheduling/coscheduling.h"
#include "plugins/default_binder/default_binder.h"
#include "plugins/default_preemption/default_preemption.h"
#include "plugins/deferred_pod_scheduling/deferred_pod_scheduling.h"
#include "plugins/dynamic_resources/dynamic_resources.h"
#include "plugins/gang_scheduling/gang_scheduling.h"
#include "plugins/image_locality/image_locality.h"
#include "plugins/inter_pod_affinity/inter_pod_affinity.h"
#include "plugins/legacy_resource_scoring/legacy_resource_scoring.h"
#include "plugins/load_aware/load_aware.h"
#include "plugins/node_affinity/node_affinity.h"
#include "plugins/node_declared_features/node_declared_features.h"
#include "plugins/node_label/node_label.h"
#include "plugins/node_name/node_name.h"
#include "plugins/node_ports/node_ports.h"
#include "plugins/node_prefer_avoid_pods/node_prefer_avoid_pods.h"
#include "plugins/node_resources_fit/node_resources_fit.h"
#include "plugins/node_unschedulable/node_unschedulable.h"
#include "plugins/node_volume_limits/node_volume_limits.h"
#include "plugins/non_csi_volume_limits/non_csi_volume_limits.h"
#include "plugins/pod_topology_spread/pod_topology_spread.h"
#include "plugins/priority_sort/priority_sort.h"
#include "plugins/scheduling_gates/scheduling_gates.h"
#include "plugins/selector_spread/selector_spread.h"
#include "plugins/service_affinity/service_affinity.h"
#include "plugins/taint_toleration/taint_toleration.h"
#include "plugins/topology_placement/topology_placement.h"
#include "plugins/volume_binding/volume_binding.h"
#include "plugins/volume_restrictions/volume_restrictions.h"
#include "plugins/volume_zone/volume_zone.h"

namespace ksched::plugins {

Registry inTreeRegistry() {
  Registry r;
  r.add(std::string(PrioritySort::kName), prioritySortFactory());
  r.add(std::string(SchedulingGates::kName), schedulingGatesFactory());
  r.add(std::string(NodeUnschedulable::kName), nodeUnschedulableFactory());
  r.add(std::string(NodeName::kName), nodeNameFactory());
  r.add(std::string(TopologyPlacementGenerator::kName), topologyPlacementGeneratorFactory());
  r.add(std::string(PodGroupPodsCount::kName), podGroupPodsCountFactory());
  r.add(std::string(TaintToleration::kName), taintTolerationFactory());
  r.add(std::string(NodeResourcesFit::kName), nodeResourcesFitFactory());
  r.add(std::string(NodeAffinity::kName), nodeAffinityFactory());
  r.add(std::string(NodePorts::kName), nodePortsFactory());
  r.add(std::string(PodTopologySpread::kName), podTopologySpreadFactory());
  r.add(std::string(InterPodAffinity::kName), interPodAffinityFactory());
  r.add(std::string(ImageLocality::kName), imageLocalityFactory());
  r.add(std::string(NodeResourcesBalancedAllocation::kName),
        nodeResourcesBalancedAllocationFactory());
  r.add(std::string(DefaultPreemption::kName), defaultPreemptionFactory());
  r.add(std::string(DefaultBinder::kName), defaultBinderFactory());
  r.add(std::string(VolumeRestrictions::kName), volumeRestrictionsFactory());
  r.add(std::string(NodeVolumeLimits::kName), nodeVolumeLimitsFactory());
  r.add(std::string(VolumeBinding::kName), volumeBindingFactory());
  r.add(std::string(VolumeZone::kName), volumeZoneFactory());
  r.add(std::string(DynamicResources::kName), dynamicResourcesFactory());
  r.add(std::string(NodeDeclaredFeatures::kName), nodeDeclaredFeaturesFactory());
  r.add(std::string(DeferredPodScheduling::kName), deferredPodSchedulingFactory());
  // Kept from v1.20 for v1beta1 and Policy profiles; in no default profile.
  r.add(std::string(SelectorSpread::kName), selectorSpreadFactory());
  r.add(std::string(ServiceAffinity::kName), serviceAffinityFactory());
  r.add(std::string(NodeLabel::kName), nodeLabelFactory());
  r.add(std::string(NodePreferAvoidPods::kName), nodePreferAvoidPodsFactory());
  r.add(std::string(NonCSIVolumeLimits::kEBSName), ebsLimitsFactory());
  r.add(std::string(NonCSIVolumeLimits::kGCEPDName), gcePdLimitsFactory());
  r.add(std::string(NonCSIVolumeLimits::kAzureDiskName), azureDiskLimitsFactory());
  r.add(std::string(NonCSIVolumeLimits::kCinderName), cinderLimitsFactory());
  r.add(std::string(LegacyResourceScoring::kLeastAllocatedName),
        nodeResourcesLeastAllocatedFactory());
  r.add(std::string(LegacyResourceScoring::kMostAllocatedName),
        nodeResourcesMostAllocatedFactory());
  r.add(std::string(LegacyResourceScoring::kRequestedToCapacityRatioName),
        requestedToCapacityRatioFactory());
  // scheduler-plugins' gang scheduling, in no default profile.
  r.add(std::string(Coscheduling::kName), coschedulingFactory());
  // kube-scheduler's gang scheduling of the Workload API.
  r.add(std::string(GangScheduling::kName), gangSchedulingFactory());
  // Load-aware scheduling (docs/load-aware.md), in no default profile.
  r.add(std::string(TargetLoadPacking::kName), targetLoadPackingFactory());
  r.add(std::string(LoadVariationRiskBalancing::kName), loadVariationRiskBalancingFactory());
  r.add(std::string(LoadAwareFilter::kName), loadAwareFilterFactory());
  return r;
}

}  // namespace ksched::plugins
