// Micro benchmarks of PodTopologySpread on 5000 nodes over 3 zones holding 10 000 pods with
// app=x (upstream BenchmarkFilter / BenchmarkTestPodTopologySpreadScore at a larger size).
// Figures are printed, never asserted.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include <ksched/api/node.h>
#include <ksched/api/pod.h>
#include <ksched/handle.h>
#include <ksched/listers.h>

#include "bench_util.h"
#include "cache/snapshot.h"
#include "framework/parallelizer.h"
#include "plugins/pod_topology_spread/pod_topology_spread.h"

namespace ksched {
namespace {

constexpr int kNodes = 5000;
constexpr int kPods = 10000;

using bench::BenchHandle;

NodePtr makeNode(int i) {
  auto n = std::make_shared<api::Node>();
  n->metadata.name = "node-" + std::to_string(i);
  n->metadata.labels = {{std::string(api::kLabelHostname), n->metadata.name},
                        {std::string(api::kLabelTopologyZone), "zone-" + std::to_string(i % 3)}};
  return n;
}

PodPtr makePod(int i, const std::string& node) {
  auto p = std::make_shared<api::Pod>();
  p->metadata.name = "p-" + std::to_string(i);
  p->metadata.namespace_ = "bench";
  p->metadata.uid = "uid-" + p->metadata.name;
  p->metadata.labels = {{"app", "x"}};
  p->spec.nodeName = node;
  return p;
}

std::unique_ptr<BenchHandle> makeCluster() {
  std::vector<NodePtr> nodes;
  std::vector<PodPtr> pods;
  for (int i = 0; i < kNodes; ++i) nodes.push_back(makeNode(i));
  for (int i = 0; i < kPods; ++i) pods.push_back(makePod(i, nodes[i % kNodes]->metadata.name));
  return std::make_unique<BenchHandle>(cache::Snapshot::fromForTest(pods, nodes));
}

// The incoming pod: app=x with zone and hostname constraints (maxSkew 1, selector app=x).
api::Pod incomingPod(std::string_view whenUnsatisfiable) {
  api::Pod p;
  p.metadata.name = "incoming";
  p.metadata.namespace_ = "bench";
  p.metadata.labels = {{"app", "x"}};
  for (std::string_view key : {api::kLabelTopologyZone, api::kLabelHostname}) {
    api::TopologySpreadConstraint c;
    c.maxSkew = 1;
    c.topologyKey = std::string(key);
    c.whenUnsatisfiable = std::string(whenUnsatisfiable);
    api::LabelSelector sel;
    sel.matchLabels = {{"app", "x"}};
    c.labelSelector = sel;
    p.spec.topologySpreadConstraints.push_back(std::move(c));
  }
  return p;
}

// PreFilter, then Filter over all 5000 nodes (on the pool, as the framework runs it).
void BM_PodTopologySpreadPreFilterFilter(benchmark::State& state) {
  auto h = makeCluster();
  auto plugin = makePlugin(plugins::podTopologySpreadFactory(),
                           nlohmann::json{{"defaultingType", "List"}}, *h);
  auto& pl = dynamic_cast<plugins::PodTopologySpread&>(*plugin);
  const api::Pod pod = incomingPod(api::kDoNotSchedule);
  const std::vector<const NodeInfo*>& nodes = h->snapshot().list();
  int64_t feasible = 0;
  for (auto _ : state) {
    CycleState cs;
    PreFilterResult result;
    if (!pl.preFilter(cs, pod, h->snapshot(), result).ok()) state.SkipWithError("preFilter");
    std::atomic<int64_t> fit{0};
    h->parallelizer().until(static_cast<int>(nodes.size()), [&](int i) {
      if (pl.filter(cs, pod, *nodes[static_cast<size_t>(i)]).ok()) fit.fetch_add(1);
    });
    feasible += fit.load();
  }
  state.counters["nodes"] = static_cast<double>(nodes.size());
  state.counters["feasible_per_cycle"] =
      benchmark::Counter(static_cast<double>(feasible) / static_cast<double>(state.iterations()));
}
BENCHMARK(BM_PodTopologySpreadPreFilterFilter)->Unit(benchmark::kMicrosecond)->UseRealTime();

// PreScore, Score over all 5000 nodes (on the pool) and NormalizeScore. The snapshot does not
// change between iterations: with kept counts (argument 1) PreScore reads every node once, in
// the first iteration; argument 0 walks every node in every cycle, as upstream does.
void BM_PodTopologySpreadScore(benchmark::State& state) {
  plugins::PodTopologySpread::setCountCacheEnabledForTest(state.range(0) != 0);
  auto h = makeCluster();
  auto plugin = makePlugin(plugins::podTopologySpreadFactory(),
                           nlohmann::json{{"defaultingType", "List"}}, *h);
  auto& pl = dynamic_cast<plugins::PodTopologySpread&>(*plugin);
  const api::Pod pod = incomingPod(api::kScheduleAnyway);
  const std::vector<const NodeInfo*>& nodes = h->snapshot().list();
  std::vector<NodeScore> scores(nodes.size());
  for (auto _ : state) {
    CycleState cs;
    if (!pl.preScore(cs, pod, nodes).ok()) state.SkipWithError("preScore");
    h->parallelizer().until(static_cast<int>(nodes.size()), [&](int i) {
      const auto k = static_cast<size_t>(i);
      int64_t v = 0;
      (void)pl.score(cs, pod, *nodes[k], v);
      scores[k] = NodeScore{nodes[k]->name(), v};
    });
    if (!pl.normalizeScore(cs, pod, scores).ok()) state.SkipWithError("normalizeScore");
    benchmark::DoNotOptimize(scores.data());
  }
  state.counters["nodes"] = static_cast<double>(nodes.size());
  plugins::PodTopologySpread::setCountCacheEnabledForTest(true);
}
BENCHMARK(BM_PodTopologySpreadScore)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace
}  // namespace ksched
