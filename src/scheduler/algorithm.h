// One scheduling attempt's placement logic (upstream schedulePod / findNodesThatFitPod /
// prioritizeNodes / selectHost), over a cycle's snapshot. Scheduling thread only.
#pragma once

#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <ksched/plugin.h>

#include "framework/fit_error.h"
#include "framework/framework.h"

namespace ksched::scheduler {

using framework::Diagnosis;
using framework::FitError;

struct ScheduleResult {
  std::string suggestedHost;
  int evaluatedNodes = 0;
  int feasibleNodes = 0;
  // With Algorithm::recordTies: how many other nodes had the same top score (the node was drawn
  // among them), and the first kMaxTiedNames of them in the order they were scored.
  static constexpr size_t kMaxTiedNames = 16;
  int ties = 0;
  std::vector<std::string> tiedWith;
};

// How many feasible nodes to look for (upstream numFeasibleNodesToFind): all nodes below 100
// or at 100 %; else percentage (adaptive max(5, 50 - nodes/125) when 0) of the nodes, at least
// 100.
[[nodiscard]] int numFeasibleNodesToFind(int32_t percentage, int numAllNodes);

class Algorithm {
 public:
  explicit Algorithm(uint64_t seed = std::random_device{}()) : rng_(seed) {}

  enum class Outcome { kScheduled, kUnschedulable, kError };

  // `globalPercentage` is the configuration's percentageOfNodesToScore (0 = adaptive); the
  // profile's own setting wins. kUnschedulable fills `fitError`; kError fills `error`.
  Outcome schedulePod(framework::Framework& fwk, CycleState& state, const api::Pod& pod,
                      const NodeInfoLister& snapshot, int32_t globalPercentage,
                      ScheduleResult& result, FitError& fitError, Status& error);

  // Fill ScheduleResult::tiedWith (simulate reports the ties).
  void recordTies(bool on) { recordTies_ = on; }

  // Test hook: where the next Filter pass starts.
  [[nodiscard]] size_t nextStartNodeIndexForTest() const { return nextStartNodeIndex_; }

 private:
  Status findNodesThatFit(framework::Framework& fwk, CycleState& state, const api::Pod& pod,
                          const NodeInfoLister& snapshot, int32_t percentage, Diagnosis& diagnosis,
                          std::vector<const NodeInfo*>& feasible);
  std::string selectHost(const std::vector<const NodeInfo*>& nodes,
                         const std::vector<int64_t>& scores, std::vector<std::string>* tiedWith,
                         int* tieCount);

  size_t nextStartNodeIndex_ = 0;
  bool recordTies_ = false;
  std::mt19937_64 rng_;
};

}  // namespace ksched::scheduler
