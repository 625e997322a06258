#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <ksched/api/features.h>
#include <ksched/api/pod_resources.h>

#include "tests/support/api_test_util.h"

namespace ksched::api {
namespace {

using testing::decodeString;

using Expected = std::map<std::string, std::string>;  // resource -> quantity string

void expectList(const ResourceList& got, const Expected& want) {
  EXPECT_EQ(got.size(), want.size());
  for (const auto& [name, q] : want) {
    SCOPED_TRACE(name);
    auto it = got.find(name);
    ASSERT_NE(it, got.end());
    EXPECT_EQ(it->second, Quantity::parse(q)) << "got " << it->second.toString();
  }
}

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
      expectList(effectiveRequests(pod), c.requests);
    }
    {
      SCOPED_TRACE("nonZeroRequests");
      expectList(nonZeroRequests(pod), c.nonZero);
    }
  }
}

TEST(PodResourcesTest, Options) {
  Pod pod;
  pod.spec = decodeString<PodSpec>(
      R"({"containers": [{"resources": {"requests": {"cpu": "1"}}}, {"name": "none"}],
          "overhead": {"cpu": "250m"}})");
  PodResourcesOptions noOverhead;
  noOverhead.excludeOverhead = true;
  expectList(effectiveRequests(pod, noOverhead), {{"cpu", "1"}});

  PodResourcesOptions fill;
  fill.nonMissingContainerRequests.emplace("example.com/gpu", Quantity::parse("1"));
  expectList(effectiveRequests(pod, fill), {{"cpu", "1250m"}, {"example.com/gpu", "2"}});
}

TEST(PodResourcesTest, AsResource) {
  Pod pod;
  pod.spec = decodeString<PodSpec>(
      R"({"containers": [{"resources": {"requests": {"cpu": "1.5", "memory": "1Gi",
                                                      "nvidia.com/gpu": "1"}}}],
          "initContainers": [{"resources": {"requests": {"cpu": "2"}}}]})");
  EXPECT_EQ(effectiveRequestsResource(pod),
            (Resource{2000, 1'073'741'824, 0, 0, {{"nvidia.com/gpu", 1}}}));
  EXPECT_EQ(kDefaultMemoryRequest, 209'715'200);
  EXPECT_EQ(kDefaultMilliCPURequest, 100);
}

// Upstream's tables (component-helpers resource/helpers_test.go, kubernetes master after
// v1.37.0-beta.0): the pods, the options and the expected requests. Options are spelled out as
// upstream's zero value (no pod-level skip, no status), whatever the process's gates.
struct Opts {
  bool skipPodLevel = false;
  bool useStatus = false;
  bool podLevelStatus = false;
  bool excludeOverhead = false;
  Expected nonMissing;
};

PodResourcesOptions options(const Opts& o) {
  PodResourcesOptions out;
  out.skipPodLevelResources = o.skipPodLevel;
  out.useStatusResources = o.useStatus;
  out.podLevelStatusResources = o.podLevelStatus;
  out.excludeOverhead = o.excludeOverhead;
  for (const auto& [name, q] : o.nonMissing) {
    out.nonMissingContainerRequests.emplace(name, Quantity::parse(q));
  }
  return out;
}

struct PodCase {
  std::string name;
  std::string pod;  // Pod JSON
  Opts opts;
  Expected requests;
};

constexpr std::string_view kInfeasible =
    R"("conditions": [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}])";

std::string withInfeasible(std::string_view statusRest) {
  return std::string(R"("status": {)") + std::string(kInfeasible) +
         (statusRest.empty() ? "" : ", ") + std::string(statusRest) + "}";
}

void runPodRequests(const std::vector<PodCase>& cases) {
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const Pod pod = decodeString<Pod>(c.pod);
    expectList(effectiveRequests(pod, options(c.opts)), c.requests);
  }
}

// TestPodResourceRequests.
TEST(PodResourcesTest, UpstreamPodResourceRequests) {
  const std::string resizedSpec4 =
      R"("spec": {"containers": [{"name": "container-1",
                                  "resources": {"requests": {"cpu": "4"}}}]})";
  const std::string status2 =
      R"("containerStatuses": [{"name": "container-1",
                                "resources": {"requests": {"cpu": "2"}}}])";
  const std::string sidecarSpec4 =
      R"("spec": {"initContainers": [{"name": "restartable-init-1", "restartPolicy": "Always",
                                      "resources": {"requests": {"cpu": "4"}}}]})";
  const std::string sidecarStatus2 =
      R"("initContainerStatuses": [{"name": "restartable-init-1",
                                    "resources": {"requests": {"cpu": "2"}}}])";
  runPodRequests({
      {"nil options, larger init container",
       R"({"spec": {"initContainers": [{"resources": {"requests": {"cpu": "4"}}}],
                    "containers": [{"resources": {"requests": {"cpu": "1"}}}]}})",
       {},
       {{"cpu", "4"}}},
      {"nil options, larger containers",
       R"({"spec": {"initContainers": [{"resources": {"requests": {"cpu": "2"}}}],
                    "containers": [{"resources": {"requests": {"cpu": "2"}}},
                                   {"resources": {"requests": {"cpu": "3"}}}]}})",
       {},
       {{"cpu", "5"}}},
      {"pod overhead excluded",
       R"({"spec": {"overhead": {"cpu": "1"},
                    "initContainers": [{"resources": {"requests": {"cpu": "2"}}}],
                    "containers": [{"resources": {"requests": {"cpu": "2"}}},
                                   {"resources": {"requests": {"cpu": "3"}}}]}})",
       {.excludeOverhead = true},
       {{"cpu", "5"}}},
      {"pod overhead included",
       R"({"spec": {"overhead": {"cpu": "1", "memory": "1Gi"},
                    "initContainers": [{"resources": {"requests": {"cpu": "2"},
                                                      "limits": {"cpu": "2"}}}],
                    "containers": [{"resources": {"requests": {"cpu": "2"}}},
                                   {"resources": {"requests": {"cpu": "3"}}}]}})",
       {},
       {{"cpu", "6"}, {"memory", "1Gi"}}},
      {"resized, infeasible",
       "{" + resizedSpec4 + ", " + withInfeasible(status2) + "}",
       {.useStatus = true},
       {{"cpu", "2"}}},
      {"resized, infeasible & in-progress",
       R"({"spec": {"containers": [{"name": "container-1",
                                    "resources": {"requests": {"cpu": "6"}}}]}, )" +
           withInfeasible(R"("containerStatuses": [{"name": "container-1",
                                 "allocatedResources": {"cpu": "4"},
                                 "resources": {"requests": {"cpu": "2"}}}])") +
           "}",
       {.useStatus = true},
       {{"cpu", "4"}}},
      {"resized, no resize status",
       "{" + resizedSpec4 + R"(, "status": {)" + status2 + "}}",
       {.useStatus = true},
       {{"cpu", "4"}}},
      {"resized: per-resource 3-way maximum",
       R"({"spec": {"containers": [{"name": "container-1", "resources": {"requests":
             {"cpu": "30m", "memory": "20M", "ephemeral-storage": "10G"}}}]},
           "status": {"containerStatuses": [{"name": "container-1",
             "allocatedResources": {"cpu": "20m", "memory": "10M", "ephemeral-storage": "30G"},
             "resources": {"requests":
               {"cpu": "10m", "memory": "30M", "ephemeral-storage": "20G"}}}]}})",
       {.useStatus = true},
       {{"cpu", "30m"}, {"memory", "30M"}, {"ephemeral-storage", "30G"}}},
      {"resized, infeasible, but don't use status",
       "{" + resizedSpec4 + ", " + withInfeasible(status2) + "}",
       {.useStatus = false},
       {{"cpu", "4"}}},
      {"resized, restartable init container, infeasible",
       "{" + sidecarSpec4 + ", " + withInfeasible(sidecarStatus2) + "}",
       {.useStatus = true},
       {{"cpu", "2"}}},
      {"resized, restartable init container, no resize status",
       "{" + sidecarSpec4 + R"(, "status": {)" + sidecarStatus2 + "}}",
       {.useStatus = true},
       {{"cpu", "4"}}},
      {"resized, restartable init container, infeasible, but don't use status",
       "{" + sidecarSpec4 + ", " + withInfeasible(sidecarStatus2) + "}",
       {.useStatus = false},
       {{"cpu", "4"}}},
      {"restartable init container",
       R"({"spec": {"initContainers": [{"name": "restartable-init-1", "restartPolicy": "Always",
                                        "resources": {"requests": {"cpu": "1"}}}],
                    "containers": [{"name": "container-1",
                                    "resources": {"requests": {"cpu": "1"}}}]}})",
       {},
       {{"cpu", "2"}}},
      {"multiple restartable init containers",
       R"({"spec": {"initContainers": [
             {"name": "init-1", "resources": {"requests": {"cpu": "5"}}},
             {"name": "restartable-init-1", "restartPolicy": "Always",
              "resources": {"requests": {"cpu": "1"}}},
             {"name": "restartable-init-2", "restartPolicy": "Always",
              "resources": {"requests": {"cpu": "2"}}},
             {"name": "restartable-init-3", "restartPolicy": "Always",
              "resources": {"requests": {"cpu": "3"}}}],
           "containers": [{"name": "container-1", "resources": {"requests": {"cpu": "1"}}}]}})",
       {},
       {{"cpu", "7"}}},
      {"multiple restartable and regular init containers",
       R"({"spec": {"initContainers": [
             {"name": "init-1", "resources": {"requests": {"cpu": "5"}}},
             {"name": "restartable-init-1", "restartPolicy": "Always",
              "resources": {"requests": {"cpu": "1"}}},
             {"name": "restartable-init-2", "restartPolicy": "Always",
              "resources": {"requests": {"cpu": "2"}}},
             {"name": "init-2", "resources": {"requests": {"cpu": "5"}}},
             {"name": "restartable-init-3", "restartPolicy": "Always",
              "resources": {"requests": {"cpu": "3"}}}],
           "containers": [{"name": "container-1", "resources": {"requests": {"cpu": "1"}}}]}})",
       {},
       {{"cpu", "8"}}},
      {"restartable-init, init and regular",
       R"({"spec": {"initContainers": [
             {"name": "restartable-init-1", "restartPolicy": "Always",
              "resources": {"requests": {"cpu": "10"}}},
             {"name": "init-1", "resources": {"requests": {"cpu": "200"}}}],
           "containers": [{"name": "container-1",
                           "resources": {"requests": {"cpu": "100"}}}]}})",
       {},
       {{"cpu", "210"}}},
      {"aggregate request resolves max of sums instead of sum of maxes",
       R"({"spec": {"containers": [{"name": "c1", "resources": {"requests": {"cpu": "1"}}},
                                   {"name": "c2", "resources": {"requests": {"cpu": "2"}}}]},
           "status": {"containerStatuses": [{"name": "c1", "allocatedResources": {"cpu": "2"}},
                                            {"name": "c2", "allocatedResources": {"cpu": "1"}}]}})",
       {.useStatus = true},
       {{"cpu", "3"}}},
  });
}

// TestPodLevelResourceRequests.
TEST(PodResourcesTest, UpstreamPodLevelResourceRequests) {
  runPodRequests({
      {"nil", R"({"spec": {"resources": {}}})", {}, {}},
      {"pod level memory resource with SkipPodLevelResources true",
       R"({"spec": {"resources": {"requests": {"memory": "2Mi"}}}})",
       {.skipPodLevel = true},
       {}},
      {"pod level memory resource with SkipPodLevelResources false",
       R"({"spec": {"resources": {"requests": {"memory": "2Mi"}}}})",
       {.skipPodLevel = false},
       {{"memory", "2Mi"}}},
      {"pod level memory and container level cpu resources with SkipPodLevelResources false",
       R"({"spec": {"resources": {"requests": {"memory": "2Mi"}},
                    "containers": [{"resources": {"requests": {"cpu": "2m"}}}]}})",
       {},
       {{"memory", "2Mi"}, {"cpu", "2m"}}},
      {"pod level unsupported resources set at both pod-level and container-level",
       R"({"spec": {"resources": {"requests": {"storage": "2Mi"}},
                    "containers": [{"resources": {"requests": {"storage": "3Mi"}}}]}})",
       {},
       {{"storage", "3Mi"}}},
      {"pod level unsupported resources set at pod-level",
       R"({"spec": {"resources": {"requests": {"storage": "2Mi"}},
                    "containers": [{"resources": {"requests": {"memory": "3Mi"}}}]}})",
       {},
       {{"memory", "3Mi"}}},
      {"only container level resources set",
       R"({"spec": {"resources": {},
                    "containers": [{"resources": {"requests": {"memory": "3Mi", "cpu": "2m"}}}]}})",
       {},
       {{"memory", "3Mi"}, {"cpu", "2m"}}},
      {"both container-level and pod-level resources set",
       R"({"spec": {"resources": {"requests": {"memory": "6Mi", "cpu": "8m"}},
                    "containers": [{"resources": {"requests": {"memory": "3Mi", "cpu": "2m"}}}]}})",
       {},
       {{"memory", "6Mi"}, {"cpu", "8m"}}},
      {"container-level resources and init container set",
       R"({"spec": {"resources": {},
                    "containers": [{"resources": {"requests": {"memory": "3Mi", "cpu": "2m"}}}],
                    "initContainers": [{"resources": {"requests": {"memory": "5Mi",
                                                                   "cpu": "4m"}}}]}})",
       {},
       {{"memory", "5Mi"}, {"cpu", "4m"}}},
      {"container-level resources and init container set, SkipPodLevelResources true",
       R"({"spec": {"resources": {},
                    "containers": [{"resources": {"requests": {"memory": "3Mi", "cpu": "2m"}}}],
                    "initContainers": [{"resources": {"requests": {"memory": "5Mi",
                                                                   "cpu": "4m"}}}]}})",
       {.skipPodLevel = true},
       {{"memory", "5Mi"}, {"cpu", "4m"}}},
      {"container-level resources and sidecar container set",
       R"({"spec": {"resources": {},
                    "containers": [{"resources": {"requests": {"memory": "3Mi", "cpu": "2m"}}}],
                    "initContainers": [{"restartPolicy": "Always",
                                        "resources": {"requests": {"memory": "5Mi",
                                                                   "cpu": "4m"}}}]}})",
       {},
       {{"memory", "8Mi"}, {"cpu", "6m"}}},
      {"container-level resources, init and sidecar container set",
       R"({"spec": {"resources": {},
                    "containers": [{"resources": {"requests": {"memory": "3Mi", "cpu": "2m"}}}],
                    "initContainers": [
                      {"restartPolicy": "Always",
                       "resources": {"requests": {"memory": "5Mi", "cpu": "4m"}}},
                      {"resources": {"requests": {"memory": "6Mi", "cpu": "8m"}}}]}})",
       {},
       {{"memory", "11Mi"}, {"cpu", "12m"}}},
      {"pod-level resources, container-level resources, init and sidecar container set",
       R"({"spec": {"resources": {"requests": {"memory": "15Mi", "cpu": "18m"}},
                    "containers": [{"resources": {"requests": {"memory": "3Mi", "cpu": "2m"}}}],
                    "initContainers": [
                      {"restartPolicy": "Always",
                       "resources": {"requests": {"memory": "5Mi", "cpu": "4m"}}},
                      {"resources": {"requests": {"memory": "6Mi", "cpu": "8m"}}}]}})",
       {},
       {{"memory", "15Mi"}, {"cpu", "18m"}}},
      {"pod-level resources, hugepage request/limit single page size",
       R"({"spec": {"resources": {"limits": {"hugepages-2Mi": "2Mi"},
                                  "requests": {"memory": "10Mi", "hugepages-2Mi": "2Mi"}}}})",
       {},
       {{"memory", "10Mi"}, {"hugepages-2Mi", "2Mi"}}},
      {"pod-level resources, hugepage request/limit multiple page sizes",
       R"({"spec": {"resources": {
             "limits": {"hugepages-2Mi": "2Mi", "hugepages-1Gi": "1Gi"},
             "requests": {"cpu": "1", "hugepages-2Mi": "2Mi", "hugepages-1Gi": "1Gi"}}}})",
       {},
       {{"cpu", "1"}, {"hugepages-2Mi", "2Mi"}, {"hugepages-1Gi", "1Gi"}}},
      {"pod-level resources, container-level resources, hugepage single page size",
       R"({"spec": {"resources": {"limits": {"hugepages-2Mi": "10Mi"},
                                  "requests": {"cpu": "1", "hugepages-2Mi": "10Mi"}},
                    "containers": [{"resources": {"limits": {"hugepages-2Mi": "6Mi"},
                                                  "requests": {"hugepages-2Mi": "6Mi"}}}]}})",
       {},
       {{"cpu", "1"}, {"hugepages-2Mi", "10Mi"}}},
      {"pod-level resources, container-level resources, hugepage multiple page sizes",
       R"({"spec": {"resources": {
             "limits": {"hugepages-2Mi": "10Mi", "hugepages-1Gi": "2Gi"},
             "requests": {"cpu": "1", "hugepages-2Mi": "10Mi", "hugepages-1Gi": "2Gi"}},
           "containers": [{"resources": {"limits": {"hugepages-1Gi": "2Gi"},
                                         "requests": {"cpu": "1", "hugepages-1Gi": "2Gi"}}}]}})",
       {},
       {{"cpu", "1"}, {"hugepages-2Mi", "10Mi"}, {"hugepages-1Gi", "2Gi"}}},
      {"hugepage page sizes split between pod level and container level",
       R"({"spec": {"resources": {"limits": {"hugepages-2Mi": "10Mi"},
                                  "requests": {"cpu": "1", "hugepages-2Mi": "10Mi"}},
           "containers": [{"resources": {"limits": {"hugepages-1Gi": "1Gi"},
                                         "requests": {"memory": "4Mi",
                                                      "hugepages-1Gi": "1Gi"}}}]}})",
       {},
       {{"cpu", "1"}, {"memory", "4Mi"}, {"hugepages-2Mi", "10Mi"}, {"hugepages-1Gi", "1Gi"}}},
  });
}

// TestIsSupportedPodLevelResource.
TEST(PodResourcesTest, UpstreamSupportedPodLevelResources) {
  EXPECT_TRUE(isSupportedPodLevelResource("cpu"));
  EXPECT_TRUE(isSupportedPodLevelResource("memory"));
  EXPECT_FALSE(isSupportedPodLevelResource("ephemeral-storage"));
  EXPECT_TRUE(isSupportedPodLevelResource("hugepages-2Mi"));
  EXPECT_TRUE(isSupportedPodLevelResource("hugepages-1Gi"));
  EXPECT_FALSE(isSupportedPodLevelResource("example.com/gpu"));

  EXPECT_FALSE(isPodLevelRequestsSet(decodeString<Pod>(R"({"spec": {"resources": {}}})")));
  EXPECT_FALSE(isPodLevelRequestsSet(
      decodeString<Pod>(R"({"spec": {"resources": {"limits": {"cpu": "1"}}}})")));
  EXPECT_FALSE(isPodLevelRequestsSet(
      decodeString<Pod>(R"({"spec": {"resources": {"requests": {"storage": "1"}}}})")));
  EXPECT_TRUE(isPodLevelRequestsSet(
      decodeString<Pod>(R"({"spec": {"resources": {"requests": {"hugepages-2Mi": "2Mi"}}}})")));
}

// TestAggregateContainerRequestsAndLimits (the requests) and TestResizeConditions.
TEST(PodResourcesTest, UpstreamAggregateContainerRequests) {
  const std::vector<PodCase> cases = {
      {"one container with requests",
       R"({"spec": {"containers": [{"resources": {"requests": {"cpu": "9"}}}]}})",
       {},
       {{"cpu", "9"}}},
      {"two containers with requests",
       R"({"spec": {"containers": [{"resources": {"requests": {"cpu": "9"}}},
                                   {"resources": {"requests": {"cpu": "9"}}}]}})",
       {},
       {{"cpu", "18"}}},
      {"regular and init containers with requests",
       R"({"spec": {"containers": [{"resources": {"requests": {"cpu": "9"}}}],
                    "initContainers": [{"resources": {"requests": {"cpu": "9"}}}]}})",
       {},
       {{"cpu", "9"}}},
      {"regular, init and sidecar containers with requests",
       R"({"spec": {"containers": [{"resources": {"requests": {"cpu": "9"}}}],
                    "initContainers": [{"restartPolicy": "Always",
                                        "resources": {"requests": {"cpu": "8"}}},
                                       {"resources": {"requests": {"cpu": "6"}}}]}})",
       {},
       {{"cpu", "17"}}},
      {"regular containers with empty requests, but status with non-empty requests",
       R"({"spec": {"containers": [{"name": "container-1"}]},
           "status": {"containerStatuses": [{"name": "container-1",
                                             "resources": {"requests": {"cpu": "2"}}}]}})",
       {.useStatus = true},
       {{"cpu", "2"}}},
      {"always-restart init containers with empty requests, but status with non-empty requests",
       R"({"spec": {"initContainers": [{"name": "container-1", "restartPolicy": "Always"}]},
           "status": {"initContainerStatuses": [{"name": "container-1",
                                                 "resources": {"requests": {"cpu": "2"}}}]}})",
       {.useStatus = true},
       {{"cpu", "2"}}},
      {"aggregate container request/limit resolves directly from pod status when PLR vertical "
       "scaling enabled",
       R"({"spec": {"containers": [{"name": "c1", "resources": {"requests": {"cpu": "1"}}}]},
           "status": {"allocatedResources": {"cpu": "4"},
                      "resources": {"requests": {"cpu": "3"}}}})",
       {.useStatus = true, .podLevelStatus = true},
       {{"cpu", "4"}}},
      {"falls back to container status aggregation when podAllocatedResources is nil",
       R"({"spec": {"containers": [{"name": "c1", "resources": {"requests": {"cpu": "1"}}}]},
           "status": {"containerStatuses": [{"name": "c1", "allocatedResources": {"cpu": "6"},
                                             "resources": {"requests": {"cpu": "5"}}}],
                      "resources": {"requests": {"cpu": "3"}}}})",
       {.useStatus = true, .podLevelStatus = true},
       {{"cpu", "6"}}},
      {"falls back to container status aggregation when podResources is nil",
       R"({"spec": {"containers": [{"name": "c1", "resources": {"requests": {"cpu": "1"}}}]},
           "status": {"containerStatuses": [{"name": "c1", "allocatedResources": {"cpu": "6"},
                                             "resources": {"requests": {"cpu": "5"}}}],
                      "allocatedResources": {"cpu": "6"}}})",
       {.useStatus = true, .podLevelStatus = true},
       {{"cpu", "6"}}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    expectList(aggregateContainerRequests(decodeString<Pod>(c.pod), options(c.opts)), c.requests);
  }

  Pod deferred = decodeString<Pod>(
      R"({"status": {"conditions": [{"type": "PodResizePending", "status": "True",
                                     "reason": "Deferred"}]}})");
  EXPECT_FALSE(isPodResizeInfeasible(deferred));
  deferred.status.conditions[0].reason = "Infeasible";
  EXPECT_TRUE(isPodResizeInfeasible(deferred));
}

// TestPodRequestsAndLimitsVerticalScalingWrappers (the requests).
TEST(PodResourcesTest, UpstreamPodLevelResize) {
  const Opts resize{.useStatus = true, .podLevelStatus = true};
  runPodRequests({
      {"pod level requests with PLR vertical scaling enabled and status populated",
       R"({"spec": {"resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "4"}},
                    "containers": [{"name": "c1", "resources": {"requests": {"cpu": "1"},
                                                                "limits": {"cpu": "2"}}}]},
           "status": {"allocatedResources": {"cpu": "3"},
                      "resources": {"requests": {"cpu": "3.5"}, "limits": {"cpu": "5"}}}})",
       resize,
       {{"cpu", "3.5"}}},
      {"status.resources nil, status.allocatedResources set",
       R"({"spec": {"resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "4"}},
                    "containers": [{"name": "c1", "resources": {"requests": {"cpu": "1"},
                                                                "limits": {"cpu": "2"}}}]},
           "status": {"allocatedResources": {"cpu": "3"}}})",
       resize,
       {{"cpu", "3"}}},
      {"pod level requests with PLR vertical scaling enabled and infeasible resize",
       R"({"spec": {"resources": {"requests": {"cpu": "10"}, "limits": {"cpu": "20"}},
                    "containers": [{"name": "c1", "resources": {"requests": {"cpu": "1"},
                                                                "limits": {"cpu": "2"}}}]}, )" +
           withInfeasible(R"("allocatedResources": {"cpu": "3"},
                             "resources": {"requests": {"cpu": "4"}, "limits": {"cpu": "8"}})") +
           "}",
       resize,
       {{"cpu", "4"}}},
      {"container limits aggregation with infeasible resize",
       R"({"spec": {"containers": [{"name": "c1", "resources": {"limits": {"cpu": "10"}}}]}, )" +
           withInfeasible(R"("containerStatuses": [{"name": "c1",
                                 "resources": {"limits": {"cpu": "6"}}}])") +
           "}",
       {.useStatus = true},
       {}},
      {"non missing container requests applied to init container",
       R"({"spec": {"initContainers": [{"name": "i1",
                                        "resources": {"requests": {"cpu": "1"}}}]}})",
       {.nonMissing = {{"memory", "100Mi"}}},
       {{"cpu", "1"}, {"memory", "100Mi"}}},
      {"non missing container requests applied to regular container",
       R"({"spec": {"containers": [{"name": "c1", "resources": {"requests": {"cpu": "1"}}}]}})",
       {.nonMissing = {{"memory", "100Mi"}}},
       {{"cpu", "1"}, {"memory", "100Mi"}}},
      {"pod level requests, overhead set, and status populated (status includes overhead)",
       R"({"spec": {"overhead": {"cpu": "1", "memory": "500Mi"},
                    "resources": {"requests": {"cpu": "2", "memory": "2Gi"},
                                  "limits": {"cpu": "4", "memory": "4Gi"}}},
           "status": {"allocatedResources": {"cpu": "3", "memory": "2.5Gi"},
                      "resources": {"requests": {"cpu": "3", "memory": "2.5Gi"},
                                    "limits": {"cpu": "5", "memory": "4.5Gi"}}}})",
       resize,
       {{"cpu", "3"}, {"memory", "2.5Gi"}}},
      {"pod-level status ignored without InPlacePodLevelResourcesVerticalScaling",
       R"({"spec": {"resources": {"requests": {"cpu": "2"}},
                    "containers": [{"name": "c1", "resources": {"requests": {"cpu": "1"}}}]},
           "status": {"allocatedResources": {"cpu": "3"},
                      "resources": {"requests": {"cpu": "3.5"}}}})",
       {.useStatus = true, .podLevelStatus = false},
       {{"cpu", "2"}}},
  });
}

// The options a caller does not set follow the process's gates.
TEST(PodResourcesTest, DefaultsFollowFeatureGates) {
  const Pod pod = decodeString<Pod>(
      R"({"spec": {"resources": {"requests": {"cpu": "3"}},
                   "containers": [{"name": "c1", "resources": {"requests": {"cpu": "1",
                                                                            "memory": "1Gi"}}}]},
          "status": {"containerStatuses": [{"name": "c1",
                                            "allocatedResources": {"memory": "2Gi"}}],
                     "allocatedResources": {"cpu": "4"}}})");
  expectList(effectiveRequests(pod), {{"cpu", "4"}, {"memory", "2Gi"}});
  {
    features::ScopedGates g(features::Feature::kInPlacePodLevelResourcesVerticalScaling, false);
    expectList(effectiveRequests(pod), {{"cpu", "3"}, {"memory", "2Gi"}});
  }
  {
    features::ScopedGates g(features::Feature::kPodLevelResources, false);
    expectList(effectiveRequests(pod), {{"cpu", "1"}, {"memory", "2Gi"}});
  }
  {
    // InPlacePodVerticalScaling is locked on in a real process; the option still works.
    features::ScopedGates g(features::Feature::kInPlacePodVerticalScaling, false);
    expectList(effectiveRequests(pod), {{"cpu", "3"}, {"memory", "1Gi"}});
  }
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
    const NodePodRequests got = nodePodRequests(decodeString<Pod>(c.pod));
    EXPECT_EQ(got.requests, c.requests);
    EXPECT_EQ(got.nonZeroMilliCPU, c.nonZeroMilliCPU);
    EXPECT_EQ(got.nonZeroMemory, c.nonZeroMemory);
  }

  // The scoring requests of a pending pod fill every container, pod level replacing cpu.
  expectList(nonZeroRequests(decodeString<Pod>(
                 R"({"spec": {"resources": {"requests": {"cpu": "1"}},
                              "containers": [{"resources": {"requests": {"memory": "1Gi"}}},
                                             {}]}})")),
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
  EXPECT_EQ(schedulingRequestsResource(pod),
            (Resource{3000, 1LL << 30, 0, 0, {{"nvidia.com/gpu", 1}}}));
  features::ScopedGates g(features::Feature::kPodLevelResources, false);
  EXPECT_EQ(schedulingRequestsResource(pod).milliCPU, 1000);
}

}  // namespace
}  // namespace ksched::api
