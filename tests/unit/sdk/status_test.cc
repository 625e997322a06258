#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include <ksched/status.h>

namespace ksched {
namespace {

TEST(StatusTest, ASuccessIsACodeAndAPointerAndHasNoStrings) {
  static_assert(sizeof(Status) <= 2 * sizeof(void*));
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_TRUE(s.reasons().empty());
  EXPECT_TRUE(s.details().empty());
  EXPECT_EQ(s.plugin(), "");
  EXPECT_EQ(s.message(), "");
  EXPECT_EQ(s.httpCode(), 0);
}

TEST(StatusTest, ReasonsDetailsAndPluginAreKept) {
  Status s = Status(Code::kUnschedulable, {"Insufficient cpu", "Insufficient memory"})
                 .withPlugin("NodeResourcesFit")
                 .withDetails({"needs 2 cpu, 1 free"});
  EXPECT_TRUE(s.isRejected());
  EXPECT_EQ(s.message(), "Insufficient cpu, Insufficient memory");
  EXPECT_EQ(s.plugin(), "NodeResourcesFit");
  EXPECT_EQ(s.details(), std::vector<std::string>{"needs 2 cpu, 1 free"});
}

TEST(StatusTest, ACopyIsIndependentOfItsSource) {
  Status a = Status::unschedulable("node(s) were unschedulable").withHttpCode(409);
  Status b = a;
  b.withPlugin("NodeUnschedulable");
  EXPECT_EQ(a.plugin(), "");
  EXPECT_EQ(b.plugin(), "NodeUnschedulable");
  EXPECT_EQ(b.message(), "node(s) were unschedulable");
  EXPECT_EQ(b.httpCode(), 409);
  Status c;
  c = b;
  EXPECT_EQ(c.plugin(), "NodeUnschedulable");
  c = Status{};
  EXPECT_TRUE(c.ok());
  EXPECT_EQ(c.plugin(), "");
  EXPECT_EQ(b.message(), "node(s) were unschedulable");
}

TEST(StatusTest, AMoveKeepsTheCodeAndTakesTheStrings) {
  Status a = Status::error("boom").withPlugin("X");
  Status b = std::move(a);
  EXPECT_TRUE(b.isError());
  EXPECT_EQ(b.message(), "boom");
  EXPECT_EQ(b.plugin(), "X");
}

TEST(StatusTest, ACodeWithoutReasonsAllocatesNothingAndStillTakesAPlugin) {
  Status s = Status::skip();
  EXPECT_TRUE(s.isSkip());
  EXPECT_TRUE(s.reasons().empty());
  s.withPlugin("");
  EXPECT_EQ(s.plugin(), "");
  s.withPlugin("VolumeBinding");
  EXPECT_EQ(s.plugin(), "VolumeBinding");
  s.withPlugin("");
  EXPECT_EQ(s.plugin(), "");
}

}  // namespace
}  // namespace ksched
