#include "plugins/taint_toleration/taint_toleration.h"

#include <spdlog/spdlog.h>

#include <utility>

#include <ksched/api/node.h>
#include <ksched/api/pod.h>
#include <ksched/helper/normalize_score.h>

namespace ksched::plugins {
namespace {

struct PreScoreState final : StateData {
  std::vector<api::Toleration> tolerationsPreferNoSchedule;

  [[nodiscard]] std::unique_ptr<StateData> clone() const override {
    return std::make_unique<PreScoreState>(*this);
  }
};

constexpr StateKey<PreScoreState> kPreScoreKey{TaintToleration::kPreScoreStateKey};

// Tolerations with an empty effect (all effects) or PreferNoSchedule.
std::vector<api::Toleration> tolerationsPreferNoSchedule(const std::vector<api::Toleration>& all) {
  std::vector<api::Toleration> out;
  for (const auto& t : all) {
    if (t.effect.empty() || t.effect == api::kTaintEffectPreferNoSchedule) out.push_back(t);
  }
  return out;
}

int64_t countIntolerablePreferNoSchedule(const std::vector<api::Taint>& taints,
                                         const std::vector<api::Toleration>& tolerations,
                                         bool comparisonOperators) {
  int64_t n = 0;
  for (const auto& taint : taints) {
    if (taint.effect != api::kTaintEffectPreferNoSchedule) continue;
    if (!api::tolerationsTolerateTaint(tolerations, taint, comparisonOperators)) ++n;
  }
  return n;
}

}  // namespace

Status TaintToleration::filter(const CycleState& /*state*/, const api::Pod& pod,
                               const NodeInfo& nodeInfo) const {
  const api::Node* node = nodeInfo.node();
  if (node == nullptr) return Status::error("invalid nodeInfo");
  const api::Taint* taint = api::findUntoleratedTaint(
      node->spec.taints, pod.spec.tolerations, comparisonOperators_, api::isDoNotScheduleTaint);
  if (taint == nullptr) return {};
  // The taint is not in the reason, as upstream; it is logged at -v 4.
  spdlog::debug("node {} had untolerated taint {}={}:{} for pod {}", node->metadata.name,
                taint->key, taint->value, taint->effect, pod.metadata.key());
  return Status::unresolvable(std::string(kUntoleratedTaintReason));
}

Status TaintToleration::preScore(CycleState& state, const api::Pod& pod,
                                 const std::vector<const NodeInfo*>& /*nodes*/) {
  auto s = std::make_unique<PreScoreState>();
  s->tolerationsPreferNoSchedule = tolerationsPreferNoSchedule(pod.spec.tolerations);
  state.write(kPreScoreKey, std::move(s));
  return {};
}

Status TaintToleration::score(const CycleState& state, const api::Pod& /*pod*/,
                              const NodeInfo& nodeInfo, int64_t& score) const {
  const api::Node* node = nodeInfo.node();
  if (node == nullptr) return Status::error("invalid nodeInfo");
  const PreScoreState* s = state.read(kPreScoreKey);
  if (s == nullptr) {
    return Status::error("failed to read \"" + std::string(kPreScoreStateKey) +
                         "\" from cycleState: not found");
  }
  score = countIntolerablePreferNoSchedule(node->spec.taints, s->tolerationsPreferNoSchedule,
                                           comparisonOperators_);
  return {};
}

Status TaintToleration::normalizeScore(const CycleState& /*state*/, const api::Pod& /*pod*/,
                                       std::vector<NodeScore>& scores) const {
  helper::defaultNormalizeScore(kMaxNodeScore, true, scores);
  return {};
}

std::vector<ClusterEventWithHint> TaintToleration::eventsToRegister() const {
  return {
      {EventResource::kNode, kAdd | kUpdateNodeTaint,
       [comparisonOperators = comparisonOperators_](const api::Pod& pod, const EventObject& oldObj,
                                                    const EventObject& newObj) {
         return isSchedulableAfterNodeChange(comparisonOperators, pod, oldObj, newObj);
       }},
      {EventResource::kPod, kUpdatePodTolerations, &isSchedulableAfterPodTolerationChange},
  };
}

QueueingHint TaintToleration::isSchedulableAfterNodeChange(bool comparisonOperators,
                                                           const api::Pod& pod,
                                                           const EventObject& oldObj,
                                                           const EventObject& newObj) {
  const api::Node* modified = as<api::Node>(newObj);
  if (modified == nullptr) return QueueingHint::kQueue;
  auto untolerated = [&pod, comparisonOperators](const api::Node& node) {
    return api::findUntoleratedTaint(node.spec.taints, pod.spec.tolerations, comparisonOperators,
                                     api::isDoNotScheduleTaint) != nullptr;
  };
  if (untolerated(*modified)) return QueueingHint::kSkip;
  const api::Node* original = as<api::Node>(oldObj);
  if (original != nullptr && !untolerated(*original)) return QueueingHint::kSkip;
  return QueueingHint::kQueue;
}

QueueingHint TaintToleration::isSchedulableAfterPodTolerationChange(const api::Pod& pod,
                                                                    const EventObject& /*oldObj*/,
                                                                    const EventObject& newObj) {
  const api::Pod* modified = as<api::Pod>(newObj);
  if (modified == nullptr) return QueueingHint::kQueue;
  return modified->metadata.uid == pod.metadata.uid ? QueueingHint::kQueue : QueueingHint::kSkip;
}

PluginFactory taintTolerationFactory() {
  return makePluginFactory<TaintToleration>([](Handle& handle) {
    return std::make_unique<TaintToleration>(
        handle.features().enabled(features::Feature::kTaintTolerationComparisonOperators));
  });
}

}  // namespace ksched::plugins
