#include "config/wiring.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

namespace ksched::config {

Wiring wire(const Profile& profile, const Registry& registry, const std::string& prefix,
            const features::Gates& gates) {
  Wiring w;
  std::vector<std::string>& errors = w.errors;
  std::map<std::string, size_t> argsIndex;
  for (size_t i = 0; i < profile.pluginConfig.size(); ++i) {
    const auto& pc = profile.pluginConfig[i];
    if (!argsIndex.emplace(pc.name, i).second) {
      errors.push_back(prefix + ".pluginConfig[" + std::to_string(i) +
                       "]: duplicate plugin config for \"" + pc.name + "\"");
    }
  }

  // Every plugin named in an enabled list, decoded once.
  std::map<std::string, size_t, std::less<>> byName;  // -> position in w.plugins
  auto decode = [&](const std::string& name, const std::string& path) {
    if (byName.contains(name)) return;
    byName[name] = w.plugins.size();
    WiredPlugin& wp = w.plugins.emplace_back();
    wp.name = name;
    const PluginFactory* factory = registry.find(name);
    if (factory == nullptr) {
      errors.push_back(path + ": plugin \"" + name + "\" does not exist");
      return;
    }
    nlohmann::json args;
    wp.argsPath = prefix + ".pluginConfig[" + name + "].args";
    if (auto it = argsIndex.find(name); it != argsIndex.end()) {
      args = profile.pluginConfig[it->second].args;
      wp.argsPath = prefix + ".pluginConfig[" + std::to_string(it->second) + "].args";
    }
    try {
      wp.args = factory->decode(args, gates);
      wp.factory = factory;
    } catch (const PluginArgsError& e) {
      errors.push_back(wp.argsPath + "." + e.what());
    } catch (const std::exception& e) {
      errors.push_back(wp.argsPath + ": " + e.what());
    }
  };
  // The factory of a plugin that decoded, else null.
  auto factoryOf = [&](const std::string& name) -> const PluginFactory* {
    auto it = byName.find(name);
    return it == byName.end() ? nullptr : w.plugins[it->second].factory;
  };

  std::set<std::string> multiPointDisabled;
  bool multiPointDisableAll = false;
  for (const auto& d : profile.plugins.multiPoint.disabled) {
    if (d.name == "*") multiPointDisableAll = true;
    multiPointDisabled.insert(d.name);
  }
  std::vector<PluginRef> multiPoint;
  for (size_t i = 0; i < profile.plugins.multiPoint.enabled.size(); ++i) {
    const auto& ref = profile.plugins.multiPoint.enabled[i];
    if (multiPointDisableAll || multiPointDisabled.contains(ref.name)) continue;
    decode(ref.name, prefix + ".plugins.multiPoint.enabled[" + std::to_string(i) + "]");
    multiPoint.push_back(ref);
  }
  // "<prefix>.plugins.<point>.enabled[i]"
  auto enabledPath = [&](const ExtensionPointField& point, size_t i) {
    return prefix + ".plugins." + std::string(point.field) + ".enabled[" + std::to_string(i) + "]";
  };
  for (const auto& point : kExtensionPoints) {
    const auto& set = profile.plugins.*point.set;
    for (size_t i = 0; i < set.enabled.size(); ++i) {
      decode(set.enabled[i].name, enabledPath(point, i));
    }
  }
  for (const auto& [name, at] : argsIndex) {
    if (!byName.contains(name)) {
      errors.push_back(prefix + ".pluginConfig[" + std::to_string(at) + "]: plugin \"" + name +
                       "\" has args but is not enabled");
    }
  }

  // Expand per extension point.
  std::array<std::set<std::string>, kNumExtensionPoints> disabledAt;  // "*": all
  std::set<std::string> inMultiPoint;
  for (const auto& m : multiPoint) inMultiPoint.insert(m.name);
  int64_t legacyWeightTotal = 0;
  for (const auto& point : kExtensionPoints) {
    const auto& set = profile.plugins.*point.set;
    std::set<std::string>& disabled = disabledAt[indexOf(point.point)];
    bool disableAll = false;
    for (const auto& d : set.disabled) {
      if (d.name == "*") disableAll = true;
      disabled.insert(d.name);
    }
    std::set<std::string> explicitNames;
    for (const auto& e : set.enabled) explicitNames.insert(e.name);
    std::vector<std::pair<PluginRef, std::string>> ordered;  // ref, config path
    for (size_t i = 0; i < set.enabled.size(); ++i) {
      if (inMultiPoint.contains(set.enabled[i].name)) {
        ordered.emplace_back(set.enabled[i], enabledPath(point, i));
      }
    }
    for (const auto& m : multiPoint) {
      if (explicitNames.contains(m.name) || disableAll || disabled.contains(m.name)) continue;
      const PluginFactory* f = factoryOf(m.name);
      if (f == nullptr || !f->points.has(point.point)) continue;
      ordered.emplace_back(m, "");
    }
    for (size_t i = 0; i < set.enabled.size(); ++i) {
      if (!inMultiPoint.contains(set.enabled[i].name)) {
        ordered.emplace_back(set.enabled[i], enabledPath(point, i));
      }
    }
    std::vector<WiredRef>& refs = w.points[indexOf(point.point)];
    std::set<std::string> seen;
    for (const auto& [ref, path] : ordered) {
      const PluginFactory* f = factoryOf(ref.name);
      if (f == nullptr) continue;
      if (!seen.insert(ref.name).second) {
        errors.push_back(path + ": plugin \"" + ref.name + "\" is enabled twice");
        continue;
      }
      if (!f->points.has(point.point)) {
        errors.push_back(path + ": plugin \"" + ref.name + "\" does not extend " +
                         std::string(point.name));
        continue;
      }
      const size_t at = byName[ref.name];
      if (point.point == ExtensionPoint::kQueueSort && !refs.empty()) {
        errors.push_back(prefix + ".plugins.queueSort: only one queue sort plugin can be enabled");
        continue;
      }
      int64_t weight = 0;
      if (point.point == ExtensionPoint::kScore) {
        weight = ref.weight;
        for (const auto& e : set.enabled) {
          if (e.name == ref.name && e.weight != 0) weight = e.weight;
        }
        if (weight == 0) weight = 1;
        const std::string weightPath =
            (path.empty() ? prefix + ".plugins.multiPoint" : path) + ".weight";
        if (profile.v120ScoreWeights && weight > 0) {
          if (weight > std::numeric_limits<int64_t>::max() / kMaxNodeScore - legacyWeightTotal) {
            errors.push_back(weightPath + ": total score of Score plugins could overflow");
            continue;
          }
          legacyWeightTotal += weight;
        } else if (weight < 0 || weight > 100) {
          errors.push_back(weightPath + ": must be in range [1, 100]");
          continue;
        }
      }
      refs.push_back({at, weight});
    }
  }

  // A plugin enabled at one point of a pair also runs at its companion point when it serves it
  // and the profile does not disable it there: its Filter reads the state its PreFilter writes,
  // its Score what its PreScore computed, and DefaultPreemption's PreEnqueue holds a preemptor
  // until its victims are gone. Per-point profiles (v1beta1/v1beta2, Policy) list only the
  // points v1.20's plugins had; multiPoint profiles already have every point.
  auto complete = [&](ExtensionPoint from, ExtensionPoint to) {
    const std::set<std::string>& disabled = disabledAt[indexOf(to)];
    std::vector<WiredRef>& target = w.points[indexOf(to)];
    for (const WiredRef& r : w.points[indexOf(from)]) {
      const WiredPlugin& p = w.plugins[r.plugin];
      if (!p.factory->points.has(to) || disabled.contains("*") || disabled.contains(p.name)) {
        continue;
      }
      if (std::none_of(target.begin(), target.end(),
                       [&](const WiredRef& t) { return t.plugin == r.plugin; })) {
        target.push_back({r.plugin, 0});
      }
    }
  };
  complete(ExtensionPoint::kFilter, ExtensionPoint::kPreFilter);
  complete(ExtensionPoint::kScore, ExtensionPoint::kPreScore);
  complete(ExtensionPoint::kPostFilter, ExtensionPoint::kPreEnqueue);

  if (w.at(ExtensionPoint::kQueueSort).empty()) {
    errors.push_back(prefix + ".plugins.queueSort: no queue sort plugin is enabled");
  }
  if (w.at(ExtensionPoint::kBind).empty()) {
    errors.push_back(prefix + ".plugins.bind: at least one bind plugin is needed");
  }
  return w;
}

WiringCheck wiringCheck(const Registry& registry) {
  return [registry](const Profile& profile, const std::string& path, const features::Gates& gates) {
    Wiring w = wire(profile, registry, path, gates);
    WiringResult r;
    for (const auto& e : w.errors) r.errors += (r.errors.empty() ? "" : "\n") + e;
    if (w.errors.empty()) r.queueSort = w.plugins[w.at(ExtensionPoint::kQueueSort)[0].plugin].name;
    return r;
  };
}

}  // namespace ksched::config
