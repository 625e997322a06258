// The scheduler's Prometheus metrics, with kube-scheduler's names, labels and buckets
// (pkg/scheduler/metrics), plus the process metrics of the Go client's process collector read
// from /proc.
//
// One SchedulerMetrics per daemon, shared by the scheduler (attempts, queue, cache), the
// framework (extension point and plugin timings) and the HTTPS server (/metrics). The hot path
// records through pointers to family children that are created once (per profile, per result);
// refresh() runs the registered gauge updaters right before a scrape.
#pragma once

#include <prometheus/collectable.h>
#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <array>
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <ksched/plugin_metrics.h>

namespace ksched::metrics {

// `count` boundaries start, start*factor, ... (upstream ExponentialBuckets).
[[nodiscard]] std::vector<double> exponentialBuckets(double start, double factor, int count);

// Values of scheduler_schedule_attempts_total{result}.
enum class Result { kScheduled, kUnschedulable, kError };
[[nodiscard]] std::string_view resultLabel(Result r);

// Opportunistic batching: scheduler_batch_attempts_total{result} ...
enum class BatchAttempt { kNoHint, kHintUsed, kHintNotUsed };
// ... and scheduler_batch_cache_flushed_total{reason}, with upstream's label values.
enum class BatchFlush {
  kPodFailed,
  kPodSkipped,
  kPodNominated,
  kNodeMissing,
  kEmptyList,
  kExpired,
  kPodIncompatible,
  kPodNotBatchable,
  kPreScoreError,
  kRescoreError,
  kNormalizeError,
};
inline constexpr size_t kBatchFlushReasons = 11;
[[nodiscard]] std::string_view batchFlushLabel(BatchFlush reason);

// The counters of one profile, created once by SchedulerMetrics::profile().
struct ProfileMetrics {
  std::array<prometheus::Counter*, 3> attempts{};                       // by Result
  std::array<prometheus::Histogram*, 3> attemptDuration{};              // by Result
  std::array<prometheus::Counter*, 3> batchAttempts{};                  // by BatchAttempt
  std::array<prometheus::Counter*, kBatchFlushReasons> batchFlushed{};  // by BatchFlush
  prometheus::Counter* batchRescores = nullptr;  // scheduler_batch_rescore_attempts_total
};

// /proc/self/stat fields the process collector reports.
struct ProcessStat {
  double cpuSeconds = 0;        // utime + stime
  double residentBytes = 0;     // rss pages * page size
  double startTimeSeconds = 0;  // boot time + starttime ticks, Unix seconds
};
// `stat`: the text of /proc/<pid>/stat; `bootTime`: "btime" of /proc/stat. nullopt when the text
// is malformed.
[[nodiscard]] std::optional<ProcessStat> parseProcessStat(std::string_view stat,
                                                          double ticksPerSecond, double pageSize,
                                                          double bootTime);
// The "btime" line of /proc/stat.
[[nodiscard]] std::optional<double> parseBootTime(std::string_view procStat);

// process_cpu_seconds_total, process_resident_memory_bytes, process_start_time_seconds,
// process_open_fds, read on every collection.
class ProcessCollector final : public prometheus::Collectable {
 public:
  [[nodiscard]] std::vector<prometheus::MetricFamily> Collect() const override;
};

// Every scheduler_* metric. Also the PluginMetrics plugins record into: the framework's
// Handle::metrics() returns the scheduler's instance.
class SchedulerMetrics : public PluginMetrics {
 public:
  SchedulerMetrics();
  SchedulerMetrics(const SchedulerMetrics&) = delete;
  SchedulerMetrics& operator=(const SchedulerMetrics&) = delete;

  [[nodiscard]] const std::shared_ptr<prometheus::Registry>& registry() const { return registry_; }

  // The children of profile `name`, created on first use; the reference stays valid.
  const ProfileMetrics& profile(const std::string& name);

  // One scheduling attempt of a pod of `profile` ended (binding included for kScheduled).
  void observeAttempt(const ProfileMetrics& profile, Result result, double seconds) {
    const auto i = static_cast<size_t>(result);
    profile.attempts[i]->Increment();
    profile.attemptDuration[i]->Observe(seconds);
  }
  void observeAlgorithm(double seconds) { algorithmDuration_->Observe(seconds); }
  // A pod was bound after `attempts` attempts, `sinceFirstAttempt` seconds after it was queued.
  void observePodScheduled(int attempts, double sinceFirstAttempt);
  void observePreemptionAttempt() override { preemptionAttempts_->Increment(); }
  void observePreemptionVictims(size_t victims) override {
    preemptionVictims_->Observe(static_cast<double>(victims));
  }
  void observeLoadRefresh(std::string_view source, bool ok, double seconds) override;
  void setLoadNodes(std::string_view source, size_t fresh, size_t stale) override;
  void observeLoadFallback(std::string_view plugin, std::string_view reason, size_t nodes) override;
  // result: "allowed" | "rejected" (upstream PermitWaitDuration labels).
  void observePermitWait(bool allowed, double seconds) {
    (allowed ? permitAllowed_ : permitRejected_)->Observe(seconds);
  }
  // leader_election_master_status{name}: 1 while this instance holds the Lease `name`, else 0
  // (client-go's leader election metric, as kube-scheduler exports it).
  void setLeader(const std::string& name, bool leading);
  // scheduler_events_dropped_total{reason}: "queue_full" | "send_failed" | "shutdown".
  void eventDropped(std::string_view reason) {
    const size_t i = reason == "queue_full" ? 0 : reason == "send_failed" ? 1 : 2;
    eventsDropped_[i]->Increment();
  }
  // scheduler_objects_refused_total{kind}: objects the apiserver served that the object model
  // refused twice at the same resourceVersion (kept out of scheduling).
  void objectRefused(std::string_view kind);
  // scheduler_queue_incoming_pods_total{queue,event}: SchedulingQueue Options::onIncoming.
  void incomingPod(std::string_view queue, std::string_view event);

  void setPendingPods(size_t active, size_t backoff, size_t unschedulable, size_t gated);
  void setCacheSize(size_t assumedPods, size_t pods, size_t nodes);
  void setUnschedulablePods(const std::string& plugin, const std::string& profile, double n);
  // scheduler_unschedulable_pods{plugin,profile} for every pair; pairs seen before and absent
  // now are set to 0.
  void setUnschedulablePods(const std::map<std::pair<std::string, std::string>, size_t>& counts);
  // scheduler_inflight_events{event}; labels seen before and absent now are set to 0.
  void setInFlightEvents(const std::map<std::string, size_t, std::less<>>& byEvent);
  // scheduler_queueing_hint_execution_duration_seconds{plugin,event,hint}.
  void observeQueueingHint(std::string_view plugin, std::string_view event, std::string_view hint,
                           double seconds);

  // scheduler_framework_extension_point_duration_seconds; the child is created on first use.
  prometheus::Histogram& extensionPoint(std::string_view extensionPoint, std::string_view status,
                                        std::string_view profile);
  // scheduler_plugin_execution_duration_seconds (sampled by the caller).
  prometheus::Histogram& pluginExecution(std::string_view plugin, std::string_view extensionPoint,
                                         std::string_view status);

  // Gauge updaters run by refresh() (e.g. queue counts, cache sizes). removeRefresher() takes
  // the id addRefresher() returned; after it returns the updater no longer runs.
  size_t addRefresher(std::function<void()> fn);
  void removeRefresher(size_t id);
  void refresh();
  // refresh(), then the registry and the process metrics in the text exposition format.
  [[nodiscard]] std::string scrape();

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  ProcessCollector process_;
  prometheus::Family<prometheus::Counter>* attempts_;
  prometheus::Family<prometheus::Histogram>* attemptDurationFamily_;
  prometheus::Histogram* algorithmDuration_;
  prometheus::Family<prometheus::Gauge>* pending_;
  std::array<prometheus::Gauge*, 4> pendingByQueue_{};
  prometheus::Family<prometheus::Counter>* incoming_;
  prometheus::Histogram* podAttempts_;
  prometheus::Family<prometheus::Histogram>* sli_;
  prometheus::Family<prometheus::Histogram>* extensionPoints_;
  prometheus::Family<prometheus::Histogram>* plugins_;
  prometheus::Counter* preemptionAttempts_;
  prometheus::Family<prometheus::Counter>* batchAttempts_;
  prometheus::Family<prometheus::Counter>* batchFlushed_;
  prometheus::Family<prometheus::Counter>* batchRescores_;
  prometheus::Family<prometheus::Gauge>* leader_;
  prometheus::Histogram* preemptionVictims_;
  prometheus::Family<prometheus::Counter>* loadRefreshes_;
  prometheus::Family<prometheus::Histogram>* loadRefreshDuration_;
  prometheus::Family<prometheus::Gauge>* loadNodes_;
  prometheus::Family<prometheus::Counter>* loadFallback_;
  std::mutex loadMu_;  // Family::Add is thread-safe; this orders the label lookups of one call
  prometheus::Family<prometheus::Gauge>* unschedulablePods_;
  prometheus::Family<prometheus::Gauge>* inFlightEvents_;
  prometheus::Family<prometheus::Histogram>* hints_;
  prometheus::Histogram* permitAllowed_;
  prometheus::Histogram* permitRejected_;
  std::array<prometheus::Gauge*, 3> cacheSize_{};
  std::array<prometheus::Counter*, 3> eventsDropped_{};
  prometheus::Family<prometheus::Counter>* objectsRefused_;

  std::mutex mu_;         // guards the maps below
  std::mutex refreshMu_;  // guards refreshers_; held while they run
  std::map<std::string, std::unique_ptr<ProfileMetrics>, std::less<>> profiles_;
  std::map<std::string, prometheus::Counter*, std::less<>> incomingChildren_;
  std::map<int, prometheus::Histogram*> sliChildren_;
  std::map<std::string, prometheus::Histogram*, std::less<>> extensionChildren_;
  std::map<std::string, prometheus::Histogram*, std::less<>> pluginChildren_;
  std::map<std::string, prometheus::Histogram*, std::less<>> hintChildren_;
  std::map<std::pair<std::string, std::string>, prometheus::Gauge*> unschedulableChildren_;
  std::map<std::string, prometheus::Gauge*, std::less<>> inFlightChildren_;
  std::map<size_t, std::function<void()>> refreshers_;
  size_t nextRefresher_ = 0;
};

}  // namespace ksched::metrics
