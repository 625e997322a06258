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
// - backoff(pod) = podInitialBackoff * 2^(n-1), capped at podMaxBackoff, where n is the pod's
//   consecutive errors if its last attempt failed with an error, else its unschedulable count.
// - pop() takes the head of activeQ; when activeQ is empty it takes the head of backoffQ without
//   waiting for the backoff to end (upstream SchedulerPopFromBackoffQ), except pods whose last
//   attempt failed with an error: those always wait out their backoff.
// - From pop() until addUnschedulableIfNotPresent() or done(), a pod is "in flight": every
//   cluster event that some plugin registered is recorded meanwhile (upstream inFlightEvents), so
//   that an event arriving while the pod is being scheduled is not lost.
// - A failed pod goes to backoffQ if it failed with an error (no unschedulablePlugins) or if an
//   event recorded during its flight is worth requeuing it (below); else to unschedulablePods.
// - An event (resource, action, old and new object) is worth requeuing a pod if it is a wildcard
//   event (UnschedulableTimeout, ForceActivate), or if some plugin that rejected the pod
//   registered a matching event whose QueueingHint says kQueue for this pod (no hint, or a hint
//   that throws, counts as kQueue). Registrations are per profile (the pod's schedulerName); a
//   rejecting plugin with no registrations at all is interested in every event. Moved pods go to
//   backoffQ while still backing off, else to activeQ. The decision is queue/hints.h's judge(),
//   a pure function the plugins' QueueingHint tests call too.
// - An update of an unschedulable pod itself is classified (podSchedulingPropertiesChange) and
//   judged the same way against its rejecting plugins; a status-only update moves nothing.
// - Gated pods (a PreEnqueue plugin said no) wait in unschedulablePods with gatingPlugin set.
//   They are re-checked when update() changes them, on activate(), and on a cluster event only
//   if their gating plugin is listed in `pluginEvents` with a matching event. They never back
//   off and never time out.
// - PreEnqueue verdicts to report (SchedulerPreEnqueuePodStatus, when
// Options::onPreEnqueueRejection
//   is set): each time PreEnqueue runs, a rejection with a message other than the one last
//   reported for the pod (QueuedPodInfo::preEnqueueRejectionMessage, which starts from the pod's
//   PodScheduled=False NotReadyForScheduling condition) is reported and becomes the last one;
//   the same message again is not. A pod that passes after a reported rejection reports "" (its
//   condition is outdated). Not reported: rejections without a message, and SchedulingGates'
//   (the apiserver sets PodScheduled=False SchedulingGated on such pods itself).
// - Timestamps come from Options::clock, so tests use a fake clock; the flush thread's periods
//   are real time.
//
// Thread-safety: every public method may be called concurrently from informer threads, the
// scheduling thread and the flush thread. One mutex (mu_) guards the queues; the nominator has
// its own (lock order mu_ -> nominator). PreEnqueueFn, LessFn, Options::clock and
// Options::onIncoming and Options::onPreEnqueueRejection run with mu_ held: they must be fast,
// thread-safe, and must not call back into the queue.
//
// Ownership: the queue owns every queued QueuedPodInfo; pop() hands one to the caller (the pod is
// then "in flight" and in no queue) and addUnschedulableIfNotPresent() hands it back.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include <ksched/api/features.h>
#include <ksched/cluster_event.h>
#include <ksched/node_info.h>
#include <ksched/plugin.h>
#include <ksched/status.h>

#include "queue/hints.h"
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
inline constexpr std::string_view kEventPopFromBackoffQ = "PopFromBackoffQ";

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
  // Called for every QueueingHint run: plugin, event label, "Queue"/"QueueSkip"/"Error", seconds.
  // Feeds scheduler_queueing_hint_execution_duration_seconds.
  std::function<void(std::string_view plugin, std::string_view event, std::string_view hint,
                     double seconds)>
      onHint;
  // Called when the PreEnqueue verdict to report for a pod changed (see above): `message` is
  // the rejecting plugin's message, or "" when the pod passed after a reported rejection.
  // Returns whether it was reported; if not, the pod's last reported message stays as it was.
  // Null: nothing is reported.
  std::function<bool(const PodPtr& pod, const std::string& message)> onPreEnqueueRejection;
  // The scheduler's feature gates: how a pod's requests count (PodInfo, a scale-down).
  features::Gates features;
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
    size_t inFlightPods = 0;
    size_t inFlightEvents = 0;
    // Filled by detailedCounts() only.
    std::map<std::string, size_t, std::less<>> inFlightEventsByLabel;  // scheduler_inflight_events
    // (plugin, profile) -> unschedulable pods it rejected or gates (scheduler_unschedulable_pods).
    std::map<std::pair<std::string, std::string>, size_t> unschedulableByPlugin;
  };
  enum class QueueKind { kActive, kBackoff, kUnschedulable, kGated };

  // `less` defaults to prioritySortLess, `preEnqueue` to "always admit".
  SchedulingQueue(Options options, LessFn less, PreEnqueueFn preEnqueue, QueueingHintMap hints);
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
  // Blocks until activeQ or backoffQ has a pod, close() or `st` is stopped (then nullptr).
  // Increments the pod's attempts and the scheduling cycle, clears its unschedulablePlugins, and
  // marks it in flight until addUnschedulableIfNotPresent() or done().
  std::unique_ptr<QueuedPodInfo> pop(std::stop_token st);
  // Same, giving up after `maxWait` (nullptr).
  std::unique_ptr<QueuedPodInfo> popFor(std::stop_token st, std::chrono::milliseconds maxWait);
  // The cycle of the last pop(); read it right after pop() (single scheduling thread).
  [[nodiscard]] int64_t schedulingCycle() const;

  // GenericWorkload (pod_group_queue.cc). A new unscheduled pod of a PodGroup: add(), then the
  // UnscheduledPod/Add event for the unschedulable pods of its group (its siblings waiting at
  // PreEnqueue for minCount), under the same lock, so that the scheduling loop never pops the
  // pod that completes a gang before its siblings are let in. Siblings held back by the plugin
  // that holds the new pod back are not asked (they would be held again). `scope`: the
  // PodGroups (of the pod's namespace) whose pods are asked: its own, or with CompositePodGroups
  // every PodGroup of its tree.
  void addGroupMember(PodPtr pod, const std::set<std::string, std::less<>>& scope);
  // The queued pods of the PodGroups `groups` of `ns` (activeQ, backoffQ and unschedulablePods, not
  // those a PreEnqueue plugin holds back), taken out as pop() takes a pod (attempts counted,
  // in flight), in no particular order. The scheduling cycle advances by one per pod taken: the
  // pod-group cycle numbers its pods' attempts from the cycle of the pop() that began it.
  std::vector<std::unique_ptr<QueuedPodInfo>> popGroupMembers(
      const std::string& ns, const std::set<std::string, std::less<>>& groups);

  // Hands back a pod whose attempt failed. The caller sets unschedulablePlugins (empty for
  // errors) and must not hand back a pod that was deleted meanwhile. Records the failure time
  // (timestamp) as the backoff base, counts the failure (unschedulable or error), judges the
  // events recorded during its flight and ends the flight. Returns false and drops `pInfo` if
  // the uid is already queued.
  bool addUnschedulableIfNotPresent(std::unique_ptr<QueuedPodInfo> pInfo,
                                    int64_t podSchedulingCycle);
  // Ends the pod's flight (scheduled, or dropped): its recorded events are forgotten once no
  // older pod is in flight. Idempotent.
  void done(const std::string& uid);

  // An unscheduled pod changed. In activeQ/backoffQ: replaced in place. In unschedulablePods:
  // moved (backoffQ if still backing off, else activeQ through PreEnqueue) when a change
  // podSchedulingPropertiesChange() finds is worth it for a rejecting plugin (a gated pod: any
  // change but status), else replaced in place. In flight: the change is recorded as an event.
  // Not queued: added to activeQ like add(). Keeps the nomination in sync with
  // status.nominatedNodeName. `oldPod` may be null.
  void update(const PodPtr& oldPod, PodPtr newPod);
  // Removes the pod (by uid) from whichever queue holds it and drops its nomination.
  void remove(const api::Pod& pod);

  // Moves the unschedulable pods `event` is worth requeuing (see above) and records it for the
  // pods in flight. `oldObj`/`newObj`: the changed object (empty for an add's old version and a
  // delete's new one), handed to the hints.
  void moveAllToActiveOrBackoffQueue(const ClusterEvent& event, const EventObject& oldObj = {},
                                     const EventObject& newObj = {});
  // Moves these pods (by uid) from backoffQ/unschedulablePods to activeQ through PreEnqueue. A
  // pod in flight gets a ForceActivate event, so it is retried if its attempt fails. Pods in
  // activeQ or unknown are ignored.
  void activate(const std::vector<PodPtr>& pods);

  // Runs PreEnqueue again for every pod it holds back (as activate() does), so that their
  // verdicts are reported (the scheduler reports nothing until it schedules: a follower keeps
  // its queue warm but does not write).
  void recheckGated();

  // Moves pods whose backoff expired to activeQ. Called by the flush thread; public for tests.
  void flushBackoffQCompleted();
  // Moves pods that stayed in unschedulablePods longer than podMaxInUnschedulablePodsDuration
  // (event UnschedulableTimeout). Gated pods stay. Called by the flush thread; public for tests.
  void flushUnschedulablePodsLeftover();

  // Nominator (see nominator.h).
  void addNominatedPod(PodInfoPtr podInfo, const std::string& nodeName);
  void deleteNominatedPodIfExists(const api::Pod& pod);
  [[nodiscard]] std::vector<PodInfoPtr> nominatedPodsForNode(const std::string& nodeName) const;
  // Whether any pod is nominated to a node.
  [[nodiscard]] bool hasNominatedPods() const { return nominator_.size() != 0; }
  // The node the pod with this uid is nominated to in memory, or "".
  [[nodiscard]] std::string nominatedNodeFor(const std::string& uid) const;
  // The PreEnqueue rejection reported for the pod with this uid while a PreEnqueue plugin holds
  // it back; "" when it is not held back (or nothing was reported).
  [[nodiscard]] std::string preEnqueueRejectionOf(const std::string& uid) const;

  // For the scheduler_pending_pods gauge. O(unschedulable pods).
  [[nodiscard]] Counts counts() const;
  // counts() and the breakdowns. O(unschedulable pods + in-flight events).
  [[nodiscard]] Counts detailedCounts() const;
  // Every queued pod (upstream PendingPods, for debugging endpoints).
  [[nodiscard]] std::vector<PodPtr> pendingPods() const;
  // "namespace/name" of the pods in that queue: activeQ in pop order, backoffQ by expiry,
  // unschedulable/gated sorted by key.
  [[nodiscard]] std::vector<std::string> pendingPodKeysForTest(QueueKind kind) const;

 private:
  using Clock = std::chrono::steady_clock;
  using Entry = detail::Entry;

  // All private methods below require mu_ held.
  [[nodiscard]] Clock::time_point now() const;
  [[nodiscard]] Entry* find(const std::string& uid) const;
  // A new record of a pod entering the queue (timestamp now, the reported PreEnqueue rejection
  // from its condition).
  [[nodiscard]] std::unique_ptr<QueuedPodInfo> newInfo(PodInfoPtr podInfo) const;
  // Reports the PreEnqueue verdict `s` for `info` if it changed (Options::onPreEnqueueRejection).
  void reportPreEnqueue(QueuedPodInfo& info, const Status& s) const;
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
  [[nodiscard]] std::chrono::milliseconds backoffOf(const QueuedPodInfo& info) const;
  // Whether `event` may make the pod schedulable (see above; queue/hints.h decides, given the
  // judges resolved from hints_). Runs hints, reporting them to Options::onHint.
  [[nodiscard]] bool worthRequeuing(const QueuedPodInfo& info, const ClusterEvent& event,
                                    const EventObject& oldObj, const EventObject& newObj) const;
  [[nodiscard]] bool worthRequeuing(const Judges& judges, const QueuedPodInfo& info,
                                    const ClusterEvent& event, const EventObject& oldObj,
                                    const EventObject& newObj) const;
  // Whether some plugin registered an event matching `event` (else it is not recorded).
  [[nodiscard]] bool ofInterest(const ClusterEvent& event) const;
  void moveAllLocked(const ClusterEvent& event, const EventObject& oldObj,
                     const EventObject& newObj);
  // popLocked()'s bookkeeping of a pod taken out of the queue.
  void startFlight(QueuedPodInfo& info);
  void recordInFlight(const ClusterEvent& event, const EventObject& oldObj,
                      const EventObject& newObj);
  // Removes the pod's in-flight marker and the events no pod in flight needs any more.
  void endFlight(const std::string& uid);
  void incoming(std::string_view queue, std::string_view event) const;
  void flushLoop(std::stop_token st);

  // Constant after construction.
  const Options options_;
  const LessFn less_;
  const PreEnqueueFn preEnqueue_;
  const QueueingHintMap hints_;

  // Has its own mutex.
  Nominator nominator_;

  mutable std::mutex mu_;
  std::condition_variable_any popCv_;  // signalled when activeQ gains a pod or on close()
  // Guarded by mu_.
  std::unordered_map<std::string, std::unique_ptr<Entry>> entries_;  // uid -> every queued pod
  detail::EntryHeap active_;
  detail::EntryHeap backoff_;       // unschedulable pods backing off: pop() may take them early
  detail::EntryHeap errorBackoff_;  // pods whose last attempt failed with an error
  std::unordered_map<std::string, Entry*> unschedulable_;  // uid -> entry, gated pods included
  int64_t schedulingCycle_ = 0;
  // Pods in flight (uid -> its marker) and, after each marker, the events recorded since.
  struct InFlightItem {
    std::string uid;  // a pod's marker; empty for an event
    ClusterEvent event;
    EventObject oldObj;
    EventObject newObj;
  };
  std::list<InFlightItem> inFlight_;
  std::unordered_map<std::string, std::list<InFlightItem>::iterator> inFlightPods_;
  size_t inFlightEvents_ = 0;
  bool closed_ = false;

  // Serializes run()/close(); the flush thread sleeps on flushCv_ with flushMu_.
  std::mutex lifecycleMu_;
  std::mutex flushMu_;
  std::condition_variable_any flushCv_;
  // Guarded by lifecycleMu_.
  std::jthread flusher_;
};

}  // namespace ksched::queue
