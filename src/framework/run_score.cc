// The PreScore and Score runners (upstream frameworkImpl.RunPreScorePlugins and
// RunScorePlugins): PreScore in order, Score over the feasible nodes on the Filter/Score pool
// with the memo's kept scores, then NormalizeScore and the weights.
#include <algorithm>
#include <atomic>
#include <bit>
#include <mutex>
#include <optional>
#include <string>

#include "framework/framework.h"
#include "framework/plugin_status.h"
#include "framework/prefetch.h"
#include "framework/result_memo.h"

namespace ksched::framework {
namespace {

// A score outside [0, 100] once normalized (for a plugin without NormalizeScore: as scored).
Status invalidScore(const ScorePlugin& plugin, int64_t v) {
  return Status::error("plugin \"" + std::string(plugin.name()) + "\" returns an invalid score " +
                       std::to_string(v) + ", it should in the range of [0, 100] after normalizing")
      .withPlugin(plugin.name());
}

}  // namespace

Status Framework::runPreScorePlugins(CycleState& state, const api::Pod& pod,
                                     const std::vector<const NodeInfo*>& nodes) {
  return timed(ExtensionPoint::kPreScore, [&]() -> Status {
    // Only this run's Skips count (batching may have run PreScore for one node before).
    state.skipScorePlugins.clear();
    for (auto* p : plugins<ExtensionPoint::kPreScore>()) {
      Status s =
          timedPlugin(p, ExtensionPoint::kPreScore, [&] { return p->preScore(state, pod, nodes); });
      if (s.isSkip()) {
        state.skipScorePlugins.emplace(p->name());
        continue;
      }
      if (!s.ok()) {
        return Status::error("running PreScore plugin \"" + std::string(p->name()) +
                             "\": " + s.message())
            .withPlugin(p->name());
      }
    }
    return {};
  });
}

Status Framework::runScorePlugins(const CycleState& state, const api::Pod& pod,
                                  const std::vector<const NodeInfo*>& nodes,
                                  std::vector<int64_t>& totals, ScoreBreakdown* breakdown,
                                  ResultMemo* memo, const std::vector<uint32_t>* slots) {
  return timed(ExtensionPoint::kScore, [&]() -> Status {
    totals.assign(nodes.size(), 0);
    struct Weighted {
      ScorePlugin* plugin;
      int64_t weight;
      size_t index;  // with `kept`: its place among the kept plugins
      bool kept;     // its raw scores are kept in the memo
      bool named;    // NormalizeScore reads the list: each score carries its node's name
      bool direct;   // no NormalizeScore and no breakdown: added to the totals as scored
    };
    std::vector<Weighted> active;
    const auto& scorers = plugins<ExtensionPoint::kScore>();
    uint64_t activeKept = 0;
    for (size_t k = 0; k < scorers.size(); ++k) {
      if (state.skipScorePlugins.empty() || !state.skipScorePlugins.contains(scorers[k]->name())) {
        const bool kept = memo != nullptr && k < 64 && (memo->keptScores() >> k & 1U) != 0;
        if (kept) activeKept |= uint64_t{1} << k;
        const size_t place =
            kept ? static_cast<size_t>(std::popcount(memo->keptScores() & ((uint64_t{1} << k) - 1)))
                 : 0;
        const bool normalizes = scorers[k]->hasNormalizeScore();
        // Names only where NormalizeScore reads them: copying them for every plugin was a
        // tenth of a cycle whose other answers were kept.
        const bool named = normalizes && scorers[k]->normalizeScoreReadsNames(state);
        const bool direct = !normalizes && breakdown == nullptr;
        active.push_back({scorers[k], lists_.scoreWeights()[k], place, kept, named, direct});
      }
    }
    if (memo != nullptr) memo->startScoring(activeKept);
    if (active.empty() || nodes.empty()) {
      if (breakdown != nullptr) *breakdown = {};
      return {};
    }
    // Kept from cycle to cycle (per thread: explain may score beside the loop), so that neither
    // the lists nor the node names in them are allocated again for every pod.
    thread_local std::vector<std::vector<NodeScore>> scratch;
    auto& scores = scratch;  // the calling thread's, also inside the parallel workers
    if (scores.size() < active.size()) scores.resize(active.size());
    for (size_t k = 0; k < active.size(); ++k) scores[k].resize(nodes.size());
    std::mutex errMu;
    std::optional<Status> firstError;  // guarded by errMu
    std::optional<Status> rangeError;  // a direct plugin's score out of range; guarded by errMu
    std::atomic<bool> failed{false};   // firstError or rangeError is set
    parallelizer().until(
        static_cast<int>(nodes.size()),
        [&](int i) {
          const int count = static_cast<int>(nodes.size());
          if (memo == nullptr) {
            prefetchAhead(
                i, [&](int j) { return j < count ? nodes[static_cast<size_t>(j)] : nullptr; });
          } else {
            // A node whose kept scores are known is read only by the live plugins (and for the
            // names): its NodeInfo's first line.
            prefetchAhead(i, [&](int j) -> const NodeInfo* {
              if (j >= count || memo->scored((*slots)[static_cast<size_t>(j)])) return nullptr;
              return nodes[static_cast<size_t>(j)];
            });
            prefetchNamesAhead(i, [&](int j) -> const NodeInfo* {
              if (j >= count || !memo->scored((*slots)[static_cast<size_t>(j)])) return nullptr;
              return nodes[static_cast<size_t>(j)];
            });
          }
          const size_t slot = memo != nullptr ? (*slots)[static_cast<size_t>(i)] : 0;
          int32_t* kept = memo != nullptr ? memo->rawScores(slot) : nullptr;
          const bool known = memo != nullptr && memo->scored(slot);
          bool keepable = true;  // every kept plugin's raw score fits the row
          int64_t direct = 0;
          for (size_t k = 0; k < active.size(); ++k) {
            int64_t v = 0;
            if (known && active[k].kept) {
              v = kept[active[k].index];
            } else {
              Status s = timedPlugin(active[k].plugin, ExtensionPoint::kScore, [&] {
                return active[k].plugin->score(state, pod, *nodes[i], v);
              });
              if (!s.ok()) {
                std::lock_guard lock(errMu);
                if (!firstError) firstError = withPlugin(std::move(s), active[k].plugin->name());
                failed.store(true, std::memory_order_relaxed);
                return;
              }
              if (active[k].kept) {
                if (ResultMemo::keepable(v)) {
                  kept[active[k].index] = static_cast<int32_t>(v);
                } else {
                  keepable = false;
                }
              }
            }
            if (active[k].direct) {
              // Nothing reads this plugin's list: its scores go straight to the node's total
              // (writing a list per plugin and summing them afterwards: the ReplicaSet case at 5000
              // nodes took 0.66 s of scheduling with it, 0.60 s without).
              if (v < kMinNodeScore || v > kMaxNodeScore) {
                std::lock_guard lock(errMu);
                if (!rangeError) rangeError = invalidScore(*active[k].plugin, v);
                failed.store(true, std::memory_order_relaxed);
                return;
              }
              direct += v * active[k].weight;
              continue;
            }
            if (active[k].named) scores[k][i].name.assign(nodes[i]->name());
            scores[k][i].score = v;
          }
          totals[static_cast<size_t>(i)] = direct;
          if (memo != nullptr && !known && keepable) memo->setScored(slot);
        },
        [&] { return failed.load(std::memory_order_relaxed); });
    if (firstError) {
      return Status::error("running Score plugin \"" + firstError->plugin() +
                           "\": " + firstError->message())
          .withPlugin(firstError->plugin());
    }
    if (rangeError) return std::move(*rangeError);
    if (breakdown != nullptr) {
      // Filled in place: a caller that keeps its breakdown from cycle to cycle allocates once.
      breakdown->plugins.resize(active.size());
      breakdown->weights.resize(active.size());
      breakdown->raw.resize(active.size());
      breakdown->normalized.resize(active.size());
      for (size_t k = 0; k < active.size(); ++k) {
        breakdown->plugins[k].assign(active[k].plugin->name());
        breakdown->weights[k] = active[k].weight;
        auto& raw = breakdown->raw[k];
        raw.resize(nodes.size());
        for (size_t i = 0; i < nodes.size(); ++i) raw[i] = scores[k][i].score;
      }
    }
    for (size_t k = 0; k < active.size(); ++k) {
      if (active[k].direct) continue;
      const auto* plugin = active[k].plugin;
      if (plugin->hasNormalizeScore()) {
        Status s = plugin->normalizeScore(state, pod, scores[k]);
        if (!s.ok()) {
          return Status::error("running Normalize on Score plugin \"" +
                               std::string(plugin->name()) + "\": " + s.message())
              .withPlugin(plugin->name());
        }
      }
      for (size_t i = 0; i < nodes.size(); ++i) {
        int64_t v = scores[k][i].score;
        if (v < kMinNodeScore || v > kMaxNodeScore) return invalidScore(*plugin, v);
        totals[i] += v * active[k].weight;
      }
      if (breakdown != nullptr) {
        auto& normalized = breakdown->normalized[k];
        normalized.resize(nodes.size());
        for (size_t i = 0; i < nodes.size(); ++i) normalized[i] = scores[k][i].score;
      }
    }
    return {};
  });
}

}  // namespace ksched::framework
