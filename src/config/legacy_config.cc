#include "config/legacy_config.h"

#include <algorithm>
#include <map>

namespace ksched::config {
namespace {

PluginSet names(std::initializer_list<PluginRef> refs) {
  PluginSet s;
  s.enabled.assign(refs.begin(), refs.end());
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
      {"NodeResourcesLeastAllocated",
       "NodeResourcesLeastAllocated is not in current upstream: its equivalent there is "
       "NodeResourcesFit's score with scoringStrategy LeastAllocated"},
      {"NodeResourcesMostAllocated",
       "NodeResourcesMostAllocated is not in current upstream: its equivalent there is "
       "NodeResourcesFit's score with scoringStrategy MostAllocated"},
      {"RequestedToCapacityRatio",
       "RequestedToCapacityRatio is not in current upstream: its equivalent there is "
       "NodeResourcesFit's score with scoringStrategy RequestedToCapacityRatio"},
      {"NodePreferAvoidPods",
       "NodePreferAvoidPods is not in current upstream, which ignores the "
       "scheduler.alpha.kubernetes.io/preferAvoidPods annotation (use taints)"},
      {"SelectorSpread",
       "SelectorSpread is not in current upstream: PodTopologySpread's system default "
       "constraints spread pods of a Service or controller"},
      {"ServiceAffinity",
       "ServiceAffinity is not in current upstream: use NodeAffinity or pod affinity"},
      {"NodeLabel",
       "NodeLabel is not in current upstream: use NodeAffinity (required or preferred terms)"},
      {"EBSLimits", kVolumeLimitsNote},
      {"GCEPDLimits", kVolumeLimitsNote},
      {"AzureDiskLimits", kVolumeLimitsNote},
      {"CinderLimits", kVolumeLimitsNote},
  };
  return m;
}

}  // namespace

bool isLegacyApiVersion(std::string_view apiVersion) {
  return apiVersion == kApiVersionV1beta1 || apiVersion == kApiVersionV1beta2;
}

Plugins legacyDefaultPlugins(std::string_view apiVersion) {
  Plugins p;
  p.queueSort = names({{"PrioritySort", 0}});
  p.postFilter = names({{"DefaultPreemption", 0}});
  p.reserve = names({{"VolumeBinding", 0}});
  p.preBind = names({{"VolumeBinding", 0}});
  p.bind = names({{"DefaultBinder", 0}});
  // The same in both versions.
  p.filter = names({{"NodeUnschedulable", 0},
                    {"NodeName", 0},
                    {"TaintToleration", 0},
                    {"NodeAffinity", 0},
                    {"NodePorts", 0},
                    {"NodeResourcesFit", 0},
                    {"VolumeRestrictions", 0},
                    {"EBSLimits", 0},
                    {"GCEPDLimits", 0},
                    {"NodeVolumeLimits", 0},
                    {"AzureDiskLimits", 0},
                    {"VolumeBinding", 0},
                    {"VolumeZone", 0},
                    {"PodTopologySpread", 0},
                    {"InterPodAffinity", 0}});
  if (apiVersion == kApiVersionV1beta1) {
    // v1.20.2 algorithmprovider getDefaultConfig() with DefaultPodTopologySpread (beta, on).
    p.preFilter = names({{"NodeResourcesFit", 0},
                         {"NodePorts", 0},
                         {"PodTopologySpread", 0},
                         {"InterPodAffinity", 0},
                         {"VolumeBinding", 0}});
    p.preScore = names({{"InterPodAffinity", 0}, {"PodTopologySpread", 0}, {"TaintToleration", 0}});
    p.score = names({{"NodeResourcesBalancedAllocation", 1},
                     {"ImageLocality", 1},
                     {"InterPodAffinity", 1},
                     {"NodeResourcesLeastAllocated", 1},
                     {"NodeAffinity", 1},
                     {"NodePreferAvoidPods", 10000},
                     {"PodTopologySpread", 2},
                     {"TaintToleration", 1}});
    return p;
  }
  // v1beta2 as its last release (v1.25) defaulted it.
  p.preFilter = names({{"NodeResourcesFit", 0},
                       {"NodePorts", 0},
                       {"VolumeRestrictions", 0},
                       {"PodTopologySpread", 0},
                       {"InterPodAffinity", 0},
                       {"VolumeBinding", 0},
                       {"VolumeZone", 0},
                       {"NodeAffinity", 0}});  // (and TaintToleration, whose PreFilter
                                               // ksched's TaintToleration does not need)
  p.preScore = names({{"InterPodAffinity", 0},
                      {"PodTopologySpread", 0},
                      {"TaintToleration", 0},
                      {"NodeAffinity", 0}});
  p.score = names({{"NodeResourcesBalancedAllocation", 1},
                   {"ImageLocality", 1},
                   {"InterPodAffinity", 1},
                   {"NodeResourcesFit", 1},
                   {"NodeAffinity", 1},
                   {"PodTopologySpread", 2},
                   {"TaintToleration", 1}});
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
  if (enabledAt(profile.plugins.score, "NodeResourcesBalancedAllocation")) {
    for (const auto& pc : profile.pluginConfig) {
      if (pc.name == "NodeResourcesBalancedAllocation" && pc.args.is_object() &&
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
  out.plugins.preEnqueue = names({{"SchedulingGates", 0}});
  out.plugins.multiPoint.disabled = {{"*", 0}};
  if (apiVersion == kApiVersionV1beta1) {
    out.v120ScoreWeights = true;
    if (enabledAt(out.plugins.score, "NodeResourcesBalancedAllocation")) {
      auto it = std::find_if(
          out.pluginConfig.begin(), out.pluginConfig.end(),
          [](const PluginConfig& pc) { return pc.name == "NodeResourcesBalancedAllocation"; });
      if (it == out.pluginConfig.end()) {
        out.pluginConfig.push_back(
            {"NodeResourcesBalancedAllocation", nlohmann::json{{"formula", "v1.20"}}});
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
