#include "plugins/scheduling_gates/scheduling_gates.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/plugin_test_util.h"
#include "tests/support/queueing_hint_test_util.h"

namespace ksched::plugins {
namespace {

struct GatesCase {
  std::string name;
  std::vector<std::string> gates;
  Code wantCode;
  std::vector<std::string> wantReasons;
};

class SchedulingGatesTest : public ::testing::TestWithParam<GatesCase> {};

TEST_P(SchedulingGatesTest, PreEnqueue) {
  const GatesCase& c = GetParam();
  SchedulingGates pl;
  Status s = pl.preEnqueue(testutil::PodWrapper().schedulingGates(c.gates).obj());
  EXPECT_EQ(s.code(), c.wantCode);
  EXPECT_EQ(s.reasons(), c.wantReasons);
}

INSTANTIATE_TEST_SUITE_P(Table, SchedulingGatesTest,
                         ::testing::Values(GatesCase{"noGates", {}, Code::kSuccess, {}},
                                           GatesCase{"oneGate",
                                                     {"foo"},
                                                     Code::kUnschedulableAndUnresolvable,
                                                     {"waiting for scheduling gates: [foo]"}},
                                           GatesCase{"twoGates",
                                                     {"foo", "bar"},
                                                     Code::kUnschedulableAndUnresolvable,
                                                     {"waiting for scheduling gates: [foo bar]"}}),
                         [](const auto& info) { return info.param.name; });

TEST(SchedulingGatesTest, QueueingHints) {
  using testutil::event;
  using testutil::kNotRegistered;
  using testutil::kWantQueue;
  using testutil::kWantSkip;
  using testutil::obj;
  using testutil::PodWrapper;
  constexpr auto kUnscheduled = EventResource::kUnscheduledPod;
  const api::Pod pod = PodWrapper("pod").schedulingGates({"foo"}).obj();
  SchedulingGates pl;
  testutil::expectHints(
      pl,
      {
          {"the pod's gates removed", event(kUnscheduled, kUpdatePodSchedulingGatesEliminated), pod,
           obj(pod), obj(PodWrapper("pod")), kWantQueue},
          {"another pod's gates removed", event(kUnscheduled, kUpdatePodSchedulingGatesEliminated),
           pod, obj(PodWrapper("other").schedulingGates({"foo"})), obj(PodWrapper("other")),
           kWantSkip},
          {"one of the pod's gates removed", event(kUnscheduled, kUpdateOther), pod,
           obj(PodWrapper("pod").schedulingGates({"foo", "bar"})), obj(pod), kNotRegistered},
          {"the pod's tolerations changed", event(kUnscheduled, kUpdatePodTolerations), pod,
           obj(pod),
           obj(PodWrapper("pod").schedulingGates({"foo"}).toleration("k", "Exists", "", "")),
           kNotRegistered},
          {"node added",
           event(EventResource::kNode, kAdd),
           pod,
           {},
           obj(testutil::NodeWrapper("n1")),
           kNotRegistered},
      });
}

TEST(SchedulingGatesTest, Factory) {
  testutil::FakeHandle h;
  auto pl = makePlugin(schedulingGatesFactory(), nullptr, h);
  EXPECT_EQ(pl->name(), "SchedulingGates");
  EXPECT_NE(dynamic_cast<PreEnqueuePlugin*>(pl.get()), nullptr);
}

}  // namespace
}  // namespace ksched::plugins
