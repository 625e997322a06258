#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include <ksched/api/node.h>
#include <ksched/api/selectors.h>

#include "tests/support/api_test_util.h"

namespace ksched::api {
namespace {

using testing::decodeError;
using testing::decodeString;
using ::testing::HasSubstr;

// "null" decodes to a nil selector.
std::optional<LabelSelector> selectorFrom(const std::string& json) {
  auto j = nlohmann::json::parse(json);
  if (j.is_null()) return std::nullopt;
  return decode<LabelSelector>(j);
}

struct LabelCase {
  std::string name;
  std::string selector;
  Labels labels;
  bool matches;
};

TEST(LabelSelectorTest, Matches) {
  const std::vector<LabelCase> cases = {
      {"nilMatchesNothing", "null", {{"app", "web"}}, false},
      {"nilMatchesNothingEvenEmpty", "null", {}, false},
      {"emptyMatchesEverything", "{}", {{"app", "web"}}, true},
      {"emptyMatchesUnlabeled", "{}", {}, true},
      {"emptyListsMatchEverything", R"({"matchLabels": {}, "matchExpressions": []})", {}, true},
      {"matchLabelsHit", R"({"matchLabels": {"app": "web"}})", {{"app", "web"}, {"x", "y"}}, true},
      {"matchLabelsWrongValue", R"({"matchLabels": {"app": "web"}})", {{"app", "db"}}, false},
      {"matchLabelsMissing", R"({"matchLabels": {"app": "web"}})", {}, false},
      {"matchLabelsAllRequired",
       R"({"matchLabels": {"app": "web", "tier": "fe"}})",
       {{"app", "web"}},
       false},
      {"inHit",
       R"({"matchExpressions": [{"key": "env", "operator": "In", "values": ["a", "b"]}]})",
       {{"env", "b"}},
       true},
      {"inMiss",
       R"({"matchExpressions": [{"key": "env", "operator": "In", "values": ["a", "b"]}]})",
       {{"env", "c"}},
       false},
      {"inAbsent",
       R"({"matchExpressions": [{"key": "env", "operator": "In", "values": ["a"]}]})",
       {},
       false},
      {"notInAbsent",
       R"({"matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["a"]}]})",
       {},
       true},
      {"notInOther",
       R"({"matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["a"]}]})",
       {{"env", "b"}},
       true},
      {"notInHit",
       R"({"matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["a"]}]})",
       {{"env", "a"}},
       false},
      {"exists",
       R"({"matchExpressions": [{"key": "gpu", "operator": "Exists"}]})",
       {{"gpu", ""}},
       true},
      {"existsMissing",
       R"({"matchExpressions": [{"key": "gpu", "operator": "Exists"}]})",
       {},
       false},
      {"doesNotExist",
       R"({"matchExpressions": [{"key": "gpu", "operator": "DoesNotExist"}]})",
       {{"cpu", "x"}},
       true},
      {"doesNotExistPresent",
       R"({"matchExpressions": [{"key": "gpu", "operator": "DoesNotExist"}]})",
       {{"gpu", "1"}},
       false},
      {"labelsAndExpressionsAnded",
       R"({"matchLabels": {"app": "web"},
           "matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["prod"]}]})",
       {{"app", "web"}, {"env", "prod"}},
       false},
      {"labelsAndExpressionsBothHold",
       R"({"matchLabels": {"app": "web"},
           "matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["prod"]}]})",
       {{"app", "web"}, {"env", "dev"}},
       true},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const Selector s = Selector::compile(selectorFrom(c.selector));
    EXPECT_EQ(s.matches(c.labels), c.matches);
  }
}

TEST(LabelSelectorTest, DecodeErrors) {
  struct Case {
    std::string name;
    std::string json;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"unknownOperator", R"({"matchExpressions": [{"key": "a", "operator": "Foo"}]})",
       "matchExpressions.operator: unknown label selector operator \"Foo\""},
      {"missingOperator", R"({"matchExpressions": [{"key": "a"}]})",
       "unknown label selector operator \"\""},
      {"gtNotAllowed", R"({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]})",
       "operator Gt is not allowed in a label selector"},
      {"inWithoutValues", R"({"matchExpressions": [{"key": "a", "operator": "In"}]})",
       "matchExpressions.values: key \"a\": operator In needs at least one value"},
      {"notInEmptyValues",
       R"({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": []}]})",
       "operator NotIn needs at least one value"},
      {"existsWithValues",
       R"({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]})",
       "operator Exists takes no values"},
      {"matchLabelsWrongType", R"({"matchLabels": ["app"]})", "matchLabels"},
      {"matchLabelValueWrongType", R"({"matchLabels": {"app": 1}})", "matchLabels"},
      {"valuesWrongType",
       R"({"matchExpressions": [{"key": "a", "operator": "In", "values": "x"}]})",
       "matchExpressions.values"},
      {"operatorWrongType", R"({"matchExpressions": [{"key": "a", "operator": 3}]})",
       "matchExpressions.operator"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_THAT(decodeError<LabelSelector>(c.json), HasSubstr(c.message));
  }
}

TEST(LabelSelectorTest, InvalidSelectorBuiltInCodeCompilesToNothing) {
  LabelSelector s;
  s.matchExpressions.push_back({"a", SelectorOperator::kIn, {}});
  EXPECT_EQ(labelSelectorError(s), "key \"a\": operator In needs at least one value");
  EXPECT_TRUE(Selector::compile(s).isNothing());
  EXPECT_FALSE(Selector::compile(s).matches({{"a", "x"}}));

  LabelSelector gt;
  gt.matchExpressions.push_back({"a", SelectorOperator::kGt, {"1"}});
  EXPECT_THAT(labelSelectorError(gt), HasSubstr("not allowed"));
  EXPECT_TRUE(Selector::compile(gt).isNothing());
  EXPECT_EQ(labelSelectorError(LabelSelector{{{"a", "b"}}, {}}), "");
}

TEST(LabelSelectorTest, EncodesBack) {
  const auto s = decodeString<LabelSelector>(
      R"({"matchLabels": {"app": "web"},
          "matchExpressions": [{"key": "env", "operator": "In", "values": ["a"]},
                               {"key": "gpu", "operator": "DoesNotExist"}]})");
  const nlohmann::json j = s;
  EXPECT_EQ(j, nlohmann::json::parse(
                   R"({"matchLabels": {"app": "web"},
                       "matchExpressions": [{"key": "env", "operator": "In", "values": ["a"]},
                                            {"key": "gpu", "operator": "DoesNotExist"}]})"));
  EXPECT_EQ(decode<LabelSelector>(j), s);
}

TEST(SelectorTest, FactoriesAndSets) {
  EXPECT_TRUE(Selector().isNothing());
  EXPECT_FALSE(Selector().matches({}));
  EXPECT_TRUE(Selector::everything().isEverything());
  EXPECT_TRUE(Selector::everything().matches({{"a", "b"}}));
  EXPECT_TRUE(Selector::fromSet({}).isEverything());
  const Selector s = Selector::fromSet({{"app", "web"}, {"tier", "fe"}});
  EXPECT_TRUE(s.matches({{"app", "web"}, {"tier", "fe"}, {"x", "y"}}));
  EXPECT_FALSE(s.matches({{"app", "web"}}));
  EXPECT_FALSE(s.isEverything());
}

TEST(SelectorTest, AddRequirements) {
  struct Case {
    std::string name;
    Labels labels;
    bool matches;
  };
  Selector s = Selector::everything();
  s.add("zone", SelectorOperator::kIn, {"b", "a", "a"})
      .add("cores", SelectorOperator::kGt, {"4"})
      .add("cores", SelectorOperator::kLt, {"+16"})
      .add("legacy", SelectorOperator::kDoesNotExist);
  EXPECT_EQ(s.toString(), "cores>4,cores<+16,!legacy,zone in (a,b)");
  const std::vector<Case> cases = {
      {"allHold", {{"zone", "a"}, {"cores", "8"}}, true},
      {"gtBoundaryExclusive", {{"zone", "a"}, {"cores", "4"}}, false},
      {"ltBoundaryExclusive", {{"zone", "a"}, {"cores", "16"}}, false},
      {"nonIntegerLabel", {{"zone", "a"}, {"cores", "eight"}}, false},
      {"missingNumericLabel", {{"zone", "a"}}, false},
      {"forbiddenLabel", {{"zone", "b"}, {"cores", "8"}, {"legacy", ""}}, false},
      {"wrongZone", {{"zone", "c"}, {"cores", "8"}}, false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(s.matches(c.labels), c.matches);
  }

  Selector bad = Selector::everything();
  bad.add("a", SelectorOperator::kGt, {"x"});
  EXPECT_TRUE(bad.isNothing());
  EXPECT_EQ(bad.toString(), "<nothing>");
  bad.add("b", SelectorOperator::kExists);
  EXPECT_TRUE(bad.isNothing());
  EXPECT_EQ(Selector::everything().toString(), "");
  EXPECT_EQ(Selector::everything().add("a", SelectorOperator::kNotIn, {"x", "y"}).toString(),
            "a notin (x,y)");
}

TEST(SelectorOperatorTest, RoundTrips) {
  for (auto op : {SelectorOperator::kIn, SelectorOperator::kNotIn, SelectorOperator::kExists,
                  SelectorOperator::kDoesNotExist, SelectorOperator::kGt, SelectorOperator::kLt}) {
    SCOPED_TRACE(std::string(toString(op)));
    EXPECT_EQ(parseSelectorOperator(toString(op)), op);
  }
  EXPECT_EQ(toString(SelectorOperator::kDoesNotExist), "DoesNotExist");
  EXPECT_FALSE(parseSelectorOperator("in").has_value());
}

struct NodeCase {
  std::string name;
  std::string selector;
  Labels labels;
  std::string nodeName;
  bool matches;
};

TEST(NodeSelectorTest, Matches) {
  const std::vector<NodeCase> cases = {
      {"noTerms", R"({"nodeSelectorTerms": []})", {{"a", "b"}}, "n1", false},
      {"inHit",
       R"({"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]}]})",
       {{"zone", "b"}},
       "n1",
       true},
      {"inMiss",
       R"({"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]})",
       {{"zone", "b"}},
       "n1",
       false},
      {"termsOred",
       R"({"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]},
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]}]})",
       {{"zone", "b"}},
       "n1",
       true},
      {"requirementsAnded",
       R"({"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "zone", "operator": "In", "values": ["a"]},
            {"key": "disk", "operator": "Exists"}]}]})",
       {{"zone", "a"}},
       "n1",
       false},
      {"emptyTermMatchesNothing", R"({"nodeSelectorTerms": [{}]})", {{"a", "b"}}, "n1", false},
      {"emptyTermListsMatchNothing",
       R"({"nodeSelectorTerms": [{"matchExpressions": [], "matchFields": []}]})",
       {},
       "n1",
       false},
      {"emptyTermOrMatchingTerm",
       R"({"nodeSelectorTerms": [{}, {"matchExpressions": [{"key": "a", "operator": "Exists"}]}]})",
       {{"a", ""}},
       "n1",
       true},
      {"notInAbsent",
       R"({"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "NotIn", "values": ["a"]}]}]})",
       {},
       "n1",
       true},
      {"doesNotExist",
       R"({"nodeSelectorTerms": [{"matchExpressions": [{"key": "gpu", "operator": "DoesNotExist"}]}]})",
       {{"gpu", "1"}},
       "n1",
       false},
      {"gtHit",
       R"({"nodeSelectorTerms": [{"matchExpressions": [{"key": "cores", "operator": "Gt", "values": ["3"]}]}]})",
       {{"cores", "5"}},
       "n1",
       true},
      {"gtEqual",
       R"({"nodeSelectorTerms": [{"matchExpressions": [{"key": "cores", "operator": "Gt", "values": ["5"]}]}]})",
       {{"cores", "5"}},
       "n1",
       false},
      {"ltHitNegative",
       R"({"nodeSelectorTerms": [{"matchExpressions": [{"key": "t", "operator": "Lt", "values": ["-1"]}]}]})",
       {{"t", "-5"}},
       "n1",
       true},
      {"gtNonIntegerLabel",
       R"({"nodeSelectorTerms": [{"matchExpressions": [{"key": "cores", "operator": "Gt", "values": ["3"]}]}]})",
       {{"cores", "many"}},
       "n1",
       false},
      {"gtNonIntegerValue",
       R"({"nodeSelectorTerms": [{"matchExpressions": [{"key": "cores", "operator": "Gt", "values": ["three"]}]}]})",
       {{"cores", "5"}},
       "n1",
       false},
      {"gtTwoValues",
       R"({"nodeSelectorTerms": [{"matchExpressions": [{"key": "cores", "operator": "Gt", "values": ["1", "2"]}]}]})",
       {{"cores", "5"}},
       "n1",
       false},
      {"invalidTermDoesNotSpoilOthers",
       R"({"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": []}]},
            {"matchExpressions": [{"key": "zone", "operator": "Exists"}]}]})",
       {{"zone", "a"}},
       "n1",
       true},
      {"inWithoutValuesFails",
       R"({"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "NotIn"}]}]})",
       {},
       "n1",
       false},
      {"existsWithValuesFails",
       R"({"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "Exists", "values": ["a"]}]}]})",
       {{"zone", "a"}},
       "n1",
       false},
      {"fieldInHit",
       R"({"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]})",
       {},
       "n1",
       true},
      {"fieldInMiss",
       R"({"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]})",
       {},
       "n2",
       false},
      {"fieldNotIn",
       R"({"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["n1"]}]}]})",
       {},
       "n2",
       true},
      {"fieldOtherKeyFails",
       R"({"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.uid", "operator": "In", "values": ["n1"]}]}]})",
       {},
       "n1",
       false},
      {"fieldExistsFails",
       R"({"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "Exists"}]}]})",
       {},
       "n1",
       false},
      {"fieldTwoValuesFails",
       R"({"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1", "n2"]}]}]})",
       {},
       "n1",
       false},
      {"fieldsSkippedWithoutNodeName",
       R"({"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]})",
       {},
       "",
       true},
      {"fieldsAndLabelsAnded",
       R"({"nodeSelectorTerms": [{
            "matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}],
            "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]})",
       {{"zone", "b"}},
       "n1",
       false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const auto s = decodeString<NodeSelector>(c.selector);
    EXPECT_EQ(s.matches(c.labels, c.nodeName), c.matches);
  }
}

TEST(NodeSelectorTest, MatchesNodeObject) {
  const auto node = decodeString<Node>(R"({"metadata": {"name": "n1", "labels": {"zone": "a"}}})");
  const auto s = decodeString<NodeSelector>(
      R"({"nodeSelectorTerms": [{
           "matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}],
           "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]})");
  EXPECT_TRUE(s.matches(node));
  EXPECT_TRUE(s.nodeSelectorTerms[0].matches(node));
  auto other = node;
  other.metadata.name = "n2";
  EXPECT_FALSE(s.matches(other));
}

TEST(NodeSelectorTest, DecodeErrors) {
  struct Case {
    std::string name;
    std::string json;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"unknownOperator",
       R"({"nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "Equals"}]}]})",
       "nodeSelectorTerms.matchExpressions.operator: unknown node selector operator \"Equals\""},
      {"unknownFieldOperator",
       R"({"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "in"}]}]})",
       "nodeSelectorTerms.matchFields.operator: unknown node selector operator \"in\""},
      {"termsNotArray", R"({"nodeSelectorTerms": {}})", "nodeSelectorTerms"},
      {"keyWrongType",
       R"({"nodeSelectorTerms": [{"matchExpressions": [{"key": 1, "operator": "Exists"}]}]})",
       "nodeSelectorTerms.matchExpressions.key"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_THAT(decodeError<NodeSelector>(c.json), HasSubstr(c.message));
  }
}

TEST(TopologySelectorTest, Matches) {
  struct Case {
    std::string name;
    std::string terms;
    Labels labels;
    bool matches;
  };
  const std::vector<Case> cases = {
      {"noTermsMatchEverything", "[]", {}, true},
      {"hit",
       R"([{"matchLabelExpressions": [{"key": "zone", "values": ["a", "b"]}]}])",
       {{"zone", "b"}},
       true},
      {"miss",
       R"([{"matchLabelExpressions": [{"key": "zone", "values": ["a"]}]}])",
       {{"zone", "b"}},
       false},
      {"absent", R"([{"matchLabelExpressions": [{"key": "zone", "values": ["a"]}]}])", {}, false},
      {"emptyTermMatchesNothing", "[{}]", {{"zone", "a"}}, false},
      {"noValuesMatchesNothing",
       R"([{"matchLabelExpressions": [{"key": "zone", "values": []}]}])",
       {{"zone", "a"}},
       false},
      {"anyTerm",
       R"([{"matchLabelExpressions": [{"key": "zone", "values": ["a"]}]},
           {"matchLabelExpressions": [{"key": "region", "values": ["r"]}]}])",
       {{"region", "r"}},
       true},
      {"expressionsAnded",
       R"([{"matchLabelExpressions": [{"key": "zone", "values": ["a"]},
                                      {"key": "region", "values": ["r"]}]}])",
       {{"zone", "a"}},
       false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const auto terms = decodeString<std::vector<TopologySelectorTerm>>(c.terms);
    EXPECT_EQ(matchTopologySelectorTerms(terms, c.labels), c.matches);
  }
}

}  // namespace
}  // namespace ksched::api
