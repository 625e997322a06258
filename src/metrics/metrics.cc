#include "metrics/metrics.h"

#include <dirent.h>
#include <prometheus/text_serializer.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

namespace ksched::metrics {
namespace {

using prometheus::BuildCounter;
using prometheus::BuildGauge;
using prometheus::BuildHistogram;

constexpr std::array<std::string_view, 3> kResults = {"scheduled", "unschedulable", "error"};

std::string readFile(const char* path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::optional<double> toDouble(std::string_view s) {
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

prometheus::MetricFamily oneValue(std::string name, std::string help, prometheus::MetricType type,
                                  double value) {
  prometheus::MetricFamily f;
  f.name = std::move(name);
  f.help = std::move(help);
  f.type = type;
  prometheus::ClientMetric m;
  if (type == prometheus::MetricType::Counter) {
    m.counter.value = value;
  } else {
    m.gauge.value = value;
  }
  f.metric.push_back(std::move(m));
  return f;
}

double openFds() {
  DIR* d = opendir("/proc/self/fd");
  if (d == nullptr) return 0;
  double n = 0;
  while (const dirent* e = readdir(d)) {
    if (e->d_name[0] != '.') ++n;
  }
  closedir(d);
  return n - 1;  // the descriptor of the listing itself
}

std::string childKey(std::initializer_list<std::string_view> parts) {
  std::string k;
  for (auto p : parts) {
    k.append(p);
    k.push_back('\x1f');
  }
  return k;
}

}  // namespace

std::vector<double> exponentialBuckets(double start, double factor, int count) {
  std::vector<double> b;
  b.reserve(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    b.push_back(start);
    start *= factor;
  }
  return b;
}

std::string_view resultLabel(Result r) { return kResults[static_cast<size_t>(r)]; }

std::optional<ProcessStat> parseProcessStat(std::string_view stat, double ticksPerSecond,
                                            double pageSize, double bootTime) {
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses; fields resume after the
  // last ')'.
  const auto close = stat.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  std::vector<std::string_view> fields;  // fields[0] is field 3 (state)
  size_t i = close + 1;
  while (i < stat.size()) {
    while (i < stat.size() && (stat[i] == ' ' || stat[i] == '\n')) ++i;
    size_t j = i;
    while (j < stat.size() && stat[j] != ' ' && stat[j] != '\n') ++j;
    if (j > i) fields.push_back(stat.substr(i, j - i));
    i = j;
  }
  // utime 14, stime 15, starttime 22, rss 24 (1-based, man proc).
  if (fields.size() < 22) return std::nullopt;
  auto utime = toDouble(fields[14 - 3]);
  auto stime = toDouble(fields[15 - 3]);
  auto start = toDouble(fields[22 - 3]);
  auto rss = toDouble(fields[24 - 3]);
  if (!utime || !stime || !start || !rss || ticksPerSecond <= 0) return std::nullopt;
  return ProcessStat{(*utime + *stime) / ticksPerSecond, *rss * pageSize,
                     bootTime + *start / ticksPerSecond};
}

std::optional<double> parseBootTime(std::string_view procStat) {
  size_t pos = 0;
  while (pos < procStat.size()) {
    size_t end = procStat.find('\n', pos);
    if (end == std::string_view::npos) end = procStat.size();
    std::string_view line = procStat.substr(pos, end - pos);
    if (line.starts_with("btime ")) return toDouble(line.substr(6));
    pos = end + 1;
  }
  return std::nullopt;
}

std::vector<prometheus::MetricFamily> ProcessCollector::Collect() const {
  static const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  static const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  static const double boot = parseBootTime(readFile("/proc/stat")).value_or(0);
  std::vector<prometheus::MetricFamily> out;
  if (auto st = parseProcessStat(readFile("/proc/self/stat"), ticks, page, boot)) {
    out.push_back(oneValue("process_cpu_seconds_total",
                           "Total user and system CPU time spent in seconds.",
                           prometheus::MetricType::Counter, st->cpuSeconds));
    out.push_back(oneValue("process_resident_memory_bytes", "Resident memory size in bytes.",
                           prometheus::MetricType::Gauge, st->residentBytes));
    out.push_back(oneValue("process_start_time_seconds",
                           "Start time of the process since unix epoch in seconds.",
                           prometheus::MetricType::Gauge, st->startTimeSeconds));
  }
  out.push_back(oneValue("process_open_fds", "Number of open file descriptors.",
                         prometheus::MetricType::Gauge, openFds()));
  return out;
}

SchedulerMetrics::SchedulerMetrics() : registry_(std::make_shared<prometheus::Registry>()) {
  auto& r = *registry_;
  attempts_ = &BuildCounter()
                   .Name("scheduler_schedule_attempts_total")
                   .Help(
                       "Number of attempts to schedule pods, by the result. 'unschedulable' "
                       "means a pod could not be scheduled, while 'error' means an internal "
                       "scheduler problem.")
                   .Register(r);
  attemptDurationFamily_ =
      &BuildHistogram()
           .Name("scheduler_scheduling_attempt_duration_seconds")
           .Help("Scheduling attempt latency in seconds (scheduling algorithm + binding)")
           .Register(r);
  algorithmDuration_ = &BuildHistogram()
                            .Name("scheduler_scheduling_algorithm_duration_seconds")
                            .Help("Scheduling algorithm latency in seconds")
                            .Register(r)
                            .Add({}, exponentialBuckets(0.001, 2, 15));
  pending_ = &BuildGauge()
                  .Name("scheduler_pending_pods")
                  .Help(
                      "Number of pending pods, by the queue type. 'active' means number of "
                      "pods in activeQ; 'backoff' means number of pods in backoffQ; "
                      "'unschedulable' means number of pods in unschedulablePods that the "
                      "scheduler attempted to schedule and failed; 'gated' is the number of "
                      "unschedulable pods that the scheduler never attempted to schedule "
                      "because they are gated.")
                  .Register(r);
  const std::array<std::string, 4> queues = {"active", "backoff", "unschedulable", "gated"};
  for (size_t i = 0; i < queues.size(); ++i)
    pendingByQueue_[i] = &pending_->Add({{"queue", queues[i]}});
  incoming_ = &BuildCounter()
                   .Name("scheduler_queue_incoming_pods_total")
                   .Help("Number of pods added to scheduling queues by event and queue type.")
                   .Register(r);
  podAttempts_ = &BuildHistogram()
                      .Name("scheduler_pod_scheduling_attempts")
                      .Help("Number of attempts to successfully schedule a pod.")
                      .Register(r)
                      .Add({}, exponentialBuckets(1, 2, 5));
  sli_ = &BuildHistogram()
              .Name("scheduler_pod_scheduling_sli_duration_seconds")
              .Help(
                  "E2e latency for a pod being scheduled, from the time the pod enters the "
                  "scheduling queue and might involve multiple scheduling attempts.")
              .Register(r);
  extensionPoints_ = &BuildHistogram()
                          .Name("scheduler_framework_extension_point_duration_seconds")
                          .Help("Latency for running all plugins of a specific extension point.")
                          .Register(r);
  plugins_ = &BuildHistogram()
                  .Name("scheduler_plugin_execution_duration_seconds")
                  .Help("Duration for running a plugin at a specific extension point.")
                  .Register(r);
  leader_ = &BuildGauge()
                 .Name("leader_election_master_status")
                 .Help(
                     "Gauge of if the reporting system is master of the relevant lease, 0 "
                     "indicates backup, 1 indicates master. 'name' is the string used to identify "
                     "the lease. Please make sure to group by name.")
                 .Register(r);
  batchAttempts_ = &BuildCounter()
                        .Name("scheduler_batch_attempts_total")
                        .Help("Counts of results when we attempt to use batching.")
                        .Register(r);
  batchFlushed_ = &BuildCounter()
                       .Name("scheduler_batch_cache_flushed_total")
                       .Help("Counts of cache flushes by reason.")
                       .Register(r);
  batchRescores_ = &BuildCounter()
                        .Name("scheduler_batch_rescore_attempts_total")
                        .Help("Counts of rescore attempts during opportunistic batching.")
                        .Register(r);
  preemptionAttempts_ = &BuildCounter()
                             .Name("scheduler_preemption_attempts_total")
                             .Help("Total preemption attempts in the cluster till now")
                             .Register(r)
                             .Add({});
  preemptionVictims_ = &BuildHistogram()
                            .Name("scheduler_preemption_victims")
                            .Help("Number of selected preemption victims")
                            .Register(r)
                            .Add({}, exponentialBuckets(1, 2, 7));
  loadRefreshes_ = &BuildCounter()
                        .Name("scheduler_load_metrics_refreshes_total")
                        .Help(
                            "Background refreshes of node load for the load-aware plugins, by "
                            "source and result.")
                        .Register(r);
  loadRefreshDuration_ = &BuildHistogram()
                              .Name("scheduler_load_metrics_refresh_duration_seconds")
                              .Help("Duration of a background refresh of node load, by source.")
                              .Register(r);
  loadNodes_ = &BuildGauge()
                    .Name("scheduler_load_metrics_nodes")
                    .Help(
                        "Nodes with a load reading after the last refresh, by source and state "
                        "(fresh, stale: older than staleAfter).")
                    .Register(r);
  loadFallback_ = &BuildCounter()
                       .Name("scheduler_load_fallback_total")
                       .Help(
                           "Nodes a load-aware plugin scored by requests for want of a fresh "
                           "load reading, by plugin and reason (stale, missing).")
                       .Register(r);
  unschedulablePods_ =
      &BuildGauge()
           .Name("scheduler_unschedulable_pods")
           .Help(
               "The number of unschedulable pods broken down by plugin name. A pod will "
               "increment the gauge for all plugins that caused it to not schedule and so this "
               "metric have meaning only when broken down by plugin.")
           .Register(r);
  inFlightEvents_ = &BuildGauge()
                         .Name("scheduler_inflight_events")
                         .Help("Number of events currently tracked in the scheduling queue.")
                         .Register(r);
  hints_ = &BuildHistogram()
                .Name("scheduler_queueing_hint_execution_duration_seconds")
                .Help("Duration for running a queueing hint function of a plugin.")
                .Register(r);
  auto& permit = BuildHistogram()
                     .Name("scheduler_permit_wait_duration_seconds")
                     .Help("Duration of waiting on permit.")
                     .Register(r);
  permitAllowed_ = &permit.Add({{"result", "allowed"}}, exponentialBuckets(0.001, 2, 15));
  permitRejected_ = &permit.Add({{"result", "rejected"}}, exponentialBuckets(0.001, 2, 15));
  auto& dropped = BuildCounter()
                      .Name("scheduler_events_dropped_total")
                      .Help(
                          "Number of Events not sent to the API server, by reason: queue_full "
                          "(the recorder's queue was full), send_failed (the API server "
                          "refused or did not answer), shutdown (left when the shutdown grace "
                          "period ended).")
                      .Register(r);
  eventsDropped_[0] = &dropped.Add({{"reason", "queue_full"}});
  eventsDropped_[1] = &dropped.Add({{"reason", "send_failed"}});
  eventsDropped_[2] = &dropped.Add({{"reason", "shutdown"}});
  objectsRefused_ = &BuildCounter()
                         .Name("scheduler_objects_refused_total")
                         .Help(
                             "Objects the API server served that the scheduler could not decode "
                             "twice at the same resourceVersion and keeps out of scheduling, by "
                             "kind.")
                         .Register(r);
  auto& cache = BuildGauge()
                    .Name("scheduler_cache_size")
                    .Help("Number of nodes, pods, and assumed (bound) pods in the scheduler cache.")
                    .Register(r);
  cacheSize_[0] = &cache.Add({{"type", "assumed_pods"}});
  cacheSize_[1] = &cache.Add({{"type", "pods"}});
  cacheSize_[2] = &cache.Add({{"type", "nodes"}});
}

void SchedulerMetrics::observeLoadRefresh(std::string_view source, bool ok, double seconds) {
  std::lock_guard lock(loadMu_);
  const std::string s(source);
  loadRefreshes_->Add({{"source", s}, {"result", ok ? "success" : "error"}}).Increment();
  loadRefreshDuration_->Add({{"source", s}}, exponentialBuckets(0.001, 2, 15)).Observe(seconds);
}

void SchedulerMetrics::setLoadNodes(std::string_view source, size_t fresh, size_t stale) {
  std::lock_guard lock(loadMu_);
  const std::string s(source);
  loadNodes_->Add({{"source", s}, {"state", "fresh"}}).Set(static_cast<double>(fresh));
  loadNodes_->Add({{"source", s}, {"state", "stale"}}).Set(static_cast<double>(stale));
}

void SchedulerMetrics::observeLoadFallback(std::string_view plugin, std::string_view reason,
                                           size_t nodes) {
  std::lock_guard lock(loadMu_);
  loadFallback_->Add({{"plugin", std::string(plugin)}, {"reason", std::string(reason)}})
      .Increment(static_cast<double>(nodes));
}

void SchedulerMetrics::setLeader(const std::string& name, bool leading) {
  // Family::Add returns the existing child for labels it has.
  leader_->Add({{"name", name}}).Set(leading ? 1 : 0);
}

std::string_view batchFlushLabel(BatchFlush reason) {
  switch (reason) {
    case BatchFlush::kPodFailed:
      return "pod_failed";
    case BatchFlush::kPodSkipped:
      return "pod_skipped";
    case BatchFlush::kPodNominated:
      return "pod_nominated";
    case BatchFlush::kNodeMissing:
      return "node_missing";
    case BatchFlush::kEmptyList:
      return "empty_list";
    case BatchFlush::kExpired:
      return "expired";
    case BatchFlush::kPodIncompatible:
      return "pod_incompatible";
    case BatchFlush::kPodNotBatchable:
      return "pod_not_batchable";
    case BatchFlush::kPreScoreError:
      return "prescore_error";
    case BatchFlush::kRescoreError:
      return "rescore_error";
    case BatchFlush::kNormalizeError:
      return "normalize_error";
  }
  return "unknown";
}

const ProfileMetrics& SchedulerMetrics::profile(const std::string& name) {
  std::lock_guard lock(mu_);
  auto& p = profiles_[name];
  if (!p) {
    p = std::make_unique<ProfileMetrics>();
    for (size_t i = 0; i < kResults.size(); ++i) {
      const std::string result(kResults[i]);
      p->attempts[i] = &attempts_->Add({{"result", result}, {"profile", name}});
      p->attemptDuration[i] = &attemptDurationFamily_->Add({{"result", result}, {"profile", name}},
                                                           exponentialBuckets(0.001, 2, 15));
    }
    const std::array<std::string, 3> batchResults = {"no_hint", "hint_used", "hint_not_used"};
    for (size_t i = 0; i < batchResults.size(); ++i) {
      p->batchAttempts[i] = &batchAttempts_->Add({{"profile", name}, {"result", batchResults[i]}});
    }
    for (size_t i = 0; i < kBatchFlushReasons; ++i) {
      p->batchFlushed[i] = &batchFlushed_->Add(
          {{"profile", name},
           {"reason", std::string(batchFlushLabel(static_cast<BatchFlush>(i)))}});
    }
    p->batchRescores = &batchRescores_->Add({{"profile", name}});
  }
  return *p;
}

void SchedulerMetrics::observePodScheduled(int attempts, double sinceFirstAttempt) {
  podAttempts_->Observe(attempts);
  // Upstream folds 15 attempts and more into one label value.
  const int key = std::min(attempts, 15);
  prometheus::Histogram* h = nullptr;
  {
    std::lock_guard lock(mu_);
    auto& slot = sliChildren_[key];
    if (slot == nullptr) {
      slot = &sli_->Add({{"attempts", key == 15 ? std::string("15+") : std::to_string(key)}},
                        exponentialBuckets(0.01, 2, 20));
    }
    h = slot;
  }
  h->Observe(sinceFirstAttempt);
}

void SchedulerMetrics::objectRefused(std::string_view kind) {
  // Rare (an object malformed for good): Family::Add finds the child itself.
  objectsRefused_->Add({{"kind", std::string(kind)}}).Increment();
}

void SchedulerMetrics::incomingPod(std::string_view queue, std::string_view event) {
  const std::string key = childKey({queue, event});
  prometheus::Counter* c = nullptr;
  {
    std::lock_guard lock(mu_);
    auto& slot = incomingChildren_[key];
    if (slot == nullptr) {
      slot = &incoming_->Add({{"queue", std::string(queue)}, {"event", std::string(event)}});
    }
    c = slot;
  }
  c->Increment();
}

void SchedulerMetrics::setPendingPods(size_t active, size_t backoff, size_t unschedulable,
                                      size_t gated) {
  pendingByQueue_[0]->Set(static_cast<double>(active));
  pendingByQueue_[1]->Set(static_cast<double>(backoff));
  pendingByQueue_[2]->Set(static_cast<double>(unschedulable));
  pendingByQueue_[3]->Set(static_cast<double>(gated));
}

void SchedulerMetrics::setCacheSize(size_t assumedPods, size_t pods, size_t nodes) {
  cacheSize_[0]->Set(static_cast<double>(assumedPods));
  cacheSize_[1]->Set(static_cast<double>(pods));
  cacheSize_[2]->Set(static_cast<double>(nodes));
}

void SchedulerMetrics::setUnschedulablePods(const std::string& plugin, const std::string& profile,
                                            double n) {
  unschedulablePods_->Add({{"plugin", plugin}, {"profile", profile}}).Set(n);
}

void SchedulerMetrics::setUnschedulablePods(
    const std::map<std::pair<std::string, std::string>, size_t>& counts) {
  std::lock_guard lock(mu_);
  for (const auto& [key, n] : counts) {
    auto& slot = unschedulableChildren_[key];
    if (slot == nullptr) {
      slot = &unschedulablePods_->Add({{"plugin", key.first}, {"profile", key.second}});
    }
  }
  for (const auto& [key, gauge] : unschedulableChildren_) {
    auto it = counts.find(key);
    gauge->Set(it == counts.end() ? 0.0 : static_cast<double>(it->second));
  }
}

void SchedulerMetrics::setInFlightEvents(
    const std::map<std::string, size_t, std::less<>>& byEvent) {
  std::lock_guard lock(mu_);
  for (const auto& [event, n] : byEvent) {
    auto& slot = inFlightChildren_[event];
    if (slot == nullptr) slot = &inFlightEvents_->Add({{"event", event}});
  }
  for (const auto& [event, gauge] : inFlightChildren_) {
    auto it = byEvent.find(event);
    gauge->Set(it == byEvent.end() ? 0.0 : static_cast<double>(it->second));
  }
}

void SchedulerMetrics::observeQueueingHint(std::string_view plugin, std::string_view event,
                                           std::string_view hint, double seconds) {
  prometheus::Histogram* h = nullptr;
  {
    std::lock_guard lock(mu_);
    auto& slot = hintChildren_[childKey({plugin, event, hint})];
    if (slot == nullptr) {
      slot = &hints_->Add({{"plugin", std::string(plugin)},
                           {"event", std::string(event)},
                           {"hint", std::string(hint)}},
                          exponentialBuckets(0.000001, 2, 15));
    }
    h = slot;
  }
  h->Observe(seconds);
}

prometheus::Histogram& SchedulerMetrics::extensionPoint(std::string_view extensionPoint,
                                                        std::string_view status,
                                                        std::string_view profile) {
  std::lock_guard lock(mu_);
  auto& slot = extensionChildren_[childKey({extensionPoint, status, profile})];
  if (slot == nullptr) {
    slot = &extensionPoints_->Add({{"extension_point", std::string(extensionPoint)},
                                   {"status", std::string(status)},
                                   {"profile", std::string(profile)}},
                                  exponentialBuckets(0.0001, 2, 12));
  }
  return *slot;
}

prometheus::Histogram& SchedulerMetrics::pluginExecution(std::string_view plugin,
                                                         std::string_view extensionPoint,
                                                         std::string_view status) {
  std::lock_guard lock(mu_);
  auto& slot = pluginChildren_[childKey({plugin, extensionPoint, status})];
  if (slot == nullptr) {
    slot = &plugins_->Add({{"plugin", std::string(plugin)},
                           {"extension_point", std::string(extensionPoint)},
                           {"status", std::string(status)}},
                          exponentialBuckets(0.00001, 1.5, 20));
  }
  return *slot;
}

size_t SchedulerMetrics::addRefresher(std::function<void()> fn) {
  std::lock_guard lock(refreshMu_);
  refreshers_[nextRefresher_] = std::move(fn);
  return nextRefresher_++;
}

void SchedulerMetrics::removeRefresher(size_t id) {
  std::lock_guard lock(refreshMu_);
  refreshers_.erase(id);
}

void SchedulerMetrics::refresh() {
  std::lock_guard lock(refreshMu_);
  for (auto& [id, fn] : refreshers_) fn();
}

std::string SchedulerMetrics::scrape() {
  refresh();
  auto families = registry_->Collect();
  for (auto& f : process_.Collect()) families.push_back(std::move(f));
  return prometheus::TextSerializer().Serialize(families);
}

}  // namespace ksched::metrics
