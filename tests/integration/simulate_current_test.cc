// ksched simulate over objects as a 1.34+ apiserver sends them: pod-level requests
// (spec.resources, KEP 2837) and in-place resize status (status.containerStatuses[]
// .allocatedResources / .resources, the PodResizePending condition, KEP 1287). The v1.20
// apiserver of the other integration tests drops these fields, so the whole path is tested
// here, through files. No apiserver is involved.
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

class SimulateCurrent : public SimulateDir {
 protected:
  // `ksched simulate -f cluster -o json [extra...]`: the pods by name (none when it failed).
  std::map<std::string, json> placements(const std::string& cluster,
                                         const std::vector<std::string>& extra = {}) const {
    std::map<std::string, json> pods;
    const json doc = simulateJson(cluster, extra);
    if (doc.is_discarded()) return pods;
    EXPECT_TRUE(doc.at("skipped").empty()) << doc.at("skipped").dump(2);
    for (const auto& p : doc.at("pods")) pods[p.at("name")] = p;
    return pods;
  }
};

std::string node(const std::string& name, const std::string& cpu) {
  return R"(apiVersion: v1
kind: Node
metadata:
  name: )" +
         name +
         R"(
  labels:
    kubernetes.io/hostname: )" +
         name + R"(
status:
  capacity: {cpu: ")" +
         cpu + R"(", memory: 32Gi, pods: "110"}
  allocatable: {cpu: ")" +
         cpu + R"(", memory: 32Gi, pods: "110"}
---
)";
}

// A pending pod with pod-level requests (cpu `podCpu`) and two containers of 500m each.
std::string podLevelPod(const std::string& name, const std::string& podCpu) {
  return R"(apiVersion: v1
kind: Pod
metadata:
  name: )" +
         name +
         R"(
  namespace: shop
  uid: )" +
         name +
         R"(-uid
spec:
  schedulerName: default-scheduler
  resources:
    requests: {cpu: ")" +
         podCpu + R"(", memory: 1Gi}
    limits: {cpu: ")" +
         podCpu + R"(", memory: 1Gi}
  containers:
  - name: app
    image: app
    resources:
      requests: {cpu: 500m, memory: 256Mi}
  - name: sidecar-proxy
    image: proxy
    resources:
      requests: {cpu: 500m, memory: 128Mi}
status:
  phase: Pending
  qosClass: Burstable
---
)";
}

// A running pod on `nodeName` with spec cpu `specCpu`, as the kubelet reports it after an
// in-place resize: allocated and running at `statusCpu`; `resizeCondition` is appended to the
// conditions (a PodResizePending entry, or nothing).
std::string resizedPod(const std::string& name, const std::string& nodeName,
                       const std::string& specCpu, const std::string& statusCpu,
                       const std::string& resizeCondition = "") {
  return R"(apiVersion: v1
kind: Pod
metadata:
  name: )" +
         name +
         R"(
  namespace: shop
  uid: )" +
         name +
         R"(-uid
  generation: 2
spec:
  nodeName: )" +
         nodeName +
         R"(
  containers:
  - name: app
    image: app
    resizePolicy:
    - {resourceName: cpu, restartPolicy: NotRequired}
    resources:
      requests: {cpu: ")" +
         specCpu + R"(", memory: 256Mi}
      limits: {cpu: ")" +
         specCpu + R"(", memory: 256Mi}
status:
  phase: Running
  observedGeneration: 2
  conditions:
  - {type: Ready, status: "True"}
)" + resizeCondition +
         R"(  containerStatuses:
  - name: app
    image: app
    ready: true
    restartCount: 0
    started: true
    state: {running: {startedAt: "2026-11-01T10:00:00Z"}}
    allocatedResources: {cpu: ")" +
         statusCpu + R"(", memory: 256Mi}
    resources:
      requests: {cpu: ")" +
         statusCpu + R"(", memory: 256Mi}
      limits: {cpu: ")" +
         statusCpu + R"(", memory: 256Mi}
---
)";
}

std::string pendingPod(const std::string& name, const std::string& cpu) {
  return R"(apiVersion: v1
kind: Pod
metadata:
  name: )" +
         name +
         R"(
  namespace: shop
  uid: )" +
         name +
         R"(-uid
spec:
  containers:
  - name: app
    image: app
    resources:
      requests: {cpu: ")" +
         cpu + R"(", memory: 64Mi}
status:
  phase: Pending
---
)";
}

// Nodes of 2, 4 and 8 cpus, 1.5 of large's taken (so that a 1-cpu pod would rather go to
// medium). "fits-one" asks 6 cpus at pod level (its containers 1 cpu in all): only "large" has
// room. "fits-none" asks 10 cpus: no node has, and the diagnosis names cpu with the pod-level
// number. With PodLevelResources off the pod level is ignored, as upstream.
TEST_F(SimulateCurrent, PodLevelRequestsDecideWhereAPodFits) {
  const std::string cluster =
      file("cluster.yaml", node("small", "2") + node("medium", "4") + node("large", "8") +
                               resizedPod("busy", "large", "1500m", "1500m") +
                               podLevelPod("fits-one", "6") + podLevelPod("fits-none", "10"));

  auto pods = placements(cluster);
  ASSERT_EQ(pods.size(), 2u);  // the pending ones
  EXPECT_EQ(pods["fits-one"].at("node"), "large") << pods["fits-one"].dump(2);
  const json& none = pods["fits-none"];
  EXPECT_TRUE(none.at("node").is_null()) << none.dump(2);
  EXPECT_THAT(none.at("reason").get<std::string>(),
              HasSubstr("0/3 nodes are available: 3 Insufficient cpu."));
  const json& diagnosis = none.at("diagnosis");
  ASSERT_EQ(diagnosis.at("reasons").size(), 1u) << diagnosis.dump(2);
  EXPECT_EQ(diagnosis.at("reasons")[0].at("plugin"), "NodeResourcesFit");
  EXPECT_EQ(diagnosis.at("reasons")[0].at("reason"), "Insufficient cpu");
  EXPECT_EQ(diagnosis.at("reasons")[0].at("count"), 3);
  std::map<std::string, std::string> shortfall;
  for (const auto& c : diagnosis.at("closest")) shortfall[c.at("node")] = c.at("shortfall");
  EXPECT_EQ(shortfall, (std::map<std::string, std::string>{{"small", "cpu: needs 10, free 2"},
                                                           {"medium", "cpu: needs 10, free 4"},
                                                           {"large", "cpu: needs 10, free 0.5"}}))
      << diagnosis.dump(2);

  auto off = placements(cluster, {"--feature-gates", "PodLevelResources=false"});
  ASSERT_EQ(off.size(), 2u);
  EXPECT_EQ(off["fits-one"].at("node"), "medium") << off["fits-one"].dump(2);
  EXPECT_FALSE(off["fits-none"].at("node").is_null()) << off["fits-none"].dump(2);
  EXPECT_EQ(off["fits-none"].at("reason"), "");
}

// One node of 4 cpus. "grown" was resized in place from 1 cpu to 3 (status), so "web" (2 cpus)
// no longer fits, though it would at grown's spec size. While a resize is Infeasible the spec is
// not counted: "stuck" asks 3 in spec but is allocated 1, and "web" fits beside it.
TEST_F(SimulateCurrent, AResizedPodCountsAtItsStatusSize) {
  const std::string grown = file(
      "grown.yaml", node("n1", "4") + resizedPod("grown", "n1", "1", "3") + pendingPod("web", "2"));
  auto pods = placements(grown);
  ASSERT_EQ(pods.count("web"), 1u);
  EXPECT_TRUE(pods["web"].at("node").is_null()) << pods["web"].dump(2);
  EXPECT_THAT(pods["web"].at("reason").get<std::string>(),
              HasSubstr("0/1 nodes are available: 1 Insufficient cpu."));
  ASSERT_FALSE(pods["web"].at("diagnosis").at("closest").empty());
  EXPECT_EQ(pods["web"].at("diagnosis").at("closest")[0].at("shortfall"), "cpu: needs 2, free 1");

  // The same pod without the resize reported: web fits.
  const std::string notResized =
      file("not-resized.yaml",
           node("n1", "4") + resizedPod("grown", "n1", "1", "1") + pendingPod("web", "2"));
  EXPECT_EQ(placements(notResized)["web"].at("node"), "n1");

  const std::string infeasible =
      file("infeasible.yaml",
           node("n1", "4") +
               resizedPod("stuck", "n1", "3", "1",
                          "  - {type: PodResizePending, status: \"True\", reason: Infeasible,\n"
                          "     message: \"Node didn't have enough capacity: cpu, requested: 3000, "
                          "capacity: 2000\"}\n") +
               pendingPod("web", "2"));
  EXPECT_EQ(placements(infeasible)["web"].at("node"), "n1");

  // Deferred: the kubelet will retry, the spec (3) stays counted.
  const std::string deferred =
      file("deferred.yaml",
           node("n1", "4") +
               resizedPod("stuck", "n1", "3", "1",
                          "  - {type: PodResizePending, status: \"True\", reason: Deferred}\n") +
               pendingPod("web", "2"));
  EXPECT_TRUE(placements(deferred)["web"].at("node").is_null());
}

}  // namespace
}  // namespace ksched::testing
