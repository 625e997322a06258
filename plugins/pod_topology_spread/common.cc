#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include <ksched/api/node.h>
#include <ksched/helper/default_selector.h>

#include "plugins/pod_topology_spread/pod_topology_spread.h"

namespace ksched::plugins {
namespace {

using spread::Constraint;

std::vector<api::TopologySpreadConstraint> systemDefaultConstraints() {
  api::TopologySpreadConstraint hostname;
  hostname.topologyKey = std::string(api::kLabelHostname);
  hostname.whenUnsatisfiable = std::string(api::kScheduleAnyway);
  hostname.maxSkew = 3;
  api::TopologySpreadConstraint zone;
  zone.topologyKey = std::string(api::kLabelTopologyZone);
  zone.whenUnsatisfiable = std::string(api::kScheduleAnyway);
  zone.maxSkew = 5;
  return {std::move(hostname), std::move(zone)};
}

// Upstream filterTopologySpreadConstraints: compiles the constraints with that action.
// `labelKeys`: the MatchLabelKeysInPodTopologySpread gate; `comparisonOperators`: the
// TaintTolerationComparisonOperators gate.
std::vector<Constraint> compileConstraints(
    const std::vector<api::TopologySpreadConstraint>& constraints, const api::Labels& podLabels,
    std::string_view action, bool labelKeys, bool comparisonOperators) {
  std::vector<Constraint> out;
  // matchLabelKeys are merged here whether or not the apiserver already merged them into the
  // labelSelector at creation (1.34+, MatchLabelKeysInPodTopologySpreadSelectorMerge): the same
  // "key In (value)" twice selects the same pods, and clusters before 1.34 leave it to the
  // scheduler (docs/compatibility.md).
  for (const api::TopologySpreadConstraint& c : constraints) {
    if (c.whenUnsatisfiable != action) continue;
    Constraint compiled;
    compiled.maxSkew = c.maxSkew;
    compiled.topologyKey = c.topologyKey;
    compiled.selector = api::Selector::compile(c.labelSelector);
    // Gate off: the keys are ignored (a selector the apiserver merged stays as it is).
    if (labelKeys) {
      for (const std::string& key : c.matchLabelKeys) {
        if (auto it = podLabels.find(key); it != podLabels.end()) {
          compiled.selector.add(key, api::SelectorOperator::kIn, {it->second});
        }
      }
    }
    compiled.minDomains = c.minDomains.value_or(1);
    compiled.honorNodeAffinity =
        !c.nodeAffinityPolicy || *c.nodeAffinityPolicy == api::kNodeInclusionPolicyHonor;
    compiled.honorNodeTaints =
        c.nodeTaintsPolicy && *c.nodeTaintsPolicy == api::kNodeInclusionPolicyHonor;
    compiled.comparisonOperators = comparisonOperators;
    out.push_back(std::move(compiled));
  }
  return out;
}

}  // namespace

namespace spread {

void CriticalPaths::update(std::string_view value, int64_t num) {
  int i = -1;
  if (value == paths_[0].topologyValue) {
    i = 0;
  } else if (value == paths_[1].topologyValue) {
    i = 1;
  }
  if (i >= 0) {
    paths_[static_cast<size_t>(i)].matchNum = num;
    if (paths_[0].matchNum > paths_[1].matchNum) std::swap(paths_[0], paths_[1]);
  } else if (num < paths_[0].matchNum) {
    paths_[1] = paths_[0];
    paths_[0].topologyValue = std::string(value);
    paths_[0].matchNum = num;
  } else if (num < paths_[1].matchNum) {
    paths_[1].topologyValue = std::string(value);
    paths_[1].matchNum = num;
  }
}

}  // namespace spread

PodTopologySpread::PodTopologySpread(const PodTopologySpreadArgs& args, Handle& handle)
    : handle_(&handle),
      defaultConstraints_(args.defaultingType == kSystemDefaulting ? systemDefaultConstraints()
                                                                   : args.defaultConstraints),
      systemDefaulted_(args.defaultingType == kSystemDefaulting),
      matchLabelKeys_(
          handle.features().enabled(features::Feature::kMatchLabelKeysInPodTopologySpread)),
      comparisonOperators_(
          handle.features().enabled(features::Feature::kTaintTolerationComparisonOperators)) {}

std::vector<Constraint> PodTopologySpread::constraintsFor(const api::Pod& pod,
                                                          std::string_view action) const {
  if (!pod.spec.topologySpreadConstraints.empty()) {
    return compileConstraints(pod.spec.topologySpreadConstraints, pod.metadata.labels, action,
                              matchLabelKeys_, comparisonOperators_);
  }
  std::vector<Constraint> constraints = compileConstraints(
      defaultConstraints_, pod.metadata.labels, action, matchLabelKeys_, comparisonOperators_);
  if (constraints.empty()) return constraints;
  const api::Selector selector = helper::defaultSelector(pod, handle_->listers());
  if (selector.isEverything()) return {};
  for (Constraint& c : constraints) c.selector = selector;
  return constraints;
}

std::vector<ClusterEventWithHint> PodTopologySpread::eventsToRegister() const {
  return {
      {EventResource::kPod, kAdd | kUpdatePodLabel | kUpdatePodTolerations | kDelete,
       [this](const api::Pod& pod, const EventObject& oldObj, const EventObject& newObj) {
         return podChangeHint(pod, oldObj, newObj);
       }},
      {EventResource::kNode, kAdd | kDelete | kUpdateNodeLabel | kUpdateNodeTaint,
       [this](const api::Pod& pod, const EventObject& oldObj, const EventObject& newObj) {
         return nodeChangeHint(pod, oldObj, newObj);
       }},
  };
}

QueueingHint PodTopologySpread::podChangeHint(const api::Pod& pod, const EventObject& oldObj,
                                              const EventObject& newObj) const {
  const api::Pod* oldPod = as<api::Pod>(oldObj);
  const api::Pod* newPod = as<api::Pod>(newObj);
  if (oldPod == nullptr && newPod == nullptr) return QueueingHint::kQueue;
  // Only the pod itself and bound pods of its namespace take part in its spreading.
  auto involved = [&](const api::Pod* p) {
    return p->metadata.uid == pod.metadata.uid ||
           (!p->spec.nodeName.empty() && p->metadata.namespace_ == pod.metadata.namespace_);
  };
  if ((newPod != nullptr && !involved(newPod)) || (oldPod != nullptr && !involved(oldPod))) {
    return QueueingHint::kSkip;
  }
  const std::vector<Constraint> constraints = constraintsFor(pod, api::kDoNotSchedule);
  auto anyMatches = [&](const api::Labels& labels) {
    return std::any_of(constraints.begin(), constraints.end(),
                       [&](const Constraint& c) { return c.selector.matches(labels); });
  };
  if (oldPod != nullptr && newPod != nullptr) {
    // A new toleration may admit tainted nodes into the spreading.
    if (newPod->metadata.uid == pod.metadata.uid &&
        oldPod->spec.tolerations != newPod->spec.tolerations &&
        std::any_of(constraints.begin(), constraints.end(),
                    [](const Constraint& c) { return c.honorNodeTaints; })) {
      return QueueingHint::kQueue;
    }
    const api::Labels& before = oldPod->metadata.labels;
    const api::Labels& after = newPod->metadata.labels;
    if (before == after) return QueueingHint::kSkip;
    const bool changed = std::any_of(constraints.begin(), constraints.end(), [&](const auto& c) {
      return c.selector.matches(before) != c.selector.matches(after);
    });
    return changed ? QueueingHint::kQueue : QueueingHint::kSkip;
  }
  const api::Pod& p = newPod != nullptr ? *newPod : *oldPod;
  return anyMatches(p.metadata.labels) ? QueueingHint::kQueue : QueueingHint::kSkip;
}

QueueingHint PodTopologySpread::nodeChangeHint(const api::Pod& pod, const EventObject& oldObj,
                                               const EventObject& newObj) const {
  const api::Node* oldNode = as<api::Node>(oldObj);
  const api::Node* newNode = as<api::Node>(newObj);
  if (oldNode == nullptr && newNode == nullptr) return QueueingHint::kQueue;
  const std::vector<Constraint> constraints = constraintsFor(pod, api::kDoNotSchedule);
  auto hasAllKeys = [&](const api::Node* n) {
    return n != nullptr && std::all_of(constraints.begin(), constraints.end(), [&](const auto& c) {
             return n->metadata.labels.contains(c.topologyKey);
           });
  };
  const bool oldMatches = hasAllKeys(oldNode);
  const bool newMatches = hasAllKeys(newNode);
  if (oldNode != nullptr && newNode != nullptr) {
    if (oldMatches != newMatches) return QueueingHint::kQueue;
    if (!newMatches) return QueueingHint::kSkip;
    const bool valueChanged =
        std::any_of(constraints.begin(), constraints.end(), [&](const auto& c) {
          return oldNode->metadata.labels.at(c.topologyKey) !=
                 newNode->metadata.labels.at(c.topologyKey);
        });
    return valueChanged || oldNode->spec.taints != newNode->spec.taints ? QueueingHint::kQueue
                                                                        : QueueingHint::kSkip;
  }
  return oldMatches || newMatches ? QueueingHint::kQueue : QueueingHint::kSkip;
}

PluginFactory podTopologySpreadFactory() {
  return makePluginFactory<PodTopologySpread>(
      decodeAndValidate<PodTopologySpreadArgs>,
      [](const PodTopologySpreadArgs& typed, Handle& handle) {
        return std::make_unique<PodTopologySpread>(typed, handle);
      });
}

bool PodTopologySpread::signPod(const api::Pod& pod) const {
  if (!pod.spec.topologySpreadConstraints.empty()) return false;
  return defaultConstraints_.empty() ||
         helper::defaultSelector(pod, handle_->listers()).isEverything();
}

}  // namespace ksched::plugins
