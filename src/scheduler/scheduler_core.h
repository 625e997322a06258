// SchedulerCore: the scheduler without its connection to a cluster. Holds the cache, the queue
// and the profiles' frameworks, runs the serial scheduling loop and the binder pool, and
// reports outcomes (PodScheduled condition, events).
//
// The seam: the core reaches the cluster only through
//   - a ClusterApi (include/ksched/cluster_api.h): bindings (through the Bind plugins, which get
//     it from Handle::api()), preemption's deletions and the pod status patches (status_writes.h:
//     PodScheduled=False, NotReadyForScheduling, nominatedNodeName);
//   - an EventSink (event_sink.h): Events, their series, their flush at shutdown;
// and learns about it only through its feed: onPod*/onNode* (pods and nodes as they are added,
// changed and deleted) and onClusterEvent (the other kinds plugins read, through the listers
// the Environment gives). It owns no informer and no HTTP client. The live daemon
// (scheduler.h's Scheduler) feeds it from informers and plugs in the REST client; a simulator
// an in-memory cluster; unit tests FakeClusterApi and a recording sink.
//
// Threads (all owned, all joined by stop(); none with Options::synchronous but the permit
// timer, whose work is handed back to runNext()):
//   sched                 the one scheduling thread: pop -> cycle -> hand to binders
//   binder-N              binding cycles (PreBind, Bind, PostBind; a pod waiting at Permit
//                         gets one only once its wait is decided)
//   permit-timer          ends Permit waits at their deadline (per profile, on first use)
//   plugin-work-N         plugins' Handle::runAsync work (preemption's deletions), per profile
//   status-N              pod status patches (status_writes.h)
//   status-delay          submits the delayed status writes (PreEnqueue rejections) when due
//   cache cleanup         expires assumed pods whose binding never showed up
//   queue flush, parallel-N (Filter/Score pool)
//   shutdown-timer        during stop() only: calls Environment::cutOff at the deadline
// The scheduling thread never waits on the cluster: bindings, status patches and events are
// handed to other threads.
//
// Status writes (status_writes.h), per gate:
//   SchedulerPreEnqueuePodStatus: a pod a PreEnqueue plugin holds back gets PodScheduled=False
//     NotReadyForScheduling with the plugin's message, and a Warning NotReadyForScheduling
//     Event, once the rejection has lasted Options::preEnqueueStatusDelay (the queue reports
//     only changes of the message); when the pod passes, the condition is removed after the
//     same delay unless the pod's attempt replaced it first.
//   NominatedNodeNameForExpectation: a pod that waits at Permit, or whose PreBind plugins have
//     work (PreBindPlugin::preBindPreFlight), gets status.nominatedNodeName = its node before it
//     waits or PreBind runs (the Permit case asynchronously, from the scheduling thread; the
//     PreBind case from its binder thread, before PreBind); the binding cycle lets a nomination
//     still in flight land before it binds. A pod seen bound with a nomination left (the
//     apiserver clears it at binding since 1.35, not before) gets it cleared.
//   Neither is written before startScheduling(): a follower writes nothing.
//
// The feed may be called from any thread, but calls for pods (and, apart, for nodes) must come
// in the order the changes happened, as one informer delivers them.
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <shared_mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <ksched/api/node.h>
#include <ksched/api/pod.h>
#include <ksched/cluster_api.h>
#include <ksched/extender.h>
#include <ksched/registry.h>

#include "cache/cache.h"
#include "cache/snapshot.h"
#include "config/profile.h"
#include "config/scheduler_config.h"
#include "framework/framework.h"
#include "framework/parallelizer.h"
#include "metrics/metrics.h"
#include "queue/scheduling_queue.h"
#include "scheduler/algorithm.h"
#include "scheduler/event_sink.h"
#include "scheduler/explain.h"
#include "scheduler/group_cycle.h"
#include "scheduler/parked_bindings.h"
#include "scheduler/pod_group_trace.h"
#include "scheduler/status_writes.h"
#include "util/task_pool.h"

namespace ksched::scheduler {

// Bound, or on its way to be: the pod names a node.
inline bool assigned(const api::Pod& p) { return !p.spec.nodeName.empty(); }

struct Options {
  // The feature gates the core and its frameworks run with (--feature-gates). `profiles` are
  // built with the same gates (config::frameworkProfiles of a configuration whose featureGates
  // they are, or config::defaultProfile(features)).
  features::Gates features;
  // Default: one default profile with the default gates.
  std::vector<config::Profile> profiles{config::defaultProfile(features::Gates{})};
  int parallelism = 16;                  // Filter/Score threads (capped by the machine's cores)
  int32_t percentageOfNodesToScore = 0;  // 0 = adaptive
  int32_t percentageOfPlacementsToScore = 0;  // pod groups' placements; 0 = adaptive
  queue::Options queue;
  int binderThreads = 16;
  // With this many binding cycles waiting for a binder thread, the scheduling loop pauses
  // before its next pod until half as many are left: each holds an assumed copy of its pod and
  // its CycleState, and a backlog scheduled faster than it is bound would hold all at once.
  // 0: no pause.
  size_t maxQueuedBindings = 256;
  std::string instanceId = "ksched";  // reportingInstance of events
  // Where the scheduler_* metrics go (plugins' too, through Handle::metrics()); null: nowhere.
  // Must outlive the Scheduler.
  metrics::SchedulerMetrics* metrics = nullptr;
  // Unschedulable attempts write diagnosisAnnotation() into the pod's ksched.io/diagnosis
  // annotation, in the same PATCH as the PodScheduled condition.
  bool diagnosisAnnotation = false;
  // HTTP extenders (KubeSchedulerConfiguration.extenders), called in this order.
  std::vector<config::Extender> extenders;
  // stop(): how long in-flight bindings, plugins' work and queued events may still take before
  // the requests still going are cut off and the events left are dropped.
  std::chrono::milliseconds shutdownGracePeriod{5000};
  // Events sent at once (ApiEventRecorder::Options::senders).
  int eventSenders = 8;
  // SchedulerPreEnqueuePodStatus: how long a PreEnqueue verdict waits before the pod's status
  // says it (upstream: 5 s, fixed). Options::synchronous writes at once.
  std::chrono::milliseconds preEnqueueStatusDelay{5000};

  // Seeds the draw among nodes with the same top score and the plugins' Handle::randomSeed();
  // nullopt: random. (With parallelism 1, a seeded core decides the same way every run.)
  std::optional<uint64_t> seed;
  // No scheduling thread and no binder threads: the caller runs each cycle with runNext(), which
  // also runs on the caller's thread what the cycle handed on (its binding cycle, the status
  // write). startScheduling() then only marks the core started. For simulate.
  bool synchronous = false;
  // A pod popped for its attempt number maxAttempts + 1 leaves the queue (it stays pending, and
  // a later change of the pod queues it again). 0: no limit. For simulate, whose run ends when
  // the queue is empty.
  int maxAttempts = 0;
  // Called on the scheduling thread with each cycle's choice, before the pod is assumed; when
  // set, ScheduleResult::tiedWith is filled.
  std::function<void(const api::Pod&, const ScheduleResult&)> onSuggestedHost;
  // Called on the scheduling thread at the end of each pod-group cycle with what it did
  // (pod_group_trace.h); when unset, no trace is kept.
  std::function<void(const PodGroupTrace&)> onPodGroupCycle;
};

struct ShutdownReport {
  uint64_t eventsSent = 0;          // over the scheduler's life
  uint64_t eventsDropped = 0;       // queued events not sent within the grace period
  uint64_t eventsDroppedTotal = 0;  // events not sent over the scheduler's life, those included
};

struct Stats {
  uint64_t attempts = 0;
  uint64_t scheduled = 0;      // binding succeeded
  uint64_t unschedulable = 0;  // attempts that found no node
  uint64_t errors = 0;         // attempts or bindings that failed with an error
  uint64_t bindConflicts = 0;  // bindings refused with 409 (bound already, or the apiserver's
                               // storage failed) or 404 (gone)
};

// What the core is plugged into. Everything not owned must outlive the core.
struct Environment {
  ClusterApi* api = nullptr;    // required
  EventSink* events = nullptr;  // required
  // What plugins list (namespaces, workloads, PDBs, storage); null: nothing.
  const ClusterListers* listers = nullptr;
  // Starts a watch a plugin asks for (Handle::watchObjects) while the frameworks are built;
  // null: an empty, synced store.
  std::function<std::shared_ptr<const ObjectStore>(const ObjectWatch&, ObjectEventHandlers)>
      watchObjects;
  // Called once by stop() at its deadline, if it is still running: ends the calls to the
  // cluster still in flight (the live daemon aborts its REST clients). Null: none; stop() then
  // waits for them.
  std::function<void()> cutOff;
};

class SchedulerCore {
 public:
  // Builds the profiles' frameworks. Throws framework::FrameworkError on an invalid profile or
  // extender.
  SchedulerCore(Environment env, const Registry& registry, Options options);
  ~SchedulerCore();
  SchedulerCore(const SchedulerCore&) = delete;
  SchedulerCore& operator=(const SchedulerCore&) = delete;

  // Starts the scheduling loop and the queue's flush thread (once the feed has caught up with
  // the cluster).
  void startScheduling();
  // Stops popping, drains the binders, plugins' work and status writers and sends queued
  // events, until `deadline` (Environment::cutOff runs then if it is not done; the events left
  // are dropped). Idempotent (later calls return the first one's report).
  ShutdownReport stop(std::chrono::steady_clock::time_point deadline);
  // The same with the deadline Options::shutdownGracePeriod from now.
  ShutdownReport stop();

  // ---- the feed ----
  // Pods of the cluster, any scheduler, bound or not. Plugins' pod handlers
  // (Handle::addPodEventHandlers) run first.
  void onPodAdd(const PodPtr& pod);
  void onPodUpdate(const PodPtr& oldPod, const PodPtr& newPod);
  void onPodDelete(const PodPtr& pod);
  void onNodeAdd(const NodePtr& node);
  void onNodeUpdate(const NodePtr& oldNode, const NodePtr& newNode);
  void onNodeDelete(const NodePtr& node);
  // A change of another kind the listers hold (e.g. {kPersistentVolumeClaim, kAdd}): pods
  // waiting for it are retried.
  void onClusterEvent(const ClusterEvent& event, const EventObject& oldObj,
                      const EventObject& newObj);

  // Options::synchronous: pops the next pod (activeQ, else backoffQ) and runs its scheduling
  // cycle, then the binding cycles and status writes handed on, on this thread. False when no
  // pod was queued.
  bool runNext();
  // Runs what cycles handed on (binding cycles, status writes) on this thread until none is
  // left. Options::synchronous only.
  void runHandedOn();
  // Rejects every pod waiting at Permit with `message`, as a timeout would (their binding
  // cycles then fail). Returns how many.
  size_t rejectWaitingPods(const std::string& message);

  [[nodiscard]] Stats stats() const;
  [[nodiscard]] queue::SchedulingQueue& queue() { return *queue_; }
  [[nodiscard]] cache::Cache& cache() { return cache_; }
  // The pod "<namespace>/<name>" as the feed last gave it, or nullptr.
  [[nodiscard]] PodPtr pod(const std::string& key) const;
  [[nodiscard]] const ClusterListers& listers() const;

  // Explain (scheduler/explain.h) the pod `ns`/`name` as the feed last gave it, against a
  // snapshot of the cache taken for the request, with frameworks of its own (built on first
  // use; no API client, no events, no extenders). Any thread; one request at a time; the
  // scheduling loop is not held. `node` restricts it to one node. Throws ExplainError: 404 for
  // an unknown pod or node, 400 for a pod no profile of this scheduler schedules.
  [[nodiscard]] Explanation explain(const std::string& ns, const std::string& name,
                                    const std::string& node = "");
  // What the pod's profile's PreEnqueue plugins say of it now, run as the queue runs them:
  // Success, or the status (with its plugin) that keeps the pod out of activeQ. For saying why
  // a pending pod was never attempted. Any thread; Success for a pod of no profile.
  [[nodiscard]] Status preEnqueueStatus(const api::Pod& pod) const;

 private:
  struct BindTask;

  [[nodiscard]] framework::Framework* frameworkFor(const api::Pod& pod) const;
  // Options::synchronous: queues `task` for runHandedOn().
  bool handOn(std::function<void()> task);
  [[nodiscard]] bool responsibleFor(const api::Pod& pod) const;

  // scheduling_cycle.cc
  void loop(std::stop_token st);
  void scheduleOne(std::unique_ptr<QueuedPodInfo> qpi);
  // scheduleOne, where an exception fails the attempt as an error instead of the scheduler.
  void scheduleGuarded(std::unique_ptr<QueuedPodInfo> qpi);
  // Assumes the queued pod on `node` in the cache (`assumed`: its assumed PodInfo, which
  // takes the queued one's requests: they do not depend on the node) and runs Reserve; a
  // Reserve failure is unreserved again (the pod stays assumed: failPlaced forgets it).
  Status assumeAndReserve(framework::Framework& fwk, CycleState& state, const PodInfo& queued,
                          const std::string& node, PodInfoPtr& assumed);
  // Permit for an assumed, reserved pod; a rejection is unreserved.
  Status runPermit(framework::Framework& fwk, CycleState& state, const api::Pod& assumed,
                   const std::string& node);
  // A placed pod that failed assume, Reserve or Permit: forgotten (if assumed) and requeued.
  void failPlaced(framework::Framework& fwk, std::unique_ptr<QueuedPodInfo> qpi, const Status& s,
                  bool wasAssumed, int64_t cycle, std::chrono::steady_clock::time_point start);
  // Starts the binding cycle of a pod through Permit: now, or once its wait (`waits`) is decided.
  void handToBinding(framework::Framework& fwk, std::unique_ptr<QueuedPodInfo> qpi,
                     PodInfoPtr assumed, const std::string& node, CycleState state, int64_t cycle,
                     std::chrono::steady_clock::time_point start, bool waits);
  void bindingCycle(std::shared_ptr<BindTask> task);
  // PreBind from the plugin that parked the binding (`resume` set) or from the first; a Wait
  // parks it (or, synchronous, is decided at once).
  void preBind(std::shared_ptr<BindTask> task, std::optional<PreBindPlugin::Resume> resume);
  void resumeParked(const std::shared_ptr<BindTask>& task, ParkedBindings::Why why);
  // Bind and PostBind after a successful PreBind, or the failure of any step before.
  void finishBinding(std::shared_ptr<BindTask> task, Status s);
  // Hands the binding cycle to the binder pool (or, shutting down, forgets the assumed pod).
  void submitBinding(std::shared_ptr<BindTask> task);
  // Requeues the pod (unless it is gone or bound meanwhile), records FailedScheduling and
  // patches PodScheduled=False when the message changed.
  // `nominatedNode`: set status.nominatedNodeName to it ("" clears it) in the same patch.
  // `start`: when the attempt began (scheduler_schedule_attempts_total and its duration).
  // `diagnosis`: the ksched.io/diagnosis annotation to write with it ("" = none).
  // `nominationWritten`: the binding cycle wrote a nomination the feed may not show yet (the
  // patch is sent even if the feed seems to hold it).
  void handleFailure(framework::Framework& fwk, std::unique_ptr<QueuedPodInfo> qpi,
                     const Status& status, const std::string& message, int64_t cycle,
                     std::chrono::steady_clock::time_point start,
                     const std::optional<std::string>& nominatedNode = std::nullopt,
                     const std::string& diagnosis = "", bool nominationWritten = false);
  // Counts an attempt of a pod of `fwk`'s profile that began at `start`.
  void observeAttempt(const framework::Framework& fwk, metrics::Result result,
                      std::chrono::steady_clock::time_point start) const;

  // pod_group_cycle.cc (GenericWorkload)
  friend class GroupPlacer;
  // Keeps podGroups_ from the PodGroup watch (shared with the plugins that ask for it) and, with
  // the CompositePodGroup gate, composites_ from the CompositePodGroup watch.
  void watchPodGroups();
  [[nodiscard]] std::shared_ptr<const api::PodGroup> podGroupOf(const std::string& ns,
                                                                const std::string& name) const;
  // The tree `podGroup` (in `ns`) belongs to, from its root: the PodGroup alone without the
  // CompositePodGroup gate or a parent. "" or why the tree cannot be scheduled.
  [[nodiscard]] std::string groupTree(const std::string& ns, const std::string& podGroup,
                                      GroupNode& root) const;
  // The PodGroups (leaves) of the tree `pod`'s PodGroup belongs to: the pods scheduled with it.
  [[nodiscard]] std::set<std::string, std::less<>> groupScope(const api::Pod& pod) const;
  // The pod-group cycle of `first`'s PodGroup (its tree with the CompositePodGroup gate): the
  // other queued pods of it are taken out of the queue and all are placed on one snapshot, or
  // none (pod_group_plugin.h).
  void schedulePodGroup(framework::Framework& fwk, std::unique_ptr<QueuedPodInfo> first,
                        int64_t cycle);
  // The pod-group cycle's outcome for the pods of `leaf` (whose status is the one it ends with).
  void submitGroup(framework::Framework& fwk, GroupNode& leaf, std::vector<GroupMember>& members,
                   const std::map<std::string, std::string>& nominations,
                   const std::set<std::string, std::less<>>& plugins,
                   std::chrono::steady_clock::time_point start, PodGroupTrace* trace);
  // Explain's group section for `pod` of PodGroup `group`: the policy and each member's state
  // (GroupExplanation::cycle is left to the caller). Any thread.
  [[nodiscard]] GroupExplanation explainGroup(const api::Pod& pod, const std::string& group) const;
  // PodGroupScheduleFn: the group's pods placed on `nodes` (a changed copy of the snapshot)
  // without the cache, for workload-aware preemption.
  Status placeOnScratch(framework::Framework& fwk, const PodGroupInfo& info,
                        const NodeInfoLister& nodes,
                        std::vector<std::pair<PodPtr, std::string>>& proposed);
  // The group's PodGroupInitiallyScheduled (CompositePodGroupInitiallyScheduled) condition
  // (never turned back from True), written on a status thread when it changes.
  void writePodGroupCondition(const api::PodGroup& pg, std::string status, std::string reason,
                              std::string message);
  void writePodGroupCondition(const api::CompositePodGroup& cpg, std::string status,
                              std::string reason, std::string message);
  // `next`: type, status, reason and message; the rest is filled here.
  void writeGroupCondition(const std::string& resource, const std::string& apiVersion,
                           const api::ObjectMeta& meta, const api::PodGroupStatus& current,
                           api::Condition next);

  // pod_status.cc
  // Performs one status write (StatusWrites::Options::send), on a status-N thread or, for the
  // nomination before PreBind, on the binder thread.
  void sendStatusWrite(const StatusWrites::Write& w);
  // Sends the strategic merge patch `body` to the pod's status on the condition that the pod
  // is still the version the feed has, or, after a conflict, still unbound (read once).
  ApiResult patchUnlessBound(const api::Pod& current, nlohmann::json body);
  // Whether the fed version of the pod already holds `w` (or the pod is gone).
  [[nodiscard]] bool heldByFeed(const StatusWrites::Write& w) const;
  // The queue's Options::onPreEnqueueRejection (with the queue's lock held): false (nothing
  // written) until this instance schedules.
  bool onPreEnqueueRejection(const PodPtr& pod, const std::string& message);

  // The fed version of `pod` if it is still the same pod and not bound; else nullptr.
  [[nodiscard]] PodPtr pendingVersion(const api::Pod& pod) const;

  // resize_preemption.cc (InPlacePodVerticalScalingSchedulerPreemption, KEP 5836)
  // With the gate: `pod` is on a node and the kubelet deferred its in-place resize.
  [[nodiscard]] bool resizeDeferred(const api::Pod& pod) const;
  // The feed's part: an assigned pod of this scheduler enters the queue when its resize is
  // deferred (added so, or updated into it), is updated there while it stays so and leaves it
  // when the condition clears or the pod goes. `oldPod` is null for an add, `newPod` for a
  // delete.
  void feedResizeDeferred(const PodPtr& oldPod, const PodPtr& newPod);
  // The end of such a pod's cycle, whatever its outcome (it fits and waits for the kubelet,
  // DefaultPreemption made room, nothing can, an error): back to the unschedulable pods while
  // it stays deferred; no nomination, no FailedScheduling event, no status patch (its
  // PodScheduled stays True).
  void requeueResizeDeferred(framework::Framework& fwk, std::unique_ptr<QueuedPodInfo> qpi,
                             const Status& status, int64_t cycle,
                             std::chrono::steady_clock::time_point start);

  // Constant after construction.
  const Environment env_;
  const Options options_;
  // The gates, read once.
  const bool preEnqueueStatus_;
  const bool nominateForExpectation_;
  const bool resizePreemption_;  // InPlacePodVerticalScalingSchedulerPreemption
  ExtenderList extenders_;
  framework::ThreadPoolParallelizer parallelizer_;
  std::vector<std::unique_ptr<framework::Framework>> frameworks_;
  std::map<std::string, framework::Framework*, std::less<>> byName_;
  std::map<const framework::Framework*, const metrics::ProfileMetrics*> profileMetrics_;
  size_t metricsRefresher_ = 0;
  // Plugins' pod handlers (Handle::addPodEventHandlers); constant once the frameworks are built.
  std::vector<PodEventHandlers> pluginPodHandlers_;

  cache::Cache cache_;
  std::unique_ptr<queue::SchedulingQueue> queue_;
  // Pods as fed, by "<namespace>/<name>": whether a failed pod is still pending, explain.
  mutable std::shared_mutex podsMu_;
  std::unordered_map<std::string, PodPtr> pods_;  // guarded by podsMu_

  // Scheduling thread only.
  cache::Snapshot snapshot_;
  Algorithm algorithm_;
  std::minstd_rand sampler_{std::random_device{}()};

  std::atomic<uint64_t> attempts_{0}, scheduled_{0}, unschedulable_{0}, errors_{0},
      bindConflicts_{0};
  // startScheduling() was called: this instance writes (a follower only keeps its state warm).
  std::atomic<bool> scheduling_{false};
  std::mutex stopMu_;
  bool stopped_ = false;       // guarded by stopMu_
  ShutdownReport stopReport_;  // guarded by stopMu_

  // What plugins share across profiles (Handle::shared), explain's frameworks included.
  std::shared_ptr<framework::SharedObjects> shared_ = std::make_shared<framework::SharedObjects>();
  // Explain: its own snapshot and frameworks, built on first use.
  const Registry registry_;
  std::mutex explainMu_;
  std::unique_ptr<framework::ThreadPoolParallelizer> explainParallelizer_;  // guarded
  std::map<std::string, std::unique_ptr<framework::Framework>, std::less<>>
      explainFrameworks_;            // guarded by explainMu_
  cache::Snapshot explainSnapshot_;  // guarded by explainMu_

  // Declared before statusWriters_, whose tasks use it until the pool is drained.
  StatusWrites statusWrites_;
  // GenericWorkload: pods of a PodGroup are scheduled in pod-group cycles.
  const bool podGroupCycles_;
  mutable std::mutex podGroupsMu_;
  std::unordered_map<std::string, std::shared_ptr<const api::PodGroup>>
      podGroups_;  // guarded by podGroupsMu_; "<namespace>/<name>"
  std::unordered_map<std::string, std::shared_ptr<const api::CompositePodGroup>>
      composites_;                            // guarded by podGroupsMu_; "<namespace>/<name>"
  std::set<std::string> podGroupsScheduled_;  // guarded by podGroupsMu_: uids turned True
  std::shared_ptr<const ObjectStore> podGroupWatch_, compositeWatch_;
  util::TaskPool binders_;
  // Bindings waiting at PreBind without a binder thread.
  ParkedBindings parked_;
  util::TaskPool statusWriters_;
  // Options::synchronous: work handed on, run by runHandedOn() (the permit timer may add to it).
  std::mutex handedOnMu_;
  std::deque<std::function<void()>> handedOn_;  // guarded by handedOnMu_
  std::stop_source syncStop_;
  std::jthread loop_;
};

}  // namespace ksched::scheduler
