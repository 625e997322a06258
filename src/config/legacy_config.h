// KubeSchedulerConfiguration v1beta1 (v1.19-v1.21) and v1beta2 (v1.22-v1.25), read into the v1
// shape ksched runs: every profile lists its plugins per extension point, merged into the
// version's own defaults, and disables v1's multiPoint defaults ("*"). So a converted profile
// runs the plugins the old release ran, and toYaml() writes a v1 file with the same plugins.
//
// v1beta1's defaults are v1.20.2's DefaultProvider (DefaultPodTopologySpread on):
// NodeResourcesLeastAllocated, NodePreferAvoidPods at weight 10000, EBSLimits, GCEPDLimits,
// AzureDiskLimits, every Score weight 1 but PodTopologySpread's 2; its profiles score with
// v1.20's formulas (NodeResourcesBalancedAllocation `formula: v1.20`) and accept v1.20's score
// weights. v1beta2's are its last release's: NodeResourcesFit scores (LeastAllocated), no
// NodePreferAvoidPods, weights 1 (PodTopologySpread 2).
//
// Both also get SchedulingGates at PreEnqueue (v1.20's apiserver has no scheduling gates, so it
// changes nothing there). The framework adds each plugin's companion points (PreFilter for a
// Filter plugin, PreScore for a Score plugin) that current plugins need and v1.20 lists lack.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "config/profile.h"
#include "config/scheduler_config.h"

namespace ksched::config {

// True for v1beta1 and v1beta2.
[[nodiscard]] bool isLegacyApiVersion(std::string_view apiVersion);

// The per-point default plugins of v1beta1 or v1beta2 (multiPoint empty).
[[nodiscard]] Plugins legacyDefaultPlugins(std::string_view apiVersion);

// `profile` as decoded from a v1beta1/v1beta2 file (per-point sets as written) in the v1 shape:
// each point merged into the version's defaults (upstream mergePluginSet), multiPoint
// disabled "*", SchedulingGates at PreEnqueue; for v1beta1 the v1.20 formula and weights.
// Appends notes (pointers under /profiles/<index>) where current upstream differs.
[[nodiscard]] Profile convertLegacyProfile(const Profile& profile, std::string_view apiVersion,
                                           size_t index, std::vector<ConfigNote>& notes);

// Notes for plugins ksched keeps from v1.20 that current upstream removed, for the profile at
// `index` (its effective plugins), appended to `notes`. Used by both conversions.
void noteLegacyPlugins(const Profile& profile, size_t index, std::vector<ConfigNote>& notes);

}  // namespace ksched::config
