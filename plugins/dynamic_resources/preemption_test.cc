// Preemption for devices (DRAPreemption, KEP 5690): which claims preemption's dry run releases
// when it removes a victim (upstream's RemovePod table), that a reprieved victim takes them back,
// that Filter then finds the freed devices, and the claim nominations that hold those devices for
// the preemptor and keep it from preempting again while they are being deallocated.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <ksched/preemption_settling.h>

#include "plugins/dynamic_resources/dynamic_resources.h"
#include "plugins/dynamic_resources/dynamic_resources_cycle.h"
#include "tests/support/dra_plugin_json.h"
#include "tests/support/plugin_test_util.h"

namespace ksched::plugins {
namespace {

using dra::testjson::gpuClass;
using dra::testjson::meta;
using nlohmann::json;

json consumer(const std::string& pod) {
  return {{"resource", "pods"}, {"name", pod}, {"uid", pod + "-uid"}};
}

// Claim `name` for one GPU; allocated `device` (none: unallocated), reserved for `reservedFor`.
json claim(const std::string& name, const std::string& device = "",
           const std::vector<json>& reservedFor = {}) {
  json c = {{"apiVersion", "resource.k8s.io/v1"},
            {"kind", "ResourceClaim"},
            {"metadata", meta(name, "ml")},
            {"spec",
             {{"devices",
               {{"requests",
                 json::array({{{"name", "gpu"}, {"exactly", {{"deviceClassName", "gpu"}}}}})}}}}},
            {"status", json::object()}};
  if (!device.empty()) {
    c["status"]["allocation"] = {
        {"devices",
         {{"results", json::array({{{"request", "gpu"},
                                    {"driver", "gpu.example.com"},
                                    {"pool", "n1"},
                                    {"device", device}}})}}},
        {"nodeSelector",
         {{"nodeSelectorTerms",
           json::array({{{"matchFields", json::array({{{"key", "metadata.name"},
                                                       {"operator", "In"},
                                                       {"values", {"n1"}}}})}}})}}}};
  }
  if (!reservedFor.empty()) c["status"]["reservedFor"] = json(reservedFor);
  return c;
}

PodInfoPtr podUsing(const std::string& name, const std::vector<std::string>& claims,
                    int32_t priority = 0) {
  api::Pod p = testutil::PodWrapper(name).obj();
  p.metadata.namespace_ = "ml";
  p.metadata.uid = name + "-uid";
  p.spec.nodeName = "n1";
  p.spec.priority = priority;
  for (const auto& c : claims) p.spec.resourceClaims.push_back({c, c, std::nullopt});
  return std::make_shared<PodInfo>(std::make_shared<api::Pod>(std::move(p)), features::Gates{});
}

features::Gates withPreemption(bool on) {
  features::Gates g;
  EXPECT_FALSE(g.set("DRAPreemption", on));
  return g;
}

class DraPreemption : public ::testing::Test {
 protected:
  DraPreemption() : state(std::make_shared<dra::DraState>()) {
    handle.setFeatures(withPreemption(true));
    state->onClass(gpuClass());
    state->onSlice(dra::testjson::nodeSlice("n1", 2));
    state->onClaim(claim("want"));
    preemptor = *podUsing("p", {"want"}, 100)->pod;
    preemptor.spec.nodeName.clear();
  }
  CycleState cycle(DynamicResources& plugin, const api::Pod& pod) {
    CycleState s;
    PreFilterResult r;
    EXPECT_TRUE(plugin.preFilter(s, pod, handle.snapshot(), r).ok());
    return s;
  }
  // The claims the state's copy counts as released.
  static std::vector<std::string> released(const CycleState& s) {
    std::vector<std::string> out;
    const DynamicResources::Cycle* c = s.read(kCycleKey);
    if (c == nullptr || !c->removed) return out;
    for (const auto& [uid, r] : *c->removed) {
      if (r.released) out.push_back(r.entry->claim->metadata.name);
    }
    return out;
  }

  testing::FakeHandle handle;
  std::shared_ptr<dra::DraState> state;
  api::Pod preemptor;
  NodeInfo n1{std::make_shared<api::Node>(testutil::NodeWrapper("n1").obj())};
};

TEST_F(DraPreemption, RemovingAVictimReleasesTheClaimsNoOtherPodHolds) {
  struct Row {
    std::string name;
    std::vector<json> claims;  // besides "want"
    std::vector<PodInfoPtr> removed;
    std::vector<std::string> released;
  };
  const std::vector<Row> rows = {
      {"the victim's own claim",
       {claim("held", "gpu-0", {consumer("a")})},
       {podUsing("a", {"held"})},
       {"held"}},
      {"allocated, reserved for nobody",
       {claim("held", "gpu-0")},
       {podUsing("a", {"held"})},
       {"held"}},
      {"shared, one of two holders removed",
       {claim("shared", "gpu-0", {consumer("a"), consumer("b")})},
       {podUsing("a", {"shared"})},
       {}},
      {"shared, both holders removed",
       {claim("shared", "gpu-0", {consumer("a"), consumer("b")})},
       {podUsing("a", {"shared"}), podUsing("b", {"shared"})},
       {"shared"}},
      {"held by a PodGroup",
       {claim("group", "gpu-0",
              {json{{"apiGroup", "scheduling.k8s.io"},
                    {"resource", "podgroups"},
                    {"name", "g"},
                    {"uid", "g-uid"}}})},
       {podUsing("a", {"group"})},
       {}},
      {"reserved for a pod never removed",
       {claim("other", "gpu-0", {consumer("z")})},
       {podUsing("a", {"other"})},
       {}},
      {"named twice by the victim",
       {claim("held", "gpu-0", {consumer("a")})},
       {podUsing("a", {"held", "held"})},
       {"held"}},
      {"unknown claim", {}, {podUsing("a", {"missing"})}, {}},
      {"not allocated", {claim("idle", "", {consumer("a")})}, {podUsing("a", {"idle"})}, {}},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.name);
    for (const auto& c : row.claims) state->onClaim(c);
    DynamicResources plugin(handle, state);
    ASSERT_NE(plugin.preFilterExtensions(), nullptr);
    CycleState s = cycle(plugin, preemptor);
    for (const auto& v : row.removed) {
      ASSERT_TRUE(plugin.removePod(s, preemptor, *v, n1).ok());
    }
    EXPECT_EQ(released(s), row.released);
    for (const auto& c : row.claims) {
      state->onClaimDelete("ml", c["metadata"]["name"].get<std::string>());
    }
  }
}

TEST_F(DraPreemption, FilterTakesTheFreedDeviceAndAReprieveGivesItBack) {
  state->onClaim(claim("held-a", "gpu-0", {consumer("a")}));
  state->onClaim(claim("held-b", "gpu-1", {consumer("b")}));
  DynamicResources plugin(handle, state);
  CycleState s = cycle(plugin, preemptor);
  const Status full = plugin.filter(s, preemptor, n1);
  // Resolvable with the gate: evicting holders of devices may help.
  EXPECT_EQ(full.code(), Code::kUnschedulable) << full.message();
  EXPECT_EQ(full.message(), "cannot allocate all claims");

  CycleState copy = s.clone();
  const PodInfoPtr a = podUsing("a", {"held-a"});
  ASSERT_TRUE(plugin.removePod(copy, preemptor, *a, n1).ok());
  EXPECT_TRUE(plugin.filter(copy, preemptor, n1).ok());
  EXPECT_FALSE(plugin.filter(s, preemptor, n1).ok()) << "the copy's removal is its own";
  // What the dry run found is not the cycle's allocation.
  EXPECT_FALSE(s.read(kCycleKey)->in->nodeAllocations.contains("n1"));

  ASSERT_TRUE(plugin.addPod(copy, preemptor, *a, n1).ok());
  EXPECT_EQ(plugin.filter(copy, preemptor, n1).code(), Code::kUnschedulable);
  EXPECT_TRUE(released(copy).empty());
}

TEST_F(DraPreemption, WithoutTheGateNothingIsReleasedAndTheNodeIsUnresolvable) {
  handle.setFeatures(withPreemption(false));
  state->onClaim(claim("held-a", "gpu-0", {consumer("a")}));
  state->onClaim(claim("held-b", "gpu-1", {consumer("b")}));
  DynamicResources plugin(handle, state);
  EXPECT_EQ(plugin.preFilterExtensions(), nullptr);
  CycleState s = cycle(plugin, preemptor);
  EXPECT_EQ(plugin.filter(s, preemptor, n1).code(), Code::kUnschedulableAndUnresolvable);
}

TEST_F(DraPreemption, ANominationHoldsTheDevicesAndDefersAnotherPreemption) {
  state->onClaim(claim("held-a", "gpu-0", {consumer("a")}));
  state->onClaim(claim("held-b", "gpu-1", {consumer("b")}));
  PreemptionSettling settling;
  dra::joinPreemptionSettling(settling, state);
  DynamicResources plugin(handle, state);

  // The preemption chose n1 with a as the victim: held-a is nominated for p.
  CycleState s = cycle(plugin, preemptor);
  CycleState dryRun = s.clone();
  ASSERT_TRUE(plugin.removePod(dryRun, preemptor, *podUsing("a", {"held-a"}), n1).ok());
  settling.chosen(dryRun, preemptor, "n1");
  EXPECT_EQ(state->nominations(), 1U);
  EXPECT_EQ(settling.settling(preemptor),
            "not eligible due to ResourceClaim ml/held-a, released by an earlier preemption, not "
            "deallocated yet.");

  // The resourceclaim controller deallocates held-a once a is gone.
  json gone = claim("held-a");
  gone["metadata"]["resourceVersion"] = "2";
  state->onClaim(gone);
  EXPECT_EQ(settling.settling(preemptor), "") << "settled: the pod may preempt again";

  // gpu-0 is free, but held for p against pods of its priority or lower...
  api::Pod low = *podUsing("low", {}, 100)->pod;
  api::Pod high = *podUsing("high", {}, 1000)->pod;
  auto heldFor = [&](const api::Pod& pod) {
    return state->devicesInUseFor({}, &pod)->contains(
        dra::DeviceId{"gpu.example.com", "n1", "gpu-0"});
  };
  EXPECT_TRUE(heldFor(low));
  EXPECT_FALSE(heldFor(high)) << "a more important pod may take it";
  EXPECT_FALSE(heldFor(preemptor));
  CycleState again = cycle(plugin, preemptor);
  EXPECT_TRUE(plugin.filter(again, preemptor, n1).ok());

  // ...until p is placed: its own allocation holds gpu-0 from then on (in flight), and the
  // nomination is gone, so a binding that fails gives the device to anyone.
  ASSERT_TRUE(plugin.reserve(again, preemptor, "n1").ok());
  EXPECT_EQ(state->nominations(), 0U);
  EXPECT_TRUE(heldFor(low));
  plugin.unreserve(again, preemptor, "n1");
  EXPECT_FALSE(heldFor(low));
}

TEST_F(DraPreemption, APreemptionThatReleasedNoClaimLeavesNoNomination) {
  PreemptionSettling settling;
  dra::joinPreemptionSettling(settling, state);
  DynamicResources plugin(handle, state);
  CycleState s = cycle(plugin, preemptor);
  settling.chosen(s, preemptor, "n1");
  EXPECT_EQ(state->nominations(), 0U);
  EXPECT_EQ(settling.settling(preemptor), "");
}

}  // namespace
}  // namespace ksched::plugins
