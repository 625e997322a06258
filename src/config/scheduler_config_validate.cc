// Validation of KubeSchedulerConfiguration (upstream ValidateKubeSchedulerConfiguration and the
// component-base validators), then framework wiring of every profile.
#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include <ksched/api/resources.h>
#include <ksched/helper/field_error.h>
#include <ksched/plugin_names.h>

#include "config/scheduler_config.h"

namespace ksched::config {
namespace {

using nlohmann::json;

// field.Error bodies.
std::string invalid(const std::string& path, const std::string& value, const std::string& detail) {
  return path + ": Invalid value: " + value + ": " + detail;
}
std::string quoted(const std::string& s) { return plugins::helper::quote(s); }
std::string required(const std::string& path) { return path + ": Required value"; }
std::string duplicate(const std::string& path, const std::string& value) {
  return path + ": Duplicate value: " + quoted(value);
}

// Plugins removed from the API, per upstream invalidPluginsByVersion.
bool isInvalidPlugin(std::string_view apiVersion, const std::string& name) {
  if (apiVersion != kApiVersionV1) return false;
  return name == names::kAzureDiskLimits || name == names::kCinderLimits ||
         name == names::kEBSLimits || name == names::kGCEPDLimits;
}

std::string invalidPluginMessage(const std::string& path, const std::string& name,
                                 std::string_view apiVersion) {
  return invalid(path, quoted(name),
                 "was invalid in version \"" + std::string(kApiVersionV1) +
                     "\" (KubeSchedulerConfiguration is version \"" + std::string(apiVersion) +
                     "\")");
}

void validateProfile(const SchedulerConfiguration& c, size_t i, std::vector<std::string>& errs) {
  const Profile& profile = c.profiles[i];
  const std::string path = "profiles[" + std::to_string(i) + "]";
  if (profile.schedulerName.empty()) errs.push_back(required(path + ".schedulerName"));
  if (profile.percentageOfNodesToScore &&
      (*profile.percentageOfNodesToScore < 0 || *profile.percentageOfNodesToScore > 100)) {
    errs.push_back(invalid(path + ".percentageOfNodesToScore",
                           std::to_string(*profile.percentageOfNodesToScore),
                           "not in valid range [0-100]"));
  }
  if (profile.percentageOfPlacementsToScore && (*profile.percentageOfPlacementsToScore < 0 ||
                                                *profile.percentageOfPlacementsToScore > 100)) {
    errs.push_back(invalid(path + ".percentageOfPlacementsToScore",
                           std::to_string(*profile.percentageOfPlacementsToScore),
                           "not in valid range [0-100]"));
  }
  for (const auto& stage : kExtensionPoints) {
    const auto& set = profile.plugins.*stage.set;
    for (size_t k = 0; k < set.enabled.size(); ++k) {
      // A converted v1.20 profile (v1beta1, Policy) keeps them, as v1.20 ran them.
      if (!profile.v120ScoreWeights && isInvalidPlugin(c.apiVersion, set.enabled[k].name)) {
        errs.push_back(invalidPluginMessage(
            path + ".plugins." + std::string(stage.field) + ".enabled[" + std::to_string(k) + "]",
            set.enabled[k].name, c.apiVersion));
      }
    }
  }
  std::set<std::string> seen;
  for (size_t k = 0; k < profile.pluginConfig.size(); ++k) {
    const auto& pc = profile.pluginConfig[k];
    const std::string pcPath = path + ".pluginConfig[" + std::to_string(k) + "]";
    if (!seen.insert(pc.name).second) errs.push_back(duplicate(pcPath, pc.name));
    if (!profile.v120ScoreWeights && isInvalidPlugin(c.apiVersion, pc.name)) {
      errs.push_back(invalidPluginMessage(pcPath, pc.name, c.apiVersion));
      continue;
    }
    if (pc.args.is_null()) continue;
    if (!pc.args.is_object()) {
      errs.push_back(pcPath + ".args: expected an object, got " + pc.args.type_name());
      continue;
    }
    // Typed args may name their kind; it must be the plugin's.
    if (auto it = pc.args.find("kind"); it != pc.args.end() && !it->is_null()) {
      const std::string want = pc.name + "Args";
      if (!it->is_string() || it->get<std::string>() != want) {
        errs.push_back(invalid(pcPath + ".args.kind", it->dump(), "must be " + quoted(want)));
      }
    }
    if (auto it = pc.args.find("apiVersion"); it != pc.args.end() && !it->is_null()) {
      if (!it->is_string() || (it->get<std::string>() != kApiVersionV1 &&
                               it->get<std::string>() != kApiVersionV1beta3)) {
        errs.push_back(invalid(pcPath + ".args.apiVersion", it->dump(),
                               "must be " + quoted(std::string(kApiVersionV1))));
      }
    }
  }
}

// Splits a FrameworkError's lines, points multiPoint entries at the file's index and drops
// lines about a field (or a field inside it) that was already reported.
void addFrameworkErrors(const std::string& what, const std::string& prefix,
                        const std::vector<int>& origins, std::vector<std::string>& errs) {
  std::set<std::string> reportedPaths;
  for (const auto& e : errs) reportedPaths.insert(e.substr(0, e.find(": ")));
  const std::string mp = prefix + ".plugins.multiPoint.enabled[";
  std::istringstream in(what);
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with(mp)) {
      const size_t close = line.find(']', mp.size());
      const size_t n = std::stoul(line.substr(mp.size(), close - mp.size()));
      if (n < origins.size() && origins[n] >= 0) {
        line = mp + std::to_string(origins[n]) + line.substr(close);
      }
    }
    const bool reported =
        std::any_of(reportedPaths.begin(), reportedPaths.end(), [&](const std::string& p) {
          return line.size() > p.size() && line.starts_with(p) &&
                 (line[p.size()] == ':' || line[p.size()] == '.' || line[p.size()] == '[');
        });
    if (reported) continue;
    if (std::find(errs.begin(), errs.end(), line) != errs.end()) continue;
    errs.push_back(line);
  }
}

void validateLeaderElection(const LeaderElectionConfiguration& le, std::vector<std::string>& errs) {
  if (!le.leaderElect) return;
  const std::string p = "leaderElection";
  if (le.leaseDuration.count() <= 0) {
    errs.push_back(invalid(p + ".leaseDuration", formatDuration(le.leaseDuration),
                           "must be greater than zero"));
  }
  if (le.renewDeadline.count() <= 0) {
    errs.push_back(invalid(p + ".renewDeadline", formatDuration(le.renewDeadline),
                           "must be greater than zero"));
  }
  if (le.retryPeriod.count() <= 0) {
    errs.push_back(
        invalid(p + ".retryPeriod", formatDuration(le.retryPeriod), "must be greater than zero"));
  }
  if (le.leaseDuration <= le.renewDeadline) {
    errs.push_back(invalid(p + ".leaseDuration", formatDuration(le.renewDeadline),
                           "must be greater than `RenewDeadline`"));
  }
  if (le.resourceLock.empty()) errs.push_back(required(p + ".resourceLock"));
  if (le.resourceNamespace.empty()) errs.push_back(required(p + ".resourceNamespace"));
  if (le.resourceName.empty()) errs.push_back(required(p + ".resourceName"));
  if (le.resourceLock != "leases") {
    errs.push_back(invalid(p + ".resourceLock", quoted(le.resourceLock),
                           "resourceLock value must be \"leases\""));
  }
}

void validateExtenders(const std::vector<Extender>& extenders, std::vector<std::string>& errs) {
  int binders = 0;
  std::set<std::string> managed;
  for (size_t i = 0; i < extenders.size(); ++i) {
    const Extender& e = extenders[i];
    const std::string path = "extenders[" + std::to_string(i) + "]";
    if (!e.prioritizeVerb.empty() && e.weight <= 0) {
      errs.push_back(invalid(path + ".weight", std::to_string(e.weight),
                             "must have a positive weight applied to it"));
    }
    if (!e.bindVerb.empty()) ++binders;
    for (size_t k = 0; k < e.managedResources.size(); ++k) {
      const std::string& name = e.managedResources[k].name;
      const std::string np = path + ".managedResources[" + std::to_string(k) + "].name";
      auto msgs = plugins::helper::validateLabelName(name, np);
      for (const auto& m : msgs) errs.push_back(m.toString());
      if (msgs.empty() && !api::isExtendedResourceName(name)) {
        errs.push_back(invalid(np, quoted(name), "is an invalid extended resource name"));
      }
      if (managed.contains(name)) {
        errs.push_back(invalid(np, quoted(name), "duplicate extender managed resource name"));
      }
      managed.insert(name);
    }
  }
  if (binders > 1) {
    errs.push_back(invalid(
        "extenders", quoted("found " + std::to_string(binders) + " extenders implementing bind"),
        "only one extender can implement bind"));
  }
}

const json* argsFor(const Profile& p, const std::string& plugin, size_t* at) {
  for (size_t k = 0; k < p.pluginConfig.size(); ++k) {
    if (p.pluginConfig[k].name == plugin) {
      *at = k;
      return &p.pluginConfig[k].args;
    }
  }
  return nullptr;
}

}  // namespace

std::vector<std::string> validateConfig(const SchedulerConfiguration& c,
                                        const WiringCheck& wiring) {
  std::vector<std::string> errs;
  if (c.clientConnection.burst < 0) {
    errs.push_back(invalid("clientConnection.burst", std::to_string(c.clientConnection.burst),
                           "must be non-negative"));
  }
  validateLeaderElection(c.leaderElection, errs);
  if (c.parallelism <= 0) {
    errs.push_back(invalid("parallelism", std::to_string(c.parallelism),
                           "should be an integer value greater than zero"));
  }
  if (c.profiles.empty()) {
    errs.push_back(required("profiles"));
  } else {
    std::map<std::string, size_t> names;
    std::vector<std::string> sorts(c.profiles.size());  // empty: not wired
    for (size_t i = 0; i < c.profiles.size(); ++i) {
      validateProfile(c, i, errs);
      const std::string path = "profiles[" + std::to_string(i) + "]";
      if (names.contains(c.profiles[i].schedulerName)) {
        errs.push_back(duplicate(path + ".schedulerName", c.profiles[i].schedulerName));
      }
      names.emplace(c.profiles[i].schedulerName, i);
      if (!wiring) continue;
      WiringResult w = wiring(frameworkProfile(c.profiles[i], c.apiVersion, c.featureGates), path,
                              c.featureGates);
      if (!w.errors.empty()) {
        addFrameworkErrors(w.errors, path,
                           multiPointOrigins(c.profiles[i], c.apiVersion, c.featureGates), errs);
      } else {
        sorts[i] = std::move(w.queueSort);
      }
    }
    // Every profile must sort the queue the same way (upstream validateCommonQueueSort and
    // profile.NewMap): same plugin, same args.
    if (!sorts[0].empty()) {
      const std::string& sort = sorts[0];
      size_t at0 = 0;
      const json* args0 = argsFor(c.profiles[0], sort, &at0);
      for (size_t i = 1; i < c.profiles.size(); ++i) {
        if (sorts[i].empty()) continue;
        const std::string path = "profiles[" + std::to_string(i) + "]";
        if (sorts[i] != sort) {
          errs.push_back(path + ".plugins.queueSort: queueSort must be the same for all profiles");
          continue;
        }
        size_t at = 0;
        const json* args = argsFor(c.profiles[i], sort, &at);
        const json none;
        if ((args0 ? *args0 : none) != (args ? *args : none)) {
          errs.push_back(path + ".pluginConfig" +
                         (args ? "[" + std::to_string(at) + "].args" : std::string()) +
                         ": queueSort args must be the same for all profiles");
        }
      }
    }
  }
  if (c.percentageOfNodesToScore < 0 || c.percentageOfNodesToScore > 100) {
    errs.push_back(invalid("percentageOfNodesToScore", std::to_string(c.percentageOfNodesToScore),
                           "not in valid range [0-100]"));
  }
  if (c.percentageOfPlacementsToScore < 0 || c.percentageOfPlacementsToScore > 100) {
    errs.push_back(invalid("percentageOfPlacementsToScore",
                           std::to_string(c.percentageOfPlacementsToScore),
                           "not in valid range [0-100]"));
  }
  if (c.podInitialBackoffSeconds <= 0) {
    errs.push_back(invalid("podInitialBackoffSeconds", std::to_string(c.podInitialBackoffSeconds),
                           "must be greater than 0"));
  }
  if (c.podMaxBackoffSeconds < c.podInitialBackoffSeconds) {
    errs.push_back(invalid("podMaxBackoffSeconds", std::to_string(c.podMaxBackoffSeconds),
                           "must be greater than or equal to PodInitialBackoffSeconds"));
  }
  validateExtenders(c.extenders, errs);
  return errs;
}

}  // namespace ksched::config
