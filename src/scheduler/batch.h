// Opportunistic batching (KEP 5598, gate OpportunisticBatching): the filtering and scoring of a
// full scheduling cycle serve the next pods with the same scheduling inputs. One per profile;
// scheduling thread only.
//
// A full cycle of a pod that every filtering and scoring plugin signs (Framework::signPod)
// leaves its scored feasible nodes, best first, with each plugin's raw and normalized score.
// The next cycle's pod may use them when it comes right after (no other cycle in between), the
// last one placed its pod, it has the same scheduling inputs (api::sameSchedulingInputs), it is
// not nominated, and the batch is younger than 500 ms (upstream's rules and flush reasons).
// Then:
//   - the node the last pod went to is filtered for this pod again. If the pod still fits there,
//     that node is scored again and goes back among the candidates (upstream rescoreHintedNode):
//     with its new normalized scores when no normalizing plugin's raw score changed, else after
//     normalizing every candidate again. So a node takes several pods of a batch as long as it
//     stays the best, as a full cycle would place them.
//   - the best candidate (drawn among ties) is the hint; the cycle filters only that node and
//     takes it when the pod fits. Otherwise the cycle runs in full and starts a new batch.
// What the batch cannot see: changes to other nodes within its 500 ms; the hint is filtered,
// so a node the pod no longer fits is never chosen.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <ksched/plugin.h>

#include "framework/framework.h"
#include "metrics/metrics.h"

namespace ksched::scheduler {

struct ScheduleResultTies {
  // ScheduleResult::tiedWith keeps this many names.
  static constexpr size_t kMaxTiedNames = 16;
};

class OpportunisticBatch {
 public:
  using Clock = std::chrono::steady_clock;
  using ClockFn = std::function<Clock::time_point()>;
  static constexpr std::chrono::milliseconds kMaxAge{500};

  // `metrics` may be null. `clock` (default Clock::now) times a batch's age: the scheduling
  // queue's, so that the simulator's virtual time never expires a batch however slow the
  // machine (its placements stay the same from run to run).
  OpportunisticBatch(framework::Framework& fwk, metrics::SchedulerMetrics* metrics,
                     ClockFn clock = {});

  // The node for `pod` in cycle `cycle`, or "" (then the cycle runs in full). `signed_` is
  // Framework::signPod(pod). Runs after PreFilter: filters (and may score) the last chosen node
  // in `state`.
  // With a hint, `ties` gets how many other candidates had its score, and `tiedWith` (when not
  // null) their first names.
  std::string nodeHint(CycleState& state, const PodPtr& pod, bool signed_, int64_t cycle,
                       const NodeInfoLister& snapshot, std::mt19937_64& rng, int* ties,
                       std::vector<std::string>* tiedWith);

  // The cycle chose `chosen`. After a full cycle (`hint` empty or not taken), `feasible` and
  // `breakdown` are its scored nodes (scored: false when there was only one node and no
  // scoring); the pod's batch starts from them when `signed_`.
  void store(const PodPtr& pod, bool signed_, const std::string& hint, const std::string& chosen,
             int64_t cycle, const std::vector<const NodeInfo*>* feasible,
             const framework::Framework::ScoreBreakdown* breakdown);
  // The cycle placed no pod (unschedulable, an error, or Reserve/Permit refused it).
  void failed();

  // Pods placed on a hint, for tests.
  [[nodiscard]] int64_t batchedPods() const { return batchedPods_; }
  // Candidates left, for tests.
  [[nodiscard]] size_t candidates() const { return order_.size(); }

 private:
  // Drops the batch; counted when there was one, or `always` (what a full cycle leaves that
  // cannot start one, as upstream counts it).
  void flush(metrics::BatchFlush reason, bool always = false);
  void count(metrics::BatchAttempt result);
  // Scores `node` (the last chosen, its row `row`) for `pod` again and puts it back among the
  // candidates; false (flushed) when that fails.
  bool rescore(CycleState& state, const api::Pod& pod, const NodeInfo& node, uint32_t row);
  // Normalizes every live candidate's raw scores again and re-sorts them.
  bool renormalize(const CycleState& state, const api::Pod& pod);
  void insert(uint32_t row);

  framework::Framework& fwk_;
  const metrics::ProfileMetrics* metrics_ = nullptr;
  ClockFn clock_;

  // The batch; empty when there is none.
  PodPtr pod_;
  Clock::time_point created_{};
  std::vector<std::string> plugins_;                 // the Score plugins that ran, in order
  std::vector<int64_t> weights_;                     // their weights
  std::vector<const ScorePlugin*> normalize_;        // the plugin when it normalizes, else nullptr
  std::vector<std::string> names_;                   // node of each row
  std::vector<int64_t> raw_;                         // raw_[row * plugins + k]
  std::vector<int64_t> norm_;                        // normalized, same layout
  std::vector<std::pair<int64_t, uint32_t>> order_;  // (total, row) of candidates, best first
  bool sorted_ = true;  // order_ is best first (store leaves it in the cycle's order)

  // The last cycle of this profile.
  int64_t lastCycle_ = -1;
  bool lastSucceeded_ = false;
  std::string lastChosen_;
  std::optional<uint32_t> lastRow_;  // the chosen node's row in the batch

  int64_t batchedPods_ = 0;
};

}  // namespace ksched::scheduler
