#include "config/legacy_config.h"

#include <algorithm>
#include <map>
#include <utility>

#include <ksched/plugin_names.h>

namespace ksched::config {
namespace {

// The plugins enabled, with their weights (0: not set).
PluginSet enabledSet(std::initializer_list<std::pair<std::string_view, int32_t>> refs) {
  PluginSet s;
  for (const auto& [name, weight] : refs) s.enabled.push_back({std::string(name), weight});
  return s;
}

bool enabledAt(const PluginSet& set, std::string_view name) {
  return std::any_of(set.enabled.begin(), set.enabled.end(),
                     [&](const PluginRef& r) { return r.name == name; });
}

constexpr const char* kVolumeLimitsNote =
    "EBSLimits, GCEPDLimits, AzureDiskLimits and CinderLimits are invalid in v1 and left out "
    "here (this profile runs them as v1.20 did); NodeVolumeLimits counts migrated in-tree "
    "volumes";

// Plugins ksched keeps from v1.20 for these configurations, and what current upstream has
// instead.
const std::map<std::string, std::string, std::less<>>& removedUpstream() {
  static const std::map<std::string, std::string, std::less<>> m = {
      {std::string(names::kNodeResourcesLeastAllocated),
       "NodeResourcesLeastAllocated is not in current upstream: its equivalent there is "
       "NodeResourcesFit's score with scoringStrategy LeastAllocated"},
      {std::string(names::kNodeResourcesMostAllocated),
       "NodeResourcesMostAllocated is not in current upstream: its equivalent there is "
       "NodeResourcesFit's score with scoringStrategy MostAllocated"},
      {std::string(names::kRequestedToCapacityRatio),
       "RequestedToCapacityRatio is not in current upstream: its equivalent there is "
       "NodeResourcesFit's score with scoringStrategy RequestedToCapacityRatio"},
      {std::string(names::kNodePreferAvoidPods),
       "NodePreferAvoidPods is not in current upstream, which ignores the "
       "scheduler.alpha.kubernetes.io/preferAvoidPods annotation (use taints)"},
      {std::string(names::kSelectorSpread),
       "SelectorSpread is not in current upstream: PodTopologySpread's system default "
       "constraints spread pods of a Service or controller"},
      {std::string(names::kServiceAffinity),
       "ServiceAffinity is not in current upstream: use NodeAffinity or pod affinity"},
      {std::string(names::kNodeLabel),
       "NodeLabel is not in current upstream: use NodeAffinity (required or preferred terms)"},
      {std::string(names::kEBSLimits), kVolumeLimitsNote},
      {std::string(names::kGCEPDLimits), kVolumeLimitsNote},
      {std::string(names::kAzureDiskLimits), kVolumeLimitsNote},
      {std::string(names::kCinderLimits), kVolumeLimitsNote},
  };
  return m;
}

}  // namespace

bool isLegacyApiVersion(std::string_view apiVersion) {
  return apiVersion == kApiVersionV1beta1 || apiVersion == kApiVersionV1beta2;
}

Plugins legacyDefaultPlugins(std::string_view apiVersion) {
  Plugins p;
  p.queueSort = enabledSet({{names::kPrioritySort, 0}});
  p.postFilter = enabledSet({{names::kDefaultPreemption, 0}});
  p.reserve = enabledSet({{names::kVolumeBinding, 0}});
  p.preBind = enabledSet({{names::kVolumeBinding, 0}});
  p.bind = enabledSet({{names::kDefaultBinder, 0}});
  // The same in both versions.
  p.filter = enabledSet({{names::kNodeUnschedulable, 0},
                         {names::kNodeName, 0},
                         {names::kTaintToleration, 0},
                         {names::kNodeAffinity, 0},
                         {names::kNodePorts, 0},
                         {names::kNodeResourcesFit, 0},
                         {names::kVolumeRestrictions, 0},
                         {names::kEBSLimits, 0},
                         {names::kGCEPDLimits, 0},
                         {names::kNodeVolumeLimits, 0},
                         {names::kAzureDiskLimits, 0},
                         {names::kVolumeBinding, 0},
                         {names::kVolumeZone, 0},
                         {names::kPodTopologySpread, 0},
                         {names::kInterPodAffinity, 0}});
  if (apiVersion == kApiVersionV1beta1) {
    // v1.20.2 algorithmprovider getDefaultConfig() with DefaultPodTopologySpread (beta, on).
    p.preFilter = enabledSet({{names::kNodeResourcesFit, 0},
                              {names::kNodePorts, 0},
                              {names::kPodTopologySpread, 0},
                              {names::kInterPodAffinity, 0},
                              {names::kVolumeBinding, 0}});
    p.preScore = enabledSet({{names::kInterPodAffinity, 0},
                             {names::kPodTopologySpread, 0},
                             {names::kTaintToleration, 0}});
    p.score = enabledSet({{names::kNodeResourcesBalancedAllocation, 1},
                          {names::kImageLocality, 1},
                          {names::kInterPodAffinity, 1},
                          {names::kNodeResourcesLeastAllocated, 1},
                          {names::kNodeAffinity, 1},
                          {names::kNodePreferAvoidPods, 10000},
                          {names::kPodTopologySpread, 2},
                          {names::kTaintToleration, 1}});
    return p;
  }
  // v1beta2 as its last release (v1.25) defaulted it.
  p.preFilter = enabledSet({{names::kNodeResourcesFit, 0},
                            {names::kNodePorts, 0},
                            {names::kVolumeRestrictions, 0},
                            {names::kPodTopologySpread, 0},
                            {names::kInterPodAffinity, 0},
                            {names::kVolumeBinding, 0},
                            {names::kVolumeZone, 0},
                            {names::kNodeAffinity, 0}});  // (and TaintToleration, whose PreFilter
                                                          // ksched's TaintToleration does not need)
  p.preScore = enabledSet({{names::kInterPodAffinity, 0},
                           {names::kPodTopologySpread, 0},
                           {names::kTaintToleration, 0},
                           {names::kNodeAffinity, 0}});
  p.score = enabledSet({{names::kNodeResourcesBalancedAllocation, 1},
                        {names::kImageLocality, 1},
                        {names::kInterPodAffinity, 1},
                        {names::kNodeResourcesFit, 1},
                        {names::kNodeAffinity, 1},
                        {names::kPodTopologySpread, 2},
                        {names::kTaintToleration, 1}});
  return p;
}

void noteLegacyPlugins(const Profile& profile, size_t index, std::vector<ConfigNote>& notes) {
  const std::string base = "/profiles/" + std::to_string(index) + "/plugins/";
  std::map<std::string, bool> noted;  // by note text
  for (const auto& f : kExtensionPoints) {
    for (const auto& ref : (profile.plugins.*f.set).enabled) {
      auto it = removedUpstream().find(ref.name);
      if (it == removedUpstream().end() || noted[it->second]) continue;
      noted[it->second] = true;
      notes.push_back({base + std::string(f.field), it->second});
    }
  }
  for (const auto& ref : profile.plugins.score.enabled) {
    if (ref.weight > 100) {
      notes.push_back(
          {base + "score", ref.name + " has weight " + std::to_string(ref.weight) +
                               " (v1.20 allowed it); v1 allows at most 100, written as 100 here"});
    }
  }
  if (enabledAt(profile.plugins.score, names::kNodeResourcesBalancedAllocation)) {
    for (const auto& pc : profile.pluginConfig) {
      if (pc.name == names::kNodeResourcesBalancedAllocation && pc.args.is_object() &&
          pc.args.value("formula", "") == "v1.20") {
        notes.push_back({"/profiles/" + std::to_string(index) + "/pluginConfig",
                         "NodeResourcesBalancedAllocation formula v1.20 (1 - |cpu fraction - "
                         "memory fraction| of non-zero requests) is a ksched extension; current "
                         "upstream scores 1 - the standard deviation of plain requests"});
      }
    }
  }
}

Profile convertLegacyProfile(const Profile& profile, std::string_view apiVersion, size_t index,
                             std::vector<ConfigNote>& notes) {
  const Plugins defaults = legacyDefaultPlugins(apiVersion);
  Profile out = profile;
  out.plugins = Plugins{};
  for (const auto& f : kExtensionPoints) {
    // The disabled names stay: they also keep the framework from adding companion points.
    out.plugins.*f.set = mergePluginSet(defaults.*f.set, profile.plugins.*f.set);
  }
  // Args typed in the file's version are the v1 form's untyped args (v1 would reject the
  // version); other versions stay, for validation to report.
  for (auto& pc : out.pluginConfig) {
    if (auto it = pc.args.is_object() ? pc.args.find("apiVersion") : pc.args.end();
        it != pc.args.end() && it->is_string() && it->get<std::string>() == apiVersion) {
      pc.args.erase(it);
    }
  }
  out.plugins.preEnqueue = enabledSet({{names::kSchedulingGates, 0}});
  out.plugins.multiPoint.disabled = {{"*", 0}};
  if (apiVersion == kApiVersionV1beta1) {
    out.v120ScoreWeights = true;
    if (enabledAt(out.plugins.score, names::kNodeResourcesBalancedAllocation)) {
      auto it = std::find_if(out.pluginConfig.begin(), out.pluginConfig.end(),
                             [](const PluginConfig& pc) {
                               return pc.name == names::kNodeResourcesBalancedAllocation;
                             });
      if (it == out.pluginConfig.end()) {
        out.pluginConfig.push_back({std::string(names::kNodeResourcesBalancedAllocation),
                                    nlohmann::json{{"formula", "v1.20"}}});
      } else if (it->args.is_null() || it->args.is_object()) {
        if (it->args.is_null()) it->args = nlohmann::json::object();
        if (!it->args.contains("formula")) it->args["formula"] = "v1.20";
      }
    }
  }
  noteLegacyPlugins(out, index, notes);
  return out;
}

}  // namespace ksched::config
