#include <gtest/gtest.h>

#include <ksched/helper/shape_score.h>

namespace ksched::plugins::helper {
namespace {

TEST(BrokenLinearFunctionTest, InterpolatesBetweenPoints) {
  BrokenLinearFunction f({{10, 1}, {15, 2}, {20, 3}, {25, 4}, {30, 5}});
  struct {
    int64_t p;
    int64_t want;
  } cases[] = {{-10, 1}, {0, 1},  {10, 1}, {12, 1}, {13, 1}, {15, 2}, {16, 2},
               {19, 2},  {20, 3}, {27, 4}, {30, 5}, {31, 5}, {100, 5}};
  for (const auto& c : cases) EXPECT_EQ(f(c.p), c.want) << "p=" << c.p;
}

TEST(BrokenLinearFunctionTest, Decreasing) {
  BrokenLinearFunction f({{0, 100}, {100, 0}});
  EXPECT_EQ(f(0), 100);
  EXPECT_EQ(f(25), 75);
  EXPECT_EQ(f(33), 67);
  EXPECT_EQ(f(100), 0);
  EXPECT_EQ(f(150), 0);
}

TEST(BrokenLinearFunctionTest, SinglePointIsConstant) {
  BrokenLinearFunction f({{50, 7}});
  EXPECT_EQ(f(0), 7);
  EXPECT_EQ(f(50), 7);
  EXPECT_EQ(f(100), 7);
}

}  // namespace
}  // namespace ksched::plugins::helper
