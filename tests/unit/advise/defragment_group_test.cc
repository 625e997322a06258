// --defragment for a gang (advise/defragment.h, planDefragmentGroup): room made for one member
// at a time, then the whole PodGroup placed by its pod-group cycle over the cluster the moves
// leave.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "advise/defragment.h"
#include "advise/render.h"
#include "sim/load.h"
#include "tests/support/sim_test_util.h"

namespace ksched::advise {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::string node(const std::string& name, int cpu) {
  return "apiVersion: v1\nkind: Node\nmetadata: {name: " + name +
         ", labels: {kubernetes.io/hostname: " + name + "}}\nstatus: {allocatable: {cpu: \"" +
         std::to_string(cpu) + "\", memory: 16Gi, pods: \"110\"}}\n---\n";
}

// A pod of ReplicaSet web bound to `nodeName`, asking for `cpu`.
std::string bound(const std::string& name, const std::string& nodeName, int cpu) {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
         "\n  namespace: shop\n  uid: " + name +
         "\n  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web, uid: rs, "
         "controller: true}]\nspec:\n  nodeName: " +
         nodeName + "\n  containers: [{name: c, resources: {requests: {cpu: \"" +
         std::to_string(cpu) + "\"}}}]\n---\n";
}

// Four nodes of 4 cpu, each running three 1-cpu pods: 4 cpus free in all, 1 per node.
sim::Cluster busy() {
  std::string yaml;
  for (int n = 1; n <= 4; ++n) {
    const std::string name = "n" + std::to_string(n);
    yaml += node(name, 4);
    for (int i = 1; i <= 3; ++i) yaml += bound(name + "-web-" + std::to_string(i), name, 1);
  }
  return sim::testutil::load(yaml);
}

struct Gang {
  sim::Cluster cluster;  // with the PodGroup
  std::vector<PodPtr> pods;
};

// `cluster` with a gang of `n` pods of `cpu` cpus (minCount n).
Gang withGang(sim::Cluster cluster, int n, int cpu) {
  std::string yaml =
      "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: train, namespace: "
      "ml}\nspec:\n  schedulingPolicy:\n    gang:\n      minCount: " +
      std::to_string(n) + "\n";
  for (int i = 1; i <= n; ++i) {
    yaml += "---\napiVersion: v1\nkind: Pod\nmetadata: {name: train-" + std::to_string(i) +
            ", namespace: ml}\nspec:\n  schedulingGroup: {podGroupName: train}\n  containers: "
            "[{name: c, resources: {requests: {cpu: \"" +
            std::to_string(cpu) + "\"}}}]\n";
  }
  sim::Cluster work;
  sim::loadText(yaml, "gang.yaml", sim::LoadAs::kWork, work);
  for (const auto& [kind, objects] : work.others) cluster.others[kind] = objects;
  return {std::move(cluster), work.pods};
}

sim::Options gangOptions() {
  sim::Options o;
  EXPECT_EQ(o.features.set("GenericWorkload=true"), std::nullopt);
  return o;
}

TEST(AdviseDefragmentGroup, RoomIsMadeForEachMemberThenTheGroupFits) {
  const Gang g = withGang(busy(), 2, 2);
  const Plan p = planDefragmentGroup(g.cluster, gangOptions(), "ml/train", g.pods, {});
  EXPECT_EQ(p.goal, "--defragment ml/train (2 pods)");
  ASSERT_EQ(p.moves.size(), 2U) << p.forPodReason;
  std::set<std::string> from, to;
  for (const auto& m : p.moves) {
    from.insert(m.from);
    to.insert(m.to);
    EXPECT_THAT(m.why, HasSubstr("make room for ml/train"));
  }
  EXPECT_EQ(from.size(), 2U);                                    // one move off each of two nodes
  for (const auto& n : from) EXPECT_FALSE(to.contains(n)) << n;  // nothing lands on them
  ASSERT_EQ(p.forPodMembers.size(), 2U);
  std::set<std::string> members;
  for (const auto& [pod, n] : p.forPodMembers) members.insert(n);
  EXPECT_EQ(members, from);  // the group goes where the room was made
  EXPECT_EQ(std::set<std::string>(p.uncordonAfter.begin(), p.uncordonAfter.end()), from);
  EXPECT_THAT(planTable(p), HasSubstr("Plan: 2 moves, then PodGroup ml/train fits, on "));
  EXPECT_THAT(planTable(p),
              HasSubstr("Cordoned while the moves run (uncordoned after the last): "));
  EXPECT_EQ(planDocument(p).at("forPodGroupMembers").size(), 2U);
}

TEST(AdviseDefragmentGroup, AGroupThatFitsNowNeedsNoMove) {
  const Gang g = withGang(busy(), 4, 1);
  const Plan p = planDefragmentGroup(g.cluster, gangOptions(), "ml/train", g.pods, {});
  EXPECT_THAT(p.moves, IsEmpty());
  EXPECT_EQ(p.forPodNode, "n1, n2, n3, n4");
  EXPECT_EQ(p.forPodMembers.size(), 4U);
}

TEST(AdviseDefragmentGroup, MoreThanTheClusterHoldsIsRefusedWithTheReason) {
  // Five 3-cpu members: 15 of the cluster's 16 cpus, 12 of them in use.
  const Gang g = withGang(busy(), 5, 3);
  const Plan p = planDefragmentGroup(g.cluster, gangOptions(), "ml/train", g.pods, {});
  EXPECT_THAT(p.moves, IsEmpty());
  EXPECT_TRUE(p.forPodNode.empty());
  EXPECT_THAT(p.forPodReason, HasSubstr("no room found for ml/train-"));
}

TEST(AdviseDefragmentGroup, TheGateAndTheProfilesAreChecked) {
  const Gang g = withGang(busy(), 2, 2);
  EXPECT_THROW((void)planDefragmentGroup(g.cluster, {}, "ml/train", g.pods, {}),
               std::invalid_argument);
  try {
    (void)planDefragmentGroup(g.cluster, {}, "ml/train", g.pods, {});
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("needs --feature-gates GenericWorkload=true"));
  }
}

}  // namespace
}  // namespace ksched::advise
