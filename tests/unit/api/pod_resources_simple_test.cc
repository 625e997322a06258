// The pods a scheduler sees nearly always (containers asking only for cpu, memory and
// ephemeral-storage; no init containers, pod-level requests, overhead or resize status) have
// their amounts summed in place rather than through the general formula's lists. Each case
// says the amounts, and the same pod with a zero-requesting init container (which leaves every
// amount as it is but takes the general formula) must give the same.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <ksched/api/features.h>
#include <ksched/api/pod_resources.h>

#include "tests/support/api_test_util.h"

namespace ksched::api {
namespace {

using testing::decodeString;

struct Case {
  std::string name;
  std::string containers;  // the "containers" array
  std::string status = "{}";
  int64_t milliCPU, memory, storage;           // nodePodRequests' requests
  int64_t nonZeroMilliCPU, nonZeroMemory;      // and its scoring amounts
  int64_t fitMilliCPU, fitMemory, fitStorage;  // schedulingRequestsResource
};

constexpr int64_t kMi = 1024 * 1024;

std::string podJson(const Case& c, bool withInit) {
  const std::string init = withInit
                               ? R"("initContainers": [{"name": "zero", "resources": {"requests":
                    {"cpu": "0", "memory": "0"}}}], )"
                               : "";
  return R"({"metadata": {"name": "p", "namespace": "ns", "uid": "u"}, "spec": {)" + init +
         R"("containers": )" + c.containers + R"(}, "status": )" + c.status + "}";
}

void expectAmounts(const Pod& pod, const Case& c, const features::Gates& gates) {
  const NodePodRequests got = nodePodRequests(pod, gates);
  EXPECT_EQ(got.requests.milliCPU, c.milliCPU);
  EXPECT_EQ(got.requests.memory, c.memory);
  EXPECT_EQ(got.requests.ephemeralStorage, c.storage);
  EXPECT_EQ(got.nonZeroMilliCPU, c.nonZeroMilliCPU);
  EXPECT_EQ(got.nonZeroMemory, c.nonZeroMemory);
  const Resource fit = schedulingRequestsResource(pod, gates);
  EXPECT_EQ(fit.milliCPU, c.fitMilliCPU);
  EXPECT_EQ(fit.memory, c.fitMemory);
  EXPECT_EQ(fit.ephemeralStorage, c.fitStorage);
}

TEST(PodResourcesSimpleTest, SummedInPlaceAsTheGeneralFormulaSumsThem) {
  const std::vector<Case> cases = {
      {"one container", R"([{"name": "a", "resources": {"requests":
           {"cpu": "250m", "memory": "128Mi"}}}])",
       "{}", 250, 128 * kMi, 0, 250, 128 * kMi, 250, 128 * kMi, 0},
      {"no requests: the scoring defaults", R"([{"name": "a"}])", "{}", 0, 0, 0, 100, 200 * kMi, 0,
       0, 0},
      {"cpu in one container, memory in the other", R"([
           {"name": "a", "resources": {"requests": {"cpu": "300m"}}},
           {"name": "b", "resources": {"requests": {"memory": "1Gi"}}}])",
       "{}", 300, 1024 * kMi, 0, 400, 1224 * kMi, 300, 1024 * kMi, 0},
      {"an explicit zero is kept, not defaulted", R"([{"name": "a", "resources": {"requests":
           {"cpu": "0", "memory": "0"}}}])",
       "{}", 0, 0, 0, 0, 0, 0, 0, 0},
      {"fractions summed before rounding up", R"([
           {"name": "a", "resources": {"requests": {"cpu": "0.0001", "memory": "1.5"}}},
           {"name": "b", "resources": {"requests": {"cpu": "0.0001", "memory": "1.5"}}}])",
       "{}", 1, 3, 0, 1, 3, 1, 3, 0},
      {"ephemeral storage", R"([{"name": "a", "resources": {"requests":
           {"cpu": "1", "ephemeral-storage": "2Gi"}}}, {"name": "b", "resources": {"requests":
           {"ephemeral-storage": "1Gi"}}}])",
       "{}", 1000, 0, 3072 * kMi, 1100, 400 * kMi, 1000, 0, 3072 * kMi},
      {"bound: the PodScheduled condition changes nothing", R"([{"name": "a", "resources":
           {"requests": {"cpu": "2", "memory": "4Gi"}}}])",
       R"({"conditions": [{"type": "PodScheduled", "status": "True"}]})", 2000, 4096 * kMi, 0, 2000,
       4096 * kMi, 2000, 4096 * kMi, 0},
      {"no containers", "[]", "{}", 0, 0, 0, 0, 0, 0, 0, 0},
      // Not simple: the general formula, whichever way the pod is written.
      {"an extended resource", R"([{"name": "a", "resources": {"requests":
           {"cpu": "1", "example.com/gpu": "2"}}}])",
       "{}", 1000, 0, 0, 1000, 200 * kMi, 1000, 0, 0},
      {"a resize status above the spec", R"([{"name": "a", "resources": {"requests":
           {"cpu": "500m", "memory": "100Mi"}}}])",
       R"({"containerStatuses": [{"name": "a", "allocatedResources": {"cpu": "800m",
           "memory": "100Mi"}}]})",
       800, 100 * kMi, 0, 800, 100 * kMi, 500, 100 * kMi, 0},
      {"an infeasible resize", R"([{"name": "a", "resources": {"requests": {"cpu": "2"}}}])",
       R"({"conditions": [{"type": "PodResizePending", "status": "True",
           "reason": "Infeasible"}],
           "containerStatuses": [{"name": "a", "allocatedResources": {"cpu": "1"}}]})",
       1000, 0, 0, 1000, 200 * kMi, 2000, 0, 0},
  };
  const features::Gates defaults;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    expectAmounts(decodeString<Pod>(podJson(c, false)), c, defaults);
    expectAmounts(decodeString<Pod>(podJson(c, true)), c, defaults);
  }
}

}  // namespace
}  // namespace ksched::api
