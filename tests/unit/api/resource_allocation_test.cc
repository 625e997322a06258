// What ksched writes into a ResourceClaim's status (toJson), read back by the decoder, and
// device taint toleration (upstream resourceclaim.ToleratesTaint and its test table).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include <ksched/api/resource.h>

#include "tests/support/api_test_util.h"

namespace ksched::api {
namespace {

using nlohmann::json;

// A claim whose status holds `allocation`, decoded as the informer decodes it.
AllocationResult readBack(const json& allocation) {
  const auto claim = decode<ResourceClaim>(
      json{{"apiVersion", "resource.k8s.io/v1"}, {"status", {{"allocation", allocation}}}});
  EXPECT_TRUE(claim.status.allocation.has_value());
  return claim.status.allocation.value_or(AllocationResult{});
}

AllocationResult everyField() {
  AllocationResult a;
  DeviceRequestAllocationResult gpu{
      .request = "gpu", .driver = "gpu.example.com", .pool = "worker-1", .device = "gpu-0"};
  DeviceRequestAllocationResult nic{
      .request = "nic/fast",
      .driver = "cni.example.com",
      .pool = "worker-1",
      .device = "eth1",
      .adminAccess = true,
      .tolerations = {{"dra.example.com/unhealthy", "Exists", "", "NoExecute", 30},
                      {"k", "Equal", "v", "", std::nullopt}},
      .bindingConditions = {"attached"},
      .bindingFailureConditions = {"failed", "timeout"},
      .shareID = "1cd3bd4b-ffd9-4a09-8a09-fb3bd35a5a2c",
      .consumedCapacity = {{"bandwidth", Quantity::parse("1Mi")},
                           {"cni.example.com/slots", Quantity::parse("2")}}};
  a.devices = {gpu, nic};
  a.config = {
      {std::string(kAllocationConfigFromClass),
       {{}, "gpu.example.com", R"({"sharing":"TimeSlicing"})"}},
      {std::string(kAllocationConfigFromClaim),
       {{"nic", "gpu"}, "cni.example.com", R"([1,2.5,"x"])"}},
  };
  a.nodeSelector = NodeSelector{{NodeSelectorTerm{
      .matchExpressions = {{"topology.kubernetes.io/zone", SelectorOperator::kIn, {"z1", "z2"}},
                           {"gpu", SelectorOperator::kExists, {}}},
      .matchFields = {{"metadata.name", SelectorOperator::kIn, {"worker-1"}}}}}};
  a.allocationTimestamp = "2025-06-01T12:00:00Z";
  return a;
}

TEST(AllocationResultTest, RoundTripsEveryField) {
  const AllocationResult a = everyField();
  EXPECT_EQ(readBack(toJson(a)), a);
}

TEST(AllocationResultTest, WritesTheV1Shape) {
  const json j = toJson(everyField());
  EXPECT_EQ(j["devices"]["results"][0],
            json::parse(R"({"request": "gpu", "driver": "gpu.example.com", "pool": "worker-1",
                            "device": "gpu-0"})"));
  EXPECT_EQ(j["devices"]["results"][1], json::parse(R"({
    "request": "nic/fast", "driver": "cni.example.com", "pool": "worker-1", "device": "eth1",
    "adminAccess": true,
    "tolerations": [{"key": "dra.example.com/unhealthy", "operator": "Exists",
                     "effect": "NoExecute", "tolerationSeconds": 30},
                    {"key": "k", "operator": "Equal", "value": "v"}],
    "bindingConditions": ["attached"], "bindingFailureConditions": ["failed", "timeout"],
    "shareID": "1cd3bd4b-ffd9-4a09-8a09-fb3bd35a5a2c",
    "consumedCapacity": {"bandwidth": "1Mi", "cni.example.com/slots": "2"}})"));
  EXPECT_EQ(j["devices"]["config"], json::parse(R"([
    {"source": "FromClass", "opaque": {"driver": "gpu.example.com",
                                       "parameters": {"sharing": "TimeSlicing"}}},
    {"source": "FromClaim", "requests": ["nic", "gpu"],
     "opaque": {"driver": "cni.example.com", "parameters": [1, 2.5, "x"]}}])"));
  EXPECT_EQ(j["nodeSelector"], json::parse(R"({"nodeSelectorTerms": [{
    "matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In",
                          "values": ["z1", "z2"]},
                         {"key": "gpu", "operator": "Exists"}],
    "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["worker-1"]}]}]})"));
  EXPECT_EQ(j["allocationTimestamp"], "2025-06-01T12:00:00Z");
}

TEST(AllocationResultTest, LeavesEmptyFieldsOut) {
  EXPECT_EQ(toJson(AllocationResult{}), json::object());
  AllocationResult a;
  a.devices = {{.request = "r", .driver = "d", .pool = "p", .device = "x"}};
  EXPECT_EQ(toJson(a), json::parse(R"({"devices": {"results": [
    {"request": "r", "driver": "d", "pool": "p", "device": "x"}]}})"));
  EXPECT_EQ(readBack(toJson(a)), a);
  // A config without parameters; parameters that are not JSON go out as a string.
  AllocationResult c;
  c.config = {{"FromClass", {{}, "d", ""}}, {"FromClaim", {{}, "d", "not json"}}};
  EXPECT_EQ(toJson(c)["devices"]["config"], json::parse(R"([
    {"source": "FromClass", "opaque": {"driver": "d"}},
    {"source": "FromClaim", "opaque": {"driver": "d", "parameters": "not json"}}])"));
}

TEST(AllocationResultTest, AConsumerReference) {
  EXPECT_EQ(toJson(ResourceClaimConsumerReference{"", "pods", "p", "u-1"}),
            json::parse(R"({"resource": "pods", "name": "p", "uid": "u-1"})"));
  EXPECT_EQ(toJson(ResourceClaimConsumerReference{"scheduling.k8s.io", "podgroups", "g", "u-2"}),
            json::parse(R"({"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": "g",
                            "uid": "u-2"})"));
}

// Upstream's TestTolerationToleratesTaint, then the rules it does not cover.
TEST(DeviceTolerationTest, ToleratesTaint) {
  struct Case {
    std::string description;
    DeviceToleration toleration;
    DeviceTaint taint;
    bool tolerated;
  };
  const std::string noSchedule(kDeviceTaintNoSchedule);
  const std::string noExecute(kDeviceTaintNoExecute);
  const Case cases[] = {
      {"same key and effect, Exists, taint without value",
       {"foo", "Exists", "", noSchedule},
       {"foo", "", noSchedule},
       true},
      {"same key and effect, Exists, taint with a value",
       {"foo", "Exists", "", noSchedule},
       {"foo", "bar", noSchedule},
       true},
      {"same effect, empty key and Exists match every taint",
       {"", "Exists", "", noSchedule},
       {"foo", "bar", noSchedule},
       true},
      {"same key, effect and value, Equal",
       {"foo", "Equal", "bar", noSchedule},
       {"foo", "bar", noSchedule},
       true},
      {"same key and effect, different values, Equal",
       {"foo", "Equal", "value1", noSchedule},
       {"foo", "value2", noSchedule},
       false},
      {"same key and value, different effects, Equal",
       {"foo", "Equal", "bar", noSchedule},
       {"foo", "bar", noExecute},
       false},
      {"empty effect matches every effect",
       {"foo", "Equal", "bar", ""},
       {"foo", "bar", noExecute},
       true},
      {"empty key and Exists without effect match everything",
       {"", "Exists", "", ""},
       {"any", "thing", std::string(kDeviceTaintNone)},
       true},
      {"Exists on another key", {"foo", "Exists", "", ""}, {"other", "", noSchedule}, false},
      {"empty operator means Equal", {"foo", "", "bar", ""}, {"foo", "bar", noSchedule}, true},
      {"empty operator compares values", {"foo", "", "bar", ""}, {"foo", "baz", noSchedule}, false},
      {"empty key with Equal matches a taint with an empty value only",
       {"", "Equal", "", noSchedule},
       {"foo", "", noSchedule},
       true},
      {"an unknown operator tolerates nothing",
       {"foo", "Gt", "1", ""},
       {"foo", "2", noSchedule},
       false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.description);
    EXPECT_EQ(c.toleration.tolerates(c.taint), c.tolerated);
  }
}

}  // namespace
}  // namespace ksched::api
