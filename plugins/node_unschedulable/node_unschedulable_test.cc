#include "plugins/node_unschedulable/node_unschedulable.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "plugins/testing/plugin_test_util.h"

namespace ksched::plugins {
namespace {

using testutil::NodeWrapper;
using testutil::PodWrapper;

struct UnschedulableCase {
  std::string name;
  PodWrapper pod;
  bool unschedulable;
  Code wantCode;
  std::vector<std::string> wantReasons;
};

class NodeUnschedulableTest : public ::testing::TestWithParam<UnschedulableCase> {};

TEST_P(NodeUnschedulableTest, Filter) {
  const UnschedulableCase& c = GetParam();
  NodeUnschedulable pl;
  CycleState state;
  auto ni = testutil::makeNodeInfo(NodeWrapper("n").unschedulable(c.unschedulable));
  Status s = pl.filter(state, c.pod.obj(), *ni);
  EXPECT_EQ(s.code(), c.wantCode);
  EXPECT_EQ(s.reasons(), c.wantReasons);
}

const std::vector<std::string> kUnschedulable = {"node(s) were unschedulable"};

INSTANTIATE_TEST_SUITE_P(
    Table, NodeUnschedulableTest,
    ::testing::Values(UnschedulableCase{"schedulableNode", PodWrapper(), false, Code::kSuccess, {}},
                      UnschedulableCase{"unschedulableNode", PodWrapper(), true,
                                        Code::kUnschedulableAndUnresolvable, kUnschedulable},
                      UnschedulableCase{"toleratesWithExists",
                                        PodWrapper().toleration("node.kubernetes.io/unschedulable",
                                                                "Exists", "", "NoSchedule"),
                                        true,
                                        Code::kSuccess,
                                        {}},
                      UnschedulableCase{"toleratesEverything",
                                        PodWrapper().toleration("", "Exists", "", ""),
                                        true,
                                        Code::kSuccess,
                                        {}},
                      UnschedulableCase{"toleratesEqualEmptyValue",
                                        PodWrapper().toleration("node.kubernetes.io/unschedulable",
                                                                "Equal", "", ""),
                                        true,
                                        Code::kSuccess,
                                        {}},
                      UnschedulableCase{"wrongEffect",
                                        PodWrapper().toleration("node.kubernetes.io/unschedulable",
                                                                "Exists", "", "NoExecute"),
                                        true, Code::kUnschedulableAndUnresolvable, kUnschedulable},
                      UnschedulableCase{"wrongKey",
                                        PodWrapper().toleration("foo", "Exists", "", "NoSchedule"),
                                        true, Code::kUnschedulableAndUnresolvable, kUnschedulable}),
    [](const auto& info) { return info.param.name; });

TEST(NodeUnschedulableTest, NoNodeIsUnknownCondition) {
  NodeUnschedulable pl;
  CycleState state;
  NodeInfo empty;
  Status s = pl.filter(state, PodWrapper().obj(), empty);
  EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(s.reasons(), std::vector<std::string>{"node(s) had unknown conditions"});
}

TEST(NodeUnschedulableTest, Events) {
  testutil::FakeHandle h;
  auto pl = newNodeUnschedulable(nullptr, h);
  EXPECT_EQ(pl->name(), "NodeUnschedulable");
  auto events = dynamic_cast<EnqueueExtensions&>(*pl).eventsToRegister();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_TRUE(events[0].event.matches(events::kNodeAdd));
  EXPECT_TRUE(events[1].event.matches({EventResource::kPod, kUpdatePodTolerations, ""}));
  EXPECT_TRUE(events[0].event.matches({EventResource::kNode, kUpdateOther, ""}));
  EXPECT_TRUE(events[0].event.matches({EventResource::kNode, kUpdateNodeTaint, ""}));
  EXPECT_FALSE(events[0].event.matches({EventResource::kNode, kUpdateNodeAllocatable, ""}));
}

}  // namespace
}  // namespace ksched::plugins
