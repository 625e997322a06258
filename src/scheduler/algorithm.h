// One scheduling attempt's placement logic (upstream schedulePod / findNodesThatFitPod /
// prioritizeNodes / selectHost), over a cycle's snapshot. Scheduling thread only.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <ksched/plugin.h>

#include "framework/fit_error.h"
#include "framework/framework.h"
#include "metrics/metrics.h"
#include "scheduler/batch.h"

namespace ksched::framework {
class ResultMemo;
}  // namespace ksched::framework

namespace ksched::scheduler {

using framework::Diagnosis;
using framework::FitError;

struct ScheduleResult {
  std::string suggestedHost;
  int evaluatedNodes = 0;
  int feasibleNodes = 0;
  // With Algorithm::recordTies: how many other nodes had the same top score (the node was drawn
  // among them), and the first kMaxTiedNames of them in the order they were scored.
  static constexpr size_t kMaxTiedNames = ScheduleResultTies::kMaxTiedNames;
  int ties = 0;
  std::vector<std::string> tiedWith;
  // Opportunistic batching placed the pod on the previous cycle's next-best node, without a
  // full cycle.
  bool batched = false;
};

// How many feasible nodes to look for (upstream numFeasibleNodesToFind): all nodes below 100
// or at 100 %; else percentage (adaptive max(5, 50 - nodes/125) when 0) of the nodes, at least
// 100.
[[nodiscard]] int numFeasibleNodesToFind(int32_t percentage, int numAllNodes);

class Algorithm {
 public:
  explicit Algorithm(uint64_t seed = std::random_device{}());
  ~Algorithm();
  Algorithm(Algorithm&&) noexcept;
  Algorithm& operator=(Algorithm&&) noexcept;

  enum class Outcome { kScheduled, kUnschedulable, kError };

  // `globalPercentage` is the configuration's percentageOfNodesToScore (0 = adaptive); the
  // profile's own setting wins. kUnschedulable fills `fitError`; kError fills `error`.
  Outcome schedulePod(framework::Framework& fwk, CycleState& state, const api::Pod& pod,
                      const NodeInfoLister& snapshot, int32_t globalPercentage,
                      ScheduleResult& result, FitError& fitError, Status& error);
  // The same in the scheduling loop's cycle `cycle`: with batching enabled, the pod may be
  // placed from the previous cycle's results (batch.h).
  Outcome schedulePod(framework::Framework& fwk, CycleState& state, const PodPtr& pod,
                      int64_t cycle, const NodeInfoLister& snapshot, int32_t globalPercentage,
                      ScheduleResult& result, FitError& fitError, Status& error);

  // Opportunistic batching (KEP 5598) for the profiles whose plugins sign pods; off until this
  // is called. `metrics` (may be null) gets the scheduler_batch_* counters; `clock` (empty:
  // steady_clock) times the batches' age (OpportunisticBatch).
  void enableBatching(metrics::SchedulerMetrics* metrics, OpportunisticBatch::ClockFn clock = {}) {
    batching_ = true;
    batchMetrics_ = metrics;
    batchClock_ = std::move(clock);
  }
  // The pod that schedulePod placed was not assumed after all (the cache, Reserve or Permit
  // refused it): the next pod must not use the batch.
  void placementFailed(framework::Framework& fwk);
  // Pods placed by batching in `fwk`'s profile (tests).
  [[nodiscard]] int64_t batchedPods(const framework::Framework& fwk) const;

  // Fill ScheduleResult::tiedWith (simulate reports the ties).
  void recordTies(bool on) { recordTies_ = on; }

  // Test hook: where the next Filter pass starts.
  [[nodiscard]] size_t nextStartNodeIndexForTest() const { return nextStartNodeIndex_; }

 private:
  // The batching of one cycle.
  struct Batching {
    OpportunisticBatch* batch = nullptr;
    PodPtr pod;
    int64_t cycle = 0;
    bool signed_ = false;  // Framework::signPod, and no PreFilterResult narrowed the nodes
    std::string hint;
    int ties = 0;  // other candidates with the hint's score
    std::vector<std::string> tiedWith;
  };
  Outcome schedule(framework::Framework& fwk, CycleState& state, const api::Pod& pod,
                   const NodeInfoLister& snapshot, int32_t globalPercentage, ScheduleResult& result,
                   FitError& fitError, Status& error, Batching* batching);
  Status findNodesThatFit(framework::Framework& fwk, CycleState& state, const api::Pod& pod,
                          const NodeInfoLister& snapshot, int32_t percentage, Diagnosis& diagnosis,
                          std::vector<const NodeInfo*>& feasible, Batching* batching);
  std::string selectHost(const std::vector<const NodeInfo*>& nodes,
                         const std::vector<int64_t>& scores, std::vector<std::string>* tiedWith,
                         int* tieCount);

  size_t nextStartNodeIndex_ = 0;
  // The last full cycle's scores by plugin (when a batch may start from them), kept so that its
  // vectors are not allocated again for every pod.
  framework::Framework::ScoreBreakdown breakdown_;
  bool batching_ = false;
  metrics::SchedulerMetrics* batchMetrics_ = nullptr;
  OpportunisticBatch::ClockFn batchClock_;
  std::map<const framework::Framework*, std::unique_ptr<OpportunisticBatch>> batches_;
  // Per profile: the node-local plugins' results kept from cycle to cycle (result_memo.h).
  std::map<const framework::Framework*, std::unique_ptr<framework::ResultMemo>> memos_;
  // This cycle's memo when it serves the pod, and the snapshot slot of each feasible node.
  framework::ResultMemo* cycleMemo_ = nullptr;
  std::vector<uint32_t> feasibleSlots_;
  bool recordTies_ = false;
  std::mt19937_64 rng_;
};

}  // namespace ksched::scheduler
