// Snapshot: the immutable view of the cluster that one scheduling cycle works on.
//
// Ownership: the snapshot shares its NodeInfos as `std::shared_ptr<const NodeInfo>`; the raw
// pointers in list() and get() stay valid until the next Cache::updateSnapshot (or
// destruction). A NodeInfo is never modified after it entered a snapshot: an update replaces
// the pointer, so a caller that kept a shared pointer (getShared) still sees the old copy.
//
// Thread-safety: none. The scheduling thread refreshes it with Cache::updateSnapshot between
// cycles; during a cycle it is only read (concurrent const reads are fine).
//
// Contents: every node the cache knows with a Node object (NodeInfos that only carry pods of
// an unknown or deleted node are left out), in the zone-interleaved order of NodeTree.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <ksched/node_info.h>

namespace ksched::cache {

class Cache;

// Transparent hash so unordered maps keyed by std::string accept std::string_view lookups.
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

class Snapshot final : public NodeInfoLister {
 public:
  Snapshot() = default;

  // Builds a snapshot directly: one NodeInfo per node, each pod added to the NodeInfo of its
  // spec.nodeName (pods of other nodes or without a node are dropped), image numNodes counted
  // across the given nodes, the pods' requests counted as `gates` say. For tests of plugins.
  static Snapshot fromForTest(std::vector<PodPtr> pods, std::vector<NodePtr> nodes,
                              const features::Gates& gates = {});

  [[nodiscard]] const std::vector<const NodeInfo*>& list() const override { return list_; }
  [[nodiscard]] const std::vector<const NodeInfo*>& havePodsWithAffinityList() const override {
    return affinityList_;
  }
  [[nodiscard]] const std::vector<const NodeInfo*>& havePodsWithRequiredAntiAffinityList()
      const override {
    return antiAffinityList_;
  }
  [[nodiscard]] const NodeInfo* get(std::string_view nodeName) const override;
  // Looks the key up in the set of PVCs referenced by pods on the snapshot's nodes.
  [[nodiscard]] bool isPVCUsedByPods(std::string_view key) const override {
    return usedPVCs_.contains(key);
  }
  // The shared copy, to keep a NodeInfo beyond the cycle; nullptr when unknown.
  [[nodiscard]] std::shared_ptr<const NodeInfo> getShared(std::string_view nodeName) const;

  // Changes of list() since an earlier version: a log of the slots replaced by the updates
  // since the list was last rebuilt, at most kMaxChangeLog entries (older ones are dropped
  // and their versions answered false).
  [[nodiscard]] int64_t listVersion() const override { return version_; }
  [[nodiscard]] bool changedSlotsSince(int64_t since, std::vector<size_t>& slots) const override;

  // The highest NodeInfo generation this snapshot has caught up with.
  [[nodiscard]] int64_t generation() const noexcept { return generation_; }
  [[nodiscard]] size_t numNodes() const noexcept { return list_.size(); }

 private:
  friend class Cache;

  static constexpr size_t kNoIndex = static_cast<size_t>(-1);

  struct Entry {
    std::shared_ptr<const NodeInfo> info;
    // Positions in the three lists, to swap in a new copy without rebuilding them.
    size_t listIndex = kNoIndex;
    size_t affinityIndex = kNoIndex;
    size_t antiAffinityIndex = kNoIndex;
  };

  // Replaces (or inserts) the entry's NodeInfo and patches the lists' pointers. Returns true
  // when the name is new.
  bool put(std::shared_ptr<const NodeInfo> info);
  // Rebuilds list_ (when `order` is given, in that order; names not in the map are skipped)
  // and, always, the two affinity lists in list_'s order.
  void rebuildLists(const std::vector<std::string>* order);
  // Rebuilds usedPVCs_ from the pvcRefCounts of every NodeInfo in the snapshot.
  void rebuildUsedPVCs();
  // Ends an update: a new list version when the list was rebuilt or a slot replaced since the
  // last call, and the replaced slots in the change log.
  void commitListChanges();

  static constexpr size_t kMaxChangeLog = 8192;
  struct Change {
    int64_t version;
    size_t slot;
  };

  std::unordered_map<std::string, Entry, StringHash, std::equal_to<>> nodes_;
  std::vector<const NodeInfo*> list_;
  std::vector<const NodeInfo*> affinityList_;
  std::vector<const NodeInfo*> antiAffinityList_;
  // "<namespace>/<claimName>" of every PVC a pod on one of the nodes references.
  std::unordered_set<std::string, StringHash, std::equal_to<>> usedPVCs_;
  int64_t generation_ = 0;
  int64_t treeGeneration_ = -1;  // the cache's NodeTree stamp list_ was built from
  // listVersion(); the version the change log starts after (versions from nextGeneration()).
  int64_t version_ = 0;
  int64_t logStart_ = 0;
  std::vector<Change> changeLog_;     // by version
  std::vector<size_t> pendingSlots_;  // slots put since the last commitListChanges()
  bool listRebuilt_ = false;          // rebuildLists(order) since the last commit
};

}  // namespace ksched::cache
