// /metrics, /healthz, /livez, /readyz and /configz over HTTPS against an in-process scheduler.
#include "metrics/metrics.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <set>
#include <string>

#include "cluster.h"
#include "daemon.h"
#include "https_get.h"
#include "plugins/registry.h"
#include "scheduler/scheduler.h"
#include "scheduling.h"
#include "server/server.h"

namespace ksched::testing {
namespace {

// Also opportunistic batching's counters, and where its pods went.
TEST(MetricsIntegration, ServesHealthReadinessAndCountsOf100PodsOn10Nodes) {
  auto& admin = TestCluster::get().admin();
  deleteAllNodes(admin);
  const std::string ns = "metrics-basic";
  ensureNamespace(admin, ns);
  for (int i = 0; i < 10; ++i) {
    admin.post("/api/v1/nodes", sizedNode("metrics-" + std::to_string(i), "2", "4Gi"));
  }

  metrics::SchedulerMetrics m;
  client::RestClient rest(TestCluster::get().config("scheduler"));
  client::RestClient events(TestCluster::get().config("scheduler"));
  scheduler::Options opts;
  opts.binderThreads = 8;
  opts.parallelism = 4;
  opts.metrics = &m;
  scheduler::Scheduler sched(rest, events, plugins::inTreeRegistry(), opts);

  std::atomic<bool> leaderLost{false};
  config::ServingOptions serving;
  serving.bindAddress = "127.0.0.1";
  serving.securePort = freeLoopbackPort();
  server::Hooks hooks;
  hooks.metrics = [&m] { return m.scrape(); };
  hooks.ready = [&] { return sched.informersSynced(); };
  hooks.livezLeaderCheck = [&] { return leaderLost ? std::string("lease expired") : ""; };
  hooks.configz = [] { return std::string(R"({"componentconfig":{}})"); };
  hooks.access = server::makeAccessControl(serving, TestCluster::get().config("scheduler"));
  auto srv = server::Server::start(serving, hooks);
  ASSERT_NE(srv, nullptr);
  EXPECT_EQ(srv->port(), serving.securePort);

  HttpsAnswer r = httpsGet(serving.securePort, "/readyz");
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.body, "[-]sched-handler-sync failed: reason withheld\nreadyz check failed\n");
  r = httpsGet(serving.securePort, "/healthz");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "ok");

  ASSERT_TRUE(sched.startInformers(std::chrono::seconds(30)));
  r = httpsGet(serving.securePort, "/readyz");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "ok");
  sched.startScheduling();

  // 100 x 150m = 15 cores of 20: everything fits at the first attempt.
  parallelFor(100, 8, [&](int i) {
    admin.post("/api/v1/namespaces/" + ns + "/pods",
               sizedPod(ns, "p-" + std::to_string(i), "150m"));
  });
  EXPECT_EQ(waitAllBound(admin, ns, 100), 100u);
  EXPECT_TRUE(eventually([&] { return sched.stats().scheduled == 100; }));
  EXPECT_TRUE(eventually([&] { return sched.cache().assumedPodCount() == 0; }));

  r = httpsGet(serving.securePort, "/metrics");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.contentType, "text/plain; version=0.0.4; charset=utf-8");
  const std::string& t = r.body;
  const std::string def = R"(profile="default-scheduler")";
  EXPECT_EQ(metricSample(t, "scheduler_schedule_attempts_total{" + def + R"(,result="scheduled"})"),
            100)
      << t;
  EXPECT_EQ(
      metricSample(t, "scheduler_schedule_attempts_total{" + def + R"(,result="unschedulable"})"),
      0);
  EXPECT_EQ(metricSample(t, "scheduler_schedule_attempts_total{" + def + R"(,result="error"})"), 0);
  EXPECT_EQ(metricSample(t, "scheduler_scheduling_attempt_duration_seconds_count{" + def +
                                R"(,result="scheduled"})"),
            100);
  EXPECT_EQ(metricSample(t, "scheduler_scheduling_algorithm_duration_seconds_count"), 100);
  EXPECT_EQ(metricSample(t, R"(scheduler_pod_scheduling_attempts_bucket{le="1"})"), 100);
  EXPECT_EQ(metricSample(t, R"(scheduler_pod_scheduling_sli_duration_seconds_count{attempts="1"})"),
            100);
  EXPECT_EQ(
      metricSample(t, R"(scheduler_queue_incoming_pods_total{event="PodAdd",queue="active"})"),
      100);
  EXPECT_EQ(metricSample(t, R"(scheduler_pending_pods{queue="active"})"), 0);
  EXPECT_EQ(metricSample(t, R"(scheduler_pending_pods{queue="unschedulable"})"), 0);
  // The cache holds every bound pod of the cluster (earlier tests' too) and one entry per node
  // name that a node or a bound pod names, as upstream's cache does.
  std::set<std::string> nodeNames;
  for (const auto& n : admin.list("/api/v1/nodes").items) {
    nodeNames.insert(n["metadata"]["name"].get<std::string>());
  }
  int boundPods = 0;
  for (const auto& j : admin.list("/api/v1/pods").items) {
    const std::string node = j["spec"].value("nodeName", "");
    if (node.empty()) continue;
    ++boundPods;
    nodeNames.insert(node);
  }
  EXPECT_EQ(metricSample(t, R"(scheduler_cache_size{type="nodes"})"),
            static_cast<double>(nodeNames.size()));
  EXPECT_EQ(metricSample(t, R"(scheduler_cache_size{type="pods"})"), boundPods);
  EXPECT_EQ(metricSample(t, R"(scheduler_cache_size{type="assumed_pods"})"), 0);
  EXPECT_EQ(metricSample(t, "scheduler_preemption_attempts_total"), 0);
  // Opportunistic batching: each cycle counts once; identical pods one after the other reuse
  // the previous cycle's nodes, and still spread as full cycles would (LeastAllocated: no node
  // takes a pod while another has two fewer).
  const double hinted =
      metricSample(t, "scheduler_batch_attempts_total{" + def + R"(,result="hint_used"})");
  EXPECT_GT(hinted, 0) << t;
  EXPECT_EQ(
      hinted +
          metricSample(t, "scheduler_batch_attempts_total{" + def + R"(,result="hint_not_used"})") +
          metricSample(t, "scheduler_batch_attempts_total{" + def + R"(,result="no_hint"})"),
      100);
  std::map<std::string, int> perNode;
  for (const auto& j : admin.list("/api/v1/namespaces/" + ns + "/pods").items) {
    ++perNode[j["spec"].value("nodeName", "")];
  }
  ASSERT_EQ(perNode.size(), 10u);
  int fewest = 100, most = 0;
  for (const auto& [node, n] : perNode) {
    fewest = std::min(fewest, n);
    most = std::max(most, n);
  }
  EXPECT_LE(most - fewest, 1) << "pods per node from " << fewest << " to " << most;
  EXPECT_GT(metricSample(t, "process_start_time_seconds"), 1.6e9);
  EXPECT_GT(metricSample(t, "process_resident_memory_bytes"), 0);

  r = httpsGet(serving.securePort, "/configz");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, R"({"componentconfig":{}})");
  r = httpsGet(serving.securePort, "/livez");
  EXPECT_EQ(r.status, 200);
  leaderLost = true;
  r = httpsGet(serving.securePort, "/livez");
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(r.body, "[+]ping ok\n[-]leaderElection failed: reason withheld\nlivez check failed\n");

  srv->stop();
  sched.stop();
  EXPECT_EQ(httpsGet(serving.securePort, "/healthz").status, -1) << "stopped";
}

}  // namespace
}  // namespace ksched::testing
