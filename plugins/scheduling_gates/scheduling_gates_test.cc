#include "plugins/scheduling_gates/scheduling_gates.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "plugins/testing/plugin_test_util.h"

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

TEST(SchedulingGatesTest, RegistersGateRemoval) {
  SchedulingGates pl;
  auto events = pl.eventsToRegister();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_TRUE(
      events[0].event.matches({EventResource::kPod, kUpdatePodSchedulingGatesEliminated, ""}));
  EXPECT_FALSE(events[0].event.matches(events::kNodeAdd));
}

TEST(SchedulingGatesTest, Factory) {
  testutil::FakeHandle h;
  auto pl = newSchedulingGates(nullptr, h);
  EXPECT_EQ(pl->name(), "SchedulingGates");
  EXPECT_NE(dynamic_cast<PreEnqueuePlugin*>(pl.get()), nullptr);
}

}  // namespace
}  // namespace ksched::plugins
