// Upstream's own tables for the effective requests (k8s.io/component-helpers resource
// helpers_test.go, kubernetes master after v1.37.0-beta.0), carried over as facts: the pods, the
// options and the expected requests.
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include <ksched/api/pod_resources.h>

#include "tests/support/api_test_util.h"
#include "tests/unit/api/pod_resources_test_util.h"

namespace ksched::api {
namespace {

using testing::decodeString;
using testing::Expected;
using testing::expectList;

// Options are spelled out, upstream's zero value by default (no pod-level skip, no status),
// whatever the gates.
struct Opts {
  bool skipPodLevel = false;
  bool useStatus = false;
  bool podLevelStatus = false;
  bool excludeOverhead = false;
  Expected nonMissing;
};

PodResourcesOptions options(const Opts& o) {
  PodResourcesOptions out{features::Gates{}};
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

}  // namespace
}  // namespace ksched::api
