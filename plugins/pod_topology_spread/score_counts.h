// PreScore's per-node counts, kept from one cycle to the next.
//
// Upstream's PreScore walks every node of the snapshot in every cycle: the node's labels, the
// inclusion policies against the incoming pod, and every pod of the node against each
// constraint's selector. Between two cycles only the NodeInfos that changed (a pod bound, a
// node updated) give another result, so ScoreCounts keeps, per slot of the snapshot's list,
// the raw result of that walk for one CountKey and recomputes a slot only when its NodeInfo is
// another object or has another generation. What depends on the cycle's feasible nodes (which
// domains count, the normalizing weights) is computed per cycle from these results, so the
// counts are exactly those of the full walk.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <ksched/api/node.h>
#include <ksched/api/pod.h>
#include <ksched/api/selectors.h>
#include <ksched/api/taints.h>
#include <ksched/node_info.h>

#include "plugins/pod_topology_spread/state.h"

namespace ksched::plugins::spread {

// Everything a node's raw result depends on besides the node: the pod's namespace, each
// constraint's topology key, selector and inclusion policies, whether every topology key is
// required, and the pod's node selector, required node affinity (when a constraint honors
// node affinity) and tolerations (when one honors taints). Two pods with equal keys get the
// same result on every node.
struct CountKey {
  struct Item {
    std::string topologyKey;
    api::Selector selector;
    bool honorNodeAffinity = false;
    bool honorNodeTaints = false;
    friend bool operator==(const Item&, const Item&) = default;
  };
  std::string ns;
  bool requireAllTopologies = false;
  std::vector<Item> constraints;
  api::Labels nodeSelector;
  std::optional<api::NodeSelector> requiredNodeAffinity;
  std::vector<api::Toleration> tolerations;

  [[nodiscard]] static CountKey of(const api::Pod& pod, const std::vector<Constraint>& constraints,
                                   bool requireAllTopologies);
  friend bool operator==(const CountKey&, const CountKey&) = default;
};

// Not thread-safe: the plugin holds it under a lock for the duration of a PreScore.
class ScoreCounts {
 public:
  // The results were last refreshed for `key`.
  [[nodiscard]] bool isFor(const CountKey& key) const { return key_ && *key_ == key; }
  // Brings the results up to date with `lister`'s list for the pod and its constraints:
  // recomputes the slots whose NodeInfo changed (another object, or another generation), every
  // slot when the key or the list's length changed. Only the slots the lister names as changed
  // since the last refresh are looked at when it can tell (listVersion()), every slot
  // otherwise. `constraints` must be those `key` was made from.
  void refresh(CountKey key, const std::vector<Constraint>& constraints, const api::Pod& pod,
               const NodeInfoLister& lister);

  // The slot of `ni` in the list of the last refresh, or nullopt. `guess` is where it likely
  // is (the slot after the last one looked up: a cycle's feasible nodes mostly follow the
  // list); no hashing when it is there.
  [[nodiscard]] std::optional<uint32_t> slotOf(const NodeInfo* ni, size_t guess) const {
    if (guess < infos_.size() && infos_[guess] == ni) return static_cast<uint32_t>(guess);
    const uint32_t* found = slots_.find(ni);
    return found == nullptr ? std::nullopt : std::optional<uint32_t>(*found);
  }
  // The slot holds a NodeInfo with a Node.
  [[nodiscard]] bool hasNode(size_t slot) const { return hasNode_[slot] != 0; }
  // The node exists and, when every topology key is required, has them all.
  [[nodiscard]] bool qualifies(size_t slot) const { return qualifies_[slot] != 0; }
  // Per slot and constraint: the node has the constraint's topology key; its domain (the
  // label's value, "" without the label; not kept for the hostname key); the node's pods that
  // match the constraint (whether or not the constraint admits the node).
  [[nodiscard]] bool hasLabel(size_t slot, size_t i) const { return at(slot, i).hasLabel; }
  [[nodiscard]] int32_t domain(size_t slot, size_t i) const { return at(slot, i).domain; }
  [[nodiscard]] int64_t count(size_t slot, size_t i) const { return at(slot, i).count; }

  [[nodiscard]] size_t domainCount(size_t i) const { return domains_[i].names.size(); }
  [[nodiscard]] const std::string& domainName(size_t i, int32_t d) const {
    return domains_[i].names[static_cast<size_t>(d)];
  }
  // The matching pods on the qualifying nodes of domain `d` that constraint `i` admits.
  [[nodiscard]] int64_t domainSum(size_t i, int32_t d) const {
    return domains_[i].sums[static_cast<size_t>(d)];
  }

 private:
  struct Entry {
    bool hasLabel = false;
    bool admitted = false;
    int32_t domain = -1;
    int64_t count = 0;
  };
  struct Domains {
    std::vector<std::string> names;
    std::vector<int64_t> sums;
    std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>> ids;
  };

  [[nodiscard]] const Entry& at(size_t slot, size_t i) const { return entries_[slot * nc_ + i]; }
  void reset(CountKey key, size_t slots);
  // Adds (`sign` 1) or takes away (-1) the slot's counts from its domains' sums.
  void account(size_t slot, int64_t sign);
  // Recomputes `slot` unless it still holds the NodeInfo (and generation) it was read from.
  void update(size_t slot, const std::vector<Constraint>& constraints, const api::Pod& pod,
              const NodeInfo* ni);
  void compute(size_t slot, const std::vector<Constraint>& constraints, const api::Pod& pod,
               const NodeInfo& ni);
  int32_t intern(size_t i, const std::string& value);

  std::optional<CountKey> key_;
  size_t nc_ = 0;
  std::vector<const NodeInfo*> infos_;  // per slot: the NodeInfo the results were read from
  std::vector<int64_t> generations_;    // and its generation
  std::vector<uint8_t> hasNode_;
  std::vector<uint8_t> qualifies_;
  int64_t listVersion_ = 0;        // the lister's listVersion() at the last refresh
  std::vector<size_t> changed_;    // refresh's buffer
  std::vector<Entry> entries_;     // slot * nc_ + constraint
  std::vector<uint8_t> hostname_;  // per constraint: the hostname key
  std::vector<Domains> domains_;   // per constraint
  NodeInfoMap<uint32_t> slots_;
};

}  // namespace ksched::plugins::spread
