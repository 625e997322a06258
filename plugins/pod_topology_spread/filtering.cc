#include <string>
#include <utility>

#include <ksched/api/taints.h>

#include "plugins/node_affinity/node_affinity.h"
#include "plugins/pod_topology_spread/pod_topology_spread.h"

namespace ksched::plugins {
namespace {

using spread::Constraint;
using spread::PreFilterState;

constexpr StateKey<PreFilterState> kPreFilterKey{PodTopologySpread::kPreFilterStateKey};

// Whether each constraint counts `node` (it has all topology keys and passes the inclusion
// policies); sets `counted[i]`. False when no constraint counts it.
bool countedConstraints(const std::vector<Constraint>& constraints, const api::Pod& pod,
                        const api::Node& node, std::vector<char>& counted) {
  counted.assign(constraints.size(), 0);
  if (!spread::nodeHasAllTopologyKeys(node.metadata.labels, constraints)) return false;
  bool affinityComputed = false;
  bool affinityMatches = true;
  bool taintsComputed = false;
  bool taintsTolerated = true;
  bool any = false;
  for (size_t i = 0; i < constraints.size(); ++i) {
    const Constraint& c = constraints[i];
    if (c.honorNodeAffinity && !affinityComputed) {
      affinityMatches = NodeAffinity::podMatchesNodeSelectorAndAffinityTerms(pod, node);
      affinityComputed = true;
    }
    if (c.honorNodeTaints && !taintsComputed) {
      taintsTolerated = api::findUntoleratedTaint(node.spec.taints, pod.spec.tolerations,
                                                  api::isDoNotScheduleTaint) == nullptr;
      taintsComputed = true;
    }
    if (c.includesNode(affinityMatches, taintsTolerated)) {
      counted[i] = 1;
      any = true;
    }
  }
  return any;
}

}  // namespace

Status PodTopologySpread::preFilter(CycleState& state, const api::Pod& pod,
                                    const NodeInfoLister& nodes, PreFilterResult& /*result*/) {
  std::vector<Constraint> constraints = constraintsFor(pod, api::kDoNotSchedule);
  if (constraints.empty()) return Status::skip();

  const size_t nc = constraints.size();
  auto s = std::make_unique<PreFilterState>();
  s->selfMatchNum.resize(nc);
  for (size_t i = 0; i < nc; ++i) {
    s->selfMatchNum[i] = constraints[i].selector.matches(pod.metadata.labels) ? 1 : 0;
  }

  // Per node and constraint: the matching pods, or -1 when the node does not count.
  const std::vector<const NodeInfo*>& all = nodes.list();
  std::vector<int64_t> counts(all.size() * nc, -1);
  handle_->parallelizer().until(static_cast<int>(all.size()), [&](int n) {
    const NodeInfo& ni = *all[static_cast<size_t>(n)];
    const api::Node* node = ni.node();
    if (node == nullptr) return;
    std::vector<char> counted;
    if (!countedConstraints(constraints, pod, *node, counted)) return;
    for (size_t i = 0; i < nc; ++i) {
      if (counted[i] == 0) continue;
      counts[static_cast<size_t>(n) * nc + i] = spread::countPodsMatchSelector(
          ni.pods(), constraints[i].selector, pod.metadata.namespace_);
    }
  });

  s->tpValueToMatchNum.resize(nc);
  for (size_t n = 0; n < all.size(); ++n) {
    for (size_t i = 0; i < nc; ++i) {
      const int64_t count = counts[n * nc + i];
      if (count < 0) continue;
      const api::Labels& labels = all[n]->node()->metadata.labels;
      const std::string& value = labels.find(constraints[i].topologyKey)->second;
      s->tpValueToMatchNum[i][value] += count;
    }
  }
  s->criticalPaths.resize(nc);
  for (size_t i = 0; i < nc; ++i) {
    for (const auto& [value, num] : s->tpValueToMatchNum[i]) s->criticalPaths[i].update(value, num);
  }
  s->constraints = std::make_shared<const std::vector<Constraint>>(std::move(constraints));
  state.write(kPreFilterKey, std::move(s));
  return {};
}

void PodTopologySpread::updateWithPod(PreFilterState& s, const api::Pod& updated,
                                      const api::Pod& preemptor, const NodeInfo& nodeInfo,
                                      int64_t delta) {
  const api::Node* node = nodeInfo.node();
  if (node == nullptr || updated.metadata.namespace_ != preemptor.metadata.namespace_) return;
  const std::vector<Constraint>& constraints = *s.constraints;
  std::vector<char> counted;
  if (!countedConstraints(constraints, preemptor, *node, counted)) return;
  for (size_t i = 0; i < constraints.size(); ++i) {
    if (counted[i] == 0 || !constraints[i].selector.matches(updated.metadata.labels)) continue;
    const std::string& value = node->metadata.labels.find(constraints[i].topologyKey)->second;
    const int64_t num = (s.tpValueToMatchNum[i][value] += delta);
    s.criticalPaths[i].update(value, num);
  }
}

Status PodTopologySpread::addPod(CycleState& state, const api::Pod& podToSchedule,
                                 const PodInfo& podToAdd, const NodeInfo& nodeInfo) const {
  PreFilterState* s = state.mutableRead(kPreFilterKey);
  if (s == nullptr) {
    return Status::error("reading \"" + std::string(kPreFilterStateKey) +
                         "\" from cycleState: not found");
  }
  updateWithPod(*s, *podToAdd.pod, podToSchedule, nodeInfo, 1);
  return {};
}

Status PodTopologySpread::removePod(CycleState& state, const api::Pod& podToSchedule,
                                    const PodInfo& podToRemove, const NodeInfo& nodeInfo) const {
  PreFilterState* s = state.mutableRead(kPreFilterKey);
  if (s == nullptr) {
    return Status::error("reading \"" + std::string(kPreFilterStateKey) +
                         "\" from cycleState: not found");
  }
  updateWithPod(*s, *podToRemove.pod, podToSchedule, nodeInfo, -1);
  return {};
}

Status PodTopologySpread::filter(const CycleState& state, const api::Pod& /*pod*/,
                                 const NodeInfo& nodeInfo) const {
  const api::Node* node = nodeInfo.node();
  if (node == nullptr) return Status::error("node not found");
  const PreFilterState* s = state.read(kPreFilterKey);
  if (s == nullptr) {
    return Status::error("reading \"" + std::string(kPreFilterStateKey) +
                         "\" from cycleState: not found");
  }
  const std::vector<Constraint>& constraints = *s->constraints;
  for (size_t i = 0; i < constraints.size(); ++i) {
    const Constraint& c = constraints[i];
    auto label = node->metadata.labels.find(c.topologyKey);
    if (label == node->metadata.labels.end()) {
      return Status::unresolvable(std::string(kErrReasonNodeLabelNotMatch));
    }
    const spread::ValueCounts& counts = s->tpValueToMatchNum[i];
    auto it = counts.find(std::string_view(label->second));
    const int64_t matchNum = it == counts.end() ? 0 : it->second;
    const int64_t skew = matchNum + s->selfMatchNum[i] - s->minMatchNum(i);
    if (skew > c.maxSkew) return Status::unschedulable(std::string(kErrReasonConstraintsNotMatch));
  }
  return {};
}

}  // namespace ksched::plugins
