// The pod-group cycle (GenericWorkload, KEP-4671): the pods of one PodGroup are placed together,
// or none of them is. Upstream's rules (schedule_one_podgroup.go):
//   - the members are taken out of the queue together, checked for one scheduler, one priority
//     (the PodGroup's) and one preemption policy, and ordered by priority, then the time they
//     came to the queue;
//   - each is placed with PreFilter, Filter and Score on the snapshot, assumed and reserved, so
//     the next sees it; single-pod PostFilter (preemption) does not run;
//   - the PlacementFeasible plugins (GangScheduling: minCount) are asked before the first pod
//     and after each; a rejection stops the cycle, a Wait lets it go on;
//   - a group whose last answer is Success binds every pod placed (the others fail on their
//     own); otherwise every placed pod is taken back and every pod fails with the group's
//     message (or its own, when Filter rejected it);
//   - the PodGroup's PodGroupInitiallyScheduled condition says how it went, and is never turned
//     back once True.
// Unlike upstream, a member is assumed in the cache (not the snapshot alone) when placed, and the
// snapshot is brought up to date before the next: the scheduling thread is the only one that
// assumes, so the difference is only that changes of other nodes meanwhile are seen too.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <ksched/api/decode.h>
#include <ksched/api/pod_group.h>
#include <ksched/api/rfc3339.h>
#include <ksched/helper/node_overlay.h>

#include "scheduler/scheduler_core.h"

namespace ksched::scheduler {
namespace {

int32_t groupPodPriority(const api::Pod& p) { return p.spec.priority.value_or(0); }

std::string groupPodPreemptionPolicy(const api::Pod& p) {
  return p.spec.preemptionPolicy.value_or(std::string(api::kPreemptLowerPriority));
}

const api::GroupSpecCommon& groupSpec(const PodGroupInfo& g) {
  return g.composite ? static_cast<const api::GroupSpecCommon&>(g.composite->spec)
                     : g.podGroup->spec;
}

// The groups of the tree, root first.
void treeGroups(const GroupNode& node, std::vector<const GroupNode*>& out) {
  out.push_back(&node);
  for (const GroupNode& c : node.children) treeGroups(c, out);
}

// Upstream validatePodGroup's messages: "" when the members may be placed together.
std::string validateGroup(const GroupNode& root, const std::vector<GroupMember>& members,
                          bool groupPolicy) {
  const api::Pod& first = members.front().qpi->pod();
  const std::string key = api::groupKey(root.info.ns, root.info.name);
  const api::GroupSpecCommon& rootSpec = groupSpec(root.info);
  const int32_t rootPriority = rootSpec.priority.value_or(0);
  const std::string rootPolicy =
      rootSpec.preemptionPolicy.value_or(std::string(api::kPreemptLowerPriority));
  std::vector<const GroupNode*> groups;
  treeGroups(root, groups);
  for (const GroupNode* g : groups) {
    const api::GroupSpecCommon& spec = groupSpec(g->info);
    const std::string gkey = api::groupKey(g->info.ns, g->info.name);
    if (spec.priority.value_or(0) != rootPriority) {
      return fmt::format(
          "all pod groups in a hierarchy should have the same priority as the root pod group's "
          "priority, got {} ({:?}) and {} ({:?})",
          spec.priority.value_or(0), gkey, rootPriority, key);
    }
    const std::string policy =
        spec.preemptionPolicy.value_or(std::string(api::kPreemptLowerPriority));
    if (groupPolicy && policy != rootPolicy) {
      return fmt::format(
          "all pod groups in a hierarchy should have the same preemption policy as the root pod "
          "group's preemption policy, got {} ({:?}) and {} ({:?})",
          policy, gkey, rootPolicy, key);
    }
  }
  for (const GroupMember& m : members) {
    const api::Pod& p = m.qpi->pod();
    if (p.spec.schedulerName != first.spec.schedulerName) {
      return fmt::format(
          "all pods in a pod group hierarchy should have the same .spec.schedulerName set, got: "
          "{:?} ({:?}) and {:?} ({:?})",
          p.spec.schedulerName, p.metadata.name, first.spec.schedulerName, first.metadata.name);
    }
    if (groupPodPriority(p) != rootPriority) {
      return fmt::format(
          "all pods in a pod group hierarchy should have the same priority as the root pod "
          "group's priority, got {} ({:?}) and {} ({:?})",
          groupPodPriority(p), p.metadata.name, rootPriority, key);
    }
    if (groupPolicy && groupPodPreemptionPolicy(p) != rootPolicy) {
      return fmt::format(
          "all pods in a pod group hierarchy should have the same preemption policy as the root "
          "pod group's preemption policy, got {} ({:?}) and {} ({:?})",
          groupPodPreemptionPolicy(p), p.metadata.name, rootPolicy, key);
    }
    if (!groupPolicy && groupPodPreemptionPolicy(p) != groupPodPreemptionPolicy(first)) {
      return fmt::format(
          "all pods in a pod group hierarchy should have the same preemption policy, got {} "
          "({:?}) and {} ({:?})",
          groupPodPreemptionPolicy(p), p.metadata.name, groupPodPreemptionPolicy(first),
          first.metadata.name);
    }
  }
  return "";
}

// Hands the members to their leaves (in order: priority, then the time they came to the
// queue) and gives each group its pods; the members end up in the tree's order.
void distributeMembers(GroupNode& node, std::vector<std::unique_ptr<QueuedPodInfo>>& queued,
                       std::vector<GroupMember>& members, int64_t cycle) {
  node.info.pods.clear();
  if (!node.composite()) {
    for (auto& q : queued) {
      if (q && *q->pod().spec.podGroupName() == node.info.name) {
        GroupMember m;
        m.cycle = cycle + static_cast<int64_t>(members.size());
        node.info.pods.push_back(q->podInfo->pod);
        m.qpi = std::move(q);
        node.members.push_back(members.size());
        members.push_back(std::move(m));
      }
    }
    return;
  }
  node.info.children.clear();
  for (GroupNode& c : node.children) {
    distributeMembers(c, queued, members, cycle);
    node.info.pods.insert(node.info.pods.end(), c.info.pods.begin(), c.info.pods.end());
    node.info.children.push_back(c.info);
  }
}

// Upstream: a group that failed makes every group below it that did not fail on its own fail
// with its status (an error, every group below).
void inheritFailure(GroupNode& node, const Status* above) {
  if (above != nullptr && (above->isError() || node.status.ok() || !node.evaluated)) {
    node.status = *above;
    node.evaluated = true;
  }
  const Status* next = node.status.ok() ? nullptr : &node.status;
  for (GroupNode& c : node.children) inheritFailure(c, next);
}

// What a leaf's cycle did, for Options::onPodGroupCycle; its members are filled as they are
// handed on.
PodGroupTrace traceOf(const GroupNode& leaf) {
  PodGroupTrace t{.ns = leaf.info.ns, .name = leaf.info.name};
  if (leaf.info.podGroup) {
    const api::PodGroupSpec& spec = leaf.info.podGroup->spec;
    t.gang = spec.schedulingPolicy.gang();
    t.minCount = spec.schedulingPolicy.minCount();
    if (!spec.topologyKeys.empty()) t.topologyKey = spec.topologyKeys.front();
  }
  t.placements = leaf.tried;
  t.chosen = leaf.chosen;
  t.scheduled = leaf.status.ok();
  if (!t.scheduled) t.message = leaf.status.message();
  return t;
}

void leavesOf(GroupNode& node, std::vector<GroupNode*>& out) {
  if (!node.composite()) out.push_back(&node);
  for (GroupNode& c : node.children) leavesOf(c, out);
}

}  // namespace

void SchedulerCore::schedulePodGroup(framework::Framework& fwk,
                                     std::unique_ptr<QueuedPodInfo> first, int64_t cycle) {
  const auto start = std::chrono::steady_clock::now();
  const std::string ns = first->pod().metadata.namespace_;
  const std::string name = *first->pod().spec.podGroupName();
  GroupNode root;
  std::string invalid = groupTree(ns, name, root);
  std::set<std::string, std::less<>> scope{name};
  if (invalid.empty()) {
    std::vector<GroupNode*> leaves;
    leavesOf(root, leaves);
    for (const GroupNode* l : leaves) scope.insert(l->info.name);
  }
  std::vector<std::unique_ptr<QueuedPodInfo>> queued = queue_->popGroupMembers(ns, scope);
  queued.push_back(std::move(first));
  // Pods deleted, bound or assumed meanwhile are not attempted (upstream
  // skipPodGroupPodSchedule).
  std::erase_if(queued, [this](const std::unique_ptr<QueuedPodInfo>& q) {
    const api::Pod& p = q->pod();
    if (!p.metadata.deletionTimestamp && !assigned(p) && !cache_.isAssumed(p.metadata.uid)) {
      return false;
    }
    queue_->done(p.metadata.uid);
    return true;
  });
  if (queued.empty()) return;
  std::stable_sort(queued.begin(), queued.end(), [](const auto& a, const auto& b) {
    if (groupPodPriority(a->pod()) != groupPodPriority(b->pod())) {
      return groupPodPriority(a->pod()) > groupPodPriority(b->pod());
    }
    // Then the order they came to the queue (members tried together before keep their order:
    // they were handed back in it).
    if (a->timestamp != b->timestamp) return a->timestamp < b->timestamp;
    return a->pod().metadata.name < b->pod().metadata.name;
  });
  attempts_.fetch_add(queued.size());
  spdlog::debug("attempting to schedule pod group {}/{} ({} pods)", ns, root.info.name,
                queued.size());

  std::vector<GroupMember> members;
  if (invalid.empty()) distributeMembers(root, queued, members, cycle);
  for (auto& q : queued) {
    if (!q) continue;
    // A pod of a group the tree does not hold (the tree changed meanwhile): tried next time.
    GroupMember m;
    m.cycle = cycle + static_cast<int64_t>(members.size());
    m.qpi = std::move(q);
    members.push_back(std::move(m));
  }
  // Checks before any placement: a failure is the scheduler's error for every pod.
  if (invalid.empty()) {
    invalid = validateGroup(
        root, members, options_.features.enabled(features::Feature::kPodGroupPreemptionPolicy));
  }
  if (invalid.empty() && members.size() != root.info.pods.size()) {
    invalid = "scheduling error for pod group, some pods were not processed";
  }
  if (!invalid.empty()) {
    errors_.fetch_add(members.size());
    if (options_.onPodGroupCycle) {
      PodGroupTrace t = traceOf(root);
      if (!root.info.podGroup) t = PodGroupTrace{.ns = ns, .name = name};
      t.scheduled = false;
      t.message = invalid;
      for (const auto& m : members) {
        t.members.push_back({.pod = m.qpi->pod().metadata.key(), .reason = invalid});
      }
      options_.onPodGroupCycle(t);
    }
    for (auto& m : members) {
      handleFailure(fwk, std::move(m.qpi), Status::error(invalid), invalid, m.cycle, start,
                    std::string());
    }
    std::vector<const GroupNode*> groups;
    if (root.info.podGroup || root.info.composite) treeGroups(root, groups);
    for (const GroupNode* g : groups) {
      if (g->composite()) {
        writePodGroupCondition(*g->info.composite, "False",
                               std::string(api::kPodGroupReasonSchedulerError), invalid);
      } else {
        writePodGroupCondition(*g->info.podGroup, "False",
                               std::string(api::kPodGroupReasonSchedulerError), invalid);
      }
    }
    return;
  }

  if (options_.metrics != nullptr) fwk.setRecordPluginMetrics(sampler_() % 100 < 10);
  GroupPlacer placer(*this, fwk, members, static_cast<bool>(options_.onPodGroupCycle));
  Status group = placer.run(root);

  std::map<std::string, std::string> nominations;
  std::set<std::string, std::less<>> plugins;
  if (!group.ok()) {
    if (placer.everPlaced()) algorithm_.placementFailed(fwk);
    // Each pod may come back on any event that could have helped one of them, so they come
    // back together.
    if (!group.isError()) {
      for (const auto& m : members) plugins.insert(m.plugins.begin(), m.plugins.end());
      if (!group.plugin().empty()) plugins.insert(group.plugin());
    }
    // Workload-aware preemption: only for a group that more room would let in.
    if (group.code() == Code::kUnschedulable && fwk.hasPodGroupPostFilterPlugins() &&
        !root.composite()) {
      cache_.updateSnapshot(snapshot_);
      fwk.setSnapshot(&snapshot_);
      CycleState postFilterState;
      auto [result, s] = fwk.runPodGroupPostFilterPlugins(
          postFilterState, root.info, snapshot_,
          [&](const NodeInfoLister& nodes, std::vector<std::pair<PodPtr, std::string>>& proposed) {
            return placeOnScratch(fwk, root.info, nodes, proposed);
          });
      if (s.isError()) {
        group = s;
      } else {
        if (!result.message.empty()) {
          group = Status::unschedulable(group.message() + ", " + result.message)
                      .withPlugin(group.plugin());
        }
        if (s.ok()) nominations = std::move(result.nominations);
      }
      root.status = group;
    }
    spdlog::info("pod group {}/{} not scheduled: {}", ns, root.info.name, group.message());
  } else {
    spdlog::debug("scheduled pod group {}/{}", ns, root.info.name);
  }
  inheritFailure(root, nullptr);
  std::vector<GroupNode*> leaves;
  leavesOf(root, leaves);
  for (GroupNode* leaf : leaves) {
    std::optional<PodGroupTrace> trace;
    if (options_.onPodGroupCycle) trace = traceOf(*leaf);
    submitGroup(fwk, *leaf, members, nominations, plugins, start, trace ? &*trace : nullptr);
    if (trace) options_.onPodGroupCycle(*trace);
  }
  fwk.setSnapshot(nullptr);
  std::vector<const GroupNode*> groups;
  treeGroups(root, groups);
  for (const GroupNode* g : groups) {
    const Status& s = g->status;
    const std::string status = s.ok() ? "True" : "False";
    const std::string reason(s.ok()        ? api::kPodGroupReasonScheduled
                             : s.isError() ? api::kPodGroupReasonSchedulerError
                                           : api::kPodGroupReasonUnschedulable);
    if (g->composite()) {
      writePodGroupCondition(*g->info.composite, status, reason, s.message());
    } else {
      writePodGroupCondition(*g->info.podGroup, status, reason, s.message());
    }
  }
}

void SchedulerCore::submitGroup(framework::Framework& fwk, GroupNode& leaf,
                                std::vector<GroupMember>& members,
                                const std::map<std::string, std::string>& nominations,
                                const std::set<std::string, std::less<>>& plugins,
                                std::chrono::steady_clock::time_point start, PodGroupTrace* trace) {
  const Status& group = leaf.status;
  if (group.ok()) {
    // Every pod placed goes to binding (through Permit); the others fail on their own.
    fwk.setSnapshot(&snapshot_);
    std::vector<Status> permits(leaf.members.size());
    for (size_t i = 0; i < leaf.members.size(); ++i) {
      GroupMember& m = members[leaf.members[i]];
      if (m.placed) permits[i] = runPermit(fwk, m.state, *m.assumed->pod, m.node);
    }
    for (size_t i = 0; i < leaf.members.size(); ++i) {
      GroupMember& m = members[leaf.members[i]];
      const bool placed = m.placed && (permits[i].ok() || permits[i].isWait());
      if (trace != nullptr) {
        trace->members.push_back(
            {.pod = m.qpi->pod().metadata.key(),
             .node = m.node,
             .placed = placed,
             .tried = m.evaluated,
             .reason = placed ? "" : (m.placed ? permits[i].message() : m.own.message())});
      }
      if (placed) {
        handToBinding(fwk, std::move(m.qpi), std::move(m.assumed), m.node, std::move(m.state),
                      m.cycle, start, permits[i].isWait());
      } else if (m.placed) {
        failPlaced(fwk, std::move(m.qpi), permits[i], true, m.cycle, start);
      } else {
        (m.own.isError() ? errors_ : unschedulable_).fetch_add(1);
        m.qpi->unschedulablePlugins = std::move(m.plugins);
        handleFailure(fwk, std::move(m.qpi), m.own, m.own.message(), m.cycle, start, std::string());
      }
    }
    return;
  }
  // Rejected: nothing of the group stays placed (the placer took it back).
  for (size_t i : leaf.members) {
    GroupMember& m = members[i];
    // A pod Filter rejected says why in its own words; the others carry the group's.
    const bool ownWords = m.evaluated && (m.own.isRejected() || m.own.isError());
    const Status& s = ownWords && !group.isError() ? m.own : group;
    if (trace != nullptr) {
      trace->members.push_back({.pod = m.qpi->pod().metadata.key(),
                                .node = m.node,
                                .placed = false,
                                .tried = m.evaluated,
                                .reason = s.message()});
    }
    (s.isError() ? errors_ : unschedulable_).fetch_add(1);
    if (!s.isError()) m.qpi->unschedulablePlugins = plugins;
    auto nominated = nominations.find(m.qpi->pod().metadata.key());
    handleFailure(fwk, std::move(m.qpi), s, s.message(), m.cycle, start,
                  nominated == nominations.end() ? std::string() : nominated->second);
  }
}

Status SchedulerCore::placeOnScratch(framework::Framework& fwk, const PodGroupInfo& info,
                                     const NodeInfoLister& nodes,
                                     std::vector<std::pair<PodPtr, std::string>>& proposed) {
  helper::NodeOverlay scratch(nodes);
  fwk.setSnapshot(&scratch);
  CycleState groupState;
  PlacementProgress progress{.scheduled = 0, .remaining = static_cast<int32_t>(info.pods.size())};
  Status feasible = fwk.runPlacementFeasiblePlugins(groupState, info, progress);
  Status outcomeStatus;
  for (size_t i = 0; i < info.pods.size() && (feasible.ok() || feasible.isWait()); ++i) {
    const PodPtr& pod = info.pods[i];
    CycleState state;
    ScheduleResult result;
    FitError fitError;
    Status error;
    const auto outcome = algorithm_.schedulePod(
        fwk, state, *pod, scratch, options_.percentageOfNodesToScore, result, fitError, error);
    if (outcome == Algorithm::Outcome::kError) {
      outcomeStatus =
          Status::error("failed to schedule other pod from a pod group: " + error.message());
      break;
    }
    if (outcome == Algorithm::Outcome::kScheduled) {
      auto placed = std::make_shared<api::Pod>(*pod);
      placed->spec.nodeName = result.suggestedHost;
      scratch.add(std::make_shared<const PodInfo>(std::move(placed), options_.features));
      scratch.rebuild();
      proposed.emplace_back(pod, result.suggestedHost);
      ++progress.scheduled;
    }
    --progress.remaining;
    feasible = fwk.runPlacementFeasiblePlugins(groupState, info, progress);
  }
  fwk.setSnapshot(&snapshot_);
  if (!outcomeStatus.ok()) return outcomeStatus;
  if (feasible.isWait()) return Status::unschedulable(feasible.message());
  if (!feasible.ok()) return feasible;
  if (progress.scheduled == 0) return Status::unschedulable("no pods were schedulable");
  return {};
}

}  // namespace ksched::scheduler
