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

#include "client/config.h"
#include "config/yaml_json.h"

namespace ksched::config {
namespace {

using nlohmann::json;

std::string child(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

std::string index(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

// Strict decoding that records every problem and goes on.
class Decoder {
 public:
  explicit Decoder(std::vector<std::string>& errors) : errors_(errors) {}

  void error(const std::string& path, const std::string& what) {
    errors_.push_back(path + ": " + what);
  }

  // j must be an object; unknown keys are reported. False if j is not an object.
  bool object(const json& j, const std::string& path,
              std::initializer_list<std::string_view> known) {
    if (!j.is_object()) {
      typeError(path, "an object", j);
      return false;
    }
    for (const auto& [key, _] : j.items()) {
      bool ok = false;
      for (auto k : known) ok = ok || k == key;
      if (!ok) error(child(path, key), "unknown field");
    }
    return true;
  }

  // Null or a missing member counts as absent (like JSON null into a Go pointer).
  static const json* member(const json& j, std::string_view key) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return nullptr;
    return &*it;
  }

  std::optional<int64_t> integer(const json& j, std::string_view key, const std::string& path,
                                 int64_t lo, int64_t hi) {
    const json* v = member(j, key);
    if (v == nullptr) return std::nullopt;
    const std::string p = child(path, key);
    if (v->is_number_unsigned()) {
      if (v->get<uint64_t>() > static_cast<uint64_t>(hi)) {
        error(p, "integer " + v->dump() + " out of range");
        return std::nullopt;
      }
      return static_cast<int64_t>(v->get<uint64_t>());
    }
    if (!v->is_number_integer()) {
      typeError(p, "an integer", *v);
      return std::nullopt;
    }
    const auto i = v->get<int64_t>();
    if (i < lo || i > hi) {
      error(p, "integer " + v->dump() + " out of range");
      return std::nullopt;
    }
    return i;
  }

  std::optional<int32_t> int32(const json& j, std::string_view key, const std::string& path) {
    auto v = integer(j, key, path, std::numeric_limits<int32_t>::min(),
                     std::numeric_limits<int32_t>::max());
    if (!v) return std::nullopt;
    return static_cast<int32_t>(*v);
  }

  std::optional<int64_t> int64(const json& j, std::string_view key, const std::string& path) {
    return integer(j, key, path, std::numeric_limits<int64_t>::min(),
                   std::numeric_limits<int64_t>::max());
  }

  std::optional<double> number(const json& j, std::string_view key, const std::string& path) {
    const json* v = member(j, key);
    if (v == nullptr) return std::nullopt;
    if (!v->is_number()) {
      typeError(child(path, key), "a number", *v);
      return std::nullopt;
    }
    return v->get<double>();
  }

  std::optional<bool> boolean(const json& j, std::string_view key, const std::string& path) {
    const json* v = member(j, key);
    if (v == nullptr) return std::nullopt;
    if (!v->is_boolean()) {
      typeError(child(path, key), "a boolean", *v);
      return std::nullopt;
    }
    return v->get<bool>();
  }

  std::optional<std::string> string(const json& j, std::string_view key, const std::string& path) {
    const json* v = member(j, key);
    if (v == nullptr) return std::nullopt;
    if (!v->is_string()) {
      typeError(child(path, key), "a string", *v);
      return std::nullopt;
    }
    return v->get<std::string>();
  }

  std::optional<Duration> duration(const json& j, std::string_view key, const std::string& path) {
    auto s = string(j, key, path);
    if (!s) return std::nullopt;
    auto d = parseDuration(*s);
    if (!d) error(child(path, key), "invalid duration \"" + *s + "\"");
    return d;
  }

  std::optional<std::string> bytes(const json& j, std::string_view key, const std::string& path) {
    auto s = string(j, key, path);
    if (!s) return std::nullopt;
    auto d = client::base64Decode(*s);
    if (!d) error(child(path, key), "illegal base64 data");
    return d;
  }

  // The array at key (absent: empty); reports a non-array.
  const json* array(const json& j, std::string_view key, const std::string& path) {
    const json* v = member(j, key);
    if (v == nullptr) return nullptr;
    if (!v->is_array()) {
      typeError(child(path, key), "an array", *v);
      return nullptr;
    }
    return v;
  }

 private:
  void typeError(const std::string& path, const char* expected, const json& got) {
    error(path, std::string("expected ") + expected + ", got " + got.type_name());
  }

  std::vector<std::string>& errors_;
};

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

struct PointField {
  const char* name;
  PluginSet Plugins::*set;
};

constexpr PointField kPointFields[] = {
    {"preEnqueue", &Plugins::preEnqueue},
    {"queueSort", &Plugins::queueSort},
    {"preFilter", &Plugins::preFilter},
    {"filter", &Plugins::filter},
    {"postFilter", &Plugins::postFilter},
    {"preScore", &Plugins::preScore},
    {"score", &Plugins::score},
    {"reserve", &Plugins::reserve},
    {"permit", &Plugins::permit},
    {"preBind", &Plugins::preBind},
    {"bind", &Plugins::bind},
    {"postBind", &Plugins::postBind},
    {"multiPoint", &Plugins::multiPoint},
};

void decodePlugins(Decoder& d, const json& j, const std::string& path, bool v1, Plugins& out) {
  bool isObject =
      v1 ? d.object(j, path,
                    {"preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore",
                     "score", "reserve", "permit", "preBind", "bind", "postBind", "multiPoint"})
         : d.object(j, path,
                    {"queueSort", "preFilter", "filter", "postFilter", "preScore", "score",
                     "reserve", "permit", "preBind", "bind", "postBind", "multiPoint"});
  if (!isObject) return;
  for (const auto& f : kPointFields) {
    const json* set = Decoder::member(j, f.name);
    if (set == nullptr || (!v1 && std::string_view(f.name) == "preEnqueue")) continue;
    const std::string p = child(path, f.name);
    if (!d.object(*set, p, {"enabled", "disabled"})) continue;
    decodePluginList(d, *set, "enabled", p, (out.*f.set).enabled);
    decodePluginList(d, *set, "disabled", p, (out.*f.set).disabled);
    for (auto& ref : (out.*f.set).disabled) ref.weight = 0;
  }
}

Profile decodeProfile(Decoder& d, const json& j, const std::string& path, bool v1,
                      bool onlyProfile) {
  Profile p;
  p.schedulerName = onlyProfile ? kDefaultSchedulerName : "";
  bool isObject =
      v1 ? d.object(j, path,
                    {"schedulerName", "percentageOfNodesToScore", "plugins", "pluginConfig"})
         : d.object(j, path, {"schedulerName", "plugins", "pluginConfig"});
  if (!isObject) return p;
  if (auto name = d.string(j, "schedulerName", path)) p.schedulerName = *name;
  if (v1) p.percentageOfNodesToScore = d.int32(j, "percentageOfNodesToScore", path);
  if (const json* plugins = Decoder::member(j, "plugins")) {
    decodePlugins(d, *plugins, child(path, "plugins"), v1, p.plugins);
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

Extender decodeExtender(Decoder& d, const json& j, const std::string& path) {
  Extender e;
  if (!d.object(j, path,
                {"urlPrefix", "filterVerb", "preemptVerb", "prioritizeVerb", "weight", "bindVerb",
                 "enableHTTPS", "tlsConfig", "httpTimeout", "nodeCacheCapable", "managedResources",
                 "ignorable"})) {
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
  flag("enableHTTPS", e.enableHTTPS);
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
  if (auto v = d.duration(j, "httpTimeout", path)) e.httpTimeout = *v;
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

PluginSet defaultMultiPointFor(std::string_view apiVersion) {
  PluginSet s = defaultMultiPoint();
  if (apiVersion == kApiVersionV1beta3) {
    auto it = std::find_if(s.enabled.begin(), s.enabled.end(),
                           [](const PluginRef& r) { return r.name == "SchedulingGates"; });
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

std::vector<int> multiPointOrigins(const Profile& profile, std::string_view apiVersion) {
  return mergeWithOrigin(defaultMultiPointFor(apiVersion), profile.plugins.multiPoint).origin;
}

Profile effectiveProfile(const Profile& profile, std::string_view apiVersion) {
  Profile p = profile;
  p.plugins.multiPoint =
      mergePluginSet(defaultMultiPointFor(apiVersion), profile.plugins.multiPoint);
  for (const auto& f : kPointFields) {
    if (std::string_view(f.name) == "multiPoint") continue;
    p.plugins.*f.set = mergePluginSet(PluginSet{}, profile.plugins.*f.set);
  }
  return p;
}

Profile frameworkProfile(const Profile& profile, std::string_view apiVersion) {
  Profile p = effectiveProfile(profile, apiVersion);
  p.plugins.multiPoint.disabled.clear();
  return p;
}

std::vector<Profile> frameworkProfiles(const SchedulerConfiguration& config) {
  std::vector<Profile> out;
  for (const auto& p : config.profiles) out.push_back(frameworkProfile(p, config.apiVersion));
  return out;
}

LoadResult decodeConfig(std::string_view text, const std::string& sourceName) {
  LoadResult result;
  json root;
  try {
    root = yamlToJson(text);
  } catch (const YamlSyntaxError& e) {
    result.errors.push_back(sourceName + ": " + e.what());
    return result;
  }
  if (root.is_null()) root = json::object();
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
    } else if (*apiVersion != kApiVersionV1 && *apiVersion != kApiVersionV1beta3) {
      d.error("apiVersion", "Unsupported value: \"" + *apiVersion + "\": supported values: \"" +
                                std::string(kApiVersionV1) + "\", \"" +
                                std::string(kApiVersionV1beta3) + "\"");
    }
    if (!kind) {
      d.error("kind", "Required value");
    } else if (*kind != kKind) {
      d.error("kind", "Unsupported value: \"" + *kind + "\": supported values: \"" +
                          std::string(kKind) + "\"");
    }
  }
  if (!result.errors.empty()) return result;

  const bool v1 = *apiVersion == kApiVersionV1;
  SchedulerConfiguration c = defaultConfiguration(*apiVersion);
  d.object(
      root, "",
      {"apiVersion", "kind", "parallelism", "leaderElection", "clientConnection", "enableProfiling",
       "enableContentionProfiling", "percentageOfNodesToScore", "podInitialBackoffSeconds",
       "podMaxBackoffSeconds", "profiles", "extenders", "delayCacheUntilActive"});
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
  if (auto v = d.int64(root, "podInitialBackoffSeconds", "")) c.podInitialBackoffSeconds = *v;
  if (auto v = d.int64(root, "podMaxBackoffSeconds", "")) c.podMaxBackoffSeconds = *v;
  if (const json* list = d.array(root, "profiles", "")) {
    c.profiles.clear();
    for (size_t i = 0; i < list->size(); ++i) {
      c.profiles.push_back(
          decodeProfile(d, (*list)[i], index("profiles", i), v1, list->size() == 1));
    }
    if (c.profiles.empty()) c.profiles.emplace_back();
  }
  if (const json* list = d.array(root, "extenders", "")) {
    for (size_t i = 0; i < list->size(); ++i) {
      c.extenders.push_back(decodeExtender(d, (*list)[i], index("extenders", i)));
    }
  }
  if (auto v = d.boolean(root, "delayCacheUntilActive", "")) c.delayCacheUntilActive = *v;
  if (result.errors.empty()) result.config = std::move(c);
  return result;
}

LoadResult loadConfig(std::string_view text, const std::string& sourceName,
                      const WiringCheck& wiring) {
  LoadResult r = decodeConfig(text, sourceName);
  if (!r.ok()) return r;
  r.errors = validateConfig(*r.config, wiring);
  if (!r.errors.empty()) r.config.reset();
  return r;
}

LoadResult decodeConfigFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    LoadResult r;
    r.errors.push_back(path + ": cannot read: " + std::strerror(errno));
    return r;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return decodeConfig(ss.str(), path);
}

}  // namespace ksched::config
