// The legacy scheduler Policy (kind: Policy, apiVersion: v1) of kube-scheduler v1.10-v1.22:
// predicates and priorities with weights, extenders, hardPodAffinitySymmetricWeight and
// alwaysCheckAllPredicates, read from a file (--policy-config-file) or the key "policy.cfg" of a
// ConfigMap (--policy-configmap). applyPolicy() turns it into the plugins of every profile
// exactly as v1.20.2's legacy registry does (framework/plugins/legacy_registry.go and
// Configurator.createFromConfig):
//
//   - no "predicates" key: v1.20's default predicates; no "priorities" key: its default
//     priorities; an empty list means none. CheckNodeUnschedulable and PodToleratesNodeTaints
//     are always added.
//   - predicates are applied in v1.20's fixed order, then the others by name; priorities by
//     name; a plugin named twice at a point keeps its first place and the larger weight.
//   - a name v1.20 does not know is an error, unless it carries an argument: a predicate with
//     serviceAffinity becomes ServiceAffinity (labels accumulate), one with labelsPresence
//     NodeLabel; a priority with serviceAntiAffinity becomes ServiceAffinity's score, with
//     labelPreference NodeLabel's (weight × number of labels), with
//     requestedToCapacityRatioArguments RequestedToCapacityRatio.
//   - SelectorSpreadPriority / ServiceSpreadingPriority become PodTopologySpread with the
//     System default constraints (DefaultPodTopologySpread was on in v1.20);
//     EvenPodsSpreadPriority PodTopologySpread with List defaulting; EqualPriority is ignored.
//
// Decoding is strict, unlike v1.20's: an unknown field is an error with its path.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/scheduler_config.h"

namespace ksched::config {

inline constexpr std::string_view kPolicyConfigMapKey = "policy.cfg";

struct PolicyPredicate {
  std::string name;
  // argument.serviceAffinity.labels
  std::optional<std::vector<std::string>> serviceAffinityLabels;
  // argument.labelsPresence
  struct LabelsPresence {
    std::vector<std::string> labels;
    bool presence = false;
  };
  std::optional<LabelsPresence> labelsPresence;
};

struct PolicyPriority {
  std::string name;
  int64_t weight = 0;
  std::optional<std::string> serviceAntiAffinityLabel;  // argument.serviceAntiAffinity.label
  struct LabelPreference {
    std::string label;
    bool presence = false;
  };
  std::optional<LabelPreference> labelPreference;  // argument.labelPreference
  // argument.requestedToCapacityRatioArguments as written ({shape, resources}), scores 0-10.
  std::optional<nlohmann::json> requestedToCapacityRatio;
};

struct Policy {
  std::optional<std::vector<PolicyPredicate>> predicates;  // nullopt: v1.20's defaults
  std::optional<std::vector<PolicyPriority>> priorities;   // nullopt: v1.20's defaults
  std::vector<Extender> extenders;
  int32_t hardPodAffinitySymmetricWeight = 0;
  bool alwaysCheckAllPredicates = false;
};

struct PolicyResult {
  std::optional<Policy> policy;
  std::vector<std::string> errors;  // "<sourceName>: <field path>: <what is wrong>"
};

// Decodes a Policy (JSON or YAML). `sourceName` prefixes every error.
[[nodiscard]] PolicyResult decodePolicy(std::string_view text, const std::string& sourceName);
// Reads and decodes the file at `path`.
[[nodiscard]] PolicyResult decodePolicyFile(const std::string& path);

// v1.20's predicate and priority names, for messages and tests.
[[nodiscard]] const std::vector<std::string>& policyPredicateNames();
[[nodiscard]] const std::vector<std::string>& policyPriorityNames();

// Validates `policy` as v1.20 did (weights, extenders, hardPodAffinitySymmetricWeight, custom
// priorities) and replaces the plugins and pluginConfig of every profile of `config` with the
// Policy's, its extenders with the Policy's; records `sourceName` and notes. Errors are
// prefixed with `sourceName`; `config` is unchanged when there are any.
[[nodiscard]] std::vector<std::string> applyPolicy(const Policy& policy,
                                                   const std::string& sourceName,
                                                   SchedulerConfiguration& config);

}  // namespace ksched::config
