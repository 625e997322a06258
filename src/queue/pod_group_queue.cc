// SchedulingQueue's part in the pod-group cycle (GenericWorkload): a group's pods are queued one
// by one, as upstream 1.36 queued them, and the scheduling loop takes the others out when it pops
// one of them.
#include <memory>
#include <string>
#include <vector>

#include <ksched/api/pod.h>

#include "queue/scheduling_queue.h"

namespace ksched::queue {

void SchedulingQueue::addGroupMember(PodPtr pod) {
  auto podInfo = std::make_shared<const PodInfo>(pod, options_.features);
  std::lock_guard lock(mu_);
  auto info = newInfo(std::move(podInfo));
  if (Entry* old = find(info->pod().metadata.uid)) destroy(old);
  Entry* e = newEntry(std::move(info));
  if (moveToActiveQ(e, kEventPodAdd)) nominator_.addNominatedPodFromStatus(e->info->podInfo);
  moveAllLocked(ClusterEvent{EventResource::kUnscheduledPod, kAdd, {}}, {}, pod);
}

std::vector<std::unique_ptr<QueuedPodInfo>> SchedulingQueue::popGroupMembers(
    const api::Pod& member) {
  std::vector<std::unique_ptr<QueuedPodInfo>> out;
  const std::string* group = member.spec.podGroupName();
  if (group == nullptr) return out;
  std::lock_guard lock(mu_);
  std::vector<Entry*> taken;
  for (const auto& [uid, e] : entries_) {
    const api::Pod& p = e->info->pod();
    const std::string* g = p.spec.podGroupName();
    if (g == nullptr || *g != *group || p.metadata.namespace_ != member.metadata.namespace_ ||
        e->gated()) {
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
