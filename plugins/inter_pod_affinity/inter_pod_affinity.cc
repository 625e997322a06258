#include "plugins/inter_pod_affinity/inter_pod_affinity.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>

#include <ksched/api/node.h>
#include <ksched/helper/args_json.h>
#include <ksched/registry.h>

#include "plugins/inter_pod_affinity/affinity_terms.h"
#include "plugins/inter_pod_affinity/state.h"

namespace ksched::plugins {
namespace {

using interpodaffinity::existingTermMatches;
using interpodaffinity::IncomingTerm;
using interpodaffinity::kPreFilterKey;
using interpodaffinity::matchesAll;
using interpodaffinity::PreFilterState;
using interpodaffinity::TopologyCounts;

constexpr int32_t kMinHardPodAffinityWeight = 0;
constexpr int32_t kMaxHardPodAffinityWeight = 100;

bool readBool(const nlohmann::json& j, std::string_view key, bool& out) {
  const nlohmann::json* v = helper::member(j, key);
  if (v == nullptr) return false;
  if (!v->is_boolean()) {
    throw PluginArgsError(std::string(key) + ": expected a boolean, got " + v->type_name());
  }
  out = v->get<bool>();
  return true;
}

// The existing pod's required anti-affinity terms selecting `incoming`, counted at `node`.
void addExistingAntiAffinity(TopologyCounts& counts, const api::Pod& existing,
                             const api::Pod& incoming, const api::Labels& nsLabels,
                             const api::Labels& nodeLabels, int64_t delta) {
  for (const api::PodAffinityTerm& t : interpodaffinity::requiredAntiAffinityTerms(existing)) {
    if (existingTermMatches(t, existing, incoming, nsLabels)) {
      counts.add(nodeLabels, t.topologyKey, delta);
    }
  }
}

// One count per affinity term when `existing` matches all of them.
void addAffinity(TopologyCounts& counts, const std::vector<IncomingTerm>& terms,
                 const api::Pod& existing, const api::Labels& nodeLabels, int64_t delta) {
  if (!matchesAll(terms, existing)) return;
  for (const IncomingTerm& t : terms) counts.add(nodeLabels, t.topologyKey, delta);
}

// One count per anti-affinity term selecting `existing`.
void addAntiAffinity(TopologyCounts& counts, const std::vector<IncomingTerm>& terms,
                     const api::Pod& existing, const api::Labels& nodeLabels, int64_t delta) {
  for (const IncomingTerm& t : terms) {
    if (t.matches(existing)) counts.add(nodeLabels, t.topologyKey, delta);
  }
}

bool usesNamespaceSelector(const std::vector<api::PodAffinityTerm>& terms) {
  return std::any_of(terms.begin(), terms.end(),
                     [](const api::PodAffinityTerm& t) { return t.namespaceSelector.has_value(); });
}

bool satisfiesPodAffinity(const PreFilterState& s, const api::Labels& nodeLabels) {
  bool podsExist = true;
  for (const IncomingTerm& t : s.affinityTerms) {
    auto label = nodeLabels.find(t.topologyKey);
    if (label == nodeLabels.end()) return false;  // every topology label must exist
    if (s.affinity.get(t.topologyKey, label->second) <= 0) podsExist = false;
  }
  if (podsExist) return true;
  // The first pod of a group that has affinity to itself: nothing matches anywhere yet.
  return s.affinity.empty() && s.matchesOwnAffinity;
}

bool satisfiesPodAntiAffinity(const PreFilterState& s, const api::Labels& nodeLabels) {
  return std::none_of(
      s.antiAffinityTerms.begin(), s.antiAffinityTerms.end(),
      [&](const IncomingTerm& t) { return s.antiAffinity.atNode(nodeLabels, t.topologyKey) > 0; });
}

InterPodAffinity::CountsForTest sortedEntries(const TopologyCounts& c) {
  auto e = c.entries();
  std::sort(e.begin(), e.end());
  return e;
}

}  // namespace

InterPodAffinityArgs InterPodAffinityArgs::fromJson(const nlohmann::json& j) {
  InterPodAffinityArgs args;
  if (j.is_null()) return args;
  helper::expectObject(j, "",
                       {helper::kApiVersionKey, helper::kKindKey, "hardPodAffinityWeight",
                        "ignorePreferredTermsOfExistingPods"});
  helper::readInt32(j, "hardPodAffinityWeight", "", args.hardPodAffinityWeight);
  readBool(j, "ignorePreferredTermsOfExistingPods", args.ignorePreferredTermsOfExistingPods);
  return args;
}

std::vector<helper::FieldError> InterPodAffinityArgs::validationErrors() const {
  std::vector<helper::FieldError> errs;
  if (hardPodAffinityWeight < kMinHardPodAffinityWeight ||
      hardPodAffinityWeight > kMaxHardPodAffinityWeight) {
    errs.push_back(helper::invalid("hardPodAffinityWeight", hardPodAffinityWeight,
                                   "not in valid range [" +
                                       std::to_string(kMinHardPodAffinityWeight) + "-" +
                                       std::to_string(kMaxHardPodAffinityWeight) + "]"));
  }
  return errs;
}

void InterPodAffinityArgs::validate() const { helper::throwIfAny(validationErrors()); }

InterPodAffinity::InterPodAffinity(const InterPodAffinityArgs& args, Handle& handle)
    : args_(args), handle_(handle) {}

Status InterPodAffinity::preFilter(CycleState& state, const api::Pod& pod,
                                   const NodeInfoLister& nodes, PreFilterResult& /*result*/) {
  const ClusterListers& listers = handle_.listers();
  auto s = std::make_unique<PreFilterState>();
  s->affinityTerms = interpodaffinity::resolveIncomingTerms(
      interpodaffinity::requiredAffinityTerms(pod), pod, listers);
  s->antiAffinityTerms = interpodaffinity::resolveIncomingTerms(
      interpodaffinity::requiredAntiAffinityTerms(pod), pod, listers);
  s->matchesOwnAffinity = matchesAll(s->affinityTerms, pod);
  s->namespaceLabels = interpodaffinity::namespaceLabels(listers, pod.metadata.namespace_);

  Parallelizer& par = handle_.parallelizer();

  // Existing pods' required anti-affinity against the incoming pod.
  const std::vector<const NodeInfo*>& antiNodes = nodes.havePodsWithRequiredAntiAffinityList();
  const std::vector<TopologyCounts> existing = interpodaffinity::accumulateInChunks<TopologyCounts>(
      par, antiNodes.size(), [&](TopologyCounts& acc, size_t i) {
        const NodeInfo* ni = antiNodes[i];
        const api::Node* node = ni->node();
        if (node == nullptr) return;
        for (const PodInfoPtr& p : ni->podsWithRequiredAntiAffinity()) {
          addExistingAntiAffinity(acc, *p->pod, pod, s->namespaceLabels, node->metadata.labels, 1);
        }
      });
  for (const TopologyCounts& c : existing) s->existingAntiAffinity.merge(c);

  // Existing pods against the incoming pod's required terms.
  if (!s->affinityTerms.empty() || !s->antiAffinityTerms.empty()) {
    const std::vector<const NodeInfo*>& all = nodes.list();
    using Pair = std::pair<TopologyCounts, TopologyCounts>;  // affinity, anti-affinity
    const std::vector<Pair> incoming =
        interpodaffinity::accumulateInChunks<Pair>(par, all.size(), [&](Pair& acc, size_t i) {
          const NodeInfo* ni = all[i];
          const api::Node* node = ni->node();
          if (node == nullptr) return;
          for (const PodInfoPtr& p : ni->pods()) {
            addAffinity(acc.first, s->affinityTerms, *p->pod, node->metadata.labels, 1);
            addAntiAffinity(acc.second, s->antiAffinityTerms, *p->pod, node->metadata.labels, 1);
          }
        });
    for (const auto& [aff, anti] : incoming) {
      s->affinity.merge(aff);
      s->antiAffinity.merge(anti);
    }
  }

  if (s->existingAntiAffinity.empty() && s->affinityTerms.empty() && s->antiAffinityTerms.empty()) {
    return Status::skip();
  }
  state.write(kPreFilterKey, std::move(s));
  return {};
}

Status InterPodAffinity::updateWithPod(CycleState& state, const api::Pod& podToSchedule,
                                       const PodInfo& pod, const NodeInfo& nodeInfo,
                                       int64_t multiplier) const {
  PreFilterState* s = state.mutableRead(kPreFilterKey);
  if (s == nullptr) {
    return Status::error("error reading \"" + std::string(kPreFilterStateKey) +
                         "\" from cycleState: not found");
  }
  const api::Node* node = nodeInfo.node();
  if (node == nullptr) return Status::error("node not found");
  const api::Labels& nodeLabels = node->metadata.labels;
  addExistingAntiAffinity(s->existingAntiAffinity, *pod.pod, podToSchedule, s->namespaceLabels,
                          nodeLabels, multiplier);
  addAffinity(s->affinity, s->affinityTerms, *pod.pod, nodeLabels, multiplier);
  addAntiAffinity(s->antiAffinity, s->antiAffinityTerms, *pod.pod, nodeLabels, multiplier);
  return {};
}

Status InterPodAffinity::addPod(CycleState& state, const api::Pod& podToSchedule,
                                const PodInfo& podToAdd, const NodeInfo& nodeInfo) const {
  return updateWithPod(state, podToSchedule, podToAdd, nodeInfo, 1);
}

Status InterPodAffinity::removePod(CycleState& state, const api::Pod& podToSchedule,
                                   const PodInfo& podToRemove, const NodeInfo& nodeInfo) const {
  return updateWithPod(state, podToSchedule, podToRemove, nodeInfo, -1);
}

Status InterPodAffinity::filter(const CycleState& state, const api::Pod& /*pod*/,
                                const NodeInfo& nodeInfo) const {
  const api::Node* node = nodeInfo.node();
  if (node == nullptr) return Status::error("node not found");
  const PreFilterState* s = state.read(kPreFilterKey);
  if (s == nullptr) {
    return Status::error("error reading \"" + std::string(kPreFilterStateKey) +
                         "\" from cycleState: not found");
  }
  const api::Labels& labels = node->metadata.labels;
  if (!satisfiesPodAffinity(*s, labels)) {
    return Status::unresolvable(std::string(kErrReasonAffinityRulesNotMatch));
  }
  if (!satisfiesPodAntiAffinity(*s, labels)) {
    return Status::unschedulable(std::string(kErrReasonAntiAffinityRulesNotMatch));
  }
  if (s->existingAntiAffinity.anyPositive(labels)) {
    return Status::unschedulable(std::string(kErrReasonExistingAntiAffinityRulesNotMatch));
  }
  return {};
}

std::vector<ClusterEventWithHint> InterPodAffinity::eventsToRegister() const {
  return {
      {EventResource::kPod, kAdd | kUpdatePodLabel | kDelete,
       [this](const api::Pod& pod, const EventObject& oldObj, const EventObject& newObj) {
         return podChangeHint(pod, oldObj, newObj);
       }},
      {EventResource::kNode, kAdd | kUpdateNodeLabel, &InterPodAffinity::nodeChangeHint},
  };
}

QueueingHint InterPodAffinity::podChangeHint(const api::Pod& pod, const EventObject& oldObj,
                                             const EventObject& newObj) const {
  const api::Pod* oldPod = as<api::Pod>(oldObj);
  const api::Pod* newPod = as<api::Pod>(newObj);
  if (oldPod == nullptr && newPod == nullptr) return QueueingHint::kQueue;
  // The pod's own update: with other labels, other terms may select it.
  if (newPod != nullptr && newPod->metadata.uid == pod.metadata.uid) {
    return oldPod != nullptr && oldPod->metadata.labels != newPod->metadata.labels
               ? QueueingHint::kQueue
               : QueueingHint::kSkip;
  }
  if ((oldPod != nullptr && oldPod->spec.nodeName.empty()) ||
      (newPod != nullptr && newPod->spec.nodeName.empty())) {
    return QueueingHint::kSkip;
  }
  const auto& terms = interpodaffinity::requiredAffinityTerms(pod);
  const auto& antiTerms = interpodaffinity::requiredAntiAffinityTerms(pod);
  const api::Pod& changed = newPod != nullptr ? *newPod : *oldPod;
  const api::Labels nsLabels =
      usesNamespaceSelector(terms) || usesNamespaceSelector(antiTerms)
          ? interpodaffinity::namespaceLabels(handle_.listers(), changed.metadata.namespace_)
          : api::Labels{};
  auto selects = [&](const api::PodAffinityTerm& t, const api::Pod& p) {
    return existingTermMatches(t, pod, p, nsLabels);
  };
  // A single pod must match all affinity terms.
  auto matchesAllTerms = [&](const api::Pod& p) {
    return !terms.empty() &&
           std::all_of(terms.begin(), terms.end(), [&](const auto& t) { return selects(t, p); });
  };
  if (oldPod != nullptr && newPod != nullptr) {
    if (!matchesAllTerms(*oldPod) && matchesAllTerms(*newPod)) return QueueingHint::kQueue;
    const bool leftAntiAffinity =
        std::any_of(antiTerms.begin(), antiTerms.end(),
                    [&](const auto& t) { return selects(t, *oldPod) && !selects(t, *newPod); });
    return leftAntiAffinity ? QueueingHint::kQueue : QueueingHint::kSkip;
  }
  if (newPod != nullptr) {
    return matchesAllTerms(*newPod) ? QueueingHint::kQueue : QueueingHint::kSkip;
  }
  // Deleted: it no longer repels the pod, nor the pod it.
  if (std::any_of(antiTerms.begin(), antiTerms.end(),
                  [&](const auto& t) { return selects(t, *oldPod); })) {
    return QueueingHint::kQueue;
  }
  const auto& existingAnti = interpodaffinity::requiredAntiAffinityTerms(*oldPod);
  if (!existingAnti.empty()) {
    const api::Labels podNsLabels =
        usesNamespaceSelector(existingAnti)
            ? interpodaffinity::namespaceLabels(handle_.listers(), pod.metadata.namespace_)
            : api::Labels{};
    if (std::any_of(existingAnti.begin(), existingAnti.end(), [&](const auto& t) {
          return existingTermMatches(t, *oldPod, pod, podNsLabels);
        })) {
      return QueueingHint::kQueue;
    }
  }
  // It may have been the last pod of the group: a pod matching its own affinity terms then
  // fits where the topology keys are (Filter's first pod of a group).
  if (matchesAllTerms(*oldPod)) {
    const api::Labels ownNsLabels =
        usesNamespaceSelector(terms)
            ? interpodaffinity::namespaceLabels(handle_.listers(), pod.metadata.namespace_)
            : api::Labels{};
    if (std::all_of(terms.begin(), terms.end(),
                    [&](const auto& t) { return existingTermMatches(t, pod, pod, ownNsLabels); })) {
      return QueueingHint::kQueue;
    }
  }
  return QueueingHint::kSkip;
}

QueueingHint InterPodAffinity::nodeChangeHint(const api::Pod& pod, const EventObject& oldObj,
                                              const EventObject& newObj) {
  const api::Node* oldNode = as<api::Node>(oldObj);
  const api::Node* newNode = as<api::Node>(newObj);
  if (newNode == nullptr) return QueueingHint::kQueue;
  auto label = [](const api::Node& n, const std::string& key) -> const std::string* {
    auto it = n.metadata.labels.find(key);
    return it == n.metadata.labels.end() ? nullptr : &it->second;
  };
  for (const api::PodAffinityTerm& t : interpodaffinity::requiredAffinityTerms(pod)) {
    const std::string* now = label(*newNode, t.topologyKey);
    if (now == nullptr) continue;
    const std::string* before = oldNode == nullptr ? nullptr : label(*oldNode, t.topologyKey);
    // A new domain member, or the node moved to another domain.
    if (before == nullptr || *before != *now) return QueueingHint::kQueue;
  }
  for (const api::PodAffinityTerm& t : interpodaffinity::requiredAntiAffinityTerms(pod)) {
    // A new node may be in a domain without the pods the pod repels.
    if (oldNode == nullptr) return QueueingHint::kQueue;
    const std::string* before = label(*oldNode, t.topologyKey);
    if (before == nullptr) continue;  // a node without the key always accepted the pod
    const std::string* now = label(*newNode, t.topologyKey);
    if (now == nullptr || *before != *now) return QueueingHint::kQueue;
  }
  return QueueingHint::kSkip;
}

std::optional<InterPodAffinity::PreFilterCountsForTest> InterPodAffinity::preFilterCountsForTest(
    const CycleState& state) {
  const PreFilterState* s = state.read(kPreFilterKey);
  if (s == nullptr) return std::nullopt;
  return PreFilterCountsForTest{sortedEntries(s->existingAntiAffinity), sortedEntries(s->affinity),
                                sortedEntries(s->antiAffinity)};
}

PluginFactory interPodAffinityFactory() {
  return makePluginFactory<InterPodAffinity>(decodeAndValidate<InterPodAffinityArgs>,
                                             [](const InterPodAffinityArgs& typed, Handle& handle) {
                                               return std::make_unique<InterPodAffinity>(typed,
                                                                                         handle);
                                             });
}

bool InterPodAffinity::signPod(const api::Pod& pod) const {
  const auto& a = pod.spec.affinity;
  return !a || (!a->podAffinity && !a->podAntiAffinity);
}

}  // namespace ksched::plugins
