// A legacy Policy against the real apiserver: the ConfigMap path, and a differential run against
// kube-scheduler v1.20.2 (built from the same source as the apiserver) given the same Policy
// file, on randomized small clusters.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cluster.h"
#include "daemon.h"
#include "scheduling.h"

namespace ksched::testing {
namespace {

using ::testing::HasSubstr;

// Scores v1.20 and ksched compute alike for these plugins: resources (least requested,
// balanced), node affinity preferences, PreferNoSchedule taints, image locality,
// NodePreferAvoidPods and a label preference (NodeLabel).
const char* kPolicy = R"({
  "kind": "Policy",
  "apiVersion": "v1",
  "predicates": [
    {"name": "GeneralPredicates"},
    {"name": "PodToleratesNodeTaints"},
    {"name": "CheckNodeUnschedulable"}
  ],
  "priorities": [
    {"name": "LeastRequestedPriority", "weight": 1},
    {"name": "BalancedResourceAllocation", "weight": 1},
    {"name": "NodeAffinityPriority", "weight": 1},
    {"name": "TaintTolerationPriority", "weight": 1},
    {"name": "ImageLocalityPriority", "weight": 1},
    {"name": "NodePreferAvoidPodsPriority", "weight": 10000},
    {"name": "ssd", "weight": 2, "argument": {"labelPreference": {"label": "disk-ssd", "presence": true}}}
  ]
})";

std::string writeFile(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
  return path;
}

std::string k8sBin() {
  std::string out = runCommand(std::string(KSCHED_SOURCE_DIR) + "/deploy/local/build-k8s.sh");
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out.substr(out.rfind('\n') + 1);
}

std::string nodeOf(RestClient& c, const std::string& ns, const std::string& name,
                   std::chrono::seconds within = 30s) {
  std::string node;
  eventually(
      [&] {
        node = c.get("/api/v1/namespaces/" + ns + "/pods/" + name)["spec"].value("nodeName", "");
        return !node.empty();
      },
      within);
  return node;
}

// One randomized cluster: nodes, the pods already on them, and the pod to place.
struct Trial {
  std::vector<nlohmann::json> nodes;
  std::vector<nlohmann::json> boundPods;
  nlohmann::json pod;  // without name and schedulerName
};

Trial randomTrial(std::mt19937& rng, int t) {
  auto pick = [&](auto const& v) {
    return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)];
  };
  auto chance = [&](double p) { return std::bernoulli_distribution(p)(rng); };
  const std::vector<int> cpus = {2, 4, 8, 16};
  const std::vector<int> memsGi = {4, 8, 16, 32};
  const std::vector<int> podMilli = {100, 250, 500, 1000, 1500, 2000};
  const std::vector<int> podMemMi = {128, 256, 512, 1024, 2048, 4096};
  Trial tr;
  const int n = std::uniform_int_distribution<int>(3, 6)(rng);
  // The pod's image is on one node at most: v1.20's cache counts the nodes having an image as of
  // each node's last update (so its ImageLocality score depends on the order nodes came), ksched
  // at scheduling time as current upstream does; with one node both count 1.
  const int64_t imageSize = std::uniform_int_distribution<int64_t>(50, 900)(rng) * 1024 * 1024;
  const int imageNode = chance(0.6) ? std::uniform_int_distribution<int>(0, n - 1)(rng) : -1;
  std::vector<std::pair<int64_t, int64_t>> free;  // milli cpu, MiB
  for (int i = 0; i < n; ++i) {
    const std::string name = "d" + std::to_string(t) + "-n" + std::to_string(i);
    const int cpu = pick(cpus);
    const int mem = pick(memsGi);
    nlohmann::json taints = nlohmann::json::array();
    if (chance(0.3))
      taints.push_back({{"key", "spot"}, {"value", "true"}, {"effect", "PreferNoSchedule"}});
    auto node = sizedNode(name, std::to_string(cpu), std::to_string(mem) + "Gi", taints);
    node["metadata"]["labels"]["zone"] = chance(0.5) ? "z0" : "z1";
    if (chance(0.4)) node["metadata"]["labels"]["disk-ssd"] = "true";
    if (i == imageNode) {
      node["status"]["images"] = {{{"names", {"example.com/app:v1"}}, {"sizeBytes", imageSize}}};
    }
    tr.nodes.push_back(node);
    free.emplace_back(cpu * 1000, mem * 1024);
  }
  const int bound = std::uniform_int_distribution<int>(0, 8)(rng);
  for (int i = 0; i < bound; ++i) {
    const size_t on = std::uniform_int_distribution<size_t>(0, tr.nodes.size() - 1)(rng);
    const int milli = pick(podMilli);
    const int mib = pick(podMemMi);
    if (free[on].first < milli || free[on].second < mib) continue;
    free[on].first -= milli;
    free[on].second -= mib;
    auto p = sizedPod("", "b" + std::to_string(i), std::to_string(milli) + "m",
                      std::to_string(mib) + "Mi");
    p["spec"]["nodeName"] = tr.nodes[on]["metadata"]["name"];
    tr.boundPods.push_back(p);
  }
  auto pod =
      sizedPod("", "", std::to_string(pick(podMilli)) + "m", std::to_string(pick(podMemMi)) + "Mi");
  pod["spec"]["containers"][0]["image"] = "example.com/app:v1";
  if (chance(0.3)) {
    pod["spec"]["tolerations"] = {{{"key", "spot"}, {"operator", "Exists"}}};
  }
  if (chance(0.5)) {
    pod["spec"]["affinity"]["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"] = {
        {{"weight", std::uniform_int_distribution<int>(1, 100)(rng)},
         {"preference",
          {{"matchExpressions",
            {{{"key", "zone"}, {"operator", "In"}, {"values", {chance(0.5) ? "z0" : "z1"}}}}}}}}};
  }
  tr.pod = pod;
  return tr;
}

class LegacyPolicyIntegration : public ::testing::Test {
 protected:
  void SetUp() override {
    TestCluster::get().up();
    deleteAllNodes(TestCluster::get().admin());
  }
  void TearDown() override {
    if (std::getenv("KSCHED_DIFF_TRIAL") == nullptr) deleteAllNodes(TestCluster::get().admin());
  }
};

// The reference document's ConfigMap example (its extender removed: nothing serves it) in
// kube-system, read with --policy-configmap; a pod is scheduled by the profile it makes.
TEST_F(LegacyPolicyIntegration, PolicyFromAConfigMapSchedules) {
  auto& admin = TestCluster::get().admin();
  ensureNamespace(admin, "legacy-cm");
  const std::string policy = R"({
    "kind" : "Policy", "apiVersion" : "v1",
    "predicates" : [{"name" : "PodFitsHostPorts"}, {"name" : "PodFitsResources"},
      {"name" : "NoDiskConflict"}, {"name" : "MatchNodeSelector"}, {"name" : "HostName"}],
    "priorities" : [{"name" : "LeastRequestedPriority", "weight" : 1},
      {"name" : "BalancedResourceAllocation", "weight" : 1},
      {"name" : "ServiceSpreadingPriority", "weight" : 1}, {"name" : "EqualPriority", "weight" : 1}],
    "hardPodAffinitySymmetricWeight" : 10
  })";
  try {
    admin.del("/api/v1/namespaces/kube-system/configmaps/my-scheduler-policy");
  } catch (const std::exception&) {
  }
  admin.post("/api/v1/namespaces/kube-system/configmaps",
             {{"apiVersion", "v1"},
              {"kind", "ConfigMap"},
              {"metadata", {{"name", "my-scheduler-policy"}, {"namespace", "kube-system"}}},
              {"data", {{"policy.cfg", policy}}}});
  admin.post("/api/v1/nodes", sizedNode("cm-small", "2", "4Gi"));
  admin.post("/api/v1/nodes", sizedNode("cm-big", "16", "64Gi"));
  const std::string dir = TestCluster::get().dir();
  // Reading a ConfigMap in kube-system takes more than system:kube-scheduler grants (v1.20
  // deployments granted it with the Policy): the admin identity here.
  Daemon d(dir + "/legacy-cm.log",
           {"--kubeconfig", TestCluster::get().kubeconfig("admin"), "--leader-elect=false",
            "--secure-port=0", "--policy-configmap", "my-scheduler-policy", "--scheduler-name",
            "my-kube-scheduler", "-v", "2"});
  ASSERT_TRUE(d.waitForLog("Converted from the Policy ConfigMap kube-system/my-scheduler-policy"))
      << d.log();
  auto pod = sizedPod("legacy-cm", "p", "1", "1Gi");
  pod["spec"]["schedulerName"] = "my-kube-scheduler";
  admin.post("/api/v1/namespaces/legacy-cm/pods", pod);
  // LeastRequested and BalancedAllocation both prefer the big, empty node.
  EXPECT_EQ(nodeOf(admin, "legacy-cm", "p"), "cm-big") << d.log();
  deleteAllPods(admin, "legacy-cm");

  // The ConfigMap without the key: a clear error, exit 1.
  admin.patch("/api/v1/namespaces/kube-system/configmaps/my-scheduler-policy",
              {{"data", {{"policy.cfg", nullptr}, {"other", "x"}}}});
  Daemon bad(dir + "/legacy-cm-bad.log",
             {"--kubeconfig", TestCluster::get().kubeconfig("admin"), "--leader-elect=false",
              "--secure-port=0", "--policy-configmap", "my-scheduler-policy"});
  EXPECT_EQ(bad.wait(), 1);
  EXPECT_THAT(bad.log(), HasSubstr("ConfigMap kube-system/my-scheduler-policy key policy.cfg: "
                                   "missing policy config map value at key \"policy.cfg\""));
  admin.del("/api/v1/namespaces/kube-system/configmaps/my-scheduler-policy");
}

// A v1beta1 file as a v1.20 cluster runs it: bin packing with v1beta1's
// NodeResourcesMostAllocated (args as v1beta1 wrote them) sends the pod to the fuller node.
TEST_F(LegacyPolicyIntegration, V1beta1ConfigSchedules) {
  auto& admin = TestCluster::get().admin();
  ensureNamespace(admin, "legacy-b1");
  const std::string dir = TestCluster::get().dir();
  const std::string config = writeFile(dir + "/v1beta1.yaml", R"(
apiVersion: kubescheduler.config.k8s.io/v1beta1
kind: KubeSchedulerConfiguration
healthzBindAddress: 0.0.0.0:10251
leaderElection:
  leaderElect: false
clientConnection:
  kubeconfig: )" + TestCluster::get().kubeconfig("scheduler") + R"(
profiles:
- schedulerName: packer
  plugins:
    score:
      disabled:
      - name: NodeResourcesLeastAllocated
      - name: NodeResourcesBalancedAllocation
      enabled:
      - name: NodeResourcesMostAllocated
        weight: 5
  pluginConfig:
  - name: NodeResourcesMostAllocated
    args:
      apiVersion: kubescheduler.config.k8s.io/v1beta1
      kind: NodeResourcesMostAllocatedArgs
      resources:
      - name: cpu
        weight: 1
)");
  admin.post("/api/v1/nodes", sizedNode("b1-empty", "8", "32Gi"));
  admin.post("/api/v1/nodes", sizedNode("b1-busy", "8", "32Gi"));
  auto busy = sizedPod("legacy-b1", "busy", "4", "1Gi");
  busy["spec"]["nodeName"] = "b1-busy";
  admin.post("/api/v1/namespaces/legacy-b1/pods", busy);
  Daemon d(dir + "/legacy-b1.log", {"--config", config, "--secure-port=0"});
  ASSERT_TRUE(d.waitForLog("Converted from kubescheduler.config.k8s.io/v1beta1")) << d.log();
  EXPECT_TRUE(d.logHas("healthzBindAddress/metricsBindAddress are not in v1")) << d.log();
  std::this_thread::sleep_for(500ms);
  auto pod = sizedPod("legacy-b1", "p", "1", "1Gi");
  pod["spec"]["schedulerName"] = "packer";
  admin.post("/api/v1/namespaces/legacy-b1/pods", pod);
  EXPECT_EQ(nodeOf(admin, "legacy-b1", "p"), "b1-busy") << d.log();
  deleteAllPods(admin, "legacy-b1");
}

// kube-scheduler v1.20.2 and ksched, the same Policy file, one randomized cluster at a time:
// v1.20.2 places the pod first (its -v=10 log gives every node's total score), the pod is
// deleted, and the same pod goes to ksched. Where v1.20.2's best node is unique, ksched must
// pick it.
TEST_F(LegacyPolicyIntegration, SameNodeAsKubeSchedulerV120) {
  auto& admin = TestCluster::get().admin();
  const std::string dir = TestCluster::get().dir();
  const std::string policy = writeFile(dir + "/differential-policy.json", kPolicy);
  const char* only = std::getenv("KSCHED_DIFF_TRIAL");
  Daemon v120(dir + "/differential-kube-scheduler.log",
              {"--kubeconfig", TestCluster::get().kubeconfig("scheduler"), "--leader-elect=false",
               "--port=0", "--secure-port=0", "--policy-config-file", policy,
               "--use-legacy-policy-config", "--scheduler-name", "v120", "-v=10"},
              k8sBin() + "/kube-scheduler");
  Daemon ours(dir + "/differential-ksched.log",
              {"--kubeconfig", TestCluster::get().kubeconfig("scheduler"), "--leader-elect=false",
               "--secure-port=0", "--policy-config-file", policy, "--scheduler-name",
               "ksched-legacy", "-v", only != nullptr ? "6" : "0"});
  ASSERT_TRUE(ours.waitForLog("Converted from the Policy")) << ours.log();

  const int trials = std::getenv("KSCHED_DIFF_TRIALS") != nullptr
                         ? std::atoi(std::getenv("KSCHED_DIFF_TRIALS"))
                         : 30;
  int unique = 0;
  int agreed = 0;
  std::vector<std::string> disagreements;
  std::mt19937 rng(20201);
  const std::regex scoreLine(R"(Host (\S+) => Score (-?\d+))");
  // KSCHED_DIFF_TRIAL=N runs trial N alone (to read both logs about it).
  for (int t = 0; t < trials; ++t) {
    const std::string ns = "diff-" + std::to_string(t);
    Trial tr = randomTrial(rng, t);
    if (only != nullptr && std::atoi(only) != t) continue;
    ensureNamespace(admin, ns);
    for (const auto& n : tr.nodes) admin.post("/api/v1/nodes", n);
    for (auto p : tr.boundPods) {
      p["metadata"]["namespace"] = ns;
      admin.post("/api/v1/namespaces/" + ns + "/pods", p);
    }
    std::this_thread::sleep_for(500ms);  // both caches see the cluster

    const size_t logStart = v120.log().size();
    auto a = tr.pod;
    a["metadata"]["namespace"] = ns;
    a["metadata"]["name"] = "a";
    a["spec"]["schedulerName"] = "v120";
    admin.post("/api/v1/namespaces/" + ns + "/pods", a);
    const std::string nodeA = nodeOf(admin, ns, "a");
    ASSERT_FALSE(nodeA.empty()) << v120.log().substr(logStart);
    std::map<std::string, int64_t> scores;
    const std::string log = v120.log().substr(logStart);
    for (std::sregex_iterator it(log.begin(), log.end(), scoreLine), end; it != end; ++it) {
      scores[(*it)[1]] = std::stoll((*it)[2]);
    }
    int64_t best = -1;
    int atBest = 0;
    for (const auto& [node, s] : scores) {
      if (s > best) {
        best = s;
        atBest = 1;
      } else if (s == best) {
        ++atBest;
      }
    }
    admin.del("/api/v1/namespaces/" + ns + "/pods/a", {{"gracePeriodSeconds", 0}});
    eventually([&] { return listPods(admin, ns).size() == tr.boundPods.size(); });
    std::this_thread::sleep_for(300ms);

    auto b = tr.pod;
    b["metadata"]["namespace"] = ns;
    b["metadata"]["name"] = "b";
    b["spec"]["schedulerName"] = "ksched-legacy";
    admin.post("/api/v1/namespaces/" + ns + "/pods", b);
    const std::string nodeB = nodeOf(admin, ns, "b");
    ASSERT_FALSE(nodeB.empty()) << ours.log();
    // A single feasible node scores nothing in v1.20 (no "Host =>" lines); it is unique.
    const bool isUnique = scores.empty() || atBest == 1;
    if (isUnique) {
      ++unique;
      if (nodeA == nodeB) {
        ++agreed;
      } else {
        std::ostringstream why;
        why << "trial " << t << ": v1.20.2 " << nodeA << ", ksched " << nodeB << "; v1.20.2 scores";
        for (const auto& [node, s] : scores) why << " " << node << "=" << s;
        disagreements.push_back(why.str());
      }
    }
    if (only != nullptr) return;  // left for `ksched explain`
    deleteAllPods(admin, ns);
    deleteAllNodes(admin);
  }
  std::printf(
      "differential: %d trials, %d with a unique best node in v1.20.2, ksched agreed on "
      "%d (%.0f%%)\n",
      trials, unique, agreed, unique == 0 ? 0.0 : 100.0 * agreed / unique);
  if (only != nullptr) return;
  EXPECT_GE(unique, trials / 2);
  EXPECT_EQ(agreed, unique) << ::testing::PrintToString(disagreements);
}

}  // namespace
}  // namespace ksched::testing
