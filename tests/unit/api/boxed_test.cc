#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>

#include <ksched/api/boxed.h>
#include <ksched/api/pod.h>

namespace ksched::api {
namespace {

TEST(BoxedTest, ReadsAndWritesLikeAnOptional) {
  Boxed<std::string> b;
  EXPECT_FALSE(b);
  EXPECT_FALSE(b.has_value());
  EXPECT_EQ(b, std::nullopt);
  EXPECT_EQ(b.value_or("unset"), "unset");
  EXPECT_THROW((void)b.value(), std::bad_optional_access);
  b = std::string("Never");
  ASSERT_TRUE(b);
  EXPECT_EQ(*b, "Never");
  EXPECT_EQ(b->size(), 5U);
  b.emplace("PreemptLowerPriority");
  EXPECT_EQ(b.value(), "PreemptLowerPriority");
  EXPECT_EQ(b.optional(), std::optional<std::string>("PreemptLowerPriority"));
  b = std::nullopt;
  EXPECT_FALSE(b);
  b = Boxed<std::string>(std::optional<std::string>("x"));
  EXPECT_EQ(*b, "x");
  b.reset();
  EXPECT_EQ(b, Boxed<std::string>());
}

TEST(BoxedTest, CopiesAreDeepAndCompareByValue) {
  Boxed<std::string> a = std::string("a");
  Boxed<std::string> b = a;
  *b = "b";
  EXPECT_EQ(*a, "a");
  EXPECT_FALSE(a == b);
  b = a;
  EXPECT_EQ(a, b);
  Boxed<std::string> c = std::move(b);
  EXPECT_EQ(*c, "a");
  EXPECT_FALSE(a == Boxed<std::string>());
}

TEST(BoxedTest, APodWithoutItsRareFieldsIsSmallAndComparesEqual) {
  // Pod-level resources, affinity, the scheduling group and the status's resources are boxed:
  // a pod without them pays a pointer for each.
  static_assert(sizeof(Pod) <= 1200);
  Pod a;
  Pod b;
  EXPECT_TRUE(sameSchedulingInputs(a, b));
  b.spec.affinity.emplace();
  EXPECT_FALSE(sameSchedulingInputs(a, b));
  a.spec.affinity = b.spec.affinity;
  EXPECT_TRUE(sameSchedulingInputs(a, b));
  b.spec.resources.emplace().requests["cpu"] = Quantity::parse("1");
  EXPECT_FALSE(sameSchedulingInputs(a, b));
}

}  // namespace
}  // namespace ksched::api
