// The queue against a real apiserver: pending pods are retried only by events that can help
// them (QueueingHints), not by the status updates kubelets send all the time.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <string>
#include <thread>

#include <ksched/api/decode.h>
#include <ksched/api/pod.h>

#include "cluster.h"
#include "metrics/metrics.h"
#include "objects.h"
#include "plugins/registry.h"
#include "scheduler/scheduler.h"
#include "scheduling.h"

namespace ksched::testing {
namespace {

using namespace std::chrono_literals;

class QueueingIntegration : public NamespacedTest {};

TEST_F(QueueingIntegration, PendingPodsIgnoreStatusUpdatesAndMoveOnlyWhenTheyFit) {
  auto& admin = TestCluster::get().admin();
  deleteAllNodes(admin);
  const std::string ns = useNamespace("queue-hints");
  for (int i = 0; i < 4; ++i)
    admin.post("/api/v1/nodes", sizedNode("q-" + std::to_string(i), "2", "8Gi"));

  metrics::SchedulerMetrics m;
  client::RestClient rest(TestCluster::get().config("scheduler"));
  client::RestClient events(TestCluster::get().config("scheduler"));
  scheduler::Options opts;
  opts.binderThreads = 8;
  opts.parallelism = 4;
  opts.metrics = &m;
  scheduler::Scheduler sched(rest, events, plugins::inTreeRegistry(), opts);
  ASSERT_TRUE(sched.startInformers(30s));
  sched.startScheduling();
  struct Stop {
    scheduler::Scheduler& s;
    ~Stop() { s.stop(); }
  } stop{sched};
  const std::string def = R"(profile="default-scheduler")";
  auto attempts = [&](const std::string& result) {
    return metricSample(m.scrape(),
                        "scheduler_schedule_attempts_total{" + def + ",result=\"" + result + "\"}");
  };

  // Two 1-cpu fillers fill each node.
  for (int i = 0; i < 8; ++i) {
    admin.post("/api/v1/namespaces/" + ns + "/pods",
               sizedPod(ns, "filler-" + std::to_string(i), "1"));
  }
  ASSERT_EQ(waitAllBound(admin, ns, 8), 8u);

  // 200 pending pods, rejected by NodeResourcesFit only: 10 need 1 cpu, 190 need 1.5.
  parallelFor(200, 8, [&](int i) {
    const bool small = i < 10;
    admin.post(
        "/api/v1/namespaces/" + ns + "/pods",
        sizedPod(ns, (small ? "small-" : "big-") + std::to_string(i), small ? "1" : "1500m"));
  });
  ASSERT_TRUE(eventually([&] { return attempts("unschedulable") == 200; }, 60s))
      << attempts("unschedulable");
  ASSERT_TRUE(eventually([&] {
    return metricSample(m.scrape(), R"(scheduler_pending_pods{queue="unschedulable"})") == 200;
  }));

  // 500 kubelet-style status updates of the bound pods move nothing.
  parallelFor(500, 8, [&](int i) {
    const std::string name = "filler-" + std::to_string(i % 8);
    nlohmann::json status = {
        {"status",
         {{"phase", "Running"},
          {"podIP", "10.1." + std::to_string(i / 250) + "." + std::to_string(i % 250)},
          {"conditions", {{{"type", "Ready"}, {"status", i % 2 ? "True" : "False"}}}}}}};
    admin.patch("/api/v1/namespaces/" + ns + "/pods/" + name + "/status", status,
                "application/strategic-merge-patch+json");
  });
  std::this_thread::sleep_for(3s);  // past the first backoff (1 s) twice over
  EXPECT_EQ(attempts("unschedulable"), 200);
  EXPECT_EQ(attempts("scheduled"), 8);
  const std::string t = m.scrape();
  EXPECT_EQ(metricSample(t, R"(scheduler_pending_pods{queue="unschedulable"})"), 200);
  EXPECT_EQ(
      metricSample(t, R"(scheduler_unschedulable_pods{plugin="NodeResourcesFit",)" + def + "}"),
      200);
  EXPECT_EQ(metricSample(t, R"(scheduler_inflight_events{event="AssignedPodUpdate"})"), -1)
      << "status-only updates are not events";

  // One filler leaves: only the 1-cpu pods fit its node, so only they are retried; one binds.
  const auto filler =
      api::decode<api::Pod>(admin.get("/api/v1/namespaces/" + ns + "/pods/filler-0"));
  admin.del("/api/v1/namespaces/" + ns + "/pods/filler-0", {{"gracePeriodSeconds", 0}});
  EXPECT_TRUE(eventually([&] { return attempts("scheduled") == 9; }, 15s));
  EXPECT_TRUE(eventually([&] { return attempts("unschedulable") == 209; }, 15s))
      << attempts("unschedulable");
  std::this_thread::sleep_for(2s);
  EXPECT_EQ(attempts("unschedulable"), 209) << "the 190 big pods were not retried";
  EXPECT_EQ(metricSample(
                m.scrape(),
                R"(scheduler_queue_incoming_pods_total{event="AssignedPodDelete",queue="active"})"),
            10);
  int smallBound = 0;
  for (const auto& p : listPods(admin, ns)) {
    if (p.metadata.name.rfind("filler-", 0) == 0 || p.spec.nodeName.empty()) continue;
    EXPECT_EQ(p.metadata.name.rfind("small-", 0), 0u) << p.metadata.name;
    EXPECT_EQ(p.spec.nodeName, filler.spec.nodeName) << p.metadata.name;
    ++smallBound;
  }
  EXPECT_EQ(smallBound, 1);
  expectNoNodeOvercommitted(admin);
}

}  // namespace
}  // namespace ksched::testing
