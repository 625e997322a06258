#include "plugins/node_name/node_name.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/plugin_test_util.h"
#include "tests/support/queueing_hint_test_util.h"

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

TEST(NodeNameTest, QueueingHints) {
  using testutil::event;
  using testutil::kNotRegistered;
  using testutil::kWantQueue;
  using testutil::obj;
  constexpr auto kNode = EventResource::kNode;
  const api::Pod pod = PodWrapper().nodeName("foo").obj();
  testutil::FakeHandle h;
  auto pl = makePlugin(nodeNameFactory(), nullptr, h);
  EXPECT_EQ(pl->name(), "NodeName");
  auto* ext = dynamic_cast<EnqueueExtensions*>(pl.get());
  ASSERT_NE(ext, nullptr);
  // No hint: every added node is worth a retry.
  testutil::expectHints(
      *ext,
      {
          {"named node added", event(kNode, kAdd), pod, {}, obj(NodeWrapper("foo")), kWantQueue},
          {"other node added", event(kNode, kAdd), pod, {}, obj(NodeWrapper("bar")), kWantQueue},
          {"node label update", event(kNode, kUpdateNodeLabel), pod, obj(NodeWrapper("foo")),
           obj(NodeWrapper("foo").label("k", "v")), kNotRegistered},
          {"node taint update", event(kNode, kUpdateNodeTaint), pod, obj(NodeWrapper("foo")),
           obj(NodeWrapper("foo").taint("k", "v", "NoSchedule")), kNotRegistered},
          {"node deleted", event(kNode, kDelete), pod, obj(NodeWrapper("foo")), {}, kNotRegistered},
          {"assigned pod deleted",
           event(EventResource::kAssignedPod, kDelete),
           pod,
           obj(PodWrapper("other").nodeName("foo")),
           {},
           kNotRegistered},
      });
}

// What the plugin says of its rejections (FilterExplainer), as explain shows them.
TEST(NodeNameExplain, NamesTheNodeThePodAsksFor) {
  testutil::SnapshotHandle h({}, {NodeWrapper("n1").ptr()});
  auto pl = makePlugin(nodeNameFactory(), nullptr, h);
  EXPECT_EQ(testutil::explainAfterFilter(*pl, h.snapshot(),
                                         PodWrapper("p").uid("p").nodeName("other").obj(), "n1"),
            std::vector<std::string>{"pod asks for node other"});
}

}  // namespace
}  // namespace ksched::plugins
