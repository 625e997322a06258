#include "queue/nominator.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "queue/scheduling_queue.h"

namespace ksched::queue {
namespace {

PodPtr makePod(const std::string& name, const std::string& nominated = "") {
  auto p = std::make_shared<api::Pod>();
  p->metadata.name = name;
  p->metadata.namespace_ = "ns";
  p->metadata.uid = "uid-" + name;
  p->status.nominatedNodeName = nominated;
  return p;
}

PodInfoPtr info(const PodPtr& pod) { return std::make_shared<PodInfo>(pod, features::Gates{}); }

std::vector<std::string> names(const std::vector<PodInfoPtr>& pods) {
  std::vector<std::string> out;
  for (const auto& p : pods) out.push_back(p->pod->metadata.name);
  return out;
}

using Names = std::vector<std::string>;

TEST(NominatorTest, AddReplaceRemoveByNode) {
  Nominator n;
  n.addNominatedPod(info(makePod("a")), "node-1");
  n.addNominatedPod(info(makePod("b")), "node-1");
  n.addNominatedPod(info(makePod("c")), "node-2");
  EXPECT_EQ(names(n.nominatedPodsForNode("node-1")), (Names{"a", "b"}));
  EXPECT_EQ(names(n.nominatedPodsForNode("node-2")), Names{"c"});
  EXPECT_TRUE(n.nominatedPodsForNode("node-3").empty());

  // Same uid again: replaced, not duplicated.
  n.addNominatedPod(info(makePod("a")), "node-2");
  EXPECT_EQ(names(n.nominatedPodsForNode("node-1")), Names{"b"});
  EXPECT_EQ(names(n.nominatedPodsForNode("node-2")), (Names{"c", "a"}));
  EXPECT_EQ(n.nominatedNodeFor("uid-a"), "node-2");
  EXPECT_EQ(n.size(), 3u);

  n.deleteNominatedPodIfExists(*makePod("a"));
  n.deleteNominatedPodIfExists(*makePod("never"));
  EXPECT_EQ(names(n.nominatedPodsForNode("node-2")), Names{"c"});
  EXPECT_EQ(n.nominatedNodeFor("uid-a"), "");

  n.addNominatedPod(info(makePod("b")), "");  // empty node name: only removes
  EXPECT_TRUE(n.nominatedPodsForNode("node-1").empty());
  EXPECT_EQ(n.size(), 1u);
}

TEST(NominatorTest, UpdateFollowsStatusOrKeepsInMemoryNomination) {
  const struct {
    const char* name;
    std::string inMemory;  // nomination before the update ("" for none)
    std::string oldStatus;
    std::string newStatus;
    std::string want;
  } cases[] = {
      {"set by the update", "", "", "node-1", "node-1"},
      {"changed by the update", "node-1", "node-1", "node-2", "node-2"},
      {"cleared by the update", "node-1", "node-1", "", ""},
      {"kept while the apiserver has not seen it", "node-3", "", "", "node-3"},
      {"nothing to keep", "", "", "", ""},
  };
  for (const auto& c : cases) {
    Nominator n;
    auto oldPod = makePod("p", c.oldStatus);
    if (!c.inMemory.empty()) n.addNominatedPod(info(oldPod), c.inMemory);
    auto newInfo = info(makePod("p", c.newStatus));
    n.updateNominatedPod(*oldPod, newInfo);
    EXPECT_EQ(n.nominatedNodeFor("uid-p"), c.want) << c.name;
    if (!c.want.empty()) {
      auto pods = n.nominatedPodsForNode(c.want);
      ASSERT_EQ(pods.size(), 1u) << c.name;
      EXPECT_EQ(pods[0], newInfo) << c.name;  // the new pod object
    }
  }
}

TEST(NominatorTest, FailedAttemptKeepsTheNominationTheApiserverHasNotSeen) {
  // Preemption nominated p to node-1; its status write has not reached the informer when p's
  // next attempt fails (its victims are still terminating). It must stay nominated, or other
  // pods would take node-1 (and p would preempt again elsewhere).
  SchedulingQueue q(Options{}, nullptr, nullptr, {});
  auto p = makePod("p");
  q.add(p);
  auto qpi = q.pop({});
  ASSERT_NE(qpi, nullptr);
  q.addNominatedPod(qpi->podInfo, "node-1");
  qpi->unschedulablePlugins.insert("NodeResourcesFit");
  qpi->podInfo = info(makePod("p"));  // the informer's latest: no nominatedNodeName yet
  ASSERT_TRUE(q.addUnschedulableIfNotPresent(std::move(qpi), q.schedulingCycle()));
  EXPECT_EQ(q.nominatedNodeFor("uid-p"), "node-1");
  auto pods = q.nominatedPodsForNode("node-1");
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_TRUE(pods[0]->pod->status.nominatedNodeName.empty());  // the latest object

  // Without an in-memory nomination, the status decides (a restarted scheduler).
  SchedulingQueue q2(Options{}, nullptr, nullptr, {});
  q2.add(makePod("r"));
  auto r = q2.pop({});
  ASSERT_NE(r, nullptr);
  r->unschedulablePlugins.insert("NodeResourcesFit");
  r->podInfo = info(makePod("r", "node-2"));
  ASSERT_TRUE(q2.addUnschedulableIfNotPresent(std::move(r), q2.schedulingCycle()));
  EXPECT_EQ(q2.nominatedNodeFor("uid-r"), "node-2");
}

TEST(NominatorTest, QueueKeepsNominationsInSync) {
  SchedulingQueue q(Options{}, nullptr, nullptr, {});
  auto p = makePod("p", "node-1");
  q.add(p);
  EXPECT_EQ(names(q.nominatedPodsForNode("node-1")), Names{"p"});

  auto moved = makePod("p", "node-2");
  q.update(p, moved);
  EXPECT_TRUE(q.nominatedPodsForNode("node-1").empty());
  EXPECT_EQ(names(q.nominatedPodsForNode("node-2")), Names{"p"});

  auto cleared = makePod("p");
  q.update(moved, cleared);
  EXPECT_TRUE(q.nominatedPodsForNode("node-2").empty());

  q.addNominatedPod(info(cleared), "node-3");  // preemption, before the status patch lands
  auto relabeled = std::make_shared<api::Pod>(*cleared);
  relabeled->metadata.labels["x"] = "y";
  q.update(cleared, relabeled);
  auto pods = q.nominatedPodsForNode("node-3");
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_EQ(pods[0]->pod, relabeled);

  q.deleteNominatedPodIfExists(*relabeled);
  EXPECT_TRUE(q.nominatedPodsForNode("node-3").empty());
  q.addNominatedPod(info(relabeled), "node-3");
  q.remove(*relabeled);
  EXPECT_TRUE(q.nominatedPodsForNode("node-3").empty());
}

}  // namespace
}  // namespace ksched::queue
