// ksched simulate over storage objects shaped as a 1.37 apiserver serves them, with fields and
// kinds a v1.20 apiserver would drop or not serve: CSIStorageCapacity (filter and
// StorageCapacityScoring), CSIDriver's preventPodSchedulingIfMissing (VolumeLimitScaling),
// claims' volumeAttributesClassName. Simulate plays the PV controller and the provisioner, so
// WaitForFirstConsumer claims are bound as on a live cluster. The examples are the docs' own
// (docs/examples/storage/). No apiserver is involved.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "simulate_dir.h"

namespace ksched::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

class SimulateStorage : public SimulateDir {
 protected:
  static std::string example(const std::string& name) {
    return std::string(KSCHED_SOURCE_DIR) + "/docs/examples/storage/" + name;
  }
  // Pod name -> node ("" when pending).
  static std::map<std::string, std::string> placements(const json& doc) {
    std::map<std::string, std::string> out;
    for (const auto& p : doc.at("pods")) {
      out[p.at("name")] = p.at("node").is_string() ? p.at("node").get<std::string>() : "";
    }
    return out;
  }
  static json pod(const json& doc, const std::string& name) {
    for (const auto& p : doc.at("pods")) {
      if (p.at("name") == name) return p;
    }
    return json();
  }
};

// Capacity filters and scores: the node with the most free storage wins each pod in turn, each
// volume provisioned shrinks its node's capacity, node-c (driver not installed) is never used,
// and the sixth pod fits nowhere, with both reasons in its message.
TEST_F(SimulateStorage, CapacityPlacesEachClaimWhereTheDriverHasRoom) {
  const json doc = simulateJson(example("capacity.yaml"));
  ASSERT_TRUE(doc.is_object());
  EXPECT_EQ(placements(doc), (std::map<std::string, std::string>{{"db-0", "node-a"},
                                                                 {"db-1", "node-a"},
                                                                 {"db-2", "node-b"},
                                                                 {"db-3", "node-a"},
                                                                 {"db-4", "node-b"},
                                                                 {"db-5", ""}}));
  const std::string message = pod(doc, "db-5").value("reason", "");
  EXPECT_THAT(message, HasSubstr("0/3 nodes are available"));
  EXPECT_THAT(message, HasSubstr("1 lvm.csi.example.com CSI driver is not installed on the node"));
  EXPECT_THAT(message, HasSubstr("2 node(s) did not have enough free storage"));
}

// Without VolumeLimitScaling, node-c's stale report of 500Gi is the most free storage: every
// pod goes there.
TEST_F(SimulateStorage, WithoutVolumeLimitScalingTheStaleReportWins) {
  const json doc =
      simulateJson(example("capacity.yaml"), {"--feature-gates", "VolumeLimitScaling=false"});
  ASSERT_TRUE(doc.is_object());
  for (const auto& [name, node] : placements(doc)) EXPECT_EQ(node, "node-c") << name;
}

// Without StorageCapacityScoring, nothing prefers free storage: the pods spread by the other
// scores, and no node is given a claim it has no room for.
TEST_F(SimulateStorage, WithoutScoringCapacityStillFilters) {
  const json doc =
      simulateJson(example("capacity.yaml"), {"--feature-gates", "StorageCapacityScoring=false"});
  ASSERT_TRUE(doc.is_object());
  std::map<std::string, int> perNode;
  for (const auto& [name, node] : placements(doc)) ++perNode[node];
  // 100Gi holds three 30Gi claims, 60Gi two; the sixth pod waits.
  EXPECT_EQ(perNode, (std::map<std::string, int>{{"", 1}, {"node-a", 3}, {"node-b", 2}}));
}

// VolumeAttributesClass: each claim binds only a PV of its class (or one without a class).
TEST_F(SimulateStorage, AClaimBindsOnlyAVolumeOfItsAttributesClass) {
  const json doc = simulateJson(example("attributes-class.yaml"));
  ASSERT_TRUE(doc.is_object());
  EXPECT_EQ(placements(doc), (std::map<std::string, std::string>{
                                 {"fast", "node-b"}, {"plain", "node-c"}, {"bronze", ""}}));
  EXPECT_THAT(pod(doc, "bronze").value("reason", ""),
              HasSubstr("3 node(s) didn't find available persistent volumes to bind"));
}

}  // namespace
}  // namespace ksched::testing
