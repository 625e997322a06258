// ksched simulate over pods as a 1.37 kubelet reports an in-place resize it deferred (the
// PodResizePending condition with reason Deferred, the containers' allocated and actual
// resources), which a v1.20 apiserver would drop: scheduler preemption for in-place resize
// (KEP 5836, InPlacePodVerticalScalingSchedulerPreemption), upstream's integration table. The
// whole path: the file decoder, the feed queueing the assigned pod, the default profile with
// DeferredPodScheduling, the filters skipped, NodeResourcesFit's over-allocation check,
// DefaultPreemption on the pod's node only, and the pod parked afterwards. No apiserver is
// involved.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "simulate_dir.h"

namespace ksched::testing {
namespace {

using nlohmann::json;

const std::vector<std::string> kGate = {"--feature-gates",
                                        "InPlacePodVerticalScalingSchedulerPreemption=true"};

std::string node(const std::string& name, const std::string& cpu, const std::string& spec = "") {
  return "apiVersion: v1\nkind: Node\nmetadata:\n  name: " + name +
         "\n  labels:\n    kubernetes.io/hostname: " + name + "\n" + spec +
         "status:\n  allocatable:\n    cpu: " + cpu +
         "\n    memory: 4Gi\n    pods: \"110\"\n  capacity:\n    cpu: " + cpu +
         "\n    memory: 4Gi\n    pods: \"110\"\n"
         "  conditions:\n  - type: Ready\n    status: \"True\"\n";
}

// A running pod on `nodeName` asking for `cpu`; `spec` is more of its spec (indented).
std::string running(const std::string& name, const std::string& nodeName, const std::string& cpu,
                    int priority, const std::string& spec = "") {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
         "\n  namespace: app\n  uid: " + name + "-uid\nspec:\n  nodeName: " + nodeName +
         "\n  priority: " + std::to_string(priority) + "\n" + spec +
         "  containers:\n  - name: main\n    image: registry.example/app:1\n"
         "    resources:\n      requests:\n        cpu: " +
         cpu + "\n        memory: 64Mi\nstatus:\n  phase: Running\n";
}

// The pod whose resize to `desired` cpu the kubelet deferred: it runs with 100m allocated.
std::string grower(const std::string& nodeName, const std::string& desired,
                   const std::string& spec = "", const std::string& container = "") {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: grower\n  namespace: app\n"
         "  uid: grower-uid\nspec:\n  nodeName: " +
         nodeName + "\n  priority: 1000\n" + spec +
         "  containers:\n  - name: main\n    image: registry.example/app:1\n" + container +
         "    resources:\n      requests:\n        cpu: " + desired +
         "\n        memory: 64Mi\n"
         "status:\n  phase: Running\n"
         "  conditions:\n  - type: PodScheduled\n    status: \"True\"\n"
         "  - type: PodResizePending\n    status: \"True\"\n    reason: Deferred\n"
         "    message: 'Node didn''t have enough capacity: cpu, requested: 300, capacity: 300'\n"
         "  containerStatuses:\n  - name: main\n    ready: true\n    restartCount: 0\n"
         "    image: registry.example/app:1\n    imageID: \"\"\n"
         "    allocatedResources:\n      cpu: 100m\n      memory: 64Mi\n"
         "    resources:\n      requests:\n        cpu: 100m\n        memory: 64Mi\n";
}

class SimulateResize : public SimulateDir {
 protected:
  // victim -> (node, preemptor)
  std::map<std::string, std::pair<std::string, std::string>> victims(
      const std::vector<std::string>& objects, const std::vector<std::string>& extra = kGate) {
    std::string all;
    for (const auto& o : objects) all += "---\n" + o;
    const json doc = simulateJson(file("cluster.yaml", all), extra);
    std::map<std::string, std::pair<std::string, std::string>> out;
    if (!doc.is_object()) return out;
    for (const auto& v : doc.at("victims")) {
      out[v.at("name").get<std::string>()] = {v.at("node"), v.at("preemptor")};
    }
    return out;
  }
};

using Victims = std::map<std::string, std::pair<std::string, std::string>>;

// The node has 300m; the grower counts at its desired 300m, the victim 200m: over-allocated.
// The lower-priority pod on its node goes, and nothing on the other node, though that pod is
// as low and as large. The grower's own host port and the node's taint it does not tolerate are
// not held against it: the filters that check what the pod already has on its node are skipped.
TEST_F(SimulateResize, PreemptsASingleLowPriorityPodOnItsNode) {
  const std::string hostPort = "    ports:\n    - containerPort: 80\n      hostPort: 8080\n";
  const std::string tainted =
      "spec:\n  taints:\n  - key: maintenance\n    value: soon\n    effect: NoSchedule\n";
  EXPECT_EQ(
      victims({node("n1", "300m", tainted), node("n2", "300m"), grower("n1", "300m", "", hostPort),
               running("victim-1", "n1", "200m", 0), running("other", "n2", "200m", 0)}),
      (Victims{{"victim-1", {"n1", "app/grower"}}}));
}

TEST_F(SimulateResize, PreemptsMultipleVictimsWhenOneIsNotEnough) {
  EXPECT_EQ(victims({node("n1", "300m"), grower("n1", "300m"), running("victim-1", "n1", "100m", 0),
                     running("victim-2", "n1", "100m", 10)}),
            (Victims{{"victim-1", {"n1", "app/grower"}}, {"victim-2", {"n1", "app/grower"}}}));
}

TEST_F(SimulateResize, EvictsNothingWhenThePodMayNotPreempt) {
  EXPECT_EQ(victims({node("n1", "300m"), grower("n1", "300m", "  preemptionPolicy: Never\n"),
                     running("victim-1", "n1", "200m", 0)}),
            Victims{});
}

// The resize fits: the pod parks (Permit) and waits for the kubelet; nobody is evicted.
TEST_F(SimulateResize, EvictsNothingWhenTheResizeFits) {
  EXPECT_EQ(
      victims({node("n1", "600m"), grower("n1", "300m"), running("victim-1", "n1", "200m", 0)}),
      Victims{});
}

TEST_F(SimulateResize, EvictsNothingOnANodeThatDisablesResizePreemption) {
  const std::string disabled =
      "spec:\n  podPreemptionPolicy:\n    disableResizePreemption:\n    - example.com/batch\n";
  EXPECT_EQ(victims({node("n1", "300m", disabled), grower("n1", "300m"),
                     running("victim-1", "n1", "200m", 0)}),
            Victims{});
}

TEST_F(SimulateResize, EvictsNothingWithTheGateOff) {
  EXPECT_EQ(
      victims({node("n1", "300m"), grower("n1", "300m"), running("victim-1", "n1", "200m", 0)}, {}),
      Victims{});
}

// Priority decides: a victim of the grower's own priority stays.
TEST_F(SimulateResize, EvictsNoPodOfTheSamePriority) {
  EXPECT_EQ(
      victims({node("n1", "300m"), grower("n1", "300m"), running("peer", "n1", "200m", 1000)}),
      Victims{});
}

// The example docs/plugins.md shows: node-a's batch-1 goes; node-b disables resize preemption,
// so its batch-2 stays though grower-b waits for room there too.
TEST_F(SimulateResize, TheDocumentedExample) {
  const json doc =
      simulateJson(std::string(KSCHED_SOURCE_DIR) + "/docs/examples/resize/deferred.yaml", kGate);
  ASSERT_TRUE(doc.is_object());
  ASSERT_EQ(doc.at("victims").size(), size_t{1}) << doc.at("victims").dump();
  EXPECT_EQ(doc.at("victims")[0].at("name"), "batch-1");
  EXPECT_EQ(doc.at("victims")[0].at("node"), "node-a");
  EXPECT_EQ(doc.at("victims")[0].at("preemptor"), "app/grower");
}

}  // namespace
}  // namespace ksched::testing
