// Binding conditions (DRADeviceBindingConditions with DRAResourceClaimDeviceStatus): upstream's
// readiness and timeout rules as a table, then the plugin: PreBind waits while a condition is
// pending and resumes on the claim's change, fails on a failure condition or at the deadline, and
// Filter gives up a claim whose binding failed or timed out.
#include "plugins/dynamic_resources/binding_conditions.h"

#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <ksched/api/rfc3339.h>

#include "plugins/dynamic_resources/dynamic_resources.h"
#include "tests/support/dra_plugin_json.h"
#include "tests/support/plugin_test_util.h"

namespace ksched::plugins {
namespace {

using namespace std::chrono_literals;
using dra::testjson::gpuClass;
using dra::testjson::meta;
using nlohmann::json;
using Code = dra::BindingState::Code;

json condition(const std::string& type, const std::string& status, const std::string& reason = "",
               const std::string& message = "") {
  return {{"type", type},
          {"status", status},
          {"reason", reason.empty() ? std::string("Test") : reason},
          {"message", message},
          {"lastTransitionTime", "2026-01-01T00:00:00Z"}};
}

// A claim allocated gpu-0 of node n1's pool, with the device's binding conditions and the
// driver's status of it (`conditions`, none: no status entry), reserved for `reservedFor`.
json allocatedClaim(const std::vector<std::string>& bindingConditions,
                    const std::optional<json>& conditions, const std::string& allocatedAt = "",
                    const std::string& reservedFor = "") {
  json result = {
      {"request", "gpu"}, {"driver", "gpu.example.com"}, {"pool", "n1"}, {"device", "gpu-0"}};
  if (!bindingConditions.empty()) {
    result["bindingConditions"] = bindingConditions;
    result["bindingFailureConditions"] = {"dra.example.com/failed"};
  }
  json allocation = {{"devices", {{"results", json::array({result})}}}};
  if (!allocatedAt.empty()) allocation["allocationTimestamp"] = allocatedAt;
  json c = {{"apiVersion", "resource.k8s.io/v1"},
            {"kind", "ResourceClaim"},
            {"metadata", meta("gpu-claim", "ml")},
            {"spec",
             {{"devices",
               {{"requests",
                 json::array({{{"name", "gpu"}, {"exactly", {{"deviceClassName", "gpu"}}}}})}}}}},
            {"status", {{"allocation", allocation}}}};
  if (conditions) {
    c["status"]["devices"] = json::array({{{"driver", "gpu.example.com"},
                                           {"pool", "n1"},
                                           {"device", "gpu-0"},
                                           {"conditions", *conditions}}});
  }
  if (!reservedFor.empty()) {
    c["status"]["reservedFor"] =
        json::array({{{"resource", "pods"}, {"name", reservedFor}, {"uid", reservedFor + "-uid"}}});
  }
  return c;
}

api::ResourceClaim decoded(const json& j) { return j.get<api::ResourceClaim>(); }

const std::vector<std::string> kAttached = {"dra.example.com/attached"};

TEST(BindingConditions, ReadinessAsUpstreamDecidesIt) {
  struct Row {
    std::string name;
    json claim;
    Code want;
    std::string message;
  };
  const std::vector<Row> rows = {
      {"no binding conditions", allocatedClaim({}, std::nullopt), Code::kReady, ""},
      {"no device status yet", allocatedClaim(kAttached, std::nullopt), Code::kPending, ""},
      {"condition absent", allocatedClaim(kAttached, json::array()), Code::kPending, ""},
      {"condition False",
       allocatedClaim(kAttached, json::array({condition("dra.example.com/attached", "False")})),
       Code::kPending, ""},
      {"condition True",
       allocatedClaim(kAttached, json::array({condition("dra.example.com/attached", "True")})),
       Code::kReady, ""},
      {"failure condition True wins over True conditions",
       allocatedClaim(kAttached, json::array({condition("dra.example.com/attached", "True"),
                                              condition("dra.example.com/failed", "True",
                                                        "FabricDown", "no path to the device")})),
       Code::kFailed,
       "claim gpu-claim binding failed: reason=FabricDown, message=\"no path to the device\""},
      {"failure condition False",
       allocatedClaim(kAttached, json::array({condition("dra.example.com/attached", "True"),
                                              condition("dra.example.com/failed", "False")})),
       Code::kReady, ""},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.name);
    const dra::BindingState st = dra::bindingState(decoded(row.claim));
    EXPECT_EQ(st.code, row.want);
    EXPECT_EQ(st.message, row.message);
  }
  json unallocated = allocatedClaim(kAttached, std::nullopt);
  unallocated["status"].erase("allocation");
  EXPECT_EQ(dra::bindingState(decoded(unallocated)).code, Code::kPending);
}

TEST(BindingConditions, TheTimeoutCountsFromTheAllocationTimestamp) {
  const auto now = *api::parseRFC3339("2026-01-01T00:10:00Z");
  EXPECT_FALSE(dra::bindingTimedOut(decoded(allocatedClaim(kAttached, std::nullopt)), 600s, now))
      << "no timestamp: no timeout";
  EXPECT_FALSE(dra::bindingTimedOut(
      decoded(allocatedClaim(kAttached, std::nullopt, "2026-01-01T00:00:00Z")), 600s, now))
      << "exactly at the timeout";
  EXPECT_TRUE(dra::bindingTimedOut(
      decoded(allocatedClaim(kAttached, std::nullopt, "2026-01-01T00:00:00Z")), 599s, now));
  EXPECT_FALSE(dra::bindingTimedOut(
      decoded(allocatedClaim({}, std::nullopt, "2026-01-01T00:00:00Z")), 1s, now))
      << "without binding conditions nothing times out";
}

// ---- the plugin ----

json slice() {
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceSlice"},
          {"metadata", meta("n1-gpus")},
          {"spec",
           {{"driver", "gpu.example.com"},
            {"nodeName", "n1"},
            {"pool", {{"name", "n1"}, {"generation", 1}, {"resourceSliceCount", 1}}},
            {"devices", json::array({{{"name", "gpu-0"},
                                      {"bindsToNode", true},
                                      {"bindingConditions", kAttached},
                                      {"bindingFailureConditions", {"dra.example.com/failed"}}},
                                     {{"name", "gpu-1"}}})}}}};
}

class BindingConditionsPlugin : public ::testing::Test {
 protected:
  BindingConditionsPlugin() : state(std::make_shared<dra::DraState>()) {
    state->onClass(gpuClass());
    state->onSlice(slice());
    pod = testutil::PodWrapper("p").obj();
    pod.metadata.namespace_ = "ml";
    pod.metadata.uid = "p-uid";
    pod.spec.resourceClaims = {{"gpu", std::string("gpu-claim"), std::nullopt}};
  }
  // PreFilter over the claim as the state has it now.
  CycleState cycle(DynamicResources& plugin) {
    CycleState s;
    PreFilterResult r;
    EXPECT_TRUE(plugin.preFilter(s, pod, handle.snapshot(), r).ok());
    return s;
  }

  testing::FakeHandle handle;
  std::shared_ptr<dra::DraState> state;
  api::Pod pod;
  NodeInfo n1{std::make_shared<api::Node>(testutil::NodeWrapper("n1").obj())};
};

TEST_F(BindingConditionsPlugin, PreBindWaitsUntilTheDriverReportsTheConditionsTrue) {
  // Allocated and reserved for the pod already: PreBind writes nothing, it only waits.
  state->onClaim(allocatedClaim(kAttached, std::nullopt, "", "p"));
  DynamicResources plugin(handle, state);
  CycleState s = cycle(plugin);
  ASSERT_TRUE(plugin.filter(s, pod, n1).ok());
  const auto before = std::chrono::steady_clock::now();
  const Status waits = plugin.preBind(s, pod, "n1");
  EXPECT_TRUE(waits.isWait()) << waits.message();
  EXPECT_EQ(waits.message(), "waiting for binding conditions");
  const PreBindPlugin::Wait w = plugin.preBindWait(s, pod);
  EXPECT_GE(w.deadline, before + 600s);  // bindingTimeout's default
  ASSERT_EQ(w.events.size(), 1U);
  EXPECT_EQ(w.events[0].event.resource, EventResource::kResourceClaim);
  // Only a change of the pod's own claim ends the wait.
  auto other = std::make_shared<api::ResourceClaim>(decoded(allocatedClaim(kAttached, {})));
  other->metadata.uid = "other-uid";
  const auto mine = std::make_shared<api::ResourceClaim>(decoded(allocatedClaim(kAttached, {})));
  EXPECT_EQ(w.events[0].hint(pod, other, other), QueueingHint::kSkip);
  EXPECT_EQ(w.events[0].hint(pod, mine, mine), QueueingHint::kQueue);

  // Still pending on a change that is not the condition.
  state->onClaim(allocatedClaim(
      kAttached, json::array({condition("dra.example.com/attached", "False")}), "", "p"));
  EXPECT_TRUE(plugin.preBindResume(s, pod, "n1", PreBindPlugin::Resume::kEvent).isWait());
  json ready = allocatedClaim(
      kAttached, json::array({condition("dra.example.com/attached", "True")}), "", "p");
  ready["metadata"]["resourceVersion"] = "2";
  state->onClaim(ready);
  EXPECT_TRUE(plugin.preBindResume(s, pod, "n1", PreBindPlugin::Resume::kEvent).ok());
  const auto events = handle.fakeEvents().events();
  ASSERT_EQ(events.size(), 1U);
  EXPECT_EQ(events[0].key, "ml/p");
  EXPECT_EQ(events[0].type, "Normal");
  EXPECT_EQ(events[0].reason, "BindingConditionsPending");
  EXPECT_EQ(events[0].message, "waiting for binding conditions for device on node n1");
}

TEST_F(BindingConditionsPlugin, AFailureConditionOrTheDeadlineFailsTheBinding) {
  state->onClaim(allocatedClaim(kAttached, std::nullopt, "", "p"));
  DynamicResources plugin(handle, state);
  CycleState s = cycle(plugin);
  ASSERT_TRUE(plugin.preBind(s, pod, "n1").isWait());
  const Status atDeadline = plugin.preBindResume(s, pod, "n1", PreBindPlugin::Resume::kDeadline);
  EXPECT_TRUE(atDeadline.isError());
  EXPECT_EQ(atDeadline.message(), "device binding timeout");
  // In a simulated cluster nothing will report the device: pending counts as attached.
  EXPECT_TRUE(plugin.preBindResume(s, pod, "n1", PreBindPlugin::Resume::kDecide).ok());

  state->onClaim(allocatedClaim(
      kAttached, json::array({condition("dra.example.com/failed", "True", "Detached", "gone")}), "",
      "p"));
  const Status failed = plugin.preBindResume(s, pod, "n1", PreBindPlugin::Resume::kDecide);
  EXPECT_TRUE(failed.isError());
  EXPECT_EQ(failed.message(), "claim gpu-claim binding failed: reason=Detached, message=\"gone\"");
}

TEST_F(BindingConditionsPlugin, FilterGivesUpAClaimWhoseBindingFailedOrTimedOut) {
  struct Row {
    std::string name;
    json claim;
    std::string detail;  // "" = the node fits
  };
  const std::string longAgo = "2020-01-01T00:00:00Z";
  const std::string justNow = api::formatRFC3339(std::chrono::system_clock::now());
  const std::vector<Row> rows = {
      {"pending, in time", allocatedClaim(kAttached, std::nullopt, justNow), ""},
      {"pending, timed out", allocatedClaim(kAttached, std::nullopt, longAgo),
       "claim gpu-claim binding timeout"},
      {"ready long ago",
       allocatedClaim(kAttached, json::array({condition(kAttached[0], "True")}), longAgo), ""},
      {"failed",
       allocatedClaim(kAttached,
                      json::array({condition("dra.example.com/failed", "True", "X", "y")}),
                      justNow),
       "claim gpu-claim binding failed: reason=X, message=\"y\""},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.name);
    state->onClaim(row.claim);
    DynamicResources plugin(handle, state);
    CycleState s = cycle(plugin);
    const Status st = plugin.filter(s, pod, n1);
    if (row.detail.empty()) {
      EXPECT_TRUE(st.ok()) << st.message();
      continue;
    }
    EXPECT_EQ(st.code(), ksched::Code::kUnschedulableAndUnresolvable);
    EXPECT_EQ(st.message(), "resourceclaim not available on the node");
    EXPECT_EQ(st.details(), std::vector<std::string>{row.detail});
  }
}

TEST_F(BindingConditionsPlugin, WithTheGatesOffNothingWaitsAndNothingIsGivenUp) {
  features::Gates off;
  off.force(features::Feature::kDRADeviceBindingConditions, false);
  handle.setFeatures(off);
  state->onClaim(allocatedClaim(kAttached, std::nullopt, "2020-01-01T00:00:00Z", "p"));
  DynamicResources plugin(handle, state);
  CycleState s = cycle(plugin);
  EXPECT_TRUE(plugin.filter(s, pod, n1).ok());
  EXPECT_TRUE(plugin.preBind(s, pod, "n1").ok());
  EXPECT_TRUE(handle.fakeEvents().events().empty());
}

}  // namespace
}  // namespace ksched::plugins
