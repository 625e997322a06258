#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "plugins/pod_topology_spread/domains.h"
#include "plugins/pod_topology_spread/inclusion.h"
#include "plugins/pod_topology_spread/pod_topology_spread.h"

namespace ksched::plugins {
namespace {

using spread::Constraint;
using spread::DomainIndex;
using spread::forEachAdmitting;
using spread::PreFilterState;

constexpr StateKey<PreFilterState> kPreFilterKey{PodTopologySpread::kPreFilterStateKey};

// For each constraint that counts `node` (the node has every constraint's topology key and
// passes the constraint's inclusion policies), the node's value of its topology key; nullptr
// for the others. False when no constraint counts the node.
bool countedValues(const std::vector<Constraint>& constraints, const api::Pod& pod,
                   const api::Node& node, const std::string** values) {
  const api::Labels& labels = node.metadata.labels;
  std::vector<const std::string*> found(constraints.size());
  for (size_t i = 0; i < constraints.size(); ++i) {
    values[i] = nullptr;
    auto label = labels.find(constraints[i].topologyKey);
    if (label == labels.end()) {
      std::fill(values, values + constraints.size(), nullptr);
      return false;
    }
    found[i] = &label->second;
  }
  bool any = false;
  forEachAdmitting(constraints, pod, node, [&](size_t i) {
    values[i] = found[i];
    any = true;
  });
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

  // The constraints' domain indexes: the plugin's own, kept from cycle to cycle, unless another
  // thread (an explain request) is using them; fresh ones for this call then.
  const std::vector<const NodeInfo*>& all = nodes.list();
  std::unique_lock lock(domainsMu_, std::try_to_lock);
  std::vector<std::unique_ptr<spread::DomainIndex>> ownIndexes;
  std::vector<spread::DomainIndex*> index(nc);
  if (lock.owns_lock() && domains_.size() + nc > kMaxDomainIndexes) domains_.clear();
  for (size_t i = 0; i < nc; ++i) {
    const std::string& key = constraints[i].topologyKey;
    if (lock.owns_lock()) {
      auto it = std::find_if(domains_.begin(), domains_.end(),
                             [&](const auto& d) { return d->key() == key; });
      if (it == domains_.end())
        it = domains_.insert(domains_.end(), std::make_unique<DomainIndex>(key));
      index[i] = it->get();
    } else {
      index[i] = ownIndexes.emplace_back(std::make_unique<DomainIndex>(key)).get();
    }
    index[i]->resize(all.size());
  }

  // Per node and constraint: the node's domain (kUnknown / kUnknownWithoutLabel until learned
  // below), and the matching pods there, or -1 when the constraint does not count the node.
  constexpr int32_t kUnknownWithoutLabel = -3;
  std::vector<int32_t> domains(all.size() * nc, DomainIndex::kNoLabel);
  std::vector<int64_t> counts(all.size() * nc, -1);
  std::atomic<bool> anyUnknown{false};
  handle_->parallelizer().until(static_cast<int>(all.size()), [&](int n) {
    const NodeInfo& ni = *all[static_cast<size_t>(n)];
    const api::Node* node = ni.node();
    if (node == nullptr) return;
    const size_t at = static_cast<size_t>(n) * nc;
    bool hasAllKeys = true;
    for (size_t i = 0; i < nc; ++i) {
      int32_t d = index[i]->lookup(static_cast<size_t>(n), node);
      if (d == DomainIndex::kUnknown) {
        anyUnknown.store(true, std::memory_order_relaxed);
        if (!node->metadata.labels.contains(constraints[i].topologyKey)) d = kUnknownWithoutLabel;
      }
      domains[at + i] = d;
      hasAllKeys = hasAllKeys && d != DomainIndex::kNoLabel && d != kUnknownWithoutLabel;
    }
    if (!hasAllKeys) return;
    forEachAdmitting(constraints, pod, *node, [&](size_t i) {
      counts[at + i] = spread::countPodsMatchSelector(ni.pods(), constraints[i].selector,
                                                      pod.metadata.namespace_);
    });
  });
  if (anyUnknown.load()) {
    for (size_t n = 0; n < all.size(); ++n) {
      for (size_t i = 0; i < nc; ++i) {
        int32_t& d = domains[n * nc + i];
        if (d == DomainIndex::kUnknown || d == kUnknownWithoutLabel) {
          d = index[i]->learn(n, all[n]->nodePtr());
        }
      }
    }
  }

  s->tpValueToMatchNum.resize(nc);
  std::vector<int64_t> perDomain;
  for (size_t i = 0; i < nc; ++i) {
    perDomain.assign(index[i]->domainCount(), -1);  // -1: no node of the domain counts
    for (size_t at = i; at < counts.size(); at += nc) {
      if (counts[at] < 0) continue;
      int64_t& sum = perDomain[static_cast<size_t>(domains[at])];
      sum = std::max<int64_t>(sum, 0) + counts[at];
    }
    for (size_t d = 0; d < perDomain.size(); ++d) {
      if (perDomain[d] >= 0) {
        s->tpValueToMatchNum[i].emplace(index[i]->name(static_cast<int32_t>(d)), perDomain[d]);
      }
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
  std::vector<const std::string*> values(constraints.size());
  if (!countedValues(constraints, preemptor, *node, values.data())) return;
  for (size_t i = 0; i < constraints.size(); ++i) {
    if (values[i] == nullptr || !constraints[i].selector.matches(updated.metadata.labels)) continue;
    const int64_t num = (s.tpValueToMatchNum[i][*values[i]] += delta);
    s.criticalPaths[i].update(*values[i], num);
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
