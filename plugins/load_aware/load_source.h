// Node load for the load-aware plugins (load_aware.h): where it comes from and how old it is.
//
// A LoadSource reads every node's CPU and memory use from one provider, in the background, every
// refreshInterval, on its own thread: never on the scheduling path. The scheduling thread reads
// the latest complete reading (an immutable LoadReading, swapped in whole) once per cycle.
//   - KubernetesMetricsServer: GET /apis/metrics.k8s.io/v1beta1/nodes through the scheduler's
//     own apiserver connection (what metrics-server serves). Usage is absolute (millicores,
//     bytes); a node's sample time is its NodeMetrics timestamp.
//   - Prometheus: one instant query per resource (and, optionally, one per resource for the
//     standard deviation LoadVariationRiskBalancing uses), each answering a ratio in [0, 1] per
//     node, the node named by a label (nodeLabel, default "instance"; a value "host:port" also
//     names node "host"). A node's sample time is when the query that returned it answered.
// A node's reading is stale once older than staleAfter; a failed refresh keeps the previous
// reading, so its age grows. Nodes with no reading, or a stale one, are scored by their requests
// (the plugins say so in metrics, the log and explain).
//
// The source also remembers the pods the scheduler placed (Reserve) until the readings can
// include them: a placement counts on its node while it is newer than the node's sample time
// minus kReportingLag, and is dropped after kPlacementTtl.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include <ksched/handle.h>

namespace ksched::plugins::load {

using Clock = std::chrono::system_clock;

inline constexpr std::string_view kMetricsServer = "KubernetesMetricsServer";
inline constexpr std::string_view kPrometheus = "Prometheus";

// The default PromQL (node_exporter's metrics; nodes named by `instance`, as kube-prometheus
// relabels node-exporter's targets).
inline constexpr std::string_view kDefaultCpuQuery =
    "1 - avg by (instance) (rate(node_cpu_seconds_total{mode=\"idle\"}[5m]))";
inline constexpr std::string_view kDefaultMemoryQuery =
    "1 - node_memory_MemAvailable_bytes / node_memory_MemTotal_bytes";
inline constexpr std::string_view kDefaultCpuStddevQuery =
    "stddev_over_time((1 - avg by (instance) "
    "(rate(node_cpu_seconds_total{mode=\"idle\"}[1m])))[15m:1m])";
inline constexpr std::string_view kDefaultMemoryStddevQuery =
    "stddev_over_time((1 - node_memory_MemAvailable_bytes / node_memory_MemTotal_bytes)[15m:1m])";

// metricProvider (Trimaran's field, with ksched's additions). Decoded by load_aware.cc.
struct ProviderConfig {
  std::string type{kMetricsServer};
  std::string address;  // Prometheus: "http(s)://host:port"
  std::string token;    // Prometheus: sent as "Authorization: Bearer <token>"
  bool insecureSkipVerify = true;
  std::string cpuQuery{kDefaultCpuQuery};
  std::string memoryQuery{kDefaultMemoryQuery};
  std::string cpuStddevQuery{kDefaultCpuStddevQuery};  // "" = not read
  std::string memoryStddevQuery{kDefaultMemoryStddevQuery};
  std::string nodeLabel{"instance"};
  std::chrono::milliseconds refreshInterval{30'000};
  std::chrono::milliseconds staleAfter{180'000};

  // Sources are shared by configurations with the same key.
  [[nodiscard]] std::string key() const;
  // "prometheus" or "metrics-server": the `source` label of the metrics.
  [[nodiscard]] std::string_view label() const;
};

// One node's reading. Absolute (metrics API): cpu in millicores, memory in bytes. Otherwise
// ratios of the node's capacity. Stddevs are ratios (negative: not read).
struct NodeLoad {
  bool absolute = false;
  double cpu = 0;
  double memory = 0;
  bool hasCpu = false;
  bool hasMemory = false;
  double cpuStddev = -1;
  double memoryStddev = -1;
  Clock::time_point sampled{};
};

// Every node's reading from one refresh, and when it was taken.
struct LoadReading {
  std::unordered_map<std::string, NodeLoad> nodes;
  Clock::time_point refreshed{};
  std::string lastError;  // of the last refresh, "" when it succeeded
};

// Pure parsing of the providers' answers (unit-tested; outside input: never throws).
// A Prometheus /api/v1/query answer body: node -> value, for a vector result of `nodeLabel`.
// nullopt with `error` set when the answer is not a successful vector.
[[nodiscard]] std::optional<std::map<std::string, double>> parsePrometheusVector(
    std::string_view body, const std::string& nodeLabel, std::string& error);
// A NodeMetricsList: node -> {cpu millicores, memory bytes, timestamp}. Items without a name,
// a valid timestamp or quantities are skipped (`skipped` counts them).
[[nodiscard]] std::map<std::string, NodeLoad> parseNodeMetricsList(const nlohmann::json& list,
                                                                   size_t& skipped);

// A pod placed by this scheduler (Reserve), until the readings include it.
struct Placement {
  std::string uid;
  int64_t predictedMilliCPU = 0;  // TargetLoadPacking's prediction
  int64_t milliCPU = 0;           // requests
  int64_t memory = 0;
  Clock::time_point at{};
};
// What a node's placements add, for one reading.
struct PlacedLoad {
  int64_t predictedMilliCPU = 0;
  int64_t milliCPU = 0;
  int64_t memory = 0;
  int pods = 0;
};

class LoadSource {
 public:
  static constexpr std::chrono::seconds kReportingLag{60};
  static constexpr std::chrono::minutes kPlacementTtl{5};

  // `fetch` replaces the providers in unit tests: it fills a reading or returns an error.
  using Fetch = std::function<std::string(LoadReading&)>;

  LoadSource(ProviderConfig config, Handle& handle);
  LoadSource(ProviderConfig config, Handle& handle, Fetch fetch);
  ~LoadSource();
  LoadSource(const LoadSource&) = delete;
  LoadSource& operator=(const LoadSource&) = delete;

  [[nodiscard]] const ProviderConfig& config() const { return config_; }

  // Starts the refresh thread (once; later calls only count); stop() when every starter stopped.
  void start();
  void stop();
  // One refresh now, on the calling thread (tests, explain).
  void refreshNow();

  // Publishes `reading` as if a refresh had returned it (tests).
  void setReading(LoadReading reading) { publish(std::move(reading), "", 0); }
  // The latest reading (never null).
  [[nodiscard]] std::shared_ptr<const LoadReading> reading() const;
  // The reading a cycle uses: reading(), except that a source never started (the scheduler
  // is not running: `ksched explain`, simulate) and never read reads once first, on the
  // calling thread.
  [[nodiscard]] std::shared_ptr<const LoadReading> forCycle();

  void place(const Placement& p, const std::string& node);
  void unplace(const std::string& uid, const std::string& node);
  // What the node's placements not yet in the latest reading add. Kept up to date by place(),
  // unplace() and each reading (which also drops expired placements): O(1) per call, plus a
  // scan of the node's placements when it has some and `exceptUid` is given: that pod's own
  // placement is left out (a bound pod explained is evaluated as if it were not there yet).
  [[nodiscard]] PlacedLoad placedOn(const std::string& node, std::string_view exceptUid = {}) const;

 private:
  void run(std::stop_token st);
  std::string fetchPrometheus(LoadReading& out);
  std::string fetchMetricsApi(LoadReading& out);
  void publish(LoadReading next, const std::string& error, double seconds);
  // Under mu_: whether the latest reading does not include placement `e` on `node` yet, and
  // the sums of such placements.
  [[nodiscard]] bool countedLocked(const Placement& e, const std::string& node) const;
  void uncountLocked(const Placement& e, const std::string& node);
  void recountLocked(Clock::time_point now);

  const ProviderConfig config_;
  Handle& handle_;
  Fetch fetch_;

  mutable std::mutex mu_;
  std::shared_ptr<const LoadReading> reading_;                          // guarded by mu_
  std::unordered_map<std::string, std::vector<Placement>> placements_;  // guarded by mu_
  std::unordered_map<std::string, PlacedLoad> sums_;  // guarded by mu_: counted placements
  std::set<std::string> staleLogged_;                 // refresh thread only
  bool failing_ = false;                              // refresh thread only
  int starts_ = 0;                                    // guarded by mu_
  bool published_ = false;                            // guarded by mu_
  std::once_flag readOnce_;
  std::condition_variable_any cv_;
  std::jthread thread_;
};

}  // namespace ksched::plugins::load
