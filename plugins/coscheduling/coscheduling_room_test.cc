// Coscheduling's release after a PostFilter failure against the cycle's snapshot: room freed
// before the pod's PreFilter counts as seen only if the snapshot shows it. The handlers run
// before the cache (and so any later snapshot) has the change, and a cycle's snapshot is taken
// before its PreFilter: a release decided on a snapshot that misses freed room would wait for
// an event that already came.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "plugins/coscheduling/coscheduling.h"
#include "plugins/coscheduling/coscheduling_test_util.h"

namespace ksched::plugins {
namespace {

using coscheduling_test::Fixture;
using coscheduling_test::gangPod;
using coscheduling_test::podGroup;
using testutil::NodeWrapper;
using testutil::PodWrapper;

PodWrapper boundPod(const std::string& name, const std::string& group, const std::string& node) {
  return PodWrapper(name).label(std::string(coscheduling::kPodGroupLabel), group).nodeName(node);
}

api::Node nodeAt(const std::string& name, const std::string& resourceVersion) {
  api::Node n = NodeWrapper(name).obj();
  n.metadata.resourceVersion = resourceVersion;
  return n;
}

std::shared_ptr<NodeInfo> nodeInfo(const api::Node& node, const std::vector<PodWrapper>& pods) {
  auto ni = std::make_shared<NodeInfo>(std::make_shared<const api::Node>(node));
  for (const auto& p : pods) ni->addPod(p.info());
  return ni;
}

TEST(CoschedulingPostFilterTest, RoomFreedBeforeTheCycleButMissingFromItsSnapshotKeepsTheGroup) {
  const NodeToStatus statuses{{"n1", Status::unschedulable("Insufficient cpu")}};
  const std::string released =
      "podGroup default/pg failed recently: its pods do not all fit; it waits for room to free up";
  const api::Node n1 = nodeAt("n1", "1");
  const api::Node n9 = nodeAt("n9", "5");
  auto nodeAdded = [n9](Coscheduling& c) {
    (void)c.eventsToRegister()[1].hint(*gangPod("c-0", "third"), {},
                                       std::make_shared<const api::Node>(n9));
  };
  struct Case {
    std::string name;
    std::function<void(Coscheduling&)> before;  // counted before the pod's PreFilter
    std::vector<std::shared_ptr<NodeInfo>> snapshot;
    bool releasedAfter;
  };
  const std::vector<Case> cases = {
      {"another group's pod deleted, still in the snapshot",
       [](Coscheduling& c) { c.onPod(gangPod("x-0", "other", "n1"), nullptr); },
       {nodeInfo(n1, {boundPod("x-0", "other", "n1")})},
       false},
      {"another group's pod deleted, gone from the snapshot",
       [](Coscheduling& c) { c.onPod(gangPod("x-0", "other", "n1"), nullptr); },
       {nodeInfo(n1, {})},
       true},
      {"a pod of no group deleted, still in the snapshot",
       [](Coscheduling& c) {
         c.onPod(std::make_shared<const api::Pod>(PodWrapper("plain").nodeName("n1").obj()),
                 nullptr);
       },
       {nodeInfo(n1, {PodWrapper("plain").nodeName("n1")})},
       false},
      {"the group's own pod deleted, still in the snapshot",
       [](Coscheduling& c) { c.onPod(gangPod("p-9", "pg", "n1"), nullptr); },
       {nodeInfo(n1, {boundPod("p-9", "pg", "n1")})},
       true},
      {"a node added, not in the snapshot", nodeAdded, {nodeInfo(n1, {})}, false},
      {"a node added, in the snapshot as the event left it",
       nodeAdded,
       {nodeInfo(n1, {}), nodeInfo(n9, {})},
       true},
      {"more room events at once than are kept",
       [](Coscheduling& c) {
         for (size_t i = 0; i <= 4096; ++i) {
           c.onPod(std::make_shared<const api::Pod>(
                       PodWrapper("gone-" + std::to_string(i)).nodeName("n1").obj()),
                   nullptr);
         }
       },
       {nodeInfo(n1, {})},
       false},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    Fixture f{testutil::FakeLister(tc.snapshot)};
    f.group("pg", 3, 3);
    f.plugin.onPodGroup(nullptr, podGroup("other", 1));
    f.plugin.onPod(nullptr, gangPod("x-0", "other", "n1"));
    tc.before(f.plugin);
    ASSERT_TRUE(f.preFilter(gangPod("p-0", "pg")).ok());
    auto [r, s] = f.plugin.postFilter(f.state, *gangPod("p-0", "pg"), statuses);
    EXPECT_EQ(s.code(), Code::kUnschedulable);
    CycleState next;
    Status again = f.plugin.preFilter(next, *gangPod("p-1", "pg"), f.handle.snapshot(), f.result);
    EXPECT_EQ(again.message(), tc.releasedAfter ? released : "");
  }
}

}  // namespace
}  // namespace ksched::plugins
