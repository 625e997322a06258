#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

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

}  // namespace
}  // namespace ksched::api
