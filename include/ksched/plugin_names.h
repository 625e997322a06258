// The names of the in-tree plugins, as upstream spells them: what a profile's plugin lists and
// pluginConfig name, what each plugin's kName is, and what the configuration (defaults, v1beta1
// conversion, Policy translation) writes. One spelling of each, shared by the plugins and the
// configuration, which does not include plugin headers.
#pragma once

#include <string_view>

namespace ksched::names {

// kube-scheduler's default profile (v1), in its order (DynamicResources and
// NodeDeclaredFeatures behind their feature gates).
inline constexpr std::string_view kSchedulingGates = "SchedulingGates";
inline constexpr std::string_view kPrioritySort = "PrioritySort";
inline constexpr std::string_view kNodeUnschedulable = "NodeUnschedulable";
inline constexpr std::string_view kNodeName = "NodeName";
inline constexpr std::string_view kTaintToleration = "TaintToleration";
inline constexpr std::string_view kNodeAffinity = "NodeAffinity";
inline constexpr std::string_view kNodePorts = "NodePorts";
inline constexpr std::string_view kNodeResourcesFit = "NodeResourcesFit";
inline constexpr std::string_view kVolumeRestrictions = "VolumeRestrictions";
inline constexpr std::string_view kNodeVolumeLimits = "NodeVolumeLimits";
inline constexpr std::string_view kVolumeBinding = "VolumeBinding";
inline constexpr std::string_view kVolumeZone = "VolumeZone";
inline constexpr std::string_view kPodTopologySpread = "PodTopologySpread";
inline constexpr std::string_view kInterPodAffinity = "InterPodAffinity";
inline constexpr std::string_view kDynamicResources = "DynamicResources";
inline constexpr std::string_view kDefaultPreemption = "DefaultPreemption";
inline constexpr std::string_view kNodeResourcesBalancedAllocation =
    "NodeResourcesBalancedAllocation";
inline constexpr std::string_view kImageLocality = "ImageLocality";
inline constexpr std::string_view kDefaultBinder = "DefaultBinder";
inline constexpr std::string_view kNodeDeclaredFeatures = "NodeDeclaredFeatures";
// Scheduler preemption for in-place resize (InPlacePodVerticalScalingSchedulerPreemption).
inline constexpr std::string_view kDeferredPodScheduling = "DeferredPodScheduling";
// The Workload API's gang scheduling (GenericWorkload).
inline constexpr std::string_view kGangScheduling = "GangScheduling";
// Topology-aware placement of pod groups (TopologyAwareWorkloadScheduling).
inline constexpr std::string_view kTopologyPlacementGenerator = "TopologyPlacementGenerator";
inline constexpr std::string_view kPodGroupPodsCount = "PodGroupPodsCount";

// Kept from kube-scheduler v1.20 for v1beta1 and Policy profiles; in no default profile.
inline constexpr std::string_view kSelectorSpread = "SelectorSpread";
inline constexpr std::string_view kServiceAffinity = "ServiceAffinity";
inline constexpr std::string_view kNodeLabel = "NodeLabel";
inline constexpr std::string_view kNodePreferAvoidPods = "NodePreferAvoidPods";
inline constexpr std::string_view kEBSLimits = "EBSLimits";
inline constexpr std::string_view kGCEPDLimits = "GCEPDLimits";
inline constexpr std::string_view kAzureDiskLimits = "AzureDiskLimits";
inline constexpr std::string_view kCinderLimits = "CinderLimits";
inline constexpr std::string_view kNodeResourcesLeastAllocated = "NodeResourcesLeastAllocated";
inline constexpr std::string_view kNodeResourcesMostAllocated = "NodeResourcesMostAllocated";
inline constexpr std::string_view kRequestedToCapacityRatio = "RequestedToCapacityRatio";

// scheduler-plugins' gang scheduling; in no default profile.
inline constexpr std::string_view kCoscheduling = "Coscheduling";

// Load-aware scheduling (docs/load-aware.md): scheduler-plugins' Trimaran scores and a threshold
// Filter; in no default profile.
inline constexpr std::string_view kTargetLoadPacking = "TargetLoadPacking";
inline constexpr std::string_view kLoadVariationRiskBalancing = "LoadVariationRiskBalancing";
inline constexpr std::string_view kLoadAwareFilter = "LoadAwareFilter";

}  // namespace ksched::names
