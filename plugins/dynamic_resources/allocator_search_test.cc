// The allocator against upstream's shared allocator table: pools spanning nodes, invalid and
// incomplete pools, and how much searching upstream's search takes (its counts of allocateOne
// calls, carried over as Result::steps); then the deadline and concurrent use.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "plugins/dynamic_resources/allocator.h"
#include "tests/support/dra_allocator_test_util.h"

namespace ksched::plugins::dra {
namespace {

using namespace testutil;  // NOLINT(google-build-using-namespace)
using Allocations = std::vector<api::AllocationResult>;
using Table = std::vector<NamedCase>;

const std::string kClaim0 = "claim-0";
const std::string kReq0 = "req-0";
const std::string kReq1 = "req-1";
const std::string kReq2 = "req-2";
const std::string kPool1 = "pool-1";
const std::string kPool2 = "pool-2";
const std::string kDevice1 = "device-1";
const std::string kDevice2 = "device-2";
const std::string kDevice3 = "device-3";
const std::string kDevice4 = "device-4";

api::AllocationResult local(std::vector<api::DeviceRequestAllocationResult> devices) {
  return allocation(localNode(kNode1), std::move(devices));
}

api::DeviceRequestAllocationResult resA(const std::string& req, const std::string& pool,
                                        const std::string& device) {
  return result(req, kDriverA, pool, device);
}

api::ResourceClaim oneOfA() { return claim(kClaim0, {request(kReq0, kClassA, 1)}); }

api::DeviceSelector typeIs(const char* t) {
  return sel(std::string("device.attributes[\"driver-a\"].type == \"") + t + "\"");
}

Table poolCases() {
  const api::DeviceClass classA = deviceClass(kClassA, kDriverA);
  const auto on = [](const std::string& name, const std::string& node, api::ResourcePool p,
                     const std::string& device) {
    return slice(name, onNode(node), std::move(p), kDriverA, {dev(device)});
  };
  return {
      {"allocation-mode-all-with-multi-host-resource-pool",
       {.claims = {claim(kClaim0, {allRequest(kReq0, kClassA)})},
        .classes = {classA},
        .slices = {on("slice-1", kNode1, pool(kPool1, 2), kDevice1),
                   on("slice-2", kNode2, pool(kPool1, 2), kDevice2)},
        .want = Allocations{local({resA(kReq0, kPool1, kDevice1)})}}},
      {"multi-host-resource-pool-with-stale-slice-for-current-node",
       {.claims = {oneOfA()},
        .classes = {classA},
        .slices = {on("slice-1", kNode1, pool(kPool1, 2, 1), kDevice1),
                   on("slice-2", kNode2, pool(kPool1, 2, 2), kDevice2)}}},
      {"multi-host-resource-pool-complete-update-from-node-1-to-node-2",
       {.claims = {oneOfA()},
        .classes = {classA},
        .slices = {on("slice-1", kNode1, pool(kPool1, 2, 1), kDevice1),
                   on("slice-1", kNode1, pool(kPool1, 2, 1), kDevice2),
                   on("slice-2", kNode2, pool(kPool1, 2, 2), kDevice1),
                   on("slice-2", kNode2, pool(kPool1, 2, 2), kDevice2)},
        .want = Allocations{local({resA(kReq0, kPool1, kDevice1)})}}},
      {"multi-host-resource-pool-complete-update-from-node-2-to-node-1",
       {.claims = {oneOfA()},
        .classes = {classA},
        .slices = {on("slice-1", kNode2, pool(kPool1, 2, 1), kDevice1),
                   on("slice-1", kNode2, pool(kPool1, 2, 1), kDevice2),
                   on("slice-2", kNode1, pool(kPool1, 2, 2), kDevice1),
                   on("slice-2", kNode1, pool(kPool1, 2, 2), kDevice2)},
        .want = Allocations{local({resA(kReq0, kPool1, kDevice1)})}}},
      {"multi-host-resource-pool-incomplete-update-from-node-1-to-node-2",
       {.claims = {oneOfA()},
        .classes = {classA},
        .slices = {on("slice-1", kNode1, pool(kPool1, 2, 1), kDevice1),
                   on("slice-1", kNode1, pool(kPool1, 2, 1), kDevice2),
                   on("slice-2", kNode2, pool(kPool1, 2, 2), kDevice1)},
        .want = Allocations{local({resA(kReq0, kPool1, kDevice1)})}}},
      {"multi-host-resource-pool-incomplete-update-from-node-2-to-node-1",
       {.claims = {oneOfA()},
        .classes = {classA},
        .slices = {on("slice-1", kNode2, pool(kPool1, 2, 1), kDevice1),
                   on("slice-1", kNode2, pool(kPool1, 2, 1), kDevice2),
                   on("slice-2", kNode1, pool(kPool1, 2, 2), kDevice1)}}},
      {"different-resourceslices-in-pool-can-target-different-nodes",
       {.claims = {oneOfA()},
        .classes = {classA},
        .slices = {on("slice-1", kNode2, pool(kPool1, 2), kDevice1),
                   on("slice-2", kNode1, pool(kPool1, 2), kDevice2)},
        .want = Allocations{local({resA(kReq0, kPool1, kDevice2)})}}},
      {"invalid-pool-is-ok-if-devices-can-be-allocated-from-other",
       {.claims = {oneOfA()},
        .classes = {classA},
        .slices = {on("slice-1", kNode1, pool(kPool1, 2), kDevice1),
                   on("slice-2", kNode1, pool(kPool1, 2), kDevice1),
                   on("slice-3", kNode1, pool(kPool2, 1), kDevice2)},
        .want = Allocations{local({resA(kReq0, kPool2, kDevice2)})}}},
      {"invalid-pool-is-error-if-no-other-device-can-be-allocated",
       {.claims = {oneOfA()},
        .allocated = {{kDriverA, kPool2, kDevice2}},
        .classes = {classA},
        .slices = {on("slice-1", kNode1, pool(kPool1, 2), kDevice1),
                   on("slice-2", kNode1, pool(kPool1, 2), kDevice1),
                   on("slice-3", kNode1, pool(kPool2, 1), kDevice2)},
        .wantMessage = std::string(kInvalidPools)}},
      {"no-allocation-from-incomplete-pools",
       {.claims = {oneOfA()},
        .classes = {classA},
        .slices = {on("slice-1", kNode1, pool(kPool1, 2), kDevice1)}}},
  };
}

Table combinationCases() {
  const api::DeviceClass classA = deviceClass(kClassA, kDriverA);
  const auto four = [] {
    return std::vector<api::Device>{dev(kDevice1), dev(kDevice2), dev(kDevice3), dev(kDevice4)};
  };
  const auto typed = [](const std::string& name, const char* t) {
    return dev(name).attr("type", t);
  };
  const auto xyy =
      std::vector<api::Device>{typed(kDevice1, "X"), typed(kDevice2, "Y"), typed(kDevice3, "Y")};
  const auto twoRequests =
      claim(kClaim0, {request(kReq1, kClassA, 2), request(kReq2, kClassA, 1, {typeIs("X")})});
  Features binding = Features::none();
  binding.deviceBindingAndStatus = true;
  Features prioritized = Features::none();
  prioritized.prioritizedList = true;
  return {
      {"check-combinations-within-single-request-single-pool-single-slice",
       {.claims = {claim(kClaim0, {request(kReq0, kClassA, 5)})},
        .classes = {classA},
        .slices = {slice("slice-1", onNode(kNode1), pool(kPool1), kDriverA, four())},
        .wantSteps = 16}},
      {"check-combinations-within-single-request-single-pool-multiple-slices",
       {.claims = {claim(kClaim0, {request(kReq0, kClassA, 5)})},
        .classes = {classA},
        .slices = {slice("slice-1", onNode(kNode1), pool(kPool1, 2), kDriverA,
                         {dev(kDevice1), dev(kDevice2)}),
                   slice("slice-2", onNode(kNode1), pool(kPool1, 2), kDriverA,
                         {dev(kDevice3), dev(kDevice4)})},
        .wantSteps = 16}},
      {"check-combinations-within-single-request-multiple-pools-multiple-slices",
       {.claims = {claim(kClaim0, {request(kReq0, kClassA, 5)})},
        .classes = {classA},
        .slices = {slice("slice-1", onNode(kNode1), pool(kPool1, 2), kDriverA, {dev(kDevice1)}),
                   slice("slice-2", onNode(kNode1), pool(kPool1, 2), kDriverA, {dev(kDevice2)}),
                   slice("slice-3", onNode(kNode1), pool(kPool2), kDriverA,
                         {dev(kDevice3), dev(kDevice4)})},
        .wantSteps = 16}},
      {"check-combinations-within-single-request-many-pools",
       {.claims = {claim(kClaim0, {request(kReq0, kClassA, 5)})},
        .classes = {classA},
        .slices = {slice("slice-1", onNode(kNode1), pool(kPool1), kDriverA, {dev(kDevice1)}),
                   slice("slice-2", onNode(kNode1), pool(kPool2), kDriverA, {dev(kDevice2)}),
                   slice("slice-3", onNode(kNode1), pool("pool-3"), kDriverA, {dev(kDevice3)}),
                   slice("slice-4", onNode(kNode1), pool("pool-4"), kDriverA, {dev(kDevice4)})},
        .wantSteps = 16}},
      {"check-combinations-with-backtracking",
       {.claims = {twoRequests},
        .classes = {classA},
        .slices = {slice("slice-1", onNode(kNode1), pool(kPool1), kDriverA, xyy)},
        .want = Allocations{local({resA(kReq1, kPool1, kDevice2), resA(kReq1, kPool1, kDevice3),
                                   resA(kReq2, kPool1, kDevice1)})},
        .wantSteps = 12}},
      {"check-combinations-with-backtracking-across-slices-and-pools",
       {.features = binding,
        .claims = {twoRequests},
        .classes = {classA},
        .slices = {slice("slice-1", onNode(kNode1), pool(kPool1, 2), kDriverA, {xyy[0]}),
                   slice("slice-2", onNode(kNode1), pool(kPool1, 2), kDriverA, {xyy[1]}),
                   slice("slice-3", onNode(kNode1), pool(kPool2), kDriverA,
                         {typed(kDevice3, "Y").binding({"IsPrepare"}, {})})},
        .want = Allocations{local({resA(kReq1, kPool1, kDevice2),
                                   withBinding(resA(kReq1, kPool2, kDevice3), {"IsPrepare"}, {}),
                                   resA(kReq2, kPool1, kDevice1)})},
        .wantSteps = 12}},
      {"check-combinations-with-prioritized-list",
       {.features = prioritized,
        .claims = {claim(
            kClaim0, {firstAvailable(kReq1, {subRequest("subReq-0", kClassA, 3, {typeIs("Y")}),
                                             subRequest("subReq-1", kClassA, 2)}),
                      firstAvailable(kReq2, {subRequest("subReq-0", kClassA, 2),
                                             subRequest("subReq-1", kClassA, 1, {typeIs("X")})})})},
        .classes = {classA},
        .slices = {slice("slice-1", onNode(kNode1), pool(kPool1), kDriverA, xyy)},
        .want = Allocations{local({resA("req-1/subReq-1", kPool1, kDevice2),
                                   resA("req-1/subReq-1", kPool1, kDevice3),
                                   resA("req-2/subReq-1", kPool1, kDevice1)})},
        .wantSteps = 26}},
  };
}

INSTANTIATE_TEST_SUITE_P(Pools, DraUpstreamTable, ::testing::ValuesIn(poolCases()), caseName);
INSTANTIATE_TEST_SUITE_P(Combinations, DraUpstreamTable, ::testing::ValuesIn(combinationCases()),
                         caseName);

// Upstream's "interrupt" test: 6 devices wanted of 5, which searches every combination; a
// deadline already past stops it, none lets it finish (unschedulable).
TEST(DraAllocatorSearch, StopsAtTheDeadline) {
  Case c{.claims = {claim(kClaim0, {request(kReq0, kClassA, 6)})},
         .classes = {deviceClass(kClassA, kDriverA)},
         .slices = {slice("slice-1", onNode(kNode1), pool(kPool1), kDriverA, devices(5, 1))}};
  const Result past = run(c, Allocator::Clock::now());
  EXPECT_EQ(past.code, Result::Code::kTimedOut);
  EXPECT_EQ(past.message, "timed out trying to allocate devices");
  EXPECT_TRUE(past.allocations.empty());

  const Result unbounded = run(c);
  EXPECT_EQ(unbounded.code, Result::Code::kUnschedulable);
  EXPECT_GT(unbounded.steps, 1);
}

// 20 devices of one NUMA node wanted, two nodes of 19: every subset of a node gets tried, far
// more than the deadline allows.
TEST(DraAllocatorSearch, GivesUpOnAHugeSearchAtTheDeadline) {
  std::vector<api::Device> devs;
  for (int i = 0; i < 38; ++i) {
    devs.push_back(dev("device-" + std::to_string(i)).attr("numa", int64_t{i % 2}));
  }
  Case c{
      .claims = {claim(kClaim0, {request(kReq0, kClassA, 20)}, {matchAttribute("driver-a/numa")})},
      .classes = {deviceClass(kClassA, kDriverA)},
      .slices = {slice("slice-1", onNode(kNode1), pool(kPool1), kDriverA, devs)}};
  const auto start = Allocator::Clock::now();
  const Result r = run(c, start + std::chrono::milliseconds(20));
  EXPECT_EQ(r.code, Result::Code::kTimedOut);
  EXPECT_LT(Allocator::Clock::now() - start, std::chrono::seconds(2));
}

// One Allocator, many nodes at once (as Filter runs): the per-cycle caches are shared.
TEST(DraAllocatorSearch, AllocatesOnManyNodesConcurrently) {
  constexpr int kNodes = 16;
  std::vector<std::shared_ptr<const api::ResourceSlice>> slices;
  for (int n = 0; n < kNodes; ++n) {
    slices.push_back(std::make_shared<const api::ResourceSlice>(
        slice("slice-" + std::to_string(n), onNode("node-" + std::to_string(n)),
              pool("pool-" + std::to_string(n)), kDriverA, devices(4))));
  }
  const DeviceSet inUse = {{kDriverA, "pool-3", "device-0"},
                           {kDriverA, "pool-3", "device-1"},
                           {kDriverA, "pool-3", "device-2"}};
  const api::DeviceClass cls = deviceClass(kClassA, kDriverA);
  const api::ResourceClaim c = claim(kClaim0, {request(kReq0, kClassA, 2)});
  AllocatorInputs in;
  in.claims = {&c};
  in.deviceClass = [&](std::string_view) { return &cls; };
  in.slices = slices;
  in.inUse = &inUse;
  in.compile = fakeCompile;
  const Allocator allocator(std::move(in));

  std::vector<Result> results(kNodes);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 50; ++round) {
        for (int n = t; n < kNodes; n += 4) {
          results[n] = allocator.allocate(node("node-" + std::to_string(n), kRegion1));
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int n = 0; n < kNodes; ++n) {
    SCOPED_TRACE(n);
    if (n == 3) {
      EXPECT_EQ(results[n].code, Result::Code::kUnschedulable);
      continue;
    }
    ASSERT_EQ(results[n].code, Result::Code::kAllocated);
    const auto& d = results[n].allocations.at(0).devices;
    ASSERT_EQ(d.size(), 2u);
    EXPECT_EQ(d[0].pool, "pool-" + std::to_string(n));
    EXPECT_EQ(d[0].device, "device-0");
    EXPECT_EQ(d[1].device, "device-1");
  }
}

}  // namespace
}  // namespace ksched::plugins::dra
