#include "plugins/priority_sort/priority_sort.h"

#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string>

#include "tests/support/plugin_test_util.h"

namespace ksched::plugins {
namespace {

using std::chrono::seconds;
using testutil::PodWrapper;

QueuedPodInfo queued(std::optional<int32_t> priority, int ageSeconds) {
  PodWrapper w;
  if (priority) w.priority(*priority);
  QueuedPodInfo q;
  q.podInfo = w.info();
  q.timestamp = std::chrono::steady_clock::time_point{} + seconds(1000 - ageSeconds);
  return q;
}

struct LessCase {
  std::string name;
  std::optional<int32_t> p1;
  int age1;
  std::optional<int32_t> p2;
  int age2;
  bool want;
};

class PrioritySortTest : public ::testing::TestWithParam<LessCase> {};

TEST_P(PrioritySortTest, Less) {
  const LessCase& c = GetParam();
  PrioritySort pl;
  EXPECT_EQ(pl.less(queued(c.p1, c.age1), queued(c.p2, c.age2)), c.want);
}

INSTANTIATE_TEST_SUITE_P(Table, PrioritySortTest,
                         ::testing::Values(LessCase{"p1HigherPriority", 100, 0, 50, 10, true},
                                           LessCase{"p2HigherPriority", 50, 10, 100, 0, false},
                                           LessCase{"equalPriorityP1Older", 100, 10, 100, 0, true},
                                           LessCase{"equalPriorityP2Older", 100, 0, 100, 10, false},
                                           LessCase{"sameTimestamp", 100, 5, 100, 5, false},
                                           LessCase{"unsetIsZero", std::nullopt, 10, 0, 0, true},
                                           LessCase{"negativeBelowUnset", -1, 10, std::nullopt, 0,
                                                    false}),
                         [](const auto& info) { return info.param.name; });

TEST(PrioritySortTest, FactoryAndName) {
  testutil::FakeHandle h;
  auto pl = makePlugin(prioritySortFactory(), nullptr, h);
  ASSERT_NE(pl, nullptr);
  EXPECT_EQ(pl->name(), "PrioritySort");
  EXPECT_NE(dynamic_cast<QueueSortPlugin*>(pl.get()), nullptr);
}

}  // namespace
}  // namespace ksched::plugins
