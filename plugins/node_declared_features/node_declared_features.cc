#include "plugins/node_declared_features/node_declared_features.h"

#include <string>
#include <utility>

#include <ksched/api/features.h>
#include <ksched/api/node.h>
#include <ksched/api/pod.h>
#include <ksched/helper/node_declared_features.h>

namespace ksched::plugins {
namespace {

struct PreFilterState final : StateData {
  helper::FeatureSet required;

  [[nodiscard]] std::unique_ptr<StateData> clone() const override {
    return std::make_unique<PreFilterState>(*this);
  }
};

constexpr StateKey<PreFilterState> kPreFilterKey{NodeDeclaredFeatures::kPreFilterStateKey};

}  // namespace

Status NodeDeclaredFeatures::preFilter(CycleState& state, const api::Pod& pod,
                                       const NodeInfoLister& /*nodes*/,
                                       PreFilterResult& /*result*/) {
  if (!enabled_) return Status::skip();
  auto s = std::make_unique<PreFilterState>();
  s->required = helper::requiredFeatures(pod);
  if (s->required.empty()) return Status::skip();
  state.write(kPreFilterKey, std::move(s));
  return {};
}

Status NodeDeclaredFeatures::filter(const CycleState& state, const api::Pod& /*pod*/,
                                    const NodeInfo& nodeInfo) const {
  if (!enabled_) return {};
  const PreFilterState* s = state.read(kPreFilterKey);
  if (s == nullptr) {
    return Status::error("error reading \"" + std::string(kPreFilterStateKey) +
                         "\" from cycle-state: not found");
  }
  if (!s->required.isSubsetOf(nodeInfo.declaredFeatures())) {
    return Status::unresolvable(std::string(kErrReason));
  }
  return {};
}

std::vector<std::string> NodeDeclaredFeatures::explainRejection(const CycleState& state,
                                                                const api::Pod& pod,
                                                                const NodeInfo& nodeInfo) const {
  std::vector<std::string> out;
  const PreFilterState* s = state.read(kPreFilterKey);
  const helper::FeatureSet required = s != nullptr ? s->required : helper::requiredFeatures(pod);
  const auto missing = required.minus(nodeInfo.declaredFeatures());
  const auto registry = helper::declaredFeatureRegistry();
  const bool none = nodeInfo.node() == nullptr || nodeInfo.node()->status.declaredFeatures.empty();
  for (size_t i = 0; i < registry.size(); ++i) {
    if (!missing.contains(i)) continue;
    out.push_back("node does not declare " + std::string(registry[i].name) + " (the pod has " +
                  std::string(registry[i].neededWhen) + ")" +
                  (none ? "; the node declares no features (a kubelet older than 1.35?)" : ""));
  }
  return out;
}

std::vector<ClusterEventWithHint> NodeDeclaredFeatures::eventsToRegister() const {
  if (!enabled_) return {};
  return {
      {EventResource::kNode, kAdd | kUpdateNodeDeclaredFeature, &isSchedulableAfterNodeChange},
      {EventResource::kUnscheduledPod, kUpdate, &isSchedulableAfterPodUpdate},
  };
}

QueueingHint NodeDeclaredFeatures::isSchedulableAfterNodeChange(const api::Pod& /*pod*/,
                                                                const EventObject& oldObj,
                                                                const EventObject& newObj) {
  const api::Node* modified = as<api::Node>(newObj);
  if (modified == nullptr) return QueueingHint::kQueue;
  const api::Node* original = as<api::Node>(oldObj);
  if (original != nullptr &&
      original->status.declaredFeatures == modified->status.declaredFeatures) {
    return QueueingHint::kSkip;
  }
  return QueueingHint::kQueue;
}

QueueingHint NodeDeclaredFeatures::isSchedulableAfterPodUpdate(const api::Pod& pod,
                                                               const EventObject& oldObj,
                                                               const EventObject& newObj) {
  const api::Pod* original = as<api::Pod>(oldObj);
  const api::Pod* modified = as<api::Pod>(newObj);
  if (original == nullptr || modified == nullptr) return QueueingHint::kQueue;
  if (modified->metadata.uid != pod.metadata.uid) return QueueingHint::kSkip;
  return helper::requiredFeatures(*original) == helper::requiredFeatures(*modified)
             ? QueueingHint::kSkip
             : QueueingHint::kQueue;
}

PluginFactory nodeDeclaredFeaturesFactory() {
  return makePluginFactory<NodeDeclaredFeatures>([](Handle& handle) {
    return std::make_unique<NodeDeclaredFeatures>(
        handle.features().enabled(features::Feature::kNodeDeclaredFeatures));
  });
}

}  // namespace ksched::plugins
