// Load-aware scheduling against the real thing: a Prometheus (Debian's) scrapes one exporter per
// node that the test runs (the node's CPU and memory utilization, set by the test), and ksched
// reads it in the background with TargetLoadPacking and LoadAwareFilter; the real apiserver holds
// the nodes and pods. The metrics.k8s.io provider reads NodeMetrics the real apiserver serves
// (tests/integration/crds/metrics.k8s.io.yaml), as the ksched ServiceAccount with
// deploy/manifests' RBAC.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <ksched/api/rfc3339.h>

#include "cluster.h"
#include "daemon.h"
#include "deploy.h"
#include "prometheus.h"
#include "scheduling.h"

namespace ksched::testing {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kNs = "load-aware";

// A node exporter stand-in: /metrics with test_node_cpu_ratio and test_node_memory_ratio.
class Exporter {
 public:
  Exporter() : port_(freeLoopbackPort()) {
    server_.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
      std::lock_guard lock(mu_);
      res.set_content("test_node_cpu_ratio " + std::to_string(cpu_) + "\ntest_node_memory_ratio " +
                          std::to_string(memory_) + "\n",
                      "text/plain; version=0.0.4");
    });
    server_.bind_to_port("127.0.0.1", port_);
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~Exporter() {
    server_.stop();
    thread_.join();
  }
  void set(double cpu, double memory) {
    std::lock_guard lock(mu_);
    cpu_ = cpu;
    memory_ = memory;
  }
  [[nodiscard]] int port() const { return port_; }

 private:
  int port_;
  httplib::Server server_;
  std::thread thread_;
  std::mutex mu_;
  double cpu_ = 0;
  double memory_ = 0;
};

std::string scrapeKsched(int port) {
  httplib::SSLClient c("127.0.0.1", port);
  c.enable_server_certificate_verification(false);
  auto r = c.Get("/metrics");
  return r && r->status == 200 ? r->body : "";
}

class LoadAwareIntegration : public ::testing::Test {
 protected:
  static constexpr int kNodes = 3;

  void SetUp() override {
    auto& admin = TestCluster::get().admin();
    deleteAllNodes(admin);
    ensureNamespace(admin, kNs);
    deleteAllPods(admin, kNs);
    std::string targets;
    for (int i = 0; i < kNodes; ++i) {
      exporters_.push_back(std::make_unique<Exporter>());
      const std::string node = "lw-" + std::to_string(i);
      admin.post("/api/v1/nodes", sizedNode(node, "8", "32Gi"));
      targets += "      - targets: [\"127.0.0.1:" + std::to_string(exporters_.back()->port()) +
                 "\"]\n        labels: {node: " + node + "}\n";
    }
    prom_ = std::make_unique<PrometheusServer>(
        "load-aware-prometheus",
        "global: {scrape_interval: 1s}\nscrape_configs:\n  - job_name: nodes\n    "
        "static_configs:\n" +
            targets);
    ASSERT_TRUE(prom_->ready()) << prom_->log();
  }

  // ksched with two profiles over one Prometheus source: "load-aware" (TargetLoadPacking as the
  // only score, LoadAwareFilter) and "load-burst" (TargetLoadPacking alone).
  void startKsched() {
    const std::string provider =
        "          metricProvider:\n"
        "            type: Prometheus\n"
        "            address: http://127.0.0.1:" +
        std::to_string(prom_->port()) +
        "\n"
        "            cpuQuery: test_node_cpu_ratio\n"
        "            memoryQuery: test_node_memory_ratio\n"
        "            cpuStddevQuery: \"\"\n"
        "            memoryStddevQuery: \"\"\n"
        "            nodeLabel: node\n"
        "            refreshInterval: 1s\n"
        "            staleAfter: 4s\n";
    auto profile = [&](const std::string& name, bool filter) {
      // As docs/load-aware.md says: multiPoint enables every extension point of the plugins
      // (Reserve counts placed pods); here TargetLoadPacking is the only score.
      std::string p = "  - schedulerName: " + name + "\n    plugins:\n      multiPoint:\n" +
                      "        enabled: [{name: TargetLoadPacking}" +
                      (filter ? ", {name: LoadAwareFilter}" : "") +
                      "]\n      score:\n        disabled: [{name: \"*\"}]\n"
                      "        enabled: [{name: TargetLoadPacking}]\n";
      p += "    pluginConfig:\n      - name: TargetLoadPacking\n        args:\n" + provider;
      if (filter) p += "      - name: LoadAwareFilter\n        args:\n" + provider;
      return p;
    };
    const std::string config = TestCluster::get().dir() + "/load-aware-config.yaml";
    std::ofstream(config) << "apiVersion: kubescheduler.config.k8s.io/v1\n"
                             "kind: KubeSchedulerConfiguration\n"
                             "clientConnection:\n  kubeconfig: "
                          << TestCluster::get().kubeconfig("scheduler")
                          << "\nleaderElection:\n  leaderElect: false\nprofiles:\n"
                          << profile("load-aware", true) << profile("load-burst", false);
    port_ = freeLoopbackPort();
    ksched_ = std::make_unique<Daemon>(
        logPath("load-aware-ksched"),
        std::vector<std::string>{"--config", config, "--bind-address=127.0.0.1",
                                 "--secure-port=" + std::to_string(port_),
                                 "--authorization-always-allow-paths=/healthz,/metrics"});
    ASSERT_TRUE(ksched_->waitForLog("synced:", 60s)) << ksched_->log();
    // Every node read from Prometheus.
    ASSERT_TRUE(eventually(
        [&] {
          return metricSample(
                     scrapeKsched(port_),
                     "scheduler_load_metrics_nodes{source=\"prometheus\",state=\"fresh\"}") >=
                 kNodes;
        },
        30s))
        << ksched_->log();
  }

  void TearDown() override {
    if (ksched_) {
      EXPECT_EQ(ksched_->signalAndWait(SIGTERM), 0) << ksched_->log();
    }
    deleteAllPods(TestCluster::get().admin(), kNs);
  }

  void createPod(const std::string& name, const std::string& cpu, const std::string& scheduler) {
    auto p = sizedPod(kNs, name, cpu);
    p["spec"]["schedulerName"] = scheduler;
    TestCluster::get().admin().post("/api/v1/namespaces/" + kNs + "/pods", p);
  }
  std::map<std::string, int> podsPerNode() {
    std::map<std::string, int> out;
    for (const auto& p : listPods(TestCluster::get().admin(), kNs)) {
      if (!p.spec.nodeName.empty()) ++out[p.spec.nodeName];
    }
    return out;
  }
  // Waits until Prometheus holds every exporter's current cpu value.
  void waitForPrometheus(const std::map<std::string, std::string>& cpu) {
    ASSERT_TRUE(eventually(
        [&] {
          auto r = prom_->query("test_node_cpu_ratio");
          size_t same = 0;
          for (const auto& s : r) {
            auto it = cpu.find(s["metric"].value("node", ""));
            if (it != cpu.end() && s["value"][1] == it->second) ++same;
          }
          return same == cpu.size();
        },
        30s));
    std::this_thread::sleep_for(2s);  // a refresh of ksched's reading (every 1s)
  }

  std::vector<std::unique_ptr<Exporter>> exporters_;
  std::unique_ptr<PrometheusServer> prom_;
  std::unique_ptr<Daemon> ksched_;
  int port_ = 0;
};

TEST_F(LoadAwareIntegration, PodsGoToTheLessLoadedOfEqualNodesAndABurstDoesNotPileOnTheIdlest) {
  exporters_[0]->set(0.7, 0.3);
  exporters_[1]->set(0.2, 0.3);
  exporters_[2]->set(0.5, 0.3);
  startKsched();
  if (HasFatalFailure()) return;
  waitForPrometheus({{"lw-0", "0.7"}, {"lw-1", "0.2"}, {"lw-2", "0.5"}});

  // Equal requests everywhere (none): the reading decides. lw-0 (70 % + the pod > 65 %) is
  // filtered out; TargetLoadPacking prefers lw-1 (22 % predicted) to lw-2 (52 %).
  createPod("first", "100m", "load-aware");
  ASSERT_EQ(waitAllBound(TestCluster::get().admin(), kNs, 1, 30s), 1u) << ksched_->log();
  EXPECT_EQ(podsPerNode(), (std::map<std::string, int>{{"lw-1", 1}}));

  // 50 pods at once (100m each, predicted 150m): each placed pod counts on its node until a
  // reading sees it, so lw-1 fills up until lw-2 scores as well, and then both, and later lw-0,
  // share: predicted utilization evens out near 78 %, about 30 / 15 / 5 pods. Without counting
  // placed pods, all 50 would go to lw-1.
  for (int i = 0; i < 50; ++i) createPod("burst-" + std::to_string(i), "100m", "load-burst");
  ASSERT_EQ(waitAllBound(TestCluster::get().admin(), kNs, 51, 60s), 51u) << ksched_->log();
  auto spread = podsPerNode();
  EXPECT_LT(spread["lw-1"], 40) << "the idlest node took nearly the whole burst";
  EXPECT_GE(spread["lw-2"], 10);
  EXPECT_GT(spread["lw-1"], spread["lw-2"]) << "the idlest node still took the most";
  EXPECT_LT(spread["lw-0"], spread["lw-2"]);
  // The burst was batched (identical pods): the node that took a pod was scored again with it.
  EXPECT_GT(metricSample(scrapeKsched(port_),
                         "scheduler_batch_attempts_total{profile=\"load-burst\","
                         "result=\"hint_used\"}"),
            0);
}

TEST_F(LoadAwareIntegration, APrometheusThatStopsAnsweringNeverStallsTheLoopAndRequestsTakeOver) {
  for (auto& e : exporters_) e->set(0.1, 0.1);
  startKsched();
  if (HasFatalFailure()) return;
  waitForPrometheus({{"lw-0", "0.1"}, {"lw-1", "0.1"}, {"lw-2", "0.1"}});
  const std::string fallback =
      "scheduler_load_fallback_total{plugin=\"TargetLoadPacking\",reason=\"stale\"}";
  EXPECT_LE(metricSample(scrapeKsched(port_), fallback), 0);

  // Prometheus stops answering (SIGSTOP: connections hang). Pods keep being scheduled at once;
  // after staleAfter (4s) the nodes are scored by their requests, visibly.
  prom_->signal(SIGSTOP);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 10; ++i) createPod("during-" + std::to_string(i), "100m", "load-aware");
  EXPECT_EQ(waitAllBound(TestCluster::get().admin(), kNs, 10, 20s), 10u) << ksched_->log();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s) << "the loop waited for Prometheus";
  std::this_thread::sleep_for(6s);
  for (int i = 0; i < 5; ++i) createPod("stale-" + std::to_string(i), "100m", "load-aware");
  EXPECT_EQ(waitAllBound(TestCluster::get().admin(), kNs, 15, 20s), 15u) << ksched_->log();
  const std::string m = scrapeKsched(port_);
  EXPECT_GT(metricSample(m, fallback), 0) << m;
  EXPECT_GT(
      metricSample(
          m, "scheduler_load_metrics_refreshes_total{result=\"error\",source=\"prometheus\"}"),
      0);
  EXPECT_EQ(metricSample(m, "scheduler_load_metrics_nodes{source=\"prometheus\",state=\"stale\"}"),
            kNodes);
  EXPECT_TRUE(
      ksched_->logHas("3 node(s) have no reading newer than 4s (lw-0, lw-1, lw-2); "
                      "scored by their requests"))
      << ksched_->log();

  // Prometheus answers again: the readings are fresh again.
  prom_->signal(SIGCONT);
  EXPECT_TRUE(eventually(
      [&] {
        return metricSample(
                   scrapeKsched(port_),
                   "scheduler_load_metrics_nodes{source=\"prometheus\",state=\"fresh\"}") == kNodes;
      },
      30s));
  EXPECT_TRUE(ksched_->logHas("load metrics (prometheus): reading again")) << ksched_->log();
}

// metrics.k8s.io as metrics-server serves it: NodeMetrics (absolute usage, a timestamp) read
// through ksched's own apiserver connection with the ServiceAccount's RBAC of deploy/manifests.
// A pod goes to the less loaded node; a NodeMetrics older than staleAfter is not believed (the
// node is scored by its requests, visibly), whatever it says.
TEST(LoadAwareMetricsApi, NodeMetricsDecideAndAnOldTimestampFallsBackToRequests) {
  auto& admin = TestCluster::get().admin();
  deleteAllNodes(admin);
  ensureNamespace(admin, kNs);
  deleteAllPods(admin, kNs);
  kubectl("apply -f " + std::string(KSCHED_SOURCE_DIR) +
          "/tests/integration/crds/metrics.k8s.io.yaml");
  const std::string nodeMetrics = "/apis/metrics.k8s.io/v1beta1/nodes";
  ASSERT_TRUE(eventually(
      [&] {
        try {
          for (const auto& m : admin.list(nodeMetrics).items)
            admin.del(nodeMetrics + "/" + m["metadata"]["name"].get<std::string>());
          return true;
        } catch (const client::ApiError&) {
          return false;
        }
      },
      30s));
  kubectl("apply -f " + kManifests + "/namespace.yaml -f " + kManifests + "/rbac.yaml");
  const auto now = std::chrono::system_clock::now();
  auto metricsOf = [&](const std::string& node, const std::string& cpu,
                       std::chrono::system_clock::time_point at) {
    return nlohmann::json{{"apiVersion", "metrics.k8s.io/v1beta1"},
                          {"kind", "NodeMetrics"},
                          {"metadata", {{"name", node}}},
                          {"timestamp", api::formatRFC3339(at)},
                          {"window", "20s"},
                          {"usage", {{"cpu", cpu}, {"memory", "8Gi"}}}};
  };
  const std::map<std::string, std::string> cpu = {
      {"lw-0", "5600m"}, {"lw-1", "1600m"}, {"lw-2", "4000m"}};  // 70 %, 20 %, 50 % of 8
  for (const auto& [node, used] : cpu) {
    admin.post("/api/v1/nodes", sizedNode(node, "8", "32Gi"));
    admin.post(nodeMetrics, metricsOf(node, used, now));
  }

  const std::string config = TestCluster::get().dir() + "/load-metrics-api-config.yaml";
  std::ofstream(config) << "apiVersion: kubescheduler.config.k8s.io/v1\n"
                           "kind: KubeSchedulerConfiguration\n"
                           "clientConnection:\n  kubeconfig: "
                        << serviceAccountKubeconfig()
                        << "\nleaderElection:\n  leaderElect: false\nprofiles:\n"
                           "  - schedulerName: load-metrics-api\n"
                           "    plugins:\n"
                           "      multiPoint:\n"
                           "        enabled: [{name: TargetLoadPacking}, {name: LoadAwareFilter}]\n"
                           "      score:\n"
                           "        disabled: [{name: \"*\"}]\n"
                           "        enabled: [{name: TargetLoadPacking}]\n"
                           "    pluginConfig:\n"
                           "      - name: TargetLoadPacking\n"
                           "        args:\n"
                           "          metricProvider: {type: KubernetesMetricsServer, "
                           "refreshInterval: 1s, staleAfter: 60s}\n"
                           "      - name: LoadAwareFilter\n"
                           "        args:\n"
                           "          metricProvider: {type: KubernetesMetricsServer, "
                           "refreshInterval: 1s, staleAfter: 60s}\n";
  const int port = freeLoopbackPort();
  Daemon ksched(
      logPath("load-metrics-api-ksched"),
      {"--config", config, "--bind-address=127.0.0.1", "--secure-port=" + std::to_string(port),
       "--authorization-always-allow-paths=/healthz,/metrics"});
  ASSERT_TRUE(ksched.waitForLog("synced:", 60s)) << ksched.log();
  const std::string fresh =
      "scheduler_load_metrics_nodes{source=\"metrics-server\",state=\"fresh\"}";
  ASSERT_TRUE(eventually([&] { return metricSample(scrapeKsched(port), fresh) == 3; }, 30s))
      << ksched.log();

  // lw-0 (70 % + the pod > 65 %) is filtered out; lw-1 (20 %) is preferred to lw-2 (50 %).
  auto pod = [&](const std::string& name) {
    auto p = sizedPod(kNs, name, "100m");
    p["spec"]["schedulerName"] = "load-metrics-api";
    admin.post("/api/v1/namespaces/" + kNs + "/pods", p);
  };
  pod("first");
  ASSERT_EQ(waitAllBound(admin, kNs, 1, 30s), 1u) << ksched.log();
  EXPECT_EQ(admin.get("/api/v1/namespaces/" + kNs + "/pods/first")["spec"].value("nodeName", ""),
            "lw-1");

  // `ksched explain` (its own process: it reads the provider itself) for a pod of a profile the
  // daemon does not serve: each node's utilization, where it came from, the first pod placed on
  // lw-1 since the reading (seen bound), and the score.
  {
    std::string cliConfig = readFile(config);
    cliConfig.replace(cliConfig.find("schedulerName: load-metrics-api"),
                      std::string("schedulerName: load-metrics-api").size(),
                      "schedulerName: load-explain");
    std::ofstream(TestCluster::get().dir() + "/load-explain-config.yaml") << cliConfig;
    auto probe = sizedPod(kNs, "probe", "100m");
    probe["spec"]["schedulerName"] = "load-explain";
    admin.post("/api/v1/namespaces/" + kNs + "/pods", probe);
    const std::string out =
        runCommand(std::string(KSCHED_BINARY) + " explain --kubeconfig " +
                   TestCluster::get().kubeconfig("admin") + " --config " +
                   TestCluster::get().dir() + "/load-explain-config.yaml -n " + kNs + " probe");
    EXPECT_THAT(out, HasSubstr("Scores from:\n")) << out;
    // lw-1: (1600m + 150m placed) / 8 = 22 %; with the pod's 150m, 23.75 % -> 76.
    EXPECT_THAT(out, ContainsRegex("  lw-1 TargetLoadPacking: cpu 22% \\(metrics-server, [0-9]+s "
                                   "old, \\+1 pod\\(s\\) placed since\\) \\+ pod 150m, target "
                                   "40%: 76\n"))
        << out;
    // lw-2: 50 %; with the pod, 51.9 % -> 32.
    EXPECT_THAT(out, ContainsRegex("  lw-2 TargetLoadPacking: cpu 50% \\(metrics-server, [0-9]+s "
                                   "old\\) \\+ pod 150m, target 40%: 32\n"))
        << out;
    EXPECT_THAT(out, Not(HasSubstr("lw-0 TargetLoadPacking"))) << "lw-0 is filtered out\n" << out;
    admin.del("/api/v1/namespaces/" + kNs + "/pods/probe", {{"gracePeriodSeconds", 0}});
  }

  // lw-1 now says 90 %, but measured 10 minutes ago: not believed. Scored by its requests (the
  // first pod's 100m), it is not filtered and is still the best node; believed, it would be
  // filtered out and the pod would go to lw-2.
  auto old = metricsOf("lw-1", "7200m", now - std::chrono::minutes(10));
  auto current = admin.get(nodeMetrics + "/lw-1");
  old["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"];
  admin.put(nodeMetrics + "/lw-1", old);
  const std::string stale =
      "scheduler_load_metrics_nodes{source=\"metrics-server\",state=\"stale\"}";
  ASSERT_TRUE(eventually([&] { return metricSample(scrapeKsched(port), stale) == 1; }, 30s))
      << ksched.log();
  pod("second");
  ASSERT_EQ(waitAllBound(admin, kNs, 2, 30s), 2u) << ksched.log();
  EXPECT_EQ(admin.get("/api/v1/namespaces/" + kNs + "/pods/second")["spec"].value("nodeName", ""),
            "lw-1");
  EXPECT_GT(
      metricSample(scrapeKsched(port),
                   "scheduler_load_fallback_total{plugin=\"TargetLoadPacking\",reason=\"stale\"}"),
      0);
  EXPECT_TRUE(
      ksched.logHas("load metrics (metrics-server): 1 node(s) have no reading newer than "
                    "60s (lw-1); scored by their requests"))
      << ksched.log();
  EXPECT_EQ(ksched.signalAndWait(SIGTERM), 0) << ksched.log();
  deleteAllPods(admin, kNs);
}

}  // namespace
}  // namespace ksched::testing
