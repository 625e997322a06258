// KubeSchedulerConfiguration -> v1 JSON / YAML (what --write-config-to writes).
#include <algorithm>
#include <cmath>

#include <ksched/plugin_names.h>

#include "config/scheduler_config.h"
#include "config/yaml_json.h"
#include "util/base64.h"

namespace ksched::config {
namespace {

using nlohmann::json;

// Plugins v1 rejects (upstream invalidPluginsByVersion); a converted v1.20 profile runs them,
// its v1 form leaves them out (the conversion notes say so).
bool invalidInV1(const std::string& name) {
  return name == names::kAzureDiskLimits || name == names::kCinderLimits ||
         name == names::kEBSLimits || name == names::kGCEPDLimits;
}

json pluginList(const std::vector<PluginRef>& refs, bool withWeight) {
  json out = json::array();
  for (const auto& r : refs) {
    if (invalidInV1(r.name)) continue;
    json p = {{"name", r.name}};
    // v1 allows at most 100 (a converted v1.20 profile may have more: see its note).
    if (withWeight && r.weight != 0) p["weight"] = std::min(r.weight, 100);
    out.push_back(std::move(p));
  }
  return out;
}

json pluginSet(const PluginSet& s) {
  json out = json::object();
  if (!s.enabled.empty()) out["enabled"] = pluginList(s.enabled, true);
  if (!s.disabled.empty()) out["disabled"] = pluginList(s.disabled, false);
  return out;
}

json profileJson(const Profile& p) {
  json out;
  out["schedulerName"] = p.schedulerName;
  if (p.percentageOfNodesToScore) out["percentageOfNodesToScore"] = *p.percentageOfNodesToScore;
  if (p.percentageOfPlacementsToScore) {
    out["percentageOfPlacementsToScore"] = *p.percentageOfPlacementsToScore;
  }
  const Plugins& pl = p.plugins;
  json& plugins = out["plugins"] = json::object();
  for (const auto& f : kExtensionPoints) plugins[std::string(f.field)] = pluginSet(pl.*f.set);
  plugins["multiPoint"] = pluginSet(pl.multiPoint);
  json configs = json::array();
  for (const auto& pc : p.pluginConfig) {
    json c = {{"name", pc.name}};
    if (!pc.args.is_null()) c["args"] = pc.args;
    configs.push_back(std::move(c));
  }
  if (!configs.empty()) out["pluginConfig"] = std::move(configs);
  return out;
}

json extenderJson(const Extender& e) {
  json out = {
      {"urlPrefix", e.urlPrefix},
      {"filterVerb", e.filterVerb},
      {"preemptVerb", e.preemptVerb},
      {"prioritizeVerb", e.prioritizeVerb},
      {"weight", e.weight},
      {"bindVerb", e.bindVerb},
      {"enableHTTPS", e.enableHTTPS},
      {"httpTimeout", formatDuration(e.httpTimeout)},
      {"nodeCacheCapable", e.nodeCacheCapable},
      {"ignorable", e.ignorable},
  };
  if (e.tlsConfig) {
    const auto& t = *e.tlsConfig;
    out["tlsConfig"] = {
        {"insecure", t.insecure},
        {"serverName", t.serverName},
        {"certFile", t.certFile},
        {"keyFile", t.keyFile},
        {"caFile", t.caFile},
        {"certData", util::base64Encode(t.certData)},
        {"keyData", util::base64Encode(t.keyData)},
        {"caData", util::base64Encode(t.caData)},
    };
  }
  json managed = json::array();
  for (const auto& r : e.managedResources) {
    managed.push_back({{"name", r.name}, {"ignoredByScheduler", r.ignoredByScheduler}});
  }
  if (!managed.empty()) out["managedResources"] = std::move(managed);
  return out;
}

// float32 printed with the precision it has (50 -> 50, 0.1f -> 0.1).
json qpsJson(float qps) {
  if (std::nearbyint(qps) == qps && std::fabs(qps) < 1e15f) return static_cast<int64_t>(qps);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.7g", static_cast<double>(qps));
  return std::strtod(buf, nullptr);
}

}  // namespace

json toJson(const SchedulerConfiguration& c) {
  json out;
  out["apiVersion"] = std::string(kApiVersionV1);
  out["kind"] = std::string(kKind);
  out["parallelism"] = c.parallelism;
  const auto& le = c.leaderElection;
  out["leaderElection"] = {
      {"leaderElect", le.leaderElect},
      {"leaseDuration", formatDuration(le.leaseDuration)},
      {"renewDeadline", formatDuration(le.renewDeadline)},
      {"retryPeriod", formatDuration(le.retryPeriod)},
      {"resourceLock", le.resourceLock},
      {"resourceName", le.resourceName},
      {"resourceNamespace", le.resourceNamespace},
  };
  const auto& cc = c.clientConnection;
  out["clientConnection"] = {
      {"kubeconfig", cc.kubeconfig},
      {"acceptContentTypes", cc.acceptContentTypes},
      {"contentType", cc.contentType},
      {"qps", qpsJson(cc.qps)},
      {"burst", cc.burst},
  };
  out["enableProfiling"] = c.enableProfiling;
  out["enableContentionProfiling"] = c.enableContentionProfiling;
  out["percentageOfNodesToScore"] = c.percentageOfNodesToScore;
  if (c.percentageOfPlacementsToScore != 0) {
    out["percentageOfPlacementsToScore"] = c.percentageOfPlacementsToScore;
  }
  out["podInitialBackoffSeconds"] = c.podInitialBackoffSeconds;
  out["podMaxBackoffSeconds"] = c.podMaxBackoffSeconds;
  json profiles = json::array();
  for (const auto& p : c.profiles)
    profiles.push_back(profileJson(effectiveProfile(p, c.apiVersion, c.featureGates)));
  out["profiles"] = std::move(profiles);
  if (!c.extenders.empty()) {
    json extenders = json::array();
    for (const auto& e : c.extenders) extenders.push_back(extenderJson(e));
    out["extenders"] = std::move(extenders);
  }
  out["delayCacheUntilActive"] = c.delayCacheUntilActive;
  return out;
}

std::string toYaml(const SchedulerConfiguration& c) {
  std::vector<std::pair<std::string, std::string>> comments;
  for (const auto& n : c.notes) comments.emplace_back(n.pointer, n.text);
  return jsonToYaml(toJson(c), comments);
}

}  // namespace ksched::config
