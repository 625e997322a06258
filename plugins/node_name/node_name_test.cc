#include "plugins/node_name/node_name.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "plugins/testing/plugin_test_util.h"

namespace ksched::plugins {
namespace {

using testutil::NodeWrapper;
using testutil::PodWrapper;

struct NodeNameCase {
  std::string name;
  std::string podNodeName;
  std::string node;
  Code wantCode;
  std::vector<std::string> wantReasons;
};

class NodeNameTest : public ::testing::TestWithParam<NodeNameCase> {};

TEST_P(NodeNameTest, Filter) {
  const NodeNameCase& c = GetParam();
  NodeName pl;
  CycleState state;
  auto ni = testutil::makeNodeInfo(NodeWrapper(c.node));
  Status s = pl.filter(state, PodWrapper().nodeName(c.podNodeName).obj(), *ni);
  EXPECT_EQ(s.code(), c.wantCode);
  EXPECT_EQ(s.reasons(), c.wantReasons);
}

INSTANTIATE_TEST_SUITE_P(
    Table, NodeNameTest,
    ::testing::Values(NodeNameCase{"noNodeNameFitsAny", "", "foo", Code::kSuccess, {}},
                      NodeNameCase{"sameNodeName", "foo", "foo", Code::kSuccess, {}},
                      NodeNameCase{"differentNodeName",
                                   "bar",
                                   "foo",
                                   Code::kUnschedulableAndUnresolvable,
                                   {"node(s) didn't match the requested node name"}}),
    [](const auto& info) { return info.param.name; });

TEST(NodeNameTest, EventsAndFactory) {
  testutil::FakeHandle h;
  auto pl = newNodeName(nullptr, h);
  EXPECT_EQ(pl->name(), "NodeName");
  auto* ext = dynamic_cast<EnqueueExtensions*>(pl.get());
  ASSERT_NE(ext, nullptr);
  auto events = ext->eventsToRegister();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_TRUE(events[0].event.matches(events::kNodeAdd));
  EXPECT_FALSE(events[0].event.matches(events::kAssignedPodDelete));
}

}  // namespace
}  // namespace ksched::plugins
