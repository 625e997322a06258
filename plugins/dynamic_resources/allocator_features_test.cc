// The allocator against upstream's shared allocator table: partitionable devices (counter sets,
// per-device node selection), device taints and binding conditions. Case names are upstream's;
// allocator_test.cc has the first part and the test itself.
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
const std::string kReq0 = "req-0";
const std::string kReq1 = "req-1";
const std::string kSub0 = "subReq-0";
const std::string kSub1 = "subReq-1";
const std::string kPool1 = "pool-1";
const std::string kPool2 = "pool-2";
const std::string kDevice1 = "device-1";
const std::string kDevice2 = "device-2";
const std::string kDevice3 = "device-3";
const std::string kSet1 = "counter-set-1";
const std::string kSet2 = "counter-set-2";

Features features(bool prioritized, bool partitionable, bool taints = false, bool binding = false,
                  bool consumable = false) {
  Features f = Features::none();
  f.prioritizedList = prioritized;
  f.partitionableDevices = partitionable;
  f.deviceTaints = taints;
  f.deviceBindingAndStatus = binding;
  f.consumableCapacity = consumable;
  return f;
}

api::DeviceSelector memoryAtLeast(const std::string& q) {
  return sel("device.capacity[\"driver-a\"].memory.compareTo(quantity(\"" + q + "\")) >= 0");
}

api::AllocationResult local(std::vector<api::DeviceRequestAllocationResult> devices) {
  return allocation(localNode(kNode1), std::move(devices));
}

api::DeviceRequestAllocationResult resA(const std::string& req, const std::string& pool,
                                        const std::string& device) {
  return result(req, kDriverA, pool, device);
}

api::ResourceSlice sliceA(std::string name, api::ResourcePool p, std::vector<api::Device> devices) {
  return slice(std::move(name), onNode(kNode1), std::move(p), kDriverA, std::move(devices));
}

api::ResourceSlice countersA(std::string name, api::ResourcePool p,
                             std::vector<api::CounterSet> sets) {
  return counterSlice(std::move(name), onNode(kNode1), std::move(p), kDriverA, std::move(sets));
}

// A device consuming `memory` of counter-set-1, with that much memory capacity.
Dev partition(const std::string& name, const std::string& memory) {
  return dev(name).consumes(kSet1, {{"memory", memory}}, true);
}

api::DeviceSubRequest subWithTolerations(api::DeviceSubRequest s,
                                         std::vector<api::DeviceToleration> t) {
  s.request.tolerations = std::move(t);
  return s;
}

Table partitionableCases() {
  const api::DeviceClass classA = deviceClass(kClassA, kDriverA);
  const api::DeviceClass classB = deviceClass(kClassB, kDriverB);
  const Features f = features(false, true);
  const Features fp = features(true, true);
  const auto set8 = countersA("slice-2", pool(kPool1, 2), {counterSet(kSet1, {{"memory", "8Gi"}})});
  const auto threeParts =
      sliceA("slice-1", pool(kPool1, 2),
             {partition(kDevice1, "4Gi"), partition(kDevice2, "6Gi"), partition(kDevice3, "4Gi")});
  const auto prioritized = claim(
      kClaim0, {request(kReq0, kClassA, 1),
                firstAvailable(kReq1, {subRequest(kSub0, kClassA, 1, {memoryAtLeast("6Gi")}),
                                       subRequest(kSub1, kClassA, 1, {memoryAtLeast("4Gi")})})});
  const auto twoCounters = [](const std::string& name, const char* mem1, const char* cpu1,
                              const char* cpu2, const char* mem2) {
    return dev(name)
        .consumes(kSet1, {{"memory", mem1}, {"cpus", cpu1}}, true)
        .consumes(kSet2, {{"cpus", cpu2}, {"memory", mem2}}, true);
  };
  return {
      {"all-devices-with-consumed-counters",
       {.features = f,
        .claims = {claim(kClaim0, {allRequest(kReq0, kClassA)})},
        .classes = {classA},
        .slices = {sliceA("slice-1", pool(kPool1, 2),
                          {dev(kDevice1).consumes(kSet1, {{"memory", "4Gi"}})}),
                   set8},
        .want = Allocations{local({resA(kReq0, kPool1, kDevice1)})}}},
      {"partitionable-devices-single-device",
       {.features = f,
        .claims = {claim(kClaim0, {request(kReq0, kClassA, 1)})},
        .classes = {classA},
        .slices = {sliceA("slice-1", pool(kPool1, 2),
                          {dev(kDevice1).consumes(kSet1, {{"memory", "4Gi"}})}),
                   set8},
        .want = Allocations{local({resA(kReq0, kPool1, kDevice1)})}}},
      {"partitionable-devices-prioritized-list",
       {.features = fp,
        .claims = {prioritized},
        .classes = {classA},
        .slices = {threeParts, set8},
        .want = Allocations{local(
            {resA(kReq0, kPool1, kDevice1), resA("req-1/subReq-1", kPool1, kDevice3)})}}},
      {"partitionable-devices-multiple-devices",
       {.features = f,
        .claims = {claim(kClaim0, {request(kReq0, kClassA, 1), request(kReq1, kClassA, 1)})},
        .classes = {classA},
        .slices = {threeParts, set8},
        .want =
            Allocations{local({resA(kReq0, kPool1, kDevice1), resA(kReq1, kPool1, kDevice3)})}}},
      {"partitionable-devices-multiple-capacity-pools",
       {.features = fp,
        .claims = {prioritized},
        .classes = {classA},
        .slices = {sliceA("slice-1", pool(kPool1, 2),
                          {dev(kDevice1)
                               .consumes(kSet1, {{"memory", "4Gi"}}, true)
                               .consumes(kSet2, {{"cpus", "4"}}, true),
                           dev(kDevice2)
                               .consumes(kSet1, {{"memory", "6Gi"}}, true)
                               .consumes(kSet2, {{"cpus", "6"}}, true),
                           dev(kDevice3)
                               .consumes(kSet1, {{"memory", "4Gi"}}, true)
                               .consumes(kSet2, {{"cpus", "4"}}, true)}),
                   countersA("slice-2", pool(kPool1, 2),
                             {counterSet(kSet1, {{"memory", "18Gi"}}),
                              counterSet(kSet2, {{"cpus", "8"}})})},
        .want = Allocations{local(
            {resA(kReq0, kPool1, kDevice1), resA("req-1/subReq-1", kPool1, kDevice3)})}}},
      {"partitionable-devices-multiple-counters",
       {.features = f,
        .claims = {claim(kClaim0, {request(kReq0, kClassA, 1), request(kReq1, kClassA, 1)})},
        .classes = {classA},
        .slices = {sliceA("slice-1", pool(kPool1, 2),
                          {twoCounters(kDevice1, "4Gi", "6", "4", "2Gi"),
                           twoCounters(kDevice2, "6Gi", "4", "6", "6Gi"),
                           twoCounters(kDevice3, "4Gi", "4", "4", "4Gi")}),
                   countersA("slice-2", pool(kPool1, 2),
                             {counterSet(kSet1, {{"cpus", "8"}, {"memory", "18Gi"}}),
                              counterSet(kSet2, {{"cpus", "12"}, {"memory", "18Gi"}})})},
        .want =
            Allocations{local({resA(kReq0, kPool1, kDevice2), resA(kReq1, kPool1, kDevice3)})}}},
      {"partitionable-devices-multiple-pools",
       {.features = f,
        .claims = {claim(kClaim0, {request(kReq0, kClassA, 1), request(kReq1, kClassA, 1)})},
        .allocated = {{kDriverA, kPool1, kDevice2},
                      {kDriverA, kPool1, kDevice3},
                      {kDriverA, kPool2, kDevice1}},
        .classes = {classA},
        .slices =
            {sliceA("slice-1", pool(kPool1, 2),
                    {dev(kDevice1).consumes(kSet1, {{"cpus", "6"}, {"memory", "4Gi"}}, true),
                     dev(kDevice2).consumes(kSet1, {{"cpus", "4"}, {"memory", "6Gi"}}, true),
                     dev(kDevice3).consumes(kSet1, {{"cpus", "4"}, {"memory", "4Gi"}}, true)}),
             countersA("slice-2", pool(kPool1, 2),
                       {counterSet(kSet1, {{"cpus", "8"}, {"memory", "18Gi"}})}),
             sliceA("slice-3", pool(kPool2, 2),
                    {dev(kDevice1).consumes(kSet1, {{"cpus", "6"}, {"memory", "4Gi"}}, true),
                     dev(kDevice2).consumes(kSet1, {{"cpus", "1"}, {"memory", "7Gi"}}, true),
                     dev(kDevice3).consumes(kSet1, {{"cpus", "1"}, {"memory", "7Gi"}}, true)}),
             countersA("slice-4", pool(kPool2, 2),
                       {counterSet(kSet1, {{"cpus", "8"}, {"memory", "18Gi"}})})},
        .want =
            Allocations{local({resA(kReq0, kPool2, kDevice2), resA(kReq1, kPool2, kDevice3)})}}},
      {"partitionable-devices-unused-counters-in-counter-set",
       {.features = f,
        .claims = {claim(kClaim0, {request(kReq0, kClassA, 2)})},
        .classes = {classA},
        .slices = {sliceA("slice-1", pool(kPool1, 2),
                          {dev(kDevice1).consumes(kSet1, {{"memory", "5Gi"}}),
                           dev(kDevice2).consumes(kSet1, {{"memory", "4Gi"}}),
                           dev(kDevice3).consumes(kSet1, {{"memory", "4Gi"}})}),
                   countersA("slice-2", pool(kPool1, 2),
                             {counterSet(kSet1, {{"memory", "8Gi"}, {"unused", "1Gi"}})})},
        .want =
            Allocations{local({resA(kReq0, kPool1, kDevice2), resA(kReq0, kPool1, kDevice3)})}}},
      {"partitionable-devices-no-capacity-available",
       {.features = f,
        .claims = {claim(kClaim0, {request(kReq0, kClassA, 1)})},
        .allocated = {{kDriverA, kPool1, kDevice2}},
        .classes = {classA},
        .slices = {sliceA("slice-1", pool(kPool1),
                          {partition(kDevice1, "4Gi"), partition(kDevice2, "16Gi")}),
                   countersA("slice-2", pool(kPool1), {counterSet(kSet1, {{"memory", "18Gi"}})})}}},
      {"partitionable-devices-overallocated-capacity-pool",
       {.features = f,
        .claims = {claim(kClaim0, {request(kReq0, kClassA, 1)})},
        .allocated = {{kDriverA, kPool1, kDevice2}},
        .classes = {classA},
        .slices = {sliceA("slice-1", pool(kPool1),
                          {partition(kDevice1, "4Gi"), partition(kDevice2, "20Gi")}),
                   countersA("slice-2", pool(kPool1), {counterSet(kSet1, {{"memory", "18Gi"}})})}}},
      {"partitionable-devices-disabled-device-consumes-counters",
       {.claims = {claim(kClaim0, {request(kReq0, kClassA, 1)})},
        .classes = {classA},
        .slices = {sliceA("slice-1", pool(kPool1),
                          {dev(kDevice1).consumes(kSet1, {{"memory", "4Gi"}})}),
                   countersA("slice-2", pool(kPool1), {counterSet(kSet1, {{"memory", "18Gi"}})})}}},
      {"partitionable-devices-disabled-other-device-do-not-consume-counters",
       {.claims = {claim(kClaim0, {request(kReq0, kClassA, 1)})},
        .classes = {classA},
        .slices = {sliceA("slice-1", pool(kPool1, 2),
                          {dev(kDevice1).consumes(kSet1, {{"memory", "4Gi"}}), dev(kDevice2)}),
                   countersA("slice-2", pool(kPool1, 2),
                             {counterSet(kSet1, {{"memory", "18Gi"}})})},
        .want = Allocations{local({resA(kReq0, kPool1, kDevice2)})}}},
      {"partitionable-devices-disabled-per-device-node-selection",
       {.claims = {claim(kClaim0, {request(kReq0, kClassA, 1)})},
        .classes = {classA},
        .slices = {slice("slice-1", perDevice(), pool(kPool1), kDriverA,
                         {dev(kDevice2).onNode(kNode1)})}}},
      {"partitionable-devices-per-device-node-selection-nodename",
       {.features = fp,
        .claims = {claim(
            kClaim0,
            {firstAvailable(kReq0, {subRequest(kSub0, kClassA, 1, {memoryAtLeast("6Gi")}),
                                    subRequest(kSub1, kClassA, 1, {memoryAtLeast("4Gi")})})})},
        .classes = {classA},
        .slices = {slice("slice-1", perDevice(), pool(kPool1, 2), kDriverA,
                         {partition(kDevice1, "4Gi").onNode(kNode1),
                          partition(kDevice2, "6Gi").onNode(kNode2)}),
                   counterSlice("slice-2", perDevice(), pool(kPool1, 2), kDriverA,
                                {counterSet(kSet1, {{"memory", "18Gi"}})})},
        .want = Allocations{local({resA("req-0/subReq-1", kPool1, kDevice1)})}}},
      {"partitionable-devices-per-device-node-selection-node-selector",
       {.features = fp,
        .claims = {claim(kClaim0, {request(kReq0, kClassA, 1)})},
        .classes = {classA},
        .slices = {slice("slice-1", perDevice(), pool(kPool1, 2), kDriverA,
                         {partition(kDevice1, "4Gi").onNodes(labelSelector("region", {kRegion1}))}),
                   counterSlice("slice-2", perDevice(), pool(kPool1, 2), kDriverA,
                                {counterSet(kSet1, {{"memory", "18Gi"}})})},
        .want = Allocations{allocation(labelSelector("region", {kRegion1}),
                                       {resA(kReq0, kPool1, kDevice1)})}}},
      {"partitionable-devices-per-device-node-selection-node-selector-multiple-devices",
       {.features = fp,
        .claims = {claim(kClaim0, {request(kReq0, kClassA, 3), request(kReq1, kClassB, 3)})},
        .classes = {classA, classB},
        .slices = {slice("slice-1", perDevice(), pool(kPool1, 2), kDriverA,
                         {partition(kDevice1, "4Gi").onNodes(labelSelector("region", {kRegion1})),
                          partition(kDevice2, "4Gi").onNode(kNode1),
                          partition(kDevice3, "4Gi").onAllNodes()}),
                   counterSlice("slice-2", perDevice(), pool(kPool1, 2), kDriverA,
                                {counterSet(kSet1, {{"memory", "18Gi"}})}),
                   slice("slice-3", onNode(kNode1), pool(kPool2, 2), kDriverB,
                         {dev(kDevice1).consumes(kSet2, {{"memory", "4Gi"}}, true),
                          dev(kDevice2).consumes(kSet2, {{"memory", "4Gi"}}, true),
                          dev(kDevice3).consumes(kSet2, {{"memory", "4Gi"}}, true)}),
                   counterSlice("slice-4", onNode(kNode1), pool(kPool2, 2), kDriverB,
                                {counterSet(kSet2, {{"memory", "12Gi"}})})},
        .want = Allocations{local({resA(kReq0, kPool1, kDevice1), resA(kReq0, kPool1, kDevice2),
                                   resA(kReq0, kPool1, kDevice3),
                                   result(kReq1, kDriverB, kPool2, kDevice1),
                                   result(kReq1, kDriverB, kPool2, kDevice2),
                                   result(kReq1, kDriverB, kPool2, kDevice3)})}}},
      {"partitionable-devices-with-attribute-selector",
       {.features = f,
        .claims = {claim(kClaim0, {request(kReq0, kClassA, 2),
                                   request(kReq1, kClassA, 1,
                                           {sel("device.attributes[\"driver-a\"].special")})})},
        .classes = {classA},
        .slices = {sliceA("slice-1", pool(kPool1, 2),
                          {dev(kDevice1)
                               .attr("special", true)
                               .consumes(kSet1, {{"cpu1", "1"}})
                               .consumes(kSet2, {{"mem", "10Gi"}}),
                           dev(kDevice2)
                               .attr("special", false)
                               .consumes(kSet1, {{"cpu2", "1"}})
                               .consumes(kSet2, {{"mem", "10Gi"}}),
                           dev(kDevice3)
                               .attr("special", false)
                               .consumes(kSet1, {{"cpu3", "1"}})
                               .consumes(kSet2, {{"mem", "10Gi"}})}),
                   countersA("slice-2", pool(kPool1, 2),
                             {counterSet(kSet1, {{"cpu1", "1"}, {"cpu2", "1"}, {"cpu3", "1"}}),
                              counterSet(kSet2, {{"mem", "30Gi"}})})},
        .want = Allocations{local({resA(kReq0, kPool1, kDevice2), resA(kReq0, kPool1, kDevice3),
                                   resA(kReq1, kPool1, kDevice1)})}}},
      {"partitionable-devices-same-counter-set-name-in-different-resource-slices",
       {.features = f,
        .claims = {claim(kClaim0, {request(kReq0, kClassA, 1)})},
        .classes = {classA},
        .slices = {sliceA("slice-1", pool(kPool1, 4), {dev(kDevice1)}),
                   countersA("slice-2", pool(kPool1, 4), {counterSet(kSet1, {})}),
                   sliceA("slice-3", pool(kPool1, 4), {dev(kDevice2)}),
                   countersA("slice-4", pool(kPool1, 4), {counterSet(kSet1, {})})},
        .wantMessage = std::string(kInvalidPools)}},
      {"partitionable-devices-device-counter-consumption-references-unknown-counter-set",
       {.features = f,
        .claims = {claim(kClaim0, {request(kReq0, kClassA, 1)})},
        .classes = {classA},
        .slices = {sliceA("slice-1", pool(kPool1, 2), {dev(kDevice1).consumes(kSet2, {})}),
                   countersA("slice-2", pool(kPool1, 2), {counterSet(kSet1, {})})},
        .wantMessage = std::string(kInvalidPools)}},
      {"partitionable-devices-device-counter-consumption-references-unknown-counter-in-counter-set",
       {.features = f,
        .claims = {claim(kClaim0, {request(kReq0, kClassA, 1)})},
        .classes = {classA},
        .slices = {sliceA("slice-1", pool(kPool1, 2),
                          {dev(kDevice1).consumes(kSet1, {{"memory", "8Gi"}})}),
                   countersA("slice-2", pool(kPool1, 2),
                             {counterSet(kSet1, {{"other-memory", "8Gi"}})})},
        .wantMessage = std::string(kInvalidPools)}},
      {"partitionable-devices-device-counter-consumption-references-counter-set-in-other-pool",
       {.features = f,
        .claims = {claim(kClaim0, {request(kReq0, kClassA, 1)})},
        .classes = {classA},
        .slices = {sliceA("slice-1", pool(kPool1),
                          {dev(kDevice1).consumes(kSet1, {{"memory", "8Gi"}})}),
                   countersA("slice-2", pool(kPool2), {counterSet(kSet1, {{"memory", "8Gi"}})})},
        .wantMessage = std::string(kInvalidPools)}},
      {"partitionable-devices-devices-on-different-nodes-consume-same-counter-set",
       {.features = fp,
        .claims = {claim(
            kClaim0,
            {firstAvailable(kReq0, {subRequest(kSub0, kClassA, 1, {memoryAtLeast("6Gi")}),
                                    subRequest(kSub1, kClassA, 1, {memoryAtLeast("2Gi")})})})},
        .allocated = {{kDriverA, kPool1, kDevice3}},
        .classes = {classA},
        .slices = {countersA("slice-1", pool(kPool1, 3), {counterSet(kSet1, {{"memory", "8Gi"}})}),
                   sliceA("slice-2", pool(kPool1, 3),
                          {partition(kDevice1, "6Gi"), partition(kDevice2, "2Gi")}),
                   slice("slice-3", onNode(kNode2), pool(kPool1, 3), kDriverA,
                         {dev(kDevice3).consumes(kSet1, {{"memory", "6Gi"}})})},
        .want = Allocations{local({resA("req-0/subReq-1", kPool1, kDevice2)})}}},
      {"partitionable-devices-devices-consume-counter-set-in-different-nodes",
       {.features = f,
        .claims = {claim(kClaim0, {request(kReq0, kClassA, 1)})},
        .allocated = {{kDriverA, kPool1, kDevice1}},
        .classes = {classA},
        .slices = {countersA("slice-1", pool(kPool1, 3), {counterSet(kSet1, {{"memory", "8Gi"}})}),
                   sliceA("slice-2", pool(kPool1, 3), {partition(kDevice1, "6Gi")}),
                   slice("slice-3", onNode(kNode2), pool(kPool1, 3), kDriverA,
                         {partition(kDevice2, "6Gi"), partition(kDevice3, "2Gi")})},
        .node = node(kNode2, kRegion1),
        .want = Allocations{allocation(localNode(kNode2), {resA(kReq0, kPool1, kDevice3)})}}},
      {"partitionable-devices-validation-error-on-non-targeting-slice",
       {.features = f,
        .claims = {claim(kClaim0, {request(kReq0, kClassA, 1)})},
        .classes = {classA},
        .slices = {countersA("slice-1", pool(kPool1, 3), {counterSet(kSet1, {{"memory", "8Gi"}})}),
                   sliceA("slice-2", pool(kPool1, 3), {partition(kDevice1, "6Gi")}),
                   slice("slice-3", onNode(kNode2), pool(kPool1, 3), kDriverA,
                         {dev(kDevice3).consumes(kSet2, {{"memory", "6Gi"}})})},
        .wantMessage = std::string(kInvalidPools)}},
  };
}

Table taintAndBindingCases() {
  const api::DeviceClass classA = deviceClass(kClassA, kDriverA);
  const api::DeviceClass classB = deviceClass(kClassB, kDriverB);
  const api::DeviceTaint noSchedule{"taint-key", "taint-value", "NoSchedule", std::nullopt};
  const api::DeviceTaint noExecute{"taint-key", "taint-value-2", "NoExecute", std::nullopt};
  const api::DeviceTaint none{"taint-key", "taint-value", "None", std::nullopt};
  const api::DeviceToleration tolerateNoSchedule{"taint-key", "Exists", "", "NoSchedule",
                                                 std::nullopt};
  const api::DeviceToleration tolerateNoExecute{"taint-key", "Equal", "taint-value-2", "NoExecute",
                                                std::nullopt};
  const api::DeviceToleration tolerateKey1{"key1", "Exists", "", "NoSchedule", std::nullopt};
  const api::DeviceTaint key1{"key1", "value1", "NoSchedule", std::nullopt};
  const Features t = features(false, false, true);
  const Features tp = features(true, false, true);
  const Features b = features(false, false, false, true);
  const Features pb = features(false, true, false, true);
  const Features pbt = features(false, true, true, true);
  const auto twoTainted = sliceA("slice-1", pool(kPool1),
                                 {dev(kDevice1).taint(noSchedule), dev(kDevice2).taint(noExecute)});
  const auto set8 = countersA("slice-2", pool(kPool1, 2), {counterSet(kSet1, {{"memory", "8Gi"}})});
  auto admin = withAdmin(request(kReq0, kClassA, 1));
  Features ta = t;
  ta.adminAccess = true;
  Features a = features(false, false);
  a.adminAccess = true;
  return {
      {"tainted-two-devices",
       {.features = t,
        .claims = {claim(kClaim0, {request(kReq0, kClassA, 1)})},
        .classes = {classA},
        .slices = {twoTainted}}},
      {"tainted-one-device-two-taints",
       {.features = t,
        .claims = {claim(kClaim0, {request(kReq0, kClassA, 1)})},
        .classes = {classA},
        .slices = {sliceA("slice-1", pool(kPool1),
                          {dev(kDevice1).taint(noSchedule).taint(noExecute)})}}},
      {"tainted-two-devices-tolerated",
       {.features = t,
        .claims = {claim(kClaim0,
                         {withTolerations(request(kReq0, kClassA, 1), {tolerateNoExecute})})},
        .classes = {classA},
        .slices = {twoTainted},
        .want = Allocations{local(
            {result(kReq0, kDriverA, kPool1, kDevice2, false, {tolerateNoExecute})})}}},
      {"tainted-two-devices-prioritized-list-tolerated",
       {.features = tp,
        .claims = {claim(kClaim0,
                         {firstAvailable(kReq0, {subRequest(kSub0, kClassA, 1),
                                                 subWithTolerations(subRequest(kSub1, kClassA, 1),
                                                                    {tolerateNoExecute})})})},
        .classes = {classA},
        .slices = {twoTainted},
        .want = Allocations{local(
            {result("req-0/subReq-1", kDriverA, kPool1, kDevice2, false, {tolerateNoExecute})})}}},
      {"tainted-no-effect",
       {.features = t,
        .claims = {claim(kClaim0, {request(kReq0, kClassA, 1)})},
        .classes = {classA},
        .slices = {sliceA("slice-1", pool(kPool1), {dev(kDevice1).taint(none)})},
        .want = Allocations{local({resA(kReq0, kPool1, kDevice1)})}}},
      {"tainted-one-device-two-taints-both-tolerated",
       {.features = t,
        .claims = {claim(kClaim0, {withTolerations(request(kReq0, kClassA, 1),
                                                   {tolerateNoSchedule, tolerateNoExecute})})},
        .classes = {classA},
        .slices = {sliceA("slice-1", pool(kPool1),
                          {dev(kDevice1).taint(noSchedule).taint(noExecute)})},
        .want = Allocations{local({result(kReq0, kDriverA, kPool1, kDevice1, false,
                                          {tolerateNoSchedule, tolerateNoExecute})})}}},
      {"tainted-disabled",
       {.claims = {claim(kClaim0, {request(kReq0, kClassA, 1)})},
        .classes = {classA},
        .slices = {sliceA("slice-1", pool(kPool1),
                          {dev(kDevice1).taint(noSchedule).taint(noExecute)})},
        .want = Allocations{local({resA(kReq0, kPool1, kDevice1)})}}},
      {"tainted-prioritized-list",
       {.features = tp,
        .claims = {claim(kClaim0, {firstAvailable(kReq0, {subRequest(kSub0, kClassB, 1),
                                                          subRequest(kSub1, kClassA, 1)})})},
        .classes = {classA, classB},
        .slices = {sliceA("slice-1", pool(kPool1), {dev(kDevice1).taint(noSchedule)})}}},
      {"tainted-prioritized-list-disabled",
       {.features = features(true, false),
        .claims = {claim(kClaim0, {firstAvailable(kReq0, {subRequest(kSub0, kClassB, 1),
                                                          subRequest(kSub1, kClassA, 1)})})},
        .classes = {classA, classB},
        .slices = {sliceA("slice-1", pool(kPool1), {dev(kDevice1).taint(noSchedule)})},
        .want = Allocations{local({resA("req-0/subReq-1", kPool1, kDevice1)})}}},
      {"tainted-admin-access",
       {.features = ta,
        .claims = {claim(kClaim0, {admin})},
        .allocated = {{kDriverA, kPool1, kDevice1}, {kDriverA, kPool1, kDevice2}},
        .classes = {classA},
        .slices = {sliceA("slice-1", pool(kPool1), {dev(kDevice1).taint(noSchedule)})}}},
      {"tainted-admin-access-disabled",
       {.features = a,
        .claims = {claim(kClaim0, {admin})},
        .allocated = {{kDriverA, kPool1, kDevice1}, {kDriverA, kPool1, kDevice2}},
        .classes = {classA},
        .slices = {sliceA("slice-1", pool(kPool1), {dev(kDevice1).taint(noSchedule)})},
        .want = Allocations{local({result(kReq0, kDriverA, kPool1, kDevice1, true)})}}},
      {"tainted-all-devices-single",
       {.features = t,
        .claims = {claim(kClaim0, {allRequest(kReq0, kClassA)})},
        .classes = {classA},
        .slices = {sliceA("slice-1", pool(kPool1), {dev(kDevice1).taint(noSchedule)})}}},
      {"tainted-all-devices-single-disabled",
       {.claims = {claim(kClaim0, {allRequest(kReq0, kClassA)})},
        .classes = {classA},
        .slices = {sliceA("slice-1", pool(kPool1), {dev(kDevice1).taint(noSchedule)})},
        .want = Allocations{local({resA(kReq0, kPool1, kDevice1)})}}},
      {"device-binding-conditions",
       {.features = b,
        .claims = {claim(kClaim0, {request(kReq0, kClassA, 1)})},
        .classes = {classA},
        .slices = {sliceA("slice-1", pool(kPool1),
                          {dev(kDevice1).binding({"IsPrepare"}, {"BindingFailed"})})},
        .want = Allocations{local(
            {withBinding(resA(kReq0, kPool1, kDevice1), {"IsPrepare"}, {"BindingFailed"})})}}},
      {"binding-conditions-multiple-devices",
       {.features = b,
        .claims = {claim(kClaim0, {request(kReq0, kClassA, 2), request(kReq1, kClassA, 1)})},
        .classes = {classA},
        .slices = {sliceA("slice-1", pool(kPool1),
                          {dev(kDevice1).binding({"IsPrepare"}, {"BindingFailed"}),
                           dev(kDevice2).binding({"IsPrepare2"}, {"BindingFailed2"}),
                           dev(kDevice3).binding({"IsPrepare3"}, {"BindingFailed3"})})},
        .want = Allocations{local(
            {withBinding(resA(kReq0, kPool1, kDevice1), {"IsPrepare"}, {"BindingFailed"}),
             withBinding(resA(kReq0, kPool1, kDevice2), {"IsPrepare2"}, {"BindingFailed2"}),
             withBinding(resA(kReq1, kPool1, kDevice3), {"IsPrepare3"}, {"BindingFailed3"})})}}},
      {"binding-conditions-with-and-without",
       {.features = b,
        .claims = {claim(kClaim0, {request(kReq0, kClassA, 1), request(kReq1, kClassA, 1)})},
        .classes = {classA},
        .slices = {sliceA(
            "slice-1", pool(kPool1),
            {dev(kDevice1), dev(kDevice2).binding({"IsPrepare"}, {"BindingFailed"})})},
        .want = Allocations{local(
            {resA(kReq0, kPool1, kDevice1),
             withBinding(resA(kReq1, kPool1, kDevice2), {"IsPrepare"}, {"BindingFailed"})})}}},
      {"binding-conditions-without-feature-gate",
       {.claims = {claim(kClaim0, {request(kReq0, kClassA, 1)})},
        .classes = {classA},
        .slices = {sliceA("slice-1", pool(kPool1),
                          {dev(kDevice1).binding({"IsPrepare"}, {"BindingFailed"})})}}},
      {"node-restriction",
       {.features = b,
        .claims = {claim(kClaim0, {request(kReq0, kClassA, 1)})},
        .classes = {classA},
        .slices = {slice("slice-1", bySelector(labelSelector("planet", {"earth"})), pool(kPool1),
                         kDriverA, {dev(kDevice1).bindsToNode()})},
        .want = Allocations{local({resA(kReq0, kPool1, kDevice1)})}}},
      {"partitionable-devices-with-binding-conditions",
       {.features = pb,
        .claims = {claim(kClaim0, {request(kReq0, kClassA, 1)})},
        .classes = {classA},
        .slices = {sliceA("slice-1", pool(kPool1, 2),
                          {partition(kDevice1, "4Gi").binding({"IsPrepare"}, {"BindingFailed"})}),
                   set8},
        .want = Allocations{local(
            {withBinding(resA(kReq0, kPool1, kDevice1), {"IsPrepare"}, {"BindingFailed"})})}}},
      {"partitionable-devices-with-binding-conditions-multiple",
       {.features = pb,
        .claims = {claim(kClaim0, {request(kReq0, kClassA, 2)})},
        .classes = {classA},
        .slices = {sliceA("slice-1", pool(kPool1, 2),
                          {partition(kDevice1, "4Gi").binding({"IsPrepare"}, {"BindingFailed"}),
                           partition(kDevice2, "4Gi").binding({"IsPrepare2"}, {"BindingFailed2"})}),
                   set8},
        .want = Allocations{local(
            {withBinding(resA(kReq0, kPool1, kDevice1), {"IsPrepare"}, {"BindingFailed"}),
             withBinding(resA(kReq0, kPool1, kDevice2), {"IsPrepare2"}, {"BindingFailed2"})})}}},
      {"partitionable-devices-with-binding-conditions-some-devices-no-conditions",
       {.features = pb,
        .claims = {claim(kClaim0, {request(kReq0, kClassA, 3)})},
        .classes = {classA},
        .slices = {sliceA("slice-1", pool(kPool1, 2),
                          {partition(kDevice1, "2Gi").binding({"IsPrepare"}, {"BindingFailed"}),
                           partition(kDevice2, "2Gi"),
                           partition(kDevice3, "4Gi").binding({"IsReady"}, {"BindingTimeout"})}),
                   set8},
        .want = Allocations{local(
            {withBinding(resA(kReq0, kPool1, kDevice1), {"IsPrepare"}, {"BindingFailed"}),
             resA(kReq0, kPool1, kDevice2),
             withBinding(resA(kReq0, kPool1, kDevice3), {"IsReady"}, {"BindingTimeout"})})}}},
      {"partitionable-devices-with-binding-conditions-multi-slices",
       {.features = pb,
        .claims = {claim(kClaim0, {request(kReq0, kClassA, 2)})},
        .classes = {classA},
        .slices = {sliceA("slice-4", pool(kPool1, 4),
                          {partition(kDevice1, "4Gi").binding({"IsPrepare"}, {"BindingFailed"})}),
                   countersA("slice-3", pool(kPool1, 4), {counterSet(kSet1, {{"memory", "8Gi"}})}),
                   sliceA("slice-2", pool(kPool1, 4),
                          {dev(kDevice2).consumes(kSet2, {{"memory", "4Gi"}}, true)}),
                   countersA("slice-1", pool(kPool1, 4), {counterSet(kSet2, {{"memory", "8Gi"}})})},
        .want = Allocations{local(
            {resA(kReq0, kPool1, kDevice2),
             withBinding(resA(kReq0, kPool1, kDevice1), {"IsPrepare"}, {"BindingFailed"})})}}},
      {"partitionable-devices-with-binding-conditions-and-taints",
       {.features = pbt,
        .claims = {claim(kClaim0, {request(kReq0, kClassA, 2)})},
        .classes = {classA},
        .slices =
            {sliceA(
                 "slice-1", pool(kPool1),
                 {partition(kDevice1, "4Gi").binding({"IsPrepare"}, {"BindingFailed"}).taint(key1),
                  partition(kDevice2, "4Gi")}),
             countersA("slice-2", pool(kPool1), {counterSet(kSet1, {{"memory", "8Gi"}})})}}},
      {"partitionable-devices-with-binding-conditions-and-taints-tolerated",
       {.features = pbt,
        .claims = {claim(kClaim0, {withTolerations(request(kReq0, kClassA, 2), {tolerateKey1})})},
        .classes = {classA},
        .slices =
            {sliceA(
                 "slice-1", pool(kPool1, 2),
                 {partition(kDevice1, "4Gi").binding({"IsPrepare"}, {"BindingFailed"}).taint(key1),
                  partition(kDevice2, "4Gi")}),
             set8},
        .want = Allocations{local(
            {withBinding(result(kReq0, kDriverA, kPool1, kDevice1, false, {tolerateKey1}),
                         {"IsPrepare"}, {"BindingFailed"}),
             result(kReq0, kDriverA, kPool1, kDevice2, false, {tolerateKey1})})}}},
  };
}

INSTANTIATE_TEST_SUITE_P(Partitionable, DraUpstreamTable, ::testing::ValuesIn(partitionableCases()),
                         caseName);
INSTANTIATE_TEST_SUITE_P(TaintsAndBinding, DraUpstreamTable,
                         ::testing::ValuesIn(taintAndBindingCases()), caseName);

}  // namespace
}  // namespace ksched::plugins::dra
