// ksched simulate against the real apiserver. Its promise is that prediction equals reality: for
// a fixed seed, where `ksched simulate --kubeconfig` puts the cluster's pending pods is where the
// live ksched, started afterwards with the same configuration, binds them. Every scenario is
// built so that each pod has one best node (the simulation reports no tie), and pods are
// ordered by priority and name (the order of the live scheduler's first LIST, which the
// simulator reads too). The pods wait for a profile no scheduler serves until the daemon starts.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli.h"
#include "cluster.h"
#include "config/yaml_json.h"
#include "daemon.h"
#include "podgroups.h"
#include "scheduling.h"

namespace ksched::testing {
namespace {

using nlohmann::json;

const std::string kZone = "topology.kubernetes.io/zone";

// What the apiserver holds of one pod.
struct LivePod {
  std::string node;
  std::string nominated;       // status.nominatedNodeName
  bool terminating = false;    // metadata.deletionTimestamp set
  bool unschedulable = false;  // PodScheduled=False
  std::string message;         // of PodScheduled=False
  std::string uid;
};

std::map<std::string, LivePod> livePods(RestClient& c, const std::string& ns) {
  std::map<std::string, LivePod> out;
  for (const auto& p : listPods(c, ns)) {
    LivePod& l = out[p.metadata.name];
    l.node = p.spec.nodeName;
    l.nominated = p.status.nominatedNodeName;
    l.terminating = p.metadata.deletionTimestamp.has_value();
    l.uid = p.metadata.uid;
    if (const auto* cond = p.condition("PodScheduled");
        cond != nullptr && cond->status == "False") {
      l.unschedulable = true;
      l.message = cond->message;
    }
  }
  return out;
}

// One predicted pod of the simulation's document.
struct Predicted {
  std::string node;  // "" when not placed
  std::string reason;
};

// The pods of `ns` that were pending in the cluster, as the simulation placed them. Fails the
// test when one was placed among tied nodes: the live scheduler could then pick another one.
std::map<std::string, Predicted> predictedPods(const json& doc, const std::string& ns) {
  std::map<std::string, Predicted> out;
  for (const auto& p : doc.at("pods")) {
    if (p.at("namespace") != ns || p.at("origin") != "pending") continue;
    const std::string name = p.at("name");
    out[name] = {p.at("node").is_string() ? p.at("node").get<std::string>() : "",
                 p.at("reason").get<std::string>()};
    EXPECT_TRUE(p.at("tiedWith").empty())
        << name << " has no single best node: the scenario must not tie\n"
        << p.dump();
  }
  return out;
}

std::string nodeOf(const LivePod& p, bool nominatedCounts) {
  return p.node.empty() && nominatedCounts ? p.nominated : p.node;
}

std::string table(const std::map<std::string, Predicted>& predicted,
                  const std::map<std::string, LivePod>& live) {
  std::ostringstream s;
  s << "pod: predicted / live\n";
  for (const auto& [name, p] : predicted) {
    const auto it = live.find(name);
    s << "  " << name << ": " << (p.node.empty() ? "-" : p.node) << " / "
      << (it == live.end()                ? "(gone)"
          : !it->second.node.empty()      ? it->second.node
          : !it->second.nominated.empty() ? "nominated " + it->second.nominated
                                          : "-")
      << "\n";
  }
  return s.str();
}

class SimulateVsLive : public NamespacedTest {
 protected:
  void SetUp() override {
    deleteAllNodes(TestCluster::get().admin());
    dir_ = TestCluster::get().dir() + "/simulate-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    live_.reset();
    NamespacedTest::TearDown();
    auto& admin = TestCluster::get().admin();
    for (const auto& n : nodes_) {
      try {
        admin.del("/api/v1/nodes/" + n);
      } catch (const client::ApiError& e) {
        if (!e.isNotFound()) throw;
      }
    }
  }

  void addNode(const std::string& name, const std::string& cpu, const std::string& mem,
               const json& labels = json::object()) {
    auto n = sizedNode(name, cpu, mem);
    for (const auto& [k, v] : labels.items()) n["metadata"]["labels"][k] = v;
    TestCluster::get().admin().post("/api/v1/nodes", n);
    nodes_.push_back(name);
  }

  // A pod of the test's profile (schedulerName_) in the test's namespace.
  json pod(const std::string& name, const std::string& cpu, const std::string& mem) const {
    auto p = sizedPod(ns_, name, cpu, mem);
    p["spec"]["schedulerName"] = schedulerName_;
    return p;
  }
  void create(const json& pod) {
    TestCluster::get().admin().post("/api/v1/namespaces/" + ns_ + "/pods", pod);
  }

  // The configuration both the simulation and the daemon read: one profile, schedulerName_,
  // with `profileRest` (YAML lines indented under the profile) added.
  void useProfile(const std::string& ns, const std::string& schedulerName,
                  const std::string& profileRest = "") {
    ns_ = useNamespace(ns);
    schedulerName_ = schedulerName;
    config_ = dir_ + "/config.yaml";
    std::ofstream(config_) << "apiVersion: kubescheduler.config.k8s.io/v1\n"
                              "kind: KubeSchedulerConfiguration\n"
                              "clientConnection:\n"
                              "  kubeconfig: "
                           << TestCluster::get().kubeconfig("scheduler")
                           << "\n"
                              "leaderElection:\n"
                              "  leaderElect: false\n"
                              "profiles:\n"
                              "- schedulerName: "
                           << schedulerName << "\n"
                           << profileRest;
  }

  // `ksched simulate` over the apiserver's cluster, with the test's configuration; its JSON.
  json simulate(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args{
        "simulate", "--kubeconfig", TestCluster::get().kubeconfig("admin"),
        "--config", config_,        "-o",
        "json",     "--seed",       "1",
        "-q"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = runKsched(args, dir_);
    if (r.exitCode != 0) {
      throw std::runtime_error("ksched simulate exited " + std::to_string(r.exitCode) + ":\n" +
                               r.err);
    }
    return json::parse(r.out);
  }

  // The daemon with the test's configuration, informers synced; -v 6 logs every node's score.
  void startLive() {
    live_ = std::make_unique<Daemon>(
        dir_ + "/ksched.log",
        std::vector<std::string>{"--config", config_, "--secure-port=0", "-v", "6"});
    ASSERT_TRUE(live_->waitForLog("synced:", 60s)) << live_->log();
  }

  // The namespace's pods once every pod predicted placed is bound and every one predicted
  // unplaced has PodScheduled=False (or `within` passed), read again a second later so that a
  // late binding of a pod predicted unplaced shows.
  // With `nominatedCounts`, a pod nominated for a node (its victims still terminating) counts as
  // on that node.
  std::map<std::string, LivePod> settledLive(const std::map<std::string, Predicted>& predicted,
                                             bool nominatedCounts = false,
                                             std::chrono::seconds within = 30s) {
    auto& admin = TestCluster::get().admin();
    std::map<std::string, LivePod> live;
    (void)eventually(
        [&] {
          live = livePods(admin, ns_);
          for (const auto& [name, p] : predicted) {
            const auto it = live.find(name);
            if (it == live.end()) return false;
            const std::string node = nodeOf(it->second, nominatedCounts);
            if (p.node.empty() ? !it->second.unschedulable : node.empty()) return false;
          }
          return true;
        },
        within);
    std::this_thread::sleep_for(1s);
    return livePods(admin, ns_);
  }

  // Every predicted pod: the same node live, or unplaced in both (then, with `sameMessage`, the
  // simulation's reason is the PodScheduled message the daemon wrote).
  void expectSame(const std::map<std::string, Predicted>& predicted,
                  const std::map<std::string, LivePod>& live, bool sameMessage,
                  bool nominatedCounts = false) {
    for (const auto& [name, p] : predicted) {
      const auto it = live.find(name);
      ASSERT_NE(it, live.end()) << name << " is gone\n" << table(predicted, live);
      EXPECT_EQ(p.node, nodeOf(it->second, nominatedCounts))
          << name << "\n"
          << table(predicted, live) << "the daemon's scores: " << dir_ << "/ksched.log";
      if (p.node.empty()) {
        EXPECT_TRUE(it->second.unschedulable) << name;
        if (sameMessage) {
          EXPECT_EQ(p.reason, it->second.message) << name;
        }
      }
    }
  }

  std::string dir_;
  std::string ns_;
  std::string schedulerName_;
  std::string config_;
  std::vector<std::string> nodes_;
  std::unique_ptr<Daemon> live_;
};

// The default plugins: 15 pods of assorted sizes on 6 nodes of different sizes, one bigger than
// every node.
TEST_F(SimulateVsLive, DefaultProfilePlacesEveryPodWhereTheDaemonBindsIt) {
  useProfile("sim-default", "sim-default");
  const std::vector<std::array<const char*, 3>> nodes = {
      {"sa-1", "2", "4Gi"},  {"sa-2", "4", "8Gi"},   {"sa-3", "6", "8Gi"},
      {"sa-4", "8", "32Gi"}, {"sa-5", "12", "16Gi"}, {"sa-6", "16", "64Gi"}};
  for (const auto& [name, cpu, mem] : nodes) addNode(name, cpu, mem);
  const std::vector<std::pair<const char*, const char*>> pods = {
      {"500m", "1Gi"},  {"1", "512Mi"},    {"2", "4Gi"},     {"250m", "256Mi"}, {"3", "2Gi"},
      {"1500m", "6Gi"}, {"750m", "128Mi"}, {"4", "1Gi"},     {"100m", "3Gi"},   {"2400m", "600Mi"},
      {"1", "8Gi"},     {"600m", "700Mi"}, {"3500m", "5Gi"}, {"200m", "100Mi"}, {"100", "1Gi"}};
  for (size_t i = 0; i < pods.size(); ++i) {
    const std::string name = (i + 1 < 10 ? "p0" : "p") + std::to_string(i + 1);
    create(pod(name, pods[i].first, pods[i].second));
  }
  const auto predicted = predictedPods(simulate(), ns_);
  ASSERT_EQ(predicted.size(), pods.size());
  EXPECT_EQ(predicted.at("p15").node, "") << "bigger than every node";

  startLive();
  expectSame(predicted, settledLive(predicted), /*sameMessage=*/true);
}

// Topology spread over zones, required anti-affinity on hostnames, required pod affinity to a
// zone with a preferred node affinity, required node affinity, and one pod no node matches.
TEST_F(SimulateVsLive, SpreadAndAffinityPlacementsMatchTheDaemon) {
  useProfile("sim-spread", "sim-spread");
  const std::vector<std::array<const char*, 4>> nodes = {
      {"sb-a1", "zone-a", "3", "8Gi"},  {"sb-a2", "zone-a", "4", "20Gi"},
      {"sb-b1", "zone-b", "5", "16Gi"}, {"sb-b2", "zone-b", "7", "12Gi"},
      {"sb-c1", "zone-c", "3", "10Gi"}, {"sb-c2", "zone-c", "10", "24Gi"}};
  for (const auto& [name, zone, cpu, mem] : nodes) addNode(name, cpu, mem, {{kZone, zone}});
  auto labelled = [&](const std::string& name, const std::string& app, const std::string& cpu,
                      const std::string& mem) {
    auto p = pod(name, cpu, mem);
    p["metadata"]["labels"] = {{"app", app}};
    return p;
  };
  auto zoneTerm = [&](const std::string& zone) {
    return json{{"matchExpressions", {{{"key", kZone}, {"operator", "In"}, {"values", {zone}}}}}};
  };
  const std::vector<std::pair<const char*, const char*>> db = {
      {"1", "1Gi"}, {"1500m", "3Gi"}, {"700m", "1Gi"}};
  for (size_t i = 0; i < db.size(); ++i) {
    auto p = labelled("db-" + std::to_string(i + 1), "db", db[i].first, db[i].second);
    p["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = {
        {{"labelSelector", {{"matchLabels", {{"app", "db"}}}}},
         {"topologyKey", "kubernetes.io/hostname"}}};
    create(p);
  }
  // Named to come after the db pods: it needs one in its zone.
  auto cache = labelled("db-cache", "cache", "1", "1Gi");
  cache["spec"]["affinity"] = {
      {"podAffinity",
       {{"requiredDuringSchedulingIgnoredDuringExecution",
         {{{"labelSelector", {{"matchLabels", {{"app", "db"}}}}}, {"topologyKey", kZone}}}}}},
      {"nodeAffinity",
       {{"preferredDuringSchedulingIgnoredDuringExecution",
         {{{"weight", 50}, {"preference", zoneTerm("zone-b")}}}}}}};
  create(cache);
  for (int i = 1; i <= 6; ++i) {
    auto p = labelled("web-" + std::to_string(i), "web", "500m", "512Mi");
    p["spec"]["topologySpreadConstraints"] = {
        {{"maxSkew", 1},
         {"topologyKey", kZone},
         {"whenUnsatisfiable", "DoNotSchedule"},
         {"labelSelector", {{"matchLabels", {{"app", "web"}}}}}}};
    create(p);
  }
  for (const std::string name : {"zc-1", "zc-2", "zx-1"}) {
    auto p = labelled(name, name.substr(0, 2), name == "zx-1" ? "100m" : "2",
                      name == "zx-1" ? "64Mi" : "2Gi");
    p["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = {
        {"nodeSelectorTerms", {zoneTerm(name == "zx-1" ? "zone-x" : "zone-c")}}};
    create(p);
  }
  const auto predicted = predictedPods(simulate(), ns_);
  ASSERT_EQ(predicted.size(), size_t{13});
  EXPECT_EQ(predicted.at("zx-1").node, "");

  startLive();
  expectSame(predicted, settledLive(predicted), /*sameMessage=*/true);
}

// Two high-priority pods that fit only by evicting: the first takes the node of the
// lowest-priority victim, the second the other one; a third finds nothing it may evict. The first
// victim goes at once (terminationGracePeriodSeconds 0) and its preemptor binds; the second has a
// long grace period and, with no kubelet here, stays Terminating: its preemptor stays nominated
// for the node the simulation placed it on (where the victim's deletion lets it go).
TEST_F(SimulateVsLive, PreemptionEvictsThePredictedVictimsForThePredictedPreemptors) {
  auto& admin = TestCluster::get().admin();
  ensurePriorityClass(admin, "sim-low", 100);
  ensurePriorityClass(admin, "sim-mid", 200);
  ensurePriorityClass(admin, "sim-high", 1000);
  useProfile("sim-preempt", "sim-preempt");
  addNode("sc-a", "4", "8Gi");
  addNode("sc-b", "4", "16Gi");
  addNode("sc-c", "4", "12Gi");
  auto prio = [&](const std::string& name, const std::string& mem, const std::string& cls,
                  const std::string& node) {
    auto p = pod(name, "3", mem);
    p["spec"]["priorityClassName"] = cls;
    if (!node.empty()) p["spec"]["nodeName"] = node;
    return p;
  };
  create(prio("victim-a", "64Mi", "sim-low", "sc-a"));
  auto graceful = prio("victim-b", "64Mi", "sim-mid", "sc-b");
  graceful["spec"]["terminationGracePeriodSeconds"] = 3600;
  create(graceful);
  create(prio("keep-c", "64Mi", "sim-high", "sc-c"));
  for (const std::string name : {"vip-1", "vip-2", "vip-3"})
    create(prio(name, "1Gi", "sim-high", ""));

  const json doc = simulate();
  const auto predicted = predictedPods(doc, ns_);
  ASSERT_EQ(predicted.size(), size_t{3});
  // victim -> (node, preemptor)
  std::map<std::string, std::pair<std::string, std::string>> predictedVictims;
  for (const auto& v : doc.at("victims")) {
    predictedVictims[v.at("name")] = {v.at("node"), v.at("preemptor")};
  }
  ASSERT_EQ(predictedVictims.size(), size_t{2}) << doc.at("victims").dump();

  startLive();
  const auto live = settledLive(predicted, /*nominatedCounts=*/true);
  expectSame(predicted, live, /*sameMessage=*/false, /*nominatedCounts=*/true);
  // Its victim is gone: bound once its backoff ends.
  EXPECT_TRUE(eventually(
      [&] { return livePods(admin, ns_)["vip-1"].node == predicted.at("vip-1").node; }, 15s));
  EXPECT_EQ(live.at("vip-2").node, "") << "its victim is still terminating";
  std::map<std::string, std::string> nameOfUid;
  for (const auto& [name, p] : live) nameOfUid[p.uid] = name;
  // The victims are the pods gone; each Preempted event names its preemptor and node.
  std::map<std::string, std::vector<std::string>> preempted;
  EXPECT_TRUE(eventually([&] {
    preempted = eventsByPod(admin, ns_, "Preempted");
    return preempted.size() >= predictedVictims.size();
  }));
  std::map<std::string, std::pair<std::string, std::string>> liveVictims;
  for (const auto& [victim, notes] : preempted) {
    // "Preempted by pod <uid> on node <node>"
    std::istringstream words(notes.front());
    std::string w1, w2, w3, uid, w5, w6, node;
    words >> w1 >> w2 >> w3 >> uid >> w5 >> w6 >> node;
    liveVictims[victim] = {node, ns_ + "/" + nameOfUid[uid]};
  }
  EXPECT_EQ(predictedVictims, liveVictims);
  // Gone or terminating: the pods the simulation evicted, no other.
  for (const std::string name : {"victim-a", "victim-b", "keep-c"}) {
    const bool evicted = !live.contains(name) || live.at(name).terminating;
    EXPECT_EQ(evicted, predictedVictims.contains(name)) << name;
  }
}

// Coscheduling: a PodGroup of minMember 4 with 5 pods of assorted sizes is placed whole, each
// pod where the daemon binds it; a group short of members places nothing in either.
TEST_F(SimulateVsLive, GangIsPlacedWholeOnTheNodesTheDaemonBindsItTo) {
  auto& admin = TestCluster::get().admin();
  installPodGroupCrd(admin);
  useProfile("sim-gang", "sim-gang", kCoschedulingProfile);
  const std::string groups = "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/" + ns_ + "/podgroups";
  for (const auto& pg : admin.list(groups).items) {
    admin.del(groups + "/" + pg["metadata"]["name"].get<std::string>());
  }
  for (const auto& [name, min] :
       std::vector<std::pair<std::string, int>>{{"train", 4}, {"short", 3}}) {
    admin.post(groups, {{"apiVersion", "scheduling.x-k8s.io/v1alpha1"},
                        {"kind", "PodGroup"},
                        {"metadata", {{"name", name}, {"namespace", ns_}}},
                        {"spec", {{"minMember", min}}}});
  }
  addNode("sd-1", "2", "4Gi");
  addNode("sd-2", "3", "12Gi");
  addNode("sd-3", "4", "6Gi");
  addNode("sd-4", "6", "8Gi");
  const std::vector<std::array<const char*, 4>> pods = {
      {"short-0", "short", "1", "1Gi"},     {"short-1", "short", "1", "1Gi"},
      {"train-0", "train", "1", "1Gi"},     {"train-1", "train", "1500m", "2Gi"},
      {"train-2", "train", "2", "1Gi"},     {"train-3", "train", "1", "3Gi"},
      {"train-4", "train", "500m", "512Mi"}};
  for (const auto& [name, group, cpu, mem] : pods) {
    auto p = pod(name, cpu, mem);
    p["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] = group;
    create(p);
  }
  const auto predicted = predictedPods(simulate(), ns_);
  ASSERT_EQ(predicted.size(), pods.size());
  for (const auto& [name, p] : predicted) {
    EXPECT_EQ(p.node.empty(), name.starts_with("short-")) << name << ": " << p.reason;
  }

  startLive();
  expectSame(predicted, settledLive(predicted), /*sameMessage=*/true);
}

// kubectl drain as a what-if: the drained node's pods go where there is room, and the one that
// has none says what is short; the real cluster is left as it was.
TEST_F(SimulateVsLive, DrainPlacesTheDrainedPodsOrSaysWhatIsShort) {
  useProfile("sim-drain", "sim-drain");
  addNode("dr-a", "4", "8Gi");
  addNode("dr-b", "4", "8Gi");
  addNode("dr-c", "3", "8Gi");
  auto bound = [&](const std::string& name, const std::string& cpu, const std::string& node) {
    auto p = pod(name, cpu, "256Mi");
    p["spec"]["nodeName"] = node;
    create(p);
  };
  bound("a-small", "500m", "dr-a");
  bound("a-medium", "1", "dr-a");
  bound("a-big", "2500m", "dr-a");
  bound("b-used", "2", "dr-b");
  bound("c-used", "1", "dr-c");

  const json doc = simulate({"--drain", "dr-a"});
  std::map<std::string, json> drained;
  for (const auto& p : doc.at("pods")) {
    if (p.at("origin") == "drained") drained[p.at("name")] = p;
  }
  ASSERT_EQ(drained.size(), size_t{3}) << doc.at("pods").dump(2);
  for (const std::string name : {"a-small", "a-medium"}) {
    ASSERT_TRUE(drained[name].at("node").is_string()) << drained[name].dump();
    EXPECT_NE(drained[name].at("node"), "dr-a") << name;
  }
  // 2 cpu free on dr-b, 2 on dr-c, then less: 2500m fits nowhere.
  EXPECT_TRUE(drained["a-big"].at("node").is_null()) << drained["a-big"].dump();
  const std::string reason = drained["a-big"].at("reason");
  EXPECT_NE(reason.find("1 node(s) were unschedulable"), std::string::npos) << reason;
  EXPECT_NE(reason.find("2 Insufficient cpu"), std::string::npos) << reason;
  EXPECT_TRUE(doc.at("victims").empty());

  auto& admin = TestCluster::get().admin();
  for (const auto& [name, p] : livePods(admin, ns_)) {
    if (name.starts_with("a-")) {
      EXPECT_EQ(p.node, "dr-a") << name;
    }
  }
  EXPECT_FALSE(admin.get("/api/v1/nodes/dr-a")["spec"].value("unschedulable", false));
}

}  // namespace
}  // namespace ksched::testing
