#include "plugins/load_aware/load_aware.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <ksched/api/rfc3339.h>
#include <ksched/cycle_state.h>

#include "tests/support/plugin_test_util.h"

namespace ksched::plugins {
namespace {

using load::Clock;
using load::LoadReading;
using load::NodeLoad;
using nlohmann::json;
using testutil::SnapshotHandle;

// A Prometheus-style reading (ratios of capacity), sampled `age` ago.
NodeLoad ratio(double cpu, double memory, double cpuSd = -1, double memSd = -1,
               std::chrono::seconds age = std::chrono::seconds(5)) {
  NodeLoad l;
  l.cpu = cpu;
  l.memory = memory;
  l.hasCpu = l.hasMemory = true;
  l.cpuStddev = cpuSd;
  l.memoryStddev = memSd;
  l.sampled = Clock::now() - age;
  return l;
}

api::Pod podWithLimit(const std::string& uid, const std::string& cpuRequest,
                      const std::string& cpuLimit = "") {
  api::Pod p = testutil::PodWrapper().name(uid).uid(uid).req({{"cpu", cpuRequest}}).obj();
  if (!cpuLimit.empty())
    p.spec.containers[0].resources.limits["cpu"] = api::Quantity::parse(cpuLimit);
  return p;
}

TEST(TargetLoadPacking, ScoreOfUtilizationMatchesTrimaran) {
  struct Case {
    double u;
    int64_t target;
    int64_t want;
  };
  // Upstream's unit cases (new node 40, hot node 33, excess 0), the KEP's example at target 50
  // (75, 100, 25), and the scores behind upstream's integration placement.
  for (const auto& c : std::vector<Case>{{0, 40, 40},
                                         {50, 40, 33},
                                         {130, 40, 0},
                                         {25, 50, 75},
                                         {50, 50, 100},
                                         {75, 50, 25},
                                         {32.5, 40, 89},
                                         {82.5, 40, 12},
                                         {22.5, 40, 74},
                                         {40, 40, 100},
                                         {67.5, 40, 22},
                                         {7.5, 40, 51},
                                         {100, 40, 0},
                                         {35, 40, 93}}) {
    EXPECT_EQ(TargetLoadPacking::scoreOf(c.u, c.target), c.want) << c.u << " " << c.target;
  }
}

TEST(TargetLoadPacking, PredictsCpuFromLimitsThenRequestsTimesMultiplierThenDefault) {
  EXPECT_EQ(load::LoadAwareBase::predictedMilliCPU(podWithLimit("a", "200m", "700m"), 1000, 1.5),
            700);
  EXPECT_EQ(load::LoadAwareBase::predictedMilliCPU(podWithLimit("a", "300m"), 1000, 1.5), 450);
  api::Pod bestEffort = testutil::PodWrapper().obj();
  bestEffort.spec.containers.emplace_back().name = "c";
  EXPECT_EQ(load::LoadAwareBase::predictedMilliCPU(bestEffort, 1000, 1.5), 1000);
  api::Pod withOverhead =
      testutil::PodWrapper().req({{"cpu", "100m"}}).overhead({{"cpu", "50m"}}).obj();
  EXPECT_EQ(load::LoadAwareBase::predictedMilliCPU(withOverhead, 1000, 2), 250);
}

struct Cluster {
  std::vector<testutil::NodeWrapper> nodes;
  std::vector<std::shared_ptr<NodeInfo>> infos;
  std::vector<const NodeInfo*> list;
  std::unique_ptr<SnapshotHandle> handle;
  explicit Cluster(std::vector<testutil::NodeWrapper> n,
                   const std::vector<testutil::PodWrapper>& podsOnFirst = {})
      : nodes(std::move(n)) {
    std::vector<NodePtr> ptrs;
    for (size_t i = 0; i < nodes.size(); ++i) {
      infos.push_back(testutil::makeNodeInfo(
          nodes[i], i == 0 ? podsOnFirst : std::vector<testutil::PodWrapper>{}));
      list.push_back(infos.back().get());
      ptrs.push_back(nodes[i].ptr());
    }
    handle = std::make_unique<SnapshotHandle>(std::vector<PodPtr>{}, ptrs);
  }
};

std::vector<int64_t> scores(ScorePlugin& plugin, PreScorePlugin& pre, const Cluster& c,
                            const api::Pod& pod) {
  CycleState state;
  EXPECT_TRUE(pre.preScore(state, pod, c.list).ok());
  std::vector<int64_t> out;
  for (const NodeInfo* n : c.list) {
    int64_t s = -1;
    EXPECT_TRUE(plugin.score(state, pod, *n, s).ok());
    out.push_back(s);
  }
  return out;
}

// Upstream's integration cluster: three 2-CPU nodes, read at 10 %, 60 % and 0 % CPU.
Cluster upstreamCluster() {
  return Cluster({testutil::NodeWrapper("node-1").capacity({{"cpu", "2"}, {"memory", "256"}}),
                  testutil::NodeWrapper("node-2").capacity({{"cpu", "2"}, {"memory", "256"}}),
                  testutil::NodeWrapper("node-3").capacity({{"cpu", "2"}, {"memory", "256"}})});
}
LoadReading upstreamReading() {
  LoadReading r;
  r.nodes = {{"node-1", ratio(0.10, 0)}, {"node-2", ratio(0.60, 0)}, {"node-3", ratio(0, 0)}};
  return r;
}

// Upstream's integration test: three 2-CPU nodes at 10 %, 60 % and 0 %; pod-1 (300m, predicted
// 450m) goes to node-1, and so does pod-2 (100m), because pod-1 counts there until a reading sees
// it.
TEST(TargetLoadPacking, FreshlyPlacedPodsCountUntilTheReadingSeesThem) {
  Cluster c = upstreamCluster();
  TargetLoadPacking tlp(TargetLoadPackingArgs{}, *c.handle);
  LoadReading r = upstreamReading();
  tlp.source()->setReading(r);
  const api::Pod pod1 = podWithLimit("pod-1", "300m");
  EXPECT_EQ(scores(tlp, tlp, c, pod1), (std::vector<int64_t>{89, 12, 74}));
  CycleState state;
  ASSERT_TRUE(tlp.reserve(state, pod1, "node-1").ok());
  const api::Pod pod2 = podWithLimit("pod-2", "100m");
  EXPECT_EQ(scores(tlp, tlp, c, pod2), (std::vector<int64_t>{100, 22, 51}));
  // pod-1 evaluated again (explain of a bound pod) does not count its own placement.
  EXPECT_EQ(scores(tlp, tlp, c, pod1), (std::vector<int64_t>{89, 12, 74}));
  // Unreserve takes it back.
  tlp.unreserve(state, pod1, "node-1");
  EXPECT_EQ(scores(tlp, tlp, c, pod2)[0], 66);  // (200 + 150) / 2000 = 17.5 %
  // A reading taken more than a minute after the placement includes it.
  ASSERT_TRUE(tlp.reserve(state, pod1, "node-1").ok());
  r.nodes["node-1"].sampled = Clock::now() + std::chrono::seconds(61);
  tlp.source()->setReading(r);
  EXPECT_EQ(scores(tlp, tlp, c, pod2)[0], 66);
}

// Without PreScore (a profile that enables TargetLoadPacking under `score` alone, as Trimaran's
// docs do) Score reads the source itself; bindings the informer sees count as placements, as
// Trimaran counts them, whoever bound the pod. Upstream's integration placement again.
TEST(TargetLoadPacking, ScoresWithoutPreScoreAndCountsBindingsTheInformerSees) {
  Cluster c = upstreamCluster();
  TargetLoadPacking tlp(TargetLoadPackingArgs{}, *c.handle);
  LoadReading r = upstreamReading();
  tlp.source()->setReading(r);
  auto scoreOnly = [&](const api::Pod& pod) {
    CycleState state;
    std::vector<int64_t> out;
    for (const NodeInfo* n : c.list) {
      int64_t s = -1;
      EXPECT_TRUE(tlp.score(state, pod, *n, s).ok());
      out.push_back(s);
    }
    return out;
  };
  const api::Pod pod1 = podWithLimit("pod-1", "300m");
  const api::Pod pod2 = podWithLimit("pod-2", "100m");
  EXPECT_EQ(scoreOnly(pod1), (std::vector<int64_t>{89, 12, 74}));
  EXPECT_EQ(scoreOnly(pod2), (std::vector<int64_t>{66, 22, 51}));
  // pod-1 seen bound to node-1 (by this scheduler or another): it counts there.
  auto pending = std::make_shared<const api::Pod>(pod1);
  api::Pod bound = pod1;
  bound.spec.nodeName = "node-1";
  auto boundPtr = std::make_shared<const api::Pod>(bound);
  tlp.onPod(pending, boundPtr);
  EXPECT_EQ(scoreOnly(pod2), (std::vector<int64_t>{100, 22, 51}));
  // An update of the bound pod adds nothing more; its deletion takes it back.
  tlp.onPod(boundPtr, boundPtr);
  EXPECT_EQ(scoreOnly(pod2)[0], 100);
  tlp.onPod(boundPtr, nullptr);
  EXPECT_EQ(scoreOnly(pod2)[0], 66);
  // First seen already bound (the informer's list at start-up): counted from its PodScheduled
  // condition, so one bound 10 s ago counts and one bound 10 minutes ago does not.
  auto listed = [&](const std::string& uid, std::chrono::seconds ago) {
    api::Pod p = podWithLimit(uid, "300m");
    p.spec.nodeName = "node-1";
    p.status.conditions.push_back(
        {"PodScheduled", "True", "", "", api::formatRFC3339(Clock::now() - ago)});
    return std::make_shared<const api::Pod>(p);
  };
  tlp.onPod(nullptr, listed("old", std::chrono::seconds(600)));
  EXPECT_EQ(scoreOnly(pod2)[0], 66);
  auto recent = listed("recent", std::chrono::seconds(10));
  tlp.onPod(nullptr, recent);
  EXPECT_EQ(scoreOnly(pod2)[0], 100);
  // A pod that finished uses nothing.
  api::Pod done = *recent;
  done.status.phase = "Succeeded";
  tlp.onPod(recent, std::make_shared<const api::Pod>(done));
  EXPECT_EQ(scoreOnly(pod2)[0], 66);
}

TEST(TargetLoadPacking, NodesWithoutAFreshReadingAreScoredByRequests) {
  // node-1 has 1000m of 2000m requested; node-2 is empty.
  Cluster c({testutil::NodeWrapper("node-1").capacity({{"cpu", "2"}, {"memory", "4Gi"}}),
             testutil::NodeWrapper("node-2").capacity({{"cpu", "2"}, {"memory", "4Gi"}})},
            {testutil::PodWrapper().name("old").req({{"cpu", "1"}})});
  TargetLoadPacking tlp(TargetLoadPackingArgs{}, *c.handle);
  const api::Pod pod = podWithLimit("p", "300m");
  // No reading at all: (1000 + 450) / 2000 = 72.5 % -> 18; (0 + 450) / 2000 = 22.5 % -> 74.
  EXPECT_EQ(scores(tlp, tlp, c, pod), (std::vector<int64_t>{18, 74}));
  // A stale reading (older than staleAfter, 3m) is not used either.
  LoadReading r;
  r.nodes = {{"node-1", ratio(0, 0, -1, -1, std::chrono::minutes(4))}, {"node-2", ratio(0.9, 0)}};
  tlp.source()->setReading(r);
  EXPECT_EQ(scores(tlp, tlp, c, pod), (std::vector<int64_t>{18, 0}));
  CycleState state;
  ASSERT_TRUE(tlp.preScore(state, pod, c.list).ok());
  EXPECT_EQ(tlp.explainScore(state, pod, *c.list[0]),
            "cpu 50% (metrics-server reading 240s old (stale), scored by requests) + pod 450m, "
            "target 40%: 18");
  EXPECT_EQ(tlp.explainScore(state, pod, *c.list[1]),
            "cpu 90% (metrics-server, 5s old) + pod 450m, target 40%: 0");
}

TEST(TargetLoadPacking, AbsoluteReadingsAreShareOfCapacity) {
  Cluster c({testutil::NodeWrapper("n").capacity({{"cpu", "4"}, {"memory", "8Gi"}})});
  TargetLoadPacking tlp(TargetLoadPackingArgs{}, *c.handle);
  LoadReading r;
  NodeLoad l = ratio(0, 0);
  l.absolute = true;
  l.cpu = 400;  // millicores: 10 %
  l.memory = 1 << 30;
  r.nodes["n"] = l;
  tlp.source()->setReading(r);
  api::Pod bestEffort = testutil::PodWrapper().obj();
  bestEffort.spec.containers.emplace_back().name = "c";
  // (400 + 1000) / 4000 = 35 % -> round(92.5) = 93.
  EXPECT_EQ(scores(tlp, tlp, c, bestEffort)[0], 93);
}

TEST(LoadVariationRiskBalancing, RiskScoreMatchesTrimaransComputeScore) {
  struct Case {
    double mu, sigma, margin, sensitivity;
    int64_t want;
  };
  for (const auto& c : std::vector<Case>{{0.5, 0.36, 1, 1, 57},
                                         {0.1, 0.36, 1, 2, 65},
                                         {1.1, 0.36, 1, 2, 20},
                                         {0.5, 0, 1, 2, 75},
                                         {0.5, 1.2, 1, 2, 25},
                                         {0.5, 0.36, -1, 1, 75},
                                         {0.5, 0.36, 1, -1, 57},
                                         {0.5, 0.36, 1, 0, 75}}) {
    EXPECT_EQ(
        std::round(LoadVariationRiskBalancing::riskScore(c.mu, c.sigma, c.margin, c.sensitivity)),
        c.want)
        << c.mu << " " << c.sigma << " " << c.margin << " " << c.sensitivity;
  }
}

// Upstream's TestScore on a 1000m / 1Gi node (memory at 0 where upstream has no memory metric).
TEST(LoadVariationRiskBalancing, ScoresTheWorseOfCpuAndMemory) {
  struct Case {
    std::string name;
    NodeLoad reading;
    std::string cpu, memory;  // the pod's requests ("" = none)
    int64_t want;
  };
  for (const auto& c : std::vector<Case>{
           {"new node", ratio(0.5, 0), "", "", 75},
           {"hot node", ratio(1.0, 0), "", "", 50},
           {"average and stddev", ratio(0.3, 0, 0.16), "200m", "256Mi", 67},
           {"cpu and memory", ratio(0.4, 0.5, 0.16, 0.10), "100m", "512Mi", 45},
           {"worst of cpu or memory", ratio(0.8, 0.25, 0.2, 0.15), "100m", "512Mi", 45}}) {
    Cluster cl({testutil::NodeWrapper("n").capacity({{"cpu", "1000m"}, {"memory", "1Gi"}})});
    LoadVariationRiskBalancing lvrb(LoadVariationRiskBalancingArgs{}, *cl.handle);
    LoadReading r;
    r.nodes["n"] = c.reading;
    lvrb.source()->setReading(r);
    api::Pod pod = testutil::PodWrapper().obj();
    if (!c.cpu.empty())
      pod = testutil::PodWrapper().req({{"cpu", c.cpu}, {"memory", c.memory}}).obj();
    EXPECT_EQ(scores(lvrb, lvrb, cl, pod)[0], c.want) << c.name;
  }
}

TEST(LoadAwareFilter, RejectsNodesAboveTheThresholdWithThePodAndPassesNodesWithoutReadings) {
  Cluster c({testutil::NodeWrapper("hot").capacity({{"cpu", "2"}, {"memory", "8Gi"}}),
             testutil::NodeWrapper("ok").capacity({{"cpu", "2"}, {"memory", "8Gi"}}),
             testutil::NodeWrapper("full-memory").capacity({{"cpu", "2"}, {"memory", "8Gi"}}),
             testutil::NodeWrapper("unknown").capacity({{"cpu", "2"}, {"memory", "8Gi"}})});
  LoadAwareFilter f(LoadAwareFilterArgs{}, *c.handle);
  LoadReading r;
  r.nodes = {{"hot", ratio(0.60, 0.1)}, {"ok", ratio(0.50, 0.1)}, {"full-memory", ratio(0.1, 0.9)}};
  f.source()->setReading(r);
  const api::Pod pod = testutil::PodWrapper().req({{"cpu", "200m"}, {"memory", "1Gi"}}).obj();
  CycleState state;
  PreFilterResult pr;
  ASSERT_TRUE(f.preFilter(state, pod, c.handle->snapshot(), pr).ok());
  // 60 % + 10 % = 70 % > 65 %; 50 % + 10 % = 60 %; memory 90 % + 12.5 % > 95 %.
  Status hot = f.filter(state, pod, *c.list[0]);
  EXPECT_EQ(hot.code(), Code::kUnschedulable);
  EXPECT_EQ(hot.message(), "node(s) cpu usage exceed threshold");
  EXPECT_TRUE(f.filter(state, pod, *c.list[1]).ok());
  EXPECT_EQ(f.filter(state, pod, *c.list[2]).message(), "node(s) memory usage exceed threshold");
  EXPECT_TRUE(f.filter(state, pod, *c.list[3]).ok()) << "no reading: not filtered";

  // Threshold 0 turns a resource's check off.
  LoadAwareFilter off(LoadAwareFilterArgs::fromJson({{"usageThresholds", {{"cpu", 0}}}}),
                      *c.handle);
  off.source()->setReading(r);
  CycleState s2;
  ASSERT_TRUE(off.preFilter(s2, pod, c.handle->snapshot(), pr).ok());
  EXPECT_TRUE(off.filter(s2, pod, *c.list[0]).ok());
}

TEST(LoadAwareArgs, DefaultsAndValidationWithFieldPaths) {
  const auto tlp = TargetLoadPackingArgs::fromJson(nullptr);
  EXPECT_EQ(tlp.targetUtilization, 40);
  EXPECT_EQ(tlp.defaultRequestsMilliCPU, 1000);
  EXPECT_EQ(tlp.defaultRequestsMultiplier, 1.5);
  EXPECT_EQ(tlp.metricProvider.type, "KubernetesMetricsServer");
  EXPECT_EQ(tlp.metricProvider.refreshInterval, std::chrono::seconds(30));
  EXPECT_EQ(tlp.metricProvider.staleAfter, std::chrono::minutes(3));
  const auto parsed =
      TargetLoadPackingArgs::fromJson({{"targetUtilization", 70},
                                       {"defaultRequests", {{"cpu", "2000m"}}},
                                       {"defaultRequestsMultiplier", "2"},
                                       {"metricProvider",
                                        {{"type", "Prometheus"},
                                         {"address", "http://prometheus-k8s.monitoring.svc:9090"},
                                         {"refreshInterval", "10s"},
                                         {"staleAfter", "1m"},
                                         {"nodeLabel", "node"}}}});
  EXPECT_EQ(parsed.targetUtilization, 70);
  EXPECT_EQ(parsed.defaultRequestsMilliCPU, 2000);
  EXPECT_EQ(parsed.defaultRequestsMultiplier, 2);
  EXPECT_EQ(parsed.metricProvider.address, "http://prometheus-k8s.monitoring.svc:9090");
  EXPECT_EQ(parsed.metricProvider.refreshInterval, std::chrono::seconds(10));
  EXPECT_EQ(parsed.metricProvider.nodeLabel, "node");

  struct Case {
    json args;
    std::string want;
  };
  auto tlpError = [](const json& j) {
    try {
      (void)TargetLoadPackingArgs::fromJson(j);
    } catch (const PluginArgsError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  for (const auto& c : std::vector<Case>{
           {{{"targetUtilization", 0}},
            "targetUtilization: Invalid value: 0: must be in the range [1, 99]"},
           {{{"targetUtilization", 100}},
            "targetUtilization: Invalid value: 100: must be in the range [1, 99]"},
           {{{"defaultRequestsMultiplier", "abc"}},
            "defaultRequestsMultiplier: Invalid value: \"abc\": must be a non-negative number, "
            "e.g. \"1.5\""},
           {{{"watcherAddress", "http://127.0.0.1:2020"}},
            "watcherAddress: Unsupported value: \"http://127.0.0.1:2020\": ksched reads "
            "metricProvider itself and does not use load-watcher"},
           {{{"metricProvider", {{"type", "SignalFx"}}}},
            "metricProvider.type: Unsupported value: \"SignalFx\": supported values: "
            "\"KubernetesMetricsServer\", \"Prometheus\""},
           {{{"metricProvider", {{"type", "Prometheus"}}}},
            "metricProvider.address: Required value: Prometheus needs an address"},
           {{{"metricProvider", {{"type", "Prometheus"}, {"address", "prometheus:9090"}}}},
            "metricProvider.address: Invalid value: \"prometheus:9090\": must start with http:// "
            "or https://"},
           {{{"metricProvider", {{"staleAfter", "soon"}}}},
            "metricProvider.staleAfter: Invalid value: \"soon\": not a duration (\"30s\", "
            "\"2m\")"},
           {{{"metricProvider", {{"refreshInterval", "0s"}}}},
            "metricProvider.refreshInterval: Invalid value: \"0s\": must be greater than 0"}}) {
    EXPECT_EQ(tlpError(c.args), c.want) << c.args.dump();
  }
  EXPECT_NE(tlpError({{"targetUtilisation", 40}}).find("targetUtilisation"), std::string::npos);
  try {
    (void)LoadAwareFilterArgs::fromJson({{"usageThresholds", {{"cpu", 101}}}});
    ADD_FAILURE();
  } catch (const PluginArgsError& e) {
    EXPECT_STREQ(e.what(),
                 "usageThresholds.cpu: Invalid value: 101: must be in the range [0, 100]");
  }
  try {
    (void)LoadVariationRiskBalancingArgs::fromJson({{"safeVarianceMargin", -1}});
    ADD_FAILURE();
  } catch (const PluginArgsError& e) {
    EXPECT_STREQ(e.what(),
                 "safeVarianceMargin: Invalid value: -1: must be greater than or equal to 0");
  }
}

TEST(LoadSource, ParsesPrometheusVectorsAndRefusesOtherAnswers) {
  std::string error;
  auto v = load::parsePrometheusVector(
      R"({"status":"success","data":{"resultType":"vector","result":[
        {"metric":{"instance":"node-a:9100"},"value":[1,"0.25"]},
        {"metric":{"instance":"node-b"},"value":[1,"NaN"]},
        {"metric":{"job":"x"},"value":[1,"0.5"]},
        {"metric":{"instance":"node-c"},"value":[1,"0.75"]}]}})",
      "instance", error);
  ASSERT_TRUE(v.has_value()) << error;
  EXPECT_EQ(*v, (std::map<std::string, double>{
                    {"node-a", 0.25}, {"node-a:9100", 0.25}, {"node-c", 0.75}}));
  EXPECT_FALSE(load::parsePrometheusVector(
      R"({"status":"error","errorType":"bad_data","error":"parse error at char 3"})", "instance",
      error));
  EXPECT_EQ(error, "the query failed: parse error at char 3");
  EXPECT_FALSE(load::parsePrometheusVector(
      R"({"status":"success","data":{"resultType":"matrix","result":[]}})", "instance", error));
  EXPECT_EQ(error, "the query did not return an instant vector");
  EXPECT_FALSE(load::parsePrometheusVector("<html>", "instance", error));
  EXPECT_EQ(error, "the answer is not JSON");
}

TEST(LoadSource, PrometheusVectorEdges) {
  std::string error;
  // A repeated key counts as its last occurrence; samples of the wrong shape are skipped.
  auto v = load::parsePrometheusVector(
      R"({"status":"error","status":"success","data":{"resultType":"vector","result":[
        {"metric":{"node":"a","node":"b"},"value":[1,"1.5"]},
        {"metric":{"node":"c"},"value":[1,"2","3"]},
        {"metric":{"node":"d"},"value":[1,2]},
        {"metric":{"node":5},"value":[1,"2"]},
        {"metric":{"node":"e"},"value":[1,"2x"]},
        "f",
        {"metric":{"node":"g:1:2"},"value":[1,"4"]},
        {"metric":{"node":"a"},"value":[1,"0.5"]}]}})",
      "node", error);
  ASSERT_TRUE(v.has_value()) << error;
  EXPECT_EQ(*v, (std::map<std::string, double>{{"a", 0.5}, {"b", 1.5}, {"g:1:2", 4}}));
  EXPECT_FALSE(load::parsePrometheusVector(R"({"status":"error","error":7})", "node", error));
  EXPECT_EQ(error, "the query failed: ?");
  EXPECT_FALSE(load::parsePrometheusVector("[]", "node", error));
  EXPECT_EQ(error, "the answer is not JSON");
  EXPECT_FALSE(load::parsePrometheusVector(R"({"status":"success"} x)", "node", error));
  EXPECT_EQ(error, "the answer is not JSON");
  EXPECT_FALSE(load::parsePrometheusVector(
      R"({"status":"success","data":{"resultType":"vector","result":{}}})", "node", error));
  EXPECT_EQ(error, "the query did not return an instant vector");
}

TEST(LoadSource, ParsesNodeMetricsAndSkipsMalformedItems) {
  // The example of the Kubernetes documentation, and two broken items.
  const json list = json::parse(R"({"kind":"NodeMetricsList","apiVersion":"metrics.k8s.io/v1beta1",
    "items":[{"metadata":{"name":"minikube"},"timestamp":"2022-01-27T18:48:33Z","window":"30s",
              "usage":{"cpu":"487558164n","memory":"732212Ki"}},
             {"metadata":{"name":"bad"},"timestamp":"yesterday","usage":{"cpu":"1","memory":"1"}},
             {"metadata":{"name":"worse"}}]})");
  size_t skipped = 0;
  auto m = load::parseNodeMetricsList(list, skipped);
  EXPECT_EQ(skipped, 2u);
  ASSERT_EQ(m.size(), 1u);
  const auto& l = m.at("minikube");
  EXPECT_TRUE(l.absolute);
  EXPECT_EQ(l.cpu, 488);  // millicores, rounded up
  EXPECT_EQ(l.memory, 732212.0 * 1024);
  EXPECT_EQ(api::formatRFC3339(l.sampled), "2022-01-27T18:48:33Z");
}

TEST(LoadSource, AFailedRefreshKeepsTheLastReadingAndSaysWhy) {
  SnapshotHandle handle(std::vector<PodPtr>{}, std::vector<NodePtr>{});
  int calls = 0;
  load::LoadSource source(load::ProviderConfig{}, handle, [&](LoadReading& r) -> std::string {
    if (++calls == 1) {
      r.nodes["n"] = ratio(0.5, 0.5);
      return "";
    }
    return "GET http://prometheus:9090/api/v1/query: Connection refused";
  });
  source.refreshNow();
  ASSERT_EQ(source.reading()->nodes.size(), 1u);
  EXPECT_EQ(source.reading()->lastError, "");
  source.refreshNow();
  EXPECT_EQ(source.reading()->nodes.size(), 1u);
  EXPECT_EQ(source.reading()->lastError,
            "GET http://prometheus:9090/api/v1/query: Connection refused");
}

}  // namespace
}  // namespace ksched::plugins
