// The PodScheduled=False writes of unschedulable pods (condition, nominatedNodeName, diagnosis
// annotation), sent off the scheduling thread. Per pod, at most one write is in flight and at
// most one waits behind it; a newer write replaces the waiting one. So writes of one pod land
// in the order they were made, and a pod retried faster than the apiserver answers queues one
// write, not one per attempt.
//
// Upstream writes the status synchronously in the failure handler, so the informer has it by
// the pod's next attempt; here the informer may lag, and a write is compared with the one
// queued or in flight for the pod before the informer's copy.
#pragma once

#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include <ksched/node_info.h>

namespace ksched::scheduler {

class StatusWrites {
 public:
  struct Write {
    PodPtr pod;  // the informer's version when the write was made
    std::string reason;
    std::string message;
    std::optional<std::string> nominatedNode;  // nullopt: left as it is; "": cleared
    std::string diagnosis;                     // "": annotation left as it is

    // Whether this write, landing after `earlier`, would change nothing.
    [[nodiscard]] bool addsNothingTo(const Write& earlier) const {
      return reason == earlier.reason && message == earlier.message &&
             (!nominatedNode || nominatedNode == earlier.nominatedNode) &&
             (diagnosis.empty() || diagnosis == earlier.diagnosis);
    }
  };

  // `run` starts a task off the caller's thread (a TaskPool); `send` performs one write.
  StatusWrites(std::function<bool(std::function<void()>)> run,
               std::function<void(const Write&)> send);

  // Queues `w` for the pod with this uid unless it would change nothing. `inInformer`: the
  // informer's pod already holds `w`; consulted only when no write of the pod is queued or in
  // flight. Returns whether `w` was queued.
  bool submit(const std::string& uid, Write w, bool inInformer);

  // Pods with a write queued or in flight.
  [[nodiscard]] size_t pods() const;

 private:
  struct Slot {
    std::optional<Write> next;  // waiting behind the one in flight
    std::optional<Write> sending;
  };
  void drainPod(const std::string& uid);

  const std::function<bool(std::function<void()>)> run_;
  const std::function<void(const Write&)> send_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Slot> slots_;  // guarded by mu_; a slot lives while its task runs
};

}  // namespace ksched::scheduler
