// DefaultPreemption for pod groups (PodGroupPostFilter, KEP-5710 workload-aware preemption): when
// a PodGroup's cycle cannot place it, evict lower-priority pods so that the whole group fits, or
// none. Upstream's algorithm (PodGroupEvaluator):
//   1. The preemptor's priority is the PodGroup's; a group whose policy is Never does not preempt
//      (the PodGroup's preemptionPolicy with PodGroupPreemptionPolicy, else its pods').
//   2. While the victims of its last preemption are still there, it waits on its nominations.
//   3. Victims come in units: a pod, or every pod of a PodGroup whose disruptionMode is All;
//      only units of lower priority, most important first (priority, then groups before pods,
//      then the earlier start).
//   4. With every potential victim gone the group must fit (the cycle's own placement), else
//      preemption cannot help.
//   5. Units are given back in order of importance while the group still fits without them.
//   6. The rest are evicted (DisruptionTarget, then DELETE, and a Preempted event), off the
//      scheduling thread, and the group's pods are nominated to the nodes they would take.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <ksched/api/decode.h>
#include <ksched/api/pod_group.h>
#include <ksched/api/rfc3339.h>
#include <ksched/helper/node_overlay.h>

#include "plugins/default_preemption/default_preemption.h"

namespace ksched::plugins {
namespace {

// A preemption unit: one pod, or a PodGroup disrupted whole.
struct VictimUnit {
  std::vector<PodInfoPtr> pods;
  int32_t priority = 0;
  bool group = false;
  std::string earliestStart;  // RFC 3339; "" when not started
};

bool moreImportantUnit(const VictimUnit& a, const VictimUnit& b) {
  if (a.priority != b.priority) return a.priority > b.priority;
  if (a.group != b.group) return a.group;
  if (a.earliestStart.empty() != b.earliestStart.empty()) return !a.earliestStart.empty();
  return a.earliestStart < b.earliestStart;
}

}  // namespace

std::pair<PodGroupPostFilterResult, Status> DefaultPreemption::podGroupPostFilter(
    CycleState& /*state*/, const PodGroupInfo& group, const NodeInfoLister& nodes,
    const PodGroupScheduleFn& schedule) {
  PodGroupPostFilterResult out;
  if (group.pods.empty()) return {out, Status::unschedulable("no pods to place")};
  const std::string key = api::groupKey(group.ns, group.name);
  const int32_t priority = group.podGroup && group.podGroup->spec.priority
                               ? *group.podGroup->spec.priority
                               : api::podPriority(*group.pods.front());
  std::string policy =
      group.pods.front()->spec.preemptionPolicy.value_or(std::string(api::kPreemptLowerPriority));
  if (handle_.features().enabled(features::Feature::kPodGroupPreemptionPolicy) && group.podGroup &&
      group.podGroup->spec.preemptionPolicy) {
    policy = *group.podGroup->spec.preemptionPolicy;
  }
  if (policy == "Never") {
    return {out, Status::unschedulable("not eligible due to preemptionPolicy=Never.")};
  }

  // 2. Victims of the last preemption still there: wait for them.
  if (auto it = groupEvicted_.find(key); it != groupEvicted_.end()) {
    bool present = false;
    const std::set<std::string> victims(it->second.victimUids.begin(), it->second.victimUids.end());
    for (const NodeInfo* n : nodes.list()) {
      for (const auto& pi : n->pods()) present = present || victims.contains(pi->pod->metadata.uid);
    }
    if (present) {
      out.nominations = it->second.nominations;
      out.message = "ongoing preemption on nominated nodes";
      return {out, Status::success()};
    }
    groupEvicted_.erase(it);
  }

  // 3. The units of lower priority.
  std::vector<VictimUnit> units;
  std::map<std::string, size_t> groupUnit;  // "<ns>/<podgroup>" -> units index
  for (const NodeInfo* n : nodes.list()) {
    for (const PodInfoPtr& pi : n->pods()) {
      const api::Pod& p = *pi->pod;
      if (api::podPriority(p) >= priority || p.metadata.deletionTimestamp) continue;
      bool whole = false;
      const std::string* pg = p.spec.podGroupName();
      if (pg != nullptr && podGroups_) {
        if (auto obj = podGroups_->get(p.metadata.namespace_, *pg)) {
          try {
            whole = api::decode<api::PodGroup>(obj->object).spec.disruptionMode ==
                    api::DisruptionMode::kAll;
          } catch (const api::DecodeError&) {
          }
        }
      }
      const std::string start = p.status.startTime.value_or("");
      if (whole) {
        const std::string gk = api::groupKey(p.metadata.namespace_, *pg);
        auto [it, added] = groupUnit.emplace(gk, units.size());
        if (added) units.push_back({{}, api::podPriority(p), true, start});
        VictimUnit& u = units[it->second];
        u.pods.push_back(pi);
        if (!start.empty() && (u.earliestStart.empty() || start < u.earliestStart)) {
          u.earliestStart = start;
        }
        continue;
      }
      units.push_back({{pi}, api::podPriority(p), false, start});
    }
  }
  if (units.empty()) {
    return {out, Status::unschedulable("No preemption victims found for incoming preemptor")};
  }
  std::ranges::stable_sort(units, moreImportantUnit);

  // 4. Without any of them, the group must fit.
  ksched::helper::NodeOverlay free(nodes);
  for (const auto& u : units) {
    for (const auto& pi : u.pods) free.remove(pi);
  }
  free.rebuild();
  std::vector<std::pair<PodPtr, std::string>> proposed;
  if (Status s = schedule(free, proposed); !s.ok()) return {out, s};

  // 5. Give back what the group can do without, most important first.
  std::vector<const VictimUnit*> victims;
  for (const auto& u : units) {
    for (const auto& pi : u.pods) free.add(pi);
    free.rebuild();
    std::vector<std::pair<PodPtr, std::string>> again;
    if (Status s = schedule(free, again); s.ok()) {
      proposed = std::move(again);
      continue;
    }
    for (const auto& pi : u.pods) free.remove(pi);
    free.rebuild();
    victims.push_back(&u);
  }

  // 6. Evict, off the scheduling thread, and nominate.
  GroupEvicted record;
  std::vector<PodInfoPtr> toDelete;
  for (const VictimUnit* u : victims) {
    for (const auto& pi : u->pods) {
      record.victimUids.push_back(pi->pod->metadata.uid);
      if (auto wp = handle_.getWaitingPod(pi->pod->metadata.uid)) {
        wp->reject(std::string(kName), "preempted");
      } else {
        toDelete.push_back(pi);
      }
    }
  }
  for (const auto& [pod, node] : proposed) record.nominations[pod->metadata.key()] = node;
  out.nominations = record.nominations;
  const size_t count = record.victimUids.size();
  groupEvicted_[key] = std::move(record);
  victims_.fetch_add(count);
  if (onVictims_) onVictims_(count);
  const std::string uid = group.podGroup ? group.podGroup->metadata.uid : key;
  auto evictAll = [this, toDelete = std::move(toDelete), uid] {
    ClusterApi* api = handle_.api();
    if (api == nullptr) return;
    for (const auto& pi : toDelete) {
      const api::Pod& victim = *pi->pod;
      nlohmann::json cond = {
          {"type", "DisruptionTarget"},
          {"status", "True"},
          {"reason", "PreemptionByScheduler"},
          {"message",
           std::string(kName) + ": preempting to accommodate a higher priority podgroup"},
          {"lastTransitionTime", api::formatRFC3339(std::chrono::system_clock::now())}};
      ApiResult r =
          api->patchPodStatus(victim, {{"status", {{"conditions", nlohmann::json::array({cond})}}}},
                              "application/strategic-merge-patch+json");
      if (!r) r = api->deletePod(victim);
      if (!r) {
        handle_.eventRecorder().event(victim, "Normal", "Preempted", "Preempting",
                                      "Preempted by podgroup " + uid + " on node cluster");
      } else if (!r->isNotFound() && !r->isConflict()) {
        spdlog::warn("preempting {}/{}: {}", victim.metadata.namespace_, victim.metadata.name,
                     r->message);
      }
    }
  };
  (void)handle_.runAsync(evictAll);  // dropped only when shutting down
  out.message = "found a placement for podgroup, preempting " + std::to_string(count) + " victims";
  return {out, Status::success()};
}

}  // namespace ksched::plugins
