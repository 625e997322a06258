#include "plugins/pod_topology_spread/domains.h"

#include <ksched/api/node.h>

namespace ksched::plugins::spread {

void DomainIndex::resize(size_t nodes) {
  // Domains are never removed one by one (hostnames of deleted nodes, say); start over once
  // they clearly outnumber the nodes.
  if (names_.size() > 2 * nodes + 64) {
    nodes_.clear();
    domains_.clear();
    names_.clear();
    ids_.clear();
  }
  nodes_.resize(nodes);
  domains_.resize(nodes, kUnknown);
}

int32_t DomainIndex::learn(size_t slot, const NodePtr& node) {
  int32_t domain = kNoLabel;
  const api::Labels& labels = node->metadata.labels;
  if (auto label = labels.find(key_); label != labels.end()) {
    auto [it, added] = ids_.try_emplace(label->second, static_cast<int32_t>(names_.size()));
    if (added) names_.push_back(label->second);
    domain = it->second;
  }
  nodes_[slot] = node;
  domains_[slot] = domain;
  return domain;
}

}  // namespace ksched::plugins::spread
