// The Simulator with pod groups (GenericWorkload): each group's last pod-group cycle in
// Result::podGroups, canScheduleGroup (what explain shows) and groupCapacity (simulate
// --capacity with a PodGroup), asserted as a user reads them: counts, nodes, messages.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include <ksched/sim.h>

#include "sim/load.h"
#include "tests/support/sim_test_util.h"

namespace ksched::sim {
namespace {

using ::testing::IsEmpty;
using ::testing::SizeIs;

std::string groupNode(const std::string& name, int cpu, const std::string& rack = "") {
  return "apiVersion: v1\nkind: Node\nmetadata:\n  name: " + name +
         "\n  labels:\n    kubernetes.io/hostname: " + name +
         (rack.empty() ? "" : "\n    example.com/rack: " + rack) +
         "\nstatus:\n  allocatable:\n    cpu: \"" + std::to_string(cpu) +
         "\"\n    memory: 16Gi\n    pods: \"110\"\n---\n";
}

// A v1beta1 gang of `n` pods of `cpu` cpus, minCount `minCount`, optionally within one
// `topology` domain.
std::string gang(const std::string& name, int minCount, int n, int cpu,
                 const std::string& topology = "") {
  std::string out =
      "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata:\n  name: " + name +
      "\n  namespace: ml\nspec:\n  schedulingPolicy:\n    gang:\n" +
      "      minCount: " + std::to_string(minCount) + "\n";
  if (!topology.empty()) {
    out += "  schedulingConstraints:\n    topology:\n    - key: " + topology + "\n";
  }
  for (int i = 1; i <= n; ++i) {
    out += "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "-" + std::to_string(i) +
           "\n  namespace: ml\nspec:\n  schedulingGroup:\n" + "    podGroupName: " + name +
           "\n  containers:\n  - name: c\n    image: trainer\n" +
           "    resources:\n      requests:\n        cpu: \"" + std::to_string(cpu) + "\"\n";
  }
  return out;
}

Options groupOptions(bool topology = false) {
  Options o;
  EXPECT_EQ(o.features.set(topology ? "GenericWorkload=true,TopologyAwareWorkloadScheduling=true"
                                    : "GenericWorkload=true"),
            std::nullopt);
  return o;
}

// The PodGroup and pods of `yaml`, as `--capacity FILE` reads them.
struct GangFile {
  UnstructuredPtr podGroup;
  std::vector<PodPtr> pods;
};
GangFile gangFile(const std::string& yaml) {
  Cluster c;
  loadText(yaml, "gang.yaml", LoadAs::kWork, c);
  GangFile f;
  for (const auto& [kind, objects] : c.others) {
    if (kind.ends_with("/PodGroup")) f.podGroup = objects.at(0);
  }
  f.pods = c.pods;
  return f;
}

int withNode(const PodGroupResult& g) {
  int n = 0;
  for (const auto& m : g.members) n += m.node.empty() ? 0 : 1;
  return n;
}

TEST(SimulatorGroupTest, GroupCapacityCountsWholeGangsAndSaysWhyTheNextDoesNotFit) {
  // 20 cpus: two gangs of 8 one-cpu pods fit, the third finds 4.
  const Cluster c = testutil::load(groupNode("n1", 4) + groupNode("n2", 4) + groupNode("n3", 4) +
                                   groupNode("n4", 4) + groupNode("n5", 4));
  Simulator sim(c, groupOptions());
  const GangFile f = gangFile(gang("train", 8, 8, 1));
  ASSERT_TRUE(f.podGroup);
  const auto cap = sim.groupCapacity(*f.podGroup, f.pods);
  EXPECT_EQ(cap.fits, 2);
  ASSERT_TRUE(cap.next.has_value());
  EXPECT_EQ(cap.next->name, "train-3");
  EXPECT_TRUE(cap.next->gang);
  EXPECT_EQ(cap.next->minCount, 8);
  EXPECT_FALSE(cap.next->scheduled);
  EXPECT_EQ(cap.next->message, "minCount (8) cannot be satisfied: 4 scheduled, 3 remaining");
  ASSERT_THAT(cap.nextPods, SizeIs(8));
  int insufficient = 0, group = 0;
  for (const auto& p : cap.nextPods) {
    EXPECT_FALSE(p.node.has_value()) << p.name;
    EXPECT_EQ(p.podGroup, "train-3");
    if (p.reason == "0/5 nodes are available: 5 Insufficient cpu.") ++insufficient;
    if (p.reason == cap.next->message) ++group;
  }
  EXPECT_EQ(insufficient, 1);
  EXPECT_EQ(group, 7);
  // Nothing was placed in the simulator's cluster.
  EXPECT_THAT(sim.cluster().pods, IsEmpty());
}

TEST(SimulatorGroupTest, GroupCapacityIsTheLimitWhenEveryGangFits) {
  const Cluster c = testutil::load(groupNode("n1", 64));
  Simulator sim(c, groupOptions());
  const GangFile f = gangFile(gang("train", 2, 2, 1));
  const auto cap = sim.groupCapacity(*f.podGroup, f.pods, 5);
  EXPECT_EQ(cap.fits, 5);
  EXPECT_FALSE(cap.next.has_value());
}

TEST(SimulatorGroupTest, GroupCapacityOfATopologyGangTriesEveryDomain) {
  // Rack a: 8 cpus, rack b: 12; gangs of 4 two-cpu pods within one rack: one in a, one in b,
  // and the third finds 2 pods' room in b only.
  const Cluster c =
      testutil::load(groupNode("a1", 4, "a") + groupNode("a2", 4, "a") + groupNode("b1", 4, "b") +
                     groupNode("b2", 4, "b") + groupNode("b3", 4, "b"));
  Simulator sim(c, groupOptions(true));
  const GangFile f = gangFile(gang("ring", 4, 4, 2, "example.com/rack"));
  const auto cap = sim.groupCapacity(*f.podGroup, f.pods);
  EXPECT_EQ(cap.fits, 2);
  ASSERT_TRUE(cap.next.has_value());
  EXPECT_EQ(cap.next->topologyKey, "example.com/rack");
  EXPECT_EQ(cap.next->chosen, "");
  ASSERT_THAT(cap.next->placements, SizeIs(2));
  for (const auto& p : cap.next->placements) EXPECT_FALSE(p.feasible) << p.name;
  EXPECT_THAT(cap.next->message,
              ::testing::StartsWith("0/2 placements are available, first placement status: "
                                    "minCount (4) cannot be satisfied: "));
}

TEST(SimulatorGroupTest, CanScheduleGroupSaysWhereMembersWouldLandAndWhyTheGroupDoesNot) {
  // Room for 7 of 8.
  Cluster c = testutil::load(groupNode("n1", 4) + groupNode("n2", 3) + gang("train", 8, 8, 1));
  Simulator sim(c, groupOptions());
  const auto g = sim.canScheduleGroup("ml", "train");
  ASSERT_TRUE(g.has_value());
  EXPECT_FALSE(g->scheduled);
  EXPECT_EQ(g->message, "minCount (8) cannot be satisfied: 7 scheduled, 0 remaining");
  ASSERT_THAT(g->members, SizeIs(8));
  EXPECT_EQ(withNode(*g), 7);
  int own = 0;
  for (const auto& m : g->members) {
    EXPECT_FALSE(m.placed) << m.pod;
    if (m.node.empty()) {
      EXPECT_EQ(m.reason, "0/2 nodes are available: 2 Insufficient cpu.");
      ++own;
    } else {
      EXPECT_EQ(m.reason, g->message);
    }
  }
  EXPECT_EQ(own, 1);
  // The simulator's cluster is unchanged: every pod still pending.
  for (const auto& p : sim.cluster().pods) EXPECT_EQ(p->spec.nodeName, "") << p->metadata.name;
  // Another group, or none: no cycle.
  EXPECT_FALSE(sim.canScheduleGroup("ml", "other").has_value());
}

TEST(SimulatorGroupTest, ResultHasEachGroupsCycleWithThePlacementChosen) {
  const Cluster c =
      testutil::load(groupNode("a1", 4, "a") + groupNode("a2", 4, "a") + groupNode("b1", 4, "b") +
                     groupNode("b2", 4, "b") + groupNode("b3", 4, "b"));
  const GangFile f = gangFile(gang("ring", 4, 4, 2, "example.com/rack"));
  Cluster with = c;
  with.others = {{"scheduling.k8s.io/v1beta1/PodGroup", {f.podGroup}}};
  Simulator withGroup(with, groupOptions(true));
  const Result r = withGroup.schedule(f.pods);
  ASSERT_THAT(r.podGroups, SizeIs(1));
  const PodGroupResult& g = r.podGroups[0];
  EXPECT_EQ(g.namespace_ + "/" + g.name, "ml/ring");
  EXPECT_TRUE(g.scheduled);
  EXPECT_EQ(g.cycles, 1);
  ASSERT_THAT(g.placements, SizeIs(2));
  EXPECT_TRUE(g.placements[0].feasible);
  EXPECT_TRUE(g.placements[1].feasible);
  EXPECT_TRUE(g.placements[0].score.has_value());
  ASSERT_FALSE(g.chosen.empty());
  std::set<std::string> racks;
  for (const auto& m : g.members) {
    EXPECT_TRUE(m.placed) << m.pod;
    racks.insert(m.node.substr(0, 1));
  }
  EXPECT_EQ(racks, std::set<std::string>{g.chosen});
}

}  // namespace
}  // namespace ksched::sim
