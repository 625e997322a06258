// The domains (values) of one topology key over the snapshot's node list, kept from one cycle
// to the next, so that PreFilter reads a node's labels again only when its Node object changed.
// Reading a label touches the Node, its label map and the key's string, scattered in memory: at
// 5000 nodes that was most of PreFilter's time, repeated every cycle for labels that rarely
// change.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include <ksched/node_info.h>

#include "plugins/pod_topology_spread/state.h"

namespace ksched::plugins::spread {

// Not thread-safe to change; lookup() may run on several threads at once while nothing changes
// the index. An entry holds its Node object, so that the object's address cannot be reused by
// another Node while the entry names it.
class DomainIndex {
 public:
  static constexpr int32_t kNoLabel = -1;  // the node lacks the key
  static constexpr int32_t kUnknown = -2;  // the slot was learned from another Node object

  explicit DomainIndex(std::string key) : key_(std::move(key)) {}
  [[nodiscard]] const std::string& key() const { return key_; }

  // Makes the index cover `nodes` slots (the snapshot list's size). Entries of the slots kept
  // stay; when too many domains of nodes gone have piled up, everything is forgotten.
  void resize(size_t nodes);
  // The domain of `node` at `slot` as learned, or kUnknown.
  [[nodiscard]] int32_t lookup(size_t slot, const api::Node* node) const {
    return slot < nodes_.size() && nodes_[slot].get() == node ? domains_[slot] : kUnknown;
  }
  // Reads the node's label, remembers it for `slot` and returns its domain (or kNoLabel).
  int32_t learn(size_t slot, const NodePtr& node);

  [[nodiscard]] const std::string& name(int32_t domain) const {
    return names_[static_cast<size_t>(domain)];
  }
  [[nodiscard]] size_t domainCount() const { return names_.size(); }

 private:
  std::string key_;
  std::vector<NodePtr> nodes_;  // per slot: the Node object the entry was read from
  std::vector<int32_t> domains_;
  std::vector<std::string> names_;  // per domain: the label's value
  std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>> ids_;
};

}  // namespace ksched::plugins::spread
