// Upstream's TestDeferredPodScheduling_{PreFilter,Filter,Permit,isSchedulableAfterNodeChange,
// isSchedulableAfterNodeAdd}, as tables.
#include "plugins/deferred_pod_scheduling/deferred_pod_scheduling.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include <ksched/api/features.h>

#include "tests/support/plugin_test_util.h"
#include "tests/support/queueing_hint_test_util.h"

namespace ksched::plugins {
namespace {

using testutil::NodeWrapper;
using testutil::PodWrapper;

PodWrapper deferredOn(const std::string& node) {
  return PodWrapper("grower")
      .nodeName(node)
      .req({{"cpu", "300m"}})
      .condition("PodResizePending", "True", "Deferred");
}

std::unique_ptr<Plugin> makeWithGate(bool on) {
  testutil::FakeHandle h;
  features::Gates gates;
  gates.force(features::Feature::kInPlacePodVerticalScalingSchedulerPreemption, on);
  h.setFeatures(gates);
  return makePlugin(deferredPodSchedulingFactory(), nullptr, h);
}

TEST(DeferredPodSchedulingTest, PreFilterNarrowsADeferredPodToItsNodeWithTheGateOnly) {
  struct Case {
    std::string name;
    bool gate;
    api::Pod pod;
    Code want;
  };
  const std::vector<Case> cases = {
      {"deferred, gate on", true, deferredOn("n1").obj(), Code::kSuccess},
      {"deferred, gate off", false, deferredOn("n1").obj(), Code::kSkip},
      {"pending pod", true, PodWrapper("p").req({{"cpu", "1"}}).obj(), Code::kSkip},
      {"resize infeasible", true,
       PodWrapper("p").nodeName("n1").condition("PodResizePending", "True", "Infeasible").obj(),
       Code::kSkip},
      {"running, no resize", true, PodWrapper("p").nodeName("n1").obj(), Code::kSkip},
      // Upstream reads the first PodResizePending condition's reason; its status is ignored.
      {"status False still deferred", true,
       PodWrapper("p").nodeName("n1").condition("PodResizePending", "False", "Deferred").obj(),
       Code::kSuccess},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto pl = makeWithGate(c.gate);
    auto* pre = dynamic_cast<PreFilterPlugin*>(pl.get());
    ASSERT_NE(pre, nullptr);
    CycleState state;
    PreFilterResult result;
    testutil::FakeLister lister;
    Status s = pre->preFilter(state, c.pod, lister, result);
    EXPECT_EQ(s.code(), c.want);
    if (c.want == Code::kSuccess) {
      ASSERT_TRUE(result.nodeNames);
      EXPECT_EQ(*result.nodeNames, (std::set<std::string, std::less<>>{"n1"}));
    }
  }
}

TEST(DeferredPodSchedulingTest, Filter) {
  struct Case {
    std::string name;
    NodeWrapper node;
    Code want;
    std::vector<std::string> reasons;
  };
  const std::vector<Case> cases = {
      {"its node", NodeWrapper("n1"), Code::kSuccess, {}},
      {"another node",
       NodeWrapper("n2"),
       Code::kUnschedulableAndUnresolvable,
       {"pod assigned to different node"}},
      {"its node disables resize preemption",
       NodeWrapper("n1").disableResizePreemption({"example.com/batch"}),
       Code::kUnschedulableAndUnresolvable,
       {"node had resize preemption disabled"}},
  };
  auto pl = makeWithGate(true);
  auto* filter = dynamic_cast<FilterPlugin*>(pl.get());
  ASSERT_NE(filter, nullptr);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    CycleState state;
    Status s = filter->filter(state, deferredOn("n1").obj(), *testutil::makeNodeInfo(c.node));
    EXPECT_EQ(s.code(), c.want);
    EXPECT_EQ(s.reasons(), c.reasons);
  }
  CycleState state;
  EXPECT_TRUE(filter->filter(state, deferredOn("n1").obj(), NodeInfo()).isError())
      << "node not found";
}

TEST(DeferredPodSchedulingTest, PermitParksTheResizeForTheKubelet) {
  auto pl = makeWithGate(true);
  auto* permit = dynamic_cast<PermitPlugin*>(pl.get());
  ASSERT_NE(permit, nullptr);
  CycleState state;
  std::chrono::milliseconds timeout{5};
  Status s = permit->permit(state, deferredOn("n1").obj(), "n1", timeout);
  EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(s.message(), "pod resize fits, waiting for Kubelet actuation");
  EXPECT_EQ(timeout.count(), 0);
}

TEST(DeferredPodSchedulingTest, FiltersResizeDeferredPodsAndSignsOnlyOthers) {
  auto pl = makeWithGate(true);
  EXPECT_TRUE(pl->filtersResizeDeferredPods());
  auto* sign = dynamic_cast<SignPlugin*>(pl.get());
  ASSERT_NE(sign, nullptr);
  EXPECT_FALSE(sign->signPod(deferredOn("n1").obj()));
  EXPECT_TRUE(sign->signPod(PodWrapper("p").obj()));
}

TEST(DeferredPodSchedulingTest, QueueingHints) {
  using testutil::event;
  using testutil::kNotRegistered;
  using testutil::kWantQueue;
  using testutil::kWantSkip;
  using testutil::obj;
  constexpr auto kNode = EventResource::kNode;
  auto pl = makeWithGate(true);
  auto* ext = dynamic_cast<EnqueueExtensions*>(pl.get());
  ASSERT_NE(ext, nullptr);
  const api::Pod pod = deferredOn("n1").obj();
  const auto enabled = NodeWrapper("n1");
  const auto disabled = NodeWrapper("n1").disableResizePreemption({"example.com/batch"});
  testutil::expectHints(
      *ext,
      {
          {"its node added", event(kNode, kAdd), pod, {}, obj(enabled), kWantQueue},
          {"its node added, preemption disabled",
           event(kNode, kAdd),
           pod,
           {},
           obj(disabled),
           kWantSkip},
          {"another node added", event(kNode, kAdd), pod, {}, obj(NodeWrapper("n2")), kWantSkip},
          {"its node re-enables", event(kNode, kUpdateNodePreemptionPolicy), pod, obj(disabled),
           obj(enabled), kWantQueue},
          {"its node disables", event(kNode, kUpdateNodePreemptionPolicy), pod, obj(enabled),
           obj(disabled), kWantSkip},
          {"another node re-enables", event(kNode, kUpdateNodePreemptionPolicy), pod,
           obj(NodeWrapper("n2").disableResizePreemption({"x"})), obj(NodeWrapper("n2")),
           kWantSkip},
          {"its node's labels", event(kNode, kUpdateNodeLabel), pod, obj(enabled),
           obj(NodeWrapper("n1").label("k", "v")), kNotRegistered},
      });
}

// The event a node's policy change makes, named as upstream's.
TEST(DeferredPodSchedulingTest, NodePolicyChangeIsItsOwnEvent) {
  const auto events = nodeSchedulingPropertiesChange(
      NodeWrapper("n1").obj(), NodeWrapper("n1").disableResizePreemption({"a"}).obj());
  ASSERT_EQ(events.size(), size_t{1});
  EXPECT_EQ(events[0].actions, kUpdateNodePreemptionPolicy);
  EXPECT_EQ(events[0].label(), "NodeUpdateNodePreemptionPolicy");
}

}  // namespace
}  // namespace ksched::plugins
