// Explain for a pod of a PodGroup (GenericWorkload), as `ksched explain` builds it:
// SchedulerCore::explain's group section (the PodGroup's policy, each member's state) and the
// cycle the group would have now, run by a Simulator on a copy of the same objects
// (sim::explainGroupCycle); asserted in the table and the JSON a user reads. (The test
// apiserver, v1.20, drops spec.schedulingGroup from the pods it stores: docs/testing.md.)
#include "sim/explain_group.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include <ksched/sim.h>
#include <ksched/testing/fakes.h>

#include "config/profile.h"
#include "plugins/registry.h"
#include "scheduler/explain.h"
#include "scheduler/scheduler_core.h"
#include "sim/load.h"
#include "tests/support/scheduler_core_test_util.h"

namespace ksched::scheduler {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string gvNode(const std::string& name, int cpu) {
  return "apiVersion: v1\nkind: Node\nmetadata:\n  name: " + name +
         "\n  labels:\n    kubernetes.io/hostname: " + name +
         "\nstatus:\n  allocatable:\n    cpu: \"" + std::to_string(cpu) +
         "\"\n    memory: 16Gi\n    pods: \"110\"\n---\n";
}

std::string gvPodGroup(const std::string& name, int minCount) {
  return "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata:\n  name: " + name +
         "\n  namespace: ml\nspec:\n  schedulingPolicy:\n    gang:\n      minCount: " +
         std::to_string(minCount) + "\n";
}

// A one-cpu member of `group`; `extra` is appended to its spec.
std::string gvMember(const std::string& name, const std::string& group,
                     const std::string& extra = "") {
  return "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
         "\n  namespace: ml\nspec:\n  schedulingGroup:\n    podGroupName: " + group + "\n" + extra +
         "  containers:\n  - name: c\n    image: trainer\n    resources:\n      requests:\n"
         "        cpu: \"1\"\n";
}

features::Gates gvGates() {
  features::Gates g;
  EXPECT_EQ(g.set("GenericWorkload=true"), std::nullopt);
  return g;
}

// The cluster of `yaml` fed to a core as its informers would feed it, and the same objects
// copied into a Simulator, as `ksched explain` reads them twice.
struct GroupExplain {
  explicit GroupExplain(const std::string& yaml) {
    sim::loadText(yaml, "cluster.yaml", sim::LoadAs::kCluster, cluster);
    sim::checkCluster(cluster);
    Options o;
    o.features = gvGates();
    o.profiles = {config::defaultProfile(o.features)};
    o.synchronous = true;
    Environment env;
    env.api = &api;
    env.events = &events;
    // The PodGroups reach every watch once the core is built, as an informer's LIST would.
    std::vector<ObjectEventHandlers> watches;
    env.watchObjects = [&watches](const ObjectWatch& w, ObjectEventHandlers h) {
      if (w.kind == "PodGroup" && h.onAdd) watches.push_back(std::move(h));
      return std::shared_ptr<const ObjectStore>(std::make_shared<EmptyObjectStore>());
    };
    core = std::make_unique<SchedulerCore>(std::move(env), plugins::inTreeRegistry(), o);
    for (const auto& h : watches) {
      for (const auto& [kind, objects] : cluster.others) {
        if (!kind.ends_with("/PodGroup")) continue;
        for (const auto& g : objects) h.onAdd(g);
      }
    }
    for (const auto& n : cluster.nodes) core->onNodeAdd(n);
    for (const auto& p : cluster.pods) core->onPodAdd(p);
  }
  ~GroupExplain() { core->stop(); }

  // `ksched explain -n ml POD`: the core's explanation with the cycle of the copy.
  Explanation explain(const std::string& pod) {
    Explanation e = core->explain("ml", pod);
    if (e.group) {
      sim::Options so;
      so.features = gvGates();
      sim::Simulator copy(cluster, so);
      sim::explainGroupCycle(copy, "ml", e.group->podGroup.substr(3), *e.group);
    }
    return e;
  }

  sim::Cluster cluster;
  ksched::testing::FakeClusterApi api;
  schedulertest::RecordingSink events;
  std::unique_ptr<SchedulerCore> core;
};

TEST(ExplainGroup, AGangWithRoomForSevenOfEightNamesTheSevenAndWhatMinCountLacks) {
  std::string yaml = gvNode("n1", 4) + gvNode("n2", 3) + gvPodGroup("train", 8);
  for (int i = 1; i <= 8; ++i) yaml += gvMember("train-" + std::to_string(i), "train");
  GroupExplain x(yaml);
  const Explanation e = x.explain("train-1");
  ASSERT_TRUE(e.group.has_value());
  const GroupExplanation& g = *e.group;
  EXPECT_EQ(g.podGroup, "ml/train");
  EXPECT_TRUE(g.found);
  EXPECT_TRUE(g.gang);
  EXPECT_EQ(g.minCount, 8);
  ASSERT_EQ(g.members.size(), 8u);
  for (const auto& m : g.members) EXPECT_EQ(m.state, "queued") << m.pod;
  ASSERT_TRUE(g.cycle.has_value());
  EXPECT_FALSE(g.cycle->scheduled);
  EXPECT_EQ(g.cycle->message, "minCount (8) cannot be satisfied: 7 scheduled, 0 remaining");

  const auto j = toJson(e).at("podGroup");
  EXPECT_EQ(j.at("policy"), "gang");
  EXPECT_EQ(j.at("minCount"), 8);
  EXPECT_EQ(j.at("cycle").at("membersWithNode"), 7);
  EXPECT_EQ(j.at("cycle").at("minCountShort"), 1);
  int own = 0, landed = 0;
  for (const auto& m : j.at("cycle").at("members")) {
    EXPECT_FALSE(m.at("placed").get<bool>());
    if (m.at("node").is_null()) {
      EXPECT_EQ(m.at("reason"), "0/2 nodes are available: 2 Insufficient cpu.");
      ++own;
    } else {
      EXPECT_EQ(m.at("reason"), g.cycle->message);
      EXPECT_THAT(m.at("node").get<std::string>(), ::testing::AnyOf("n1", "n2"));
      ++landed;
    }
  }
  EXPECT_EQ(own, 1);
  EXPECT_EQ(landed, 7);

  const std::string table = toTable(e);
  EXPECT_THAT(table, HasSubstr("\nPod group ml/train (gang, minCount 8)\n"
                               "  8 member(s): 0 bound, 0 assumed, 8 queued, 0 gated\n"));
  EXPECT_THAT(table, HasSubstr("  would not place the group: minCount (8) cannot be satisfied: 7 "
                               "scheduled, 0 remaining\n"
                               "  7 of 8 pending member(s) found a node before the group was taken "
                               "back; minCount 8 = 0 bound or assumed + 7, 1 more needed\n"));
  EXPECT_THAT(table, HasSubstr("(taken back)"));
  EXPECT_THAT(table, HasSubstr("0/2 nodes are available: 2 Insufficient cpu.\n"));
  // Nothing was bound: the core was not asked to schedule, and the copy is its own.
  EXPECT_EQ(x.core->stats().attempts, 0u);
}

TEST(ExplainGroup, MembersSayBoundQueuedOrGatedAndTheCycleCountsTheBoundOne) {
  std::string yaml = gvNode("n1", 8) + gvPodGroup("train", 4);
  yaml += gvMember("train-1", "train", "  nodeName: n1\n");
  yaml += gvMember("train-2", "train") + gvMember("train-3", "train");
  yaml += gvMember("train-4", "train", "  schedulingGates:\n  - name: example.com/wait\n");
  GroupExplain x(yaml);
  const Explanation e = x.explain("train-2");
  ASSERT_TRUE(e.group.has_value());
  const GroupExplanation& g = *e.group;
  ASSERT_EQ(g.members.size(), 4u);
  EXPECT_EQ(g.members[0].state, "bound");
  EXPECT_EQ(g.members[0].node, "n1");
  EXPECT_EQ(g.members[1].state, "queued");
  EXPECT_EQ(g.members[2].state, "queued");
  EXPECT_EQ(g.members[3].state, "gated");
  EXPECT_EQ(g.members[3].detail, "schedulingGates: example.com/wait");
  EXPECT_EQ(placedMembers(g), 1);
  ASSERT_TRUE(g.cycle.has_value());
  // The bound one and the two queued make 3 of minCount 4 (the gated one is not in the cycle):
  // the cycle stops before its first pod.
  EXPECT_FALSE(g.cycle->scheduled);
  EXPECT_EQ(g.cycle->message, "minCount (4) cannot be satisfied: 1 scheduled, 2 remaining");
  ASSERT_EQ(g.cycle->members.size(), 2u);
  for (const auto& m : g.cycle->members) {
    EXPECT_FALSE(m.tried) << m.pod;
    EXPECT_EQ(m.reason, g.cycle->message);
  }
  EXPECT_EQ(toJson(g).at("cycle").at("membersWithNode"), 0);
  EXPECT_EQ(toJson(g).at("cycle").at("minCountShort"), 3);
  const std::string table = toTable(g);
  EXPECT_THAT(table, HasSubstr("  4 member(s): 1 bound, 0 assumed, 2 queued, 1 gated\n"));
  EXPECT_THAT(table, HasSubstr("schedulingGates: example.com/wait"));
  EXPECT_THAT(table, HasSubstr("  0 of 2 pending member(s) found a node before the group was "
                               "taken back (2 not tried: the group could no longer reach "
                               "minCount); minCount 4 = 1 bound or assumed + 0, 3 more needed\n"));
  EXPECT_THAT(table, HasSubstr("  ml/train-2  (not tried)  minCount (4) cannot be satisfied: 1 "
                               "scheduled, 2 remaining\n"));
}

TEST(ExplainGroup, AGangThatFitsWouldBePlacedWhole) {
  std::string yaml = gvNode("n1", 8) + gvPodGroup("train", 3);
  for (int i = 1; i <= 3; ++i) yaml += gvMember("train-" + std::to_string(i), "train");
  GroupExplain x(yaml);
  const Explanation e = x.explain("train-3");
  ASSERT_TRUE(e.group.has_value() && e.group->cycle.has_value());
  EXPECT_TRUE(e.group->cycle->scheduled);
  for (const auto& m : e.group->cycle->members) {
    EXPECT_TRUE(m.placed) << m.pod;
    EXPECT_EQ(m.node, "n1");
  }
  const std::string table = toTable(e);
  EXPECT_THAT(table, HasSubstr("  would place the group: 3 of 3 pending member(s); minCount 3 = "
                               "0 bound or assumed + 3, met\n"));
  EXPECT_THAT(table, Not(HasSubstr("taken back")));
}

TEST(ExplainGroup, APodOfNoGroupHasNoGroupSection) {
  GroupExplain x(gvNode("n1", 8) +
                 "apiVersion: v1\nkind: Pod\nmetadata:\n  name: solo\n  namespace: ml\nspec:\n"
                 "  containers:\n  - name: c\n    image: app\n");
  const Explanation e = x.explain("solo");
  EXPECT_FALSE(e.group.has_value());
  EXPECT_FALSE(toJson(e).contains("podGroup"));
  EXPECT_THAT(toTable(e), Not(HasSubstr("Pod group")));
}

}  // namespace
}  // namespace ksched::scheduler
