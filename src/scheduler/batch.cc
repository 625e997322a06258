#include "scheduler/batch.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include <ksched/api/pod.h>

namespace ksched::scheduler {
namespace {

// Best first; equal totals keep their order.
bool better(const std::pair<int64_t, uint32_t>& a, const std::pair<int64_t, uint32_t>& b) {
  return a.first > b.first;
}

}  // namespace

OpportunisticBatch::OpportunisticBatch(framework::Framework& fwk,
                                       metrics::SchedulerMetrics* metrics, ClockFn clock)
    : fwk_(fwk),
      metrics_(metrics != nullptr ? &metrics->profile(fwk.profileName()) : nullptr),
      clock_(clock ? std::move(clock) : ClockFn([] { return Clock::now(); })) {}

void OpportunisticBatch::count(metrics::BatchAttempt result) {
  if (metrics_ != nullptr) metrics_->batchAttempts[static_cast<size_t>(result)]->Increment();
}

void OpportunisticBatch::flush(metrics::BatchFlush reason, bool always) {
  if ((pod_ || always) && metrics_ != nullptr) {
    metrics_->batchFlushed[static_cast<size_t>(reason)]->Increment();
  }
  if (pod_) {
    spdlog::trace("opportunistic batch of profile {} flushed: {}", fwk_.profileName(),
                  metrics::batchFlushLabel(reason));
  }
  pod_.reset();
  order_.clear();
  lastRow_.reset();
}

std::string OpportunisticBatch::nodeHint(CycleState& state, const PodPtr& pod, bool signed_,
                                         int64_t cycle, const NodeInfoLister& snapshot,
                                         std::mt19937_64& rng, int* ties,
                                         std::vector<std::string>* tiedWith) {
  auto noHint = [&](std::optional<metrics::BatchFlush> reason) {
    if (reason) flush(*reason);
    count(metrics::BatchAttempt::kNoHint);
    return std::string();
  };
  if (!pod_ || order_.empty()) return noHint(std::nullopt);
  using metrics::BatchFlush;
  if (cycle != lastCycle_ + 1) return noHint(BatchFlush::kPodSkipped);
  if (!lastSucceeded_) return noHint(BatchFlush::kPodFailed);
  if (!pod->status.nominatedNodeName.empty()) return noHint(BatchFlush::kPodNominated);
  if (!signed_ || !api::sameSchedulingInputs(*pod_, *pod)) {
    return noHint(BatchFlush::kPodIncompatible);
  }
  if (clock_() - created_ > kMaxAge) return noHint(BatchFlush::kExpired);
  // The candidates are ordered when a pod first uses them: most full cycles of pods that differ
  // from the next one start a batch that is never used.
  if (!sorted_) {
    std::stable_sort(order_.begin(), order_.end(), better);
    sorted_ = true;
  }
  const NodeInfo* last = snapshot.get(lastChosen_);
  if (last == nullptr || last->node() == nullptr) return noHint(BatchFlush::kNodeMissing);
  Status fs = fwk_.runFilterPluginsWithNominatedPods(state, *pod, *last);
  if (fs.isError()) return noHint(BatchFlush::kRescoreError);
  if (fs.ok()) {
    // The pod still fits where the last one went: that node competes again with fresh scores.
    if (!lastRow_ || !rescore(state, *pod, *last, *lastRow_)) return noHint(std::nullopt);
  }
  lastRow_.reset();
  if (order_.empty()) return noHint(BatchFlush::kEmptyList);
  // Uniformly among the best (upstream draws among ties as well).
  size_t top = 1;
  while (top < order_.size() && order_[top].first == order_[0].first) ++top;
  const size_t pick = top == 1 ? 0 : std::uniform_int_distribution<size_t>(0, top - 1)(rng);
  const uint32_t row = order_[pick].second;
  *ties = static_cast<int>(top) - 1;
  if (tiedWith != nullptr) {
    for (size_t i = 0; i < top && tiedWith->size() < ScheduleResultTies::kMaxTiedNames; ++i) {
      if (i != pick) tiedWith->push_back(names_[order_[i].second]);
    }
  }
  order_.erase(order_.begin() + static_cast<std::ptrdiff_t>(pick));
  lastRow_ = row;
  return names_[row];
}

bool OpportunisticBatch::rescore(CycleState& state, const api::Pod& pod, const NodeInfo& node,
                                 uint32_t row) {
  if (metrics_ != nullptr) metrics_->batchRescores->Increment();
  const std::vector<const NodeInfo*> one{&node};
  if (Status s = fwk_.runPreScorePlugins(state, pod, one); !s.ok()) {
    flush(metrics::BatchFlush::kPreScoreError);
    return false;
  }
  std::vector<int64_t> totals;
  framework::Framework::ScoreBreakdown fresh;
  if (Status s = fwk_.runScorePlugins(state, pod, one, totals, &fresh);
      !s.ok() || fresh.plugins != plugins_) {
    flush(metrics::BatchFlush::kRescoreError);
    return false;
  }
  const size_t n = plugins_.size();
  bool again = false;  // a normalizing plugin's raw score changed: normalize every candidate
  int64_t total = 0;
  for (size_t k = 0; k < n; ++k) {
    const int64_t raw = fresh.raw[k][0];
    int64_t& oldRaw = raw_[row * n + k];
    int64_t& norm = norm_[row * n + k];
    if (normalize_[k] == nullptr) {
      norm = raw;
    } else if (raw != oldRaw) {
      again = true;
    }
    oldRaw = raw;
    total += norm * weights_[k];
  }
  if (again) {
    order_.emplace_back(0, row);
    return renormalize(state, pod);
  }
  order_.emplace_back(total, row);
  // Only the rescored node moved: put it in its place.
  auto it = std::upper_bound(order_.begin(), order_.end() - 1, order_.back(), better);
  std::rotate(it, order_.end() - 1, order_.end());
  return true;
}

bool OpportunisticBatch::renormalize(const CycleState& state, const api::Pod& pod) {
  const size_t n = plugins_.size();
  for (size_t k = 0; k < n; ++k) {
    std::vector<NodeScore> scores;
    scores.reserve(order_.size());
    for (const auto& [total, row] : order_) {
      if (normalize_[k] == nullptr) {
        norm_[row * n + k] = raw_[row * n + k];
        continue;
      }
      scores.push_back({names_[row], raw_[row * n + k]});
    }
    if (normalize_[k] == nullptr) continue;
    if (Status s = normalize_[k]->normalizeScore(state, pod, scores); !s.ok()) {
      flush(metrics::BatchFlush::kNormalizeError);
      return false;
    }
    for (size_t i = 0; i < order_.size(); ++i) {
      const int64_t v = scores[i].score;
      if (v < kMinNodeScore || v > kMaxNodeScore) {
        flush(metrics::BatchFlush::kNormalizeError);
        return false;
      }
      norm_[order_[i].second * n + k] = v;
    }
  }
  for (auto& [total, row] : order_) {
    total = 0;
    for (size_t k = 0; k < n; ++k) total += norm_[row * n + k] * weights_[k];
  }
  std::stable_sort(order_.begin(), order_.end(), better);
  return true;
}

void OpportunisticBatch::store(const PodPtr& pod, bool signed_, const std::string& hint,
                               const std::string& chosen, int64_t cycle,
                               const std::vector<const NodeInfo*>* feasible,
                               const framework::Framework::ScoreBreakdown* breakdown) {
  lastCycle_ = cycle;
  lastSucceeded_ = true;
  lastChosen_ = chosen;
  if (!hint.empty() && hint == chosen) {
    count(metrics::BatchAttempt::kHintUsed);
    ++batchedPods_;
    return;
  }
  if (!hint.empty()) count(metrics::BatchAttempt::kHintNotUsed);
  if (!signed_) {
    flush(metrics::BatchFlush::kPodNotBatchable, true);
    return;
  }
  if (feasible == nullptr || breakdown == nullptr || feasible->size() < 2) {
    flush(metrics::BatchFlush::kEmptyList, true);
    return;
  }
  // A new batch from this full cycle.
  const size_t n = breakdown->plugins.size();
  pod_ = pod;
  created_ = clock_();
  plugins_ = breakdown->plugins;
  weights_ = breakdown->weights;
  normalize_.assign(n, nullptr);
  for (size_t k = 0; k < n; ++k) {
    const ScorePlugin* p = fwk_.scorePlugin(plugins_[k]);
    if (p != nullptr && p->hasNormalizeScore()) normalize_[k] = p;
  }
  const size_t nodes = feasible->size();
  names_.resize(nodes);
  raw_.resize(nodes * n);
  norm_.resize(nodes * n);
  order_.clear();
  order_.reserve(nodes);
  lastRow_.reset();
  for (size_t i = 0; i < nodes; ++i) {
    names_[i].assign((*feasible)[i]->name());
    int64_t total = 0;
    for (size_t k = 0; k < n; ++k) {
      raw_[i * n + k] = breakdown->raw[k][i];
      norm_[i * n + k] = breakdown->normalized[k][i];
      total += breakdown->normalized[k][i] * breakdown->weights[k];
    }
    // Node names mostly differ near their end ("node-0041" / "node-0042"): the last byte is
    // compared first, and none once the chosen row is found (comparing every name in full was
    // a tenth of a cycle of standalone pods of 16 shapes at 5000 nodes).
    const std::string& name = names_[i];
    if (!lastRow_ && name.size() == chosen.size() && !name.empty() &&
        name.back() == chosen.back() && name == chosen) {
      lastRow_ = static_cast<uint32_t>(i);
    } else {
      order_.emplace_back(total, static_cast<uint32_t>(i));
    }
  }
  sorted_ = false;  // nodeHint sorts them, best first, if a pod comes to use them
  if (order_.empty()) flush(metrics::BatchFlush::kEmptyList);
}

void OpportunisticBatch::failed() {
  lastSucceeded_ = false;
  lastRow_.reset();
}

}  // namespace ksched::scheduler
