// AddPod/RemovePod updates of the PreFilter state (upstream TestPreFilterStateAddPod and
// TestPreFilterStateRemovePod) and the plugin's QueueingHints.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "plugins/pod_topology_spread/pod_topology_spread.h"
#include "tests/support/hint_test_util.h"
#include "tests/support/plugin_test_util.h"
#include "tests/support/spread_test_util.h"

namespace ksched::plugins {
namespace {

using api::kDoNotSchedule;
using spread_test::exists;
using spread_test::fooPods;
using spread_test::fourNodes;
using spread_test::Node;
using spread_test::Pod;

constexpr StateKey<spread::PreFilterState> kStateKey{PodTopologySpread::kPreFilterStateKey};
constexpr Code kU = Code::kUnschedulable;

std::unique_ptr<Plugin> makePlugin(const nlohmann::json& args, testutil::FakeHandle& h) {
  return makePlugin(podTopologySpreadFactory(), args, h);
}

// ---- AddPod / RemovePod ---------------------------------------------------------------------

class PodTopologySpreadAddRemoveTest : public ::testing::Test {
 protected:
  PodTopologySpreadAddRemoveTest()
      : h_(testutil::FakeLister(spread_test::makeNodeInfos(
            fourNodes(), fooPods({{"p-a1", "node-a"}, {"p-x1", "node-x"}, {"p-x2", "node-x"}})))),
        plugin_(makePlugin(nlohmann::json{{"defaultingType", "List"}}, h_)),
        pl_(dynamic_cast<PodTopologySpread&>(*plugin_)) {}

  const NodeInfo& node(std::string_view name) const { return *h_.snapshot().get(name); }
  const spread::PreFilterState& state(const CycleState& cs) const { return *cs.read(kStateKey); }

  // zone (index 0) and node (index 1), both maxSkew 1 on foo.
  const Pod pod_ = Pod()
                       .label("foo", "")
                       .spreadConstraint(1, "zone", kDoNotSchedule, exists("foo"))
                       .spreadConstraint(1, "node", kDoNotSchedule, exists("foo"));
  testutil::FakeHandle h_;
  std::unique_ptr<Plugin> plugin_;
  PodTopologySpread& pl_;
};

TEST_F(PodTopologySpreadAddRemoveTest, UpdatesCountsAndCriticalPaths) {
  CycleState cs;
  PreFilterResult result;
  ASSERT_TRUE(pl_.preFilter(cs, pod_.obj(), h_.snapshot(), result).ok());
  EXPECT_EQ(state(cs).tpValueToMatchNum[0], (spread::ValueCounts{{"zone1", 1}, {"zone2", 2}}));
  EXPECT_EQ(state(cs).tpValueToMatchNum[1],
            (spread::ValueCounts{{"node-a", 1}, {"node-b", 0}, {"node-x", 2}, {"node-y", 0}}));
  EXPECT_EQ(state(cs).criticalPaths[0][0].topologyValue, "zone1");
  EXPECT_EQ(state(cs).criticalPaths[0][0].matchNum, 1);
  EXPECT_EQ(state(cs).criticalPaths[0][1].topologyValue, "zone2");
  EXPECT_EQ(state(cs).criticalPaths[0][1].matchNum, 2);
  EXPECT_EQ(state(cs).criticalPaths[1][0].matchNum, 0);
  EXPECT_EQ(state(cs).criticalPaths[1][1].matchNum, 0);
  EXPECT_TRUE(pl_.filter(cs, pod_.obj(), node("node-b")).ok());

  const Pod added = Pod("p-b1").nodeName("node-b").label("foo", "");
  ASSERT_TRUE(pl_.addPod(cs, pod_.obj(), *added.info(), node("node-b")).ok());
  EXPECT_EQ(state(cs).tpValueToMatchNum[0], (spread::ValueCounts{{"zone1", 2}, {"zone2", 2}}));
  EXPECT_EQ(state(cs).tpValueToMatchNum[1].at("node-b"), 1);
  EXPECT_EQ(state(cs).criticalPaths[0][0].matchNum, 2);
  EXPECT_EQ(state(cs).criticalPaths[1][0].topologyValue, "node-y");
  EXPECT_EQ(state(cs).criticalPaths[1][0].matchNum, 0);
  EXPECT_EQ(state(cs).criticalPaths[1][1].topologyValue, "node-b");
  EXPECT_EQ(state(cs).criticalPaths[1][1].matchNum, 1);
  const Status s = pl_.filter(cs, pod_.obj(), node("node-b"));
  EXPECT_EQ(s.code(), kU);
  EXPECT_EQ(s.reasons(), std::vector<std::string>{
                             std::string(PodTopologySpread::kErrReasonConstraintsNotMatch)});

  const Pod removed = Pod("p-x1").nodeName("node-x").label("foo", "");
  ASSERT_TRUE(pl_.removePod(cs, pod_.obj(), *removed.info(), node("node-x")).ok());
  EXPECT_EQ(state(cs).tpValueToMatchNum[0], (spread::ValueCounts{{"zone1", 2}, {"zone2", 1}}));
  EXPECT_EQ(state(cs).tpValueToMatchNum[1].at("node-x"), 1);
  EXPECT_EQ(state(cs).criticalPaths[0][0].topologyValue, "zone2");
  EXPECT_EQ(state(cs).criticalPaths[0][0].matchNum, 1);
  EXPECT_EQ(state(cs).criticalPaths[0][1].topologyValue, "zone1");
  EXPECT_EQ(state(cs).criticalPaths[0][1].matchNum, 2);
  EXPECT_EQ(state(cs).criticalPaths[1][0].topologyValue, "node-y");
  EXPECT_EQ(state(cs).criticalPaths[1][1].topologyValue, "node-b");
}

TEST_F(PodTopologySpreadAddRemoveTest, IgnoresPodsThatDoNotCount) {
  CycleState cs;
  PreFilterResult result;
  ASSERT_TRUE(pl_.preFilter(cs, pod_.obj(), h_.snapshot(), result).ok());
  const spread::PreFilterState before = state(cs);
  // Another namespace, not matching the selector.
  ASSERT_TRUE(pl_.addPod(cs, pod_.obj(),
                         *Pod("q1").ns("other").nodeName("node-b").label("foo", "").info(),
                         node("node-b"))
                  .ok());
  ASSERT_TRUE(pl_.addPod(cs, pod_.obj(), *Pod("q2").nodeName("node-b").label("bar", "").info(),
                         node("node-b"))
                  .ok());
  // A node missing one of the topology keys.
  const auto unlabeled = spread_test::makeNodeInfos({Node("node-z").label("zone", "zone3")}, {});
  ASSERT_TRUE(pl_.addPod(cs, pod_.obj(), *Pod("q3").nodeName("node-z").label("foo", "").info(),
                         *unlabeled[0])
                  .ok());
  EXPECT_EQ(state(cs).tpValueToMatchNum, before.tpValueToMatchNum);
  EXPECT_EQ(state(cs).criticalPaths[0][0].matchNum, before.criticalPaths[0][0].matchNum);
  EXPECT_EQ(state(cs).criticalPaths[1][0].matchNum, before.criticalPaths[1][0].matchNum);
}

TEST_F(PodTopologySpreadAddRemoveTest, HonorsNodeAffinityOfThePreemptor) {
  const Pod pod = Pod()
                      .label("foo", "")
                      .nodeAffinity("zone", api::SelectorOperator::kIn, {"zone1"})
                      .spreadConstraint(1, "node", kDoNotSchedule, exists("foo"));
  CycleState cs;
  PreFilterResult result;
  ASSERT_TRUE(pl_.preFilter(cs, pod.obj(), h_.snapshot(), result).ok());
  EXPECT_EQ(state(cs).tpValueToMatchNum[0], (spread::ValueCounts{{"node-a", 1}, {"node-b", 0}}));
  ASSERT_TRUE(pl_.addPod(cs, pod.obj(), *Pod("q1").nodeName("node-x").label("foo", "").info(),
                         node("node-x"))
                  .ok());
  ASSERT_TRUE(pl_.addPod(cs, pod.obj(), *Pod("q2").nodeName("node-b").label("foo", "").info(),
                         node("node-b"))
                  .ok());
  EXPECT_EQ(state(cs).tpValueToMatchNum[0], (spread::ValueCounts{{"node-a", 1}, {"node-b", 1}}));
  EXPECT_EQ(state(cs).criticalPaths[0][0].matchNum, 1);
}

TEST_F(PodTopologySpreadAddRemoveTest, ClonesAreIndependent) {
  CycleState cs;
  PreFilterResult result;
  ASSERT_TRUE(pl_.preFilter(cs, pod_.obj(), h_.snapshot(), result).ok());
  CycleState copy = cs.clone();
  ASSERT_TRUE(pl_.removePod(copy, pod_.obj(),
                            *Pod("p-a1").nodeName("node-a").label("foo", "").info(), node("node-a"))
                  .ok());
  EXPECT_EQ(state(copy).tpValueToMatchNum[0].at("zone1"), 0);
  EXPECT_EQ(state(cs).tpValueToMatchNum[0].at("zone1"), 1);
  EXPECT_EQ(state(copy).constraints, state(cs).constraints);
}

TEST(PodTopologySpreadAddPodTest, MissingStateIsError) {
  testutil::FakeHandle h;
  auto plugin = makePlugin(nullptr, h);
  auto& pl = dynamic_cast<PodTopologySpread&>(*plugin);
  CycleState cs;
  const auto infos = spread_test::makeNodeInfos({Node("node-a")}, {});
  EXPECT_EQ(pl.addPod(cs, Pod().obj(), *Pod("q").info(), *infos[0]).code(), Code::kError);
  EXPECT_EQ(pl.removePod(cs, Pod().obj(), *Pod("q").info(), *infos[0]).code(), Code::kError);
}

TEST(PodTopologySpreadHintsTest, Table) {
  struct Case {
    std::string name;
    ClusterEvent event;
    api::Pod pod;
    EventObject oldObj;
    EventObject newObj;
    std::optional<QueueingHint> want;
  };
  const ClusterEvent podAdd{EventResource::kAssignedPod, kAdd, {}};
  const ClusterEvent podDelete{EventResource::kAssignedPod, kDelete, {}};
  const ClusterEvent podLabel{EventResource::kAssignedPod, kUpdatePodLabel, {}};
  const ClusterEvent ownTolerations{EventResource::kUnscheduledPod, kUpdatePodTolerations, {}};
  const ClusterEvent nodeAdd{EventResource::kNode, kAdd, {}};
  const ClusterEvent nodeDelete{EventResource::kNode, kDelete, {}};
  const ClusterEvent nodeLabel{EventResource::kNode, kUpdateNodeLabel, {}};
  const ClusterEvent nodeTaint{EventResource::kNode, kUpdateNodeTaint, {}};
  constexpr auto kQueue = QueueingHint::kQueue;
  constexpr auto kSkip = QueueingHint::kSkip;

  const api::Pod spread = Pod("p")
                              .label("foo", "")
                              .spreadConstraint(1, "zone", kDoNotSchedule, exists("foo"))
                              .spreadConstraint(1, "node", kDoNotSchedule, exists("foo"))
                              .obj();
  const api::Pod honor =
      Pod("p")
          .spreadConstraint(1, "zone", kDoNotSchedule, exists("foo"), {.nodeTaintsPolicy = "Honor"})
          .obj();
  const api::Pod honorTolerating =
      Pod("p")
          .spreadConstraint(1, "zone", kDoNotSchedule, exists("foo"), {.nodeTaintsPolicy = "Honor"})
          .toleration("k", "Exists", "", "NoSchedule")
          .obj();
  const api::Pod anyway =
      Pod("p").spreadConstraint(1, "zone", api::kScheduleAnyway, exists("foo")).obj();
  auto pod = [](const Pod& p) -> EventObject { return p.ptr(); };
  auto node = [](const Node& n) -> EventObject { return n.ptr(); };
  const Node full = Node("n").label("zone", "z1").label("node", "n");

  const EventObject none;
  const std::vector<Case> cases = {
      // Pod events.
      {"added pod matches a selector", podAdd, spread, none,
       pod(Pod("e").nodeName("n").label("foo", "")), kQueue},
      {"added pod matches no selector", podAdd, spread, none,
       pod(Pod("e").nodeName("n").label("bar", "")), kSkip},
      {"added pod in another namespace", podAdd, spread, none,
       pod(Pod("e").ns("other").nodeName("n").label("foo", "")), kSkip},
      {"deleted pod matched a selector", podDelete, spread,
       pod(Pod("e").nodeName("n").label("foo", "")), none, kQueue},
      {"deleted pod matched no selector", podDelete, spread,
       pod(Pod("e").nodeName("n").label("bar", "")), none, kSkip},
      {"deleted unscheduled pod", testutil::event(EventResource::kUnscheduledPod, kDelete), spread,
       pod(Pod("e").label("foo", "")), none, kSkip},
      {"label update starts matching", podLabel, spread,
       pod(Pod("e").nodeName("n").label("bar", "")), pod(Pod("e").nodeName("n").label("foo", "")),
       kQueue},
      {"label update stops matching", podLabel, spread,
       pod(Pod("e").nodeName("n").label("foo", "")), pod(Pod("e").nodeName("n").label("bar", "")),
       kQueue},
      {"label update keeps matching", podLabel, spread,
       pod(Pod("e").nodeName("n").label("foo", "")),
       pod(Pod("e").nodeName("n").label("foo", "").label("bar", "")), kSkip},
      {"another pod's toleration update",
       testutil::event(EventResource::kAssignedPod, kUpdatePodTolerations), honor,
       pod(Pod("e").nodeName("n").label("foo", "")),
       pod(Pod("e").nodeName("n").label("foo", "").toleration("k", "Exists", "", "NoSchedule")),
       kSkip},
      {"own new toleration, nodeTaintsPolicy Honor", ownTolerations, honorTolerating, pod(Pod("p")),
       pod(Pod("p").toleration("k", "Exists", "", "NoSchedule")), kQueue},
      {"own new toleration, nodeTaintsPolicy Ignore", ownTolerations, spread,
       pod(Pod("p").label("foo", "")),
       pod(Pod("p").label("foo", "").toleration("k", "Exists", "", "NoSchedule")), kSkip},
      {"own label update changes its match",
       testutil::event(EventResource::kUnscheduledPod, kUpdatePodLabel), spread, pod(Pod("p")),
       pod(Pod("p").label("foo", "")), kQueue},
      {"added pod, only ScheduleAnyway constraints", podAdd, anyway, none,
       pod(Pod("e").nodeName("n").label("foo", "")), kSkip},
      {"pod scale-down is not registered",
       testutil::event(EventResource::kAssignedPod, kUpdatePodScaleDown), spread,
       pod(Pod("e").nodeName("n").label("foo", "")), pod(Pod("e").nodeName("n").label("foo", "")),
       std::nullopt},
      // Node events.
      {"added node has every topology key", nodeAdd, spread, none, node(full), kQueue},
      {"added node lacks a topology key", nodeAdd, spread, none,
       node(Node("n").label("zone", "z1")), kSkip},
      {"deleted node had every topology key", nodeDelete, spread, node(full), none, kQueue},
      {"deleted node lacked a topology key", nodeDelete, spread, node(Node("n").label("node", "n")),
       none, kSkip},
      {"node gains the last topology key", nodeLabel, spread, node(Node("n").label("zone", "z1")),
       node(full), kQueue},
      {"node loses a topology key", nodeLabel, spread, node(full),
       node(Node("n").label("zone", "z1")), kQueue},
      {"node changes a topology value", nodeLabel, spread, node(full),
       node(Node("n").label("zone", "z2").label("node", "n")), kQueue},
      {"matching node changes another label", nodeLabel, spread, node(full),
       node(Node("n").label("zone", "z1").label("node", "n").label("disk", "ssd")), kSkip},
      {"node without the keys changes a label", nodeLabel, spread,
       node(Node("n").label("zone", "z1")),
       node(Node("n").label("zone", "z1").label("disk", "ssd")), kSkip},
      {"matching node changes its taints", nodeTaint, spread,
       node(Node("n").label("zone", "z1").label("node", "n").taint("k", "v", "NoSchedule")),
       node(full), kQueue},
      {"node without the keys changes its taints", nodeTaint, spread,
       node(Node("n").label("zone", "z1").taint("k", "v", "NoSchedule")),
       node(Node("n").label("zone", "z1")), kSkip},
      {"matching node becomes schedulable, same taints", nodeTaint, spread, node(full), node(full),
       kSkip},
      {"added node, no DoNotSchedule constraint", nodeAdd, anyway, none,
       node(Node("n").label("disk", "ssd")), kQueue},
      {"node allocatable update is not registered",
       testutil::event(EventResource::kNode, kUpdateNodeAllocatable), spread, node(full),
       node(full), std::nullopt},
  };

  testutil::FakeHandle h;
  auto plugin = makePlugin(nullptr, h);
  const auto& ext = dynamic_cast<const PodTopologySpread&>(*plugin);
  EXPECT_EQ(ext.name(), "PodTopologySpread");
  for (const Case& c : cases) {
    EXPECT_EQ(testutil::hintName(testutil::hintFor(ext, c.event, c.pod, c.oldObj, c.newObj)),
              testutil::hintName(c.want))
        << c.name;
  }
}

}  // namespace
}  // namespace ksched::plugins
