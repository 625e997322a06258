#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <ksched/api/taints.h>

#include "tests/support/api_test_util.h"

namespace ksched::api {
namespace {

using testing::decodeError;
using testing::decodeString;
using ::testing::HasSubstr;

struct TolerationCase {
  std::string name;
  Toleration toleration;
  Taint taint;
  bool tolerates;
};

TEST(TolerationTest, ToleratesTaint) {
  const Taint gpu{"gpu", "true", "NoSchedule", {}};
  const std::vector<TolerationCase> cases = {
      {"equalExact", {"gpu", "Equal", "true", "NoSchedule", {}}, gpu, true},
      {"equalValueMismatch", {"gpu", "Equal", "false", "NoSchedule", {}}, gpu, false},
      {"emptyOperatorIsEqual", {"gpu", "", "true", "NoSchedule", {}}, gpu, true},
      {"emptyOperatorValueMismatch", {"gpu", "", "yes", "NoSchedule", {}}, gpu, false},
      {"existsIgnoresValue", {"gpu", "Exists", "", "NoSchedule", {}}, gpu, true},
      {"existsKeyMismatch", {"cpu", "Exists", "", "NoSchedule", {}}, gpu, false},
      {"emptyKeyExistsToleratesAll", {"", "Exists", "", "", {}}, gpu, true},
      {"emptyKeyExistsWithEffect", {"", "Exists", "", "NoExecute", {}}, gpu, false},
      {"emptyEffectMatchesAll", {"gpu", "Equal", "true", "", {}}, gpu, true},
      {"effectMismatch", {"gpu", "Equal", "true", "NoExecute", {}}, gpu, false},
      {"emptyValueTaint",
       {"dedicated", "Equal", "", "", {}},
       {"dedicated", "", "NoExecute", {}},
       true},
      {"unknownOperator", {"gpu", "Gte", "true", "NoSchedule", {}}, gpu, false},
      {"caseSensitiveOperator", {"gpu", "exists", "", "NoSchedule", {}}, gpu, false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(c.toleration.toleratesTaint(c.taint), c.tolerates);
  }
}

TEST(TolerationTest, FindUntoleratedTaint) {
  const std::vector<Taint> taints = {
      {"soft", "", "PreferNoSchedule", {}},
      {"gpu", "true", "NoSchedule", {}},
      {"maint", "", "NoExecute", {}},
  };
  const std::vector<Toleration> tolerateGpu = {{"gpu", "Exists", "", "", {}}};
  struct Case {
    std::string name;
    std::vector<Toleration> tolerations;
    TaintFilter filter;
    std::string expectedKey;  // empty: all tolerated
  };
  const std::vector<Case> cases = {
      {"noFilterFirstInOrder", {}, {}, "soft"},
      {"doNotScheduleFilterSkipsPrefer", {}, isDoNotScheduleTaint, "gpu"},
      {"skipsTolerated", tolerateGpu, isDoNotScheduleTaint, "maint"},
      {"allTolerated", {{"", "Exists", "", "", {}}}, {}, ""},
      {"filterExcludesAll", {}, [](const Taint&) { return false; }, ""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const Taint* t = findUntoleratedTaint(taints, c.tolerations, c.filter);
    if (c.expectedKey.empty()) {
      EXPECT_EQ(t, nullptr);
    } else {
      ASSERT_NE(t, nullptr);
      EXPECT_EQ(t->key, c.expectedKey);
      EXPECT_GE(t, taints.data());
      EXPECT_LT(t, taints.data() + taints.size());
    }
  }
  EXPECT_TRUE(tolerationsTolerateTaint(tolerateGpu, taints[1]));
  EXPECT_FALSE(tolerationsTolerateTaint(tolerateGpu, taints[2]));
  EXPECT_FALSE(tolerationsTolerateTaint({}, taints[2]));
}

TEST(TolerationTest, DoNotScheduleFilter) {
  EXPECT_TRUE(isDoNotScheduleTaint({"a", "", "NoSchedule", {}}));
  EXPECT_TRUE(isDoNotScheduleTaint({"a", "", "NoExecute", {}}));
  EXPECT_FALSE(isDoNotScheduleTaint({"a", "", "PreferNoSchedule", {}}));
}

TEST(TaintDecodeTest, Decodes) {
  const auto taint = decodeString<Taint>(
      R"({"key": "node.kubernetes.io/unreachable", "effect": "NoExecute",
          "timeAdded": "2026-01-01T00:00:00Z", "extra": 1})");
  EXPECT_EQ(taint, (Taint{"node.kubernetes.io/unreachable", "", "NoExecute",
                          std::string("2026-01-01T00:00:00Z")}));
  const auto tol = decodeString<Toleration>(
      R"({"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300})");
  EXPECT_EQ(tol, (Toleration{"k", "Exists", "", "NoExecute", int64_t{300}}));
  EXPECT_EQ(decodeString<Toleration>("{}"), Toleration{});
}

TEST(TaintDecodeTest, WrongTypesNameTheField) {
  struct Case {
    std::string name;
    std::string json;
    std::string field;
  };
  const std::vector<Case> cases = {
      {"tolerationSeconds", R"({"tolerationSeconds": "300"})", "tolerationSeconds"},
      {"operator", R"({"operator": 1})", "operator"},
      {"effect", R"({"effect": ["NoSchedule"]})", "effect"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_THAT(decodeError<Toleration>(c.json), HasSubstr(c.field + ":"));
  }
  EXPECT_THAT(decodeError<Taint>(R"({"timeAdded": 5})"), HasSubstr("timeAdded:"));
}

}  // namespace
}  // namespace ksched::api
