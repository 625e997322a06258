// The allocator against upstream's shared allocator table
// (k8s.io/dynamic-resource-allocation/structured/internal/allocatortesting, Kubernetes master of
// July 2026 = v1.36.2 plus the config fixes of 1.37): pools, All, admin access, node selection,
// constraints, configs, broken input, prioritized lists. The case names are upstream's.
// Partitionable devices, taints, binding conditions, consumable capacity and the search bounds
// are in allocator_features_test.cc; ksched's reasons in allocator_reason_test.cc.
#include "plugins/dynamic_resources/allocator.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "tests/support/dra_allocator_test_util.h"

namespace ksched::plugins::dra {
namespace {

using namespace testutil;  // NOLINT(google-build-using-namespace)
using Allocations = std::vector<api::AllocationResult>;

const std::string kClaim0 = "claim-0";
const std::string kClaim1 = "claim-1";
const std::string kReq0 = "req-0";
const std::string kReq1 = "req-1";
const std::string kReq2 = "req-2";
const std::string kPool1 = "pool-1";
const std::string kPool2 = "pool-2";
const std::string kPool3 = "pool-3";
const std::string kPool4 = "pool-4";
const std::string kDevice0 = "device-0";
const std::string kDevice1 = "device-1";
const std::string kDevice2 = "device-2";
const std::string kDevice3 = "device-3";
const std::string kIntAttr = "driver-a/numa";
const std::string kVersionAttr = "driver-a/driverVersion";
const std::string kStringAttr = "driver-a/stringAttribute";
const std::string kBoolAttr = "driver-a/boolAttribute";

api::ResourceClaim claimWithRequest(const std::string& name, const std::string& req,
                                    const std::string& cls) {
  return claim(name, {request(req, cls, 1)});
}

api::ResourceSlice oneDevice(std::string name, const Reach& reach, api::ResourcePool p,
                             std::string driver) {
  return slice(std::move(name), reach, std::move(p), std::move(driver), {dev(kDevice1)});
}

api::DeviceSelector memoryAtLeast(const std::string& q) {
  return sel("device.capacity[\"driver-a\"].memory.compareTo(quantity(\"" + q + "\")) >= 0");
}

api::AllocationResult local(std::vector<api::DeviceRequestAllocationResult> devices,
                            std::vector<api::DeviceAllocationConfiguration> config = {}) {
  return allocation(localNode(kNode1), std::move(devices), std::move(config));
}

Features withPrioritizedList() {
  Features f = Features::none();
  f.prioritizedList = true;
  return f;
}

Features withAdminAccess() {
  Features f = Features::none();
  f.adminAccess = true;
  return f;
}

std::vector<api::DeviceRequestAllocationResult> numbered(const std::string& req, int count,
                                                         int first = 0) {
  std::vector<api::DeviceRequestAllocationResult> out;
  for (int i = first; i < first + count; ++i) {
    out.push_back(result(req, kDriverA, kPool1, "device-" + std::to_string(i)));
  }
  return out;
}

using Table = std::vector<NamedCase>;

Table basicCases() {
  const api::DeviceClass classA = deviceClass(kClassA, kDriverA);
  const api::DeviceClass classB = deviceClass(kClassB, kDriverB);
  const auto small = dev(kDevice1).cap("memory", "1Gi");
  const auto large = dev(kDevice2).cap("memory", "2Gi");
  return {
      {"empty", {.want = Allocations{}}},
      {"simple",
       {.claims = {claimWithRequest(kClaim0, kReq0, kClassA)},
        .classes = {classA},
        .slices = {oneDevice("slice-1", onNode(kNode1), pool(kPool1), kDriverA)},
        .want = Allocations{local({result(kReq0, kDriverA, kPool1, kDevice1)})}}},
      {"other-node",
       {.claims = {claimWithRequest(kClaim0, kReq0, kClassA)},
        .classes = {classA},
        .slices = {oneDevice("slice-1", onNode(kNode1), pool(kPool1), kDriverB),
                   oneDevice("slice-2", onNode(kNode2), pool(kPool2), kDriverA)},
        .node = node(kNode2, kRegion2),
        .want = Allocations{allocation(localNode(kNode2),
                                       {result(kReq0, kDriverA, kPool2, kDevice1)})}}},
      {"small-and-large",
       {.claims = {claim(kClaim0, {request(kReq0, kClassA, 1, {memoryAtLeast("1Gi")}),
                                   request(kReq1, kClassA, 1, {memoryAtLeast("2Gi")})})},
        .classes = {classA},
        .slices = {slice("slice-1", onNode(kNode1), pool(kPool1), kDriverA, {small, large})},
        .want = Allocations{local({result(kReq0, kDriverA, kPool1, kDevice1),
                                   result(kReq1, kDriverA, kPool1, kDevice2)})}}},
      {"small-and-large-backtrack-requests",
       {.claims = {claim(kClaim0, {request(kReq0, kClassA, 1, {memoryAtLeast("1Gi")}),
                                   request(kReq1, kClassA, 1, {memoryAtLeast("2Gi")})})},
        .classes = {classA},
        .slices = {slice("slice-1", onNode(kNode1), pool(kPool1), kDriverA, {large, small})},
        .want = Allocations{local({result(kReq0, kDriverA, kPool1, kDevice1),
                                   result(kReq1, kDriverA, kPool1, kDevice2)})}}},
      {"small-and-large-backtrack-claims",
       {.claims = {claim(kClaim0, {request(kReq0, kClassA, 1, {memoryAtLeast("1Gi")})}),
                   claim(kClaim1, {request(kReq1, kClassA, 1, {memoryAtLeast("2Gi")})})},
        .classes = {classA},
        .slices = {slice("slice-1", onNode(kNode1), pool(kPool1), kDriverA, {large, small})},
        .want = Allocations{local({result(kReq0, kDriverA, kPool1, kDevice1)}),
                            local({result(kReq1, kDriverA, kPool1, kDevice2)})}}},
      {"devices-split-across-different-slices",
       {.claims = {claim(kClaim0, {request(kReq0, kClassA, 2)})},
        .classes = {classA},
        .slices = {oneDevice("slice-1", onNode(kNode1), pool(kPool1), kDriverA),
                   oneDevice("slice-2", onNode(kNode1), pool(kPool2), kDriverA)},
        .want = Allocations{local({result(kReq0, kDriverA, kPool1, kDevice1),
                                   result(kReq0, kDriverA, kPool2, kDevice1)})}}},
      {"obsolete-slice",
       {.claims = {claimWithRequest(kClaim0, kReq0, kClassA)},
        .classes = {classA},
        .slices = {slice("slice-1-obsolete", onNode(kNode1), pool(kPool1, 2), kDriverA,
                         {dev(kDevice1)}),
                   slice("slice-1-obsolete", onNode(kNode1), pool(kPool1, 2, 2), kDriverA,
                         {dev(kDevice2)})}}},
      {"duplicate-slice",
       {.claims = {claimWithRequest(kClaim0, kReq0, kClassA)},
        .classes = {classA},
        .slices = {oneDevice("slice-1", onNode(kNode1), pool(kPool1, 2), kDriverA),
                   oneDevice("slice-1-2", onNode(kNode1), pool(kPool1, 2), kDriverA)},
        .wantMessage = std::string(kInvalidPools)}},
      {"no-slices", {.claims = {claimWithRequest(kClaim0, kReq0, kClassA)}, .classes = {classA}}},
      {"not-enough-suitable-devices",
       {.claims = {claimWithRequest(kClaim0, kReq0, kClassA),
                   claimWithRequest(kClaim0, kReq1, kClassA)},
        .classes = {classA},
        .slices = {oneDevice("slice-1", onNode(kNode1), pool(kPool1), kDriverA)}}},
      {"no-classes",
       {.claims = {claimWithRequest(kClaim0, kReq0, kClassA)},
        .slices = {oneDevice("slice-1", onNode(kNode1), pool(kPool1), kDriverA)},
        .wantError = "could not retrieve device class class-a"}},
      {"unknown-class",
       {.claims = {claimWithRequest(kClaim0, kReq0, "unknown-class")},
        .classes = {classA},
        .slices = {oneDevice("slice-1", onNode(kNode1), pool(kPool1), kDriverA)},
        .wantError = "could not retrieve device class unknown-class"}},
      {"empty-class",
       {.claims = {claimWithRequest(kClaim0, kReq0, "")},
        .classes = {classA},
        .slices = {oneDevice("slice-1", onNode(kNode1), pool(kPool1), kDriverA)},
        .wantError = "claim claim-0, request req-0: missing device class name (unsupported "
                     "request type?)"}},
      {"no-claims-to-allocate",
       {.classes = {classA},
        .slices = {oneDevice("slice-1", onNode(kNode1), pool(kPool1), kDriverA)},
        .want = Allocations{}}},
      {"network-attached-device",
       {.claims = {claimWithRequest(kClaim0, kReq0, kClassA)},
        .classes = {classA},
        .slices = {oneDevice("slice-1", bySelector(labelSelector("region", {kRegion1})),
                             pool(kPool1), kDriverA)},
        .want = Allocations{allocation(labelSelector("region", {kRegion1}),
                                       {result(kReq0, kDriverA, kPool1, kDevice1)})}}},
      {"unsuccessful-allocation-network-attached-device",
       {.claims = {claimWithRequest(kClaim0, kReq0, kClassA)},
        .classes = {classA},
        .slices = {oneDevice("slice-1", bySelector(labelSelector("region", {kRegion1})),
                             pool(kPool1), kDriverA)},
        .node = node(kNode2, kRegion2)}},
      {"many-network-attached-devices",
       {.claims = {claim(kClaim0, {request(kReq0, kClassA, 4)})},
        .classes = {classA},
        .slices = {oneDevice("slice-1", bySelector(labelSelector("region", {kRegion1})),
                             pool(kPool1), kDriverA),
                   oneDevice("slice-1", allNodes(), pool(kPool2), kDriverA),
                   oneDevice("slice-1", bySelector(labelSelector("planet", {"earth"})),
                             pool(kPool3), kDriverA),
                   oneDevice("slice-1", bySelector(localNode(kNode1)), pool(kPool4), kDriverA)},
        .want = Allocations{allocation(
            [] {
              api::NodeSelector union_ = labelSelector("region", {kRegion1});
              auto& term = union_.nodeSelectorTerms[0];
              term.matchExpressions.push_back({"planet", api::SelectorOperator::kIn, {"earth"}});
              term.matchFields.push_back({"metadata.name", api::SelectorOperator::kIn, {kNode1}});
              return union_;
            }(),
            {result(kReq0, kDriverA, kPool1, kDevice1), result(kReq0, kDriverA, kPool2, kDevice1),
             result(kReq0, kDriverA, kPool3, kDevice1),
             result(kReq0, kDriverA, kPool4, kDevice1)})}}},
      {"local-and-network-attached-devices",
       {.claims = {claim(kClaim0, {request(kReq0, kClassA, 2)})},
        .classes = {classA},
        .slices = {oneDevice("slice-1", bySelector(labelSelector("region", {kRegion1})),
                             pool(kPool1), kDriverA),
                   oneDevice("slice-1", onNode(kNode1), pool(kPool2), kDriverA)},
        .want = Allocations{local({result(kReq0, kDriverA, kPool1, kDevice1),
                                   result(kReq0, kDriverA, kPool2, kDevice1)})}}},
      {"several-different-drivers",
       {.claims = {claimWithRequest(kClaim0, kReq0, kClassA),
                   claimWithRequest(kClaim0, kReq0, kClassB)},
        .classes = {classA, classB},
        .slices = {slice("slice-1", onNode(kNode1), pool(kPool1), kDriverA,
                         {dev(kDevice1), dev(kDevice2)}),
                   oneDevice("slice-1", onNode(kNode1), pool(kPool1), kDriverB)},
        .want = Allocations{local({result(kReq0, kDriverA, kPool1, kDevice1)}),
                            local({result(kReq0, kDriverB, kPool1, kDevice1)})}}},
      {"already-allocated-devices",
       {.claims = {claimWithRequest(kClaim0, kReq0, kClassA)},
        .allocated = {{kDriverA, kPool1, kDevice1}, {kDriverA, kPool1, kDevice2}},
        .classes = {classA},
        .slices = {oneDevice("slice-1", onNode(kNode1), pool(kPool1), kDriverA)}}},
      {"admin-access-disabled",
       {.claims = {claim(kClaim0, {withAdmin(request(kReq0, kClassA, 1))})},
        .classes = {classA},
        .slices = {oneDevice("slice-1", onNode(kNode1), pool(kPool1), kDriverA)},
        .wantError = "claim claim-0, request req-0: admin access is requested, but the feature "
                     "is disabled"}},
      {"admin-access-enabled",
       {.features = withAdminAccess(),
        .claims = {claim(kClaim0, {withAdmin(request(kReq0, kClassA, 1))})},
        .allocated = {{kDriverA, kPool1, kDevice1}, {kDriverA, kPool1, kDevice2}},
        .classes = {classA},
        .slices = {oneDevice("slice-1", onNode(kNode1), pool(kPool1), kDriverA)},
        .want = Allocations{local({result(kReq0, kDriverA, kPool1, kDevice1, true)})}}},
  };
}

Table allDevicesCases() {
  const api::DeviceClass classA = deviceClass(kClassA, kDriverA);
  const api::DeviceClass classB = deviceClass(kClassB, kDriverB);
  const auto one = [](const std::string& driver) {
    return oneDevice("slice-1", onNode(kNode1), pool(kPool1), driver);
  };
  const auto twoA =
      slice("slice-1", onNode(kNode1), pool(kPool1), kDriverA, {dev(kDevice1), dev(kDevice2)});
  const auto prioritizedAll =
      claim(kClaim0, {firstAvailable(kReq0, {allSubRequest("subReq-0", kClassA),
                                             subRequest("subReq-1", kClassB, 1)})});
  return {
      {"all-devices-single",
       {.claims = {claim(kClaim0, {allRequest(kReq0, kClassA)})},
        .classes = {classA},
        .slices = {one(kDriverA)},
        .want = Allocations{local({result(kReq0, kDriverA, kPool1, kDevice1)})}}},
      {"all-devices-many",
       {.claims = {claim(kClaim0, {allRequest(kReq0, kClassA)})},
        .classes = {classA},
        .slices = {one(kDriverA), oneDevice("slice-1", onNode(kNode1), pool(kPool2), kDriverA)},
        .want = Allocations{local({result(kReq0, kDriverA, kPool1, kDevice1),
                                   result(kReq0, kDriverA, kPool2, kDevice1)})}}},
      {"all-devices-of-the-incomplete-pool",
       {.claims = {claim(kClaim0, {allRequest(kReq0, kClassA)})},
        .classes = {classA},
        .slices = {oneDevice("slice-1", onNode(kNode1), pool(kPool1, 2), kDriverA)},
        .wantError = "claim claim-0, request req-0: asks for all devices, but resource pool "
                     "driver-a/pool-1 is currently being updated"}},
      {"all-devices-plus-another",
       {.claims = {claim(kClaim0, {allRequest(kReq0, kClassA)}),
                   claim(kClaim1, {request(kReq0, kClassB, 1)})},
        .classes = {classA, classB},
        .slices = {one(kDriverA), one(kDriverB)},
        .want = Allocations{local({result(kReq0, kDriverA, kPool1, kDevice1)}),
                            local({result(kReq0, kDriverB, kPool1, kDevice1)})}}},
      {"all-devices-plus-another-reversed",
       {.claims = {claim(kClaim1, {request(kReq0, kClassB, 1)}),
                   claim(kClaim0, {allRequest(kReq0, kClassA)})},
        .classes = {classA, classB},
        .slices = {one(kDriverA), one(kDriverB)},
        .want = Allocations{local({result(kReq0, kDriverB, kPool1, kDevice1)}),
                            local({result(kReq0, kDriverA, kPool1, kDevice1)})}}},
      {"all-devices-many-plus-another",
       {.claims = {claim(kClaim0, {allRequest(kReq0, kClassA)}),
                   claim(kClaim1, {request(kReq0, kClassB, 1)})},
        .classes = {classA, classB},
        .slices = {twoA, one(kDriverB)},
        .want = Allocations{local({result(kReq0, kDriverA, kPool1, kDevice1),
                                   result(kReq0, kDriverA, kPool1, kDevice2)}),
                            local({result(kReq0, kDriverB, kPool1, kDevice1)})}}},
      {"all-devices-many-plus-another-reversed",
       {.claims = {claim(kClaim1, {request(kReq0, kClassB, 1)}),
                   claim(kClaim0, {allRequest(kReq0, kClassA)})},
        .classes = {classA, classB},
        .slices = {twoA, one(kDriverB)},
        .want = Allocations{local({result(kReq0, kDriverB, kPool1, kDevice1)}),
                            local({result(kReq0, kDriverA, kPool1, kDevice1),
                                   result(kReq0, kDriverA, kPool1, kDevice2)})}}},
      {"all-devices-no-solution",
       {.claims = {claim(kClaim1, {request(kReq0, kClassA, 1)}),
                   claim(kClaim0, {allRequest(kReq0, kClassA)})},
        .classes = {classA},
        .slices = {one(kDriverA)}}},
      {"all-devices-no-solution-reversed",
       {.claims = {claim(kClaim0, {allRequest(kReq0, kClassA)}),
                   claim(kClaim1, {request(kReq0, kClassA, 1)})},
        .classes = {classA},
        .slices = {one(kDriverA)}}},
      {"all-devices-slice-without-devices",
       {.claims = {claim(kClaim0, {allRequest(kReq0, kClassA)})},
        .classes = {classA},
        .slices = {slice("slice-1", onNode(kNode1), pool(kPool1), kDriverA)}}},
      {"all-devices-no-slices",
       {.claims = {claim(kClaim0, {allRequest(kReq0, kClassA)})}, .classes = {classA}}},
      {"all-devices-some-allocated",
       {.claims = {claim(kClaim0, {allRequest(kReq0, kClassA)})},
        .allocated = {{kDriverA, kPool1, kDevice1}},
        .classes = {classA},
        .slices = {twoA}}},
      {"all-devices-some-allocated-admin-access",
       {.features = withAdminAccess(),
        .claims = {claim(kClaim0, {withAdmin(allRequest(kReq0, kClassA))})},
        .allocated = {{kDriverA, kPool1, kDevice1}},
        .classes = {classA},
        .slices = {twoA},
        .want = Allocations{local({result(kReq0, kDriverA, kPool1, kDevice1, true),
                                   result(kReq0, kDriverA, kPool1, kDevice2, true)})}}},
      {"all-devices-some-allocating-admin-access",
       {.features = withAdminAccess(),
        .claims = {claim(kClaim0, {withAdmin(request(kReq0, kClassA, 1)),
                                   withAdmin(allRequest(kReq1, kClassA))})},
        .classes = {classA},
        .slices = {twoA}}},
      {"count-devices-some-allocated-admin-access",
       {.features = withAdminAccess(),
        .claims = {claim(kClaim0, {withAdmin(request(kReq0, kClassA, 2))})},
        .allocated = {{kDriverA, kPool1, kDevice1}},
        .classes = {classA},
        .slices = {twoA},
        .want = Allocations{local({result(kReq0, kDriverA, kPool1, kDevice1, true),
                                   result(kReq0, kDriverA, kPool1, kDevice2, true)})}}},
      {"separate-claims-share-device-admin-access",
       {.features = withAdminAccess(),
        .claims = {claim(kClaim0, {withAdmin(request(kReq0, kClassA, 1))}),
                   claim(kClaim1, {withAdmin(request(kReq0, kClassA, 1))})},
        .classes = {classA},
        .slices = {twoA},
        .want = Allocations{local({result(kReq0, kDriverA, kPool1, kDevice1, true)}),
                            local({result(kReq0, kDriverA, kPool1, kDevice1, true)})}}},
      {"admin-access-claims-device-allocating-for-non-admin-access",
       {.features = withAdminAccess(),
        .claims = {claimWithRequest(kClaim0, kReq0, kClassA),
                   claim(kClaim1, {withAdmin(request(kReq0, kClassA, 1))})},
        .classes = {classA},
        .slices = {twoA},
        .want = Allocations{local({result(kReq0, kDriverA, kPool1, kDevice1)}),
                            local({result(kReq0, kDriverA, kPool1, kDevice1, true)})}}},
      {"all-devices-slice-without-devices-prioritized-list",
       {.features = withPrioritizedList(),
        .claims = {prioritizedAll},
        .classes = {classA, classB},
        .slices = {slice("slice-1", onNode(kNode1), pool(kPool1), kDriverA),
                   oneDevice("slice-2", onNode(kNode1), pool(kPool2), kDriverB)},
        .want = Allocations{local({result("req-0/subReq-1", kDriverB, kPool2, kDevice1)})}}},
      {"all-devices-no-slices-prioritized-list",
       {.features = withPrioritizedList(),
        .claims = {prioritizedAll},
        .classes = {classA, classB},
        .slices = {oneDevice("slice-2", onNode(kNode1), pool(kPool2), kDriverB)},
        .want = Allocations{local({result("req-0/subReq-1", kDriverB, kPool2, kDevice1)})}}},
      {"all-devices-some-allocated-prioritized-list",
       {.features = withPrioritizedList(),
        .claims = {prioritizedAll},
        .allocated = {{kDriverA, kPool1, kDevice1}},
        .classes = {classA, classB},
        .slices = {twoA, oneDevice("slice-2", onNode(kNode1), pool(kPool2), kDriverB)},
        .want = Allocations{local({result("req-0/subReq-1", kDriverB, kPool2, kDevice1)})}}},
  };
}

Table constraintAndConfigCases() {
  const api::DeviceClass classA = deviceClass(kClassA, kDriverA);
  const api::DeviceClass classB = deviceClass(kClassB, kDriverB);
  const auto full = [](const std::string& name) {
    return dev(name)
        .version("driverVersion", "1.0.0")
        .attr("numa", int64_t{1})
        .attr("stringAttribute", "stringAttributeValue")
        .attr("boolAttribute", true);
  };
  const auto pair = [&](api::Device a, api::Device b) {
    return slice("slice-1", onNode(kNode1), pool(kPool1), kDriverA, {std::move(a), std::move(b)});
  };
  const auto one = oneDevice("slice-1", onNode(kNode1), pool(kPool1), kDriverA);
  const auto twoAttrs = pair(dev(kDevice1).version("driverVersion", "1.0.0"),
                             dev(kDevice2).version("driverVersion", "2.0.0"));
  const auto threeA = slice("slice-1", onNode(kNode1), pool(kPool1), kDriverA, devices(3));
  const auto withSelector = [](api::DeviceRequest r, std::string expression) {
    r.exactly->selectors = {sel(std::move(expression))};
    return r;
  };
  return {
      {"with-constraint",
       {.claims = {claim(kClaim0, {request(kReq0, kClassA, 1), request(kReq1, kClassA, 1)},
                         {matchAttribute(kIntAttr), matchAttribute(kVersionAttr),
                          matchAttribute(kStringAttr), matchAttribute(kBoolAttr)})},
        .classes = {classA},
        .slices = {pair(full(kDevice1), full(kDevice2))},
        .want = Allocations{local({result(kReq0, kDriverA, kPool1, kDevice1),
                                   result(kReq1, kDriverA, kPool1, kDevice2)})}}},
      {"with-constraint-non-existent-attribute",
       {.claims = {claim(kClaim0, {request(kReq0, kClassA, 1)},
                         {matchAttribute("driver-a/NonExistentAttribute")})},
        .classes = {classA},
        .slices = {one}}},
      {"with-constraint-not-matching-int-attribute",
       {.claims = {claim(kClaim0, {request(kReq0, kClassA, 2)}, {matchAttribute(kIntAttr)})},
        .classes = {classA, classB},
        .slices = {pair(dev(kDevice1).attr("numa", int64_t{1}),
                        dev(kDevice2).attr("numa", int64_t{2}))}}},
      {"with-constraint-not-matching-int-attribute-all-devices",
       {.claims = {claim(kClaim0, {allRequest(kReq0, kClassA)}, {matchAttribute(kIntAttr)})},
        .classes = {classA, classB},
        .slices = {pair(dev(kDevice1).attr("numa", int64_t{1}),
                        dev(kDevice2).attr("numa", int64_t{2}))},
        .wantError = "claim claim-0, request req-0: cannot add device driver-a/pool-1/device-2 "
                     "because a claim constraint would not be satisfied"}},
      {"with-constraint-not-matching-string-attribute",
       {.claims = {claim(kClaim0, {request(kReq0, kClassA, 2)}, {matchAttribute(kStringAttr)})},
        .classes = {classA, classB},
        .slices = {pair(dev(kDevice1).attr("stringAttribute", "stringAttributeValue"),
                        dev(kDevice2).attr("stringAttribute", "stringAttributeValue2"))}}},
      {"with-constraint-not-matching-bool-attribute",
       {.claims = {claim(kClaim0, {request(kReq0, kClassA, 2)}, {matchAttribute(kBoolAttr)})},
        .classes = {classA, classB},
        .slices = {pair(dev(kDevice1).attr("boolAttribute", true),
                        dev(kDevice2).attr("boolAttribute", false))}}},
      {"with-constraint-not-matching-version-attribute",
       {.claims = {claim(kClaim0, {request(kReq0, kClassA, 2)}, {matchAttribute(kVersionAttr)})},
        .classes = {classA, classB},
        .slices = {twoAttrs}}},
      {"with-constraint-for-request",
       {.claims = {claim(kClaim0, {request(kReq0, kClassA, 1), request(kReq1, kClassA, 1)},
                         {matchAttribute(kVersionAttr, {kReq0})})},
        .classes = {classA, classB},
        .slices = {twoAttrs},
        .want = Allocations{local({result(kReq0, kDriverA, kPool1, kDevice1),
                                   result(kReq1, kDriverA, kPool1, kDevice2)})}}},
      {"with-constraint-for-request-retry",
       {.claims = {claim(kClaim0, {request(kReq0, kClassA, 1), request(kReq1, kClassA, 1)},
                         {matchAttribute(kVersionAttr, {kReq0}), matchAttribute(kStringAttr)})},
        .classes = {classA, classB},
        .slices = {slice(
            "slice-1", onNode(kNode1), pool(kPool1), kDriverA,
            {dev(kDevice1).version("driverVersion", "1.0.0").attr("stringAttribute", "a"),
             dev(kDevice2).version("driverVersion", "2.0.0").attr("stringAttribute", "b"),
             dev(kDevice3).version("driverVersion", "3.0.0").attr("stringAttribute", "b")})},
        .want = Allocations{local({result(kReq0, kDriverA, kPool1, kDevice2),
                                   result(kReq1, kDriverA, kPool1, kDevice3)})}}},
      {"with-class-device-config",
       {.claims = {claimWithRequest(kClaim0, kReq0, kClassA)},
        .classes = {classWithConfig(kClassA, kDriverA, "classAttribute")},
        .slices = {one},
        .want = Allocations{local({result(kReq0, kDriverA, kPool1, kDevice1)},
                                  {fromClass(opaque(kDriverA, "classAttribute"))})}}},
      {"with-class-device-config-with-multiple-request-and-configs",
       {.claims = {claim(kClaim0, {request(kReq0, kClassA, 1), request(kReq1, kClassA, 1),
                                   request(kReq2, kClassB, 1)})},
        .classes = {classWithConfig(kClassA, kDriverA, "classAttribute-A"),
                    classWithConfig(kClassB, kDriverB, "classAttribute-B")},
        .slices = {slice("slice-1", onNode(kNode1), pool(kPool1), kDriverA, devices(2)),
                   oneDevice("slice-2", onNode(kNode1), pool(kPool1), kDriverB)},
        .want = Allocations{local(
            {result(kReq0, kDriverA, kPool1, kDevice0), result(kReq1, kDriverA, kPool1, kDevice1),
             result(kReq2, kDriverB, kPool1, kDevice1)},
            {fromClass(opaque(kDriverA, "classAttribute-A", {kReq0, kReq1})),
             fromClass(opaque(kDriverB, "classAttribute-B", {kReq2}))})}}},
      {"with-claim-config-for-two-requests",
       {.claims = {claim(
            kClaim0,
            {request(kReq0, kClassA, 1), request(kReq1, kClassA, 1), request(kReq2, kClassA, 1)},
            {}, {opaque(kDriverA, "deviceAttribute", {kReq0, kReq1})})},
        .classes = {classA},
        .slices = {threeA},
        .want = Allocations{local(
            {result(kReq0, kDriverA, kPool1, kDevice0), result(kReq1, kDriverA, kPool1, kDevice1),
             result(kReq2, kDriverA, kPool1, kDevice2)},
            {fromClaim(opaque(kDriverA, "deviceAttribute", {kReq0, kReq1}))})}}},
      {"claim-with-device-config",
       {.claims = {claim(kClaim0, {request(kReq0, kClassA, 1)}, {},
                         {opaque(kDriverA, "deviceAttribute")})},
        .classes = {classA},
        .slices = {one},
        .want = Allocations{local({result(kReq0, kDriverA, kPool1, kDevice1)},
                                  {fromClaim(opaque(kDriverA, "deviceAttribute"))})}}},
      {"unknown-selector",
       {.claims = {claim(kClaim0, {withSelector(request(kReq0, kClassA, 1), "")})},
        .classes = {classA},
        .slices = {one},
        .wantError = "CEL expression empty (unsupported selector type?)"}},
      {"unknown-allocation-mode",
       {.claims = {[] {
          auto c = claim(kClaim0, {request(kReq0, kClassA, 1)});
          c.spec.requests[0].exactly->allocationMode = "future-mode";
          return c;
        }()},
        .classes = {classA},
        .slices = {one},
        .wantError = "unsupported count mode future-mode"}},
      {"unknown-constraint",
       {.claims = {claim(kClaim0, {request(kReq0, kClassA, 1)}, {api::DeviceConstraint{}})},
        .classes = {classA},
        .slices = {one},
        .wantError = "empty constraint (unsupported constraint type?)"}},
      {"invalid-CEL-one-device",
       {.claims = {claim(kClaim0, {withSelector(request(kReq0, kClassA, 1), "noSuchVar")})},
        .classes = {classA},
        .slices = {one},
        .wantError = "undeclared reference"}},
      {"invalid-CEL-one-device-class",
       {.claims = {claimWithRequest(kClaim0, kReq0, kClassA)},
        .classes = {[&] {
          auto c = classA;
          c.spec.selectors[0].celExpression = "noSuchVar";
          return c;
        }()},
        .slices = {one},
        .wantError = "undeclared reference"}},
      {"invalid-CEL-all-devices",
       {.claims = {claim(kClaim0, {withSelector(allRequest(kReq0, kClassA), "noSuchVar")})},
        .classes = {classA},
        .slices = {one},
        .wantError = "undeclared reference"}},
      {"too-many-devices-single-request",
       {.claims = {claim(kClaim0, {request(kReq0, kClassA, 500)})},
        .classes = {classA},
        .wantError = "exceeds the claim limit"}},
      {"many-devices-okay",
       {.claims = {claim(kClaim0, {request(kReq0, kClassA, kMaxDevicesPerClaim)})},
        .classes = {classA}}},
      {"too-many-devices-total",
       {.claims = {claim(
            kClaim0, {request(kReq0, kClassA, kMaxDevicesPerClaim), request(kReq1, kClassA, 1)})},
        .classes = {classA},
        .slices = {slice("slice-1", onNode(kNode1), pool(kPool1), kDriverA,
                         devices(kMaxDevicesPerClaim + 1))},
        .wantError = "exceeds the claim limit"}},
      {"all-devices-invalid-CEL",
       {.claims = {claim(kClaim0, {request(kReq0, kClassA, 500)})},
        .classes = {classA},
        .wantError = "exceeds the claim limit"}},
      {"max-number-devices",
       {.claims = {claim(kClaim0, {request(kReq0, kClassA, kMaxDevicesPerClaim)})},
        .classes = {classA},
        .slices = {slice("slice-1", onNode(kNode1), pool(kPool1), kDriverA,
                         devices(kMaxDevicesPerClaim))},
        .want = Allocations{local(numbered(kReq0, kMaxDevicesPerClaim))}}},
  };
}

TEST_P(DraUpstreamTable, Allocates) { expectCase(GetParam().first, GetParam().second); }

INSTANTIATE_TEST_SUITE_P(Basics, DraUpstreamTable, ::testing::ValuesIn(basicCases()), caseName);
INSTANTIATE_TEST_SUITE_P(AllDevices, DraUpstreamTable, ::testing::ValuesIn(allDevicesCases()),
                         caseName);
INSTANTIATE_TEST_SUITE_P(ConstraintsAndConfig, DraUpstreamTable,
                         ::testing::ValuesIn(constraintAndConfigCases()), caseName);

}  // namespace
}  // namespace ksched::plugins::dra
