// The scheduler's writes of pod status, sent off the scheduling thread:
//   - PodScheduled=False of a failed attempt (reason Unschedulable or SchedulerError), with
//     status.nominatedNodeName (preemption's nomination, or its clearing) and the diagnosis
//     annotation;
//   - PodScheduled=False NotReadyForScheduling of a pod a PreEnqueue plugin holds back, and the
//     removal of that condition once the pod passes (SchedulerPreEnqueuePodStatus): both
//     delayed (submitAfter), so a rejection that ends within the delay writes nothing;
//   - status.nominatedNodeName set to the node a pod waiting at Permit is being bound to, and
//     cleared once the pod is bound (NominatedNodeNameForExpectation): `binding` writes.
//
// Per pod, at most one write is in flight and at most one waits behind it; a newer write is
// merged over the waiting one (what it leaves alone keeps the waiting write's value), except
// that a `binding` write and any other replace each other whole: the pod's attempt is over.
// So writes of one pod land in the order they were made, and a pod retried faster than the
// apiserver answers queues one write, not one per attempt. A write that adds nothing to the one
// waiting or in flight for the pod is dropped; with none queued, one the informer's pod already
// holds (Options::held) is dropped too.
//
// Delayed writes: per pod at most one waits for its due time; a newer one replaces it and keeps
// its due time (a pod rejected again with another message does not push the write back). At
// its due time it is submitted as above. The timer thread ("status-delay") runs unless
// Options::timerThread is false; then sendDue() sends what is due (tests, with a fake clock).
//
// Upstream writes the status synchronously in the failure handler, so the informer has it by
// the pod's next attempt; here the informer may lag, and a write is compared with the one
// queued or in flight for the pod before the informer's copy.
//
// Thread-safety: every method may be called from any thread. submitAfter() is cheap and calls
// out to nothing (the queue calls it with its own lock held: lock order queue -> this). The
// functions in Options are called with no lock of this class held.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>

#include <ksched/node_info.h>

namespace ksched::scheduler {

class StatusWrites {
 public:
  using Clock = std::chrono::steady_clock;

  struct Write {
    // What the write does with the PodScheduled condition.
    enum class Condition : uint8_t {
      kLeave,          // leaves it alone
      kSet,            // PodScheduled=False with `reason` and `message`
      kClearNotReady,  // removes it if it is PodScheduled=False NotReadyForScheduling
    };

    PodPtr pod;  // the informer's version when the write was made
    Condition condition = Condition::kLeave;
    std::string reason;
    std::string message;
    std::optional<std::string> nominatedNode;  // nullopt: left as it is; "": cleared
    std::string diagnosis;                     // "": annotation left as it is
    // A nomination of a pod being bound, or its clearing once bound: sent while the pod is
    // assumed or bound, where the others are not.
    bool binding = false;

    // PodScheduled=False `reason`/`message` (a failed attempt, or NotReadyForScheduling).
    static Write podScheduledFalse(PodPtr pod, std::string reason, std::string message,
                                   std::optional<std::string> nominatedNode = std::nullopt,
                                   std::string diagnosis = "");
    // Removes PodScheduled=False NotReadyForScheduling.
    static Write clearNotReady(PodPtr pod);
    // status.nominatedNodeName = `node` ("" clears it) of a pod being bound or bound.
    static Write nomination(PodPtr pod, std::string node);
    // What `pod` says now, as a write: its PodScheduled=False condition (kClearNotReady when it
    // has none: no NotReadyForScheduling to remove), nomination and diagnosis annotation.
    static Write heldBy(const PodPtr& pod);

    // Whether this write, landing after `earlier`, would change nothing.
    [[nodiscard]] bool addsNothingTo(const Write& earlier) const;
    // This write merged over `waiting` (see above).
    void mergeOver(const Write& waiting);
  };

  struct Options {
    // Starts a task off the caller's thread (a TaskPool); false when shutting down.
    std::function<bool(std::function<void()>)> run;
    // Performs one write.
    std::function<void(const Write&)> send;
    // Whether the informer's pod already holds the write; consulted when no write of the pod is
    // queued or in flight. Null: never.
    std::function<bool(const Write&)> held;
    // Default: steady_clock::now. A fake clock goes with timerThread = false.
    std::function<Clock::time_point()> clock;
    // Runs the "status-delay" thread, which submits delayed writes when they are due.
    bool timerThread = true;
  };

  explicit StatusWrites(Options options);
  // stop()s.
  ~StatusWrites();
  StatusWrites(const StatusWrites&) = delete;
  StatusWrites& operator=(const StatusWrites&) = delete;

  // Queues `w` for the pod with this uid unless it would change nothing. Returns whether it was
  // queued. `consultHeld` false: Options::held is not asked (the feed is known to lag behind a
  // write of the pod).
  bool submit(const std::string& uid, Write w, bool consultHeld = true);
  // Queues `w` for `delay` from now (see above). A zero delay submits at once.
  void submitAfter(const std::string& uid, Write w, std::chrono::milliseconds delay);
  // Before a pod's binding: drops the write waiting for the pod and waits for the one in
  // flight. Returns whether the dropped write set a nomination (it was never sent).
  bool settle(const std::string& uid);
  // Submits the delayed writes that are due. The timer thread calls it.
  void sendDue();
  // Stops the timer thread and drops the delayed writes. Idempotent.
  void stop();

  // Pods with a write queued or in flight.
  [[nodiscard]] size_t pods() const;
  // Pods with a delayed write.
  [[nodiscard]] size_t delayed() const;

 private:
  struct Slot {
    std::optional<Write> next;  // waiting behind the one in flight
    std::optional<Write> sending;
    uint64_t sent = 0;  // writes this slot's task finished
  };
  struct Delayed {
    Write write;
    Clock::time_point due;
  };
  void drainPod(const std::string& uid);
  void timerLoop(std::stop_token st);
  [[nodiscard]] Clock::time_point now() const;

  // Constant after construction.
  const Options options_;

  mutable std::mutex mu_;
  std::condition_variable slotCv_;       // a slot's write finished
  std::condition_variable_any timerCv_;  // a delayed write was added
  // Guarded by mu_; a slot lives while its task runs.
  std::unordered_map<std::string, Slot> slots_;
  std::unordered_map<std::string, Delayed> delayed_;
  std::set<std::pair<Clock::time_point, std::string>> dueOrder_;  // (due, uid) of delayed_
  bool stopped_ = false;

  std::jthread timer_;
};

}  // namespace ksched::scheduler
