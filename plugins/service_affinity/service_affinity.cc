#include "plugins/service_affinity/service_affinity.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

#include <ksched/api/pod.h>
#include <ksched/api/selectors.h>
#include <ksched/api/workloads.h>
#include <ksched/helper/args_json.h>
#include <ksched/helper/default_selector.h>

namespace ksched::plugins {
namespace {

using service_affinity::PreFilterState;

constexpr StateKey<PreFilterState> kPreFilterKey{ServiceAffinity::kPreFilterStateKey};

Status missingState() {
  return Status::error("error reading \"" + std::string(ServiceAffinity::kPreFilterStateKey) +
                       "\" from cycleState: not found");
}

// The values `labels` has for the `keys` it has.
api::Labels labelsIn(const std::vector<std::string>& keys, const api::Labels& labels) {
  api::Labels out;
  for (const std::string& k : keys) {
    if (auto it = labels.find(k); it != labels.end()) out[k] = it->second;
  }
  return out;
}

// Upstream NodeInfo.FilterOutPods: drops the pods that name this node but are not among its
// pods (removed by a preemption simulation). A pod without a uid has no key and is dropped.
std::vector<PodPtr> filterOutPods(const NodeInfo& nodeInfo, const std::vector<PodPtr>& pods) {
  const api::Node* node = nodeInfo.node();
  if (node == nullptr) return pods;
  std::vector<PodPtr> out;
  out.reserve(pods.size());
  for (const PodPtr& p : pods) {
    if (p->spec.nodeName != node->metadata.name) {
      out.push_back(p);
      continue;
    }
    const std::string& uid = p->metadata.uid;
    if (uid.empty()) continue;
    const auto& present = nodeInfo.pods();
    if (std::any_of(present.begin(), present.end(),
                    [&](const PodInfoPtr& pi) { return pi->pod->metadata.uid == uid; })) {
      out.push_back(p);
    }
  }
  return out;
}

}  // namespace

ServiceAffinityArgs ServiceAffinityArgs::fromJson(const nlohmann::json& j) {
  ServiceAffinityArgs args;
  if (j.is_null()) return args;
  helper::expectObject(
      j, "",
      {helper::kApiVersionKey, helper::kKindKey, "affinityLabels", "antiAffinityLabelsPreference"});
  helper::readStringList(j, "affinityLabels", "", args.affinityLabels);
  helper::readStringList(j, "antiAffinityLabelsPreference", "", args.antiAffinityLabelsPreference);
  return args;
}

Status ServiceAffinity::preFilter(CycleState& state, const api::Pod& pod,
                                  const NodeInfoLister& nodes, PreFilterResult& /*result*/) {
  if (args_.affinityLabels.empty()) return Status::skip();
  auto s = std::make_unique<PreFilterState>();
  s->matchingServices = helper::podServices(pod, handle_->listers());
  const api::Selector selector = api::Selector::fromSet(pod.metadata.labels);
  for (const NodeInfo* ni : nodes.list()) {
    for (const PodInfoPtr& pi : ni->pods()) {
      const api::Pod& p = *pi->pod;
      if (p.metadata.namespace_ == pod.metadata.namespace_ && selector.matches(p.metadata.labels)) {
        s->matchingPods.push_back(pi->pod);
      }
    }
  }
  state.write(kPreFilterKey, std::move(s));
  return {};
}

Status ServiceAffinity::addPod(CycleState& state, const api::Pod& podToSchedule,
                               const PodInfo& podToAdd, const NodeInfo& /*nodeInfo*/) const {
  PreFilterState* s = state.mutableRead(kPreFilterKey);
  if (s == nullptr) return missingState();
  const api::Pod& added = *podToAdd.pod;
  if (added.metadata.namespace_ != podToSchedule.metadata.namespace_) return {};
  if (api::Selector::fromSet(podToSchedule.metadata.labels).matches(added.metadata.labels)) {
    s->matchingPods.push_back(podToAdd.pod);
  }
  return {};
}

Status ServiceAffinity::removePod(CycleState& state, const api::Pod& /*podToSchedule*/,
                                  const PodInfo& podToRemove, const NodeInfo& /*nodeInfo*/) const {
  PreFilterState* s = state.mutableRead(kPreFilterKey);
  if (s == nullptr) return missingState();
  const api::Pod& removed = *podToRemove.pod;
  if (s->matchingPods.empty() ||
      removed.metadata.namespace_ != s->matchingPods.front()->metadata.namespace_) {
    return {};
  }
  auto it = std::find_if(s->matchingPods.begin(), s->matchingPods.end(), [&](const PodPtr& p) {
    return p->metadata.name == removed.metadata.name &&
           p->metadata.namespace_ == removed.metadata.namespace_;
  });
  if (it != s->matchingPods.end()) s->matchingPods.erase(it);
  return {};
}

Status ServiceAffinity::filter(const CycleState& state, const api::Pod& pod,
                               const NodeInfo& nodeInfo) const {
  if (args_.affinityLabels.empty()) return {};
  const api::Node* node = nodeInfo.node();
  if (node == nullptr) return Status::error("node not found");
  const PreFilterState* s = state.read(kPreFilterKey);
  if (s == nullptr) return missingState();

  // The affinity labels the pod pins itself; the others come from where its Service runs.
  api::Labels affinity = labelsIn(args_.affinityLabels, pod.spec.nodeSelector);
  if (args_.affinityLabels.size() > affinity.size() && !s->matchingServices.empty()) {
    const std::vector<PodPtr> pods = filterOutPods(nodeInfo, s->matchingPods);
    if (!pods.empty()) {
      const NodeInfo* other = handle_->snapshot().get(pods.front()->spec.nodeName);
      if (other == nullptr || other->node() == nullptr) return Status::error("node not found");
      // Values the pod already has are kept.
      affinity.merge(labelsIn(args_.affinityLabels, other->node()->metadata.labels));
    }
  }
  if (api::Selector::fromSet(affinity).matches(node->metadata.labels)) return {};
  return Status::unschedulable(std::string(kErrReason));
}

Status ServiceAffinity::score(const CycleState& /*state*/, const api::Pod& pod,
                              const NodeInfo& nodeInfo, int64_t& score) const {
  score = 0;
  if (nodeInfo.node() == nullptr) return Status::error("node not found");
  if (nodeInfo.pods().empty()) return {};
  const ObjectList<api::Service> services = helper::podServices(pod, handle_->listers());
  if (services.empty()) return {};
  const api::Selector selector = api::Selector::fromSet(*services.front()->spec.selector);
  if (selector.isEverything()) return {};
  for (const PodInfoPtr& pi : nodeInfo.pods()) {
    const api::Pod& p = *pi->pod;
    if (p.metadata.namespace_ == pod.metadata.namespace_ && !p.metadata.deletionTimestamp &&
        selector.matches(p.metadata.labels)) {
      ++score;
    }
  }
  return {};
}

Status ServiceAffinity::normalizeScore(const CycleState& /*state*/, const api::Pod& /*pod*/,
                                       std::vector<NodeScore>& scores) const {
  if (args_.antiAffinityLabelsPreference.empty()) {
    for (NodeScore& ns : scores) ns.score = 0;
    return {};
  }
  const NodeInfoLister& snapshot = handle_->snapshot();
  std::vector<const api::Node*> nodes;
  nodes.reserve(scores.size());
  int64_t numServicePods = 0;
  for (const NodeScore& ns : scores) {
    const NodeInfo* ni = snapshot.get(ns.name);
    if (ni == nullptr || ni->node() == nullptr) {
      return Status::error("nodeinfo not found for node name \"" + ns.name + "\"");
    }
    nodes.push_back(ni->node());
    numServicePods += ns.score;
  }

  const auto maxNodeScore = static_cast<double>(kMaxNodeScore);
  const auto numLabels = static_cast<double>(args_.antiAffinityLabelsPreference.size());
  std::vector<double> result(scores.size(), 0.0);
  for (const std::string& label : args_.antiAffinityLabelsPreference) {
    // Pods of the Service per value of the label.
    std::map<std::string, int64_t, std::less<>> podCounts;
    for (size_t i = 0; i < scores.size(); ++i) {
      const api::Labels& labels = nodes[i]->metadata.labels;
      if (auto it = labels.find(label); it != labels.end())
        podCounts[it->second] += scores[i].score;
    }
    for (size_t i = 0; i < scores.size(); ++i) {
      const api::Labels& labels = nodes[i]->metadata.labels;
      auto it = labels.find(label);
      if (it == labels.end()) continue;
      double fScore = maxNodeScore;
      if (numServicePods > 0) {
        fScore = maxNodeScore * (static_cast<double>(numServicePods - podCounts[it->second]) /
                                 static_cast<double>(numServicePods));
      }
      result[i] += fScore / numLabels;
    }
  }
  for (size_t i = 0; i < scores.size(); ++i) scores[i].score = static_cast<int64_t>(result[i]);
  return {};
}

std::vector<ClusterEventWithHint> ServiceAffinity::eventsToRegister() const {
  return {
      {EventResource::kAssignedPod, kAdd | kDelete | kUpdatePodLabel, &sameNamespaceHint},
      {EventResource::kService, kAdd | kUpdate | kDelete, &sameNamespaceHint},
      {EventResource::kNode, kAdd | kUpdateNodeLabel},
  };
}

QueueingHint ServiceAffinity::sameNamespaceHint(const api::Pod& pod, const EventObject& oldObj,
                                                const EventObject& newObj) {
  auto namespaceOf = [](const EventObject& o) -> const std::string* {
    if (const api::Pod* p = as<api::Pod>(o)) return &p->metadata.namespace_;
    if (const api::Service* s = as<api::Service>(o)) return &s->metadata.namespace_;
    return nullptr;
  };
  const std::string* ns = namespaceOf(newObj);
  if (ns == nullptr) ns = namespaceOf(oldObj);
  if (ns == nullptr) return QueueingHint::kQueue;
  return *ns == pod.metadata.namespace_ ? QueueingHint::kQueue : QueueingHint::kSkip;
}

PluginFactory serviceAffinityFactory() {
  return makePluginFactory<ServiceAffinity>(
      [](const nlohmann::json& args) { return ServiceAffinityArgs::fromJson(args); },
      [](const ServiceAffinityArgs& typed, Handle& handle) {
        return std::make_unique<ServiceAffinity>(typed, handle);
      });
}

}  // namespace ksched::plugins
