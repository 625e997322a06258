// Decoding and defaulting of KubeSchedulerConfiguration.
#include "config/scheduler_config.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include <ksched/plugin_names.h>

#include "config/legacy_config.h"
#include "config/strict_decoder.h"
#include "config/yaml_json.h"

namespace ksched::config {
namespace {

using decode::child;
using decode::decodeExtender;
using decode::Decoder;
using decode::index;
using nlohmann::json;

void decodePluginList(Decoder& d, const json& j, std::string_view key, const std::string& path,
                      std::vector<PluginRef>& out) {
  const json* list = d.array(j, key, path);
  if (list == nullptr) return;
  const std::string listPath = child(path, key);
  for (size_t i = 0; i < list->size(); ++i) {
    const json& item = (*list)[i];
    const std::string p = index(listPath, i);
    if (!d.object(item, p, {"name", "weight"})) continue;
    PluginRef ref;
    if (auto name = d.string(item, "name", p)) ref.name = *name;
    if (auto w = d.int32(item, "weight", p)) ref.weight = *w;
    out.push_back(std::move(ref));
  }
}

// What a version's files may hold beyond v1beta3's fields.
struct VersionFields {
  bool preEnqueue = false;         // v1
  bool multiPoint = true;          // v1, v1beta3
  bool profilePercentage = false;  // v1: profiles[].percentageOfNodesToScore
  bool bindAddresses = false;      // v1beta1, v1beta2: healthz/metricsBindAddress
  bool delayCacheUntilActive = true;
};

VersionFields fieldsOf(std::string_view apiVersion) {
  if (apiVersion == kApiVersionV1) return {.preEnqueue = true, .profilePercentage = true};
  if (isLegacyApiVersion(apiVersion)) {
    return {.multiPoint = false, .bindAddresses = true, .delayCacheUntilActive = false};
  }
  return {};
}

void decodePlugins(Decoder& d, const json& j, const std::string& path, const VersionFields& v,
                   Plugins& out) {
  if (!j.is_object()) {
    d.error(path, std::string("expected an object, got ") + j.type_name());
    return;
  }
  // The version's fields: its extension points, then multiPoint.
  std::vector<std::pair<std::string, PluginSet*>> fields;
  for (const auto& f : kExtensionPoints) {
    if (f.field != "preEnqueue" || v.preEnqueue) fields.emplace_back(f.field, &(out.*f.set));
  }
  if (v.multiPoint) fields.emplace_back("multiPoint", &out.multiPoint);
  for (const auto& item : j.items()) {
    const std::string& key = item.key();
    if (std::none_of(fields.begin(), fields.end(), [&](const auto& f) { return f.first == key; })) {
      d.error(child(path, key), "unknown field");
    }
  }
  for (const auto& [name, target] : fields) {
    const json* set = Decoder::member(j, name);
    if (set == nullptr) continue;
    const std::string p = child(path, name);
    if (!d.object(*set, p, {"enabled", "disabled"})) continue;
    decodePluginList(d, *set, "enabled", p, target->enabled);
    decodePluginList(d, *set, "disabled", p, target->disabled);
    for (auto& ref : target->disabled) ref.weight = 0;
  }
}

Profile decodeProfile(Decoder& d, const json& j, const std::string& path, const VersionFields& v,
                      bool onlyProfile) {
  Profile p;
  p.schedulerName = onlyProfile ? kDefaultSchedulerName : "";
  bool isObject = v.profilePercentage
                      ? d.object(j, path,
                                 {"schedulerName", "percentageOfNodesToScore",
                                  "percentageOfPlacementsToScore", "plugins", "pluginConfig"})
                      : d.object(j, path, {"schedulerName", "plugins", "pluginConfig"});
  if (!isObject) return p;
  if (auto name = d.string(j, "schedulerName", path)) p.schedulerName = *name;
  if (v.profilePercentage) {
    p.percentageOfNodesToScore = d.int32(j, "percentageOfNodesToScore", path);
    p.percentageOfPlacementsToScore = d.int32(j, "percentageOfPlacementsToScore", path);
  }
  if (const json* plugins = Decoder::member(j, "plugins")) {
    decodePlugins(d, *plugins, child(path, "plugins"), v, p.plugins);
  }
  if (const json* list = d.array(j, "pluginConfig", path)) {
    const std::string listPath = child(path, "pluginConfig");
    for (size_t i = 0; i < list->size(); ++i) {
      const json& item = (*list)[i];
      const std::string ip = index(listPath, i);
      if (!d.object(item, ip, {"name", "args"})) continue;
      PluginConfig pc;
      if (auto name = d.string(item, "name", ip)) pc.name = *name;
      if (const json* args = Decoder::member(item, "args")) pc.args = *args;
      p.pluginConfig.push_back(std::move(pc));
    }
  }
  return p;
}

void decodeLeaderElection(Decoder& d, const json& j, LeaderElectionConfiguration& le) {
  const std::string path = "leaderElection";
  if (!d.object(j, path,
                {"leaderElect", "leaseDuration", "renewDeadline", "retryPeriod", "resourceLock",
                 "resourceName", "resourceNamespace"})) {
    return;
  }
  const LeaderElectionConfiguration defaults;
  if (auto v = d.boolean(j, "leaderElect", path)) le.leaderElect = *v;
  // Zero durations and empty strings take the defaults (upstream defaulting).
  auto dur = [&](std::string_view key, Duration& out, Duration def) {
    if (auto v = d.duration(j, key, path)) out = v->count() == 0 ? def : *v;
  };
  dur("leaseDuration", le.leaseDuration, defaults.leaseDuration);
  dur("renewDeadline", le.renewDeadline, defaults.renewDeadline);
  dur("retryPeriod", le.retryPeriod, defaults.retryPeriod);
  auto str = [&](std::string_view key, std::string& out, const std::string& def) {
    if (auto v = d.string(j, key, path)) out = v->empty() ? def : *v;
  };
  str("resourceLock", le.resourceLock, defaults.resourceLock);
  str("resourceName", le.resourceName, defaults.resourceName);
  str("resourceNamespace", le.resourceNamespace, defaults.resourceNamespace);
}

void decodeClientConnection(Decoder& d, const json& j, ClientConnectionConfiguration& cc) {
  const std::string path = "clientConnection";
  if (!d.object(j, path, {"kubeconfig", "acceptContentTypes", "contentType", "qps", "burst"})) {
    return;
  }
  const ClientConnectionConfiguration defaults;
  if (auto v = d.string(j, "kubeconfig", path)) cc.kubeconfig = *v;
  if (auto v = d.string(j, "acceptContentTypes", path)) cc.acceptContentTypes = *v;
  if (auto v = d.string(j, "contentType", path)) {
    cc.contentType = v->empty() ? defaults.contentType : *v;
  }
  if (auto v = d.number(j, "qps", path)) {
    cc.qps = *v == 0 ? defaults.qps : static_cast<float>(*v);
  }
  if (auto v = d.int32(j, "burst", path)) cc.burst = *v == 0 ? defaults.burst : *v;
}

}  // namespace

namespace decode {

Extender decodeExtender(Decoder& d, const json& j, const std::string& path,
                        ExtenderDialect dialect) {
  Extender e;
  const bool legacy = dialect == ExtenderDialect::kPolicy;
  const char* https = legacy ? "enableHttps" : "enableHTTPS";
  if (!d.object(
          j, path,
          {"urlPrefix", "filterVerb", "preemptVerb", "prioritizeVerb", "weight", "bindVerb", https,
           "tlsConfig", "httpTimeout", "nodeCacheCapable", "managedResources", "ignorable"})) {
    return e;
  }
  auto str = [&](std::string_view key, std::string& out) {
    if (auto v = d.string(j, key, path)) out = *v;
  };
  auto flag = [&](std::string_view key, bool& out) {
    if (auto v = d.boolean(j, key, path)) out = *v;
  };
  str("urlPrefix", e.urlPrefix);
  str("filterVerb", e.filterVerb);
  str("preemptVerb", e.preemptVerb);
  str("prioritizeVerb", e.prioritizeVerb);
  if (auto v = d.int64(j, "weight", path)) e.weight = *v;
  str("bindVerb", e.bindVerb);
  flag(https, e.enableHTTPS);
  if (const json* tls = Decoder::member(j, "tlsConfig")) {
    const std::string tp = child(path, "tlsConfig");
    if (d.object(*tls, tp,
                 {"insecure", "serverName", "certFile", "keyFile", "caFile", "certData", "keyData",
                  "caData"})) {
      ExtenderTLSConfig t;
      if (auto v = d.boolean(*tls, "insecure", tp)) t.insecure = *v;
      auto tstr = [&](std::string_view key, std::string& out) {
        if (auto v = d.string(*tls, key, tp)) out = *v;
      };
      auto tbytes = [&](std::string_view key, std::string& out) {
        if (auto v = d.bytes(*tls, key, tp)) out = *v;
      };
      tstr("serverName", t.serverName);
      tstr("certFile", t.certFile);
      tstr("keyFile", t.keyFile);
      tstr("caFile", t.caFile);
      tbytes("certData", t.certData);
      tbytes("keyData", t.keyData);
      tbytes("caData", t.caData);
      e.tlsConfig = std::move(t);
    }
  }
  if (legacy) {
    if (auto ns = d.int64(j, "httpTimeout", path)) e.httpTimeout = Duration(*ns);
  } else if (auto v = d.duration(j, "httpTimeout", path)) {
    e.httpTimeout = *v;
  }
  flag("nodeCacheCapable", e.nodeCacheCapable);
  if (const json* list = d.array(j, "managedResources", path)) {
    const std::string lp = child(path, "managedResources");
    for (size_t i = 0; i < list->size(); ++i) {
      const std::string ip = index(lp, i);
      if (!d.object((*list)[i], ip, {"name", "ignoredByScheduler"})) continue;
      ExtenderManagedResource r;
      if (auto v = d.string((*list)[i], "name", ip)) r.name = *v;
      if (auto v = d.boolean((*list)[i], "ignoredByScheduler", ip)) r.ignoredByScheduler = *v;
      e.managedResources.push_back(std::move(r));
    }
  }
  flag("ignorable", e.ignorable);
  return e;
}

}  // namespace decode

namespace {

struct MergeOrigin {
  PluginSet set;
  std::vector<int> origin;  // per enabled entry: index in custom.enabled, or -1 for a default
};

MergeOrigin mergeWithOrigin(const PluginSet& defaults, const PluginSet& custom) {
  MergeOrigin out;
  std::set<std::string> disabled;
  for (const auto& d : custom.disabled) {
    out.set.disabled.push_back({d.name, 0});
    disabled.insert(d.name);
  }
  for (const auto& d : defaults.disabled) {
    out.set.disabled.push_back({d.name, 0});
    disabled.insert(d.name);
  }
  std::map<std::string, size_t> customIndex;
  for (size_t i = 0; i < custom.enabled.size(); ++i) customIndex[custom.enabled[i].name] = i;
  std::set<size_t> replaced;
  if (!disabled.contains("*")) {
    for (const auto& def : defaults.enabled) {
      if (disabled.contains(def.name)) continue;
      if (auto it = customIndex.find(def.name); it != customIndex.end()) {
        out.set.enabled.push_back(custom.enabled[it->second]);
        out.origin.push_back(static_cast<int>(it->second));
        replaced.insert(it->second);
      } else {
        out.set.enabled.push_back(def);
        out.origin.push_back(-1);
      }
    }
  }
  for (size_t i = 0; i < custom.enabled.size(); ++i) {
    if (replaced.contains(i)) continue;
    out.set.enabled.push_back(custom.enabled[i]);
    out.origin.push_back(static_cast<int>(i));
  }
  return out;
}

}  // namespace

PluginSet defaultMultiPointFor(std::string_view apiVersion, const features::Gates& gates) {
  PluginSet s = defaultMultiPoint(gates);
  if (apiVersion == kApiVersionV1beta3) {
    auto it = std::find_if(s.enabled.begin(), s.enabled.end(),
                           [](const PluginRef& r) { return r.name == names::kSchedulingGates; });
    if (it != s.enabled.end()) {
      PluginRef gates = *it;
      s.enabled.erase(it);
      s.enabled.push_back(gates);
    }
  }
  return s;
}

SchedulerConfiguration defaultConfiguration(std::string_view apiVersion) {
  SchedulerConfiguration c;
  c.apiVersion = std::string(apiVersion);
  return c;
}

PluginSet mergePluginSet(const PluginSet& defaults, const PluginSet& custom) {
  return mergeWithOrigin(defaults, custom).set;
}

std::vector<int> multiPointOrigins(const Profile& profile, std::string_view apiVersion,
                                   const features::Gates& gates) {
  return mergeWithOrigin(defaultMultiPointFor(apiVersion, gates), profile.plugins.multiPoint)
      .origin;
}

Profile effectiveProfile(const Profile& profile, std::string_view apiVersion,
                         const features::Gates& gates) {
  Profile p = profile;
  p.plugins.multiPoint =
      mergePluginSet(defaultMultiPointFor(apiVersion, gates), profile.plugins.multiPoint);
  for (const auto& f : kExtensionPoints) {
    p.plugins.*f.set = mergePluginSet(PluginSet{}, profile.plugins.*f.set);
  }
  return p;
}

Profile frameworkProfile(const Profile& profile, std::string_view apiVersion,
                         const features::Gates& gates) {
  Profile p = effectiveProfile(profile, apiVersion, gates);
  p.plugins.multiPoint.disabled.clear();
  return p;
}

std::vector<Profile> frameworkProfiles(const SchedulerConfiguration& config) {
  std::vector<Profile> out;
  for (const auto& p : config.profiles) {
    out.push_back(frameworkProfile(p, config.apiVersion, config.featureGates));
  }
  return out;
}

namespace decode {

std::optional<json> parseDocument(std::string_view text, const std::string& sourceName,
                                  std::vector<std::string>& errors) {
  try {
    json root = yamlToJson(text);
    return root.is_null() ? json::object() : root;
  } catch (const YamlSyntaxError& e) {
    errors.push_back(sourceName + ": " + e.what());
    return std::nullopt;
  }
}

std::optional<std::string> readFile(const std::string& path, std::vector<std::string>& errors) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    errors.push_back(path + ": cannot read: " + std::strerror(errno));
    return std::nullopt;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace decode

LoadResult decodeConfig(std::string_view text, const std::string& sourceName) {
  LoadResult result;
  auto parsed = decode::parseDocument(text, sourceName, result.errors);
  if (!parsed) return result;
  json& root = *parsed;
  if (!root.is_object()) {
    result.errors.push_back(sourceName + ": expected an object, got " + root.type_name());
    return result;
  }
  Decoder d(result.errors);
  auto apiVersion = d.string(root, "apiVersion", "");
  auto kind = d.string(root, "kind", "");
  if (result.errors.empty()) {
    if (!apiVersion) {
      d.error("apiVersion", "Required value");
    } else if (*apiVersion != kApiVersionV1 && *apiVersion != kApiVersionV1beta3 &&
               !isLegacyApiVersion(*apiVersion)) {
      std::string supported;
      for (auto v : {kApiVersionV1, kApiVersionV1beta3, kApiVersionV1beta2, kApiVersionV1beta1}) {
        supported += (supported.empty() ? "\"" : ", \"") + std::string(v) + "\"";
      }
      d.error("apiVersion",
              "Unsupported value: \"" + *apiVersion + "\": supported values: " + supported);
    }
    if (!kind) {
      d.error("kind", "Required value");
    } else if (*kind != kKind) {
      d.error("kind", "Unsupported value: \"" + *kind + "\": supported values: \"" +
                          std::string(kKind) + "\"");
    }
  }
  if (!result.errors.empty()) return result;

  const VersionFields fields = fieldsOf(*apiVersion);
  SchedulerConfiguration c = defaultConfiguration(*apiVersion);
  if (fields.bindAddresses) {
    d.object(root, "",
             {"apiVersion", "kind", "parallelism", "leaderElection", "clientConnection",
              "healthzBindAddress", "metricsBindAddress", "enableProfiling",
              "enableContentionProfiling", "percentageOfNodesToScore", "podInitialBackoffSeconds",
              "podMaxBackoffSeconds", "profiles", "extenders"});
    if (auto a = d.string(root, "healthzBindAddress", "")) c.healthzBindAddress = *a;
    if (auto a = d.string(root, "metricsBindAddress", "")) c.metricsBindAddress = *a;
  } else {
    d.object(root, "",
             {"apiVersion", "kind", "parallelism", "leaderElection", "clientConnection",
              "enableProfiling", "enableContentionProfiling", "percentageOfNodesToScore",
              "podInitialBackoffSeconds", "podMaxBackoffSeconds", "profiles", "extenders",
              "delayCacheUntilActive", "percentageOfPlacementsToScore"});
  }
  if (auto v = d.int32(root, "parallelism", "")) c.parallelism = *v;
  if (const json* le = Decoder::member(root, "leaderElection")) {
    decodeLeaderElection(d, *le, c.leaderElection);
  }
  if (const json* cc = Decoder::member(root, "clientConnection")) {
    decodeClientConnection(d, *cc, c.clientConnection);
  }
  const auto profiling = d.boolean(root, "enableProfiling", "");
  c.enableProfiling = profiling.value_or(true);
  c.enableContentionProfiling =
      d.boolean(root, "enableContentionProfiling", "").value_or(c.enableProfiling);
  if (auto v = d.int32(root, "percentageOfNodesToScore", "")) c.percentageOfNodesToScore = *v;
  if (!fields.bindAddresses) {
    if (auto v = d.int32(root, "percentageOfPlacementsToScore", "")) {
      c.percentageOfPlacementsToScore = *v;
    }
  }
  if (auto v = d.int64(root, "podInitialBackoffSeconds", "")) c.podInitialBackoffSeconds = *v;
  if (auto v = d.int64(root, "podMaxBackoffSeconds", "")) c.podMaxBackoffSeconds = *v;
  if (const json* list = d.array(root, "profiles", "")) {
    c.profiles.clear();
    for (size_t i = 0; i < list->size(); ++i) {
      c.profiles.push_back(
          decodeProfile(d, (*list)[i], index("profiles", i), fields, list->size() == 1));
    }
    if (c.profiles.empty()) c.profiles.emplace_back();
    for (size_t i = 0; i < list->size(); ++i) {
      const json& item = (*list)[i];
      c.customProfiles = c.customProfiles || list->size() > 1 ||
                         (item.is_object() && (Decoder::member(item, "plugins") != nullptr ||
                                               Decoder::member(item, "pluginConfig") != nullptr));
    }
  }
  if (const json* list = d.array(root, "extenders", "")) {
    for (size_t i = 0; i < list->size(); ++i) {
      c.extenders.push_back(
          decodeExtender(d, (*list)[i], index("extenders", i), decode::ExtenderDialect::kConfig));
    }
  }
  if (fields.delayCacheUntilActive) {
    if (auto b = d.boolean(root, "delayCacheUntilActive", "")) c.delayCacheUntilActive = *b;
  }
  if (isLegacyApiVersion(*apiVersion)) {
    c.notes.push_back({"", "Converted from " + *apiVersion + " (" + sourceName +
                               "). ksched runs these profiles as that release did; the notes "
                               "below mark where current upstream differs."});
    if (!c.healthzBindAddress.empty() || !c.metricsBindAddress.empty()) {
      c.notes.push_back({"",
                         "healthzBindAddress/metricsBindAddress are not in v1: health and "
                         "metrics are served on the HTTPS --secure-port (default 10259)"});
    }
    for (size_t i = 0; i < c.profiles.size(); ++i) {
      c.profiles[i] = convertLegacyProfile(c.profiles[i], *apiVersion, i, c.notes);
    }
  }
  if (result.errors.empty()) result.config = std::move(c);
  return result;
}

LoadResult loadConfig(std::string_view text, const std::string& sourceName,
                      const WiringCheck& wiring, const features::Gates& gates) {
  LoadResult r = decodeConfig(text, sourceName);
  if (!r.ok()) return r;
  r.config->featureGates = gates;
  r.errors = validateConfig(*r.config, wiring);
  if (!r.errors.empty()) r.config.reset();
  return r;
}

LoadResult decodeConfigFile(const std::string& path) {
  LoadResult r;
  auto text = decode::readFile(path, r.errors);
  return text ? decodeConfig(*text, path) : r;
}

}  // namespace ksched::config
