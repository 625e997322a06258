// Nominator: which pending pods are nominated to which node (upstream nominator in
// scheduling_queue.go). Preemption nominates a pod to the node where it evicted victims;
// Filter then accounts nominated pods of equal or higher priority on that node.
//
// Thread-safety: every method is safe to call concurrently; the nominator has its own mutex
// and never calls out while holding it. SchedulingQueue calls it with its own lock held
// (lock order: SchedulingQueue::mu_ -> Nominator::mu_).
//
// Differences from upstream: there is no pod lister, so a nomination is not re-checked against
// the informer (the scheduler removes nominations of bound or deleted pods via
// deleteNominatedPodIfExists / SchedulingQueue::remove).
#pragma once

#include <atomic>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include <ksched/node_info.h>

namespace ksched::queue {

class Nominator {
 public:
  // Nominates `podInfo` to `nodeName`, replacing any earlier nomination of the same uid.
  // An empty `nodeName` only removes the earlier nomination.
  void addNominatedPod(PodInfoPtr podInfo, const std::string& nodeName);
  // Nominates the pod to its status.nominatedNodeName if set (upstream ModeNoop); otherwise
  // removes any earlier nomination.
  void addNominatedPodFromStatus(PodInfoPtr podInfo);
  // A pod back from a failed attempt: keeps its in-memory nomination (with the new pod object)
  // if it has one, else follows status.nominatedNodeName. The scheduler writes nominations to
  // the apiserver asynchronously, so the informer's status may not show the latest one yet.
  void readdNominatedPod(PodInfoPtr podInfo);
  // Removes the nomination of the pod with this uid, if any.
  void deleteNominatedPodIfExists(const api::Pod& pod);
  // After an update of `oldPod` to `newPodInfo`: follows status.nominatedNodeName when it was
  // set, changed or cleared; when it is empty in both versions an in-memory nomination is kept
  // (the apiserver may not have seen it yet) with the new pod object.
  void updateNominatedPod(const api::Pod& oldPod, PodInfoPtr newPodInfo);

  // The pods nominated to `nodeName`, in nomination order.
  [[nodiscard]] std::vector<PodInfoPtr> nominatedPodsForNode(const std::string& nodeName) const;
  // The node the pod with this uid is nominated to, or "".
  [[nodiscard]] std::string nominatedNodeFor(const std::string& uid) const;
  [[nodiscard]] size_t size() const;

 private:
  void addLocked(PodInfoPtr podInfo, const std::string& nodeName);
  void deleteLocked(const std::string& uid);

  mutable std::mutex mu_;
  // Guarded by mu_: node name -> nominated pods; uid -> node name (both always in sync).
  std::unordered_map<std::string, std::vector<PodInfoPtr>> byNode_;
  std::unordered_map<std::string, std::string> nodeByUid_;
  // nodeByUid_.size(), readable without the lock: Filter asks for every node of every cycle,
  // and there is usually nothing nominated.
  std::atomic<size_t> count_{0};
};

}  // namespace ksched::queue
