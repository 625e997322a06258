// SchedulingQueue's part in the pod-group cycle (GenericWorkload): a group's pods are queued one
// by one, as upstream 1.36 queued them, and the scheduling loop takes the others out when it pops
// one of them.
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <ksched/api/pod.h>

#include "queue/scheduling_queue.h"

namespace ksched::queue {

void SchedulingQueue::addGroupMember(PodPtr pod, const std::set<std::string, std::less<>>& scope) {
  auto podInfo = std::make_shared<const PodInfo>(pod, options_.features);
  std::lock_guard lock(mu_);
  auto info = newInfo(std::move(podInfo));
  if (Entry* old = find(info->pod().metadata.uid)) destroy(old);
  Entry* e = newEntry(std::move(info));
  const bool admitted = moveToActiveQ(e, kEventPodAdd);
  if (admitted) nominator_.addNominatedPodFromStatus(e->info->podInfo);
  // The event concerns the pod's own group (its tree, `scope`). A sibling held back by the plugin
  // that holds this pod back would be held again (its verdict is the group's: GangScheduling's
  // minCount), so it is not asked: a gang of n pods costs n hints, not n^2 PreEnqueue runs.
  const std::string gatedBy = admitted ? std::string() : e->info->gatingPlugin;
  const ClusterEvent event{EventResource::kUnscheduledPod, kAdd, {}};
  const EventObject added = pod;
  recordInFlight(event, {}, added);
  std::vector<Entry*> toMove;
  for (const auto& [uid, other] : unschedulable_) {
    const api::Pod& p = other->info->pod();
    const std::string* g = p.spec.podGroupName();
    if (other == e || g == nullptr || !scope.contains(*g) ||
        p.metadata.namespace_ != pod->metadata.namespace_ ||
        (!gatedBy.empty() && other->info->gatingPlugin == gatedBy)) {
      continue;
    }
    if (!other->judges) other->judges = judgesFor(*other->info, hints_);
    if (worthRequeuing(*other->judges, *other->info, event, {}, added)) toMove.push_back(other);
  }
  const std::string label = event.label();
  for (Entry* m : toMove) {
    detach(m);
    requeue(m, label);
  }
}

std::vector<std::unique_ptr<QueuedPodInfo>> SchedulingQueue::popGroupMembers(
    const std::string& ns, const std::set<std::string, std::less<>>& groups) {
  std::vector<std::unique_ptr<QueuedPodInfo>> out;
  std::lock_guard lock(mu_);
  std::vector<Entry*> taken;
  for (const auto& [uid, e] : entries_) {
    const api::Pod& p = e->info->pod();
    const std::string* g = p.spec.podGroupName();
    if (g == nullptr || !groups.contains(*g) || p.metadata.namespace_ != ns || e->gated()) {
      continue;
    }
    taken.push_back(e.get());
  }
  for (Entry* e : taken) {
    detach(e);
    std::unique_ptr<QueuedPodInfo> info = std::move(e->info);
    entries_.erase(info->pod().metadata.uid);
    startFlight(*info);
    out.push_back(std::move(info));
  }
  schedulingCycle_ += static_cast<int64_t>(out.size());
  return out;
}

}  // namespace ksched::queue
