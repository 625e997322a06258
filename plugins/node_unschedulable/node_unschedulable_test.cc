#include "plugins/node_unschedulable/node_unschedulable.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/plugin_test_util.h"
#include "tests/support/queueing_hint_test_util.h"

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

TEST(NodeUnschedulableTest, QueueingHints) {
  using testutil::event;
  using testutil::kNotRegistered;
  using testutil::kWantQueue;
  using testutil::kWantSkip;
  using testutil::obj;
  constexpr auto kNode = EventResource::kNode;
  constexpr auto kUnscheduled = EventResource::kUnscheduledPod;
  const api::Pod pod = PodWrapper("pod").obj();
  const auto schedulable = NodeWrapper("n1");
  const auto cordoned = NodeWrapper("n1").unschedulable();
  const auto tolerating =
      PodWrapper("pod").toleration("node.kubernetes.io/unschedulable", "Exists", "", "NoSchedule");

  testutil::FakeHandle h;
  auto pl = makePlugin(nodeUnschedulableFactory(), nullptr, h);
  EXPECT_EQ(pl->name(), "NodeUnschedulable");
  testutil::expectHints(
      dynamic_cast<EnqueueExtensions&>(*pl),
      {
          {"schedulable node added", event(kNode, kAdd), pod, {}, obj(schedulable), kWantQueue},
          {"unschedulable node added", event(kNode, kAdd), pod, {}, obj(cordoned), kWantSkip},
          {"node uncordoned", event(kNode, kUpdateNodeTaint), pod, obj(cordoned), obj(schedulable),
           kWantQueue},
          {"taint added to a schedulable node", event(kNode, kUpdateNodeTaint), pod,
           obj(schedulable), obj(NodeWrapper("n1").taint("k", "v", "NoSchedule")), kWantSkip},
          {"taint changed on an unschedulable node", event(kNode, kUpdateNodeTaint), pod,
           obj(cordoned), obj(NodeWrapper("n1").unschedulable().taint("k", "v", "NoSchedule")),
           kWantSkip},
          {"node label update", event(kNode, kUpdateNodeLabel), pod, obj(cordoned),
           obj(schedulable), kNotRegistered},
          {"node other update", event(kNode, kUpdateOther), pod, obj(cordoned), obj(schedulable),
           kNotRegistered},
          {"the pod now tolerates unschedulable", event(kUnscheduled, kUpdatePodTolerations), pod,
           obj(pod), obj(tolerating), kWantQueue},
          {"the pod got another toleration", event(kUnscheduled, kUpdatePodTolerations), pod,
           obj(pod), obj(PodWrapper("pod").toleration("k", "Exists", "", "")), kWantSkip},
          {"another pod now tolerates unschedulable", event(kUnscheduled, kUpdatePodTolerations),
           pod, obj(PodWrapper("other")),
           obj(PodWrapper("other").toleration("node.kubernetes.io/unschedulable", "Exists", "",
                                              "NoSchedule")),
           kWantSkip},
          {"the pod's labels changed", event(kUnscheduled, kUpdatePodLabel), pod, obj(pod),
           obj(pod), kNotRegistered},
      });
}

// What the plugin says of its rejections (FilterExplainer), as explain shows them.
TEST(NodeUnschedulableExplain, SaysTheNodeIsCordoned) {
  testutil::SnapshotHandle h({}, {NodeWrapper("n1").unschedulable().ptr()});
  auto pl = makePlugin(nodeUnschedulableFactory(), nullptr, h);
  EXPECT_EQ(testutil::explainAfterFilter(*pl, h.snapshot(), PodWrapper("p").uid("p").obj(), "n1"),
            std::vector<std::string>{"node is cordoned (spec.unschedulable)"});
}

}  // namespace
}  // namespace ksched::plugins
