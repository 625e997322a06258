// The allocator with list attributes (DRAListTypeAttributes, KEP 5491): matchAttribute over
// sets (a value every device has: kubernetes.io's numaNode lists, the KEP's CPU/GPU/NIC story on
// pcieRoot), distinctAttribute pairwise disjoint, scalars as sets of one, the gate off (a list
// fails both constraints), and selectors over lists through the real CEL evaluator.
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
const std::string kReq2 = "req-2";
const std::string kPool1 = "pool-1";
const std::string kPool2 = "pool-2";
const std::string kNuma = "driver-a/numa";

Features lists(bool on) {
  Features f = Features::none();
  f.listTypeAttributes = on;
  return f;
}

api::AllocationResult local(std::vector<api::DeviceRequestAllocationResult> devices) {
  return allocation(localNode(kNode1), std::move(devices));
}

api::DeviceRequestAllocationResult resA(const std::string& req, const std::string& device) {
  return result(req, kDriverA, kPool1, device);
}
api::DeviceRequestAllocationResult resB(const std::string& req, const std::string& device) {
  return result(req, kDriverB, kPool2, device);
}

api::ResourceSlice sliceA(std::vector<api::Device> devices) {
  return slice("slice-a", onNode(kNode1), pool(kPool1), kDriverA, std::move(devices));
}
api::ResourceSlice sliceB(std::vector<api::Device> devices) {
  return slice("slice-b", onNode(kNode1), pool(kPool2), kDriverB, std::move(devices));
}

Case base(bool gate) {
  Case c;
  c.features = lists(gate);
  c.classes = {deviceClass(kClassA, kDriverA), deviceClass(kClassB, kDriverB)};
  return c;
}

Table matchCases() {
  Table t;
  {
    // Two GPUs sharing a NUMA node: device-0 is on 0 and 1, device-1 on 1 and 2.
    Case c = base(true);
    c.claims = {claim(kClaim0, {request(kReq0, kClassA, 2)}, {matchAttribute(kNuma)})};
    c.slices = {sliceA({dev("device-0").ints("numa", {0, 1}), dev("device-1").ints("numa", {1, 2}),
                        dev("device-2").ints("numa", {3})})};
    c.want = Allocations{local({resA(kReq0, "device-0"), resA(kReq0, "device-1")})};
    t.emplace_back("match-numa-lists-intersect", c);

    // Without the gate a list is no value: no two devices match.
    c.features = lists(false);
    c.want.reset();
    t.emplace_back("gate-off-match-lists-fail", c);
  }
  {
    // Each pair meets, all three do not: the intersection of all of them must be non-empty.
    Case c = base(true);
    c.claims = {claim(kClaim0, {request(kReq0, kClassA, 3)}, {matchAttribute(kNuma)})};
    c.slices = {sliceA({dev("device-0").ints("numa", {0, 1}), dev("device-1").ints("numa", {1, 2}),
                        dev("device-2").ints("numa", {2, 0})})};
    t.emplace_back("match-pairwise-but-not-common", c);
    c.slices[0].spec.devices.push_back(dev("device-3").ints("numa", {0, 1, 2}));
    c.slices[0].spec.devices[2] = dev("device-2").ints("numa", {2, 1});
    c.want = Allocations{
        local({resA(kReq0, "device-0"), resA(kReq0, "device-1"), resA(kReq0, "device-2")})};
    t.emplace_back("match-three-share-one", c);
  }
  {
    // The KEP's story: CPUs list their PCIe roots, an older GPU and NIC driver a string each.
    Case c = base(true);
    c.claims = {claim(kClaim0,
                      {request(kReq0, kClassA, 1, {sel("!device.attributes[\"driver-a\"].cpu")}),
                       request(kReq1, kClassB, 1),
                       request(kReq2, kClassA, 1, {sel("device.attributes[\"driver-a\"].cpu")})},
                      {matchAttribute("resource.kubernetes.io/pcieRoot")})};
    c.realCel = true;
    c.slices = {
        sliceA(
            {dev("gpu-0").attr("cpu", false).attr("resource.kubernetes.io/pcieRoot", "pci0000:02"),
             dev("gpu-1").attr("cpu", false).attr("resource.kubernetes.io/pcieRoot", "pci0000:01"),
             dev("cpu-0")
                 .attr("cpu", true)
                 .strings("resource.kubernetes.io/pcieRoot", {"pci0000:03", "pci0000:04"}),
             dev("cpu-1")
                 .attr("cpu", true)
                 .strings("resource.kubernetes.io/pcieRoot", {"pci0000:01", "pci0000:02"})}),
        sliceB({dev("nic-0").attr("resource.kubernetes.io/pcieRoot", "pci0000:01")})};
    // gpu-0 (pci0000:02) finds no NIC there; gpu-1 and nic-0 share pci0000:01 with cpu-1.
    c.want = Allocations{local({resA(kReq0, "gpu-1"), resB(kReq1, "nic-0"), resA(kReq2, "cpu-1")})};
    t.emplace_back("kep-story-cpu-gpu-nic", c);
    c.features = lists(false);
    c.want.reset();
    t.emplace_back("gate-off-kep-story", c);
  }
  {
    // Back-tracking gives the first device's values back: req-0 first takes device-0 ([0]), which
    // leaves req-1 nothing, then device-1 ([1, 2]), which shares 2 with device-2.
    Case c = base(true);
    c.claims = {claim(kClaim0,
                      {request(kReq0, kClassA, 1, {sel("device.attributes[\"driver-a\"].first")}),
                       request(kReq1, kClassA, 1, {sel("device.attributes[\"driver-a\"].second")})},
                      {matchAttribute(kNuma)})};
    c.slices = {
        sliceA({dev("device-0").attr("first", true).attr("second", false).ints("numa", {0}),
                dev("device-1").attr("first", true).attr("second", false).ints("numa", {1, 2}),
                dev("device-2").attr("first", false).attr("second", true).ints("numa", {2})})};
    c.want = Allocations{local({resA(kReq0, "device-1"), resA(kReq1, "device-2")})};
    t.emplace_back("match-backtracks", c);
  }
  {
    // A scalar is a set of one: an int matches a list holding it, not a string "1".
    Case c = base(true);
    c.claims = {claim(kClaim0, {request(kReq0, kClassA, 1), request(kReq1, kClassB, 1)},
                      {matchAttribute("dra.example.com/numa")})};
    c.slices = {sliceA({dev("device-0").attr("dra.example.com/numa", int64_t{1})}),
                sliceB({dev("device-1").attr("dra.example.com/numa", "1"),
                        dev("device-2").ints("dra.example.com/numa", {0, 1})})};
    c.want = Allocations{local({resA(kReq0, "device-0"), resB(kReq1, "device-2")})};
    t.emplace_back("match-scalar-in-list-same-type-only", c);
  }
  {
    // Scalars with the gate: as before, equal values match.
    Case c = base(true);
    c.claims = {claim(kClaim0, {request(kReq0, kClassA, 2)}, {matchAttribute(kNuma)})};
    c.slices = {
        sliceA({dev("device-0").attr("numa", int64_t{0}), dev("device-1").attr("numa", int64_t{1}),
                dev("device-2").attr("numa", int64_t{1})})};
    c.want = Allocations{local({resA(kReq0, "device-1"), resA(kReq0, "device-2")})};
    t.emplace_back("match-scalars-with-the-gate", c);
    c.features = lists(false);
    t.emplace_back("match-scalars-without-the-gate", c);
  }
  {
    // Strings, bools and versions meet as ints do.
    Case c = base(true);
    c.claims = {claim(kClaim0, {request(kReq0, kClassA, 2)},
                      {matchAttribute("driver-a/models"), matchAttribute("driver-a/fw"),
                       matchAttribute("driver-a/mig")})};
    c.slices = {sliceA(
        {dev("device-0")
             .strings("models", {"a", "b"})
             .versions("fw", {"1.0.0", "2.0.0"})
             .bools("mig", {true}),
         dev("device-1").strings("models", {"c"}).versions("fw", {"2.0.0"}).bools("mig", {true}),
         dev("device-2")
             .strings("models", {"b", "c"})
             .versions("fw", {"2.0.0", "3.0.0"})
             .bools("mig", {false, true})})};
    c.want = Allocations{local({resA(kReq0, "device-0"), resA(kReq0, "device-2")})};
    t.emplace_back("match-strings-versions-bools", c);
  }
  return t;
}

Table distinctCases() {
  Table t;
  {
    // Pairwise disjoint: device-1 shares 1 with device-0, device-2 shares nothing.
    Case c = base(true);
    c.claims = {claim(kClaim0, {request(kReq0, kClassA, 2)}, {distinctAttribute(kNuma)})};
    c.slices = {sliceA({dev("device-0").ints("numa", {0, 1}), dev("device-1").ints("numa", {1, 2}),
                        dev("device-2").ints("numa", {3})})};
    c.want = Allocations{local({resA(kReq0, "device-0"), resA(kReq0, "device-2")})};
    t.emplace_back("distinct-numa-lists-disjoint", c);

    // Without the gate the list devices fail; device-3 alone is not enough.
    c.features = lists(false);
    c.slices[0].spec.devices.push_back(dev("device-3").attr("numa", int64_t{5}));
    c.want.reset();
    t.emplace_back("gate-off-distinct-lists-fail", c);
    c.slices[0].spec.devices.push_back(dev("device-4").attr("numa", int64_t{6}));
    c.want = Allocations{local({resA(kReq0, "device-3"), resA(kReq0, "device-4")})};
    t.emplace_back("gate-off-distinct-scalars-only", c);
  }
  {
    // The KEP's table: [a b] [b c] [c a] have no common value but are not pairwise disjoint.
    Case c = base(true);
    c.claims = {claim(kClaim0, {request(kReq0, kClassA, 3)}, {distinctAttribute("driver-a/r")})};
    c.slices = {
        sliceA({dev("device-0").strings("r", {"a", "b"}), dev("device-1").strings("r", {"b", "c"}),
                dev("device-2").strings("r", {"c", "a"})})};
    t.emplace_back("distinct-needs-pairwise-disjoint", c);
    c.slices[0].spec.devices = {dev("device-0").strings("r", {"a", "b"}),
                                dev("device-1").strings("r", {"c", "d"}),
                                dev("device-2").strings("r", {"e", "f"})};
    c.want = Allocations{
        local({resA(kReq0, "device-0"), resA(kReq0, "device-1"), resA(kReq0, "device-2")})};
    t.emplace_back("distinct-disjoint-lists", c);
  }
  {
    // Values of different types never meet: an int 1 and a string "1" are distinct.
    Case c = base(true);
    c.claims = {claim(kClaim0, {request(kReq0, kClassA, 2)}, {distinctAttribute(kNuma)})};
    c.slices = {
        sliceA({dev("device-0").attr("numa", int64_t{1}), dev("device-1").attr("numa", "1")})};
    c.want = Allocations{local({resA(kReq0, "device-0"), resA(kReq0, "device-1")})};
    t.emplace_back("distinct-types-differ", c);
  }
  return t;
}

Table selectorCases() {
  Table t;
  for (const bool gate : {true, false}) {
    // A selector over a list, as kubernetes.io's numaNode example: with the gate or without it.
    Case c = base(gate);
    c.realCel = true;
    c.claims = {claim(kClaim0, {request(kReq0, kClassA, 1,
                                        {sel("1 in device.attributes[\"resource.kubernetes.io\"]"
                                             ".numaNode")})})};
    c.slices = {sliceA({dev("device-0").ints("resource.kubernetes.io/numaNode", {0}),
                        dev("device-1").ints("resource.kubernetes.io/numaNode", {0, 1})})};
    c.want = Allocations{local({resA(kReq0, "device-1")})};
    t.emplace_back(gate ? "selector-in-list" : "gate-off-selector-in-list", c);
  }
  {
    Case c = base(true);
    c.realCel = true;
    c.claims = {claim(
        kClaim0,
        {request(kReq0, kClassA, 1, {sel("device.attributes[\"driver-a\"].numa.includes(1)")})})};
    c.slices = {
        sliceA({dev("device-0").ints("numa", {0}), dev("device-1").attr("numa", int64_t{1})})};
    c.want = Allocations{local({resA(kReq0, "device-1")})};
    t.emplace_back("selector-includes-scalar", c);
    c.slices[0].spec.devices[1] = dev("device-1").ints("numa", {2, 1});
    t.emplace_back("selector-includes-list", c);
    // includes() is the gate's: without it the selector does not compile.
    c.features = lists(false);
    c.want.reset();
    c.wantError = "undeclared reference to 'includes'";
    t.emplace_back("gate-off-selector-includes", c);
  }
  return t;
}

INSTANTIATE_TEST_SUITE_P(ListMatch, DraUpstreamTable, ::testing::ValuesIn(matchCases()), caseName);
INSTANTIATE_TEST_SUITE_P(ListDistinct, DraUpstreamTable, ::testing::ValuesIn(distinctCases()),
                         caseName);
INSTANTIATE_TEST_SUITE_P(ListSelectors, DraUpstreamTable, ::testing::ValuesIn(selectorCases()),
                         caseName);

// The reason a claim does not fit names the constraint, with sets as with scalars.
TEST(DraListAttributes, ReasonNamesTheConstraint) {
  Case c = base(true);
  c.claims = {claim(kClaim0, {request(kReq0, kClassA, 2)}, {matchAttribute(kNuma)})};
  c.slices = {sliceA({dev("device-0").ints("numa", {0, 1}), dev("device-1").ints("numa", {2, 3})})};
  const Result r = run(c);
  ASSERT_EQ(r.code, Result::Code::kUnschedulable) << r.message;
  EXPECT_EQ(r.reason,
            "claim claim-0: constraint matchAttribute driver-a/numa cannot be met by the matching "
            "devices of request req-0 on this node");

  // Two devices sharing 1 can match; being distinct they would need two values in all.
  c.slices = {sliceA({dev("device-0").ints("numa", {1}), dev("device-1").ints("numa", {1})})};
  c.claims[0].spec.constraints.push_back(distinctAttribute(kNuma));
  const Result both = run(c);
  ASSERT_EQ(both.code, Result::Code::kUnschedulable) << both.message;
  EXPECT_EQ(both.reason,
            "claim claim-0: constraint distinctAttribute driver-a/numa cannot be met by the "
            "matching devices of request req-0 on this node");
}

TEST(DraListAttributes, TheGateSwitchesTheFeature) {
  EXPECT_FALSE(Features::fromGates(features::Gates{}).listTypeAttributes);
  features::Gates gates;
  ASSERT_EQ(gates.set("DRAListTypeAttributes=true"), std::nullopt);
  EXPECT_TRUE(Features::fromGates(gates).listTypeAttributes);
  EXPECT_FALSE(Features::none().listTypeAttributes);
}

}  // namespace
}  // namespace ksched::plugins::dra
