#include "plugins/pod_topology_spread/score_counts.h"

#include <ksched/helper/node_affinity.h>

#include "plugins/pod_topology_spread/inclusion.h"

namespace ksched::plugins::spread {

CountKey CountKey::of(const api::Pod& pod, const std::vector<Constraint>& constraints,
                      bool requireAllTopologies) {
  CountKey key;
  key.ns = pod.metadata.namespace_;
  key.requireAllTopologies = requireAllTopologies;
  bool affinity = false;
  bool taints = false;
  for (const Constraint& c : constraints) {
    key.constraints.push_back({c.topologyKey, c.selector, c.honorNodeAffinity, c.honorNodeTaints});
    affinity = affinity || c.honorNodeAffinity;
    taints = taints || c.honorNodeTaints;
  }
  if (affinity) {
    key.nodeSelector = pod.spec.nodeSelector;
    if (const api::NodeSelector* required = helper::requiredNodeAffinity(pod)) {
      key.requiredNodeAffinity = *required;
    }
  }
  if (taints) key.tolerations = pod.spec.tolerations;
  return key;
}

void ScoreCounts::reset(CountKey key, size_t slots) {
  nc_ = key.constraints.size();
  hostname_.assign(nc_, 0);
  for (size_t i = 0; i < nc_; ++i) {
    hostname_[i] = key.constraints[i].topologyKey == api::kLabelHostname ? 1 : 0;
  }
  key_ = std::move(key);
  infos_.assign(slots, nullptr);
  generations_.assign(slots, 0);
  hasNode_.assign(slots, 0);
  qualifies_.assign(slots, 0);
  listVersion_ = 0;
  entries_.assign(slots * nc_, Entry{});
  domains_.assign(nc_, Domains{});
  slots_.clear();
  slots_.reserve(slots);
}

void ScoreCounts::refresh(CountKey key, const std::vector<Constraint>& constraints,
                          const api::Pod& pod, const NodeInfoLister& lister) {
  const std::vector<const NodeInfo*>& all = lister.list();
  bool tooManyDomains = false;
  for (const Domains& d : domains_) {
    tooManyDomains = tooManyDomains || d.names.size() > 2 * all.size() + 64;
  }
  const int64_t version = lister.listVersion();
  changed_.clear();
  if (!key_ || *key_ != key || infos_.size() != all.size() || tooManyDomains) {
    reset(std::move(key), all.size());
  } else if (version != 0 && listVersion_ != 0 &&
             lister.changedSlotsSince(listVersion_, changed_)) {
    for (size_t n : changed_) {
      if (n < all.size()) update(n, constraints, pod, all[n]);
    }
    listVersion_ = version;
    return;
  }
  for (size_t n = 0; n < all.size(); ++n) update(n, constraints, pod, all[n]);
  listVersion_ = version;
}

void ScoreCounts::update(size_t slot, const std::vector<Constraint>& constraints,
                         const api::Pod& pod, const NodeInfo* ni) {
  const int64_t generation = ni->generation();
  if (infos_[slot] == ni && generations_[slot] == generation && generation != 0) return;
  if (infos_[slot] != nullptr) {
    account(slot, -1);
    slots_.eraseIf(infos_[slot], static_cast<uint32_t>(slot));
  }
  compute(slot, constraints, pod, *ni);
  account(slot, 1);
  infos_[slot] = ni;
  generations_[slot] = generation;
  slots_.put(ni, static_cast<uint32_t>(slot));
}

void ScoreCounts::account(size_t slot, int64_t sign) {
  if (qualifies_[slot] == 0) return;
  for (size_t i = 0; i < nc_; ++i) {
    const Entry& e = entries_[slot * nc_ + i];
    if (hostname_[i] != 0 || !e.admitted || e.count == 0) continue;
    domains_[i].sums[static_cast<size_t>(e.domain)] += sign * e.count;
  }
}

void ScoreCounts::compute(size_t slot, const std::vector<Constraint>& constraints,
                          const api::Pod& pod, const NodeInfo& ni) {
  Entry* entries = &entries_[slot * nc_];
  for (size_t i = 0; i < nc_; ++i) entries[i] = Entry{};
  qualifies_[slot] = 0;
  hasNode_[slot] = 0;
  const api::Node* node = ni.node();
  if (node == nullptr) return;
  hasNode_[slot] = 1;
  const api::Labels& labels = node->metadata.labels;
  bool hasAll = true;
  for (size_t i = 0; i < nc_; ++i) {
    const Constraint& c = constraints[i];
    auto label = labels.find(c.topologyKey);
    entries[i].hasLabel = label != labels.end();
    hasAll = hasAll && entries[i].hasLabel;
    if (hostname_[i] == 0) {
      static const std::string kNone;
      entries[i].domain = intern(i, entries[i].hasLabel ? label->second : kNone);
    }
    entries[i].count = countPodsMatchSelector(ni.pods(), c.selector, key_->ns);
  }
  if (key_->requireAllTopologies && !hasAll) return;
  qualifies_[slot] = 1;
  forEachAdmitting(constraints, pod, *node, [&](size_t i) { entries[i].admitted = true; });
}

int32_t ScoreCounts::intern(size_t i, const std::string& value) {
  Domains& d = domains_[i];
  auto [it, added] = d.ids.try_emplace(value, static_cast<int32_t>(d.names.size()));
  if (added) {
    d.names.push_back(value);
    d.sums.push_back(0);
  }
  return it->second;
}

}  // namespace ksched::plugins::spread
