// Binding conditions (DRADeviceBindingConditions) through a running scheduler and the real
// apiserver, with pods that ask for `example.com/gpu` (extended resources backed by DRA: plain
// pods the v1.20 apiserver stores). The devices list binding conditions; the test plays their
// driver, reporting the conditions in the claims' status.devices.
//   - A pod whose device is not attached yet stays unbound, with its claim written, and holds
//     no binder thread: with more such pods parked than binder threads, 500 other pods bind
//     meanwhile. Each binds once its device's condition turns True.
//   - A failure condition gives the device up: the pod lands on the other node's device.
//   - So does the binding timeout (`bindingTimeout` in DynamicResourcesArgs).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "client/errors.h"
#include "cluster.h"
#include "dra.h"
#include "objects.h"
#include "running_scheduler.h"
#include "scheduling.h"

namespace ksched::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

constexpr const char* kNs = "dra-bind";
constexpr const char* kOthers = "dra-bind-others";
constexpr const char* kOthers2 = "dra-bind-others-2";
constexpr const char* kDriver = "bind.example.com";
const std::string kAttached = "bind.example.com/attached";
const std::string kFailed = "bind.example.com/failed";

json gpuPod(const std::string& name) {
  json p = podJson(kNs, name);
  p["spec"]["schedulerName"] = "default-scheduler";
  p["spec"]["containers"][0]["resources"] = {{"requests", {{"example.com/gpu", "1"}}},
                                             {"limits", {{"example.com/gpu", "1"}}}};
  return p;
}

// `devices` devices on `node`, each attached by the driver before a pod may bind to it.
json slice(const std::string& node, int devices) {
  json list = json::array();
  for (int i = 0; i < devices; ++i) {
    list.push_back({{"name", "gpu-" + std::to_string(i)},
                    {"bindsToNode", true},
                    {"bindingConditions", {kAttached}},
                    {"bindingFailureConditions", {kFailed}}});
  }
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceSlice"},
          {"metadata", {{"name", node + "-gpus"}}},
          {"spec",
           {{"driver", kDriver},
            {"nodeName", node},
            {"pool", {{"name", node}, {"generation", 1}, {"resourceSliceCount", 1}}},
            {"devices", list}}}};
}

std::string claimsPath() {
  return std::string(kResourceApi) + "/namespaces/" + kNs + "/resourceclaims";
}

// The claims of the namespace that the scheduler wrote (allocated and reserved).
std::vector<json> writtenClaims(RestClient& c) {
  std::vector<json> out;
  for (auto& claim : c.list(claimsPath()).items) {
    if (claim["status"].contains("reservedFor")) out.push_back(claim);
  }
  return out;
}

std::string poolOf(const json& claim) {
  return claim["status"]["allocation"]["devices"]["results"][0].value("pool", "");
}

// What the driver reports: the allocated device's condition `type` with `status`.
void report(RestClient& c, const json& claim, const std::string& type, const std::string& status) {
  const json& r = claim["status"]["allocation"]["devices"]["results"][0];
  const json patch = {
      {"status",
       {{"devices", json::array({{{"driver", r.value("driver", "")},
                                  {"pool", r.value("pool", "")},
                                  {"device", r.value("device", "")},
                                  {"conditions", json::array({{{"type", type},
                                                               {"status", status},
                                                               {"reason", "Test"},
                                                               {"message", "set by the test"},
                                                               {"lastTransitionTime",
                                                                "2026-01-01T00:00:00Z"}}})}}})}}}};
  c.patch(claimsPath() + "/" + claim["metadata"].value("name", "") + "/status", patch);
}

std::string nodeOf(RestClient& c, const std::string& name) {
  return c.get(std::string("/api/v1/namespaces/") + kNs + "/pods/" + name)["spec"].value("nodeName",
                                                                                         "");
}

class DraBindingConditions : public NamespacedTest {
 protected:
  void SetUp() override {
    auto& admin = TestCluster::get().admin();
    installResourceCrds(admin);
    grantSchedulerResourceAccess(admin);
    useNamespace(kNs);
    deleteAllNodes(admin);
    deleteClaims(admin, kNs);
    removeSlices(admin);
    removeIfThere(admin, std::string(kResourceApi) + "/deviceclasses/bind-gpu");
    admin.post(std::string(kResourceApi) + "/deviceclasses", extendedGpuClass("bind-gpu", kDriver));
  }

  // The slices of this suite's nodes ("bind-*").
  static void removeSlices(RestClient& admin) {
    for (auto& s : admin.list(std::string(kResourceApi) + "/resourceslices").items) {
      const std::string name = s["metadata"].value("name", "");
      if (name.starts_with("bind-")) {
        removeIfThere(admin, std::string(kResourceApi) + "/resourceslices/" + name);
      }
    }
  }

  void TearDown() override {
    NamespacedTest::TearDown();
    auto& admin = TestCluster::get().admin();
    deleteAllPods(admin, kOthers);
    deleteAllPods(admin, kOthers2);
    deleteAllNodes(admin);
    removeSlices(admin);
  }

  static scheduler::Options options(const std::string& bindingTimeout = "") {
    scheduler::Options o = RunningScheduler::defaultOptions();
    if (!bindingTimeout.empty()) {
      o.profiles[0].pluginConfig.push_back(
          {"DynamicResources", {{"bindingTimeout", bindingTimeout}}});
    }
    return o;
  }
};

// `n` pods without devices in namespace `ns`, created before the scheduler starts.
void createPlainPods(RestClient& admin, const std::string& ns, int n) {
  ensureNamespace(admin, ns);
  for (int i = 0; i < n; ++i) {
    json p = podJson(ns, "p-" + std::to_string(i));
    p["spec"]["schedulerName"] = "default-scheduler";
    admin.post("/api/v1/namespaces/" + ns + "/pods", p);
  }
}

// How many pods wait at PreBind and how many others bind meanwhile: 20 and 500, or
// KSCHED_PARKED_BENCH="<parked>/<others>" (e.g. 500/5000) to measure the binders' pace.
std::pair<int, int> parkedBenchSize() {
  if (const char* v = std::getenv("KSCHED_PARKED_BENCH")) {
    int parked = 0;
    int others = 0;
    if (std::sscanf(v, "%d/%d", &parked, &others) == 2 && parked > 0 && others > 0) {
      return {parked, others};
    }
  }
  return {20, 500};  // 20: more than the scheduler's 8 binder threads
}

TEST_F(DraBindingConditions, ParkedPodsHoldNoBinderAndBindOnceTheirDevicesAreAttached) {
  auto& admin = TestCluster::get().admin();
  const std::pair<int, int> size = parkedBenchSize();
  const int parked = size.first;  // not a structured binding: lambdas below capture it
  const int others = size.second;
  const int gpuNodes = (parked + 99) / 100;  // 100 devices a node
  for (int i = 0; i < gpuNodes; ++i) {
    const std::string name = "bind-" + std::to_string(i);
    admin.post("/api/v1/nodes", sizedNode(name, "64", "256Gi"));
    admin.post(std::string(kResourceApi) + "/resourceslices", slice(name, 100));
  }
  for (int i = 0; i < (others + 99) / 100; ++i) {
    admin.post("/api/v1/nodes", sizedNode("plain-" + std::to_string(i), "64", "256Gi"));
  }
  using Clock = std::chrono::steady_clock;
  // The binders' pace with nothing parked: the pods exist before the scheduler starts.
  createPlainPods(admin, kOthers, others);
  double alone = 0;
  {
    RunningScheduler sched(options());
    const auto start = Clock::now();
    ASSERT_EQ(waitAllBound(admin, kOthers, others, 300s), static_cast<size_t>(others));
    alone = std::chrono::duration<double>(Clock::now() - start).count();
  }
  deleteAllPods(admin, kOthers);

  // The device pods first (higher priority), then as many others: the device pods park at
  // PreBind with their claims written, and the others bind meanwhile.
  ensurePriorityClass(admin, "bind-high", 1000);
  for (int i = 0; i < parked; ++i) {
    json p = gpuPod("gpu-" + std::to_string(i));
    p["spec"]["priorityClassName"] = "bind-high";
    admin.post(std::string("/api/v1/namespaces/") + kNs + "/pods", p);
  }
  createPlainPods(admin, kOthers2, others);
  RunningScheduler sched(options());
  const auto start = Clock::now();
  ASSERT_EQ(waitAllBound(admin, kOthers2, others, 300s), static_cast<size_t>(others));
  const double withParked = std::chrono::duration<double>(Clock::now() - start).count();
  ASSERT_TRUE(
      eventually([&] { return writtenClaims(admin).size() == static_cast<size_t>(parked); }, 60s))
      << writtenClaims(admin).size() << " claims written";
  std::printf(
      "[ bench    ] %d pods bound in %.2f s (%.0f pods/s) with nothing parked; in %.2f s "
      "(%.0f pods/s) with %d bindings parked at PreBind\n",
      others, alone, others / alone, withParked, others / withParked, parked);
  for (const auto& p : listPods(admin, kNs)) {
    EXPECT_EQ(p.spec.nodeName, "") << p.metadata.name << " bound before its device was attached";
  }
  // Every claim created, allocated with its timestamp and reserved.
  for (const auto& claim : writtenClaims(admin)) {
    EXPECT_TRUE(claim["status"]["allocation"].contains("allocationTimestamp")) << claim.dump();
  }
  const auto pending = eventsByPod(admin, kNs, "BindingConditionsPending");
  EXPECT_EQ(pending.size(), static_cast<size_t>(parked));
  if (!pending.empty()) {
    EXPECT_THAT(pending.begin()->second.front(),
                ::testing::StartsWith("waiting for binding conditions for device on node bind-"));
  }

  // The driver attaches the devices: each pod binds, to the node of its device.
  for (const auto& claim : writtenClaims(admin)) report(admin, claim, kAttached, "True");
  EXPECT_EQ(waitAllBound(admin, kNs, parked, 120s), static_cast<size_t>(parked));
  for (const auto& claim : writtenClaims(admin)) {
    const std::string owner = claim["metadata"]["ownerReferences"][0].value("name", "");
    EXPECT_EQ(nodeOf(admin, owner), poolOf(claim)) << owner;
  }
}

// Two nodes with one device each; the device the pod gets first is given up (`giveUp` reports a
// failure, or nothing until the timeout), and the pod binds to the other node's device.
void landsOnTheOtherDevice(const std::string& pod, bool failure) {
  auto& admin = TestCluster::get().admin();
  ASSERT_TRUE(eventually([&] { return writtenClaims(admin).size() == 1; }, 30s));
  const json first = writtenClaims(admin).front();
  const std::string bad = poolOf(first);
  const std::string good = bad == "bind-a" ? "bind-b" : "bind-a";
  EXPECT_EQ(nodeOf(admin, pod), "");
  if (failure) report(admin, first, kFailed, "True");
  // The driver attaches the device on the good node once the pod gets it there.
  ASSERT_TRUE(eventually(
      [&] {
        for (const auto& claim : writtenClaims(admin)) {
          if (poolOf(claim) == good && !claim["status"].contains("devices")) {
            report(admin, claim, kAttached, "True");
          }
        }
        return nodeOf(admin, pod) == good;
      },
      60s))
      << pod << " did not land on " << good;
  // The claim of the failed attempt is gone (the pod's extended-resource claim is per attempt).
  const auto claims = writtenClaims(admin);
  ASSERT_EQ(claims.size(), 1U);
  EXPECT_EQ(poolOf(claims[0]), good);
}

TEST_F(DraBindingConditions, AFailureConditionGivesTheDeviceUpAndThePodLandsOnAnother) {
  auto& admin = TestCluster::get().admin();
  for (const char* n : {"bind-a", "bind-b"}) {
    admin.post("/api/v1/nodes", sizedNode(n, "8", "16Gi"));
    admin.post(std::string(kResourceApi) + "/resourceslices", slice(n, 1));
  }
  RunningScheduler sched(options());
  admin.post(std::string("/api/v1/namespaces/") + kNs + "/pods", gpuPod("failed"));
  landsOnTheOtherDevice("failed", true);
  const auto failed = eventsByPod(admin, kNs, "FailedScheduling")["failed"];
  ASSERT_FALSE(failed.empty());
  EXPECT_NE(failed.front().find("binding failed: reason=Test, message=\"set by the test\""),
            std::string::npos)
      << failed.front();
}

TEST_F(DraBindingConditions, TheBindingTimeoutGivesTheDeviceUpAndThePodLandsOnAnother) {
  auto& admin = TestCluster::get().admin();
  for (const char* n : {"bind-a", "bind-b"}) {
    admin.post("/api/v1/nodes", sizedNode(n, "8", "16Gi"));
    admin.post(std::string(kResourceApi) + "/resourceslices", slice(n, 1));
  }
  RunningScheduler sched(options("3s"));
  admin.post(std::string("/api/v1/namespaces/") + kNs + "/pods", gpuPod("timeout"));
  landsOnTheOtherDevice("timeout", false);
  const auto failed = eventsByPod(admin, kNs, "FailedScheduling")["timeout"];
  ASSERT_FALSE(failed.empty());
  EXPECT_NE(failed.front().find("device binding timeout"), std::string::npos) << failed.front();
}

}  // namespace
}  // namespace ksched::testing
