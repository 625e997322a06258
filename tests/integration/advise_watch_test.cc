// ksched advise --watch against the real apiserver: the plan made again every interval and
// served as metrics over HTTPS, a Warning Event on the node pods would move off once per drift,
// and a clean exit on SIGTERM.
#include <gtest/gtest.h>

#include <csignal>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cluster.h"
#include "daemon.h"
#include "https_get.h"
#include "scheduling.h"

namespace ksched::testing {
namespace {

using nlohmann::json;

class AdviseWatchTest : public NamespacedTest {
 protected:
  void SetUp() override { deleteAllNodes(TestCluster::get().admin()); }
  void TearDown() override {
    NamespacedTest::TearDown();
    deleteAllNodes(TestCluster::get().admin());
  }

  // A pod of 1 cpu of a ReplicaSet (that no controller runs here) bound to `node`.
  void replica(const std::string& ns, const std::string& name, const std::string& node) {
    json p = sizedPod(ns, name, "1", "1Gi");
    p["metadata"]["labels"] = {{"app", "web"}};
    p["metadata"]["ownerReferences"] = {{{"apiVersion", "apps/v1"},
                                         {"kind", "ReplicaSet"},
                                         {"name", "web"},
                                         {"uid", "web-uid"},
                                         {"controller", true}}};
    p["spec"]["nodeName"] = node;
    TestCluster::get().admin().post("/api/v1/namespaces/" + ns + "/pods", p);
  }

  // The Drifted Events on `node` ksched advise posted.
  static int driftEvents(const std::string& node) {
    int n = 0;
    for (const auto& e :
         TestCluster::get().admin().list("/api/v1/namespaces/default/events").items) {
      if (e.value("reason", "") == "Drifted" && e["involvedObject"].value("name", "") == node &&
          e.value("type", "") == "Warning") {
        ++n;
      }
    }
    return n;
  }
};

TEST_F(AdviseWatchTest, ThePlanIsServedAsMetricsAndADriftWarnsOnceUntilItEnds) {
  const std::string ns = useNamespace("advise-watch");
  auto& admin = TestCluster::get().admin();
  for (int i = 1; i <= 4; ++i) {
    admin.post("/api/v1/nodes", sizedNode("watch-n" + std::to_string(i), "4", "8Gi"));
  }
  // watch-n1 at 75 % cpu, the cluster at 18.75 %: 56 points above the band of 20.
  for (const char* p : {"web-1", "web-2", "web-3"}) replica(ns, p, "watch-n1");
  const int port = freeLoopbackPort();
  Daemon watch(TestCluster::get().dir() + "/advise-watch.log",
               {"advise", "--watch", "--kubeconfig", TestCluster::get().kubeconfig("admin"),
                "--balance", "--deviation", "20", "--watch-interval", "1s", "--secure-port",
                std::to_string(port), "--bind-address", "127.0.0.1", "-q"});
  ASSERT_TRUE(watch.waitForLog("round 2:", 60s)) << watch.log();

  const HttpsAnswer r = httpsGet(port, "/metrics");
  ASSERT_EQ(r.status, 200) << r.body;
  const std::string goal = R"(goal="--balance")";
  EXPECT_GE(metricSample(r.body, "ksched_advise_plan_moves{" + goal + "}"), 1) << r.body;
  EXPECT_GE(
      metricSample(r.body, "ksched_advise_plan_moves_off_node{" + goal + R"(,node="watch-n1"})"), 1)
      << r.body;
  EXPECT_EQ(metricSample(r.body, "ksched_advise_nodes_over_band{" + goal + "}"), 1) << r.body;
  EXPECT_EQ(metricSample(r.body, "ksched_advise_drifted{" + goal + "}"), 1) << r.body;
  EXPECT_GE(metricSample(r.body, R"(ksched_advise_plans_total{result="planned"})"), 2) << r.body;
  EXPECT_EQ(metricSample(r.body, R"(ksched_advise_plans_total{result="error"})"), 0) << r.body;
  EXPECT_GT(metricSample(r.body, "process_resident_memory_bytes"), 0) << r.body;
  EXPECT_EQ(httpsGet(port, "/readyz").status, 200);
  // Anonymous callers may not read the plan.
  EXPECT_EQ(httpsGet(port, "/metrics", false).status, 403);

  // One Warning on the node for this drift, however many rounds see it.
  ASSERT_TRUE(watch.waitForLog("round 4:", 30s)) << watch.log();
  EXPECT_EQ(driftEvents("watch-n1"), 1) << watch.log();
  const json e = [&] {
    for (const auto& ev : admin.list("/api/v1/namespaces/default/events").items) {
      if (ev.value("reason", "") == "Drifted") return ev;
    }
    return json::object();
  }();
  EXPECT_NE(e.value("message", "").find("ksched advise (--balance): "), std::string::npos)
      << e.dump();
  EXPECT_NE(e.value("message", "").find("off this node, the first: advise-watch/web-"),
            std::string::npos)
      << e.dump();

  // The drift ends (two pods gone: 25 % against 6.25 %, within 20 points)...
  admin.del("/api/v1/namespaces/" + ns + "/pods/web-2");
  admin.del("/api/v1/namespaces/" + ns + "/pods/web-3");
  ASSERT_TRUE(eventually(
      [&] {
        return metricSample(httpsGet(port, "/metrics").body,
                            "ksched_advise_drifted{" + goal + "}") == 0;
      },
      30s))
      << watch.log();
  EXPECT_EQ(metricSample(httpsGet(port, "/metrics").body,
                         "ksched_advise_plan_moves_off_node{" + goal + R"(,node="watch-n1"})"),
            -1);
  // ...and comes back: a second Warning.
  replica(ns, "web-4", "watch-n1");
  replica(ns, "web-5", "watch-n1");
  EXPECT_TRUE(eventually([&] { return driftEvents("watch-n1") == 2; }, 30s)) << watch.log();

  EXPECT_EQ(watch.signalAndWait(SIGTERM), 0) << watch.log();
  EXPECT_TRUE(watch.logHas("advise: stopping")) << watch.log();
}

}  // namespace
}  // namespace ksched::testing
