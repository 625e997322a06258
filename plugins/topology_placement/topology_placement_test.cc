#include "plugins/topology_placement/topology_placement.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "cache/snapshot.h"
#include "tests/support/plugin_test_util.h"

namespace ksched::plugins {
namespace {

using testutil::NodeWrapper;
using testutil::PodWrapper;

std::shared_ptr<const api::PodGroup> group(std::vector<std::string> keys) {
  auto pg = std::make_shared<api::PodGroup>();
  pg->metadata.name = "pg";
  pg->metadata.namespace_ = "default";
  pg->spec.topologyKeys = std::move(keys);
  return pg;
}

std::vector<NodePtr> racks() {
  return {NodeWrapper("b1").label("rack", "b").ptr(), NodeWrapper("a1").label("rack", "a").ptr(),
          NodeWrapper("a2").label("rack", "a").ptr(), NodeWrapper("none").ptr()};
}

std::vector<std::string> describe(const std::vector<Placement>& ps) {
  std::vector<std::string> out;
  for (const auto& p : ps) {
    std::string s = p.name + ":";
    for (const auto& n : p.nodes) s += " " + n;
    out.push_back(s);
  }
  return out;
}

TEST(TopologyPlacementGeneratorTest, OnePlacementPerDomainSortedAndNodesWithoutTheLabelInNone) {
  auto snapshot = cache::Snapshot::fromForTest({}, racks());
  PodGroupInfo info{.ns = "default", .name = "pg", .podGroup = group({"rack"}), .pods = {}};
  TopologyPlacementGenerator pl;
  CycleState state;
  std::vector<Placement> out;
  ASSERT_TRUE(pl.generatePlacements(state, info, snapshot, out).ok());
  std::vector<std::string> got = describe(out);
  for (auto& g : got) {  // nodes within a domain come in the snapshot's order
    if (g.starts_with("a:")) {
      EXPECT_TRUE(g == "a: a1 a2" || g == "a: a2 a1") << g;
    }
  }
  ASSERT_EQ(got.size(), 2u);
  EXPECT_TRUE(got[0].starts_with("a:"));
  EXPECT_EQ(got[1], "b: b1");
}

TEST(TopologyPlacementGeneratorTest, WithoutAConstraintOnePlacementOfEveryNode) {
  auto snapshot = cache::Snapshot::fromForTest({}, racks());
  PodGroupInfo info{.ns = "default", .name = "pg", .podGroup = group({}), .pods = {}};
  TopologyPlacementGenerator pl;
  CycleState state;
  std::vector<Placement> out;
  ASSERT_TRUE(pl.generatePlacements(state, info, snapshot, out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].nodes.size(), 4u);
}

TEST(TopologyPlacementGeneratorTest, MembersAlreadyPlacedFixTheDomain) {
  auto bound = PodWrapper("old").uid("old-uid").nodeName("b1").podGroup("pg").ptr();
  auto snapshot = cache::Snapshot::fromForTest({bound}, racks());
  PodGroupInfo info{.ns = "default", .name = "pg", .podGroup = group({"rack"}), .pods = {}};
  TopologyPlacementGenerator pl;
  CycleState state;
  std::vector<Placement> out;
  ASSERT_TRUE(pl.generatePlacements(state, info, snapshot, out).ok());
  EXPECT_EQ(describe(out), (std::vector<std::string>{"b: b1"}));
}

TEST(TopologyPlacementGeneratorTest, MembersInTwoDomainsAreAnError) {
  auto snapshot =
      cache::Snapshot::fromForTest({PodWrapper("x").uid("x").nodeName("b1").podGroup("pg").ptr(),
                                    PodWrapper("y").uid("y").nodeName("a1").podGroup("pg").ptr()},
                                   racks());
  PodGroupInfo info{.ns = "default", .name = "pg", .podGroup = group({"rack"}), .pods = {}};
  TopologyPlacementGenerator pl;
  CycleState state;
  std::vector<Placement> out;
  Status s = pl.generatePlacements(state, info, snapshot, out);
  EXPECT_TRUE(s.isError());
  EXPECT_EQ(s.message(), "more than 1 domain found for pod group: [a b]");
}

TEST(PodGroupPodsCountTest, CountsMembersThereAndProposedThenNormalizesToTheBest) {
  auto bound = PodWrapper("old").uid("old-uid").nodeName("b1").podGroup("pg").ptr();
  auto snapshot = cache::Snapshot::fromForTest({bound}, racks());
  PodGroupInfo info{.ns = "default", .name = "pg", .podGroup = group({"rack"}), .pods = {}};
  Placement a{"a", {"a1", "a2"}}, b{"b", {"b1"}};
  auto p = PodWrapper("new").ptr();
  PodGroupPodsCount pl;
  CycleState state;
  std::vector<int64_t> scores(2);
  ASSERT_TRUE(pl.scorePlacement(state, info, snapshot, {&a, {{p, "a1"}}}, scores[0]).ok());
  ASSERT_TRUE(
      pl.scorePlacement(state, info, snapshot, {&b, {{p, "b1"}, {p, "b1"}, {p, "b1"}}}, scores[1])
          .ok());
  EXPECT_EQ(scores, (std::vector<int64_t>{1, 4}));
  ASSERT_TRUE(pl.normalizePlacementScores(state, info, scores).ok());
  EXPECT_EQ(scores, (std::vector<int64_t>{25, 100}));
  std::vector<int64_t> zeros{0, 0};
  EXPECT_EQ(pl.normalizePlacementScores(state, info, zeros).message(),
            "no pods from pod group are assigned to any of the candidate placements");
}

}  // namespace
}  // namespace ksched::plugins
