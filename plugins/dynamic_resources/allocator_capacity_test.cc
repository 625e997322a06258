// The allocator against upstream's shared allocator table: consumable capacity
// (allowMultipleAllocations, capacity requests and request policies) and distinctAttribute.
// Case names are upstream's.
#include <gtest/gtest.h>

#include <string>
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
const std::string kClaim1 = "claim-1";
const std::string kReq0 = "req-0";
const std::string kReq1 = "req-1";
const std::string kReq2 = "req-2";
const std::string kReq3 = "req-3";
const std::string kSub0 = "subReq-0";
const std::string kSub1 = "subReq-1";
const std::string kPool1 = "pool-1";
const std::string kDevice1 = "device-1";
const std::string kDevice2 = "device-2";
const std::string kDevice3 = "device-3";
const std::string kDevice4 = "device-4";
const std::string kSet1 = "counter-set-1";
const std::string kSet2 = "counter-set-2";
const std::string kCap0 = "capacity-0";
const std::string kCap1 = "capacity-1";

Features consumable(bool prioritized = false, bool partitionable = false) {
  Features f = Features::none();
  f.consumableCapacity = true;
  f.prioritizedList = prioritized;
  f.partitionableDevices = partitionable;
  return f;
}

// Upstream's withCapacityRequestPolicyRange: default 2, range 2..4 in steps of 2.
api::CapacityRequestPolicy rangePolicy() {
  api::CapacityRequestPolicy p;
  p.defaultValue = api::Quantity::fromValue(2);
  p.validRangeMin = api::Quantity::fromValue(2);
  p.validRangeStep = api::Quantity::fromValue(2);
  p.validRangeMax = api::Quantity::fromValue(4);
  return p;
}

// Upstream's withCapacityRequestPolicyValidValues: the default first, then `more`.
api::CapacityRequestPolicy validValues(int64_t def, std::vector<int64_t> more = {}) {
  api::CapacityRequestPolicy p;
  p.defaultValue = api::Quantity::fromValue(def);
  p.validValues.push_back(api::Quantity::fromValue(def));
  for (int64_t v : more) p.validValues.push_back(api::Quantity::fromValue(v));
  return p;
}

// class-a, restricted to devices that do (or do not) allow multiple allocations.
api::DeviceClass multiClass(bool multi) {
  api::DeviceClass c = deviceClass(kClassA, kDriverA);
  c.spec.selectors[0].celExpression +=
      std::string(" && device.allowMultipleAllocations == ") + (multi ? "true" : "false");
  return c;
}

api::ResourceSlice sliceA(std::vector<api::Device> devices, api::ResourcePool p = pool("pool-1")) {
  return slice("slice-1", onNode(kNode1), std::move(p), kDriverA, std::move(devices));
}

api::AllocationResult local(std::vector<api::DeviceRequestAllocationResult> devices) {
  return allocation(localNode(kNode1), std::move(devices));
}

// A shared result of driver-a/pool-1 consuming capacity-0 (when given).
api::DeviceRequestAllocationResult share(const std::string& req, const std::string& device,
                                         std::string cap0 = "") {
  if (cap0.empty()) return shared(result(req, kDriverA, kPool1, device));
  return shared(result(req, kDriverA, kPool1, device), {{kCap0, cap0}});
}

api::DeviceRequest capReq(const std::string& name, const std::string& q) {
  return withCapacity(request(name, kClassA, 1), kCap0, q);
}

api::DeviceSubRequest subCap(api::DeviceSubRequest s, const std::string& q) {
  s.request.capacity[kCap0] = api::Quantity::parse(q);
  return s;
}

Table capacityCases() {
  const api::DeviceClass classA = deviceClass(kClassA, kDriverA);
  Features disabled = Features::none();
  disabled.deviceBindingAndStatus = true;
  Features disabledPrioritized = disabled;
  disabledPrioritized.prioritizedList = true;
  const auto ranged = [](const std::string& name, const char* cap) {
    return dev(name).multi().capPolicy(kCap0, cap, rangePolicy());
  };
  return {
      {"consumable-capacity-disabled-feature",
       {.features = disabled,
        .claims = {claim(kClaim0, {capReq(kReq0, "1")})},
        .classes = {classA},
        .slices = {sliceA({dev(kDevice1)})},
        .wantError = "claim claim-0, request req-0: has capacity requests, but the "
                     "DRAConsumableCapacity feature is disabled"}},
      {"consumable-capacity-disabled-feature-with-prioritized-list",
       {.features = disabledPrioritized,
        .claims = {claim(kClaim0,
                         {firstAvailable(kReq0, {subCap(subRequest(kSub0, kClassA, 1), "1"),
                                                 subCap(subRequest(kSub1, kClassA, 1), "1")})})},
        .classes = {classA},
        .slices = {sliceA({dev(kDevice1)})},
        .wantError = "claim claim-0, subrequest subReq-0: has capacity requests, but the "
                     "DRAConsumableCapacity feature is disabled"}},
      {"consumable-capacity-multi-allocatable-device-with-missing-capacity-request",
       {.features = consumable(),
        .claims = {claim(kClaim0, {capReq(kReq0, "1")})},
        .classes = {classA},
        .slices = {sliceA({dev(kDevice1).cap(kCap1, "1").multi()})}}},
      {"consumable-capacity-multi-allocatable-device-allocation-mode-all-with-missing-capacity-"
       "request",
       {.features = consumable(),
        .claims = {claim(kClaim0, {withCapacity(allRequest(kReq0, kClassA), kCap0, "1")})},
        .classes = {multiClass(true)},
        .slices = {sliceA({dev(kDevice1).cap(kCap1, "1").multi()})}}},
      {"consumable-capacity-multi-allocatable-device-without-capacity-without-capacity-request",
       {.features = consumable(),
        .claims = {claim(kClaim0, {request(kReq0, kClassA, 1)}),
                   claim(kClaim1, {request(kReq0, kClassA, 1)})},
        .classes = {multiClass(true)},
        .slices = {sliceA({dev(kDevice1).multi()})},
        .want = Allocations{local({share(kReq0, kDevice1)}), local({share(kReq0, kDevice1)})}}},
      {"consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request",
       {.features = consumable(),
        .claims = {claim(kClaim0, {request(kReq0, kClassA, 1)}),
                   claim(kClaim1, {request(kReq0, kClassA, 1)})},
        .classes = {multiClass(true)},
        .slices = {sliceA(
            {dev(kDevice1).cap(kCap0, "1").multi(), dev(kDevice2).cap(kCap0, "1").multi()})},
        .want = Allocations{local({share(kReq0, kDevice1, "1")}),
                            local({share(kReq0, kDevice2, "1")})}}},
      {"consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request-block",
       {.features = consumable(),
        .claims = {claim(kClaim0, {request(kReq0, kClassA, 1)}),
                   claim(kClaim1, {request(kReq0, kClassA, 1)})},
        .classes = {multiClass(true)},
        .slices = {sliceA({dev(kDevice1).cap(kCap0, "2").multi()})}}},
      {"consumable-capacity-multi-allocatable-device-without-policy-with-capacity-request",
       {.features = consumable(),
        .claims = {claim(kClaim0, {capReq(kReq0, "1")}), claim(kClaim1, {capReq(kReq0, "1")})},
        .classes = {multiClass(true)},
        .slices = {sliceA({dev(kDevice1).cap(kCap0, "2").multi()})},
        .want = Allocations{local({share(kReq0, kDevice1, "1")}),
                            local({share(kReq0, kDevice1, "1")})}}},
      {"consumable-capacity-multi-allocatable-device-with-policy-without-capacity-request",
       {.features = consumable(),
        .claims = {claim(kClaim0, {request(kReq0, kClassA, 1)}),
                   claim(kClaim1, {request(kReq0, kClassA, 1)})},
        .classes = {multiClass(true)},
        .slices = {sliceA({ranged(kDevice1, "4")})},
        .want = Allocations{local({share(kReq0, kDevice1, "2")}),
                            local({share(kReq0, kDevice1, "2")})}}},
      {"consumable-capacity-multi-allocatable-device-with-zero-request-policy",
       {.features = consumable(),
        .claims = {claim(kClaim0, {request(kReq0, kClassA, 1)}),
                   claim(kClaim1, {request(kReq0, kClassA, 1)})},
        .classes = {multiClass(true)},
        .slices = {sliceA({dev(kDevice1).multi().capPolicy(kCap0, "1", validValues(0))})},
        .want = Allocations{local({share(kReq0, kDevice1, "0")}),
                            local({share(kReq0, kDevice1, "0")})}}},
      {"consumable-capacity-multi-allocatable-device-violates-zero-request-policy",
       {.features = consumable(),
        .claims = {claim(kClaim0, {capReq(kReq0, "1")})},
        .classes = {multiClass(true)},
        .slices = {sliceA({dev(kDevice1).multi().capPolicy(kCap0, "1", validValues(0))})}}},
      {"consumable-capacity-multi-allocatable-device-with-range-policy-with-capacity-request",
       {.features = consumable(),
        .claims = {claim(kClaim0, {capReq(kReq0, "1")}), claim(kClaim1, {capReq(kReq0, "1")})},
        .classes = {multiClass(true)},
        .slices = {sliceA({ranged(kDevice1, "4")})},
        .want = Allocations{local({share(kReq0, kDevice1, "2")}),
                            local({share(kReq0, kDevice1, "2")})}}},
      {"consumable-capacity-multi-allocatable-device-with-range-policy-step",
       {.features = consumable(),
        .claims = {claim(kClaim0, {capReq(kReq0, "3")})},
        .classes = {multiClass(true)},
        .slices = {sliceA({ranged(kDevice1, "4")})},
        .want = Allocations{local({share(kReq0, kDevice1, "4")})}}},
      {"consumable-capacity-multi-allocatable-device-with-valid-values-policy",
       {.features = consumable(),
        .claims = {claim(kClaim0, {capReq(kReq0, "2")})},
        .classes = {multiClass(true)},
        .slices = {sliceA({dev(kDevice1).multi().capPolicy(kCap0, "4", validValues(1, {2}))})},
        .want = Allocations{local({share(kReq0, kDevice1, "2")})}}},
      {"consumable-capacity-multi-allocatable-device-with-valid-values-policy-round-up",
       {.features = consumable(),
        .claims = {claim(kClaim0, {capReq(kReq0, "2")})},
        .classes = {multiClass(true)},
        .slices = {sliceA({dev(kDevice1).multi().capPolicy(kCap0, "3", validValues(1, {3}))})},
        .want = Allocations{local({share(kReq0, kDevice1, "3")})}}},
      {"consumable-capacity-multi-allocatable-device-with-exceeded-consumable-capacity-request",
       {.features = consumable(),
        .claims = {claim(kClaim0, {capReq(kReq0, "1")}), claim(kClaim1, {capReq(kReq0, "2")})},
        .classes = {multiClass(true)},
        .slices = {sliceA({ranged(kDevice1, "2")})}}},
      {"consumable-capacity-multi-allocatable-device-with-request-over-max-sharing-policy",
       {.features = consumable(),
        .claims = {claim(kClaim0, {capReq(kReq0, "6")})},
        .classes = {multiClass(true)},
        .slices = {sliceA({ranged(kDevice1, "10")})}}},
      {"consumable-capacity-multi-allocatable-device-with-allocated-capacity-use-remaining",
       {.features = consumable(),
        .claims = {claim(kClaim0, {capReq(kReq0, "2")})},
        .consumed = {{{kDriverA, kPool1, kDevice1}, {{kCap0, api::Quantity::fromValue(2)}}}},
        .classes = {multiClass(true)},
        .slices = {sliceA({ranged(kDevice1, "4")})},
        .want = Allocations{local({share(kReq0, kDevice1, "2")})}}},
      {"consumable-capacity-multi-allocatable-device-with-allocated-capacity-next-device",
       {.features = consumable(),
        .claims = {claim(kClaim0, {capReq(kReq0, "2")})},
        .consumed = {{{kDriverA, kPool1, kDevice1}, {{kCap0, api::Quantity::fromValue(2)}}}},
        .classes = {multiClass(true)},
        .slices = {sliceA({ranged(kDevice1, "2"), ranged(kDevice2, "2")})},
        .want = Allocations{local({share(kReq0, kDevice2, "2")})}}},
      {"consumable-capacity-with-multi-allocatable-device-backtrack",
       {.features = consumable(),
        .claims = {claim(kClaim0, {capReq(kReq0, "2"), capReq(kReq1, "2")},
                         {matchAttribute("driver-a/stringAttribute")}),
                   claim(kClaim1, {capReq(kReq0, "2")})},
        .classes = {classA},
        .slices = {sliceA(
            {ranged(kDevice2, "2").attr("stringAttribute", "stringAttributeValue1"),
             ranged(kDevice1, "4").attr("stringAttribute", "stringAttributeValue2")})},
        .want = Allocations{local({share(kReq0, kDevice1, "2"), share(kReq1, kDevice1, "2")}),
                            local({share(kReq0, kDevice2, "2")})}}},
      {"consumable-capacity-multi-allocatable-device-with-subrequest",
       {.features = consumable(true),
        .claims = {claim(kClaim0,
                         {firstAvailable(kReq0, {subCap(subRequest(kSub0, kClassA, 1), "4"),
                                                 subCap(subRequest(kSub1, kClassA, 1), "2"),
                                                 subRequest(kSub1, kClassA, 1)})})},
        .classes = {multiClass(true)},
        .slices = {sliceA({ranged(kDevice1, "2")})},
        .want = Allocations{local({share("req-0/subReq-1", kDevice1, "2")})}}},
      {"consumable-capacity-multi-allocatable-device-with-no-available-consumable-capacity",
       {.features = consumable(),
        .claims = {claim(kClaim0, {capReq(kReq0, "2")})},
        .consumed = {{{kDriverA, kPool1, kDevice1}, {{kCap0, api::Quantity::fromValue(2)}}}},
        .classes = {multiClass(true)},
        .slices = {sliceA({ranged(kDevice1, "2")})}}},
      {"consumable-capacity-multi-allocatable-device-allocation-mode-all-filter-out-no-capacity",
       {.features = consumable(),
        .claims = {claim(kClaim0, {withCapacity(allRequest(kReq0, kClassA), kCap0, "2")})},
        .classes = {multiClass(true)},
        .slices = {sliceA({dev(kDevice1).cap(kCap0, "2").multi(), dev(kDevice2).multi()})},
        .want = Allocations{local({share(kReq0, kDevice1, "2")})}}},
      {"consumable-capacity-multi-allocatable-device-allocation-mode-all-filter-out-insufficient-"
       "capacity",
       {.features = consumable(),
        .claims = {claim(kClaim0, {withCapacity(allRequest(kReq0, kClassA), kCap0, "2")})},
        .classes = {multiClass(true)},
        .slices = {sliceA(
            {dev(kDevice1).cap(kCap0, "2").multi(), dev(kDevice2).cap(kCap0, "1").multi()})},
        .want = Allocations{local({share(kReq0, kDevice1, "2")})}}},
      {"consumable-capacity-multi-allocatable-device-allocation-mode-all-allocating-sufficient",
       {.features = consumable(),
        .claims = {claim(
            kClaim0, {capReq(kReq0, "1"), withCapacity(allRequest(kReq1, kClassA), kCap0, "1")})},
        .classes = {classA},
        .slices = {sliceA(
            {dev(kDevice1).cap(kCap0, "2").multi(), dev(kDevice2).cap(kCap0, "1").multi()})},
        .want = Allocations{local({share(kReq0, kDevice1, "1"), share(kReq1, kDevice1, "1"),
                                   share(kReq1, kDevice2, "1")})}}},
      {"consumable-capacity-multi-allocatable-device-allocation-mode-all-in-use-sufficient",
       {.features = consumable(),
        .claims = {claim(kClaim0, {withCapacity(allRequest(kReq0, kClassA), kCap0, "1")})},
        .consumed = {{{kDriverA, kPool1, kDevice1}, {{kCap0, api::Quantity::fromValue(1)}}}},
        .classes = {classA},
        .slices = {sliceA(
            {dev(kDevice1).cap(kCap0, "2").multi(), dev(kDevice2).cap(kCap0, "1").multi()})},
        .want = Allocations{local({share(kReq0, kDevice1, "1"), share(kReq0, kDevice2, "1")})}}},
      {"consumable-capacity-multi-allocatable-device-allocation-mode-all-allocating-insufficient",
       {.features = consumable(),
        .claims = {claim(
            kClaim0, {capReq(kReq0, "1"), withCapacity(allRequest(kReq1, kClassA), kCap0, "1")})},
        .classes = {classA},
        .slices = {sliceA(
            {dev(kDevice1).cap(kCap0, "1").multi(), dev(kDevice2).cap(kCap0, "1").multi()})}}},
      {"consumable-capacity-multi-allocatable-device-allocation-mode-all-in-use-insufficient",
       {.features = consumable(),
        .claims = {claim(kClaim0, {withCapacity(allRequest(kReq0, kClassA), kCap0, "1")})},
        .consumed = {{{kDriverA, kPool1, kDevice1}, {{kCap0, api::Quantity::fromValue(1)}}}},
        .classes = {classA},
        .slices = {sliceA(
            {dev(kDevice1).cap(kCap0, "1").multi(), dev(kDevice2).cap(kCap0, "1").multi()})},
        .want = Allocations{local({share(kReq0, kDevice2, "1")})}}},
      {"consumable-capacity-dedicated-device-with-consumable-capacity-request",
       {.features = consumable(),
        .claims = {claim(kClaim0, {capReq(kReq0, "1")})},
        .classes = {multiClass(false)},
        .slices = {sliceA({dev(kDevice1).cap(kCap0, "1")})},
        .want = Allocations{local({result(kReq0, kDriverA, kPool1, kDevice1)})}}},
      {"consumable-capacity-dedicated-device-with-multiple-consumable-capacity-request",
       {.features = consumable(),
        .claims = {claim(kClaim0, {capReq(kReq0, "1")}), claim(kClaim1, {capReq(kReq0, "1")})},
        .classes = {multiClass(false)},
        .slices = {sliceA({dev(kDevice1).capPolicy(kCap0, "2", rangePolicy())})}}},
      {"allow-multiple-allocations-exclude-multi-allocatable-device-by-class-selector",
       {.features = consumable(),
        .claims = {claim(kClaim0, {capReq(kReq0, "1")})},
        .classes = {multiClass(false)},
        .slices = {sliceA({dev(kDevice1).cap(kCap0, "1").multi()})}}},
      {"allow-multiple-allocations-not-allocate-multi-allocatable-device-which-already-dedicated",
       {.features = consumable(),
        .claims = {claim(kClaim0, {capReq(kReq0, "1")})},
        .allocated = {{kDriverA, kPool1, kDevice1}},
        .classes = {multiClass(true)},
        .slices = {sliceA({ranged(kDevice1, "2")})}}},
      {"allow-multiple-allocations-not-allocate-dedicated-device-which-change-from-multi-"
       "allocatable",
       {.features = consumable(),
        .claims = {claim(kClaim0, {capReq(kReq0, "1")})},
        .consumed = {{{kDriverA, kPool1, kDevice1}, {{kCap0, api::Quantity::fromValue(1)}}}},
        .classes = {multiClass(true)},
        .slices = {sliceA({dev(kDevice1).capPolicy(kCap0, "2", rangePolicy())})}}},
      {"allow-multiple-allocations-with-partitionable-device",
       {.features = consumable(true, true),
        .claims = {claim(
            kClaim0,
            {request(kReq0, kClassA, 1),
             firstAvailable(kReq1, {subRequest(kSub0, kClassA, 1,
                                               {sel("device.capacity[\"driver-a\"].memory."
                                                    "compareTo(quantity(\"6Gi\")) >= 0")}),
                                    subRequest(kSub1, kClassA, 1,
                                               {sel("device.capacity[\"driver-a\"].memory."
                                                    "compareTo(quantity(\"4Gi\")) >= 0")})})})},
        .classes = {multiClass(true)},
        .slices = {sliceA({dev(kDevice1).consumes(kSet1, {{"memory", "4Gi"}}, true).multi(),
                           dev(kDevice2).consumes(kSet1, {{"memory", "6Gi"}}, true).multi(),
                           dev(kDevice3).consumes(kSet1, {{"memory", "4Gi"}}, true).multi()},
                          pool(kPool1, 2)),
                   counterSlice("slice-2", onNode(kNode1), pool(kPool1, 2), kDriverA,
                                {counterSet(kSet1, {{"memory", "8Gi"}})})},
        .want = Allocations{local(
            {shared(result(kReq0, kDriverA, kPool1, kDevice1), {{"memory", "4Gi"}}),
             shared(result("req-1/subReq-1", kDriverA, kPool1, kDevice3), {{"memory", "4Gi"}})})}}},
      {"allow-multiple-allocations-with-shared-device-counter-cross-cycle",
       {.features = consumable(false, true),
        .claims = {claim(
            kClaim0, {withCapacity(request(kReq0, kClassA, 1,
                                           {sel("device.attributes[\"driver-a\"].mode == \"b\"")}),
                                   kCap0, "1")})},
        .consumed = {{{kDriverA, kPool1, kDevice1}, {{kCap0, api::Quantity::fromValue(1)}}}},
        .classes = {multiClass(true)},
        .slices =
            {sliceA({dev(kDevice1).attr("mode", "a").consumes(kSet1, {{kCap0, "1"}}, true).multi(),
                     dev(kDevice2).attr("mode", "b").consumes(kSet1, {{kCap0, "1"}}, true).multi()},
                    pool(kPool1, 2)),
             counterSlice("slice-2", onNode(kNode1), pool(kPool1, 2),
                          kDriverA, {counterSet(kSet1, {{kCap0, "1"}})})}}},
      {"consumable-capacity-with-partitionable-device-multiple-capacity-pools",
       {.features = consumable(true, true),
        .claims = {claim(
            kClaim0, {capReq(kReq0, "1"), capReq(kReq2, "2"),
                      firstAvailable(
                          kReq1, {subCap(subRequest(kSub0, kClassA, 1,
                                                    {sel("device.capacity[\"driver-a\"][\"capacity-"
                                                         "0\"].compareTo(quantity(\"4\")) >= 0")}),
                                         "1"),
                                  subCap(subRequest(kSub1, kClassA, 1,
                                                    {sel("device.capacity[\"driver-a\"][\"capacity-"
                                                         "0\"].compareTo(quantity(\"2\")) >= 0")}),
                                         "1")})})},
        .classes = {classA},
        .slices = {sliceA({dev(kDevice1)
                               .consumes(kSet1, {{kCap0, "2"}}, true)
                               .consumes(kSet2, {{kCap1, "4"}}, true)
                               .multi()
                               .capPolicy(kCap1, "4", rangePolicy()),
                           dev(kDevice2)
                               .consumes(kSet1, {{kCap0, "4"}}, true)
                               .consumes(kSet2, {{kCap1, "4"}}, true)
                               .multi()
                               .capPolicy(kCap1, "4", rangePolicy()),
                           dev(kDevice3)
                               .consumes(kSet1, {{kCap0, "2"}}, true)
                               .consumes(kSet2, {{kCap1, "4"}}, true)
                               .multi()
                               .capPolicy(kCap1, "4", rangePolicy())},
                          pool(kPool1, 2)),
                   counterSlice(
                       "slice-2", onNode(kNode1), pool(kPool1, 2), kDriverA,
                       {counterSet(kSet1, {{kCap0, "4"}}), counterSet(kSet2, {{kCap1, "8"}})})},
        .want = Allocations{local(
            {shared(result(kReq0, kDriverA, kPool1, kDevice1), {{kCap0, "1"}, {kCap1, "2"}}),
             shared(result(kReq2, kDriverA, kPool1, kDevice3), {{kCap0, "2"}, {kCap1, "2"}}),
             shared(result("req-1/subReq-1", kDriverA, kPool1, kDevice1),
                    {{kCap0, "1"}, {kCap1, "2"}})})}}},
  };
}

Table distinctCases() {
  const api::DeviceClass classA = deviceClass(kClassA, kDriverA);
  const auto attrs = [](const std::string& name, const char* version, int64_t numa, bool flag) {
    return dev(name)
        .version("driverVersion", version)
        .attr("numa", numa)
        .attr("boolAttribute", flag)
        .multi();
  };
  const auto boolSub = [](const std::string& name) {
    return subRequest(name, kClassA, 1, {sel("device.attributes[\"driver-a\"].boolAttribute")});
  };
  return {
      {"with-distinct-constraints",
       {.features = consumable(),
        .claims = {claim(kClaim0,
                         {request(kReq0, kClassA, 1), request(kReq1, kClassA, 1),
                          request(kReq2, kClassA, 1), request(kReq3, kClassA, 1)},
                         {distinctAttribute("driver-a/boolAttribute", {kReq0, kReq1}),
                          distinctAttribute("driver-a/driverVersion", {kReq0, kReq1, kReq2}),
                          distinctAttribute("driver-a/numa", {kReq0, kReq1, kReq2, kReq3})})},
        .classes = {classA},
        .slices = {sliceA({attrs(kDevice1, "1.0.0", 0, true), attrs(kDevice2, "1.0.1", 1, false),
                           attrs(kDevice3, "1.0.2", 2, true), attrs(kDevice4, "1.0.0", 3, true)})},
        .want = Allocations{local({share(kReq0, kDevice1), share(kReq1, kDevice2),
                                   share(kReq2, kDevice3), share(kReq3, kDevice4)})}}},
      {"with-distinct-constraints-attribute-not-set",
       {.features = consumable(),
        .claims = {claim(kClaim0, {request(kReq0, kClassA, 1)},
                         {distinctAttribute("driver-a/boolAttribute", {kReq0})})},
        .classes = {classA},
        .slices = {sliceA({dev(kDevice1).multi()})}}},
      {"with-distinct-constraints-with-subrequests",
       {.features = consumable(true),
        .claims = {claim(kClaim0,
                         {firstAvailable(kReq0, {boolSub(kSub0), subRequest(kSub1, kClassA, 1)}),
                          firstAvailable(kReq1, {boolSub(kSub0), subRequest(kSub1, kClassA, 1)}),
                          firstAvailable(kReq2, {boolSub(kSub0), subRequest(kSub1, kClassA, 1)})},
                         {distinctAttribute("driver-a/boolAttribute", {kReq0, kReq1})})},
        .classes = {classA},
        .slices = {sliceA({dev(kDevice1).attr("boolAttribute", true).multi(),
                           dev(kDevice2).attr("boolAttribute", false).multi()})},
        .want =
            Allocations{local({share("req-0/subReq-0", kDevice1), share("req-1/subReq-1", kDevice2),
                               share("req-2/subReq-0", kDevice1)})}}},
      {"distinct-constraint-one-multi-allocatable-device-with-distinct-constraint",
       {.features = consumable(),
        .claims = {claim(kClaim0, {capReq(kReq0, "1"), capReq(kReq1, "1")},
                         {distinctAttribute("driver-a/stringAttribute")})},
        .classes = {multiClass(true)},
        .slices = {sliceA({dev(kDevice1)
                               .attr("stringAttribute", "stringAttributeValue")
                               .multi()
                               .capPolicy(kCap0, "2", rangePolicy())})}}},
      {"distinct-constraint-two-multi-allocatable-devices-with-distinct-constraint",
       {.features = consumable(),
        .claims = {claim(kClaim0, {capReq(kReq0, "2"), capReq(kReq1, "2")},
                         {distinctAttribute("driver-a/stringAttribute")})},
        .classes = {multiClass(true)},
        .slices = {sliceA({dev(kDevice1)
                               .attr("stringAttribute", "stringAttributeValue1")
                               .multi()
                               .capPolicy(kCap0, "4", rangePolicy())},
                          pool(kPool1, 2)),
                   sliceA({dev(kDevice2)
                               .attr("stringAttribute", "stringAttributeValue2")
                               .multi()
                               .capPolicy(kCap0, "4", rangePolicy())},
                          pool(kPool1, 2))},
        .want = Allocations{local({share(kReq0, kDevice1, "2"), share(kReq1, kDevice2, "2")})}}},
  };
}

INSTANTIATE_TEST_SUITE_P(ConsumableCapacity, DraUpstreamTable, ::testing::ValuesIn(capacityCases()),
                         caseName);
INSTANTIATE_TEST_SUITE_P(DistinctAttribute, DraUpstreamTable, ::testing::ValuesIn(distinctCases()),
                         caseName);

}  // namespace
}  // namespace ksched::plugins::dra
