// --spread (advise/spread.h): moves off the fullest domains until each constraint is within
// its maxSkew, each placed by the scheduler.
#include "advise/spread.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "advise/render.h"
#include "tests/support/sim_test_util.h"

namespace ksched::advise {
namespace {

using sim::testutil::node;
using sim::testutil::podOf;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const std::string kZone = "topology.kubernetes.io/zone";

NodePtr zoned(const std::string& name, const std::string& zone) {
  auto n = std::make_shared<api::Node>(*node(name, 8));
  n->metadata.labels[kZone] = zone;
  return n;
}

// A pod of ReplicaSet web on `nodeName`, spread over zones with `maxSkew` (DoNotSchedule).
PodPtr web(const std::string& name, const std::string& nodeName, int32_t maxSkew = 1,
           const std::string& when = "DoNotSchedule") {
  api::Pod p = podOf(name, 500)
                   .label("app", "web")
                   .ownerReference("ReplicaSet", "web", "web-uid")
                   .nodeName(nodeName)
                   .obj();
  api::TopologySpreadConstraint t;
  t.maxSkew = maxSkew;
  t.topologyKey = kZone;
  t.whenUnsatisfiable = when;
  t.labelSelector = api::LabelSelector{{{"app", "web"}}, {}};
  p.spec.topologySpreadConstraints.push_back(t);
  return std::make_shared<api::Pod>(p);
}

// zone -> pods, after the plan's moves.
std::map<std::string, int> zonesAfter(const sim::Cluster& c, const Plan& p) {
  std::map<std::string, std::string> where, zoneOf;
  for (const auto& n : c.nodes) zoneOf[n->metadata.name] = n->metadata.labels.at(kZone);
  for (const auto& pod : c.pods) where[pod->metadata.name] = pod->spec.nodeName;
  for (const auto& m : p.moves) where[m.name] = m.to;
  std::map<std::string, int> out;
  for (const auto& [pod, n] : where) ++out[zoneOf[n]];
  return out;
}

TEST(AdviseSpread, ASkewedReplicaSetIsBroughtWithinMaxSkew) {
  sim::Cluster c;
  c.nodes = {zoned("a1", "a"), zoned("a2", "a"), zoned("b1", "b"), zoned("c1", "c")};
  for (int i = 0; i < 6; ++i)
    c.pods.push_back(web("web-" + std::to_string(i), i < 4 ? "a1" : "a2"));
  const Plan p = planSpread(c, {}, {});
  ASSERT_EQ(p.skews.size(), 1U);
  EXPECT_EQ(p.skews[0].group, "default/ReplicaSet/web");
  EXPECT_EQ(p.skews[0].before, 6);
  EXPECT_LE(p.skews[0].after, 1);
  EXPECT_EQ(p.moves.size(), 4U);
  const auto zones = zonesAfter(c, p);
  EXPECT_EQ(zones.at("a"), 2);
  EXPECT_EQ(zones.at("b"), 2);
  EXPECT_EQ(zones.at("c"), 2);
  // The first moves come off a1, the fullest node of the fullest zone.
  EXPECT_EQ(p.moves[0].from, "a1");
  EXPECT_THAT(p.moves[0].why, HasSubstr("(skew 6 > maxSkew 1)"));
  EXPECT_THAT(planTable(p),
              HasSubstr("Plan: 4 moves; 1 of 1 topology spread constraints within maxSkew after."));
}

TEST(AdviseSpread, WithinMaxSkewNothingMoves) {
  sim::Cluster c;
  c.nodes = {zoned("a1", "a"), zoned("b1", "b")};
  c.pods = {web("web-0", "a1", 2), web("web-1", "a1", 2), web("web-2", "b1", 2)};
  const Plan p = planSpread(c, {}, {});
  EXPECT_THAT(p.moves, IsEmpty());
  ASSERT_EQ(p.skews.size(), 1U);
  EXPECT_EQ(p.skews[0].before, 1);
  EXPECT_EQ(p.skews[0].note, "");
}

TEST(AdviseSpread, PodsThatMayNotMoveAreSaidToBeTheReason) {
  sim::Cluster c;
  c.nodes = {zoned("a1", "a"), zoned("b1", "b")};
  for (int i = 0; i < 3; ++i) {
    api::Pod p = *web("web-" + std::to_string(i), "a1");
    p.metadata.annotations["cluster-autoscaler.kubernetes.io/safe-to-evict"] = "false";
    c.pods.push_back(std::make_shared<api::Pod>(p));
  }
  const Plan p = planSpread(c, {}, {});
  EXPECT_THAT(p.moves, IsEmpty());
  ASSERT_EQ(p.skews.size(), 1U);
  EXPECT_EQ(p.skews[0].after, 3);
  EXPECT_EQ(p.skews[0].note, "no pod of the fullest domain may move");
}

// A pod of ReplicaSet api (no constraints of its own) on `nodeName`.
PodPtr apiPod(const std::string& name, const std::string& nodeName) {
  return podOf(name, 200)
      .label("app", "api")
      .ownerReference("ReplicaSet", "api", "api-uid", true, "apps/v1")
      .nodeName(nodeName)
      .ptr();
}

NodePtr host(const std::string& name, const std::string& zone) {
  auto n = zoned(name, zone);
  auto copy = std::make_shared<api::Node>(*n);
  copy->metadata.labels["kubernetes.io/hostname"] = name;
  return copy;
}

// Eight pods of ReplicaSet api on one of three nodes; with the ReplicaSet object or without.
sim::Cluster crowded(bool withReplicaSet) {
  sim::Cluster c;
  c.nodes = {host("n1", "a"), host("n2", "a"), host("n3", "b")};
  for (int i = 0; i < 8; ++i) c.pods.push_back(apiPod("api-" + std::to_string(i), "n1"));
  if (withReplicaSet) {
    api::ReplicaSet rs;
    rs.metadata.name = "api";
    rs.metadata.namespace_ = "default";
    rs.spec.selector = api::LabelSelector{{{"app", "api"}}, {}};
    c.replicaSets.push_back(rs);
  }
  return c;
}

TEST(AdviseSpread, PodsWithoutConstraintsAreSpreadByTheSystemDefaults) {
  const sim::Cluster c = crowded(true);
  const Plan p = planSpread(c, {}, {});
  ASSERT_EQ(p.skews.size(), 2U);
  const Skew& byHost = p.skews[0];
  EXPECT_TRUE(byHost.defaulted);
  EXPECT_EQ(byHost.topologyKey, "kubernetes.io/hostname");
  EXPECT_EQ(byHost.maxSkew, 3);
  EXPECT_EQ(byHost.whenUnsatisfiable, "ScheduleAnyway");
  EXPECT_EQ(byHost.before, 8);
  EXPECT_LE(byHost.after, 3);
  EXPECT_FALSE(p.moves.empty());
  for (const auto& m : p.moves) EXPECT_EQ(m.from, "n1");
  EXPECT_EQ(p.skews[1].topologyKey, "topology.kubernetes.io/zone");
  EXPECT_EQ(p.skews[1].maxSkew, 5);
  EXPECT_THAT(planTable(p), HasSubstr("kubernetes.io/hostname (default)"));
  EXPECT_EQ(planDocument(p).at("skews")[0].at("default"), true);
}

TEST(AdviseSpread, WithoutAnObjectSelectingThemThereIsNoDefaultSpreading) {
  // The scheduler's default selector comes from the Services and controllers selecting a pod:
  // with none read, it spreads nothing, and neither does the plan.
  const Plan p = planSpread(crowded(false), {}, {});
  EXPECT_THAT(p.skews, IsEmpty());
  EXPECT_THAT(p.moves, IsEmpty());
}

TEST(AdviseSpread, ListDefaultingTakesTheConfiguredConstraints) {
  sim::Options o;
  o.config = R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: PodTopologySpread
    args:
      defaultingType: List
      defaultConstraints:
      - maxSkew: 1
        topologyKey: topology.kubernetes.io/zone
        whenUnsatisfiable: ScheduleAnyway
)";
  const Plan p = planSpread(crowded(true), o, {});
  ASSERT_EQ(p.skews.size(), 1U);
  EXPECT_EQ(p.skews[0].topologyKey, "topology.kubernetes.io/zone");
  EXPECT_EQ(p.skews[0].before, 8);  // zone a 8, zone b 0
  EXPECT_LE(p.skews[0].after, 1) << p.skews[0].note;
}

}  // namespace
}  // namespace ksched::advise
