// Micro benchmarks of the scheduling hot path (Google Benchmark). Figures are printed, never
// asserted; docs/performance.md records them next to kube-scheduler's.
#include <benchmark/benchmark.h>

#include <optional>
#include <thread>

#include <ksched/api/quantity.h>

#include "cache/cache.h"
#include "cache/snapshot.h"
#include "config/profile.h"
#include "framework/framework.h"
#include "framework/parallelizer.h"
#include "framework/result_memo.h"
#include "plugins/registry.h"
#include "scheduler/algorithm.h"
#include "scheduler/explain.h"

namespace ksched {
namespace {

class NullRecorder final : public EventRecorder {
 public:
  void event(const api::Pod&, std::string_view, std::string_view, std::string_view,
             std::string) override {}
};

NodePtr makeNode(int i) {
  auto n = std::make_shared<api::Node>();
  n->metadata.name = "node-" + std::to_string(i);
  n->metadata.uid = "node-uid-" + std::to_string(i);
  n->metadata.labels = {{"kubernetes.io/hostname", n->metadata.name},
                        {"topology.kubernetes.io/zone", "zone-" + std::to_string(i % 3)}};
  for (auto* list : {&n->status.allocatable, &n->status.capacity}) {
    (*list)["cpu"] = api::Quantity::parse("32");
    (*list)["memory"] = api::Quantity::parse("128Gi");
    (*list)["pods"] = api::Quantity::parse("110");
  }
  return n;
}

PodPtr makePod(const std::string& name, const std::string& node) {
  auto p = std::make_shared<api::Pod>();
  p->metadata.name = name;
  p->metadata.namespace_ = "bench";
  p->metadata.uid = "uid-" + name;
  p->spec.nodeName = node;
  api::Container c;
  c.name = "c";
  c.resources.requests["cpu"] = api::Quantity::parse("100m");
  c.resources.requests["memory"] = api::Quantity::parse("128Mi");
  p->spec.containers.push_back(std::move(c));
  return p;
}

// `numNodes` nodes holding 10 pods each, as a snapshot, and the default profile's framework
// over it.
struct DefaultProfileOver {
  cache::Snapshot snap;
  NullRecorder rec;
  std::optional<framework::ThreadPoolParallelizer> par{
      std::in_place, static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))};
  std::unique_ptr<framework::Framework> fwk;

  explicit DefaultProfileOver(int numNodes, int parallelism = 0) {
    if (parallelism > 0) par.emplace(parallelism);
    std::vector<NodePtr> nodes;
    std::vector<PodPtr> pods;
    for (int i = 0; i < numNodes; ++i) {
      nodes.push_back(makeNode(i));
      for (int k = 0; k < 10; ++k) {
        pods.push_back(makePod("p-" + std::to_string(i) + "-" + std::to_string(k),
                               nodes.back()->metadata.name));
      }
    }
    snap = cache::Snapshot::fromForTest(pods, nodes);
    framework::Services services;
    services.events = &rec;
    services.parallelizer = &*par;
    fwk = std::make_unique<framework::Framework>(config::defaultProfile(features::Gates{}),
                                                 plugins::inTreeRegistry(), services);
    fwk->setSnapshot(&snap);
  }
};

// One full scheduling cycle (PreFilter, Filter over the adaptive share of nodes, PreScore,
// Score, select) with the default profile, over `nodes` nodes holding 10 pods each: every
// plugin on every node (the node-local answers kept from cycle to cycle, framework::ResultMemo,
// off), or, in BM_SchedulingCycleKept, with them kept (the snapshot does not change between
// iterations: the cost of a cycle whose nodes' answers are all known).
void schedulingCycle(benchmark::State& state, bool kept) {
  framework::ResultMemo::setEnabled(kept);
  DefaultProfileOver env(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  auto& fwk = *env.fwk;
  const auto& snap = env.snap;
  scheduler::Algorithm algo(7);
  auto incoming = makePod("incoming", "");
  int64_t feasible = 0;
  for (auto _ : state) {
    CycleState cs;
    scheduler::ScheduleResult r;
    scheduler::FitError fe;
    Status err;
    auto outcome = algo.schedulePod(fwk, cs, *incoming, snap, 0, r, fe, err);
    if (outcome != scheduler::Algorithm::Outcome::kScheduled) state.SkipWithError("not scheduled");
    feasible += r.feasibleNodes;
    benchmark::DoNotOptimize(r.suggestedHost);
  }
  state.counters["feasible_per_cycle"] =
      benchmark::Counter(static_cast<double>(feasible) / static_cast<double>(state.iterations()));
  framework::ResultMemo::setEnabled(true);
}
void BM_SchedulingCycle(benchmark::State& state) { schedulingCycle(state, false); }
void BM_SchedulingCycleKept(benchmark::State& state) { schedulingCycle(state, true); }
// Args: nodes, Filter/Score parallelism (0 = one per core). CPU is the whole process's, the
// pool's workers included.
BENCHMARK(BM_SchedulingCycle)
    ->Args({500, 0})
    ->Args({5000, 0})
    ->Args({500, 1})
    ->Args({5000, 1})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime();
BENCHMARK(BM_SchedulingCycleKept)
    ->Args({500, 1})
    ->Args({5000, 1})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime();

// Explain for one pod over `nodes` nodes holding 10 pods each, default profile: Filter with
// every plugin on every node, Score on every feasible node (no percentageOfNodesToScore).
void BM_ExplainPod(benchmark::State& state) {
  const int numNodes = static_cast<int>(state.range(0));
  DefaultProfileOver env(numNodes);
  auto& fwk = *env.fwk;
  const auto& snap = env.snap;
  auto incoming = makePod("incoming", "");
  for (auto _ : state) {
    auto e = scheduler::explainPod(fwk, *incoming, snap, 0);
    if (e.feasible.size() != static_cast<size_t>(numNodes)) state.SkipWithError("not all fit");
    benchmark::DoNotOptimize(e.selected);
  }
}
BENCHMARK(BM_ExplainPod)->Arg(5000)->Unit(benchmark::kMillisecond)->UseRealTime();

// Cache::updateSnapshot after one pod changed, on 5000 nodes: the incremental copy.
void BM_UpdateSnapshotOneChange(benchmark::State& state) {
  cache::Cache cache;
  for (int i = 0; i < 5000; ++i) cache.addNode(makeNode(i));
  for (int i = 0; i < 5000; ++i)
    (void)cache.addPod(makePod("p" + std::to_string(i), "node-" + std::to_string(i)));
  cache::Snapshot snap;
  cache.updateSnapshot(snap);
  int n = 0;
  for (auto _ : state) {
    (void)cache.addPod(makePod("extra-" + std::to_string(n), "node-" + std::to_string(n % 5000)));
    ++n;
    benchmark::DoNotOptimize(cache.updateSnapshot(snap));
  }
}
BENCHMARK(BM_UpdateSnapshotOneChange)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace ksched
