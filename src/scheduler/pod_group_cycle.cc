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

// Upstream validatePodGroup's messages: "" when the members may be placed together.
std::string validateGroup(const api::PodGroup& pg,
                          const std::vector<std::unique_ptr<QueuedPodInfo>>& members,
                          bool groupPolicy) {
  const api::Pod& first = members.front()->pod();
  const std::string key = api::groupKey(pg.metadata.namespace_, pg.metadata.name);
  const int32_t rootPriority = pg.spec.priority.value_or(0);
  const std::string rootPolicy =
      pg.spec.preemptionPolicy.value_or(std::string(api::kPreemptLowerPriority));
  for (const auto& m : members) {
    const api::Pod& p = m->pod();
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

}  // namespace

void SchedulerCore::schedulePodGroup(framework::Framework& fwk,
                                     std::unique_ptr<QueuedPodInfo> first, int64_t cycle) {
  const auto start = std::chrono::steady_clock::now();
  const std::string ns = first->pod().metadata.namespace_;
  const std::string name = *first->pod().spec.podGroupName();
  std::vector<std::unique_ptr<QueuedPodInfo>> queued = queue_->popGroupMembers(first->pod());
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
  spdlog::debug("attempting to schedule pod group {}/{} ({} pods)", ns, name, queued.size());

  // Checks before any placement: a failure is the scheduler's error for every pod.
  const std::shared_ptr<const api::PodGroup> pg = podGroupOf(ns, name);
  // What the cycle did, for Options::onPodGroupCycle (explain and simulate); kept only then.
  std::optional<PodGroupTrace> trace;
  if (options_.onPodGroupCycle) {
    trace.emplace(PodGroupTrace{.ns = ns, .name = name});
    if (pg) {
      trace->gang = pg->spec.schedulingPolicy.gang();
      trace->minCount = pg->spec.schedulingPolicy.minCount();
      if (!pg->spec.topologyKeys.empty()) trace->topologyKey = pg->spec.topologyKeys.front();
    }
    for (const auto& q : queued) trace->members.push_back({.pod = q->pod().metadata.key()});
  }
  std::string invalid;
  if (!pg) {
    invalid = fmt::format("failed to get pod group state: pod group {:?} not found", name);
  } else {
    invalid = validateGroup(
        *pg, queued, options_.features.enabled(features::Feature::kPodGroupPreemptionPolicy));
  }
  if (!invalid.empty()) {
    errors_.fetch_add(queued.size());
    for (auto& q : queued) {
      handleFailure(fwk, std::move(q), Status::error(invalid), invalid, cycle, start,
                    std::string());
    }
    if (pg) {
      writePodGroupCondition(*pg, "False", std::string(api::kPodGroupReasonSchedulerError),
                             invalid);
    }
    if (trace) {
      for (auto& m : trace->members) m.reason = invalid;
      trace->message = invalid;
      options_.onPodGroupCycle(*trace);
    }
    return;
  }

  std::vector<GroupMember> members(queued.size());
  PodGroupInfo info{.ns = ns, .name = name, .podGroup = pg, .pods = {}};
  for (size_t i = 0; i < queued.size(); ++i) {
    members[i].cycle = cycle + static_cast<int64_t>(i);
    info.pods.push_back(queued[i]->podInfo->pod);
    members[i].qpi = std::move(queued[i]);
  }
  if (options_.metrics != nullptr) fwk.setRecordPluginMetrics(sampler_() % 100 < 10);
  int32_t placedCount = 0;

  // Places the members in turn on `nodes` (the snapshot, or one placement of it), asking the
  // PlacementFeasible plugins before the first and after each; returns the group's verdict. A
  // member placed is assumed and reserved; revert() takes them back.
  auto place = [&](const NodeInfoLister& nodes, helper::NodeOverlay* placement) -> Status {
    fwk.setSnapshot(&nodes);
    // A batch begun on other nodes must not hint a node outside this placement: the first pod
    // of each placement runs a full cycle on the placement's nodes, the next batch on those.
    if (placement != nullptr) algorithm_.placementFailed(fwk);
    CycleState groupState;
    PlacementProgress progress{.scheduled = 0, .remaining = static_cast<int32_t>(members.size())};
    // A Wait counts as a rejection until a later answer says Success.
    auto verdict = [](Status s) {
      if (s.isWait()) return Status::unschedulable(s.message()).withPlugin(s.plugin());
      if (s.isError() && !s.plugin().empty()) {
        return Status::error("failed to evaluate placement feasibility: " + s.message())
            .withPlugin(s.plugin());
      }
      return s;
    };
    Status feasible = fwk.runPlacementFeasiblePlugins(groupState, info, progress);
    Status group = verdict(feasible);
    bool stop = !feasible.ok() && !feasible.isWait();
    for (size_t i = 0; i < members.size() && !stop; ++i) {
      GroupMember& m = members[i];
      m.state = CycleState();
      m.evaluated = true;
      m.plugins.clear();
      const PodPtr pod = m.qpi->podInfo->pod;
      ScheduleResult result;
      FitError fitError;
      Status error;
      const auto outcome =
          algorithm_.schedulePod(fwk, m.state, pod, m.cycle, nodes,
                                 options_.percentageOfNodesToScore, result, fitError, error);
      if (outcome == Algorithm::Outcome::kScheduled) {
        m.own = assumeAndReserve(fwk, m.state, *pod, result.suggestedHost, m.assumed);
        m.node = result.suggestedHost;
        m.placed = m.own.ok();
        if (!m.placed) {
          if (placement == nullptr) algorithm_.placementFailed(fwk);
          if (m.assumed) (void)cache_.forgetPod(pod->metadata.uid);
          m.assumed.reset();
          if (m.own.isRejected() && !m.own.plugin().empty()) m.plugins.insert(m.own.plugin());
        } else {
          ++progress.scheduled;
          cache_.updateSnapshot(snapshot_);
          if (placement != nullptr) placement->rebuild();
        }
      } else if (outcome == Algorithm::Outcome::kUnschedulable) {
        m.own = Status::unschedulable(fitError.message());
        m.plugins = fitError.diagnosis.unschedulablePlugins;
      } else {
        m.own = error;
      }
      if (m.own.isError()) {
        placedCount = progress.scheduled;
        return Status::error("failed to schedule other pod from a pod group: " + m.own.message());
      }
      --progress.remaining;
      feasible = fwk.runPlacementFeasiblePlugins(groupState, info, progress);
      group = verdict(feasible);
      stop = !feasible.ok() && !feasible.isWait();
    }
    placedCount = progress.scheduled;
    if (group.ok() && progress.scheduled == 0) {
      group = Status::unschedulable("no pods were schedulable");
    }
    return group;
  };
  // Takes back every member placed (in reverse order) and forgets how each fared.
  auto revert = [&] {
    for (auto it = members.rbegin(); it != members.rend(); ++it) {
      if (it->placed) {
        fwk.runReservePluginsUnreserve(it->state, *it->assumed->pod, it->node);
        (void)cache_.forgetPod(it->assumed->pod->metadata.uid);
      }
      it->placed = false;
      it->evaluated = false;
      it->assumed.reset();
      it->own = Status();
    }
    cache_.updateSnapshot(snapshot_);
  };

  cache_.updateSnapshot(snapshot_);
  Status group;
  std::optional<helper::NodeOverlay> chosen;  // the framework's snapshot until the cycle ends
  if (!fwk.hasPlacementGeneratePlugins()) {
    group = place(snapshot_, nullptr);
  } else {
    // Topology-aware: the group is placed on each placement in turn and taken back; the best
    // feasible placement (PlacementScore) is placed again, for good.
    fwk.setSnapshot(&snapshot_);
    CycleState groupState;
    std::vector<Placement> placements;
    group = fwk.runPlacementGeneratePlugins(groupState, info, snapshot_, placements);
    if (group.ok() && placements.empty()) {
      group = Status::unschedulable("no feasible placements found");
    }
    std::vector<const Placement*> feasible;
    std::vector<size_t> tried;  // feasible[i]'s entry in trace->placements
    std::vector<PodGroupAssignments> assignments;
    Status first;
    const size_t wanted = feasiblePlacementsToFind(
        placements,
        fwk.percentageOfPlacementsToScore().value_or(options_.percentageOfPlacementsToScore));
    for (size_t k = 0; group.ok() && k < placements.size() && feasible.size() < wanted; ++k) {
      helper::NodeOverlay nodes(snapshot_, placements[k].nodes);
      Status r = place(nodes, &nodes);
      if (k == 0) first = r;
      if (r.isError()) group = r;
      if (trace) {
        PodGroupTrace::PlacementTried t{.name = placements[k].name,
                                        .nodes = placements[k].nodes.size(),
                                        .feasible = r.ok(),
                                        .message = r.ok() ? "" : r.message()};
        for (const auto& m : members) {
          if (m.placed) t.proposed.emplace_back(m.qpi->pod().metadata.key(), m.node);
        }
        if (r.ok()) tried.push_back(trace->placements.size());
        trace->placements.push_back(std::move(t));
      }
      if (r.ok()) {
        PodGroupAssignments a{.placement = &placements[k], .proposed = {}};
        for (const auto& m : members) {
          if (m.placed) a.proposed.emplace_back(m.assumed->pod, m.node);
        }
        feasible.push_back(&placements[k]);
        assignments.push_back(std::move(a));
      }
      revert();
    }
    fwk.setSnapshot(&snapshot_);  // not a placement's lister, gone with its iteration
    if (group.ok() && feasible.empty()) {
      group = Status::unschedulable(
                  fmt::format("0/{} placements are available, first placement status: {}",
                              placements.size(), first.message()))
                  .withPlugin(first.plugin());
    } else if (group.ok()) {
      size_t best = 0;
      if (feasible.size() > 1) {
        fwk.setSnapshot(&snapshot_);
        std::vector<int64_t> totals;
        group = fwk.runPlacementScorePlugins(groupState, info, snapshot_, assignments, totals);
        for (size_t k = 1; group.ok() && k < totals.size(); ++k) {
          if (totals[k] > totals[best]) best = k;
        }
        for (size_t k = 0; trace && k < totals.size() && k < tried.size(); ++k) {
          trace->placements[tried[k]].score = totals[k];
        }
      }
      if (group.ok()) {
        if (trace) trace->chosen = feasible[best]->name;
        chosen.emplace(snapshot_, feasible[best]->nodes);
        group = place(*chosen, &*chosen);
      }
    }
  }

  if (group.ok()) {
    // Every pod placed goes to binding (through Permit); the others fail on their own.
    std::vector<Status> permits(members.size());
    for (size_t i = 0; i < members.size(); ++i) {
      if (members[i].placed) {
        permits[i] = runPermit(fwk, members[i].state, *members[i].assumed->pod, members[i].node);
      }
    }
    fwk.setSnapshot(nullptr);
    for (size_t i = 0; i < members.size(); ++i) {
      GroupMember& m = members[i];
      if (trace) {
        auto& t = trace->members[i];
        t.node = m.placed ? m.node : "";
        t.tried = m.evaluated;
        t.placed = m.placed && (permits[i].ok() || permits[i].isWait());
        if (!t.placed) t.reason = m.placed ? permits[i].message() : m.own.message();
      }
      if (m.placed && (permits[i].ok() || permits[i].isWait())) {
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
    spdlog::debug("scheduled pod group {}/{}", ns, name);
    writePodGroupCondition(*pg, "True", std::string(api::kPodGroupReasonScheduled), "");
    if (trace) {
      trace->scheduled = true;
      options_.onPodGroupCycle(*trace);
    }
    return;
  }

  // Rejected: nothing of the group stays placed. Each pod may come back on any event that
  // could have helped one of them, so they come back together.
  std::set<std::string, std::less<>> plugins;
  if (!group.isError()) {
    for (const auto& m : members) plugins.insert(m.plugins.begin(), m.plugins.end());
    if (!group.plugin().empty()) plugins.insert(group.plugin());
  }
  for (size_t i = 0; trace && i < members.size(); ++i) {
    if (members[i].placed) trace->members[i].node = members[i].node;
  }
  for (auto it = members.rbegin(); it != members.rend(); ++it) {
    if (!it->placed) continue;
    fwk.runReservePluginsUnreserve(it->state, *it->assumed->pod, it->node);
    (void)cache_.forgetPod(it->assumed->pod->metadata.uid);
    it->placed = false;
  }
  if (placedCount > 0) algorithm_.placementFailed(fwk);
  // Workload-aware preemption: only for a group that more room would let in.
  std::map<std::string, std::string> nominations;
  if (group.code() == Code::kUnschedulable && fwk.hasPodGroupPostFilterPlugins()) {
    cache_.updateSnapshot(snapshot_);
    fwk.setSnapshot(&snapshot_);
    CycleState postFilterState;
    auto [result, s] = fwk.runPodGroupPostFilterPlugins(
        postFilterState, info, snapshot_,
        [&](const NodeInfoLister& nodes, std::vector<std::pair<PodPtr, std::string>>& proposed) {
          return placeOnScratch(fwk, info, nodes, proposed);
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
  }
  fwk.setSnapshot(nullptr);
  spdlog::info("pod group {}/{} not scheduled: {}", ns, name, group.message());
  for (size_t i = 0; i < members.size(); ++i) {
    GroupMember& m = members[i];
    // A pod Filter rejected says why in its own words; the others carry the group's.
    const bool ownWords = m.evaluated && (m.own.isRejected() || m.own.isError());
    const Status& s = ownWords && !group.isError() ? m.own : group;
    if (trace) {
      trace->members[i].reason = s.message();
      trace->members[i].tried = m.evaluated;
    }
    (s.isError() ? errors_ : unschedulable_).fetch_add(1);
    if (!s.isError()) m.qpi->unschedulablePlugins = plugins;
    auto nominated = nominations.find(m.qpi->pod().metadata.key());
    handleFailure(fwk, std::move(m.qpi), s, s.message(), m.cycle, start,
                  nominated == nominations.end() ? std::string() : nominated->second);
  }
  writePodGroupCondition(*pg, "False",
                         std::string(group.isError() ? api::kPodGroupReasonSchedulerError
                                                     : api::kPodGroupReasonUnschedulable),
                         group.message());
  if (trace) {
    trace->message = group.message();
    options_.onPodGroupCycle(*trace);
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
