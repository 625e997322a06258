#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <ksched/api/node.h>

#include "tests/support/api_test_util.h"

namespace ksched::api {
namespace {

using testing::decodeError;
using testing::decodeString;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(NodeTest, DecodesSchedulerFields) {
  const auto n = decodeString<Node>(R"({
    "apiVersion": "v1", "kind": "Node",
    "metadata": {"name": "node-1", "resourceVersion": "7",
                 "labels": {"kubernetes.io/hostname": "node-1", "topology.kubernetes.io/zone": "z1"}},
    "spec": {"unschedulable": true, "podCIDR": "10.0.0.0/24",
             "taints": [{"key": "gpu", "value": "true", "effect": "NoSchedule"},
                        {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute",
                         "timeAdded": "2026-01-01T00:00:00Z"}]},
    "status": {
      "capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"},
      "allocatable": {"cpu": "3900m", "memory": "15Gi", "pods": "110", "nvidia.com/gpu": "2",
                      "ephemeral-storage": "100G"},
      "images": [{"names": ["registry/app@sha256:abc", "registry/app:v1"], "sizeBytes": 123456789}],
      "conditions": [{"type": "MemoryPressure", "status": "False"},
                     {"type": "Ready", "status": "True", "reason": "KubeletReady"}],
      "declaredFeatures": ["RestartAllContainersOnContainerExits", "SomethingNewer"],
      "nodeInfo": {"kubeletVersion": "v1.37.0"}}})");
  EXPECT_EQ(n.metadata.name, "node-1");
  EXPECT_EQ(n.metadata.labels.at(std::string(kLabelTopologyZone)), "z1");
  EXPECT_TRUE(n.spec.unschedulable);
  ASSERT_EQ(n.spec.taints.size(), 2u);
  EXPECT_EQ(n.spec.taints[0], (Taint{"gpu", "true", "NoSchedule", {}}));
  EXPECT_EQ(n.spec.taints[1].timeAdded, "2026-01-01T00:00:00Z");
  EXPECT_EQ(n.status.capacity.at("memory").value(), 17'179'869'184);
  EXPECT_EQ(n.status.allocatable.at("cpu").milliValue(), 3900);
  EXPECT_EQ(Resource::fromList(n.status.allocatable),
            (Resource{3900, 16'106'127'360, 100'000'000'000, 110, {{"nvidia.com/gpu", 2}}}));
  ASSERT_EQ(n.status.images.size(), 1u);
  EXPECT_THAT(n.status.images[0].names, ElementsAre("registry/app@sha256:abc", "registry/app:v1"));
  EXPECT_EQ(n.status.images[0].sizeBytes, 123456789);
  ASSERT_NE(n.condition(kNodeConditionReady), nullptr);
  EXPECT_EQ(n.condition(kNodeConditionReady)->status, kConditionTrue);
  EXPECT_EQ(n.condition("MemoryPressure")->status, kConditionFalse);
  EXPECT_EQ(n.condition("DiskPressure"), nullptr);
  EXPECT_THAT(n.status.declaredFeatures,
              ElementsAre("RestartAllContainersOnContainerExits", "SomethingNewer"));
}

TEST(NodeTest, MissingFieldsKeepDefaults) {
  const auto n = decodeString<Node>(R"({"metadata": {"name": "bare"}})");
  EXPECT_FALSE(n.spec.unschedulable);
  EXPECT_TRUE(n.spec.taints.empty());
  EXPECT_TRUE(n.status.allocatable.empty());
  EXPECT_EQ(n.condition(kNodeConditionReady), nullptr);
  EXPECT_TRUE(n.status.declaredFeatures.empty());
  const auto nulls = decodeString<Node>(R"({"spec": null, "status": {"allocatable": null}})");
  EXPECT_TRUE(nulls.status.allocatable.empty());
}

TEST(NodeTest, MalformedInputNamesTheField) {
  struct Case {
    std::string name;
    std::string json;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"taintsNotArray", R"({"spec": {"taints": {"key": "a"}}})", "spec.taints:"},
      {"unschedulableString", R"({"spec": {"unschedulable": "yes"}})", "spec.unschedulable:"},
      {"badAllocatable", R"({"status": {"allocatable": {"cpu": "abc"}}})",
       "status.allocatable.cpu: quantity \"abc\""},
      {"badCapacityType", R"({"status": {"capacity": {"memory": false}}})",
       "status.capacity.memory: quantity"},
      {"sizeBytesString", R"({"status": {"images": [{"sizeBytes": "12"}]}})",
       "status.images.sizeBytes:"},
      {"conditionsNotArray", R"({"status": {"conditions": "Ready"}})", "status.conditions:"},
      {"metadataLabels", R"({"metadata": {"labels": "x"}})", "metadata.labels:"},
      {"declaredFeaturesString", R"({"status": {"declaredFeatures": "A"}})",
       "status.declaredFeatures:"},
      {"declaredFeatureNumber", R"({"status": {"declaredFeatures": ["A", 2]}})",
       "status.declaredFeatures:"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_THAT(decodeError<Node>(c.json), HasSubstr(c.message));
  }
}

}  // namespace
}  // namespace ksched::api
