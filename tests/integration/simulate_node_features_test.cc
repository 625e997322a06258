// ksched simulate over objects shaped as a 1.37 apiserver sends them, for what such a cluster
// has and a v1.20 apiserver would drop: node.status.declaredFeatures and the pod fields a
// required feature is inferred from (NodeDeclaredFeatures), tolerations with the Gt/Lt operators
// against numeric taints (TaintTolerationComparisonOperators). The whole path: the file decoder, the default profile, the
// queue, the plugins, the FailedScheduling text and the diagnosis. No apiserver is involved.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "simulate_dir.h"

namespace ksched::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

class SimulateNodeFeatures : public SimulateDir {
 protected:
  json run(const std::string& cluster, const std::vector<std::string>& extra = {}) const {
    return simulateJson(cluster, extra);
  }
};

// A node as a 1.37 kubelet registers it: `spec` is its whole spec section ("" for none),
// `declared` its status.declaredFeatures lines ("" for a kubelet that declares none).
std::string node(const std::string& name, const std::string& cpu, const std::string& spec,
                 const std::string& declared) {
  return "apiVersion: v1\nkind: Node\nmetadata:\n  name: " + name +
         "\n  labels:\n    kubernetes.io/hostname: " + name + "\n    kubernetes.io/os: linux\n" +
         spec + "status:\n  allocatable:\n    cpu: \"" + cpu +
         "\"\n    memory: 16Gi\n    pods: \"110\"\n  capacity:\n    cpu: \"" + cpu +
         "\"\n    memory: 16Gi\n    pods: \"110\"\n" + declared +
         "  nodeInfo:\n    kubeletVersion: v1.37.0\n"
         "  conditions:\n  - type: Ready\n    status: \"True\"\n";
}

// A pending pod with one container asking for 1 cpu; `spec`, `container` and `resources` are
// added YAML (indented for the spec, the container's fields and its resources' fields).
std::string pod(const std::string& name, const std::string& spec = "",
                const std::string& container = "", const std::string& resources = "") {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
         "\n  namespace: ml\n  uid: " + name + "-uid\nspec:\n" + spec +
         "  containers:\n  - name: main\n    image: registry.example/app:1\n" + container +
         "    resources:\n" + resources +
         "      requests:\n        cpu: \"1\"\n        memory: 64Mi\n"
         "status:\n  phase: Pending\n";
}

std::map<std::string, json> byName(const json& doc) {
  std::map<std::string, json> out;
  for (const auto& p : doc.at("pods")) out[p.at("name")] = p;
  return out;
}

// The details the diagnosis gives for `node` under `plugin`'s reason ("" when none).
std::string detail(const json& pod, const std::string& plugin, const std::string& node) {
  const json& d = pod.at("diagnosis");
  if (!d.is_object()) return "";
  for (const auto& r : d.at("reasons")) {
    if (r.at("plugin") != plugin || !r.contains("details")) continue;
    if (r.at("details").contains(node)) return r.at("details").at(node);
  }
  return "";
}

// KEP 5328: a pod that needs a declared feature lands only on a node declaring it; a node of an
// older kubelet (no declaredFeatures) takes only pods that need nothing, though it is the
// emptiest; a pod needing a feature no node declares stays pending with upstream's reason and
// the feature named.
TEST_F(SimulateNodeFeatures, PodsNeedingAFeatureLandOnlyOnNodesDeclaringIt) {
  const std::string declaresBoth =
      "  declaredFeatures:\n  - InPlacePodLevelResourcesVerticalScaling\n"
      "  - RestartAllContainersOnContainerExits\n  - UserNamespacesHostNetworkSupport\n";
  const std::string declaresRestart =
      "  declaredFeatures:\n  - RestartAllContainersOnContainerExits\n";
  const std::string restartAll =
      "    restartPolicy: Never\n    restartPolicyRules:\n    - action: RestartAllContainers\n"
      "      exitCodes:\n        operator: In\n        values: [42]\n";
  const std::string cluster = file(
      "cluster.yaml",
      node("old-kubelet", "32", "", "") + "---\n" + node("new-kubelet", "8", "", declaresBoth) +
          "---\n" + node("restart-only", "4", "", declaresRestart) + "---\n" + pod("plain") +
          "---\n" + pod("restarter", "", restartAll) + "---\n" +
          pod("host-userns", "  hostNetwork: true\n  hostUsers: false\n") + "---\n" +
          pod("bind-mounts", "  volumes:\n  - name: data\n    emptyDir: {}\n",
              "    volumeMounts:\n    - name: data\n      mountPath: /data\n"
              "      bindMountOptions: [noexec, nosuid]\n"));
  const json doc = run(cluster);
  ASSERT_TRUE(doc.is_object());
  const auto pods = byName(doc);
  EXPECT_EQ(pods.at("plain").at("node"), "old-kubelet") << doc.at("pods").dump(2);
  EXPECT_EQ(pods.at("restarter").at("node"), "new-kubelet") << doc.at("pods").dump(2);
  EXPECT_EQ(pods.at("host-userns").at("node"), "new-kubelet") << doc.at("pods").dump(2);

  const json& pending = pods.at("bind-mounts");
  EXPECT_TRUE(pending.at("node").is_null()) << pending.dump(2);
  EXPECT_THAT(pending.at("reason").get<std::string>(),
              HasSubstr("0/3 nodes are available: 3 node(s) didn't match Pod's required features"));
  EXPECT_EQ(detail(pending, "NodeDeclaredFeatures", "old-kubelet"),
            "node does not declare VolumeBindMountOptions (the pod has bindMountOptions on a "
            "volume mount); the node declares no features (a kubelet older than 1.35?)")
      << pending.dump(2);
  EXPECT_EQ(detail(pending, "NodeDeclaredFeatures", "new-kubelet"),
            "node does not declare VolumeBindMountOptions (the pod has bindMountOptions on a "
            "volume mount)")
      << pending.dump(2);
}

// The gate is GA and locked on: simulate refuses to switch it off, as the scheduler does.
TEST_F(SimulateNodeFeatures, NodeDeclaredFeaturesCannotBeSwitchedOff) {
  const std::string cluster = file("cluster.yaml", node("n1", "4", "", "") + "---\n" + pod("p"));
  const CliOutcome r = simulate({"-f", cluster, "--feature-gates", "NodeDeclaredFeatures=false"});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_THAT(r.err, HasSubstr("cannot set feature gate NodeDeclaredFeatures to false, feature is "
                               "locked to true"));
}

// KEP 5471's example: nodes tainted node.kubernetes.io/sla with their SLA in tenths of a percent
// (spot 800, on-demand 950, premium 999, and one labelled "high" by mistake). With
// TaintTolerationComparisonOperators on, the critical workload's "sla Gt 950" admits only the
// premium node and the batch job's "sla Lt 900" only the spot node. With the gate off (alpha,
// off by default) Gt and Lt tolerate nothing: both pods stay pending and the diagnosis names the
// untolerated taint and the gate.
TEST_F(SimulateNodeFeatures, ComparisonTolerationsPickTheNodeByTheTaintsValue) {
  const std::string sla = "node.kubernetes.io/sla";
  auto tainted = [&sla](const std::string& name, const std::string& cpu, const std::string& v) {
    return node(name, cpu,
                "spec:\n  taints:\n  - key: " + sla + "\n    value: \"" + v +
                    "\"\n    effect: NoSchedule\n",
                "");
  };
  auto tolerating = [&sla](const std::string& name, const std::string& op, const std::string& v) {
    return pod(name, "  tolerations:\n  - key: " + sla + "\n    operator: " + op +
                         "\n    value: \"" + v + "\"\n    effect: NoSchedule\n");
  };
  const std::string cluster =
      file("cluster.yaml", tainted("spot-node-1", "32", "800") + "---\n" +
                               tainted("ondemand-node-1", "16", "950") + "---\n" +
                               tainted("premium-node-1", "4", "999") + "---\n" +
                               tainted("unrated-node-1", "64", "high") + "---\n" +
                               tolerating("critical-workload", "Gt", "950") + "---\n" +
                               tolerating("batch-job", "Lt", "900"));

  const json on = run(cluster, {"--feature-gates", "TaintTolerationComparisonOperators=true"});
  ASSERT_TRUE(on.is_object());
  auto pods = byName(on);
  EXPECT_EQ(pods.at("critical-workload").at("node"), "premium-node-1") << on.at("pods").dump(2);
  EXPECT_EQ(pods.at("batch-job").at("node"), "spot-node-1") << on.at("pods").dump(2);

  const json off = run(cluster);
  ASSERT_TRUE(off.is_object());
  pods = byName(off);
  const json& critical = pods.at("critical-workload");
  EXPECT_TRUE(critical.at("node").is_null()) << critical.dump(2);
  EXPECT_THAT(critical.at("reason").get<std::string>(),
              HasSubstr("0/4 nodes are available: 4 node(s) had untolerated taint(s)"));
  EXPECT_EQ(detail(critical, "TaintToleration", "premium-node-1"),
            "taint " + sla +
                "=999:NoSchedule not tolerated (toleration operator Gt needs the "
                "TaintTolerationComparisonOperators feature gate)")
      << critical.dump(2);
  EXPECT_TRUE(pods.at("batch-job").at("node").is_null());
  EXPECT_EQ(detail(pods.at("batch-job"), "TaintToleration", "spot-node-1"),
            "taint " + sla +
                "=800:NoSchedule not tolerated (toleration operator Lt needs the "
                "TaintTolerationComparisonOperators feature gate)");
}

// With the gate on, a taint value that is not an integer tolerates no Gt/Lt toleration, and
// the diagnosis says so.
TEST_F(SimulateNodeFeatures, NonIntegerTaintValueIsNamed) {
  const std::string cluster = file(
      "cluster.yaml", node("unrated-node-1", "8",
                           "spec:\n  taints:\n  - key: node.kubernetes.io/sla\n    value: high\n"
                           "    effect: NoSchedule\n",
                           "") +
                          "---\n" +
                          pod("critical-workload",
                              "  tolerations:\n  - key: node.kubernetes.io/sla\n"
                              "    operator: Gt\n    value: \"950\"\n"));
  const json doc = run(cluster, {"--feature-gates", "TaintTolerationComparisonOperators=true"});
  ASSERT_TRUE(doc.is_object());
  const auto pods = byName(doc);
  const json& p = pods.at("critical-workload");
  EXPECT_TRUE(p.at("node").is_null()) << p.dump(2);
  EXPECT_EQ(detail(p, "TaintToleration", "unrated-node-1"),
            "taint node.kubernetes.io/sla=high:NoSchedule not tolerated (toleration "
            "node.kubernetes.io/sla Gt 950 compares integers; the taint's value is not one)")
      << p.dump(2);
}

}  // namespace
}  // namespace ksched::testing
