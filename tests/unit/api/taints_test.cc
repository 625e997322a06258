#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <ksched/api/features.h>
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
    EXPECT_EQ(c.toleration.toleratesTaint(c.taint, false), c.tolerates);
  }
}

// Upstream's TestTolerationToleratesTaint (the Gt/Lt cases) and TestCompareNumericValues
// (k8s.io/api core/v1 toleration_test.go, KEP 5471): Gt tolerates a taint value above the
// toleration's, Lt one below; both sides must be int64 in canonical form.
struct ComparisonCase {
  std::string name;
  std::string op;
  std::string tolerationValue;
  std::string taintValue;
  bool tolerates;  // with the gate on; with it off, never
};

const std::vector<ComparisonCase> kComparisonCases = {
    // toleration_test.go TestTolerationToleratesTaint.
    {"gtTaintBelow", "Gt", "950", "800", false},
    {"gtTaintAbove", "Gt", "750", "950", true},
    {"ltTaintAbove", "Lt", "800", "950", false},
    {"ltTaintBelow", "Lt", "950", "800", true},
    {"gtEqual", "Gt", "950", "950", false},
    {"gtTaintNotNumeric", "Gt", "950", "high", false},
    {"gtNegativeBelow", "Gt", "-100", "-200", false},
    {"gtLargeInt64", "Gt", "9223372036854775806", "100", false},
    // TestCompareNumericValues.
    {"gtGreater", "Gt", "100", "200", true},
    {"gtLess", "Gt", "200", "100", false},
    {"gtSame", "Gt", "100", "100", false},
    {"gtNegativeGreater", "Gt", "-100", "-50", true},
    {"gtNegativeLess", "Gt", "-50", "-100", false},
    {"gtZeroAndPositive", "Gt", "0", "1", true},
    {"gtInt64Neighbours", "Gt", "9223372036854775806", "9223372036854775807", true},
    {"ltLess", "Lt", "200", "100", true},
    {"ltGreater", "Lt", "100", "200", false},
    {"ltSame", "Lt", "100", "100", false},
    {"ltNegativeLess", "Lt", "-50", "-100", true},
    {"ltNegativeGreater", "Lt", "-100", "-50", false},
    {"ltZeroAndNegative", "Lt", "0", "-1", true},
    {"tolerationNotNumeric", "Gt", "abc", "100", false},
    {"tolerationEmpty", "Gt", "", "100", false},
    {"tolerationLeadingZero", "Gt", "0100", "200", false},
    {"tolerationPlusSign", "Gt", "+100", "200", false},
    {"tolerationFraction", "Gt", "100.5", "200", false},
    {"tolerationMinusOnly", "Gt", "-", "100", false},
    {"taintNotNumeric", "Gt", "100", "xyz", false},
    {"taintEmpty", "Gt", "100", "", false},
    {"taintLeadingZero", "Gt", "100", "0200", false},
    {"taintPlusSign", "Lt", "100", "+200", false},
    {"taintSpaces", "Lt", "100", " 200 ", false},
    {"gtBothZero", "Gt", "0", "0", false},
    {"ltBothZero", "Lt", "0", "0", false},
    {"gtMaxInt64Taint", "Gt", "0", "9223372036854775807", true},
    {"ltMinInt64Taint", "Lt", "0", "-9223372036854775808", true},
    // Beyond upstream's tables: out of int64, "-0", a lowercase operator.
    {"taintAboveInt64", "Gt", "0", "9223372036854775808", false},
    {"tolerationNegativeZero", "Lt", "-0", "-5", false},
    {"lowercaseOperator", "gt", "100", "200", false},
};

TEST(TolerationTest, ComparisonOperatorsWithTheGateOn) {
  // The TaintTolerationComparisonOperators gate, on.
  constexpr bool kGateOn = true;
  for (const auto& c : kComparisonCases) {
    SCOPED_TRACE(c.name);
    const Toleration t{"node.kubernetes.io/sla", c.op, c.tolerationValue, "NoSchedule", {}};
    EXPECT_EQ(t.toleratesTaint({"node.kubernetes.io/sla", c.taintValue, "NoSchedule", {}}, kGateOn),
              c.tolerates);
    // Key and effect are matched first, as for every operator.
    EXPECT_FALSE(t.toleratesTaint({"other", c.taintValue, "NoSchedule", {}}, kGateOn));
    EXPECT_FALSE(
        t.toleratesTaint({"node.kubernetes.io/sla", c.taintValue, "NoExecute", {}}, kGateOn));
  }
}

TEST(TolerationTest, ComparisonOperatorsWithTheGateOffTolerateNothing) {
  // The TaintTolerationComparisonOperators gate, off.
  constexpr bool kGateOff = false;
  ASSERT_FALSE(features::spec(features::Feature::kTaintTolerationComparisonOperators).defaultValue);
  for (const auto& c : kComparisonCases) {
    SCOPED_TRACE(c.name);
    const Toleration t{"node.kubernetes.io/sla", c.op, c.tolerationValue, "NoSchedule", {}};
    EXPECT_FALSE(
        t.toleratesTaint({"node.kubernetes.io/sla", c.taintValue, "NoSchedule", {}}, kGateOff));
  }
  // The other operators do not depend on the gate.
  EXPECT_TRUE((Toleration{"k", "Equal", "800", "", {}})
                  .toleratesTaint({"k", "800", "NoSchedule", {}}, kGateOff));
  EXPECT_TRUE((Toleration{"k", "Exists", "", "", {}})
                  .toleratesTaint({"k", "800", "NoSchedule", {}}, kGateOff));
}

TEST(TolerationTest, ComparisonAppliesToEveryEffect) {
  // The TaintTolerationComparisonOperators gate, on.
  constexpr bool kGateOn = true;
  const Toleration anyEffect{"sla", "Gt", "900", "", {}};
  for (const char* effect : {"NoSchedule", "PreferNoSchedule", "NoExecute"}) {
    SCOPED_TRACE(effect);
    EXPECT_TRUE(anyEffect.toleratesTaint({"sla", "950", effect, {}}, kGateOn));
    EXPECT_FALSE(anyEffect.toleratesTaint({"sla", "850", effect, {}}, kGateOn));
  }
  // An empty key with Gt compares with every taint's value.
  EXPECT_TRUE(
      (Toleration{"", "Gt", "5", "", {}}).toleratesTaint({"a", "6", "NoSchedule", {}}, kGateOn));
}

TEST(TolerationTest, ParseTolerationInteger) {
  EXPECT_EQ(parseTolerationInteger("0"), 0);
  EXPECT_EQ(parseTolerationInteger("16"), 16);
  EXPECT_EQ(parseTolerationInteger("-3"), -3);
  EXPECT_EQ(parseTolerationInteger("-9223372036854775808"), INT64_MIN);
  for (const char* bad : {"", "-", "+1", "01", "-0", "-01", "1.0", "1e3", " 1", "1 ", "0x10",
                          "9223372036854775808", "1_000"}) {
    SCOPED_TRACE(bad);
    EXPECT_FALSE(parseTolerationInteger(bad).has_value());
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
    const Taint* t = findUntoleratedTaint(taints, c.tolerations, false, c.filter);
    if (c.expectedKey.empty()) {
      EXPECT_EQ(t, nullptr);
    } else {
      ASSERT_NE(t, nullptr);
      EXPECT_EQ(t->key, c.expectedKey);
      EXPECT_GE(t, taints.data());
      EXPECT_LT(t, taints.data() + taints.size());
    }
  }
  EXPECT_TRUE(tolerationsTolerateTaint(tolerateGpu, taints[1], false));
  EXPECT_FALSE(tolerationsTolerateTaint(tolerateGpu, taints[2], false));
  EXPECT_FALSE(tolerationsTolerateTaint({}, taints[2], false));
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
