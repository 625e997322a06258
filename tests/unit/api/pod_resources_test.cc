#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <ksched/api/features.h>
#include <ksched/api/pod_resources.h>

#include "tests/support/api_test_util.h"
#include "tests/unit/api/pod_resources_test_util.h"

namespace ksched::api {
namespace {

using testing::decodeString;
using testing::Expected;
using testing::expectList;

// The default gates: what every case here expects unless it says otherwise.
const features::Gates kDefaults;

struct Case {
  std::string name;
  std::string spec;  // PodSpec JSON
  Expected requests;
  Expected nonZero;
};

TEST(PodResourcesTest, EffectiveAndNonZeroRequests) {
  const std::vector<Case> cases = {
      {"noContainers", "{}", {}, {}},
      {"singleContainer",
       R"({"containers": [{"resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}]})",
       {{"cpu", "100m"}, {"memory", "128Mi"}},
       {{"cpu", "100m"}, {"memory", "128Mi"}}},
      {"containersSum",
       R"({"containers": [{"resources": {"requests": {"cpu": "1", "memory": "1Gi"}}},
                          {"resources": {"requests": {"cpu": "500m", "example.com/gpu": "1"}}}]})",
       {{"cpu", "1500m"}, {"memory", "1Gi"}, {"example.com/gpu", "1"}},
       {{"cpu", "1500m"}, {"memory", "1224Mi"}, {"example.com/gpu", "1"}}},
      {"initContainerBiggerThanSum",
       R"({"containers": [{"resources": {"requests": {"cpu": "1"}}},
                          {"resources": {"requests": {"cpu": "1"}}}],
           "initContainers": [{"resources": {"requests": {"cpu": "3"}}}]})",
       {{"cpu", "3"}},
       {{"cpu", "3"}, {"memory", "400Mi"}}},
      {"initContainerSmallerThanSum",
       R"({"containers": [{"resources": {"requests": {"cpu": "1"}}},
                          {"resources": {"requests": {"cpu": "1"}}}],
           "initContainers": [{"resources": {"requests": {"cpu": "1500m"}}},
                              {"resources": {"requests": {"cpu": "1"}}}]})",
       {{"cpu", "2"}},
       {{"cpu", "2"}, {"memory", "400Mi"}}},
      {"maxIsPerResource",
       R"({"containers": [{"resources": {"requests": {"cpu": "1", "memory": "2Gi"}}}],
           "initContainers": [{"resources": {"requests": {"cpu": "2", "memory": "1Gi"}}},
                              {"resources": {"requests": {"example.com/gpu": "2"}}}]})",
       {{"cpu", "2"}, {"memory", "2Gi"}, {"example.com/gpu", "2"}},
       {{"cpu", "2"}, {"memory", "2Gi"}, {"example.com/gpu", "2"}}},
      {"sidecarAddsToContainers",
       R"({"containers": [{"resources": {"requests": {"cpu": "2"}}}],
           "initContainers": [{"restartPolicy": "Always",
                               "resources": {"requests": {"cpu": "1", "memory": "100Mi"}}}]})",
       {{"cpu", "3"}, {"memory", "100Mi"}},
       {{"cpu", "3"}, {"memory", "300Mi"}}},
      {"initAfterSidecarCountsSidecar",
       R"({"containers": [{"resources": {"requests": {"cpu": "2"}}}],
           "initContainers": [{"restartPolicy": "Always", "resources": {"requests": {"cpu": "1"}}},
                              {"resources": {"requests": {"cpu": "2500m"}}}]})",
       {{"cpu", "3500m"}},
       {{"cpu", "3500m"}, {"memory", "400Mi"}}},
      {"initBeforeSidecarDoesNot",
       R"({"containers": [{"resources": {"requests": {"cpu": "2"}}}],
           "initContainers": [{"resources": {"requests": {"cpu": "2500m"}}},
                              {"restartPolicy": "Always", "resources": {"requests": {"cpu": "1"}}}]})",
       {{"cpu", "3"}},
       {{"cpu", "3"}, {"memory", "400Mi"}}},
      {"onlyAlwaysMakesASidecar",
       R"({"containers": [{"resources": {"requests": {"cpu": "2"}}}],
           "initContainers": [{"restartPolicy": "OnFailure", "resources": {"requests": {"cpu": "1"}}}]})",
       {{"cpu", "2"}},
       {{"cpu", "2"}, {"memory", "200Mi"}}},
      {"overheadAdded",
       R"({"containers": [{"resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}],
           "overhead": {"cpu": "250m", "memory": "120Mi"}})",
       {{"cpu", "1250m"}, {"memory", "1144Mi"}},
       {{"cpu", "1250m"}, {"memory", "1144Mi"}}},
      {"overheadAfterInitMax",
       R"({"containers": [{"resources": {"requests": {"cpu": "1"}}}],
           "initContainers": [{"resources": {"requests": {"cpu": "4"}}}],
           "overhead": {"cpu": "100m"}})",
       {{"cpu", "4100m"}},
       {{"cpu", "4100m"}, {"memory", "200Mi"}}},
      {"missingRequests",
       R"({"containers": [{"name": "a"}, {"name": "b"}]})",
       {},
       {{"cpu", "200m"}, {"memory", "400Mi"}}},
      {"missingOnlyMemory",
       R"({"containers": [{"resources": {"requests": {"cpu": "1"}}}]})",
       {{"cpu", "1"}},
       {{"cpu", "1"}, {"memory", "200Mi"}}},
      {"explicitZeroIsKept",
       R"({"containers": [{"resources": {"requests": {"cpu": "0", "memory": "0"}}}]})",
       {{"cpu", "0"}, {"memory", "0"}},
       {{"cpu", "0"}, {"memory", "0"}}},
      {"limitsAreNotRequests",
       R"({"containers": [{"resources": {"limits": {"cpu": "2"}}}]})",
       {},
       {{"cpu", "100m"}, {"memory", "200Mi"}}},
      {"nonZeroAppliesToInitContainers",
       R"({"containers": [{"resources": {"requests": {"cpu": "50m", "memory": "10Mi"}}}],
           "initContainers": [{"name": "noRequests"}]})",
       {{"cpu", "50m"}, {"memory", "10Mi"}},
       {{"cpu", "100m"}, {"memory", "200Mi"}}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Pod pod;
    pod.spec = decodeString<PodSpec>(c.spec);
    {
      SCOPED_TRACE("effectiveRequests");
      expectList(effectiveRequests(pod, PodResourcesOptions(kDefaults)), c.requests);
    }
    {
      SCOPED_TRACE("nonZeroRequests");
      expectList(nonZeroRequests(pod, kDefaults), c.nonZero);
    }
  }
}

TEST(PodResourcesTest, Options) {
  Pod pod;
  pod.spec = decodeString<PodSpec>(
      R"({"containers": [{"resources": {"requests": {"cpu": "1"}}}, {"name": "none"}],
          "overhead": {"cpu": "250m"}})");
  PodResourcesOptions noOverhead(kDefaults);
  noOverhead.excludeOverhead = true;
  expectList(effectiveRequests(pod, noOverhead), {{"cpu", "1"}});

  PodResourcesOptions fill(kDefaults);
  fill.nonMissingContainerRequests.emplace("example.com/gpu", Quantity::parse("1"));
  expectList(effectiveRequests(pod, fill), {{"cpu", "1250m"}, {"example.com/gpu", "2"}});
}

TEST(PodResourcesTest, AsResource) {
  Pod pod;
  pod.spec = decodeString<PodSpec>(
      R"({"containers": [{"resources": {"requests": {"cpu": "1.5", "memory": "1Gi",
                                                      "nvidia.com/gpu": "1"}}}],
          "initContainers": [{"resources": {"requests": {"cpu": "2"}}}]})");
  EXPECT_EQ(effectiveRequestsResource(pod, PodResourcesOptions(kDefaults)),
            (Resource{2000, 1'073'741'824, 0, 0, {{"nvidia.com/gpu", 1}}}));
  EXPECT_EQ(kDefaultMemoryRequest, 209'715'200);
  EXPECT_EQ(kDefaultMilliCPURequest, 100);
}

// The options a caller does not set follow the gates it passes.
TEST(PodResourcesTest, DefaultsFollowFeatureGates) {
  const Pod pod = decodeString<Pod>(
      R"({"spec": {"resources": {"requests": {"cpu": "3"}},
                   "containers": [{"name": "c1", "resources": {"requests": {"cpu": "1",
                                                                            "memory": "1Gi"}}}]},
          "status": {"containerStatuses": [{"name": "c1",
                                            "allocatedResources": {"memory": "2Gi"}}],
                     "allocatedResources": {"cpu": "4"}}})");
  auto with = [](features::Feature feature, bool value) {
    features::Gates g;
    g.force(feature, value);
    return PodResourcesOptions(g);
  };
  expectList(effectiveRequests(pod, PodResourcesOptions(kDefaults)),
             {{"cpu", "4"}, {"memory", "2Gi"}});
  expectList(effectiveRequests(
                 pod, with(features::Feature::kInPlacePodLevelResourcesVerticalScaling, false)),
             {{"cpu", "3"}, {"memory", "2Gi"}});
  expectList(effectiveRequests(pod, with(features::Feature::kPodLevelResources, false)),
             {{"cpu", "1"}, {"memory", "2Gi"}});
  // InPlacePodVerticalScaling is locked on in a real process; the option still works.
  expectList(effectiveRequests(pod, with(features::Feature::kInPlacePodVerticalScaling, false)),
             {{"cpu", "3"}, {"memory", "1Gi"}});
}

// What NodeInfo counts (upstream TestCalculatePodResourcesWithResize and the pod-level cases of
// TestCalculateResource, pkg/scheduler/framework): requests and the non-zero cpu / memory.
TEST(PodResourcesTest, NodePodRequests) {
  struct NodeCase {
    std::string name;
    std::string pod;
    Resource requests;
    int64_t nonZeroMilliCPU;
    int64_t nonZeroMemory;
  };
  const int64_t m500M = 500'000'000, m800M = 800'000'000;
  const std::string c1_500 =
      R"("containers": [{"name": "c1", "resources": {"requests": {"cpu": "500m",
                                                                  "memory": "500M"}}}])";
  auto status = [](std::string_view cpu, std::string_view mem) {
    return R"("containerStatuses": [{"name": "c1", "resources": {"requests": {"cpu": ")" +
           std::string(cpu) + R"(", "memory": ")" + std::string(mem) + R"("}}}])";
  };
  const std::vector<NodeCase> cases = {
      {"Pod with no pending resize",
       "{\"spec\": {" + c1_500 + "}, \"status\": {" + status("500m", "500M") + "}}",
       {500, m500M},
       500,
       m500M},
      {"Pod with pod-level resources no pending resize",
       R"({"spec": {"resources": {"requests": {"cpu": "700m", "memory": "500M"}}, )" + c1_500 +
           R"(}, "status": {"resources": {"requests": {"cpu": "500m", "memory": "500M"}}, )" +
           status("700m", "500M") + "}}",
       {700, m500M},
       700,
       m500M},
      {"Pod with resize in progress",
       "{\"spec\": {" + c1_500 + "}, \"status\": {" +
           R"("conditions": [{"type": "PodResizeInProgress", "status": "True"}], )" +
           status("500m", "500M") + "}}",
       {500, m500M},
       500,
       m500M},
      {"Pod with deferred resize",
       R"({"spec": {"containers": [{"name": "c1", "resources": {"requests": {"cpu": "700m",
                                                                              "memory": "800M"}}}]},
           "status": {"conditions": [{"type": "PodResizePending", "status": "True",
                                      "reason": "Deferred"}], )" +
           status("500m", "500M") + "}}",
       {700, m800M},
       700,
       m800M},
      {"Pod with pod-level resources and with deferred resize",
       R"({"spec": {"resources": {"requests": {"cpu": "700m", "memory": "800M"}}, )" + c1_500 +
           R"(}, "status": {"conditions": [{"type": "PodResizePending", "status": "True",
                                           "reason": "Deferred"}],
                           "resources": {"requests": {"cpu": "500m", "memory": "500M"}}, )" +
           status("500m", "500M") + "}}",
       {700, m800M},
       700,
       m800M},
      {"Pod with infeasible resize",
       R"({"spec": {"containers": [{"name": "c1", "resources": {"requests": {"cpu": "700m",
                                                                              "memory": "800M"}}}]},
           "status": {"conditions": [{"type": "PodResizePending", "status": "True",
                                      "reason": "Infeasible"}], )" +
           status("500m", "500M") + "}}",
       {500, m500M},
       500,
       m500M},
      {"Pod with sidecar container and no pending resize",
       R"({"spec": {)" + c1_500 + R"(, "initContainers": [
             {"name": "i1", "resources": {"requests": {"cpu": "700m", "memory": "800M"}}},
             {"name": "s1", "restartPolicy": "Always",
              "resources": {"requests": {"cpu": "700m", "memory": "800M"}}}]},
           "status": {)" +
           status("500m", "500M") + R"(, "initContainerStatuses": [
             {"name": "i1", "resources": {"requests": {"cpu": "700m", "memory": "800M"}}},
             {"name": "s1", "resources": {"requests": {"cpu": "700m", "memory": "800M"}}}]}})",
       {1200, m500M + m800M},
       1200,
       m500M + m800M},
      {"pod-level cpu only: memory default for the container",
       R"({"spec": {"resources": {"requests": {"cpu": "500m"}},
                    "containers": [{"resources": {"requests": {"ephemeral-storage": "800M"}}}]}})",
       {500, 0, m800M},
       500,
       kDefaultMemoryRequest},
      {"pod-level requests: no default for memory one container requests",
       R"({"spec": {"resources": {"requests": {"cpu": "1"}},
                    "containers": [{"resources": {"requests": {"memory": "1Gi"}}}, {}]}})",
       {1000, 1LL << 30},
       1000,
       1LL << 30},
      {"no pod-level requests: defaults per container",
       R"({"spec": {"containers": [{"resources": {"requests": {"memory": "1Gi"}}}, {}]}})",
       {0, 1LL << 30},
       2 * kDefaultMilliCPURequest,
       (1LL << 30) + kDefaultMemoryRequest},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const NodePodRequests got = nodePodRequests(decodeString<Pod>(c.pod), kDefaults);
    EXPECT_EQ(got.requests, c.requests);
    EXPECT_EQ(got.nonZeroMilliCPU, c.nonZeroMilliCPU);
    EXPECT_EQ(got.nonZeroMemory, c.nonZeroMemory);
  }

  // The scoring requests of a pending pod fill every container, pod level replacing cpu.
  expectList(nonZeroRequests(decodeString<Pod>(
                                 R"({"spec": {"resources": {"requests": {"cpu": "1"}},
                              "containers": [{"resources": {"requests": {"memory": "1Gi"}}},
                                             {}]}})"),
                             kDefaults),
             {{"cpu", "1"}, {"memory", "1224Mi"}});
}

TEST(PodResourcesTest, SchedulingRequestsIgnoreStatusAndKeepPodLevel) {
  const Pod pod = decodeString<Pod>(
      R"({"spec": {"resources": {"requests": {"cpu": "3"}},
                   "containers": [{"name": "c", "resources": {"requests": {
                     "cpu": "1", "memory": "1Gi", "example.com/gpu": "0",
                     "nvidia.com/gpu": "1"}}}]},
          "status": {"containerStatuses": [{"name": "c",
                                            "allocatedResources": {"memory": "4Gi"}}]}})");
  EXPECT_EQ(schedulingRequestsResource(pod, kDefaults),
            (Resource{3000, 1LL << 30, 0, 0, {{"nvidia.com/gpu", 1}}}));
  features::Gates noPodLevel;
  noPodLevel.force(features::Feature::kPodLevelResources, false);
  EXPECT_EQ(schedulingRequestsResource(pod, noPodLevel).milliCPU, 1000);
}

}  // namespace
}  // namespace ksched::api
