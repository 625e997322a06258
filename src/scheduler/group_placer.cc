// GroupPlacer (group_cycle.h): how the pod-group cycle places a group, a placement and a
// CompositePodGroup's children.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <ksched/helper/node_overlay.h>

#include "scheduler/scheduler_core.h"

namespace ksched::scheduler {
namespace {

// How many feasible placements to find before scoring them: `percentage` of them (the profile's
// percentageOfPlacementsToScore, else the configuration's), or with 0 upstream's adaptive share:
// all of them while the placements hold few nodes in all, 10 % at 5000 nodes, down to 5 %; at
// least one.
size_t feasiblePlacementsToFind(const std::vector<Placement>& placements, int32_t percentage) {
  size_t nodes = 0;
  for (const auto& p : placements) nodes += p.nodes.size();
  const double pct = percentage > 0
                         ? percentage
                         : std::max(5.0, 100.0 - 90.0 * static_cast<double>(nodes) / 5000.0);
  const auto n = static_cast<size_t>(std::ceil(static_cast<double>(placements.size()) * pct / 100));
  return std::max<size_t>(1, n);
}

// A PlacementFeasible answer as the group's status so far: a Wait counts as a rejection until a
// later answer says Success.
Status feasibilityVerdict(const Status& s) {
  if (s.isWait()) return Status::unschedulable(s.message()).withPlugin(s.plugin());
  if (s.isError() && !s.plugin().empty()) {
    return Status::error("failed to evaluate placement feasibility: " + s.message())
        .withPlugin(s.plugin());
  }
  return s;
}

bool feasibilityGoesOn(const Status& s) { return s.ok() || s.isWait(); }

}  // namespace

Status GroupPlacer::run(GroupNode& root) {
  core_.cache_.updateSnapshot(core_.snapshot_);
  Status s = evaluate(root, core_.snapshot_);
  if (s.ok() && placed_.empty()) {
    // At least one pod must be placed for a cycle to succeed.
    s = Status::unschedulable("no pods were schedulable");
    root.status = s;
  }
  return s;
}

Status GroupPlacer::evaluate(GroupNode& node, const NodeInfoLister& nodes) {
  const size_t mark = placed_.size();
  node.evaluated = true;
  Status s = node.composite() || fwk_.hasPlacementGeneratePlugins() ? onPlacements(node, nodes)
                                                                    : placeLeaf(node, nodes);
  fwk_.setSnapshot(&nodes);
  // A group that fails holds nothing: its siblings see the room.
  if (!s.ok()) revertTo(mark);
  node.status = s;
  return s;
}

Status GroupPlacer::placeLeaf(GroupNode& leaf, const NodeInfoLister& nodes) {
  fwk_.setSnapshot(&nodes);
  // A batch begun on other nodes must not hint a node outside this placement: the first pod of
  // each placement runs a full cycle on the placement's nodes, the next batch on those.
  if (&nodes != &core_.snapshot_) core_.algorithm_.placementFailed(fwk_);
  CycleState groupState;
  PlacementProgress progress{.scheduled = 0,
                             .remaining = static_cast<int32_t>(leaf.members.size())};
  Status feasible = fwk_.runPlacementFeasiblePlugins(groupState, leaf.info, progress);
  Status group = feasibilityVerdict(feasible);
  for (size_t i = 0; i < leaf.members.size() && feasibilityGoesOn(feasible); ++i) {
    GroupMember& m = members_[leaf.members[i]];
    m.state = CycleState();
    m.evaluated = true;
    m.node.clear();
    m.plugins.clear();
    const PodPtr pod = m.qpi->podInfo->pod;
    ScheduleResult result;
    FitError fitError;
    Status error;
    const auto outcome = core_.algorithm_.schedulePod(fwk_, m.state, pod, m.cycle, nodes,
                                                      core_.options_.percentageOfNodesToScore,
                                                      result, fitError, error);
    if (outcome == Algorithm::Outcome::kScheduled) {
      m.own =
          core_.assumeAndReserve(fwk_, m.state, *m.qpi->podInfo, result.suggestedHost, m.assumed);
      m.node = result.suggestedHost;
      m.placed = m.own.ok();
      if (!m.placed) {
        if (&nodes == &core_.snapshot_) core_.algorithm_.placementFailed(fwk_);
        if (m.assumed) (void)core_.cache_.forgetPod(pod->metadata.uid);
        m.assumed.reset();
        if (m.own.isRejected() && !m.own.plugin().empty()) m.plugins.insert(m.own.plugin());
      } else {
        ++progress.scheduled;
        placed_.push_back(leaf.members[i]);
        everPlaced_ = true;
        core_.cache_.updateSnapshot(core_.snapshot_);
        rebuildPlacements();
      }
    } else if (outcome == Algorithm::Outcome::kUnschedulable) {
      m.own = Status::unschedulable(fitError.message());
      m.plugins = fitError.diagnosis.unschedulablePlugins;
    } else {
      m.own = error;
    }
    if (m.own.isError()) {
      return Status::error("failed to schedule other pod from a pod group: " + m.own.message());
    }
    --progress.remaining;
    feasible = fwk_.runPlacementFeasiblePlugins(groupState, leaf.info, progress);
    group = feasibilityVerdict(feasible);
  }
  return group;
}

Status GroupPlacer::placeChildren(GroupNode& node, const NodeInfoLister& nodes) {
  CycleState groupState;
  PlacementProgress progress{.scheduled = 0,
                             .remaining = static_cast<int32_t>(node.children.size())};
  fwk_.setSnapshot(&nodes);
  Status feasible = fwk_.runPlacementFeasiblePlugins(groupState, node.info, progress);
  Status group = feasibilityVerdict(feasible);
  for (size_t i = 0; i < node.children.size() && feasibilityGoesOn(feasible); ++i) {
    const Status child = evaluate(node.children[i], nodes);
    if (child.isError()) {
      return Status::error("composite pod group evaluation failed due to child error: " +
                           child.message());
    }
    --progress.remaining;
    if (child.ok()) ++progress.scheduled;
    fwk_.setSnapshot(&nodes);
    feasible = fwk_.runPlacementFeasiblePlugins(groupState, node.info, progress);
    group = feasibilityVerdict(feasible);
  }
  return group;
}

Status GroupPlacer::onPlacements(GroupNode& node, const NodeInfoLister& nodes) {
  // Topology-aware: the group is placed on each placement in turn and taken back; the best
  // feasible placement (PlacementScore) is placed again, for good. A CompositePodGroup is always
  // placed this way: without PlacementGenerate plugins, on one placement of every node.
  fwk_.setSnapshot(&nodes);
  CycleState groupState;
  std::vector<Placement> placements;
  Status group;
  if (fwk_.hasPlacementGeneratePlugins()) {
    group = fwk_.runPlacementGeneratePlugins(groupState, node.info, nodes, placements);
  } else {
    Placement all;
    for (const NodeInfo* n : nodes.list()) all.nodes.push_back(n->name());
    placements.push_back(std::move(all));
  }
  if (!group.ok()) return group;
  if (placements.empty()) return Status::unschedulable("no feasible placements found");
  if (placements.size() == 1) {
    // Nothing to choose: placed once, for good; on `nodes` themselves when the placement holds
    // them all (no topology constraint), not on a copy rebuilt after every pod.
    const size_t mark = placed_.size();
    Status r;
    if (placements[0].nodes.size() == nodes.list().size()) {
      r = placeOn(node, nodes);
    } else {
      helper::NodeOverlay only(core_.snapshot_, placements[0].nodes);
      open_.push_back(&only);
      r = placeOn(node, only);
      open_.pop_back();
    }
    fwk_.setSnapshot(&nodes);
    traceTried(node, placements[0], r, mark);
    if (tracing_ && r.ok()) node.chosen = placements[0].name;
    if (r.ok() || r.isError()) return r;
    return Status::unschedulable(
               fmt::format("0/1 placements are available, first placement status: {}", r.message()))
        .withPlugin(r.plugin());
  }
  std::vector<const Placement*> feasible;
  std::vector<PodGroupAssignments> assignments;
  Status first;
  const size_t wanted = feasiblePlacementsToFind(
      placements,
      fwk_.percentageOfPlacementsToScore().value_or(core_.options_.percentageOfPlacementsToScore));
  for (size_t k = 0; k < placements.size() && feasible.size() < wanted; ++k) {
    helper::NodeOverlay on(core_.snapshot_, placements[k].nodes);
    open_.push_back(&on);
    const size_t mark = placed_.size();
    Status r = placeOn(node, on);
    open_.pop_back();
    traceTried(node, placements[k], r, mark);
    if (k == 0) first = r;
    if (r.isError()) {
      revertTo(mark);
      return r;
    }
    if (r.ok()) {
      PodGroupAssignments a{.placement = &placements[k], .proposed = {}};
      for (size_t i = mark; i < placed_.size(); ++i) {
        const GroupMember& m = members_[placed_[i]];
        a.proposed.emplace_back(m.assumed->pod, m.node);
      }
      feasible.push_back(&placements[k]);
      assignments.push_back(std::move(a));
    }
    revertTo(mark);
    forget(node);
  }
  fwk_.setSnapshot(&nodes);
  if (feasible.empty()) {
    return Status::unschedulable(
               fmt::format("0/{} placements are available, first placement status: {}",
                           placements.size(), first.message()))
        .withPlugin(first.plugin());
  }
  size_t best = 0;
  if (feasible.size() > 1) {
    std::vector<int64_t> totals;
    group = fwk_.runPlacementScorePlugins(groupState, node.info, nodes, assignments, totals);
    if (!group.ok()) return group;
    for (size_t k = 1; k < totals.size(); ++k) {
      if (totals[k] > totals[best]) best = k;
    }
    for (size_t k = 0; tracing_ && k < totals.size(); ++k) {
      for (auto& t : node.tried) {
        if (t.name == feasible[k]->name && t.feasible) t.score = totals[k];
      }
    }
  }
  if (tracing_) node.chosen = feasible[best]->name;
  helper::NodeOverlay chosen(core_.snapshot_, feasible[best]->nodes);
  open_.push_back(&chosen);
  Status r = placeOn(node, chosen);
  open_.pop_back();
  fwk_.setSnapshot(&nodes);
  return r;
}

void GroupPlacer::revertTo(size_t mark) {
  if (placed_.size() <= mark) return;
  while (placed_.size() > mark) {
    GroupMember& m = members_[placed_.back()];
    placed_.pop_back();
    fwk_.runReservePluginsUnreserve(m.state, *m.assumed->pod, m.node);
    (void)core_.cache_.forgetPod(m.assumed->pod->metadata.uid);
    m.placed = false;
    m.assumed.reset();
  }
  core_.cache_.updateSnapshot(core_.snapshot_);
  rebuildPlacements();
}

void GroupPlacer::forget(GroupNode& node) {
  for (size_t i : node.members) {
    members_[i].evaluated = false;
    members_[i].own = Status();
    members_[i].node.clear();
  }
  for (GroupNode& c : node.children) {
    c.evaluated = false;
    c.status = Status();
    c.tried.clear();
    c.chosen.clear();
    forget(c);
  }
}

void GroupPlacer::traceTried(GroupNode& node, const Placement& placement, const Status& r,
                             size_t mark) {
  if (!tracing_) return;
  PodGroupTrace::PlacementTried t{.name = placement.name,
                                  .nodes = placement.nodes.size(),
                                  .feasible = r.ok(),
                                  .message = r.ok() ? "" : r.message(),
                                  .proposed = {},
                                  .score = std::nullopt};
  for (size_t i = mark; i < placed_.size(); ++i) {
    const GroupMember& m = members_[placed_[i]];
    t.proposed.emplace_back(m.qpi->pod().metadata.key(), m.node);
  }
  node.tried.push_back(std::move(t));
}

void GroupPlacer::rebuildPlacements() {
  for (helper::NodeOverlay* o : open_) o->rebuild();
}

}  // namespace ksched::scheduler
