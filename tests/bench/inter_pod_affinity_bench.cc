// Micro benchmarks of InterPodAffinity on a 5000-node, 10 000-pod cluster (3 zones). One pod in
// five is a "pod-with-pod-anti-affinity" like upstream scheduler_perf's template: labelled
// color=green with a required anti-affinity to color=green on the hostname.
#include <benchmark/benchmark.h>

#include <algorithm>
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
#include "plugins/inter_pod_affinity/inter_pod_affinity.h"

namespace ksched {
namespace {

constexpr int kNodes = 5000;
constexpr int kPods = 10000;
constexpr const char* kHostname = "kubernetes.io/hostname";
constexpr const char* kZone = "topology.kubernetes.io/zone";

using bench::BenchHandle;

void addNamespaces(BenchHandle& h) {
  for (const char* name : {"sched-0", "sched-1"}) {
    api::Namespace ns;
    ns.metadata.name = name;
    h.mutableListers().add(ns);
  }
}

api::PodAffinityTerm makeTerm(const std::string& key, const std::string& value,
                              const std::string& topologyKey) {
  api::PodAffinityTerm t;
  t.labelSelector = api::LabelSelector{};
  t.labelSelector->matchLabels[key] = value;
  t.topologyKey = topologyKey;
  t.namespaces = {"sched-0", "sched-1"};
  return t;
}

NodePtr makeNode(int i) {
  auto n = std::make_shared<api::Node>();
  n->metadata.name = "node-" + std::to_string(i);
  n->metadata.labels = {{kHostname, n->metadata.name}, {kZone, "zone-" + std::to_string(i % 3)}};
  return n;
}

PodPtr makeExistingPod(int i) {
  auto p = std::make_shared<api::Pod>();
  p->metadata.name = "p-" + std::to_string(i);
  p->metadata.namespace_ = "sched-" + std::to_string(i % 2);
  p->metadata.uid = "uid-" + p->metadata.name;
  if (i % 5 == 0) {
    // Green pods spread one per node thanks to their anti-affinity.
    p->spec.nodeName = "node-" + std::to_string((i / 5) % kNodes);
    p->metadata.labels = {{"color", "green"}, {"name", "test"}};
    api::Affinity a;
    a.podAntiAffinity = api::PodAntiAffinity{};
    a.podAntiAffinity->requiredDuringSchedulingIgnoredDuringExecution.push_back(
        makeTerm("color", "green", kHostname));
    if (i % 10 == 0) {
      a.podAffinity = api::PodAffinity{};
      a.podAffinity->preferredDuringSchedulingIgnoredDuringExecution.push_back(
          {10, makeTerm("app", "web-1", kZone)});
    }
    p->spec.affinity = std::move(a);
  } else {
    p->spec.nodeName = "node-" + std::to_string(i % kNodes);
    p->metadata.labels = {{"app", "web-" + std::to_string(i % 10)}};
  }
  return p;
}

cache::Snapshot makeSnapshot() {
  std::vector<NodePtr> nodes;
  for (int i = 0; i < kNodes; ++i) nodes.push_back(makeNode(i));
  std::vector<PodPtr> pods;
  for (int i = 0; i < kPods; ++i) pods.push_back(makeExistingPod(i));
  return cache::Snapshot::fromForTest(std::move(pods), std::move(nodes));
}

api::Pod makeIncoming(bool preferred) {
  api::Pod p;
  p.metadata.name = "incoming";
  p.metadata.namespace_ = "sched-0";
  p.metadata.uid = "uid-incoming";
  p.metadata.labels = {{"color", "green"}, {"name", "test"}};
  api::Affinity a;
  a.podAffinity = api::PodAffinity{};
  a.podAntiAffinity = api::PodAntiAffinity{};
  if (preferred) {
    a.podAffinity->preferredDuringSchedulingIgnoredDuringExecution.push_back(
        {10, makeTerm("app", "web-1", kZone)});
    a.podAntiAffinity->preferredDuringSchedulingIgnoredDuringExecution.push_back(
        {5, makeTerm("color", "green", kHostname)});
  } else {
    a.podAffinity->requiredDuringSchedulingIgnoredDuringExecution.push_back(
        makeTerm("app", "web-1", kZone));
    a.podAntiAffinity->requiredDuringSchedulingIgnoredDuringExecution.push_back(
        makeTerm("color", "green", kHostname));
  }
  p.spec.affinity = std::move(a);
  return p;
}

// PreFilter + Filter over every node, for a pod with required anti-affinity (hostname) and
// required affinity (zone).
void BM_InterPodAffinityFilter(benchmark::State& state) {
  BenchHandle h(makeSnapshot());
  addNamespaces(h);
  auto plugin = makePlugin(plugins::interPodAffinityFactory(), nullptr, h);
  auto* pl = dynamic_cast<plugins::InterPodAffinity*>(plugin.get());
  const api::Pod incoming = makeIncoming(false);
  const auto& nodes = h.snapshot().list();
  int64_t feasible = 0;
  for (auto _ : state) {
    CycleState cs;
    PreFilterResult r;
    Status s = pl->preFilter(cs, incoming, h.snapshot(), r);
    if (!s.ok()) state.SkipWithError("PreFilter failed");
    feasible = 0;
    for (const NodeInfo* ni : nodes) feasible += pl->filter(cs, incoming, *ni).ok() ? 1 : 0;
    benchmark::DoNotOptimize(feasible);
  }
  state.counters["feasible"] = static_cast<double>(feasible);
}
BENCHMARK(BM_InterPodAffinityFilter)->Unit(benchmark::kMillisecond);

// PreScore + Score over every node + NormalizeScore, for a pod with preferred affinity (zone)
// and preferred anti-affinity (hostname).
void BM_InterPodAffinityScore(benchmark::State& state) {
  BenchHandle h(makeSnapshot());
  addNamespaces(h);
  auto plugin = makePlugin(plugins::interPodAffinityFactory(), nullptr, h);
  auto* pl = dynamic_cast<plugins::InterPodAffinity*>(plugin.get());
  const api::Pod incoming = makeIncoming(true);
  const auto& nodes = h.snapshot().list();
  std::vector<NodeScore> scores(nodes.size());
  for (auto _ : state) {
    CycleState cs;
    Status s = pl->preScore(cs, incoming, nodes);
    if (!s.ok()) state.SkipWithError("PreScore failed");
    for (size_t i = 0; i < nodes.size(); ++i) {
      scores[i].name = nodes[i]->name();
      (void)pl->score(cs, incoming, *nodes[i], scores[i].score);
    }
    (void)pl->normalizeScore(cs, incoming, scores);
    benchmark::DoNotOptimize(scores.data());
  }
}
BENCHMARK(BM_InterPodAffinityScore)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace ksched
