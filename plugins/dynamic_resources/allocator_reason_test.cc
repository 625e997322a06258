// Why a node cannot satisfy the claims (Result::reason, ksched's own words: upstream says only
// "cannot allocate all claims"), the errors bad input gives, the feature defaults, and the
// places where ksched's allocator departs from upstream's code.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include <ksched/api/features.h>

#include "plugins/dynamic_resources/allocator.h"
#include "tests/support/dra_allocator_test_util.h"

namespace ksched::plugins::dra {
namespace {

using namespace testutil;  // NOLINT(google-build-using-namespace)

const std::string kGpu = "gpu.example.com";
const std::string kBigMemory =
    "device.capacity[\"gpu.example.com\"].memory.compareTo(quantity(\"80Gi\")) >= 0";

// gpu-0.. on node-1 (pool node-1), 40Gi each, NUMA node i % 2.
std::vector<api::Device> gpus(int n) {
  std::vector<api::Device> out;
  for (int i = 0; i < n; ++i) {
    out.push_back(
        dev("gpu-" + std::to_string(i)).cap("memory", "40Gi").attr("numa", int64_t{i % 2}));
  }
  return out;
}

Case gpuCase(std::vector<api::DeviceRequest> requests, std::vector<api::Device> devices) {
  return Case{
      .features = Features{},
      .claims = {claim("gpu-claim", std::move(requests))},
      .classes = {deviceClass(kGpu, kGpu)},
      .slices = {slice("node-1-gpus", onNode(kNode1), pool(kNode1), kGpu, std::move(devices))}};
}

DeviceId gpuId(int i) { return {kGpu, kNode1, "gpu-" + std::to_string(i)}; }

void expectReason(const Case& c, const std::string& reason,
                  const std::string& message = std::string(kCannotAllocate)) {
  const Result r = run(c);
  EXPECT_EQ(r.code, Result::Code::kUnschedulable);
  EXPECT_EQ(r.message, message);
  EXPECT_EQ(r.reason, reason);
}

TEST(DraAllocatorReason, NoDeviceMatchesTheSelector) {
  expectReason(gpuCase({request("gpu", kGpu, 1, {sel(kBigMemory)})}, gpus(4)),
               "claim gpu-claim, request gpu: no device of class \"gpu.example.com\" matches "
               "selector " +
                   kBigMemory + " on this node (4 devices, 4 of the class)");
}

TEST(DraAllocatorReason, NoDeviceOfTheClass) {
  Case c = gpuCase({request("gpu", "other", 1)}, gpus(2));
  c.classes.push_back(deviceClass("other", "other.example.com"));
  expectReason(c,
               "claim gpu-claim, request gpu: no device of class \"other\" on this node (2 "
               "devices, 0 of the class)");
}

TEST(DraAllocatorReason, TooFewDevices) {
  expectReason(gpuCase({request("gpu", kGpu, 3)}, gpus(2)),
               "claim gpu-claim, request gpu: 3 devices of class \"gpu.example.com\" needed, only "
               "2 on this node (2 devices, 2 of the class)");
}

TEST(DraAllocatorReason, AllMatchingDevicesInUse) {
  Case c = gpuCase({request("gpu", kGpu, 1)}, gpus(4));
  for (int i = 0; i < 4; ++i) c.allocated.push_back(gpuId(i));
  expectReason(c,
               "claim gpu-claim, request gpu: all 4 matching devices of class \"gpu.example.com\" "
               "are in use on this node (4 devices, 4 of the class)");
}

TEST(DraAllocatorReason, UntoleratedTaints) {
  auto d = gpus(2);
  d[0].taints.push_back({"unhealthy", "ecc", "NoSchedule", std::nullopt});
  d[1].taints.push_back({"unhealthy", "ecc", "NoExecute", std::nullopt});
  Case c = gpuCase({request("gpu", kGpu, 1)}, d);
  expectReason(c,
               "claim gpu-claim, request gpu: all 2 matching devices of class \"gpu.example.com\" "
               "have an untolerated taint (unhealthy=ecc:NoSchedule, unhealthy=ecc:NoExecute) on "
               "this node (2 devices, 2 of the class)");

  // Tolerating the key with Exists, any effect, lets gpu-0 through.
  c.claims[0].spec.requests[0].exactly->tolerations = {
      {"unhealthy", "Exists", "", "", std::nullopt}};
  const Result r = run(c);
  ASSERT_EQ(r.code, Result::Code::kAllocated) << r.reason;
  EXPECT_EQ(r.allocations[0].devices.at(0).device, "gpu-0");
  EXPECT_EQ(r.allocations[0].devices[0].tolerations.size(), 1u);
}

TEST(DraAllocatorReason, SeveralCauses) {
  auto d = gpus(3);
  d[0].taints.push_back({"unhealthy", "", "NoSchedule", std::nullopt});
  Case c = gpuCase({request("gpu", kGpu, 2)}, d);
  c.allocated.push_back(gpuId(1));
  expectReason(c,
               "claim gpu-claim, request gpu: needs 2 devices of class \"gpu.example.com\", 1 of 3 "
               "matching devices usable (1 in use; 1 with untolerated taint unhealthy:NoSchedule) "
               "on this node (3 devices, 3 of the class)");
}

TEST(DraAllocatorReason, CountersExhausted) {
  // Two partitions of one 40Gi GPU; the 20Gi one is taken, the 40Gi one no longer fits.
  Case c = gpuCase({request("gpu", kGpu, 1)}, {dev("whole").consumes("mem", {{"memory", "40Gi"}}),
                                               dev("half").consumes("mem", {{"memory", "20Gi"}})});
  c.slices[0].spec.pool.resourceSliceCount = 2;
  c.slices.push_back(counterSlice("node-1-counters", onNode(kNode1), pool(kNode1, 2), kGpu,
                                  {counterSet("mem", {{"memory", "40Gi"}})}));
  c.allocated.push_back({kGpu, kNode1, "half"});
  expectReason(c,
               "claim gpu-claim, request gpu: needs 1 device of class \"gpu.example.com\", 0 of 2 "
               "matching devices usable (1 in use; 1 with counters exhausted in counter set mem of "
               "pool gpu.example.com/node-1) on this node (2 devices, 2 of the class)");

  c.allocated.clear();
  c.claims[0].spec.requests[0].exactly->count = 2;  // 40Gi + 20Gi > 40Gi
  expectReason(c,
               "counters exhausted: claim gpu-claim: requests gpu together need devices that "
               "consume more shared counters than are left on this node");
}

TEST(DraAllocatorReason, MatchAttributeCannotBeMet) {
  Case c = gpuCase({request("a", kGpu, 1), request("b", kGpu, 1)}, gpus(2));
  c.claims[0].spec.constraints = {matchAttribute("gpu.example.com/numa")};
  expectReason(c,
               "claim gpu-claim: constraint matchAttribute gpu.example.com/numa cannot be met by "
               "the matching devices of requests a, b on this node");
}

TEST(DraAllocatorReason, DistinctAttributeCannotBeMet) {
  Case c = gpuCase({request("gpu", kGpu, 3)}, gpus(3));
  c.claims[0].spec.constraints = {distinctAttribute("gpu.example.com/numa")};
  expectReason(c,
               "claim gpu-claim: constraint distinctAttribute gpu.example.com/numa cannot be met "
               "by the matching devices of request gpu on this node");
}

TEST(DraAllocatorReason, NoSubrequestFits) {
  expectReason(gpuCase({firstAvailable("gpu", {subRequest("big", kGpu, 1, {sel(kBigMemory)}),
                                               subRequest("three", kGpu, 3)})},
                       gpus(2)),
               "claim gpu-claim, request gpu: no subrequest can be satisfied: gpu/big: no device "
               "of class \"gpu.example.com\" matches selector " +
                   kBigMemory +
                   " on this node (2 devices, 2 of the class); gpu/three: 3 devices of class "
                   "\"gpu.example.com\" needed, only 2 on this node (2 devices, 2 of the class)");
}

TEST(DraAllocatorReason, ClaimsCompeteForDevices) {
  Case c = gpuCase({request("gpu", kGpu, 1)}, gpus(1));
  c.claims.push_back(claim("other-claim", {request("gpu", kGpu, 1)}));
  expectReason(c,
               "claims gpu-claim, other-claim together need 2 devices, only 1 matching device "
               "usable on this node");
}

TEST(DraAllocatorReason, NoDevicesOnTheNode) {
  Case c = gpuCase({request("gpu", kGpu, 1)}, gpus(2));
  c.node = node(kNode2, kRegion1);
  expectReason(c, "claim gpu-claim, request gpu: no devices on this node");
}

TEST(DraAllocatorReason, PoolsBeingUpdatedOrInvalid) {
  Case incomplete = gpuCase({request("gpu", kGpu, 1)}, gpus(1));
  incomplete.slices[0].spec.pool.resourceSliceCount = 2;
  expectReason(incomplete,
               "claim gpu-claim, request gpu: no devices on this node; resource pool "
               "gpu.example.com/node-1 is being updated");

  Case invalid = gpuCase({request("gpu", kGpu, 1)}, {dev("gpu-0"), dev("gpu-0")});
  expectReason(invalid,
               "claim gpu-claim, request gpu: no devices on this node; resource pool "
               "gpu.example.com/node-1 is invalid: duplicate device name gpu-0",
               std::string(kInvalidPools));
}

TEST(DraAllocatorReason, AllWithADeviceInUse) {
  Case c = gpuCase({allRequest("gpu", kGpu)}, gpus(3));
  c.allocated.push_back(gpuId(1));
  expectReason(c,
               "claim gpu-claim, request gpu: asks for all 3 matching devices of class "
               "\"gpu.example.com\", 1 of them not usable (1 in use) on this node (3 devices, 3 of "
               "the class)");
}

// All over devices that consume counters dereferenced a missing pool upstream (kubernetes
// #138882, fixed by #138885); here it allocates, or says the counters are short.
TEST(DraAllocatorDeparture, AllOverPartitionsNeverCrashes) {
  Case c = gpuCase({allRequest("gpu", kGpu)}, {dev("p0").consumes("mem", {{"memory", "20Gi"}}),
                                               dev("p1").consumes("mem", {{"memory", "20Gi"}})});
  c.slices[0].spec.pool.resourceSliceCount = 2;
  c.slices.push_back(counterSlice("node-1-counters", onNode(kNode1), pool(kNode1, 2), kGpu,
                                  {counterSet("mem", {{"memory", "40Gi"}})}));
  Result r = run(c);
  ASSERT_EQ(r.code, Result::Code::kAllocated) << r.reason;
  EXPECT_EQ(r.allocations[0].devices.size(), 2u);

  c.slices.back().spec.sharedCounters[0].counters["memory"] = api::Quantity::parse("30Gi");
  expectReason(c,
               "counters exhausted: claim gpu-claim: requests gpu together need devices that "
               "consume more shared counters than are left on this node");
}

// Upstream's allocateDevice adds a device's counters before checking constraints and taints and
// keeps them when those reject the device, so later candidates see counters that are not used.
// Here p1 (NUMA 1) is rejected by matchAttribute and p2 still fits next to p0.
TEST(DraAllocatorDeparture, RejectedDeviceGivesItsCountersBack) {
  Case c = gpuCase({request("gpu", kGpu, 2)},
                   {dev("p0").attr("numa", int64_t{0}).consumes("mem", {{"memory", "20Gi"}}),
                    dev("p1").attr("numa", int64_t{1}).consumes("mem", {{"memory", "20Gi"}}),
                    dev("p2").attr("numa", int64_t{0}).consumes("mem", {{"memory", "20Gi"}})});
  c.claims[0].spec.constraints = {matchAttribute("gpu.example.com/numa")};
  c.slices[0].spec.pool.resourceSliceCount = 2;
  c.slices.push_back(counterSlice("node-1-counters", onNode(kNode1), pool(kNode1, 2), kGpu,
                                  {counterSet("mem", {{"memory", "40Gi"}})}));
  const Result r = run(c);
  ASSERT_EQ(r.code, Result::Code::kAllocated) << r.reason;
  ASSERT_EQ(r.allocations[0].devices.size(), 2u);
  EXPECT_EQ(r.allocations[0].devices[0].device, "p0");
  EXPECT_EQ(r.allocations[0].devices[1].device, "p2");
}

// Upstream's distinctAttribute remembers one value per request, so a third device of the same
// request is only compared with the second. Here every device of the set is compared.
TEST(DraAllocatorDeparture, DistinctAttributeComparesEveryDevice) {
  Case c = gpuCase({request("gpu", kGpu, 3)}, gpus(4));
  c.claims[0].spec.constraints = {distinctAttribute("gpu.example.com/numa")};
  EXPECT_EQ(run(c).code, Result::Code::kUnschedulable);

  c.claims[0].spec.requests[0].exactly->count = 2;
  const Result r = run(c);
  ASSERT_EQ(r.code, Result::Code::kAllocated) << r.reason;
  EXPECT_EQ(r.allocations[0].devices[0].device, "gpu-0");
  EXPECT_EQ(r.allocations[0].devices[1].device, "gpu-1");
}

// Pools are tried by (driver, pool), except that pools with binding conditions come last.
TEST(DraAllocatorOrder, PoolsWithBindingConditionsLast) {
  Case c{.features = Features{},
         .claims = {claim("c", {request("r", kGpu, 1)})},
         .classes = {deviceClass(kGpu, kGpu)},
         .slices = {slice("s2", onNode(kNode1), pool("b-pool"), kGpu, {dev("plain")}),
                    slice("s1", onNode(kNode1), pool("a-pool"), kGpu,
                          {dev("waits").binding({"Attached"}, {"AttachFailed"})})}};
  Result r = run(c);
  ASSERT_EQ(r.code, Result::Code::kAllocated) << r.reason;
  EXPECT_EQ(r.allocations[0].devices.at(0).pool, "b-pool");

  c.slices[0].spec.devices[0].bindingConditions = {"Ready"};  // both wait: by name again
  r = run(c);
  ASSERT_EQ(r.code, Result::Code::kAllocated) << r.reason;
  EXPECT_EQ(r.allocations[0].devices.at(0).pool, "a-pool");
  EXPECT_EQ(r.allocations[0].devices[0].bindingConditions, std::vector<std::string>{"Attached"});
  EXPECT_EQ(r.allocations[0].devices[0].bindingFailureConditions,
            std::vector<std::string>{"AttachFailed"});
}

TEST(DraAllocatorErrors, CelRuntimeErrorIsAnErrorForTheClaim) {
  Case c = gpuCase(
      {request("gpu", kGpu, 1, {sel("device.attributes[\"gpu.example.com\"].model == \"x\"")})},
      gpus(1));
  c.claims[0].metadata.namespace_ = "team-a";
  const Result r = run(c);
  EXPECT_EQ(r.code, Result::Code::kError);
  EXPECT_EQ(r.message,
            "claim team-a/gpu-claim: selector #0 on device gpu.example.com/node-1/gpu-0: CEL "
            "runtime error: no such key: model");
}

TEST(DraAllocatorErrors, ClassCelCompileError) {
  Case c = gpuCase({request("gpu", kGpu, 1)}, gpus(1));
  c.classes[0].spec.selectors[0].celExpression = "noSuchVar";
  const Result r = run(c);
  EXPECT_EQ(r.code, Result::Code::kError);
  EXPECT_EQ(r.message.rfind("class gpu.example.com: selector #0: CEL compile error: ", 0), 0u)
      << r.message;
}

TEST(DraAllocatorErrors, SliceSelectorWithTwoTerms) {
  Case c = gpuCase({request("gpu", kGpu, 1)}, gpus(1));
  api::NodeSelector two = labelSelector("region", {kRegion1});
  two.nodeSelectorTerms.push_back(labelSelector("planet", {"earth"}).nodeSelectorTerms[0]);
  c.slices[0].spec.nodeName.reset();
  c.slices[0].spec.nodeSelector = two;
  const Result r = run(c);
  EXPECT_EQ(r.code, Result::Code::kError);
  EXPECT_EQ(r.message,
            "create NodeSelector for claim gpu-claim: unsupported ResourceSlice.NodeSelector with "
            "2 terms");
}

TEST(DraAllocatorFeatures, DefaultsAreKubernetes137s) {
  EXPECT_EQ(Features::fromGates(features::Gates{}), Features{});
  const Features all{};
  EXPECT_TRUE(all.adminAccess && all.prioritizedList && all.partitionableDevices &&
              all.deviceTaints && all.deviceBindingAndStatus && all.consumableCapacity);

  features::Gates gates;
  gates.force(features::Feature::kDRAPartitionableDevices, false);
  gates.force(features::Feature::kDRADeviceBindingConditions, false);
  const Features f = Features::fromGates(gates);
  EXPECT_FALSE(f.partitionableDevices);
  EXPECT_FALSE(f.deviceBindingAndStatus);
  EXPECT_TRUE(f.consumableCapacity);
}

}  // namespace
}  // namespace ksched::plugins::dra
