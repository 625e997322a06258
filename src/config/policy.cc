#include "config/policy.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
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
using decode::Decoder;
using decode::index;
using nlohmann::json;

std::vector<std::string> strings(Decoder& d, const json& j, std::string_view key,
                                 const std::string& path) {
  return d.stringList(j, key, path).value_or(std::vector<std::string>{});
}

PolicyPredicate decodePredicate(Decoder& d, const json& j, const std::string& path) {
  PolicyPredicate p;
  if (!d.object(j, path, {"name", "argument"})) return p;
  p.name = d.string(j, "name", path).value_or("");
  const json* arg = Decoder::member(j, "argument");
  if (arg == nullptr) return p;
  const std::string ap = child(path, "argument");
  if (!d.object(*arg, ap, {"serviceAffinity", "labelsPresence"})) return p;
  if (const json* sa = Decoder::member(*arg, "serviceAffinity")) {
    const std::string sp = child(ap, "serviceAffinity");
    if (d.object(*sa, sp, {"labels"})) p.serviceAffinityLabels = strings(d, *sa, "labels", sp);
  }
  if (const json* lp = Decoder::member(*arg, "labelsPresence")) {
    const std::string lpp = child(ap, "labelsPresence");
    if (d.object(*lp, lpp, {"labels", "presence"})) {
      p.labelsPresence = PolicyPredicate::LabelsPresence{
          strings(d, *lp, "labels", lpp), d.boolean(*lp, "presence", lpp).value_or(false)};
    }
  }
  const int n = (p.serviceAffinityLabels ? 1 : 0) + (p.labelsPresence ? 1 : 0);
  if (n != 1) d.error(ap, "exactly 1 predicate argument is required, got " + std::to_string(n));
  return p;
}

PolicyPriority decodePriority(Decoder& d, const json& j, const std::string& path) {
  PolicyPriority p;
  if (!d.object(j, path, {"name", "weight", "argument"})) return p;
  p.name = d.string(j, "name", path).value_or("");
  p.weight = d.int64(j, "weight", path).value_or(0);
  const json* arg = Decoder::member(j, "argument");
  if (arg == nullptr) return p;
  const std::string ap = child(path, "argument");
  if (!d.object(*arg, ap,
                {"serviceAntiAffinity", "labelPreference", "requestedToCapacityRatioArguments"})) {
    return p;
  }
  if (const json* sa = Decoder::member(*arg, "serviceAntiAffinity")) {
    const std::string sp = child(ap, "serviceAntiAffinity");
    if (d.object(*sa, sp, {"label"})) p.serviceAntiAffinityLabel = d.string(*sa, "label", sp);
    if (!p.serviceAntiAffinityLabel) p.serviceAntiAffinityLabel = "";
  }
  if (const json* lp = Decoder::member(*arg, "labelPreference")) {
    const std::string lpp = child(ap, "labelPreference");
    if (d.object(*lp, lpp, {"label", "presence"})) {
      p.labelPreference =
          PolicyPriority::LabelPreference{d.string(*lp, "label", lpp).value_or(""),
                                          d.boolean(*lp, "presence", lpp).value_or(false)};
    }
  }
  if (const json* r = Decoder::member(*arg, "requestedToCapacityRatioArguments")) {
    const std::string rp = child(ap, "requestedToCapacityRatioArguments");
    if (d.object(*r, rp, {"shape", "resources"})) {
      // Checked field by field by the RequestedToCapacityRatio plugin's args decoding.
      p.requestedToCapacityRatio = *r;
    }
  }
  const int n = (p.serviceAntiAffinityLabel ? 1 : 0) + (p.labelPreference ? 1 : 0) +
                (p.requestedToCapacityRatio ? 1 : 0);
  if (n != 1) d.error(ap, "exactly 1 priority argument is required, got " + std::to_string(n));
  return p;
}

// --- v1.20.2's legacy registry --------------------------------------------------------------

// What the producers accumulate (ConfigProducerArgs).
struct ProducerArgs {
  int32_t weight = 0;
  std::optional<json> nodeLabelArgs;
  std::optional<json> serviceAffinityArgs;
  std::optional<json> requestedToCapacityRatioArgs;
  std::optional<json> interPodAffinityArgs;
};

struct Output {
  Plugins plugins;
  std::vector<PluginConfig> pluginConfig;
};

void append(PluginSet& set, std::string_view name, std::optional<int64_t> weight = {}) {
  for (auto& e : set.enabled) {
    if (e.name == name) {
      if (weight && *weight > e.weight) e.weight = static_cast<int32_t>(*weight);
      return;
    }
  }
  set.enabled.push_back({std::string(name), static_cast<int32_t>(weight.value_or(0))});
}

using Producer = void (*)(const ProducerArgs&, Output&);

void fitPredicate(const ProducerArgs&, Output& o) {
  append(o.plugins.filter, names::kNodeResourcesFit);
  append(o.plugins.preFilter, names::kNodeResourcesFit);
}

const std::map<std::string, Producer, std::less<>>& predicateProducers() {
  static const std::map<std::string, Producer, std::less<>> m = {
      {"GeneralPredicates",
       [](const ProducerArgs& a, Output& o) {
         fitPredicate(a, o);
         append(o.plugins.filter, names::kNodeName);
         append(o.plugins.filter, names::kNodePorts);
         append(o.plugins.preFilter, names::kNodePorts);
         append(o.plugins.filter, names::kNodeAffinity);
       }},
      {"PodToleratesNodeTaints",
       [](const ProducerArgs&, Output& o) { append(o.plugins.filter, names::kTaintToleration); }},
      {"PodFitsResources", fitPredicate},
      {"HostName",
       [](const ProducerArgs&, Output& o) { append(o.plugins.filter, names::kNodeName); }},
      {"PodFitsHostPorts",
       [](const ProducerArgs&, Output& o) {
         append(o.plugins.filter, names::kNodePorts);
         append(o.plugins.preFilter, names::kNodePorts);
       }},
      {"MatchNodeSelector",
       [](const ProducerArgs&, Output& o) { append(o.plugins.filter, names::kNodeAffinity); }},
      {"CheckNodeUnschedulable",
       [](const ProducerArgs&, Output& o) { append(o.plugins.filter, names::kNodeUnschedulable); }},
      {"CheckVolumeBinding",
       [](const ProducerArgs&, Output& o) {
         append(o.plugins.preFilter, names::kVolumeBinding);
         append(o.plugins.filter, names::kVolumeBinding);
         append(o.plugins.reserve, names::kVolumeBinding);
         append(o.plugins.preBind, names::kVolumeBinding);
       }},
      {"NoDiskConflict", [](const ProducerArgs&,
                            Output& o) { append(o.plugins.filter, names::kVolumeRestrictions); }},
      {"NoVolumeZoneConflict",
       [](const ProducerArgs&, Output& o) { append(o.plugins.filter, names::kVolumeZone); }},
      {"MaxCSIVolumeCountPred",
       [](const ProducerArgs&, Output& o) { append(o.plugins.filter, names::kNodeVolumeLimits); }},
      {"MaxEBSVolumeCount",
       [](const ProducerArgs&, Output& o) { append(o.plugins.filter, names::kEBSLimits); }},
      {"MaxGCEPDVolumeCount",
       [](const ProducerArgs&, Output& o) { append(o.plugins.filter, names::kGCEPDLimits); }},
      {"MaxAzureDiskVolumeCount",
       [](const ProducerArgs&, Output& o) { append(o.plugins.filter, names::kAzureDiskLimits); }},
      {"MaxCinderVolumeCount",
       [](const ProducerArgs&, Output& o) { append(o.plugins.filter, names::kCinderLimits); }},
      {"MatchInterPodAffinity",
       [](const ProducerArgs&, Output& o) {
         append(o.plugins.filter, names::kInterPodAffinity);
         append(o.plugins.preFilter, names::kInterPodAffinity);
       }},
      {"CheckNodeLabelPresence",
       [](const ProducerArgs& a, Output& o) {
         append(o.plugins.filter, names::kNodeLabel);
         if (a.nodeLabelArgs)
           o.pluginConfig.push_back({std::string(names::kNodeLabel), *a.nodeLabelArgs});
       }},
      {"CheckServiceAffinity",
       [](const ProducerArgs& a, Output& o) {
         append(o.plugins.filter, names::kServiceAffinity);
         if (a.serviceAffinityArgs) {
           o.pluginConfig.push_back({std::string(names::kServiceAffinity), *a.serviceAffinityArgs});
         }
         append(o.plugins.preFilter, names::kServiceAffinity);
       }},
      {"EvenPodsSpread",
       [](const ProducerArgs&, Output& o) {
         append(o.plugins.preFilter, names::kPodTopologySpread);
         append(o.plugins.filter, names::kPodTopologySpread);
       }},
  };
  return m;
}

// v1.20's predicateOrdering.
const std::vector<std::string> kPredicateOrdering = {
    "CheckNodeUnschedulable", "GeneralPredicates",       "HostName",
    "PodFitsHostPorts",       "MatchNodeSelector",       "PodFitsResources",
    "NoDiskConflict",         "PodToleratesNodeTaints",  "CheckNodeLabelPresence",
    "CheckServiceAffinity",   "MaxEBSVolumeCount",       "MaxGCEPDVolumeCount",
    "MaxCSIVolumeCountPred",  "MaxAzureDiskVolumeCount", "MaxCinderVolumeCount",
    "CheckVolumeBinding",     "NoVolumeZoneConflict",    "EvenPodsSpread",
    "MatchInterPodAffinity",
};

void setPodTopologySpreadArgs(Output& o, const std::string& defaultingType, bool replace) {
  for (auto& pc : o.pluginConfig) {
    if (pc.name == names::kPodTopologySpread) {
      if (replace) pc.args = json{{"defaultingType", defaultingType}};
      return;
    }
  }
  o.pluginConfig.push_back(
      {std::string(names::kPodTopologySpread), json{{"defaultingType", defaultingType}}});
}

void scoreWith(Output& o, std::string_view plugin, const ProducerArgs& a, bool preScore) {
  if (preScore) append(o.plugins.preScore, plugin);
  append(o.plugins.score, plugin, a.weight);
}

const std::map<std::string, Producer, std::less<>>& priorityProducers() {
  static const std::map<std::string, Producer, std::less<>> m = {
      {"SelectorSpreadPriority",
       [](const ProducerArgs& a, Output& o) {
         // DefaultPodTopologySpread (beta, on in v1.20): PodTopologySpread with the system
         // default constraints replaces SelectorSpread.
         scoreWith(o, names::kPodTopologySpread, a, true);
         setPodTopologySpreadArgs(o, "System", true);
       }},
      {"TaintTolerationPriority",
       [](const ProducerArgs& a, Output& o) { scoreWith(o, names::kTaintToleration, a, true); }},
      {"NodeAffinityPriority",
       [](const ProducerArgs& a, Output& o) { scoreWith(o, names::kNodeAffinity, a, false); }},
      {"ImageLocalityPriority",
       [](const ProducerArgs& a, Output& o) { scoreWith(o, names::kImageLocality, a, false); }},
      {"InterPodAffinityPriority",
       [](const ProducerArgs& a, Output& o) {
         scoreWith(o, names::kInterPodAffinity, a, true);
         if (a.interPodAffinityArgs) {
           o.pluginConfig.push_back(
               {std::string(names::kInterPodAffinity), *a.interPodAffinityArgs});
         }
       }},
      {"NodePreferAvoidPodsPriority",
       [](const ProducerArgs& a, Output& o) {
         scoreWith(o, names::kNodePreferAvoidPods, a, false);
       }},
      {"MostRequestedPriority",
       [](const ProducerArgs& a, Output& o) {
         scoreWith(o, names::kNodeResourcesMostAllocated, a, false);
       }},
      {"BalancedResourceAllocation",
       [](const ProducerArgs& a, Output& o) {
         scoreWith(o, names::kNodeResourcesBalancedAllocation, a, false);
       }},
      {"LeastRequestedPriority",
       [](const ProducerArgs& a, Output& o) {
         scoreWith(o, names::kNodeResourcesLeastAllocated, a, false);
       }},
      {"RequestedToCapacityRatio",
       [](const ProducerArgs& a, Output& o) {
         scoreWith(o, names::kRequestedToCapacityRatio, a, false);
         if (a.requestedToCapacityRatioArgs) {
           o.pluginConfig.push_back(
               {std::string(names::kRequestedToCapacityRatio), *a.requestedToCapacityRatioArgs});
         }
       }},
      {"NodeLabel",
       [](const ProducerArgs& a, Output& o) {
         ProducerArgs w = a;
         if (a.nodeLabelArgs) {
           w.weight *= static_cast<int32_t>(
               a.nodeLabelArgs->value("presentLabelsPreference", json::array()).size() +
               a.nodeLabelArgs->value("absentLabelsPreference", json::array()).size());
         }
         scoreWith(o, names::kNodeLabel, w, false);
         if (a.nodeLabelArgs)
           o.pluginConfig.push_back({std::string(names::kNodeLabel), *a.nodeLabelArgs});
       }},
      {"ServiceAffinity",
       [](const ProducerArgs& a, Output& o) {
         ProducerArgs w = a;
         if (a.serviceAffinityArgs) {
           w.weight *= static_cast<int32_t>(
               a.serviceAffinityArgs->value("antiAffinityLabelsPreference", json::array()).size());
         }
         scoreWith(o, names::kServiceAffinity, w, false);
         if (a.serviceAffinityArgs) {
           o.pluginConfig.push_back({std::string(names::kServiceAffinity), *a.serviceAffinityArgs});
         }
       }},
      {"EvenPodsSpreadPriority",
       [](const ProducerArgs& a, Output& o) {
         scoreWith(o, names::kPodTopologySpread, a, true);
         setPodTopologySpreadArgs(o, "List", false);
       }},
  };
  return m;
}

const std::set<std::string> kDefaultPredicates = {
    "NoVolumeZoneConflict",    "MaxEBSVolumeCount",      "MaxGCEPDVolumeCount",
    "MaxAzureDiskVolumeCount", "MaxCSIVolumeCountPred",  "MatchInterPodAffinity",
    "NoDiskConflict",          "GeneralPredicates",      "PodToleratesNodeTaints",
    "CheckVolumeBinding",      "CheckNodeUnschedulable", "EvenPodsSpread",
};

const std::map<std::string, int64_t> kDefaultPriorities = {
    {"SelectorSpreadPriority", 1},          {"InterPodAffinityPriority", 1},
    {"LeastRequestedPriority", 1},          {"BalancedResourceAllocation", 1},
    {"NodePreferAvoidPodsPriority", 10000}, {"NodeAffinityPriority", 1},
    {"TaintTolerationPriority", 1},         {"ImageLocalityPriority", 1},
    {"EvenPodsSpreadPriority", 2},
};

void appendStrings(json& args, const char* key, const std::vector<std::string>& values) {
  if (!args.contains(key)) args[key] = json::array();
  for (const auto& v : values) args[key].push_back(v);
}

}  // namespace

const std::vector<std::string>& policyPredicateNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& [k, _] : predicateProducers()) n.push_back(k);
    n.push_back("PodFitsPorts");
    std::sort(n.begin(), n.end());
    return n;
  }();
  return names;
}

const std::vector<std::string>& policyPriorityNames() {
  static const std::vector<std::string> names = {
      "BalancedResourceAllocation",  "EqualPriority",
      "EvenPodsSpreadPriority",      "ImageLocalityPriority",
      "InterPodAffinityPriority",    "LeastRequestedPriority",
      "MostRequestedPriority",       "NodeAffinityPriority",
      "NodePreferAvoidPodsPriority", "RequestedToCapacityRatioPriority",
      "SelectorSpreadPriority",      "ServiceSpreadingPriority",
      "TaintTolerationPriority",
  };
  return names;
}

PolicyResult decodePolicy(std::string_view text, const std::string& sourceName) {
  PolicyResult result;
  auto parsed = decode::parseDocument(text, sourceName, result.errors);
  if (!parsed) return result;
  const json& root = *parsed;
  std::vector<std::string> errors;
  Decoder d(errors);
  Policy p;
  if (d.object(root, "",
               {"kind", "apiVersion", "predicates", "priorities", "extenders",
                "hardPodAffinitySymmetricWeight", "alwaysCheckAllPredicates"})) {
    const auto kind = d.string(root, "kind", "");
    if (!kind) {
      d.error("kind", "Required value");
    } else if (*kind != "Policy") {
      d.error("kind", "Unsupported value: \"" + *kind + "\": supported values: \"Policy\"");
    }
    const auto apiVersion = d.string(root, "apiVersion", "");
    if (!apiVersion) {
      d.error("apiVersion", "Required value");
    } else if (*apiVersion != "v1" && *apiVersion != "kubescheduler.config.k8s.io/v1") {
      d.error("apiVersion", "Unsupported value: \"" + *apiVersion +
                                "\": supported values: \"v1\", \"kubescheduler.config.k8s.io/v1\"");
    }
    if (const json* list = d.array(root, "predicates", "")) {
      p.predicates.emplace();
      for (size_t i = 0; i < list->size(); ++i) {
        p.predicates->push_back(decodePredicate(d, (*list)[i], index("predicates", i)));
      }
    }
    if (const json* list = d.array(root, "priorities", "")) {
      p.priorities.emplace();
      for (size_t i = 0; i < list->size(); ++i) {
        p.priorities->push_back(decodePriority(d, (*list)[i], index("priorities", i)));
      }
    }
    if (const json* list = d.array(root, "extenders", "")) {
      for (size_t i = 0; i < list->size(); ++i) {
        p.extenders.push_back(decode::decodeExtender(d, (*list)[i], index("extenders", i),
                                                     decode::ExtenderDialect::kPolicy));
      }
    }
    p.hardPodAffinitySymmetricWeight =
        d.int32(root, "hardPodAffinitySymmetricWeight", "").value_or(0);
    p.alwaysCheckAllPredicates = d.boolean(root, "alwaysCheckAllPredicates", "").value_or(false);
  }
  for (auto& e : errors) result.errors.push_back(sourceName + ": " + e);
  if (result.errors.empty()) result.policy = std::move(p);
  return result;
}

PolicyResult decodePolicyFile(const std::string& path) {
  PolicyResult r;
  auto text = decode::readFile(path, r.errors);
  return text ? decodePolicy(*text, path) : r;
}

std::vector<std::string> applyPolicy(const Policy& policy, const std::string& sourceName,
                                     SchedulerConfiguration& config) {
  std::vector<std::string> errors;
  auto fail = [&](const std::string& path, const std::string& what) {
    errors.push_back(sourceName + ": " + path + ": " + what);
  };
  ProducerArgs args;

  // validation.ValidatePolicy: weights and custom priorities.
  constexpr int64_t kMaxWeight = std::numeric_limits<int64_t>::max() / 10;
  std::map<std::string, const PolicyPriority*> custom;
  if (policy.priorities) {
    for (size_t i = 0; i < policy.priorities->size(); ++i) {
      const auto& pr = (*policy.priorities)[i];
      const std::string path = index("priorities", i);
      if (pr.weight <= 0 || pr.weight >= kMaxWeight) {
        fail(child(path, "weight"), "Invalid value: " + std::to_string(pr.weight) + ": priority " +
                                        pr.name +
                                        " should have a positive weight applied to it or it "
                                        "has overflown");
      }
      const char* kind = pr.labelPreference            ? "LabelPreference"
                         : pr.serviceAntiAffinityLabel ? "ServiceAntiAffinity"
                         : pr.requestedToCapacityRatio ? "RequestedToCapacityRatio"
                                                       : nullptr;
      if (kind == nullptr) continue;
      auto [it, fresh] = custom.emplace(kind, &pr);
      if (fresh) continue;
      if (std::string_view(kind) == "RequestedToCapacityRatio") {
        fail(path, "priority \"" + pr.name + "\" redeclares custom priority \"" + kind +
                       "\", from: \"" + it->second->name + "\"");
      } else if (it->second->weight != pr.weight) {
        fail(child(path, "weight"), std::string(kind) + " priority \"" + pr.name +
                                        "\" has a different weight with \"" + it->second->name +
                                        "\"");
      }
    }
  }
  if (policy.hardPodAffinitySymmetricWeight < 0 || policy.hardPodAffinitySymmetricWeight > 100) {
    fail("hardPodAffinitySymmetricWeight",
         "Invalid value: " + std::to_string(policy.hardPodAffinitySymmetricWeight) +
             ": not in valid range [0-100]");
  }

  // ProcessPredicatePolicy / ProcessPriorityPolicy.
  std::set<std::string> predicateKeys;
  if (!policy.predicates) {
    predicateKeys = kDefaultPredicates;
  } else {
    for (size_t i = 0; i < policy.predicates->size(); ++i) {
      const auto& pr = (*policy.predicates)[i];
      std::string name = pr.name == "PodFitsPorts" ? "PodFitsHostPorts" : pr.name;
      if (predicateProducers().contains(name)) {
        predicateKeys.insert(name);
        continue;
      }
      if (pr.serviceAffinityLabels) {
        if (!args.serviceAffinityArgs) args.serviceAffinityArgs = json::object();
        appendStrings(*args.serviceAffinityArgs, "affinityLabels", *pr.serviceAffinityLabels);
        predicateKeys.insert("CheckServiceAffinity");
      } else if (pr.labelsPresence) {
        if (!args.nodeLabelArgs) args.nodeLabelArgs = json::object();
        appendStrings(*args.nodeLabelArgs,
                      pr.labelsPresence->presence ? "presentLabels" : "absentLabels",
                      pr.labelsPresence->labels);
        predicateKeys.insert("CheckNodeLabelPresence");
      } else {
        fail(child(index("predicates", i), "name"),
             "Unsupported value: \"" + pr.name +
                 "\": predicate type not found (not a predicate of v1.20, and no "
                 "serviceAffinity or labelsPresence argument)");
      }
    }
  }
  predicateKeys.insert("PodToleratesNodeTaints");
  predicateKeys.insert("CheckNodeUnschedulable");

  std::map<std::string, int64_t> priorityKeys;
  if (!policy.priorities) {
    priorityKeys = kDefaultPriorities;
  } else {
    for (size_t i = 0; i < policy.priorities->size(); ++i) {
      const auto& pr = (*policy.priorities)[i];
      if (pr.name == "EqualPriority") continue;
      std::string name = pr.name == "ServiceSpreadingPriority" ? "SelectorSpreadPriority"
                         : pr.name == "RequestedToCapacityRatioPriority"
                             ? "RequestedToCapacityRatio"
                             : pr.name;
      if (!priorityProducers().contains(name) || name == "NodeLabel" || name == "ServiceAffinity" ||
          name == "RequestedToCapacityRatio") {
        if (pr.serviceAntiAffinityLabel) {
          name = "ServiceAffinity";
          if (!args.serviceAffinityArgs) args.serviceAffinityArgs = json::object();
          appendStrings(*args.serviceAffinityArgs, "antiAffinityLabelsPreference",
                        {*pr.serviceAntiAffinityLabel});
        } else if (pr.labelPreference) {
          name = "NodeLabel";
          if (!args.nodeLabelArgs) args.nodeLabelArgs = json::object();
          appendStrings(
              *args.nodeLabelArgs,
              pr.labelPreference->presence ? "presentLabelsPreference" : "absentLabelsPreference",
              {pr.labelPreference->label});
        } else if (pr.requestedToCapacityRatio) {
          name = "RequestedToCapacityRatio";
          args.requestedToCapacityRatioArgs = *pr.requestedToCapacityRatio;
        } else if (!priorityProducers().contains(name) || name == "NodeLabel" ||
                   name == "ServiceAffinity") {
          fail(child(index("priorities", i), "name"),
               "Unsupported value: \"" + pr.name +
                   "\": priority type not found (not a priority of v1.20, and no "
                   "serviceAntiAffinity, labelPreference or requestedToCapacityRatioArguments "
                   "argument)");
          continue;
        }
      }
      priorityKeys[name] = pr.weight;
    }
  }
  if (policy.hardPodAffinitySymmetricWeight != 0) {
    args.interPodAffinityArgs =
        json{{"hardPodAffinityWeight", policy.hardPodAffinitySymmetricWeight}};
  }
  if (!errors.empty()) return errors;

  Output out;
  out.plugins.preEnqueue.enabled = {{std::string(names::kSchedulingGates), 0}};
  out.plugins.queueSort.enabled = {{std::string(names::kPrioritySort), 0}};
  out.plugins.postFilter.enabled = {{std::string(names::kDefaultPreemption), 0}};
  out.plugins.bind.enabled = {{std::string(names::kDefaultBinder), 0}};
  out.plugins.multiPoint.disabled = {{"*", 0}};
  for (const auto& name : kPredicateOrdering) {
    if (predicateKeys.erase(name) > 0) predicateProducers().at(name)(args, out);
  }
  for (const auto& name : predicateKeys) predicateProducers().at(name)(args, out);
  for (const auto& [name, weight] : priorityKeys) {
    ProducerArgs a = args;
    a.weight = static_cast<int32_t>(std::min<int64_t>(weight, std::numeric_limits<int32_t>::max()));
    priorityProducers().at(name)(a, out);
  }
  // dedupPluginConfigs.
  std::vector<PluginConfig> configs;
  for (const auto& pc : out.pluginConfig) {
    auto it = std::find_if(configs.begin(), configs.end(),
                           [&](const PluginConfig& c) { return c.name == pc.name; });
    if (it == configs.end()) {
      configs.push_back(pc);
    } else if (it->args != pc.args) {
      errors.push_back(sourceName + ": inconsistent configuration produced for plugin " + pc.name);
    }
  }
  if (!errors.empty()) return errors;
  for (const auto& ref : out.plugins.score.enabled) {
    if (ref.name == names::kNodeResourcesBalancedAllocation) {
      configs.push_back(
          {std::string(names::kNodeResourcesBalancedAllocation), json{{"formula", "v1.20"}}});
    }
  }

  config.policySource = sourceName;
  config.extenders = policy.extenders;
  config.notes.push_back({"", "Converted from the Policy " + sourceName +
                                  ". ksched runs it as v1.20.2 did; the notes below mark where "
                                  "current upstream differs."});
  if (policy.hardPodAffinitySymmetricWeight != 0 &&
      !priorityKeys.contains("InterPodAffinityPriority")) {
    config.notes.push_back(
        {"",
         "hardPodAffinitySymmetricWeight is unused: it applies to InterPodAffinityPriority, "
         "which this Policy does not enable (as in v1.20)"});
  }
  if (policy.alwaysCheckAllPredicates) {
    config.notes.push_back(
        {"",
         "alwaysCheckAllPredicates is not in v1: Filter stops at the first plugin that "
         "rejects a node (only the recorded reasons differ)"});
  }
  for (size_t i = 0; i < config.profiles.size(); ++i) {
    Profile& p = config.profiles[i];
    p.plugins = out.plugins;
    p.pluginConfig = configs;
    p.v120ScoreWeights = true;
    noteLegacyPlugins(p, i, config.notes);
  }
  return errors;
}

}  // namespace ksched::config
