// ksched advise against the real apiserver: a dry run plans over the live cluster and changes
// nothing; --apply frees the nodes through the Eviction API with kube-controller-manager's
// ReplicaSet and PodDisruptionBudget controllers recreating and counting the pods, and a live
// ksched placing the replacements where the plan said.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "cli.h"
#include "cluster.h"
#include "daemon.h"
#include "scheduling.h"

namespace ksched::testing {
namespace {

using nlohmann::json;

class AdviseTest : public NamespacedTest {
 protected:
  void SetUp() override {
    deleteAllNodes(TestCluster::get().admin());
    dir_ = TestCluster::get().dir() + "/advise-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    kubelet_.request_stop();
    if (kubelet_.joinable()) kubelet_.join();
    live_.reset();
    auto& admin = TestCluster::get().admin();
    if (controllers_) TestCluster::get().stopWorkloadControllers();
    if (!ns_.empty()) {
      for (const auto& d : admin.list("/apis/apps/v1/namespaces/" + ns_ + "/deployments").items) {
        admin.del("/apis/apps/v1/namespaces/" + ns_ + "/deployments/" +
                  d["metadata"]["name"].get<std::string>());
      }
      for (const auto& rs : admin.list("/apis/apps/v1/namespaces/" + ns_ + "/replicasets").items) {
        admin.del("/apis/apps/v1/namespaces/" + ns_ + "/replicasets/" +
                  rs["metadata"]["name"].get<std::string>());
      }
    }
    NamespacedTest::TearDown();
    deleteAllNodes(admin);
  }

  void nodes(int count) {
    for (int i = 1; i <= count; ++i) {
      TestCluster::get().admin().post("/api/v1/nodes",
                                      sizedNode("adv-n" + std::to_string(i), "4", "8Gi"));
    }
  }

  // ReplicaSet `name` of `replicas` pods of 1 cpu and 2Gi, scheduled by `schedulerName`.
  json replicaSet(const std::string& name, int replicas, const std::string& schedulerName) {
    json tmpl = sizedPod(ns_, name, "1", "2Gi");
    tmpl["metadata"] = {{"labels", {{"app", name}}}};
    tmpl["spec"]["schedulerName"] = schedulerName;
    const json rs = {{"apiVersion", "apps/v1"},
                     {"kind", "ReplicaSet"},
                     {"metadata", {{"name", name}, {"namespace", ns_}}},
                     {"spec",
                      {{"replicas", replicas},
                       {"selector", {{"matchLabels", {{"app", name}}}}},
                       {"template", tmpl}}}};
    return TestCluster::get().admin().post("/apis/apps/v1/namespaces/" + ns_ + "/replicasets", rs);
  }

  // A pod of ReplicaSet `rs` (the object `replicaSet` returned) bound to `node` at creation.
  void boundReplica(const json& rs, const std::string& name, const std::string& node) {
    json p = sizedPod(ns_, name, "1", "2Gi");
    p["spec"]["schedulerName"] = rs["spec"]["template"]["spec"]["schedulerName"];
    p["metadata"]["labels"] = {{"app", rs["metadata"]["name"]}};
    p["metadata"]["ownerReferences"] = {{{"apiVersion", "apps/v1"},
                                         {"kind", "ReplicaSet"},
                                         {"name", rs["metadata"]["name"]},
                                         {"uid", rs["metadata"]["uid"]},
                                         {"controller", true}}};
    p["spec"]["nodeName"] = node;
    TestCluster::get().admin().post("/api/v1/namespaces/" + ns_ + "/pods", p);
  }

  CliOutcome advise(std::vector<std::string> extra, std::chrono::seconds within = 60s) {
    std::vector<std::string> args{"advise", "--kubeconfig", TestCluster::get().kubeconfig("admin"),
                                  "-q"};
    args.insert(args.end(), extra.begin(), extra.end());
    return runKsched(args, dir_, within);
  }

  // What a kubelet would report: every bound pod of the namespace Running and Ready (the
  // disruption controller counts ready pods), until the test ends.
  void startKubelet() {
    kubelet_ = std::jthread([ns = ns_](std::stop_token stop) {
      client::RestClient c(TestCluster::get().config("admin"));
      std::set<std::string> ready;
      while (!stop.stop_requested()) {
        for (const auto& p : c.list("/api/v1/namespaces/" + ns + "/pods").items) {
          const std::string uid = p["metadata"]["uid"];
          if (p["spec"].value("nodeName", "").empty() || ready.contains(uid)) continue;
          try {
            c.patch("/api/v1/namespaces/" + ns + "/pods/" +
                        p["metadata"]["name"].get<std::string>() + "/status",
                    {{"status",
                      {{"phase", "Running"},
                       {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}},
                    "application/strategic-merge-patch+json");
            ready.insert(uid);
          } catch (const client::ApiError&) {
          }
        }
        std::this_thread::sleep_for(100ms);
      }
    });
  }

  // A budget of at most `maxUnavailable` pods of app `app` down at once.
  void budget(const std::string& app, int maxUnavailable) {
    TestCluster::get().admin().post(
        "/apis/policy/v1beta1/namespaces/" + ns_ + "/poddisruptionbudgets",
        {{"apiVersion", "policy/v1beta1"},
         {"kind", "PodDisruptionBudget"},
         {"metadata", {{"name", app}}},
         {"spec",
          {{"maxUnavailable", maxUnavailable}, {"selector", {{"matchLabels", {{"app", app}}}}}}}});
  }
  [[nodiscard]] int disruptionsAllowed(const std::string& app) const {
    const json pdb = TestCluster::get().admin().get("/apis/policy/v1beta1/namespaces/" + ns_ +
                                                    "/poddisruptionbudgets/" + app);
    return objectOrEmpty(pdb, "status").value("disruptionsAllowed", -1);
  }

  // What --apply needs around it: the live scheduler (the default profile under the name
  // advise-live; its configuration's path is returned), the ReplicaSet and disruption
  // controllers, and the pods' readiness; returns once budget `app` allows `allowed`
  // disruptions and the namespace holds `pods` pods (none made by the controller).
  std::string liveCluster(const std::string& app, int allowed, size_t pods) {
    const std::string config = dir_ + "/config.yaml";
    std::ofstream(config) << "apiVersion: kubescheduler.config.k8s.io/v1\n"
                             "kind: KubeSchedulerConfiguration\n"
                             "clientConnection:\n  kubeconfig: "
                          << TestCluster::get().kubeconfig("scheduler")
                          << "\nleaderElection:\n  leaderElect: false\n"
                             "profiles:\n- schedulerName: advise-live\n";
    live_ = std::make_unique<Daemon>(
        dir_ + "/ksched.log", std::vector<std::string>{"--config", config, "--secure-port=0"});
    EXPECT_TRUE(live_->waitForLog("synced:", 60s)) << live_->log();
    TestCluster::get().startWorkloadControllers();
    controllers_ = true;
    startKubelet();
    EXPECT_TRUE(eventually([&] { return disruptionsAllowed(app) == allowed; }, 60s));
    EXPECT_EQ(listPods(TestCluster::get().admin(), ns_).size(), pods)
        << "the ReplicaSet controller made pods of its own";
    return config;
  }

  // Watches budget `app` until stopped: the lowest currentHealthy - desiredHealthy seen (below
  // zero: the budget was broken).
  class BudgetWatch {
   public:
    BudgetWatch(const std::string& ns, const std::string& app)
        : thread_([this, ns, app](std::stop_token stop) {
            client::RestClient c(TestCluster::get().config("admin"));
            while (!stop.stop_requested()) {
              const json status = objectOrEmpty(
                  c.get("/apis/policy/v1beta1/namespaces/" + ns + "/poddisruptionbudgets/" + app),
                  "status");
              const int margin =
                  status.value("currentHealthy", 0) - status.value("desiredHealthy", 0);
              lowest_ = std::min(lowest_.load(), margin);
              std::this_thread::sleep_for(50ms);
            }
          }) {}
    int stop() {
      thread_.request_stop();
      thread_.join();
      return lowest_;
    }

   private:
    std::atomic<int> lowest_{0};
    std::jthread thread_;
  };

  std::string dir_;
  std::string ns_;
  bool controllers_ = false;
  std::unique_ptr<Daemon> live_;
  std::jthread kubelet_;
};

// Every pod's and node's resourceVersion.
std::map<std::string, std::string> versions(RestClient& c) {
  std::map<std::string, std::string> out;
  for (const char* path : {"/api/v1/pods", "/api/v1/nodes"}) {
    for (const auto& o : c.list(path).items) {
      out[std::string(path) + ":" + o["metadata"].value("namespace", "") + "/" +
          o["metadata"]["name"].get<std::string>()] = o["metadata"]["resourceVersion"];
    }
  }
  return out;
}

TEST_F(AdviseTest, ADryRunPlansOverTheLiveClusterAndChangesNothing) {
  ns_ = useNamespace("advise-dry");
  nodes(6);
  const json rs = replicaSet("web", 0, "default-scheduler");
  for (int i = 1; i <= 6; ++i) {
    const std::string n = "adv-n" + std::to_string(i);
    boundReplica(rs, "web-" + std::to_string(i) + "a", n);
    boundReplica(rs, "web-" + std::to_string(i) + "b", n);
  }
  // A bare pod keeps adv-n1.
  json bare = sizedPod(ns_, "bare", "100m", "64Mi");
  bare["spec"]["nodeName"] = "adv-n1";
  TestCluster::get().admin().post("/api/v1/namespaces/" + ns_ + "/pods", bare);

  auto& admin = TestCluster::get().admin();
  const auto before = versions(admin);
  const CliOutcome r = advise({"--scale-down", "-o", "json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const json plan = json::parse(r.out);
  EXPECT_EQ(plan.at("goal"), "--scale-down");
  // 12.1 cpu on nodes of 4: four nodes needed, two freed, each of its two pods moved once.
  EXPECT_EQ(plan.at("lowerBoundNodes"), 4);
  ASSERT_EQ(plan.at("cordon").size(), 2U) << plan.dump(2);
  ASSERT_EQ(plan.at("moves").size(), 4U) << plan.dump(2);
  std::set<std::string> cordon(plan["cordon"].begin(), plan["cordon"].end());
  EXPECT_FALSE(cordon.contains("adv-n1"));
  std::map<std::string, int> onto;
  for (const auto& m : plan["moves"]) {
    EXPECT_TRUE(cordon.contains(m.at("from").get<std::string>())) << m.dump();
    EXPECT_FALSE(cordon.contains(m.at("to").get<std::string>())) << m.dump();
    ++onto[m.at("to").get<std::string>()];
  }
  for (const auto& [node, n] : onto) EXPECT_LE(n, 2) << node << " gets more than it has room for";
  ASSERT_FALSE(plan.at("kept").empty());
  EXPECT_EQ(plan["kept"][0].at("pod"), "advise-dry/bare");
  EXPECT_EQ(plan["kept"][0].at("reason"), "no controller would recreate it (no ownerReferences)");
  EXPECT_EQ(plan.at("after").at("nodesUsed"), 4);

  // The table says the same, and that nothing changed; and nothing did.
  const CliOutcome table = advise({"--free-nodes", "1"});
  ASSERT_EQ(table.exitCode, 0) << table.err;
  EXPECT_NE(table.out.find("Plan: free 1 node ("), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("Dry run: nothing was changed"), std::string::npos) << table.out;
  EXPECT_EQ(versions(admin), before);
}

TEST_F(AdviseTest, ABudgetThatAllowsNoDisruptionKeepsItsPods) {
  ns_ = useNamespace("advise-pdb");
  nodes(3);
  const json rs = replicaSet("db", 0, "default-scheduler");
  boundReplica(rs, "db-1", "adv-n1");
  boundReplica(rs, "db-2", "adv-n2");
  TestCluster::get().admin().post(
      "/apis/policy/v1beta1/namespaces/" + ns_ + "/poddisruptionbudgets",
      {{"apiVersion", "policy/v1beta1"},
       {"kind", "PodDisruptionBudget"},
       {"metadata", {{"name", "db"}}},
       {"spec", {{"minAvailable", 2}, {"selector", {{"matchLabels", {{"app", "db"}}}}}}}});
  // No disruption controller runs: the budget's status says 0 disruptions allowed, as it does
  // while its pods are not all healthy.
  const CliOutcome r = advise({"--scale-down", "-o", "json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const json plan = json::parse(r.out);
  EXPECT_TRUE(plan.at("moves").empty()) << plan.dump(2);
  ASSERT_EQ(plan.at("kept").size(), 2U) << plan.dump(2);
  for (const auto& k : plan["kept"]) {
    EXPECT_EQ(k.at("reason"), "PodDisruptionBudget advise-pdb/db allows no disruption now");
  }
  EXPECT_EQ(plan.at("alreadyFree"), json::array({"adv-n3"}));
}

TEST_F(AdviseTest, ASkewedReplicaSetIsBroughtWithinMaxSkewInADryRun) {
  ns_ = useNamespace("advise-spread");
  auto& admin = TestCluster::get().admin();
  // Four nodes in two zones; six pods spread over zones (maxSkew 1), all bound in zone-a (bound
  // at creation: no scheduler checked the constraint).
  for (int i = 1; i <= 4; ++i) {
    json n = sizedNode("adv-n" + std::to_string(i), "8", "16Gi");
    n["metadata"]["labels"]["topology.kubernetes.io/zone"] = i <= 2 ? "zone-a" : "zone-b";
    admin.post("/api/v1/nodes", n);
  }
  const json rs = replicaSet("web", 0, "default-scheduler");
  for (int i = 0; i < 6; ++i) {
    json p = sizedPod(ns_, "web-" + std::to_string(i), "500m", "1Gi");
    p["metadata"]["labels"] = {{"app", "web"}};
    p["metadata"]["ownerReferences"] = {{{"apiVersion", "apps/v1"},
                                         {"kind", "ReplicaSet"},
                                         {"name", "web"},
                                         {"uid", rs["metadata"]["uid"]},
                                         {"controller", true}}};
    p["spec"]["nodeName"] = i < 4 ? "adv-n1" : "adv-n2";
    p["spec"]["topologySpreadConstraints"] = {
        {{"maxSkew", 1},
         {"topologyKey", "topology.kubernetes.io/zone"},
         {"whenUnsatisfiable", "DoNotSchedule"},
         {"labelSelector", {{"matchLabels", {{"app", "web"}}}}}}};
    admin.post("/api/v1/namespaces/" + ns_ + "/pods", p);
  }
  const auto before = versions(admin);
  const CliOutcome r = advise({"--spread", "-o", "json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const json plan = json::parse(r.out);
  ASSERT_EQ(plan.at("skews").size(), 1U) << plan.dump(2);
  EXPECT_EQ(plan["skews"][0].at("pods"), "advise-spread/ReplicaSet/web");
  EXPECT_EQ(plan["skews"][0].at("before"), 6);
  EXPECT_EQ(plan["skews"][0].at("after"), 0);
  ASSERT_EQ(plan.at("moves").size(), 3U) << plan.dump(2);
  for (const auto& m : plan["moves"]) {
    const std::string to = m.at("to");
    EXPECT_TRUE(to == "adv-n3" || to == "adv-n4") << m.dump();
  }
  EXPECT_EQ(plan["moves"][0].at("from"), "adv-n1");  // the fullest node first
  EXPECT_EQ(versions(admin), before);
}

TEST_F(AdviseTest, ApplyFreesTheNodesThroughEvictionsWithoutBreakingTheBudget) {
  ns_ = useNamespace("advise-apply");
  auto& admin = TestCluster::get().admin();
  // Nodes of different sizes and loads, so that each move has one best node (no tie): adv-n1
  // and adv-n2 hold one pod each and are the ones to free.
  const std::vector<std::tuple<std::string, std::string, std::string, int>> layout = {
      {"adv-n1", "4", "8Gi", 1},  {"adv-n2", "4", "8Gi", 1}, {"adv-n3", "4", "8Gi", 3},
      {"adv-n4", "5", "10Gi", 2}, {"adv-n5", "4", "8Gi", 2}, {"adv-n6", "4", "8Gi", 3},
      {"adv-n7", "4", "8Gi", 0}};
  const json rs = replicaSet("web", 12, "advise-live");
  int made = 0;
  for (const auto& [node, cpu, mem, pods] : layout) {
    admin.post("/api/v1/nodes", sizedNode(node, cpu, mem));
    for (int i = 0; i < pods; ++i) boundReplica(rs, "web-" + std::to_string(++made), node);
  }
  budget("web", 1);
  const std::string config = liveCluster("web", 1, 12);
  BudgetWatch watch(ns_, "web");
  const std::string report = dir_ + "/apply.html";
  const CliOutcome r =
      advise({"--config", config, "--free-nodes", "2", "--apply", "--grace-period", "0",
              "--interval", "0s", "--timeout", "60s", "-o", "json", "--report", report},
             240s);
  const int lowest = watch.stop();
  ASSERT_EQ(r.exitCode, 0) << r.err << "\n" << r.out;
  const json plan = json::parse(r.out.substr(0, r.out.find("\n}\n") + 2));
  EXPECT_EQ(plan.at("cordon"), json::array({"adv-n1", "adv-n2"})) << plan.dump(2);
  ASSERT_EQ(plan.at("moves").size(), 2U) << plan.dump(2);
  for (const auto& m : plan["moves"]) EXPECT_TRUE(m.at("tiedWith").empty()) << m.dump();
  // The page of the plan carried out names its moves.
  std::stringstream page;
  page << std::ifstream(report).rdbuf();
  for (const auto& m : plan["moves"]) {
    EXPECT_NE(page.str().find("<td>" + m.at("pod").get<std::string>() + "</td><td>" +
                              m.at("from").get<std::string>() + "</td><td>" +
                              m.at("to").get<std::string>() + "</td>"),
              std::string::npos)
        << m.dump();
  }
  EXPECT_NE(r.err.find("2 of 2 moves done, 0 landed elsewhere than planned"), std::string::npos)
      << r.err;
  EXPECT_GE(lowest, 0) << "the budget was broken";

  // Every pod bound; none on the freed nodes, which are cordoned; the events name the goal.
  EXPECT_EQ(waitAllBound(admin, ns_, 12, 30s), 12);
  std::set<std::string> cordon(plan["cordon"].begin(), plan["cordon"].end());
  for (const auto& p : listPods(admin, ns_)) EXPECT_FALSE(cordon.contains(p.spec.nodeName));
  for (const auto& n : cordon) {
    EXPECT_TRUE(admin.get("/api/v1/nodes/" + n)["spec"].value("unschedulable", false)) << n;
  }
  // The empty node was cordoned while the moves ran (none landed there) and is not any more.
  EXPECT_EQ(plan.at("alreadyFree"), json::array({"adv-n7"}));
  EXPECT_NE(r.err.find("advise: cordoned adv-n7"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("advise: uncordoned adv-n7"), std::string::npos) << r.err;
  EXPECT_FALSE(admin.get("/api/v1/nodes/adv-n7")["spec"].value("unschedulable", false));
  for (const auto& p : listPods(admin, ns_)) EXPECT_NE(p.spec.nodeName, "adv-n7");
  int descheduled = 0;
  for (const auto& e : admin.list("/api/v1/namespaces/" + ns_ + "/events").items) {
    if (e.value("reason", "") != "Descheduled") continue;
    ++descheduled;
    EXPECT_NE(e.value("message", "").find("(--free-nodes 2): free node adv-n"), std::string::npos)
        << e.dump();
  }
  EXPECT_EQ(descheduled, 2);
}

TEST_F(AdviseTest, ScaleDownEmptiesHalfOfTenHalfFilledNodesAndEveryPodIsBoundAfter) {
  ns_ = useNamespace("advise-ten");
  auto& admin = TestCluster::get().admin();
  // Ten nodes of 4 cpu, each half filled by two pods of 1 cpu: 20 cpu fit on five.
  nodes(10);
  const json rs = replicaSet("web", 20, "advise-live");
  std::map<std::string, int> layout;
  for (int i = 1; i <= 10; ++i) {
    const std::string n = "adv-n" + std::to_string(i);
    for (const char* s : {"a", "b"}) boundReplica(rs, "web-" + std::to_string(i) + s, n);
    layout[n] = 2;
  }
  budget("web", 1);
  const std::string config = liveCluster("web", 1, 20);
  BudgetWatch watch(ns_, "web");
  const CliOutcome r = advise({"--config", config, "--scale-down", "--apply", "--grace-period", "0",
                               "--interval", "0s", "--timeout", "60s", "-o", "json"},
                              300s);
  const int lowest = watch.stop();
  ASSERT_EQ(r.exitCode, 0) << r.err << "\n" << r.out;
  const json plan = json::parse(r.out.substr(0, r.out.find("\n}\n") + 2));
  EXPECT_EQ(plan.at("lowerBoundNodes"), 5);
  ASSERT_EQ(plan.at("cordon").size(), 5U) << plan.dump(2);
  ASSERT_EQ(plan.at("moves").size(), 10U) << plan.dump(2);
  EXPECT_NE(r.err.find("10 of 10 moves done"), std::string::npos) << r.err;
  EXPECT_GE(lowest, 0) << "the budget was broken";

  // Where the plan puts the pods, node by node, and where they are: equal (the nodes are alike,
  // so a pod the live scheduler put on a node tied with the planned one changes no count).
  for (const auto& m : plan["moves"]) {
    --layout[m.at("from").get<std::string>()];
    ++layout[m.at("to").get<std::string>()];
  }
  EXPECT_EQ(waitAllBound(admin, ns_, 20, 30s), 20);
  std::map<std::string, int> bound;
  for (const auto& [n, count] : layout) bound[n] = 0;
  for (const auto& p : listPods(admin, ns_)) ++bound[p.spec.nodeName];
  EXPECT_EQ(bound, layout);
  const std::set<std::string> cordon(plan["cordon"].begin(), plan["cordon"].end());
  for (const auto& n : cordon) {
    EXPECT_EQ(bound[n], 0) << n;
    EXPECT_TRUE(admin.get("/api/v1/nodes/" + n)["spec"].value("unschedulable", false)) << n;
  }
  // The first move lands where the plan said, or on a node tied with it.
  std::set<std::string> first{plan["moves"][0].at("to").get<std::string>()};
  for (const auto& t : plan["moves"][0].at("tiedWith")) first.insert(t.get<std::string>());
  const std::string said = "moved " + plan["moves"][0].at("pod").get<std::string>() + ": ";
  const size_t at = r.err.find(said);
  ASSERT_NE(at, std::string::npos) << r.err;
  const std::string line = r.err.substr(at, r.err.find('\n', at) - at);
  const size_t arrow = line.find(" -> ");
  ASSERT_NE(arrow, std::string::npos) << line;
  const std::string landed = line.substr(arrow + 4, line.find(' ', arrow + 4) - arrow - 4);
  EXPECT_TRUE(first.contains(landed)) << line;
}

TEST_F(AdviseTest, ApplyBringsASkewedDeploymentWithinMaxSkew) {
  ns_ = useNamespace("advise-deploy");
  auto& admin = TestCluster::get().admin();
  const auto zoned = [&](const std::string& name, const std::string& zone) {
    json n = sizedNode(name, "8", "16Gi");
    n["metadata"]["labels"]["topology.kubernetes.io/zone"] = zone;
    admin.post("/api/v1/nodes", n);
  };
  zoned("adv-n1", "zone-a");
  zoned("adv-n2", "zone-a");
  // Six replicas spread over zones (maxSkew 1), placed while zone-a was the only zone.
  json tmpl = sizedPod(ns_, "web", "500m", "1Gi");
  tmpl["metadata"] = {{"labels", {{"app", "web"}}}};
  tmpl["spec"]["schedulerName"] = "advise-live";
  tmpl["spec"]["topologySpreadConstraints"] = {
      {{"maxSkew", 1},
       {"topologyKey", "topology.kubernetes.io/zone"},
       {"whenUnsatisfiable", "DoNotSchedule"},
       {"labelSelector", {{"matchLabels", {{"app", "web"}}}}}}};
  admin.post(
      "/apis/apps/v1/namespaces/" + ns_ + "/deployments",
      {{"apiVersion", "apps/v1"},
       {"kind", "Deployment"},
       {"metadata", {{"name", "web"}}},
       {"spec",
        {{"replicas", 6}, {"selector", {{"matchLabels", {{"app", "web"}}}}}, {"template", tmpl}}}});
  budget("web", 1);
  const std::string config = liveCluster("web", 1, 6);
  EXPECT_EQ(waitAllBound(admin, ns_, 6, 30s), 6);
  zoned("adv-n3", "zone-b");
  zoned("adv-n4", "zone-b");

  BudgetWatch watch(ns_, "web");
  const CliOutcome r = advise({"--config", config, "--spread", "--apply", "--grace-period", "0",
                               "--interval", "0s", "--timeout", "60s", "-o", "json"},
                              240s);
  const int lowest = watch.stop();
  ASSERT_EQ(r.exitCode, 0) << r.err << "\n" << r.out;
  const json plan = json::parse(r.out.substr(0, r.out.find("\n}\n") + 2));
  ASSERT_EQ(plan.at("skews").size(), 1U) << plan.dump(2);
  EXPECT_EQ(plan["skews"][0].at("before"), 6);
  EXPECT_LE(plan["skews"][0].at("after").get<int>(), 1);
  EXPECT_EQ(plan.at("moves").size(), 3U) << plan.dump(2);
  EXPECT_NE(r.err.find("3 of 3 moves done"), std::string::npos) << r.err;
  EXPECT_GE(lowest, 0) << "the budget was broken";
  // On the apiserver: six pods bound, three in each zone.
  EXPECT_EQ(waitAllBound(admin, ns_, 6, 30s), 6);
  std::map<std::string, int> zones;
  for (const auto& p : listPods(admin, ns_)) {
    ++zones[p.spec.nodeName == "adv-n3" || p.spec.nodeName == "adv-n4" ? "zone-b" : "zone-a"];
  }
  EXPECT_EQ(zones, (std::map<std::string, int>{{"zone-a", 3}, {"zone-b", 3}}));
}

}  // namespace
}  // namespace ksched::testing
