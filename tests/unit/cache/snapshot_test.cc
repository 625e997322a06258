#include "cache/snapshot.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cache/cache.h"
#include "cache/node_tree.h"
#include "tests/support/cache_test_util.h"

namespace ksched::cache {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::IsEmpty;
using testutil::NodeBuilder;
using testutil::PodBuilder;

std::vector<std::string> names(const std::vector<const NodeInfo*>& infos) {
  std::vector<std::string> out;
  for (const NodeInfo* info : infos) out.push_back(info->name());
  return out;
}

// Every list entry is the very object get() returns for that name.
void expectListsConsistent(const Snapshot& s) {
  for (const auto* list :
       {&s.list(), &s.havePodsWithAffinityList(), &s.havePodsWithRequiredAntiAffinityList()}) {
    for (const NodeInfo* info : *list) EXPECT_EQ(info, s.get(info->name())) << info->name();
  }
}

TEST(SnapshotTest, IncrementalUpdates) {
  Cache cache;
  for (int i = 0; i < 500; ++i) {
    cache.addNode(NodeBuilder("n" + std::to_string(i)).allocatable("cpu", "8").build());
  }
  Snapshot snapshot;
  EXPECT_EQ(cache.updateSnapshot(snapshot), 500u);
  EXPECT_EQ(snapshot.numNodes(), 500u);
  EXPECT_EQ(cache.updateSnapshot(snapshot), 0u);  // nothing changed
  const int64_t generation = snapshot.generation();

  ASSERT_TRUE(cache.addPod(PodBuilder("p").node("n17").container("1").build()).ok());
  EXPECT_EQ(cache.updateSnapshot(snapshot), 1u);
  EXPECT_GT(snapshot.generation(), generation);
  ASSERT_NE(snapshot.get("n17"), nullptr);
  EXPECT_EQ(snapshot.get("n17")->requested().milliCPU, 1000);
  EXPECT_EQ(snapshot.numNodes(), 500u);
  expectListsConsistent(snapshot);

  ASSERT_TRUE(cache.removeNode(NodeBuilder("n42").object()).ok());
  EXPECT_EQ(cache.updateSnapshot(snapshot), 0u);
  EXPECT_EQ(snapshot.numNodes(), 499u);
  EXPECT_EQ(snapshot.get("n42"), nullptr);

  ASSERT_TRUE(cache.removeNode(NodeBuilder("n17").object()).ok());  // has a pod
  EXPECT_EQ(cache.updateSnapshot(snapshot), 0u);
  EXPECT_EQ(snapshot.numNodes(), 498u);
  EXPECT_EQ(snapshot.get("n17"), nullptr);

  cache.addNode(NodeBuilder("n500").build());
  EXPECT_EQ(cache.updateSnapshot(snapshot), 1u);
  EXPECT_EQ(snapshot.numNodes(), 499u);
  ASSERT_NE(snapshot.get("n500"), nullptr);
  EXPECT_EQ(snapshot.list().back()->name(), "n500");
  expectListsConsistent(snapshot);

  // A second, fresh snapshot of the same cache gets everything.
  Snapshot other;
  EXPECT_EQ(cache.updateSnapshot(other), 499u);
  EXPECT_EQ(names(other.list()), names(snapshot.list()));
}

TEST(SnapshotTest, ChangedSlotsSince) {
  Cache cache;
  for (int i = 0; i < 20; ++i) {
    cache.addNode(NodeBuilder("n" + std::to_string(i)).allocatable("cpu", "8").build());
  }
  Snapshot snapshot;
  std::vector<size_t> slots;
  EXPECT_EQ(snapshot.listVersion(), 0);
  EXPECT_FALSE(snapshot.changedSlotsSince(0, slots));
  (void)cache.updateSnapshot(snapshot);
  const int64_t built = snapshot.listVersion();
  EXPECT_NE(built, 0);
  EXPECT_TRUE(snapshot.changedSlotsSince(built, slots));
  EXPECT_THAT(slots, IsEmpty());
  (void)cache.updateSnapshot(snapshot);  // nothing changed: same version
  EXPECT_EQ(snapshot.listVersion(), built);

  auto slotOf = [&](const std::string& name) {
    const auto& list = snapshot.list();
    for (size_t i = 0; i < list.size(); ++i) {
      if (list[i]->name() == name) return i;
    }
    return list.size();
  };
  ASSERT_TRUE(cache.addPod(PodBuilder("p").node("n7").container("1").build()).ok());
  (void)cache.updateSnapshot(snapshot);
  const int64_t one = snapshot.listVersion();
  EXPECT_GT(one, built);
  EXPECT_TRUE(snapshot.changedSlotsSince(built, slots));
  EXPECT_THAT(slots, ElementsAre(slotOf("n7")));

  ASSERT_TRUE(cache.addPod(PodBuilder("q").node("n3").container("1").build()).ok());
  (void)cache.updateSnapshot(snapshot);
  slots.clear();
  EXPECT_TRUE(snapshot.changedSlotsSince(one, slots));
  EXPECT_THAT(slots, ElementsAre(slotOf("n3")));
  slots.clear();
  EXPECT_TRUE(snapshot.changedSlotsSince(built, slots));
  EXPECT_THAT(slots, ElementsAre(slotOf("n7"), slotOf("n3")));

  // A node added: the list is rebuilt and earlier versions cannot be answered.
  const int64_t beforeAdd = snapshot.listVersion();
  cache.addNode(NodeBuilder("n20").build());
  (void)cache.updateSnapshot(snapshot);
  EXPECT_GT(snapshot.listVersion(), beforeAdd);
  EXPECT_FALSE(snapshot.changedSlotsSince(beforeAdd, slots));
  slots.clear();
  EXPECT_TRUE(snapshot.changedSlotsSince(snapshot.listVersion(), slots));
  EXPECT_THAT(slots, IsEmpty());
  // Another snapshot's versions are unknown here.
  Snapshot other;
  (void)cache.updateSnapshot(other);
  EXPECT_FALSE(snapshot.changedSlotsSince(other.listVersion(), slots));
}

TEST(SnapshotTest, ZoneInterleavedOrder) {
  Cache cache;
  for (const auto* name : {"a1", "a2", "a3", "b1", "b2", "c1"}) {
    cache.addNode(NodeBuilder(name).zone(std::string(1, name[0])).build());
  }
  Snapshot snapshot;
  (void)cache.updateSnapshot(snapshot);
  EXPECT_THAT(names(snapshot.list()), ElementsAre("a1", "b1", "c1", "a2", "b2", "a3"));

  // b1 moves to zone c: appended to c.
  cache.updateNode(nullptr, NodeBuilder("b1").zone("c").build());
  EXPECT_EQ(cache.updateSnapshot(snapshot), 1u);
  EXPECT_THAT(names(snapshot.list()), ElementsAre("a1", "b2", "c1", "a2", "b1", "a3"));

  // Zone b empties and disappears from the zone order.
  ASSERT_TRUE(cache.removeNode(NodeBuilder("b2").object()).ok());
  (void)cache.updateSnapshot(snapshot);
  EXPECT_THAT(names(snapshot.list()), ElementsAre("a1", "c1", "a2", "b1", "a3"));
  expectListsConsistent(snapshot);
}

TEST(SnapshotTest, ZoneKey) {
  struct Case {
    std::string name;
    std::vector<std::pair<std::string, std::string>> labels;
    std::string key;
  };
  using namespace std::string_literals;
  const std::vector<Case> cases = {
      {"none", {}, ""},
      {"zoneOnly", {{"topology.kubernetes.io/zone", "z1"}}, ":\0:z1"s},
      {"regionAndZone",
       {{"topology.kubernetes.io/region", "r"}, {"topology.kubernetes.io/zone", "z1"}},
       "r:\0:z1"s},
      {"betaFallback",
       {{"failure-domain.beta.kubernetes.io/region", "r"},
        {"failure-domain.beta.kubernetes.io/zone", "z2"}},
       "r:\0:z2"s},
      {"gaWins",
       {{"failure-domain.beta.kubernetes.io/zone", "old"}, {"topology.kubernetes.io/zone", "new"}},
       ":\0:new"s},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    NodeBuilder b("n");
    for (const auto& [k, v] : c.labels) b.label(k, v);
    EXPECT_EQ(zoneKey(b.object()), c.key);
  }
}

TEST(SnapshotTest, AffinityListsFollowPods) {
  Cache cache;
  for (const auto* name : {"n1", "n2", "n3"}) cache.addNode(NodeBuilder(name).build());
  Snapshot snapshot;
  (void)cache.updateSnapshot(snapshot);
  EXPECT_THAT(snapshot.havePodsWithAffinityList(), IsEmpty());

  const auto anti = PodBuilder("anti").node("n2").requiredAntiAffinity();
  const auto aff = PodBuilder("aff").node("n3").requiredAffinity();
  ASSERT_TRUE(cache.addPod(anti.build()).ok());
  ASSERT_TRUE(cache.addPod(aff.build()).ok());
  EXPECT_EQ(cache.updateSnapshot(snapshot), 2u);
  EXPECT_THAT(names(snapshot.havePodsWithAffinityList()), ElementsAre("n2", "n3"));
  EXPECT_THAT(names(snapshot.havePodsWithRequiredAntiAffinityList()), ElementsAre("n2"));

  // Another affinity pod on n3: the node is copied, the lists keep their shape but point to
  // the new copy.
  ASSERT_TRUE(cache.addPod(PodBuilder("aff2").node("n3").requiredAffinity().build()).ok());
  EXPECT_EQ(cache.updateSnapshot(snapshot), 1u);
  EXPECT_THAT(names(snapshot.havePodsWithAffinityList()), ElementsAre("n2", "n3"));
  EXPECT_EQ(snapshot.havePodsWithAffinityList()[1]->podsWithAffinity().size(), 2u);
  expectListsConsistent(snapshot);

  ASSERT_TRUE(cache.removePod(anti.object()).ok());
  EXPECT_EQ(cache.updateSnapshot(snapshot), 1u);
  EXPECT_THAT(names(snapshot.havePodsWithAffinityList()), ElementsAre("n3"));
  EXPECT_THAT(snapshot.havePodsWithRequiredAntiAffinityList(), IsEmpty());
  expectListsConsistent(snapshot);
}

TEST(SnapshotTest, HeldCopiesAreNotModified) {
  Cache cache;
  cache.addNode(NodeBuilder("n1").build());
  Snapshot snapshot;
  (void)cache.updateSnapshot(snapshot);
  const auto held = snapshot.getShared("n1");
  ASSERT_NE(held, nullptr);
  ASSERT_TRUE(cache.addPod(PodBuilder("p").node("n1").build()).ok());
  EXPECT_EQ(cache.updateSnapshot(snapshot), 1u);
  EXPECT_TRUE(held->pods().empty());
  EXPECT_EQ(snapshot.get("n1")->pods().size(), 1u);
  EXPECT_NE(snapshot.get("n1"), held.get());
  EXPECT_EQ(snapshot.getShared("missing"), nullptr);
}

TEST(SnapshotTest, FromForTest) {
  const Snapshot snapshot = Snapshot::fromForTest(
      {PodBuilder("p1").node("a1").container("1").build(),
       PodBuilder("p2").node("a1").container("500m").requiredAntiAffinity().build(),
       PodBuilder("p3").node("b1").requiredAffinity().build(),
       PodBuilder("ghost").node("nowhere").build(), PodBuilder("pending").build()},
      {NodeBuilder("a1").zone("a").image({"img"}, 10).build(),
       NodeBuilder("a2").zone("a").image({"img"}, 10).image({"only-a2"}, 5).build(),
       NodeBuilder("b1").zone("b").build()});
  EXPECT_THAT(names(snapshot.list()), ElementsAre("a1", "b1", "a2"));
  EXPECT_EQ(snapshot.numNodes(), 3u);
  EXPECT_EQ(snapshot.get("nowhere"), nullptr);
  ASSERT_NE(snapshot.get("a1"), nullptr);
  EXPECT_EQ(snapshot.get("a1")->pods().size(), 2u);
  EXPECT_EQ(snapshot.get("a1")->requested().milliCPU, 1500);
  EXPECT_EQ(snapshot.get("a1")->imageStates().at("img").numNodes, 2);
  EXPECT_EQ(snapshot.get("a2")->imageStates().at("only-a2").numNodes, 1);
  EXPECT_THAT(names(snapshot.havePodsWithAffinityList()), ElementsAre("a1", "b1"));
  EXPECT_THAT(names(snapshot.havePodsWithRequiredAntiAffinityList()), ElementsAre("a1"));
  EXPECT_GT(snapshot.generation(), 0);
  expectListsConsistent(snapshot);
}

TEST(SnapshotTest, UsedPVCsFollowTheCache) {
  Cache cache;
  cache.addNode(NodeBuilder("n1").build());
  cache.addNode(NodeBuilder("n2").build());
  Snapshot snapshot;
  cache.updateSnapshot(snapshot);
  EXPECT_FALSE(snapshot.isPVCUsedByPods("default/data"));

  const auto a = PodBuilder("a").node("n1").pvc("data").build();
  const auto b = PodBuilder("b").node("n2").pvc("data").ephemeral("tmp").build();
  ASSERT_TRUE(cache.addPod(a).ok());
  cache.updateSnapshot(snapshot);
  EXPECT_TRUE(snapshot.isPVCUsedByPods("default/data"));
  EXPECT_FALSE(snapshot.isPVCUsedByPods("default/b-tmp"));
  EXPECT_FALSE(snapshot.isPVCUsedByPods("other/data"));

  ASSERT_TRUE(cache.addPod(b).ok());
  cache.updateSnapshot(snapshot);
  EXPECT_TRUE(snapshot.isPVCUsedByPods("default/b-tmp"));

  // Still used by b after a leaves; unused once b leaves too.
  ASSERT_TRUE(cache.removePod(*a).ok());
  cache.updateSnapshot(snapshot);
  EXPECT_TRUE(snapshot.isPVCUsedByPods("default/data"));
  ASSERT_TRUE(cache.removePod(*b).ok());
  cache.updateSnapshot(snapshot);
  EXPECT_FALSE(snapshot.isPVCUsedByPods("default/data"));
  EXPECT_FALSE(snapshot.isPVCUsedByPods("default/b-tmp"));

  // A pod on a node that is removed stops counting.
  ASSERT_TRUE(cache.addPod(PodBuilder("c").node("n2").pvc("logs").build()).ok());
  cache.updateSnapshot(snapshot);
  EXPECT_TRUE(snapshot.isPVCUsedByPods("default/logs"));
  ASSERT_TRUE(cache.removeNode(NodeBuilder("n2").object()).ok());
  cache.updateSnapshot(snapshot);
  EXPECT_FALSE(snapshot.isPVCUsedByPods("default/logs"));

  const Snapshot direct = Snapshot::fromForTest({PodBuilder("d").node("n1").pvc("x").build()},
                                                {NodeBuilder("n1").build()});
  EXPECT_TRUE(direct.isPVCUsedByPods("default/x"));
}

TEST(SnapshotTest, NodeTreeListTable) {
  struct Case {
    std::string name;
    std::vector<std::pair<std::string, std::string>> nodes;  // name, zone
    std::vector<std::string> removed;
    std::vector<std::string> want;
  };
  const std::vector<Case> cases = {
      {"empty", {}, {}, {}},
      {"noZones", {{"x", ""}, {"y", ""}}, {}, {"x", "y"}},
      {"threeZones",
       {{"a1", "a"}, {"a2", "a"}, {"a3", "a"}, {"b1", "b"}, {"b2", "b"}, {"c1", "c"}},
       {},
       {"a1", "b1", "c1", "a2", "b2", "a3"}},
      {"mixedInsertion",
       {{"b1", "b"}, {"a1", "a"}, {"b2", "b"}, {"a2", "a"}, {"a3", "a"}},
       {},
       {"b1", "a1", "b2", "a2", "a3"}},
      {"removeMiddle",
       {{"a1", "a"}, {"a2", "a"}, {"a3", "a"}, {"b1", "b"}},
       {"a2"},
       {"a1", "b1", "a3"}},
      {"duplicateAdd", {{"a1", "a"}, {"a1", "b"}}, {}, {"a1"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    NodeTree tree;
    for (const auto& [name, zone] : c.nodes) {
      NodeBuilder b(name);
      if (!zone.empty()) b.zone(zone);
      tree.addNode(b.object());
    }
    for (const auto& name : c.removed) EXPECT_TRUE(tree.removeNode(name));
    EXPECT_THAT(tree.list(), ElementsAreArray(c.want));
    EXPECT_EQ(tree.numNodes(), c.want.size());
  }
}

}  // namespace
}  // namespace ksched::cache
