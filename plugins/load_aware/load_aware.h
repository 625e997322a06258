// Load-aware scheduling on real node utilization (docs/load-aware.md), in no default profile:
//
//   TargetLoadPacking (PreScore, Score, Reserve): scheduler-plugins' Trimaran score. The node's
//       predicted CPU utilization U (percent of capacity) = its reading + the pod's predicted CPU
//       (per container: the limit, else request x defaultRequestsMultiplier, else
//       defaultRequests.cpu; plus overhead) + the pods placed since the reading. Score, with
//       T = targetUtilization: U <= T: round((100 - T) * U / T + T); T < U <= 100:
//       round(T * (100 - U) / (100 - T)); U > 100: 0. Packs nodes up to T, then spreads.
//   LoadVariationRiskBalancing (PreScore, Score, Reserve): Trimaran's risk score. Per resource
//       (CPU, memory): mu = reading + (the pod's and placed pods' requests) / allocatable,
//       sigma = the reading's standard deviation ^ (1 / safeVarianceSensitivity) x
//       safeVarianceMargin, each clamped to [0, 1]; score = round(100 x (1 - (mu + sigma) / 2)),
//       the lower of the two resources.
//   LoadAwareFilter (PreFilter, Filter, Reserve): rejects a node whose utilization with the pod
//       (reading + placed pods' requests + the pod's requests, percent of allocatable, rounded)
//       is above usageThresholds (cpu 65, memory 95; 0 = not checked): "node(s) cpu usage exceed
//       threshold" (Koordinator's LoadAware message).
//
// Readings come from a LoadSource (load_source.h) that the plugins of every profile with the same
// metricProvider share. A node without a reading younger than staleAfter is scored by its
// requests (its requested CPU and memory in place of the reading; no deviation) and counted in
// scheduler_load_fallback_total; LoadAwareFilter lets it pass. Explain shows each node's
// utilization, where it came from and its age.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

#include <ksched/handle.h>
#include <ksched/plugin.h>
#include <ksched/plugin_names.h>
#include <ksched/registry.h>

#include "plugins/load_aware/load_source.h"

namespace ksched::plugins {

struct TargetLoadPackingArgs {
  load::ProviderConfig metricProvider;
  int64_t targetUtilization = 40;          // percent, 1..99
  int64_t defaultRequestsMilliCPU = 1000;  // "defaultRequests": {"cpu": "1"}
  double defaultRequestsMultiplier = 1.5;  // "defaultRequestsMultiplier": "1.5" (a string)
  [[nodiscard]] static TargetLoadPackingArgs fromJson(const nlohmann::json& j);
};

struct LoadVariationRiskBalancingArgs {
  load::ProviderConfig metricProvider;
  double safeVarianceMargin = 1;       // >= 0
  double safeVarianceSensitivity = 1;  // >= 0
  [[nodiscard]] static LoadVariationRiskBalancingArgs fromJson(const nlohmann::json& j);
};

struct LoadAwareFilterArgs {
  load::ProviderConfig metricProvider;
  int64_t cpuThreshold = 65;     // "usageThresholds": {"cpu": 65, "memory": 95}, 0..100
  int64_t memoryThreshold = 95;  // 0: not checked
  [[nodiscard]] static LoadAwareFilterArgs fromJson(const nlohmann::json& j);
};

namespace load {

// The reading, the placements and the incoming pod, as one cycle sees them (CycleState).
struct CycleLoad;

// What a node's utilization is in a cycle, for the scores and explain.
struct NodeUtilization {
  double cpu = 0;             // ratio of capacity (TargetLoadPacking) or allocatable
  double cpuDenominator = 0;  // millicores: the capacity or allocatable `cpu` is a ratio of
  double memory = 0;          // ratio of allocatable
  double cpuStddev = 0;
  double memoryStddev = 0;
  bool fromRequests = false;  // no fresh reading: the node's requests
  std::string why;            // "prometheus, 12s old" / "no reading: requests"
  int placedPods = 0;
};

// The common part of the three plugins: the shared source, reading it once per cycle, Reserve.
class LoadAwareBase : public ReservePlugin, public SignPlugin {
 public:
  LoadAwareBase(std::string_view name, const ProviderConfig& config, Handle& handle);
  [[nodiscard]] std::string_view name() const override { return name_; }
  // Opportunistic batching: a node's answer depends on the pod, the node's reading (which pods
  // placed do not change; a refresh within a batch's 500 ms is seen by the next full cycle),
  // the node's capacity and the pods placed on it (the node that receives a pod is filtered and
  // scored again).
  [[nodiscard]] bool signPod(const api::Pod& /*pod*/) const override { return true; }
  // Offline (Handle::synchronous) the readings are read once, on the first cycle's thread.
  void start() override {
    if (!handle_.synchronous()) source_->start();
  }
  void close() override { source_->stop(); }
  Status reserve(CycleState& state, const api::Pod& pod, const std::string& nodeName) override;
  void unreserve(CycleState& state, const api::Pod& pod, const std::string& nodeName) override;
  [[nodiscard]] const std::shared_ptr<LoadSource>& source() const { return source_; }
  // Bindings the informer sees (by any scheduler) count as placements, as Trimaran counts them:
  // a pod that turns assigned counts from then; one already assigned when it is first seen,
  // from its PodScheduled condition; a pod deleted or finished counts no more.
  void onPod(const PodPtr& oldPod, const PodPtr& newPod);

  // TargetLoadPacking's prediction of a pod's CPU (millicores).
  [[nodiscard]] static int64_t predictedMilliCPU(const api::Pod& pod, int64_t defaultMilliCPU,
                                                 double multiplier);

 protected:
  // Reads the source into `state` (PreFilter / PreScore); counts nodes without fresh readings.
  void readIntoState(CycleState& state, const api::Pod& pod,
                     const std::vector<const NodeInfo*>* nodes) const;
  // The cycle's load: what PreScore (or PreFilter) read into `state`; else (a profile that
  // enables the plugin at Score or Filter alone, as Trimaran's docs enable TargetLoadPacking)
  // read here once per cycle and kept in `hold`.
  [[nodiscard]] const CycleLoad* cycleLoad(const CycleState& state, const api::Pod& pod,
                                           std::shared_ptr<const CycleLoad>& hold) const;
  // The node's utilization in this cycle, without the incoming pod.
  [[nodiscard]] NodeUtilization utilization(const CycleLoad& c, const NodeInfo& node,
                                            bool cpuOfCapacity) const;

  [[nodiscard]] std::unique_ptr<CycleLoad> read(const api::Pod& pod) const;
  [[nodiscard]] Placement placementOf(const api::Pod& pod, Clock::time_point at) const;

  std::string name_;
  Handle& handle_;
  std::shared_ptr<LoadSource> source_;
  int64_t defaultMilliCPU_ = 1000;
  double multiplier_ = 1.5;
  // The cycle read without PreScore / PreFilter (cycleLoad), for the cycle and pod it was for
  // (a second at most: placed pods are read live, the reading is refreshed seconds apart).
  mutable std::mutex lazyMu_;
  mutable const CycleState* lazyState_ = nullptr;
  mutable std::string lazyUid_;
  mutable std::shared_ptr<const CycleLoad> lazy_;
};

}  // namespace load

class TargetLoadPacking final : public load::LoadAwareBase,
                                public PreScorePlugin,
                                public ScorePlugin,
                                public ScoreExplainer {
 public:
  static constexpr std::string_view kName = names::kTargetLoadPacking;
  TargetLoadPacking(TargetLoadPackingArgs args, Handle& handle);
  Status preScore(CycleState& state, const api::Pod& pod,
                  const std::vector<const NodeInfo*>& nodes) override;
  [[nodiscard]] Status score(const CycleState& state, const api::Pod& pod, const NodeInfo& nodeInfo,
                             int64_t& score) const override;
  [[nodiscard]] std::string explainScore(const CycleState& state, const api::Pod& pod,
                                         const NodeInfo& nodeInfo) const override;
  // The piecewise score of a predicted utilization `u` (percent) for target `t`.
  [[nodiscard]] static int64_t scoreOf(double u, int64_t t);

 private:
  const TargetLoadPackingArgs args_;
};

class LoadVariationRiskBalancing final : public load::LoadAwareBase,
                                         public PreScorePlugin,
                                         public ScorePlugin,
                                         public ScoreExplainer {
 public:
  static constexpr std::string_view kName = names::kLoadVariationRiskBalancing;
  LoadVariationRiskBalancing(LoadVariationRiskBalancingArgs args, Handle& handle);
  Status preScore(CycleState& state, const api::Pod& pod,
                  const std::vector<const NodeInfo*>& nodes) override;
  [[nodiscard]] Status score(const CycleState& state, const api::Pod& pod, const NodeInfo& nodeInfo,
                             int64_t& score) const override;
  [[nodiscard]] std::string explainScore(const CycleState& state, const api::Pod& pod,
                                         const NodeInfo& nodeInfo) const override;
  // Trimaran's computeScore on ratios: mu and sigma of one resource, unrounded (0..100).
  [[nodiscard]] static double riskScore(double mu, double sigma, double margin, double sensitivity);

 private:
  const LoadVariationRiskBalancingArgs args_;
};

class LoadAwareFilter final : public load::LoadAwareBase,
                              public PreFilterPlugin,
                              public FilterPlugin {
 public:
  static constexpr std::string_view kName = names::kLoadAwareFilter;
  LoadAwareFilter(LoadAwareFilterArgs args, Handle& handle);
  Status preFilter(CycleState& state, const api::Pod& pod, const NodeInfoLister& nodes,
                   PreFilterResult& result) override;
  [[nodiscard]] Status filter(const CycleState& state, const api::Pod& pod,
                              const NodeInfo& nodeInfo) const override;

 private:
  const LoadAwareFilterArgs args_;
};

PluginFactory targetLoadPackingFactory();
PluginFactory loadVariationRiskBalancingFactory();
PluginFactory loadAwareFilterFactory();

}  // namespace ksched::plugins
