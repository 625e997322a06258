// Device scoring in the allocator (allocator_scoring.cc): off, the first fit as upstream; with a
// topology attribute, a pod's devices from one domain (the tightest that holds them) when one
// can, the first fit when none can; with packing, partitions of the most used counter sets
// first; and the quality each allocation is rated.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "plugins/dynamic_resources/allocator.h"
#include "tests/support/dra_allocator_test_util.h"

namespace ksched::plugins::dra {
namespace {

using namespace testutil;  // NOLINT(google-build-using-namespace)

const std::string kPcieRoot = "resource.kubernetes.io/pcieRoot";
const std::string kRoot0 = "pci0000:00";
const std::string kRoot1 = "pci0000:40";

// Eight GPUs whose PCIe roots alternate, as a driver may list them (by bus order of another
// kind): gpu-0, gpu-2, gpu-4, gpu-6 under kRoot0, the odd ones under kRoot1.
Case eightGpus() {
  Case c;
  c.features = Features{};
  c.classes = {deviceClass(kClassA, kDriverA)};
  std::vector<api::Device> gpus;
  for (int i = 0; i < 8; ++i) {
    gpus.push_back(
        dev("gpu-" + std::to_string(i)).attr(kPcieRoot, (i % 2 == 0 ? kRoot0 : kRoot1).c_str()));
  }
  c.slices = {slice("gpus", onNode(kNode1), pool("pool-1"), kDriverA, std::move(gpus))};
  return c;
}

DeviceScoring topology() { return {kPcieRoot, false}; }

// The devices of every claim's allocation, "gpu-0 gpu-2 ...".
std::string devicesOf(const Result& r) {
  std::string s;
  for (const auto& a : r.allocations) {
    for (const auto& d : a.devices) s += (s.empty() ? "" : " ") + d.device;
  }
  return s;
}

TEST(DraDeviceScoring, OffItIsTheFirstFitAndRatesNothing) {
  Case c = eightGpus();
  c.claims = {claim("claim-0", {request("gpus", kClassA, 4)})};
  const Result r = run(c);
  ASSERT_TRUE(r.allocated()) << r.message;
  EXPECT_EQ(devicesOf(r), "gpu-0 gpu-1 gpu-2 gpu-3");  // two roots
  EXPECT_FALSE(r.quality);
}

TEST(DraDeviceScoring, FourGpusComeFromOneRootWhereTheFirstFitSplitsThem) {
  Case c = eightGpus();
  c.claims = {claim("claim-0", {request("gpus", kClassA, 4)})};
  c.scoring = topology();
  const Result r = run(c);
  ASSERT_TRUE(r.allocated()) << r.message;
  EXPECT_EQ(devicesOf(r), "gpu-0 gpu-2 gpu-4 gpu-6");
  ASSERT_TRUE(r.quality);
  EXPECT_EQ(r.quality->score, 100);
  EXPECT_EQ(r.quality->reason, "4 devices in pcieRoot pci0000:00");
  // The allocation is otherwise the one upstream would write.
  EXPECT_EQ(r.allocations[0].nodeSelector, localNode(kNode1));
}

TEST(DraDeviceScoring, TheTightestRootThatHoldsTheDevicesComesFirst) {
  Case c = eightGpus();
  c.allocated = {{kDriverA, "pool-1", "gpu-0"}};  // kRoot0 has 3 left, kRoot1 4
  c.claims = {claim("claim-0", {request("gpus", kClassA, 2)})};
  EXPECT_EQ(devicesOf(run(c)), "gpu-1 gpu-2");
  c.scoring = topology();
  EXPECT_EQ(devicesOf(run(c)), "gpu-2 gpu-4");
  // Three GPUs: kRoot0 still holds them; four: only kRoot1 does.
  c.claims = {claim("claim-0", {request("gpus", kClassA, 3)})};
  EXPECT_EQ(devicesOf(run(c)), "gpu-2 gpu-4 gpu-6");
  c.claims = {claim("claim-0", {request("gpus", kClassA, 4)})};
  EXPECT_EQ(devicesOf(run(c)), "gpu-1 gpu-3 gpu-5 gpu-7");
}

TEST(DraDeviceScoring, SeveralRequestsAndSeveralClaimsShareTheRootToo) {
  Case c = eightGpus();
  c.allocated = {{kDriverA, "pool-1", "gpu-0"}};
  c.scoring = topology();
  c.claims = {claim("claim-0", {request("a", kClassA, 1), request("b", kClassA, 1)})};
  EXPECT_EQ(devicesOf(run(c)), "gpu-2 gpu-4");
  c.claims = {claim("claim-0", {request("a", kClassA, 1)}),
              claim("claim-1", {request("b", kClassA, 1)})};
  EXPECT_EQ(devicesOf(run(c)), "gpu-2 gpu-4");
  // One device: nothing to align, the first fit.
  c.claims = {claim("claim-0", {request("a", kClassA, 1)})};
  const Result one = run(c);
  EXPECT_EQ(devicesOf(one), "gpu-1");
  ASSERT_TRUE(one.quality);
  EXPECT_EQ(one.quality->score, 100);
  EXPECT_EQ(one.quality->reason, "1 device in pcieRoot pci0000:40");
}

TEST(DraDeviceScoring, WhenNoRootHoldsThemItIsTheFirstFitRatedLower) {
  Case c = eightGpus();
  c.allocated = {{kDriverA, "pool-1", "gpu-0"},
                 {kDriverA, "pool-1", "gpu-1"},
                 {kDriverA, "pool-1", "gpu-2"},
                 {kDriverA, "pool-1", "gpu-3"}};
  c.claims = {claim("claim-0", {request("gpus", kClassA, 3)})};
  c.scoring = topology();
  Result r = run(c);
  EXPECT_EQ(devicesOf(r), "gpu-4 gpu-5 gpu-6");
  c.claims = {claim("claim-0", {request("gpus", kClassA, 4)})};
  r = run(c);
  ASSERT_TRUE(r.allocated()) << r.message;
  EXPECT_EQ(devicesOf(r), "gpu-4 gpu-5 gpu-6 gpu-7");
  ASSERT_TRUE(r.quality);
  EXPECT_EQ(r.quality->score, 50);
  EXPECT_EQ(r.quality->reason, "4 devices split over 2 pcieRoot values, 2 in pci0000:00");
  // A constraint that no single root can meet: the first fit still finds the devices.
  c.allocated.clear();
  c.claims = {claim("claim-0", {request("gpus", kClassA, 2)}, {distinctAttribute(kPcieRoot)})};
  r = run(c);
  ASSERT_TRUE(r.allocated()) << r.message;
  EXPECT_EQ(devicesOf(r), "gpu-0 gpu-1");
  // More devices than the node has: unschedulable, as without scoring.
  c.claims = {claim("claim-0", {request("gpus", kClassA, 9)})};
  r = run(c);
  EXPECT_EQ(r.code, Result::Code::kUnschedulable);
  EXPECT_EQ(r.message, kCannotAllocate);
}

TEST(DraDeviceScoring, DevicesWithoutTheAttributeJoinAnyRoot) {
  Case c = eightGpus();
  c.slices[0].spec.devices[1].attributes.clear();  // gpu-1 has no root
  c.claims = {claim("claim-0", {request("gpus", kClassA, 5)})};
  c.scoring = topology();
  const Result r = run(c);
  ASSERT_TRUE(r.allocated()) << r.message;
  EXPECT_EQ(devicesOf(r), "gpu-0 gpu-1 gpu-2 gpu-4 gpu-6");
  EXPECT_EQ(r.quality->reason, "4 devices in pcieRoot pci0000:00");
}

TEST(DraDeviceScoring, TheFilterDeadlineStillApplies) {
  Case c = eightGpus();
  c.claims = {claim("claim-0", {request("gpus", kClassA, 4)})};
  c.scoring = topology();
  const Result r = run(c, Allocator::Clock::now() - std::chrono::seconds(1));
  EXPECT_EQ(r.code, Result::Code::kTimedOut);
}

// Two GPUs of 40Gi, each split in halves that consume its counter set; one half of gpu-1 is in
// use.
Case halves() {
  Case c;
  c.features = Features{};
  c.classes = {deviceClass(kClassA, kDriverA)};
  std::vector<api::Device> parts;
  for (const char* gpu : {"gpu-0", "gpu-1"}) {
    for (const char* half : {"a", "b"}) {
      parts.push_back(dev(std::string(gpu) + "-" + half).consumes(gpu, {{"memory", "20Gi"}}));
    }
  }
  c.slices = {counterSlice("counters", onNode(kNode1), pool("pool-1", 2), kDriverA,
                           {counterSet("gpu-0", {{"memory", "40Gi"}}),
                            counterSet("gpu-1", {{"memory", "40Gi"}})}),
              slice("parts", onNode(kNode1), pool("pool-1", 2), kDriverA, std::move(parts))};
  c.allocated = {{kDriverA, "pool-1", "gpu-1-a"}};
  c.claims = {claim("claim-0", {request("half", kClassA, 1)})};
  return c;
}

TEST(DraDeviceScoring, PackingFillsThePartlyUsedDeviceFirst) {
  Case c = halves();
  EXPECT_EQ(devicesOf(run(c)), "gpu-0-a");  // first fit: a second GPU broken up
  c.scoring.packPartitions = true;
  Result r = run(c);
  ASSERT_TRUE(r.allocated()) << r.message;
  EXPECT_EQ(devicesOf(r), "gpu-1-b");
  ASSERT_TRUE(r.quality);
  EXPECT_EQ(r.quality->score, 100);
  EXPECT_EQ(r.quality->reason, "partitions fill counter set gpu-1 to 100%");
  // Two halves: gpu-1's last, then one of gpu-0, which is half used after.
  c.claims = {claim("claim-0", {request("half", kClassA, 2)})};
  r = run(c);
  EXPECT_EQ(devicesOf(r), "gpu-1-b gpu-0-a");
  EXPECT_EQ(r.quality->score, 75);
  EXPECT_EQ(r.quality->reason, "partitions fill their 2 counter sets to 75% on average");
  // Without partitionable devices the packing has nothing to rate.
  c = eightGpus();
  c.claims = {claim("claim-0", {request("gpus", kClassA, 1)})};
  c.scoring.packPartitions = true;
  r = run(c);
  EXPECT_EQ(devicesOf(r), "gpu-0");
  EXPECT_EQ(r.quality->reason, "no partitions");
}

TEST(DraDeviceScoring, TopologyWeighsThreeTimesPacking) {
  Case c = halves();
  for (auto& d : c.slices[1].spec.devices) d.attributes[kPcieRoot] = {std::string(kRoot0)};
  c.scoring = {kPcieRoot, true};
  const Result r = run(c);
  ASSERT_TRUE(r.quality);
  EXPECT_EQ(r.quality->score, 100);
  EXPECT_EQ(r.quality->reason,
            "1 device in pcieRoot pci0000:00; partitions fill counter set gpu-1 to 100%");
  c.allocated.clear();
  const Result fresh = run(c);
  EXPECT_EQ(fresh.quality->score, (3 * 100 + 50) / 4);
}

}  // namespace
}  // namespace ksched::plugins::dra
