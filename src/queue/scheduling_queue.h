// SchedulingQueue: the pods waiting to be scheduled (upstream PriorityQueue in
// pkg/scheduler/internal/queue/scheduling_queue.go).
//
// Where a pod can be (every queued pod is in exactly one place, keyed by uid):
//   activeQ            ready to schedule; pop() takes the head.
//   backoffQ           failed recently; flushBackoffQCompleted() moves it to activeQ on expiry.
//   unschedulablePods  failed and waits for an event, an update or the leftover timeout; gated
//                      pods (PreEnqueue said no) wait here too, with gatingPlugin set.
//   in flight          popped and being scheduled; in no queue until handed back.
//
// - activeQ is ordered by the profile's QueueSort (default PrioritySort: higher priority first,
//   then earlier QueuedPodInfo::timestamp). As upstream, timestamp is set when the pod is added
//   and again when an attempt fails, not when it moves between queues.
// - backoffQ is ordered by backoff expiry = last failure + backoff(attempts), where
//   backoff(n) = podInitialBackoff * 2^(n-1), capped at podMaxBackoff.
// - A failed pod goes to unschedulablePods, unless a move request happened since its cycle
//   started (moveRequestCycle >= podSchedulingCycle) or it failed with an error (no
//   unschedulablePlugins): then to backoffQ.
// - A cluster event moves an unschedulable pod if any plugin that rejected it registered a
//   matching event (a plugin absent from `pluginEvents` is interested in every event; the
//   wildcard events UnschedulableTimeout/ForceActivate move every pod). Moved pods go to backoffQ
//   while still backing off, else to activeQ.
// - Gated pods (a PreEnqueue plugin said no) wait in unschedulablePods with gatingPlugin set.
//   They are re-checked when update() changes them, on activate(), and on a cluster event only
//   if their gating plugin is listed in `pluginEvents` with a matching event. They never back
//   off and never time out.
// - Timestamps come from Options::clock, so tests use a fake clock; the flush thread's periods
//   are real time.
//
// Thread-safety: every public method may be called concurrently from informer threads, the
// scheduling thread and the flush thread. One mutex (mu_) guards the queues; the nominator has
// its own (lock order mu_ -> nominator). PreEnqueueFn, LessFn, Options::clock and
// Options::onIncoming run with mu_ held: they must be fast, thread-safe, and must not call back
// into the queue.
//
// Ownership: the queue owns every queued QueuedPodInfo; pop() hands one to the caller (the pod is
// then "in flight" and in no queue) and addUnschedulableIfNotPresent() hands it back.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include <ksched/cluster_event.h>
#include <ksched/node_info.h>
#include <ksched/plugin.h>
#include <ksched/status.h>

#include "queue/nominator.h"
#include "queue/pod_heap.h"

namespace ksched::queue {

// Labels of scheduler_queue_incoming_pods_total (upstream metrics).
inline constexpr std::string_view kQueueActive = "active";
inline constexpr std::string_view kQueueBackoff = "backoff";
inline constexpr std::string_view kQueueUnschedulable = "unschedulable";
inline constexpr std::string_view kQueueGated = "gated";
inline constexpr std::string_view kEventPodAdd = "PodAdd";
inline constexpr std::string_view kEventPodUpdate = "PodUpdate";
inline constexpr std::string_view kEventScheduleAttemptFailure = "ScheduleAttemptFailure";
inline constexpr std::string_view kEventBackoffComplete = "BackoffComplete";
inline constexpr std::string_view kEventForceActivate = "ForceActivate";

struct Options {
  std::chrono::milliseconds podInitialBackoff{1000};  // podInitialBackoffSeconds default 1
  std::chrono::milliseconds podMaxBackoff{10000};     // podMaxBackoffSeconds default 10
  std::chrono::milliseconds podMaxInUnschedulablePodsDuration{5 * 60 * 1000};
  std::chrono::milliseconds backoffFlushPeriod{1000};
  std::chrono::milliseconds unschedulableFlushPeriod{30000};
  // Default: steady_clock::now.
  std::function<std::chrono::steady_clock::time_point()> clock;
  // Called once per pod entering a queue: queue is one of kQueue*, event a kEvent* constant or
  // the ClusterEvent's label. Feeds scheduler_queue_incoming_pods_total{queue,event}.
  std::function<void(std::string_view queue, std::string_view event)> onIncoming;
};

// QueueSort: true if `a` pops before `b`.
using LessFn = std::function<bool(const QueuedPodInfo&, const QueuedPodInfo&)>;
// Runs the PreEnqueue plugins of the pod's profile; returns Success or the gating status with
// its plugin set (Status::plugin()).
using PreEnqueueFn = std::function<Status(const api::Pod&)>;

// Upstream PrioritySort: higher priority first, then the earlier timestamp.
[[nodiscard]] bool prioritySortLess(const QueuedPodInfo& a, const QueuedPodInfo& b);

// podInitialBackoff * 2^(attempts-1), capped at podMaxBackoff; attempts < 1 counts as 1.
[[nodiscard]] std::chrono::milliseconds backoffDuration(int attempts,
                                                        std::chrono::milliseconds initial,
                                                        std::chrono::milliseconds max);

class SchedulingQueue {
 public:
  struct Counts {
    size_t active = 0;
    size_t backoff = 0;
    size_t unschedulable = 0;  // not counting gated pods
    size_t gated = 0;
  };
  enum class QueueKind { kActive, kBackoff, kUnschedulable, kGated };

  // `less` defaults to prioritySortLess, `preEnqueue` to "always admit". `pluginEvents`: plugin
  // name -> the events it registered (Framework::enqueueEvents()).
  SchedulingQueue(Options options, LessFn less, PreEnqueueFn preEnqueue,
                  std::map<std::string, std::vector<ClusterEvent>> pluginEvents);
  // close()s.
  ~SchedulingQueue();
  SchedulingQueue(const SchedulingQueue&) = delete;
  SchedulingQueue& operator=(const SchedulingQueue&) = delete;

  // Starts the flush thread (backoff flush every backoffFlushPeriod, unschedulable leftover
  // flush every unschedulableFlushPeriod). Idempotent; no-op after close().
  void run();
  // Stops and joins the flush thread and wakes every pop(); later pops return nullptr at once.
  // Idempotent.
  void close();

  // A new unscheduled pod: runs PreEnqueue, then activeQ (or unschedulablePods, gated). Replaces
  // an entry with the same uid wherever it is (attempts start over).
  void add(PodPtr pod);
  // Blocks until activeQ has a pod, close() or `st` is stopped (then nullptr). Increments the
  // pod's attempts and the scheduling cycle, and clears its unschedulablePlugins.
  std::unique_ptr<QueuedPodInfo> pop(std::stop_token st);
  // Same, giving up after `maxWait` (nullptr).
  std::unique_ptr<QueuedPodInfo> popFor(std::stop_token st, std::chrono::milliseconds maxWait);
  // The cycle of the last pop(); read it right after pop() (single scheduling thread).
  [[nodiscard]] int64_t schedulingCycle() const;

  // Hands back a pod whose attempt from cycle `podSchedulingCycle` failed. The caller sets
  // unschedulablePlugins (empty for errors) and must not hand back a pod that was deleted
  // meanwhile. Records the failure time (timestamp) as the backoff base. Returns false and drops
  // `pInfo` if the uid is already queued (e.g. update() re-added it while in flight).
  bool addUnschedulableIfNotPresent(std::unique_ptr<QueuedPodInfo> pInfo,
                                    int64_t podSchedulingCycle);

  // An unscheduled pod changed. In activeQ/backoffQ: replaced in place. In unschedulablePods:
  // moved (backoffQ if still backing off, else activeQ through PreEnqueue) when isPodUpdated(),
  // else replaced in place. Not queued (new, or in flight): added to activeQ like add().
  // Keeps the nomination in sync with status.nominatedNodeName. `oldPod` may be null.
  void update(const PodPtr& oldPod, PodPtr newPod);
  // Removes the pod (by uid) from whichever queue holds it and drops its nomination.
  void remove(const api::Pod& pod);

  // Moves unschedulable pods interested in `event` (see above); sets moveRequestCycle to the
  // current scheduling cycle, so that pods in flight go to backoffQ when they fail.
  void moveAllToActiveOrBackoffQueue(const ClusterEvent& event);
  // An assigned pod was added/updated. Simple form: unlike upstream this does not narrow the
  // candidates to pods with affinity terms matching `pod`; plugin interest still applies.
  void assignedPodAdded(const api::Pod& pod);
  void assignedPodUpdated(const api::Pod& pod);
  // Moves these pods (by uid) from backoffQ/unschedulablePods to activeQ through PreEnqueue.
  // Pods in activeQ, in flight or unknown are ignored.
  void activate(const std::vector<PodPtr>& pods);

  // Moves pods whose backoff expired to activeQ. Called by the flush thread; public for tests.
  void flushBackoffQCompleted();
  // Moves pods that stayed in unschedulablePods longer than podMaxInUnschedulablePodsDuration
  // (event UnschedulableTimeout). Gated pods stay. Called by the flush thread; public for tests.
  void flushUnschedulablePodsLeftover();

  // Nominator (see nominator.h).
  void addNominatedPod(PodInfoPtr podInfo, const std::string& nodeName);
  void deleteNominatedPodIfExists(const api::Pod& pod);
  [[nodiscard]] std::vector<PodInfoPtr> nominatedPodsForNode(const std::string& nodeName) const;

  // For the scheduler_pending_pods gauge. O(unschedulable pods).
  [[nodiscard]] Counts counts() const;
  // Every queued pod (upstream PendingPods, for debugging endpoints).
  [[nodiscard]] std::vector<PodPtr> pendingPods() const;
  // "namespace/name" of the pods in that queue: activeQ in pop order, backoffQ by expiry,
  // unschedulable/gated sorted by key.
  [[nodiscard]] std::vector<std::string> pendingPodKeysForTest(QueueKind kind) const;
  [[nodiscard]] int64_t moveRequestCycleForTest() const;

 private:
  using Clock = std::chrono::steady_clock;
  using Entry = detail::Entry;

  // All private methods below require mu_ held.
  [[nodiscard]] Clock::time_point now() const;
  [[nodiscard]] Entry* find(const std::string& uid) const;
  Entry* newEntry(std::unique_ptr<QueuedPodInfo> info);
  void destroy(Entry* e);
  std::unique_ptr<QueuedPodInfo> popLocked();
  // Takes `e` out of its queue (the entry stays alive).
  void detach(Entry* e);
  void placeActive(Entry* e, std::string_view event);
  void placeBackoff(Entry* e, std::string_view event);
  void placeUnschedulable(Entry* e, std::string_view event, bool countIncoming);
  // Runs PreEnqueue: activeQ if it passes, else unschedulablePods gated. `e` is detached.
  bool moveToActiveQ(Entry* e, std::string_view event);
  // backoffQ while backing off, else moveToActiveQ. `e` is detached.
  void requeue(Entry* e, std::string_view event);
  [[nodiscard]] bool isBackingOff(const Entry& e) const;
  [[nodiscard]] bool interested(const std::string& plugin, const ClusterEvent& event) const;
  [[nodiscard]] bool gatedPodInterested(const Entry& e, const ClusterEvent& event) const;
  void movePods(const std::vector<Entry*>& entries, const ClusterEvent& event);
  void incoming(std::string_view queue, std::string_view event) const;
  void flushLoop(std::stop_token st);

  // Constant after construction.
  const Options options_;
  const LessFn less_;
  const PreEnqueueFn preEnqueue_;
  const std::map<std::string, std::vector<ClusterEvent>, std::less<>> pluginEvents_;

  // Has its own mutex.
  Nominator nominator_;

  mutable std::mutex mu_;
  std::condition_variable_any popCv_;  // signalled when activeQ gains a pod or on close()
  // Guarded by mu_.
  std::unordered_map<std::string, std::unique_ptr<Entry>> entries_;  // uid -> every queued pod
  detail::EntryHeap active_;
  detail::EntryHeap backoff_;
  std::unordered_map<std::string, Entry*> unschedulable_;  // uid -> entry, gated pods included
  int64_t schedulingCycle_ = 0;
  int64_t moveRequestCycle_ = -1;
  bool closed_ = false;

  // Serializes run()/close(); the flush thread sleeps on flushCv_ with flushMu_.
  std::mutex lifecycleMu_;
  std::mutex flushMu_;
  std::condition_variable_any flushCv_;
  // Guarded by lifecycleMu_.
  std::jthread flusher_;
};

}  // namespace ksched::queue
