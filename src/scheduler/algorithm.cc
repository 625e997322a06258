#include "scheduler/algorithm.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>

#include "extender/extenders.h"
#include "framework/prefetch.h"
#include "framework/result_memo.h"

namespace ksched::scheduler {
namespace {

constexpr int kMinFeasibleNodesToFind = 100;
constexpr int kMinFeasibleNodesPercentageToFind = 5;

}  // namespace

Algorithm::Algorithm(uint64_t seed) : rng_(seed) {}
Algorithm::~Algorithm() = default;
Algorithm::Algorithm(Algorithm&&) noexcept = default;
Algorithm& Algorithm::operator=(Algorithm&&) noexcept = default;

int numFeasibleNodesToFind(int32_t percentage, int numAllNodes) {
  if (numAllNodes < kMinFeasibleNodesToFind || percentage >= 100) return numAllNodes;
  int32_t adaptive = percentage;
  if (adaptive <= 0) {
    adaptive = 50 - numAllNodes / 125;
    if (adaptive < kMinFeasibleNodesPercentageToFind) adaptive = kMinFeasibleNodesPercentageToFind;
  }
  int n = static_cast<int>(static_cast<int64_t>(numAllNodes) * adaptive / 100);
  return n < kMinFeasibleNodesToFind ? kMinFeasibleNodesToFind : n;
}

Algorithm::Outcome Algorithm::schedulePod(framework::Framework& fwk, CycleState& state,
                                          const api::Pod& pod, const NodeInfoLister& snapshot,
                                          int32_t globalPercentage, ScheduleResult& result,
                                          FitError& fitError, Status& error) {
  return schedule(fwk, state, pod, snapshot, globalPercentage, result, fitError, error, nullptr);
}

Algorithm::Outcome Algorithm::schedulePod(framework::Framework& fwk, CycleState& state,
                                          const PodPtr& pod, int64_t cycle,
                                          const NodeInfoLister& snapshot, int32_t globalPercentage,
                                          ScheduleResult& result, FitError& fitError,
                                          Status& error) {
  if (!batching_) {
    return schedule(fwk, state, *pod, snapshot, globalPercentage, result, fitError, error, nullptr);
  }
  auto& batch = batches_[&fwk];
  if (!batch) batch = std::make_unique<OpportunisticBatch>(fwk, batchMetrics_, batchClock_);
  Batching b{.batch = batch.get(), .pod = pod, .cycle = cycle, .signed_ = fwk.signPod(*pod)};
  Outcome out = schedule(fwk, state, *pod, snapshot, globalPercentage, result, fitError, error, &b);
  if (out != Outcome::kScheduled) batch->failed();
  return out;
}

void Algorithm::placementFailed(framework::Framework& fwk) {
  if (auto it = batches_.find(&fwk); it != batches_.end()) it->second->failed();
}

int64_t Algorithm::batchedPods(const framework::Framework& fwk) const {
  auto it = batches_.find(&fwk);
  return it == batches_.end() ? 0 : it->second->batchedPods();
}

Algorithm::Outcome Algorithm::schedule(framework::Framework& fwk, CycleState& state,
                                       const api::Pod& pod, const NodeInfoLister& snapshot,
                                       int32_t globalPercentage, ScheduleResult& result,
                                       FitError& fitError, Status& error, Batching* batching) {
  const auto& all = snapshot.list();
  if (all.empty()) {
    // Unschedulable, as upstream; with no plugin to wait for, the pod backs off.
    error = Status::unresolvable("no nodes available to schedule pods");
    return Outcome::kError;
  }
  cycleMemo_ = nullptr;
  int32_t percentage = fwk.percentageOfNodesToScore().value_or(globalPercentage);
  std::vector<const NodeInfo*> feasible;
  Diagnosis diagnosis;
  Status s = findNodesThatFit(fwk, state, pod, snapshot, percentage, diagnosis, feasible, batching);
  if (s.isError()) {
    error = std::move(s);
    return Outcome::kError;
  }
  result.evaluatedNodes = static_cast<int>(feasible.size() + diagnosis.nodeToStatus.size());
  result.feasibleNodes = static_cast<int>(feasible.size());
  if (feasible.empty()) {
    fitError.numAllNodes = static_cast<int>(all.size());
    fitError.diagnosis = std::move(diagnosis);
    return Outcome::kUnschedulable;
  }
  if (feasible.size() == 1) {
    result.suggestedHost = feasible[0]->name();
    if (batching != nullptr) {
      result.batched = !batching->hint.empty() && batching->hint == result.suggestedHost;
      if (result.batched) {
        result.ties = batching->ties;
        result.tiedWith = std::move(batching->tiedWith);
      }
      batching->batch->store(batching->pod, batching->signed_, batching->hint, result.suggestedHost,
                             batching->cycle, nullptr, nullptr);
    }
    return Outcome::kScheduled;
  }
  s = fwk.runPreScorePlugins(state, pod, feasible);
  if (!s.ok()) {
    error = std::move(s);
    return Outcome::kError;
  }
  std::vector<int64_t> scores;
  const auto& extenders = fwk.extenders();
  // A pod that may start a batch keeps each plugin's scores.
  const bool keep = batching != nullptr && batching->signed_;
  // Kept from cycle to cycle: its vectors are filled in place.
  framework::Framework::ScoreBreakdown& breakdown = breakdown_;
  if (fwk.hasScorePlugins()) {
    s = fwk.runScorePlugins(state, pod, feasible, scores, keep ? &breakdown : nullptr, cycleMemo_,
                            cycleMemo_ != nullptr ? &feasibleSlots_ : nullptr);
    if (!s.ok()) {
      error = std::move(s);
      return Outcome::kError;
    }
  } else {
    // Without Score plugins and extenders every node scores 1 (upstream); extender scores add to
    // 0.
    scores.assign(feasible.size(), extenders.empty() ? 1 : 0);
    breakdown = {};
  }
  if (!extenders.empty()) extender::addExtenderScores(extenders, pod, feasible, scores);
  if (spdlog::should_log(spdlog::level::trace)) {  // -v >= 6, as upstream's V(10)
    for (size_t i = 0; i < feasible.size(); ++i) {
      spdlog::trace("Calculated node's final score for pod pod=\"{}/{}\" node=\"{}\" score={}",
                    pod.metadata.namespace_, pod.metadata.name, feasible[i]->name(), scores[i]);
    }
  }
  result.suggestedHost =
      selectHost(feasible, scores, recordTies_ ? &result.tiedWith : nullptr, &result.ties);
  if (batching != nullptr) {
    batching->batch->store(batching->pod, batching->signed_, batching->hint, result.suggestedHost,
                           batching->cycle, &feasible, &breakdown);
  }
  return Outcome::kScheduled;
}

Status Algorithm::findNodesThatFit(framework::Framework& fwk, CycleState& state,
                                   const api::Pod& pod, const NodeInfoLister& snapshot,
                                   int32_t percentage, Diagnosis& diagnosis,
                                   std::vector<const NodeInfo*>& feasible, Batching* batching) {
  const auto& all = snapshot.list();
  PreFilterResult pre;
  std::set<std::string, std::less<>> pluginsWithNodes;
  Status s = fwk.runPreFilterPlugins(state, pod, pre, &pluginsWithNodes);
  if (!s.ok()) {
    if (!s.isRejected()) return s;
    // Every node is rejected by the PreFilter plugin.
    diagnosis.preFilterMsg = s.message();
    for (const NodeInfo* n : all) diagnosis.nodeToStatus.emplace(n->name(), s);
    diagnosis.unschedulablePlugins.insert(pluginsWithNodes.begin(), pluginsWithNodes.end());
    if (!s.plugin().empty()) diagnosis.unschedulablePlugins.insert(s.plugin());
    return {};
  }
  // Nodes outside a PreFilterResult count as rejected by the plugins that returned it, so the
  // pod waits for their events (a pod pinned to a missing node waits for that node).
  struct Outside {
    const std::vector<const NodeInfo*>& all;
    const PreFilterResult& pre;
    const std::set<std::string, std::less<>>& plugins;
    Diagnosis& diagnosis;
    const std::vector<const NodeInfo*>& feasible;
    ~Outside() {
      if (!pre.nodeNames || !feasible.empty()) return;
      std::string msg = "node(s) didn't satisfy plugin(s) [";
      for (const auto& name : plugins) msg += (msg.back() == '[' ? "" : " ") + name;
      msg += "]";
      const Status out = Status::unresolvable(msg);
      for (const NodeInfo* n : all) {
        if (!pre.nodeNames->contains(n->name())) diagnosis.nodeToStatus.emplace(n->name(), out);
      }
      diagnosis.unschedulablePlugins.insert(plugins.begin(), plugins.end());
    }
  } outside{all, pre, pluginsWithNodes, diagnosis, feasible};
  std::vector<const NodeInfo*> restricted;
  const std::vector<const NodeInfo*>* nodes = &all;
  if (pre.nodeNames) {
    for (const auto& name : *pre.nodeNames) {
      if (const NodeInfo* n = snapshot.get(name); n != nullptr && n->node() != nullptr) {
        restricted.push_back(n);
      }
    }
    nodes = &restricted;
  }
  // Opportunistic batching: the next-best node of the previous cycle, when the batch serves
  // this pod, is the one node filtered (as upstream, like a nominated node).
  if (batching != nullptr) {
    if (pre.nodeNames) batching->signed_ = false;
    batching->hint = batching->batch->nodeHint(state, batching->pod, batching->signed_,
                                               batching->cycle, snapshot, rng_, &batching->ties,
                                               recordTies_ ? &batching->tiedWith : nullptr);
    if (!batching->hint.empty()) {
      const NodeInfo* hinted = snapshot.get(batching->hint);
      if (hinted != nullptr && hinted->node() != nullptr) {
        Status fs = fwk.runFilterPluginsWithNominatedPods(state, pod, *hinted);
        if (fs.ok()) {
          feasible.assign(1, hinted);
          return {};
        }
        if (fs.isError()) return fs;
      }
    }
  }
  // A pod nominated by an earlier preemption tries its nominated node first (upstream
  // evaluateNominatedNode): its victims are gone, and the room is reserved for it.
  if (const std::string& nominated = pod.status.nominatedNodeName; !nominated.empty()) {
    const NodeInfo* ni = snapshot.get(nominated);
    if (ni != nullptr && ni->node() != nullptr &&
        (!pre.nodeNames || pre.nodeNames->contains(nominated))) {
      Status fs = fwk.runFilterPluginsWithNominatedPods(state, pod, *ni);
      if (fs.ok()) {
        std::vector<const NodeInfo*> one{ni};
        if (fwk.extenders().empty()) {
          feasible = std::move(one);
          return {};
        }
        // The extenders must accept it as well; if they do not (or fail), all nodes are
        // evaluated as usual (upstream evaluateNominatedNode).
        NodeToStatus rejected;
        Status es = extender::findNodesThatPassExtenders(fwk.extenders(), pod, one, rejected);
        if (es.ok() && !one.empty()) {
          feasible = std::move(one);
          return {};
        }
        if (!es.ok()) {
          spdlog::info("evaluating nominated node {} of {}/{}: {}", nominated,
                       pod.metadata.namespace_, pod.metadata.name, es.message());
        }
      }
      if (fs.isError()) return fs;
    }
  }
  const int n = static_cast<int>(nodes->size());
  if (n == 0) return {};
  const int toFind = numFeasibleNodesToFind(percentage, static_cast<int>(all.size()));
  const size_t start = pre.nodeNames ? 0 : nextStartNodeIndex_ % static_cast<size_t>(n);
  feasible.assign(static_cast<size_t>(std::min(toFind, n)), nullptr);
  // Over every node of the snapshot, the node-local plugins' answers may come from earlier
  // cycles of pods like this one.
  framework::ResultMemo* memo = nullptr;
  if (nodes == &all) {
    auto& kept = memos_[&fwk];
    if (!kept) kept = std::make_unique<framework::ResultMemo>(fwk);
    if (kept->begin(pod, state, snapshot)) memo = kept.get();
  }
  // Nominations made while the cycle runs (the informer's) count from the next cycle.
  const bool nominations = memo != nullptr && fwk.mayHaveNominatedPods();
  if (memo != nullptr) feasibleSlots_.assign(feasible.size(), 0);
  std::atomic<int> found{0};
  std::atomic<int> processed{0};
  std::mutex mu;
  std::optional<Status> firstError;  // guarded by mu
  std::atomic<bool> failed{false};   // firstError is set (read by stop() without the lock)
  // The k-th node of the walk (k < n): start < n, so one subtraction wraps it (a division per
  // node was a tenth of the loop's own time).
  const auto slotAt = [&](int k) {
    const size_t at = start + static_cast<size_t>(k);
    return at >= static_cast<size_t>(n) ? at - static_cast<size_t>(n) : at;
  };
  fwk.parallelizer().until(
      n,
      [&](int i) {
        framework::prefetchAhead(i, [&](int k) -> const NodeInfo* {
          if (k >= n) return nullptr;
          const size_t at = slotAt(k);
          // A node the memo answers for without a plugin is not read at all.
          return memo != nullptr && memo->answersAlone(at) ? nullptr : (*nodes)[at];
        });
        const size_t slot = slotAt(i);
        const NodeInfo* node = (*nodes)[slot];
        Status fs = memo != nullptr && !(nominations && fwk.hasNominatedPodsFor(pod, *node))
                        ? memo->filter(state, pod, *node, slot)
                        : fwk.runFilterPluginsWithNominatedPods(state, pod, *node);
        if (fs.ok()) {
          int idx = found.fetch_add(1);
          if (idx < toFind) {
            feasible[static_cast<size_t>(idx)] = node;
            if (memo != nullptr)
              feasibleSlots_[static_cast<size_t>(idx)] = static_cast<uint32_t>(slot);
            processed.fetch_add(1);
          }
          return;
        }
        processed.fetch_add(1);
        std::lock_guard lock(mu);
        if (fs.isError()) {
          if (!firstError) firstError = std::move(fs);
          failed.store(true, std::memory_order_relaxed);
          return;
        }
        if (!fs.plugin().empty()) diagnosis.unschedulablePlugins.insert(fs.plugin());
        diagnosis.nodeToStatus.emplace(node->name(), std::move(fs));
      },
      [&] {
        return found.load(std::memory_order_relaxed) >= toFind ||
               failed.load(std::memory_order_relaxed);
      });
  if (firstError) return *firstError;
  feasible.resize(static_cast<size_t>(std::min(found.load(), toFind)));
  if (memo != nullptr) {
    feasibleSlots_.resize(feasible.size());
    cycleMemo_ = memo;
  }
  if (!pre.nodeNames) {
    nextStartNodeIndex_ = (start + static_cast<size_t>(processed.load())) % static_cast<size_t>(n);
  }
  if (const auto& extenders = fwk.extenders(); !extenders.empty() && !feasible.empty()) {
    const size_t before = feasible.size();
    Status es =
        extender::findNodesThatPassExtenders(extenders, pod, feasible, diagnosis.nodeToStatus);
    if (!es.ok()) return es;
    // Extenders register no cluster events: any event retries a pod they rejected nodes for.
    if (feasible.size() != before) {
      diagnosis.unschedulablePlugins.insert(std::string(extender::kExtenderName));
    }
  }
  return {};
}

std::string Algorithm::selectHost(const std::vector<const NodeInfo*>& nodes,
                                  const std::vector<int64_t>& scores,
                                  std::vector<std::string>* tiedWith, int* tieCount) {
  // Uniformly at random among the nodes with the top score: count them, then draw one (a
  // single draw, where sampling as it goes would draw once per tie).
  int64_t top = scores[0];
  int ties = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (scores[i] > top) {
      top = scores[i];
      ties = 1;
    } else if (scores[i] == top) {
      ++ties;
    }
  }
  *tieCount = ties - 1;
  int pick = ties == 1 ? 0 : std::uniform_int_distribution<int>(0, ties - 1)(rng_);
  size_t best = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (scores[i] == top && pick-- == 0) {
      best = i;
      break;
    }
  }
  if (tiedWith != nullptr && ties > 1) {
    for (size_t i = 0; i < nodes.size() && tiedWith->size() < ScheduleResult::kMaxTiedNames; ++i) {
      if (scores[i] == top && i != best) tiedWith->push_back(nodes[i]->name());
    }
  }
  return nodes[best]->name();
}

}  // namespace ksched::scheduler
