#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "client/rest_client.h"
#include "cluster.h"
#include "objects.h"
#include "scheduler/rest_cluster_api.h"

namespace ksched::testing {
namespace {

using client::ApiError;
using client::RestClient;

TEST(ClientIntegration, BearerTokenIdentityIsAdmin) {
  RestClient c(TestCluster::get().config("admin"));
  ensureNamespace(c, "client-token");
  auto ns = c.get("/api/v1/namespaces/client-token");
  EXPECT_EQ(ns["metadata"]["name"], "client-token");
}

TEST(ClientIntegration, ClientCertificateIdentityIsTheScheduler) {
  RestClient c(TestCluster::get().config("scheduler"));
  auto nodes = c.list("/api/v1/nodes");  // allowed by system:kube-scheduler
  EXPECT_FALSE(nodes.resourceVersion.empty());
  try {
    c.post("/api/v1/namespaces", {{"metadata", {{"name", "not-allowed"}}}});
    FAIL() << "the scheduler identity must not create namespaces";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.code(), 403);
    EXPECT_NE(e.message().find("system:kube-scheduler"), std::string::npos) << e.what();
  }
}

TEST(ClientIntegration, RbacForbiddenIsTypedAndNamesVerbAndResource) {
  RestClient c(TestCluster::get().config("nobody"));
  try {
    c.list("/api/v1/nodes");
    FAIL() << "expected 403";
  } catch (const ApiError& e) {
    EXPECT_TRUE(e.isForbidden());
    EXPECT_EQ(e.reason(), "Forbidden");
    EXPECT_EQ(e.verb(), "GET");
    EXPECT_EQ(e.path(), "/api/v1/nodes");
    EXPECT_NE(e.message().find("cannot list resource \"nodes\""), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("403 Forbidden"), std::string::npos) << e.what();
  }
}

TEST(ClientIntegration, WrongCaIsRefusedWithClearError) {
  auto dir =
      std::filesystem::temp_directory_path() / ("ksched-wrong-ca-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  runCommand("openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=other-ca -keyout " +
             (dir / "k").string() + " -out " + (dir / "c").string());
  client::Config cfg = TestCluster::get().config("admin");
  cfg.caPem = readFile((dir / "c").string());
  std::filesystem::remove_all(dir);
  RestClient c(cfg, RestClient::Options{.maxRetries = 0});
  try {
    c.get("/api/v1/namespaces/default");
    FAIL() << "a server certificate from another CA must be refused";
  } catch (const ApiError& e) {
    EXPECT_TRUE(e.isTransport());
    EXPECT_FALSE(e.isRetryable() && e.code() != 0);
    EXPECT_NE(e.message().find("TLS server certificate verification failed"), std::string::npos)
        << e.what();
  }
}

TEST(ClientIntegration, HostnameLocalhostIsInTheServingCertificate) {
  client::Config cfg = TestCluster::get().config("admin");
  cfg.server = "https://localhost:" + std::to_string(TestCluster::get().apiserverPort());
  RestClient c(cfg);
  EXPECT_EQ(c.get("/api/v1/namespaces/default")["metadata"]["name"], "default");
}

TEST(ClientIntegration, RateLimiterHoldsConfiguredQps) {
  client::Config cfg = TestCluster::get().config("admin");
  cfg.qps = 20;
  cfg.burst = 5;
  RestClient c(cfg);
  const auto start = std::chrono::steady_clock::now();
  const auto until = start + std::chrono::milliseconds(1500);
  {
    std::vector<std::jthread> ts;
    for (int t = 0; t < 4; ++t) {
      ts.emplace_back([&] {
        while (std::chrono::steady_clock::now() < until) c.get("/api/v1/namespaces/default");
      });
    }
  }
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const auto sent = static_cast<double>(c.requestsSent());
  // Tokens available: the burst plus qps x elapsed. The server answers in ~1 ms, so four
  // unthrottled threads would send thousands.
  EXPECT_LE(sent, 5 + 20 * elapsed + 1) << "elapsed " << elapsed;
  EXPECT_GE(sent, 5 + 20 * (elapsed - 0.5) * 0.5) << "elapsed " << elapsed;
  EXPECT_EQ(c.limiter().acquired(), c.requestsSent());
}

TEST(ClientIntegration, PagedListReturnsEveryItem) {
  auto& admin = TestCluster::get().admin();
  ensureNamespace(admin, "client-list");
  parallelFor(120, 4, [&](int i) {
    admin.post("/api/v1/namespaces/client-list/pods",
               podJson("client-list", "p-" + std::to_string(i)));
  });
  RestClient c(TestCluster::get().config("admin"));
  auto r = c.list("/api/v1/namespaces/client-list/pods", {.limit = 50});
  EXPECT_EQ(r.items.size(), 120u);
  EXPECT_EQ(c.requestsSent(), 3u);  // 50 + 50 + 20
  std::set<std::string> names;
  for (const auto& p : r.items) names.insert(p["metadata"]["name"].get<std::string>());
  EXPECT_EQ(names.size(), 120u);
}

TEST(ClientIntegration, BindingStatusPatchEventAndPreconditionedDelete) {
  auto& admin = TestCluster::get().admin();
  ensureNamespace(admin, "client-writes");
  admin.post("/api/v1/nodes", nodeJson("writes-node"));
  auto pod = admin.post("/api/v1/namespaces/client-writes/pods", podJson("client-writes", "w"));
  const std::string uid = pod["metadata"]["uid"];

  RestClient sched(TestCluster::get().config("scheduler"));
  sched.post("/api/v1/namespaces/client-writes/pods/w/binding",
             {{"apiVersion", "v1"},
              {"kind", "Binding"},
              {"metadata", {{"name", "w"}, {"namespace", "client-writes"}, {"uid", uid}}},
              {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", "writes-node"}}}});
  EXPECT_EQ(admin.get("/api/v1/namespaces/client-writes/pods/w")["spec"]["nodeName"],
            "writes-node");
  try {
    sched.post("/api/v1/namespaces/client-writes/pods/w/binding",
               {{"metadata", {{"name", "w"}}}, {"target", {{"kind", "Node"}, {"name", "other"}}}});
    FAIL() << "a second binding must conflict";
  } catch (const ApiError& e) {
    EXPECT_TRUE(e.isConflict()) << e.what();
  }

  sched.patch(
      "/api/v1/namespaces/client-writes/pods/w/status",
      {{"status",
        {{"conditions", {{{"type", "PodScheduled"}, {"status", "True"}, {"reason", ""}}}}}}},
      "application/strategic-merge-patch+json");
  auto st = admin.get("/api/v1/namespaces/client-writes/pods/w")["status"]["conditions"];
  ASSERT_TRUE(st.is_array());
  EXPECT_EQ(st[0]["type"], "PodScheduled");

  sched.post("/api/v1/namespaces/client-writes/events",
             {{"metadata", {{"name", "w.ev1"}, {"namespace", "client-writes"}}},
              {"involvedObject",
               {{"kind", "Pod"}, {"name", "w"}, {"namespace", "client-writes"}, {"uid", uid}}},
              {"reason", "Scheduled"},
              {"message", "Successfully assigned client-writes/w to writes-node"},
              {"type", "Normal"},
              {"source", {{"component", "ksched"}}}});
  EXPECT_EQ(admin.get("/api/v1/namespaces/client-writes/events/w.ev1")["reason"], "Scheduled");

  try {
    admin.del("/api/v1/namespaces/client-writes/pods/w",
              {{"preconditions", {{"uid", "00000000-0000-0000-0000-000000000000"}}}});
    FAIL() << "a delete with the wrong uid precondition must conflict";
  } catch (const ApiError& e) {
    EXPECT_TRUE(e.isConflict()) << e.what();
  }
  admin.del("/api/v1/namespaces/client-writes/pods/w",
            {{"preconditions", {{"uid", uid}}}, {"gracePeriodSeconds", 0}});
  try {
    admin.get("/api/v1/namespaces/client-writes/pods/w");
    FAIL() << "pod still there";
  } catch (const ApiError& e) {
    EXPECT_TRUE(e.isNotFound()) << e.what();
  }
  admin.del("/api/v1/nodes/writes-node");
}

// A binding whose first try landed but whose answer was lost is retried and answered 409: the
// scheduler's ClusterApi asks the pod, and a pod bound to the node asked for is a success (the
// cache keeps counting it there); bound elsewhere, the 409 stands.
TEST(ClientIntegration, ABindingAnswered409IsCheckedAgainstThePod) {
  auto& admin = TestCluster::get().admin();
  ensureNamespace(admin, "client-rebind");
  auto created = admin.post("/api/v1/namespaces/client-rebind/pods", podJson("client-rebind", "r"));
  api::Pod pod;
  pod.metadata.name = "r";
  pod.metadata.namespace_ = "client-rebind";
  pod.metadata.uid = created["metadata"]["uid"];

  RestClient sched(TestCluster::get().config("scheduler"));
  scheduler::RestClusterApi api(sched);
  EXPECT_FALSE(api.bindPod(pod, "rebind-node"));
  // The same binding again, as a retry after a lost answer: the apiserver says 409, the pod
  // says it is bound there.
  EXPECT_FALSE(api.bindPod(pod, "rebind-node"));
  const ApiResult elsewhere = api.bindPod(pod, "other-node");
  ASSERT_TRUE(elsewhere);
  EXPECT_EQ(elsewhere->code, 409) << elsewhere->message;
  EXPECT_EQ(admin.get("/api/v1/namespaces/client-rebind/pods/r")["spec"]["nodeName"],
            "rebind-node");
  admin.del("/api/v1/namespaces/client-rebind/pods/r", {{"gracePeriodSeconds", 0}});
}

// What the scheduler's PodScheduled=False writes rely on: a status patch carrying the version
// the scheduler last saw is refused once a binding changed the pod, so a failure written late
// (its answer lost, retried across an outage) never lands over the binding's PodScheduled=True.
TEST(ClientIntegration, AStatusPatchOnTheVersionBeforeABindingIsRefused) {
  auto& admin = TestCluster::get().admin();
  ensureNamespace(admin, "client-stale");
  auto created = admin.post("/api/v1/namespaces/client-stale/pods", podJson("client-stale", "s"));
  api::Pod pod;
  pod.metadata.name = "s";
  pod.metadata.namespace_ = "client-stale";
  pod.metadata.uid = created["metadata"]["uid"];
  const std::string before = created["metadata"]["resourceVersion"];

  RestClient sched(TestCluster::get().config("scheduler"));
  scheduler::RestClusterApi api(sched);
  ASSERT_FALSE(api.bindPod(pod, "stale-node"));
  const nlohmann::json unschedulable = {
      {"metadata", {{"resourceVersion", before}}},
      {"status",
       {{"conditions",
         {{{"type", "PodScheduled"}, {"status", "False"}, {"reason", "SchedulerError"}}}}}}};
  const ApiResult late =
      api.patchPodStatus(pod, unschedulable, "application/strategic-merge-patch+json");
  ASSERT_TRUE(late);
  EXPECT_EQ(late->code, 409) << late->message;
  const auto stored = admin.get("/api/v1/namespaces/client-stale/pods/s");
  EXPECT_EQ(stored["spec"]["nodeName"], "stale-node");
  for (const auto& c : stored["status"]["conditions"]) {
    if (c["type"] == "PodScheduled") {
      EXPECT_EQ(c["status"], "True");
    }
  }
  admin.del("/api/v1/namespaces/client-stale/pods/s", {{"gracePeriodSeconds", 0}});
}

TEST(ClientIntegration, LeaseCreateUpdateAndStaleUpdateConflicts) {
  RestClient sched(TestCluster::get().config("scheduler"));
  const std::string base = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases";
  // system:kube-scheduler may create any Lease and update the one named kube-scheduler.
  nlohmann::json lease = {{"apiVersion", "coordination.k8s.io/v1"},
                          {"kind", "Lease"},
                          {"metadata", {{"name", "kube-scheduler"}, {"namespace", "kube-system"}}},
                          {"spec", {{"holderIdentity", "a"}, {"leaseDurationSeconds", 15}}}};
  auto created = sched.post(base, lease);
  auto v1 = created;
  v1["spec"]["holderIdentity"] = "b";
  auto updated = sched.put(base + "/kube-scheduler", v1);
  EXPECT_EQ(updated["spec"]["holderIdentity"], "b");
  try {
    sched.put(base + "/kube-scheduler", v1);  // carries the old resourceVersion
    FAIL() << "a stale update must conflict";
  } catch (const ApiError& e) {
    EXPECT_TRUE(e.isConflict()) << e.what();
  }
  TestCluster::get().admin().del(base + "/kube-scheduler");
}

TEST(ClientIntegration, DiscoveryPicksTheNewestServedVersion) {
  RestClient c(TestCluster::get().config("scheduler"));
  // v1.20 serves PodDisruptionBudget only as policy/v1beta1.
  EXPECT_EQ(c.pickVersion({"policy/v1", "policy/v1beta1"}).value_or(""), "policy/v1beta1");
  EXPECT_EQ(c.pickVersion({"coordination.k8s.io/v1"}).value_or(""), "coordination.k8s.io/v1");
  EXPECT_EQ(c.pickVersion({"v1"}).value_or(""), "v1");
  EXPECT_FALSE(c.pickVersion({"nosuch.example.com/v9"}).has_value());
}

TEST(ClientIntegration, WatchStreamsEventsAndStopsPromptly) {
  auto& admin = TestCluster::get().admin();
  ensureNamespace(admin, "client-watch");
  auto rv = admin.list("/api/v1/namespaces/client-watch/pods").resourceVersion;
  std::vector<std::string> seen;
  std::jthread creator([&] {
    for (int i = 0; i < 3; ++i) {
      admin.post("/api/v1/namespaces/client-watch/pods",
                 podJson("client-watch", "w" + std::to_string(i)));
    }
  });
  admin.watch("/api/v1/namespaces/client-watch/pods", {.resourceVersion = rv, .timeoutSeconds = 30},
              [&](client::WatchEvent&& ev) {
                EXPECT_EQ(ev.type, client::WatchEventType::kAdded);
                seen.push_back(ev.object["metadata"]["name"]);
                return seen.size() < 3;
              });
  EXPECT_EQ(seen, (std::vector<std::string>{"w0", "w1", "w2"}));

  // An idle watch ends within moments of a stop request.
  std::stop_source stop;
  auto t0 = std::chrono::steady_clock::now();
  std::jthread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    stop.request_stop();
  });
  admin.watch(
      "/api/v1/namespaces/client-watch/pods", {.timeoutSeconds = 60},
      [](client::WatchEvent&&) { return true; }, stop.get_token());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
}

// After an apiserver restart every pooled keep-alive connection is dead: the first failure
// drops them all, so one retry on a fresh connection is enough (it used to spend each retry on
// another dead connection and fail).
TEST(ClientIntegration, ApiserverRestartDoesNotUseUpTheRetriesOnDeadConnections) {
  auto& cluster = TestCluster::get();
  RestClient::Options o;
  o.maxRetries = 2;
  RestClient c(cluster.config("admin"), o);
  // One call first: cpp-httplib (not instrumented) builds its static regexes on first use, which
  // ThreadSanitizer cannot see synchronized when eight threads make the first call together.
  (void)c.get("/api/v1/namespaces/default");
  std::vector<std::jthread> callers;
  std::atomic<int> ready{0};
  for (int i = 0; i < 8; ++i) {
    callers.emplace_back([&] {
      (void)c.get("/api/v1/namespaces/default");
      ++ready;
      while (ready < 8) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    });
  }
  callers.clear();
  cluster.ctl("stop-apiserver");
  cluster.ctl("start-apiserver");
  EXPECT_NO_THROW((void)c.get("/api/v1/namespaces/default"));
}

}  // namespace
}  // namespace ksched::testing
