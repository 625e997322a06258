// Explain against the real apiserver: the daemon's /debug/explain and the `ksched explain`
// command say, per node, which plugin rejects a pending pod and what is missing, agree with the
// FailedScheduling text the scheduling loop wrote, and pick the node the loop bound a pod to.
#include <gtest/gtest.h>
#include <httplib.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cluster.h"
#include "daemon.h"
#include "explain_cli.h"
#include "scheduling.h"

namespace ksched::testing {
namespace {

using nlohmann::json;

const std::string kNs = "explain";

std::string podScheduledMessage(RestClient& admin, const std::string& name) {
  auto p = admin.get("/api/v1/namespaces/" + kNs + "/pods/" + name);
  for (const auto& c : p["status"].value("conditions", json::array())) {
    if (c.value("type", "") == "PodScheduled") return c.value("message", "");
  }
  return "";
}

class Explain : public ::testing::Test {
 protected:
  void SetUp() override {
    auto& admin = TestCluster::get().admin();
    deleteAllNodes(admin);
    ensureNamespace(admin, kNs);
    deleteAllPods(admin, kNs);
    admin.post("/api/v1/nodes", sizedNode("small-1", "1", "4Gi"));
    admin.post("/api/v1/nodes", sizedNode("small-2", "1", "4Gi"));
    admin.post("/api/v1/nodes", sizedNode("small-3", "1500m", "4Gi"));
    admin.post(
        "/api/v1/nodes",
        sizedNode(
            "big-1", "8", "16Gi",
            json::array({{{"key", "dedicated"}, {"value", "gpu"}, {"effect", "NoSchedule"}}})));
    port_ = freeLoopbackPort();
    std::vector<std::string> args{"--kubeconfig",
                                  TestCluster::get().kubeconfig("scheduler"),
                                  "--leader-elect=false",
                                  "--bind-address=127.0.0.1",
                                  "--secure-port=" + std::to_string(port_),
                                  "--v=6"};
    for (auto& a : extraArgs()) args.push_back(std::move(a));
    daemon_ = std::make_unique<Daemon>(logPath("explain"), args);
    ASSERT_TRUE(daemon_->waitForLog("synced:", 60s)) << daemon_->log();
  }
  void TearDown() override {
    EXPECT_EQ(daemon_->signalAndWait(SIGTERM), 0) << daemon_->log();
    deleteAllPods(TestCluster::get().admin(), kNs);
  }

  // GET /debug/explain as the admin; status and parsed body.
  std::pair<int, json> live(const std::string& query) {
    httplib::SSLClient c("127.0.0.1", port_);
    c.enable_server_certificate_verification(false);
    c.set_bearer_token_auth(TestCluster::get().config("admin").token.c_str());
    auto res = c.Get(("/debug/explain?" + query).c_str());
    if (!res) return {-1, json()};
    return {res->status, json::parse(res->body, nullptr, false)};
  }

  [[nodiscard]] virtual std::vector<std::string> extraArgs() const { return {}; }

  int port_ = 0;
  std::unique_ptr<Daemon> daemon_;
};

class ExplainAnnotation : public Explain {
 protected:
  [[nodiscard]] std::vector<std::string> extraArgs() const override {
    return {"--diagnosis-annotation"};
  }
};

// With --diagnosis-annotation the loop leaves the same counts on the pod, in the PodScheduled
// patch, with the closest node's shortfall.
TEST_F(ExplainAnnotation, UnschedulableAttemptWritesTheDiagnosisOnThePod) {
  auto& admin = TestCluster::get().admin();
  admin.post("/api/v1/namespaces/" + kNs + "/pods", sizedPod(kNs, "trainer", "2", "1Gi"));
  json pod;
  ASSERT_TRUE(eventually([&] {
    pod = admin.get("/api/v1/namespaces/" + kNs + "/pods/trainer");
    return pod["metadata"].value("annotations", json::object()).contains("ksched.io/diagnosis");
  })) << pod.dump();
  EXPECT_FALSE(podScheduledMessage(admin, "trainer").empty()) << "one patch carries both";
  json d = json::parse(pod["metadata"]["annotations"]["ksched.io/diagnosis"].get<std::string>());
  EXPECT_EQ(d["nodes"], 4);
  EXPECT_EQ(d["reasons"],
            json::parse(R"json([{"plugin":"NodeResourcesFit","reason":"Insufficient cpu","count":3,
                             "examples":["small-1","small-2","small-3"]},
                            {"plugin":"TaintToleration",
                             "reason":"node(s) had untolerated taint(s)",
                             "count":1,"examples":["big-1"],
                             "details":{"big-1":"taint dedicated=gpu:NoSchedule not tolerated"}}])json"))
      << d.dump();
  ASSERT_FALSE(d["closest"].empty());
  EXPECT_EQ(d["closest"][0], json({{"node", "small-3"}, {"shortfall", "cpu: needs 2, free 1.5"}}));

  // The counts are explain's.
  auto [status, e] = live("namespace=" + kNs + "&name=trainer");
  ASSERT_EQ(status, 200);
  EXPECT_EQ(e["filtered"].size(), 4u);
}

const json* rejectionsOf(const json& e, const std::string& node) {
  for (const auto& f : e["filtered"]) {
    if (f["node"] == node) return &f["rejections"];
  }
  return nullptr;
}

TEST_F(Explain, PendingPodNamesEveryNodeWithItsReasonAndShortfall) {
  auto& admin = TestCluster::get().admin();
  admin.post("/api/v1/namespaces/" + kNs + "/pods", sizedPod(kNs, "trainer", "2", "1Gi"));
  std::string condition;
  ASSERT_TRUE(eventually([&] {
    condition = podScheduledMessage(admin, "trainer");
    return !condition.empty();
  }));

  auto [status, e] = live("namespace=" + kNs + "&name=trainer");
  ASSERT_EQ(status, 200) << e.dump();
  EXPECT_EQ(e["nodes"], 4);
  EXPECT_TRUE(e["feasible"].empty());
  EXPECT_EQ(e["fitError"],
            "0/4 nodes are available: 1 node(s) had untolerated taint(s), 3 "
            "Insufficient cpu. preemption: 0/4 nodes are available: 4 Preemption is not helpful "
            "for scheduling.");
  EXPECT_EQ(e["fitError"], condition) << "explain says what the loop wrote";
  EXPECT_EQ(e["preemption"]["plugin"], "DefaultPreemption");
  ASSERT_EQ(e["filtered"].size(), 4u);
  const json* big = rejectionsOf(e, "big-1");
  ASSERT_NE(big, nullptr);
  EXPECT_EQ((*big)[0]["plugin"], "TaintToleration");
  EXPECT_EQ((*big)[0]["details"], json::array({"taint dedicated=gpu:NoSchedule not tolerated"}));
  const json* small3 = rejectionsOf(e, "small-3");
  ASSERT_NE(small3, nullptr);
  ASSERT_EQ(small3->size(), 1u);
  EXPECT_EQ((*small3)[0]["plugin"], "NodeResourcesFit");
  EXPECT_EQ((*small3)[0]["reasons"], json::array({"Insufficient cpu"}));
  EXPECT_EQ((*small3)[0]["shortfall"][0], json({{"resource", "cpu"},
                                                {"requested", "2"},
                                                {"allocatable", "1.5"},
                                                {"inUse", "0"},
                                                {"free", "1.5"}}));

  CliRun table = explainCli("-n " + kNs + " trainer");
  EXPECT_EQ(table.rc, 0) << table.out;
  for (const char* want : {"0/4 nodes are available: 1 node(s) had untolerated taint(s), 3 "
                           "Insufficient cpu.",
                           "NodeResourcesFit: Insufficient cpu - 3 (small-1, small-2, small-3)",
                           "small-3: Insufficient cpu: needs 2, free 1.5",
                           "big-1: node(s) had untolerated taint(s) (TaintToleration): taint "
                           "dedicated=gpu:NoSchedule not tolerated"}) {
    EXPECT_NE(table.out.find(want), std::string::npos) << want << " not in:\n" << table.out;
  }
  CliRun asJson = explainCli("-n " + kNs + " trainer -o json");
  ASSERT_EQ(asJson.rc, 0) << asJson.out;
  json j = json::parse(asJson.out.substr(asJson.out.find('{')));
  EXPECT_EQ(j["filtered"], e["filtered"]) << "the command and the daemon agree";

  // The evaluation changed nothing.
  EXPECT_TRUE(admin.get("/api/v1/namespaces/" + kNs + "/pods/trainer")["spec"]
                  .value("nodeName", "")
                  .empty());
}

TEST_F(Explain, ScheduledPodLandsWhereExplainPicksWithScoresThatAddUp) {
  auto& admin = TestCluster::get().admin();
  admin.post("/api/v1/namespaces/" + kNs + "/pods", sizedPod(kNs, "web", "500m", "256Mi"));
  ASSERT_EQ(waitAllBound(admin, kNs, 1), 1u);
  const std::string bound = listPods(admin, kNs).at(0).spec.nodeName;

  auto [status, e] = live("namespace=" + kNs + "&name=web");
  ASSERT_EQ(status, 200) << e.dump();
  EXPECT_EQ(e["boundTo"], bound);
  EXPECT_EQ(e["selected"], json::array({bound})) << e.dump(2);
  EXPECT_EQ(e["feasible"].size(), 3u);
  for (const auto& n : e["feasible"]) {
    // The loop's own figure for this node (-v 6 logs every final score).
    const std::string logged = "Calculated node's final score for pod pod=\"" + kNs +
                               "/web\" node=\"" + n["node"].get<std::string>() +
                               "\" score=" + std::to_string(n["total"].get<int64_t>()) + "\n";
    EXPECT_TRUE(daemon_->logHas(logged)) << logged << " not in the daemon's log";
    int64_t sum = 0;
    for (const auto& s : n["scores"]) {
      EXPECT_EQ(s["weighted"], s["normalized"].get<int64_t>() * s["weight"].get<int64_t>());
      sum += s["weighted"].get<int64_t>();
    }
    EXPECT_EQ(n["total"], sum) << n.dump();
  }

  auto [one, onlyNode] = live("namespace=" + kNs + "&name=web&node=big-1");
  EXPECT_EQ(one, 200);
  EXPECT_EQ(onlyNode["filtered"].size(), 1u);
  EXPECT_TRUE(onlyNode["feasible"].empty());
}

// The command with a profile the daemon does not serve: nobody schedules (or preempts for) the
// pod, and explain says what preemption would do.
TEST_F(Explain, PreemptionNamesTheNodeAndVictimsAndEvictsNobody) {
  auto& admin = TestCluster::get().admin();
  try {
    admin.post("/apis/scheduling.k8s.io/v1/priorityclasses",
               {{"apiVersion", "scheduling.k8s.io/v1"},
                {"kind", "PriorityClass"},
                {"metadata", {{"name", "explain-high"}}},
                {"value", 1000}});
  } catch (const client::ApiError& e) {
    if (!e.isConflict()) throw;
  }
  auto placed = [&](const std::string& name, const std::string& node, const std::string& cpu,
                    bool high) {
    auto p = sizedPod(kNs, name, cpu);
    p["spec"]["nodeName"] = node;
    if (high) p["spec"]["priorityClassName"] = "explain-high";
    admin.post("/api/v1/namespaces/" + kNs + "/pods", p);
  };
  placed("low-1", "small-1", "1", false);
  placed("mid-2", "small-2", "1", true);
  placed("mid-3", "small-3", "1500m", true);
  auto urgent = sizedPod(kNs, "urgent", "1");
  urgent["spec"]["schedulerName"] = "explain-offline";
  urgent["spec"]["priorityClassName"] = "explain-high";
  admin.post("/api/v1/namespaces/" + kNs + "/pods", urgent);
  const std::string config = TestCluster::get().dir() + "/explain-offline.yaml";
  std::ofstream(config) << "apiVersion: kubescheduler.config.k8s.io/v1\n"
                           "kind: KubeSchedulerConfiguration\n"
                           "profiles:\n"
                           "  - schedulerName: explain-offline\n";

  CliRun r = explainCli("-n " + kNs + " urgent --config " + config + " -o json");
  ASSERT_EQ(r.rc, 0) << r.out;
  json e = json::parse(r.out.substr(r.out.find('{')));
  EXPECT_EQ(e["profile"], "explain-offline");
  EXPECT_EQ(e["preemption"], json({{"plugin", "DefaultPreemption"},
                                   {"node", "small-1"},
                                   {"victims", json::array({kNs + "/low-1"})}}))
      << e.dump(2);
  CliRun table = explainCli("-n " + kNs + " urgent --config " + config);
  EXPECT_NE(table.out.find("DefaultPreemption would make room on small-1 by evicting 1 pod(s): " +
                           kNs + "/low-1"),
            std::string::npos)
      << table.out;

  auto low = admin.get("/api/v1/namespaces/" + kNs + "/pods/low-1");
  EXPECT_FALSE(low["metadata"].contains("deletionTimestamp")) << "the victim is still there";
  EXPECT_TRUE(admin.get("/api/v1/namespaces/" + kNs + "/pods/urgent")["status"]
                  .value("nominatedNodeName", "")
                  .empty());
}

TEST_F(Explain, BadInputIsAClearMessageAndANonZeroExit) {
  auto& admin = TestCluster::get().admin();
  auto other = sizedPod(kNs, "elsewhere", "100m");
  other["spec"]["schedulerName"] = "someone-else";
  admin.post("/api/v1/namespaces/" + kNs + "/pods", other);
  admin.post("/api/v1/namespaces/" + kNs + "/pods", sizedPod(kNs, "mine", "100m"));

  CliRun r = explainCli("-n " + kNs + " nope");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("pod explain/nope not found"), std::string::npos) << r.out;
  r = explainCli("-n " + kNs + " elsewhere");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("pod explain/elsewhere is for scheduler \"someone-else\""),
            std::string::npos)
      << r.out;
  r = explainCli("-n " + kNs + " mine --node no-such-node");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("node \"no-such-node\" is not in the scheduler's cache"), std::string::npos)
      << r.out;
  r = explainCli("-n " + kNs + " mine -o yaml");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("--output: \"yaml\" is not table or json"), std::string::npos) << r.out;
  r = explainCli("-n " + kNs + " mine --feature-gates NoSuchGate=true");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find("invalid argument \"NoSuchGate=true\" for \"--feature-gates\" flag"),
            std::string::npos)
      << r.out;
  // With the gate on, a pod of no PodGroup is explained as before: no group section.
  r = explainCli("-n " + kNs + " mine --feature-gates GenericWorkload=true");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(r.out.find("Pod group"), std::string::npos) << r.out;

  EXPECT_EQ(live("namespace=" + kNs + "&name=nope").first, 404);
  EXPECT_EQ(live("namespace=" + kNs + "&name=elsewhere").first, 400);
  EXPECT_EQ(live("namespace=" + kNs).first, 400);
}

}  // namespace
}  // namespace ksched::testing
