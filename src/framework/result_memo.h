// Results kept from cycle to cycle: what the node-local Filter and Score plugins answered for a
// class of pods (pods with the same scheduling inputs, api::sameSchedulingInputs) on a node,
// kept while that node's NodeInfo stays the same. Scheduling thread only, but for filter() and
// the score slots, which the parallel Filter and Score workers use for distinct nodes.
//
// Pods that opportunistic batching cannot serve (a ReplicaSet under default spreading, pods
// that differ from the one before) run a full cycle each, and most of it is the same plugins
// asking the same questions of nodes that did not change: every cycle examines a window of
// the nodes that moves on by its length, so a node comes round again some cycles later,
// usually unchanged. The snapshot names the slots it replaced since a version
// (NodeInfoLister::changedSlotsSince), so the memo forgets exactly those.
//
// Kept are the answers of the plugins whose answers on a node depend only on the pod's
// scheduling inputs and on that node's NodeInfo (the node and the pods on it), nothing
// elsewhere in the cluster: NodeUnschedulable, NodeName, TaintToleration, NodeAffinity,
// NodePorts, NodeDeclaredFeatures, ImageLocality (its image counts travel in the node's
// NodeInfo; the node count changes only with the list), and NodeResourcesFit and
// NodeResourcesBalancedAllocation for pods that ask only for cpu, memory, ephemeral storage
// and hugepages (extended resources may be served by DRA device classes). Each must sign the
// pod (SignPlugin). Every other plugin runs in every cycle as before, in the profile's order:
//   - a node whose kept plugins passed runs the other Filter plugins only;
//   - a node that a kept plugin rejected first runs the other plugins before it, and keeps
//     the first rejection of all (the kept one when they pass);
//   - a node the memo knows nothing of runs every plugin, and its answers are kept;
//   - a node with pods nominated to it always runs every plugin (they are added first).
// Scores are kept raw, per plugin; NormalizeScore and the weights run in every cycle. So the
// cycle finds the same feasible nodes with the same statuses and scores, in the same order,
// as one that runs every plugin (tests/unit/sim/result_memo_exact_test.cc).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <ksched/cycle_state.h>
#include <ksched/node_info.h>
#include <ksched/plugin.h>
#include <ksched/status.h>

namespace ksched::framework {

class Framework;

class ResultMemo {
 public:
  // Classes kept at once (the least recently used is dropped), and nodes' results in all
  // classes: a class's results take about 40 bytes per node (five kept scores), so at most
  // 8 MB (16 classes up to 12 500 nodes, 4 at 50 000).
  static constexpr size_t kMaxClasses = 16;
  static constexpr size_t kMaxSlots = 200'000;

  explicit ResultMemo(const Framework& fwk);
  ~ResultMemo();
  ResultMemo(const ResultMemo&) = delete;
  ResultMemo& operator=(const ResultMemo&) = delete;

  // Starts the cycle of `pod`, after its PreFilter (`state` says which Filter plugins it
  // skips), over every node of `snapshot`'s list() (no PreFilterResult narrowed them). False
  // when nothing is kept for it: the cycle runs every plugin as before, and filter() and the
  // score slots must not be used until the next begin() that returns true. A class is kept
  // from the second pod of it on.
  bool begin(const api::Pod& pod, const CycleState& state, const NodeInfoLister& snapshot);

  // Whether filter() answers for `slot` without running a plugin (no Filter plugin runs live
  // for this pod, and the memo knows the node's answer).
  [[nodiscard]] bool answersAlone(size_t slot) const;
  // Filter of the node in `slot` of list() for this cycle's pod (no pods nominated to it).
  [[nodiscard]] Status filter(const CycleState& state, const api::Pod& pod, const NodeInfo& node,
                              size_t slot) const;

  // Score: `activeKept` has bit k for the k-th Score plugin of the profile when it runs in this
  // cycle and its scores are kept (keptScores() & the active ones); forgets the kept scores when
  // it differs from the last cycle's.
  [[nodiscard]] uint64_t keptScores() const noexcept { return keptScores_; }
  void startScoring(uint64_t activeKept);
  // The raw scores of `slot` (one per kept Score plugin, in the profile's order), and whether
  // they are filled. 32 bits wide (rows of 16 classes over thousands of nodes are read in every
  // cycle): a node whose raw score does not fit is left unscored (keepable()).
  [[nodiscard]] int32_t* rawScores(size_t slot) const;
  [[nodiscard]] static bool keepable(int64_t raw) noexcept {
    return raw >= INT32_MIN && raw <= INT32_MAX;
  }
  [[nodiscard]] bool scored(size_t slot) const;
  void setScored(size_t slot) const;

  // Off: begin() always returns false (tests compare the placements with and without).
  static void setEnabled(bool on);
  [[nodiscard]] static bool enabled();
  // Cycles in this process that the memo served (begin() returned true), for tests.
  [[nodiscard]] static int64_t cyclesServed();

 private:
  struct Class;
  void sync(Class& c, const NodeInfoLister& snapshot, int64_t version);

  // The plugins of one extension point that may be kept: by position, the plugin when it is
  // node-local and signs pods, else null; `resources` has the bits of those that count
  // resources (kept for pods of plain resources only).
  struct Candidates {
    std::vector<const SignPlugin*> signers;
    uint64_t resources = 0;
    // The bits of the plugins kept for `pod`, less `skipped`.
    [[nodiscard]] uint64_t kept(const api::Pod& pod, bool plain, uint64_t skipped) const;
  };
  static Candidates candidates(const std::vector<const Plugin*>& plugins);

  const Framework& fwk_;
  bool usable_ = false;  // at most 64 Filter and Score plugins, some of them node-local
  Candidates filters_;
  Candidates scorers_;
  std::vector<std::unique_ptr<Class>> classes_;  // the least recently used is dropped
  uint64_t uses_ = 0;
  std::vector<size_t> changed_;  // scratch for changedSlotsSince

  // This cycle's.
  Class* cls_ = nullptr;
  uint64_t keptFilters_ = 0;
  uint64_t liveFilters_ = 0;
  uint64_t keptScores_ = 0;
};

}  // namespace ksched::framework
