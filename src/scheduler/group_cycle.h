// The pod-group cycle's pieces (GenericWorkload): the pods it places, the tree of groups they
// belong to, and GroupPlacer, which places them as upstream's pod-group algorithm does
// (algorithm_podgroup.go):
//   - a PodGroup (a leaf) places its queued pods in order, asking the PlacementFeasible plugins
//     before the first and after each, and with PlacementGenerate plugins does so once per
//     placement (one rack, one zone), keeps the feasible ones and places it for good on the
//     best (PlacementScore);
//   - a CompositePodGroup (CompositePodGroup gate, KEP-6012) is always placed through
//     placements: on each, its child groups are placed in turn (recursively, each within the
//     placement), with PlacementFeasible counting child groups placed (minGroupCount);
//   - a group that fails is taken back at once, with everything below it, so its siblings see
//     the room it held.
// A member placed is assumed in the cache and reserved; the snapshot (and the placements being
// tried over it) is brought up to date before the next.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <ksched/helper/node_overlay.h>
#include <ksched/plugin.h>
#include <ksched/pod_group_plugin.h>

#include "scheduler/pod_group_trace.h"

namespace ksched::framework {
class Framework;
}

namespace ksched::scheduler {

class SchedulerCore;

// One pod of the cycle.
struct GroupMember {
  std::unique_ptr<QueuedPodInfo> qpi;
  CycleState state;
  int64_t cycle = 0;
  std::string node;
  PodInfoPtr assumed;
  bool evaluated = false;
  bool placed = false;
  Status own;  // why it was not placed (evaluated, not placed)
  std::set<std::string, std::less<>> plugins;
};

// One group of the cycle's tree: a PodGroup with the indices of its members in the cycle, or a
// CompositePodGroup with its children. `status`: how its evaluation ended.
struct GroupNode {
  PodGroupInfo info;
  std::vector<size_t> members;
  std::vector<GroupNode> children;
  Status status;
  bool evaluated = false;
  // Traced (Options::onPodGroupCycle): the placements its last evaluation tried, the one chosen.
  std::vector<PodGroupTrace::PlacementTried> tried;
  std::string chosen;

  [[nodiscard]] bool composite() const noexcept { return info.composite != nullptr; }
};

class GroupPlacer {
 public:
  // `tracing`: each group records the placements it tried (GroupNode::tried).
  GroupPlacer(SchedulerCore& core, framework::Framework& fwk, std::vector<GroupMember>& members,
              bool tracing)
      : core_(core), fwk_(fwk), members_(members), tracing_(tracing) {}

  // Places the tree on the cycle's snapshot: afterwards the members placed are assumed and
  // reserved (only those of groups that, with all above them, succeeded) and every group
  // evaluated has its status. Returns the root's status; Success only with a pod placed.
  Status run(GroupNode& root);
  // Whether any member was placed at some point (a batch begun meanwhile is stale).
  [[nodiscard]] bool everPlaced() const noexcept { return everPlaced_; }
  // Takes back the members still placed, newest first.
  void revertAll() { revertTo(0); }

 private:
  Status evaluate(GroupNode& node, const NodeInfoLister& nodes);
  // The leaf's queued pods placed in turn on `nodes`.
  Status placeLeaf(GroupNode& leaf, const NodeInfoLister& nodes);
  // The composite's children placed in turn on `nodes`.
  Status placeChildren(GroupNode& node, const NodeInfoLister& nodes);
  // The group placed on each placement of `nodes` and taken back; then on the best, for good.
  Status onPlacements(GroupNode& node, const NodeInfoLister& nodes);
  Status placeOn(GroupNode& node, const NodeInfoLister& nodes) {
    return node.composite() ? placeChildren(node, nodes) : placeLeaf(node, nodes);
  }
  // Takes back the members placed after the first `mark`, newest first.
  void revertTo(size_t mark);
  // How the groups and pods below `node` fared is forgotten (a placement tried).
  void forget(GroupNode& node);
  // After the snapshot changed: the placements being tried see it.
  void rebuildPlacements();

  SchedulerCore& core_;
  framework::Framework& fwk_;
  std::vector<GroupMember>& members_;
  std::vector<size_t> placed_;              // members placed, in order
  std::vector<helper::NodeOverlay*> open_;  // placements being tried or placed on
  // The placement `k` of `node` tried: what it held (members placed after `mark`), traced.
  void traceTried(GroupNode& node, const Placement& placement, const Status& r, size_t mark);

  bool everPlaced_ = false;
  const bool tracing_;
};

}  // namespace ksched::scheduler
