// The allocator against upstream's shared allocator table: prioritized lists (firstAvailable),
// their configs and constraints, and the per-claim device limit. Case names are upstream's;
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

std::vector<api::DeviceRequestAllocationResult> numbered(const std::string& req, int count,
                                                         int first = 0) {
  std::vector<api::DeviceRequestAllocationResult> out;
  for (int i = first; i < first + count; ++i)
    out.push_back(resA(req, kPool1, "device-" + std::to_string(i)));
  return out;
}

Table prioritizedListCases() {
  const api::DeviceClass classA = deviceClass(kClassA, kDriverA);
  const api::DeviceClass classB = deviceClass(kClassB, kDriverB);
  const Features f = features(true, false);
  return {
      {"prioritized-list-first-unavailable",
       {.features = f,
        .claims = {claim(kClaim0, {firstAvailable(kReq0, {subRequest(kSub0, kClassB, 1),
                                                          subRequest(kSub1, kClassA, 1)})})},
        .classes = {classA, classB},
        .slices = {sliceA("slice-1", pool(kPool1), {dev(kDevice1)})},
        .want = Allocations{local({resA("req-0/subReq-1", kPool1, kDevice1)})}}},
      {"prioritized-list-non-available",
       {.features = f,
        .claims = {claim(kClaim0, {firstAvailable(kReq0, {subRequest(kSub0, kClassB, 2),
                                                          subRequest(kSub1, kClassA, 2)})})},
        .classes = {classA, classB},
        .slices = {sliceA("slice-1", pool(kPool1), {dev(kDevice1)}),
                   slice("slice-2", onNode(kNode1), pool(kPool2), kDriverB, {dev(kDevice1)})}}},
      {"prioritized-list-device-config",
       {.features = f,
        .claims = {claim(
            kClaim0,
            {firstAvailable(kReq0, {subRequest(kSub0, kClassA, 1), subRequest(kSub1, kClassB, 2)})},
            {},
            {opaque(kDriverA, "foo", {"req-0/subReq-0"}),
             opaque(kDriverB, "bar", {"req-0/subReq-1"})})},
        .classes = {classA, classB},
        .slices = {slice("slice-1", onNode(kNode1), pool(kPool1), kDriverB,
                         {dev(kDevice1), dev(kDevice2)})},
        .want = Allocations{allocation(localNode(kNode1),
                                       {result("req-0/subReq-1", kDriverB, kPool1, kDevice1),
                                        result("req-0/subReq-1", kDriverB, kPool1, kDevice2)},
                                       {fromClaim(opaque(kDriverB, "bar"))})}}},
      {"prioritized-list-class-config",
       {.features = f,
        .claims = {claim(kClaim0, {firstAvailable(kReq0, {subRequest(kSub0, kClassA, 2),
                                                          subRequest(kSub1, kClassB, 2)})})},
        .classes = {classWithConfig(kClassA, kDriverA, "foo"),
                    classWithConfig(kClassB, kDriverB, "bar")},
        .slices = {slice("slice-1", onNode(kNode1), pool(kPool1), kDriverB,
                         {dev(kDevice1), dev(kDevice2)}),
                   sliceA("slice-2", pool(kPool2), {dev(kDevice3)})},
        .want = Allocations{allocation(localNode(kNode1),
                                       {result("req-0/subReq-1", kDriverB, kPool1, kDevice1),
                                        result("req-0/subReq-1", kDriverB, kPool1, kDevice2)},
                                       {fromClass(opaque(kDriverB, "bar"))})}}},
      {"claim-config-scoped-to-subrequests-of-one-request",
       {.features = f,
        .claims = {claim(
            kClaim0,
            {firstAvailable(kReq0, {subRequest(kSub0, kClassA, 1), subRequest(kSub1, kClassB, 1)}),
             request(kReq1, kClassA, 1)},
            {}, {opaque(kDriverA, "scoped", {"req-0/subReq-0", "req-0/subReq-1"})})},
        .classes = {classA, classB},
        .slices = {sliceA("slice-1", pool(kPool1), devices(2))},
        .want = Allocations{allocation(
            localNode(kNode1),
            {resA("req-0/subReq-0", kPool1, "device-0"), resA(kReq1, kPool1, kDevice1)},
            {fromClaim(opaque(kDriverA, "scoped", {"req-0/subReq-0", "req-0/subReq-1"}))})}}},
      {"claim-config-covering-all-requests-is-cleared",
       {.features = f,
        .claims = {claim(
            kClaim0,
            {firstAvailable(kReq0, {subRequest(kSub0, kClassA, 1), subRequest(kSub1, kClassB, 1)}),
             request(kReq1, kClassA, 1)},
            {}, {opaque(kDriverA, "all", {"req-0/subReq-0", kReq1})})},
        .classes = {classA, classB},
        .slices = {sliceA("slice-1", pool(kPool1), devices(2))},
        .want = Allocations{allocation(
            localNode(kNode1),
            {resA("req-0/subReq-0", kPool1, "device-0"), resA(kReq1, kPool1, kDevice1)},
            {fromClaim(opaque(kDriverA, "all"))})}}},
      {"prioritized-list-subrequests-with-expressions",
       {.features = f,
        .claims = {claim(
            kClaim0,
            {request(kReq0, kClassA, 1, {memoryAtLeast("1Gi")}),
             firstAvailable(kReq1, {subRequest(kSub0, kClassA, 1, {memoryAtLeast("4Gi")}),
                                    subRequest(kSub1, kClassA, 2, {memoryAtLeast("2Gi")})})})},
        .classes = {classA},
        .slices = {sliceA("slice-1", pool(kPool1),
                          {dev(kDevice1).cap("memory", "2Gi"), dev(kDevice2).cap("memory", "2Gi"),
                           dev(kDevice3).cap("memory", "1Gi")})},
        .want = Allocations{local({resA(kReq0, kPool1, kDevice3),
                                   resA("req-1/subReq-1", kPool1, kDevice1),
                                   resA("req-1/subReq-1", kPool1, kDevice2)})}}},
      {"prioritized-list-subrequests-with-constraints-ref-parent-request",
       {.features = f,
        .claims = {claim(
            kClaim0,
            {request(kReq0, kClassA, 1, {memoryAtLeast("8Gi")}),
             firstAvailable(kReq1, {subRequest(kSub0, kClassA, 1, {memoryAtLeast("2Gi")}),
                                    subRequest(kSub1, kClassA, 1, {memoryAtLeast("1Gi")})})},
            {matchAttribute("driver-a/driverVersion", {kReq0, kReq1})})},
        .classes = {classA},
        .slices = {sliceA("slice-1", pool(kPool1),
                          {dev(kDevice1).cap("memory", "8Gi").version("driverVersion", "1.0.0")}),
                   sliceA("slice-2", pool(kPool2),
                          {dev(kDevice2).cap("memory", "2Gi").version("driverVersion", "2.0.0"),
                           dev(kDevice3).cap("memory", "1Gi").version("driverVersion", "1.0.0")})},
        .want = Allocations{local(
            {resA(kReq0, kPool1, kDevice1), resA("req-1/subReq-1", kPool2, kDevice3)})}}},
      {"prioritized-list-subrequests-with-constraints-ref-sub-request",
       {.features = f,
        .claims = {claim(
            kClaim0,
            {request(kReq0, kClassA, 1, {memoryAtLeast("8Gi")}),
             firstAvailable(kReq1, {subRequest(kSub0, kClassA, 1, {memoryAtLeast("2Gi")}),
                                    subRequest(kSub1, kClassA, 1, {memoryAtLeast("1Gi")})})},
            {matchAttribute("driver-a/driverVersion", {kReq0, "req-1/subReq-0"})})},
        .classes = {classA},
        .slices = {sliceA("slice-1", pool(kPool1),
                          {dev(kDevice1).cap("memory", "8Gi").version("driverVersion", "1.0.0")}),
                   sliceA("slice-2", pool(kPool2),
                          {dev(kDevice2).cap("memory", "2Gi").version("driverVersion", "2.0.0")})},
        .want = Allocations{local(
            {resA(kReq0, kPool1, kDevice1), resA("req-1/subReq-1", kPool2, kDevice2)})}}},
      {"prioritized-list-subrequests-with-allocation-mode-all",
       {.features = f,
        .claims = {claim(kClaim0, {firstAvailable(kReq0, {allSubRequest(kSub0, kClassA),
                                                          subRequest(kSub1, kClassA, 1)})})},
        .allocated = {{kDriverA, kPool1, kDevice1}},
        .classes = {classA},
        .slices = {sliceA("slice-1", pool(kPool1), {dev(kDevice1), dev(kDevice2)})},
        .want = Allocations{local({resA("req-0/subReq-1", kPool1, kDevice2)})}}},
      {"prioritized-list-allocation-mode-all-multiple-requests",
       {.features = f,
        .claims = {claim(kClaim0, {request(kReq0, kClassA, 1),
                                   firstAvailable(kReq1, {allSubRequest(kSub0, kClassA),
                                                          subRequest(kSub1, kClassA, 1)})})},
        .classes = {classA},
        .slices = {sliceA("slice-1", pool(kPool1), {dev(kDevice1), dev(kDevice2)})},
        .want = Allocations{local(
            {resA(kReq0, kPool1, kDevice1), resA("req-1/subReq-1", kPool1, kDevice2)})}}},
      {"prioritized-list-disabled",
       {.claims = {claim(kClaim0, {firstAvailable(kReq0, {subRequest(kSub0, kClassA, 1)})})},
        .classes = {classA},
        .slices = {sliceA("slice-1", pool(kPool1), {dev(kDevice1)})},
        .wantError = "claim claim-0, request req-0: has subrequests, but the DRAPrioritizedList "
                     "feature is disabled"}},
      {"prioritized-list-multi-request",
       {.features = f,
        .claims = {claim(
            kClaim0,
            {request(kReq1, kClassA, 1, {memoryAtLeast("8Gi")}),
             firstAvailable(kReq0, {subRequest(kSub0, kClassA, 1, {memoryAtLeast("8Gi")}),
                                    subRequest(kSub1, kClassA, 1, {memoryAtLeast("4Gi")})})})},
        .classes = {classA},
        .slices = {sliceA("slice-1", pool(kPool1), {dev(kDevice1).cap("memory", "8Gi")}),
                   sliceA("slice-2", pool(kPool2), {dev(kDevice2).cap("memory", "4Gi")})},
        .want = Allocations{local(
            {resA(kReq1, kPool1, kDevice1), resA("req-0/subReq-1", kPool2, kDevice2)})}}},
      {"prioritized-list-with-backtracking",
       {.features = f,
        .claims = {claim(
            kClaim0,
            {firstAvailable(kReq0, {subRequest(kSub0, kClassA, 1, {memoryAtLeast("8Gi")}),
                                    subRequest(kSub1, kClassA, 1, {memoryAtLeast("4Gi")})}),
             request(kReq1, kClassA, 1, {memoryAtLeast("8Gi")})})},
        .classes = {classA},
        .slices = {sliceA("slice-1", pool(kPool1), {dev(kDevice1).cap("memory", "8Gi")}),
                   sliceA("slice-2", pool(kPool2), {dev(kDevice2).cap("memory", "4Gi")})},
        .want = Allocations{local(
            {resA("req-0/subReq-1", kPool2, kDevice2), resA(kReq1, kPool1, kDevice1)})}}},
      {"prioritized-list-too-many-in-first-subrequest",
       {.features = f,
        .claims = {claim(kClaim0, {firstAvailable(kReq0, {subRequest(kSub0, kClassB, 500),
                                                          subRequest(kSub1, kClassA, 1)})})},
        .classes = {classA, classB},
        .slices = {sliceA("slice-1", pool(kPool1), {dev(kDevice1)})},
        .want = Allocations{local({resA("req-0/subReq-1", kPool1, kDevice1)})}}},
      {"prioritized-list-allocation-mode-all",
       {.features = f,
        .claims = {claim(kClaim0, {firstAvailable(kReq0, {allSubRequest(kSub0, kClassA),
                                                          subRequest(kSub1, kClassA, 1)})})},
        .allocated = {{kDriverA, kPool1, kDevice2}},
        .classes = {classA},
        .slices = {sliceA("slice-1", pool(kPool1), {dev(kDevice1), dev(kDevice2)})},
        .want = Allocations{local({resA("req-0/subReq-1", kPool1, kDevice1)})}}},
      {"prioritized-list-allocation-mode-all-with-selectors",
       {.features = f,
        .claims = {claim(
            kClaim0,
            {firstAvailable(
                kReq0,
                {allSubRequest(kSub0, kClassA,
                               {sel("device.attributes[\"driver-a\"].generation == \"v6\"")}),
                 allSubRequest(kSub1, kClassA,
                               {sel("device.attributes[\"driver-a\"].generation == \"v5\"")})})})},
        .classes = {classA},
        .slices = {sliceA("slice-1", pool(kPool1), {dev(kDevice1).attr("generation", "v5")})},
        .want = Allocations{local({resA("req-0/subReq-1", kPool1, kDevice1)})}}},
      {"prioritized-list-allocation-mode-all-with-selectors-multiple-pools",
       {.features = f,
        .claims = {claim(
            kClaim0,
            {firstAvailable(
                kReq0,
                {allSubRequest(kSub0, kClassA,
                               {sel("device.attributes[\"driver-a\"].generation == \"v6\"")}),
                 allSubRequest(kSub1, kClassA,
                               {sel("device.attributes[\"driver-a\"].generation == \"v5\"")})})})},
        .classes = {classA},
        .slices = {sliceA("slice-1", pool(kPool1), {dev(kDevice1).attr("generation", "v5")}),
                   slice("slice-2", onNode(kNode1), pool(kPool2), kDriverA,
                         {dev(kDevice1).attr("generation", "v5")})},
        .want = Allocations{local({resA("req-0/subReq-1", kPool1, kDevice1),
                                   resA("req-0/subReq-1", kPool2, kDevice1)})}}},
      {"prioritized-list-allocation-mode-all-with-selectors-multiple-pools-across-nodes",
       {.features = f,
        .claims = {claim(
            kClaim0,
            {firstAvailable(
                kReq0,
                {allSubRequest(kSub0, kClassA,
                               {sel("device.attributes[\"driver-a\"].generation == \"v6\"")}),
                 allSubRequest(kSub1, kClassA,
                               {sel("device.attributes[\"driver-a\"].generation == \"v5\"")})})})},
        .classes = {classA},
        .slices = {sliceA("slice-1", pool(kPool1), {dev(kDevice1).attr("generation", "v5")}),
                   slice("slice-2", onNode(kNode2), pool(kPool2), kDriverA,
                         {dev(kDevice1).attr("generation", "v5"),
                          dev(kDevice2).attr("generation", "v6")})},
        .want = Allocations{local({resA("req-0/subReq-1", kPool1, kDevice1)})}}},
      {"prioritized-list-allocation-mode-all-with-selectors-deviceclass-subset",
       {.features = f,
        .claims = {claim(
            kClaim0,
            {firstAvailable(
                kReq0,
                {allSubRequest(kSub0, kClassA,
                               {sel("device.attributes[\"driver-a\"].generation == \"v6\"")}),
                 allSubRequest(kSub1, kClassA,
                               {sel("device.attributes[\"driver-a\"].generation == \"v5\"")})})})},
        .classes = {[] {
          api::DeviceClass c = deviceClass(kClassA, kDriverA);
          c.spec.selectors[0].celExpression += " && device.attributes[\"driver-a\"].selected";
          return c;
        }()},
        .slices = {sliceA("slice-1", pool(kPool1),
                          {dev(kDevice1).attr("generation", "v6").attr("selected", false),
                           dev(kDevice2).attr("generation", "v5").attr("selected", false),
                           dev(kDevice3).attr("generation", "v5").attr("selected", true)})},
        .want = Allocations{local({resA("req-0/subReq-1", kPool1, kDevice3)})}}},
      {"prioritized-list-max-allocation-limit-request",
       {.features = f,
        .claims = {claim(
            kClaim0,
            {firstAvailable(kReq0, {subRequest(kSub0, kClassA, kMaxDevicesPerClaim),
                                    subRequest(kSub1, kClassA, kMaxDevicesPerClaim / 2)}),
             firstAvailable(kReq1, {subRequest(kSub0, kClassA, kMaxDevicesPerClaim),
                                    subRequest(kSub1, kClassA, kMaxDevicesPerClaim / 2)})})},
        .classes = {classA},
        .slices = {sliceA("slice-1", pool(kPool1), devices(kMaxDevicesPerClaim * 2))},
        .want = Allocations{local([] {
          auto r = numbered("req-0/subReq-1", kMaxDevicesPerClaim / 2);
          auto more = numbered("req-1/subReq-1", kMaxDevicesPerClaim / 2, kMaxDevicesPerClaim / 2);
          r.insert(r.end(), more.begin(), more.end());
          return r;
        }())},
        .wantSteps = 75}},
      {"prioritized-list-max-allocation-allocation-mode-all",
       {.features = f,
        .claims = {claim(kClaim0, {firstAvailable(kReq0, {allSubRequest(kSub0, kClassA),
                                                          subRequest(kSub1, kClassA, 2)}),
                                   request(kReq1, kClassB, 2)})},
        .classes = {classA, classB},
        .slices = {sliceA("slice-1", pool(kPool1), devices(kMaxDevicesPerClaim - 1)),
                   slice("slice-2", onNode(kNode1), pool(kPool2), kDriverB, devices(2))},
        .want = Allocations{local({resA("req-0/subReq-1", kPool1, "device-0"),
                                   resA("req-0/subReq-1", kPool1, kDevice1),
                                   result(kReq1, kDriverB, kPool2, "device-0"),
                                   result(kReq1, kDriverB, kPool2, kDevice1)})},
        .wantSteps = 42}},
  };
}

INSTANTIATE_TEST_SUITE_P(PrioritizedList, DraUpstreamTable,
                         ::testing::ValuesIn(prioritizedListCases()), caseName);

}  // namespace
}  // namespace ksched::plugins::dra
