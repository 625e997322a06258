#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include <ksched/api/policy.h>

#include "tests/support/api_test_util.h"

namespace ksched::api {
namespace {

using testing::decodeError;
using testing::decodeString;
using ::testing::HasSubstr;

TEST(IntOrStringTest, Decodes) {
  struct Case {
    std::string json;
    IntOrString expected;
  };
  const std::vector<Case> cases = {
      {"3", IntOrString::fromInt(3)},
      {"0", IntOrString::fromInt(0)},
      {"-2", IntOrString::fromInt(-2)},
      {"2147483647", IntOrString::fromInt(2147483647)},
      {R"("25%")", IntOrString::fromString("25%")},
      {R"("3")", IntOrString::fromString("3")},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.json);
    const auto v = decodeString<IntOrString>(c.json);
    EXPECT_EQ(v, c.expected);
    EXPECT_EQ(nlohmann::json(v), nlohmann::json::parse(c.json));
  }
}

TEST(IntOrStringTest, RejectsOtherTypes) {
  struct Case {
    std::string json;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"true", "type must be an integer or a string, but is boolean"},
      {"[1]", "type must be an integer or a string, but is array"},
      {"1.5", "type must be an integer or a string, but is number"},
      {"2147483648", "does not fit an int32"},
      {"-2147483649", "does not fit an int32"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.json);
    EXPECT_THAT(decodeError<IntOrString>(c.json), HasSubstr(c.message));
  }
  EXPECT_THAT(decodeError<PodDisruptionBudget>(R"({"spec": {"minAvailable": true}})"),
              HasSubstr("spec.minAvailable: [json.exception.type_error.302]"));
}

TEST(IntOrStringTest, ScaledValue) {
  struct Case {
    std::string name;
    IntOrString value;
    int64_t total;
    bool roundUp;
    std::optional<int64_t> expected;
  };
  const std::vector<Case> cases = {
      {"intIgnoresTotal", IntOrString::fromInt(3), 10, true, 3},
      {"percentRoundsUp", IntOrString::fromString("50%"), 5, true, 3},
      {"percentRoundsDown", IntOrString::fromString("50%"), 5, false, 2},
      {"exactPercent", IntOrString::fromString("20%"), 10, true, 2},
      {"zeroPercent", IntOrString::fromString("0%"), 7, true, 0},
      {"hundredPercent", IntOrString::fromString("100%"), 7, false, 7},
      {"smallRoundsUpToOne", IntOrString::fromString("1%"), 3, true, 1},
      {"smallRoundsDownToZero", IntOrString::fromString("1%"), 3, false, 0},
      {"plusSign", IntOrString::fromString("+10%"), 10, true, 1},
      {"negativeRoundsUpTowardZero", IntOrString::fromString("-50%"), 3, true, -1},
      {"negativeRoundsDownAway", IntOrString::fromString("-50%"), 3, false, -2},
      {"noPercentSign", IntOrString::fromString("50"), 10, true, std::nullopt},
      {"notANumber", IntOrString::fromString("abc%"), 10, true, std::nullopt},
      {"emptyPercent", IntOrString::fromString("%"), 10, true, std::nullopt},
      {"spaces", IntOrString::fromString(" 5%"), 10, true, std::nullopt},
      {"overflow", IntOrString::fromString("9223372036854775807%"), 10, true, std::nullopt},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(scaledValueFromIntOrPercent(c.value, c.total, c.roundUp), c.expected);
  }
}

TEST(PodDisruptionBudgetTest, Decodes) {
  const auto pdb = decodeString<PodDisruptionBudget>(R"({
    "metadata": {"name": "web-pdb", "namespace": "prod", "generation": 2},
    "spec": {"minAvailable": "60%", "selector": {"matchLabels": {"app": "web"}}},
    "status": {"observedGeneration": 2, "disruptionsAllowed": 1, "currentHealthy": 4,
               "desiredHealthy": 3, "expectedPods": 5,
               "disruptedPods": {"web-1": "2026-01-01T00:00:00Z"}}})");
  EXPECT_EQ(pdb.spec.minAvailable, IntOrString::fromString("60%"));
  EXPECT_FALSE(pdb.spec.maxUnavailable.has_value());
  EXPECT_TRUE(Selector::compile(pdb.spec.selector).matches({{"app", "web"}}));
  EXPECT_EQ(pdb.status.observedGeneration, 2);
  EXPECT_EQ(pdb.status.disruptionsAllowed, 1);
  EXPECT_EQ(pdb.status.currentHealthy, 4);
  EXPECT_EQ(pdb.status.desiredHealthy, 3);
  EXPECT_EQ(pdb.status.expectedPods, 5);
  EXPECT_EQ(pdb.status.disruptedPods.at("web-1"), "2026-01-01T00:00:00Z");

  const auto maxU = decodeString<PodDisruptionBudget>(R"({"spec": {"maxUnavailable": 1}})");
  EXPECT_EQ(maxU.spec.maxUnavailable, IntOrString::fromInt(1));
  EXPECT_FALSE(maxU.spec.selector.has_value());
}

TEST(PriorityClassTest, Decodes) {
  struct Case {
    std::string name;
    std::string json;
    int32_t value;
    bool globalDefault;
    std::optional<std::string> preemptionPolicy;
  };
  const std::vector<Case> cases = {
      {"full",
       R"({"metadata": {"name": "high"}, "value": 1000000, "globalDefault": true,
           "preemptionPolicy": "Never", "description": "x"})",
       1000000, true, std::string("Never")},
      {"defaults", R"({"metadata": {"name": "low"}})", 0, false, std::nullopt},
      {"negative", R"({"value": -10})", -10, false, std::nullopt},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const auto pc = decodeString<PriorityClass>(c.json);
    EXPECT_EQ(pc.value, c.value);
    EXPECT_EQ(pc.globalDefault, c.globalDefault);
    EXPECT_EQ(pc.preemptionPolicy, c.preemptionPolicy);
  }
  EXPECT_THAT(decodeError<PriorityClass>(R"({"value": "high"})"), HasSubstr("value:"));
  EXPECT_THAT(decodeError<PriorityClass>(R"({"globalDefault": 1})"), HasSubstr("globalDefault:"));
  EXPECT_THAT(decodeError<PodDisruptionBudget>(R"({"status": {"disruptedPods": ["a"]}})"),
              HasSubstr("status.disruptedPods:"));
}

}  // namespace
}  // namespace ksched::api
