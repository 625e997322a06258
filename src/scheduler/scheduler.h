// Scheduler: the daemon's core. Wires informers into the cache and the queue, runs the serial
// scheduling loop and the binder pool, and reports outcomes (pod condition, events).
//
// Threads (all owned, all joined by stop()):
//   refl-Pod, refl-Node   informers; their handlers update the cache and the queue
//   refl-<Kind>           watches plugins asked for (Handle::watchObjects)
//   sched                 the one scheduling thread: pop -> cycle -> hand to binders
//   binder-N              binding cycles (PreBind, Bind, PostBind; a pod waiting at Permit
//                         gets one only once its wait is decided)
//   permit-timer          ends Permit waits at their deadline (per profile, on first use)
//   status-N              PodScheduled condition patches for failed attempts
//   cache cleanup         expires assumed pods whose binding never showed up
//   queue flush, events, parallel-N (Filter/Score pool)
// The scheduling thread never waits on the network: bindings, status patches and events are
// handed to other threads.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <ksched/api/node.h>
#include <ksched/api/pod.h>
#include <ksched/registry.h>

#include "cache/cache.h"
#include "cache/snapshot.h"
#include "client/rest_client.h"
#include "config/profile.h"
#include "config/scheduler_config.h"
#include "extender/extender.h"
#include "framework/framework.h"
#include "framework/parallelizer.h"
#include "informer/informer.h"
#include "metrics/metrics.h"
#include "queue/scheduling_queue.h"
#include "scheduler/algorithm.h"
#include "scheduler/event_recorder.h"
#include "scheduler/explain.h"
#include "scheduler/informer_listers.h"
#include "scheduler/object_informer.h"
#include "scheduler/status_writes.h"
#include "util/task_pool.h"

namespace ksched::scheduler {

struct Options {
  std::vector<config::Profile> profiles{config::defaultProfile()};
  int parallelism = 16;                  // Filter/Score threads (capped by the machine's cores)
  int32_t percentageOfNodesToScore = 0;  // 0 = adaptive
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
};

struct ShutdownReport {
  uint64_t eventsSent = 0;     // over the scheduler's life
  uint64_t eventsDropped = 0;  // queued events not sent within the grace period
};

struct Stats {
  uint64_t attempts = 0;
  uint64_t scheduled = 0;      // binding succeeded
  uint64_t unschedulable = 0;  // attempts that found no node
  uint64_t errors = 0;         // attempts or bindings that failed with an error
  uint64_t bindConflicts = 0;  // bindings refused with 409 (bound already, or the apiserver's
                               // storage failed) or 404 (gone)
};

class Scheduler {
 public:
  // `client` serves informers, bindings and status patches; `eventsClient` only events (its own
  // limiter). Throws framework::FrameworkError on an invalid profile or extender.
  Scheduler(client::RestClient& client, client::RestClient& eventsClient, const Registry& registry,
            Options options);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Starts informers and waits up to `syncTimeout` for them to sync; false if they did not.
  bool startInformers(std::chrono::milliseconds syncTimeout);
  [[nodiscard]] bool informersSynced() const;
  // Starts the scheduling loop and the queue's flush thread (after startInformers).
  void startScheduling();
  // Stops popping, drains the binders, plugins' work and status writers, sends queued events,
  // stops informers — all within Options::shutdownGracePeriod: at its end the requests still
  // in flight on both clients are cut off (RestClient::abort) and the events left dropped.
  // Returns in about the grace period whether or not the apiserver answers; both clients are
  // aborted (RestClient::abort) when it returns. Idempotent (later calls return the first one's
  // report).
  ShutdownReport stop();

  [[nodiscard]] Stats stats() const;
  [[nodiscard]] queue::SchedulingQueue& queue() { return *queue_; }
  [[nodiscard]] ApiEventRecorder& events() { return events_; }
  [[nodiscard]] cache::Cache& cache() { return cache_; }
  [[nodiscard]] size_t nodeCount() const { return nodes_.size(); }
  // The node as the informer last saw it, or nullptr.
  [[nodiscard]] NodePtr node(const std::string& name) const { return nodes_.get(name); }
  [[nodiscard]] size_t podCount() const { return pods_.size(); }
  [[nodiscard]] const ClusterListers& listers() const { return listers_; }

  // Explain (scheduler/explain.h) the pod `ns`/`name` as the informers last saw it, against a
  // snapshot of the cache taken for the request, with frameworks of its own (built on first
  // use; no API client, no events, no extenders). Any thread; one request at a time; the
  // scheduling loop is not held. `node` restricts it to one node. Throws ExplainError: 404 for
  // an unknown pod or node, 400 for a pod no profile of this scheduler schedules.
  [[nodiscard]] Explanation explain(const std::string& ns, const std::string& name,
                                    const std::string& node = "");

 private:
  struct BindTask;

  [[nodiscard]] framework::Framework* frameworkFor(const api::Pod& pod) const;
  [[nodiscard]] bool responsibleFor(const api::Pod& pod) const;

  void onPodAdd(const PodPtr& pod);
  void onPodUpdate(const PodPtr& oldPod, const PodPtr& newPod);
  void onPodDelete(const PodPtr& pod);
  void onNodeAdd(const NodePtr& node);
  void onNodeUpdate(const NodePtr& oldNode, const NodePtr& newNode);
  void onNodeDelete(const NodePtr& node);

  void loop(std::stop_token st);
  void scheduleOne(std::unique_ptr<QueuedPodInfo> qpi);
  void bindingCycle(std::shared_ptr<BindTask> task);
  // Hands the binding cycle to the binder pool (or, shutting down, forgets the assumed pod).
  void submitBinding(std::shared_ptr<BindTask> task);
  // Requeues the pod (unless it is gone or bound meanwhile), records FailedScheduling and
  // patches PodScheduled=False when the message changed.
  // `nominatedNode`: set status.nominatedNodeName to it ("" clears it) in the same patch.
  // `start`: when the attempt began (scheduler_schedule_attempts_total and its duration).
  // `diagnosis`: the ksched.io/diagnosis annotation to write with it ("" = none).
  void handleFailure(framework::Framework& fwk, std::unique_ptr<QueuedPodInfo> qpi,
                     const Status& status, const std::string& message, int64_t cycle,
                     std::chrono::steady_clock::time_point start,
                     const std::optional<std::string>& nominatedNode = std::nullopt,
                     const std::string& diagnosis = "");
  // Counts an attempt of a pod of `fwk`'s profile that began at `start`.
  void observeAttempt(const framework::Framework& fwk, metrics::Result result,
                      std::chrono::steady_clock::time_point start) const;
  void patchPodScheduledFalse(const PodPtr& pod, const std::string& reason,
                              const std::string& message,
                              const std::optional<std::string>& nominatedNode,
                              const std::string& diagnosis);
  void writePodScheduledFalse(const StatusWrites::Write& w);
  // The informer's version of `pod` if it is still the same pod and not bound; else nullptr.
  [[nodiscard]] PodPtr pendingVersion(const api::Pod& pod) const;

  // Constant after construction.
  client::RestClient& client_;
  client::RestClient& eventsClient_;
  const Options options_;
  ExtenderList extenders_;
  ApiEventRecorder events_;
  framework::ThreadPoolParallelizer parallelizer_;
  std::vector<std::unique_ptr<framework::Framework>> frameworks_;
  std::map<std::string, framework::Framework*, std::less<>> byName_;
  std::map<const framework::Framework*, const metrics::ProfileMetrics*> profileMetrics_;
  size_t metricsRefresher_ = 0;

  cache::Cache cache_;
  std::unique_ptr<queue::SchedulingQueue> queue_;
  informer::Informer<api::Pod> pods_;
  informer::Informer<api::Node> nodes_;
  InformerListers listers_;  // the other kinds plugins read
  // Plugins' pod handlers and watches (Handle::addPodEventHandlers, watchObjects); constant
  // once the frameworks are built.
  std::vector<PodEventHandlers> pluginPodHandlers_;
  std::vector<std::shared_ptr<ObjectInformer>> objectInformers_;

  // Scheduling thread only.
  cache::Snapshot snapshot_;
  Algorithm algorithm_;
  std::minstd_rand sampler_{std::random_device{}()};

  std::atomic<uint64_t> attempts_{0}, scheduled_{0}, unschedulable_{0}, errors_{0},
      bindConflicts_{0};
  std::mutex stopMu_;
  bool stopped_ = false;       // guarded by stopMu_
  ShutdownReport stopReport_;  // guarded by stopMu_

  // Explain: its own snapshot and frameworks, built on first use.
  const Registry registry_;
  std::mutex explainMu_;
  std::unique_ptr<framework::ThreadPoolParallelizer> explainParallelizer_;  // guarded
  std::map<std::string, std::unique_ptr<framework::Framework>, std::less<>>
      explainFrameworks_;            // guarded by explainMu_
  cache::Snapshot explainSnapshot_;  // guarded by explainMu_

  // Declared before statusWriters_, whose tasks use it until the pool is drained.
  StatusWrites statusWrites_;
  util::TaskPool binders_;
  util::TaskPool statusWriters_;
  std::jthread loop_;
};

}  // namespace ksched::scheduler
