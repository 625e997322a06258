// NodeLabel tables, from v1.20's node_label_test.go (TestNodeLabelFilter, TestNodeLabelScore,
// TestNodeLabelFilterWithoutNode, TestNodeLabelScoreWithoutNode) and validation_pluginargs_test.go
// (TestValidateNodeLabelArgs), plus args decoding and queueing hints.
#include "plugins/node_label/node_label.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <ksched/registry.h>

#include "tests/support/plugin_test_util.h"
#include "tests/support/queueing_hint_test_util.h"

namespace ksched::plugins {
namespace {

using testutil::NodeWrapper;
using testutil::PodWrapper;

struct FilterCase {
  std::string name;
  NodeLabelArgs args;
  Code want;
};

class NodeLabelFilterTest : public ::testing::TestWithParam<FilterCase> {};

TEST_P(NodeLabelFilterTest, Filter) {
  const FilterCase& c = GetParam();
  NodeLabel pl(c.args);
  CycleState state;
  auto ni = testutil::makeNodeInfo(
      NodeWrapper("machine1").label("foo", "any value").label("bar", "any value"));
  const Status s = pl.filter(state, PodWrapper().obj(), *ni);
  EXPECT_EQ(s.code(), c.want);
  if (c.want == Code::kUnschedulableAndUnresolvable) {
    EXPECT_EQ(s.reasons(), std::vector<std::string>{"node(s) didn't have the requested labels"});
  }
}

constexpr Code kOk = Code::kSuccess;
constexpr Code kRejected = Code::kUnschedulableAndUnresolvable;

INSTANTIATE_TEST_SUITE_P(
    Table, NodeLabelFilterTest,
    ::testing::Values(
        FilterCase{"presentLabelDoesNotMatch", {.presentLabels = {"baz"}}, kRejected},
        FilterCase{"absentLabelDoesNotMatch", {.absentLabels = {"baz"}}, kOk},
        FilterCase{"oneOfTwoPresentLabelsMatches", {.presentLabels = {"foo", "baz"}}, kRejected},
        FilterCase{"oneOfTwoAbsentLabelsMatches", {.absentLabels = {"foo", "baz"}}, kRejected},
        FilterCase{"allPresentLabelsMatch", {.presentLabels = {"foo", "bar"}}, kOk},
        FilterCase{"allAbsentLabelsMatch", {.absentLabels = {"foo", "bar"}}, kRejected},
        FilterCase{"bothPresentAndAbsentLabelMatch",
                   {.presentLabels = {"foo"}, .absentLabels = {"bar"}},
                   kRejected},
        FilterCase{"neitherPresentNorAbsentLabelMatches",
                   {.presentLabels = {"foz"}, .absentLabels = {"baz"}},
                   kRejected},
        FilterCase{"presentMatchesAbsentDoesNot",
                   {.presentLabels = {"foo"}, .absentLabels = {"baz"}},
                   kOk},
        FilterCase{"presentDoesNotMatchAbsentMatches",
                   {.presentLabels = {"foz"}, .absentLabels = {"bar"}},
                   kRejected},
        FilterCase{"noLabels", {}, kOk}),
    [](const auto& info) { return info.param.name; });

struct ScoreCase {
  std::string name;
  NodeLabelArgs args;
  int64_t want;
};

class NodeLabelScoreTest : public ::testing::TestWithParam<ScoreCase> {};

TEST_P(NodeLabelScoreTest, Score) {
  const ScoreCase& c = GetParam();
  testutil::FakeHandle h;
  nlohmann::json j = {{"presentLabelsPreference", c.args.presentLabelsPreference},
                      {"absentLabelsPreference", c.args.absentLabelsPreference}};
  auto plugin = makePlugin(nodeLabelFactory(), j, h);
  auto& pl = dynamic_cast<NodeLabel&>(*plugin);
  EXPECT_FALSE(pl.hasNormalizeScore());
  CycleState state;
  auto ni = testutil::makeNodeInfo(NodeWrapper("machine1").label("foo", "").label("bar", ""));
  int64_t v = -1;
  ASSERT_TRUE(pl.score(state, PodWrapper().obj(), *ni, v).ok());
  EXPECT_EQ(v, c.want);
}

INSTANTIATE_TEST_SUITE_P(
    Table, NodeLabelScoreTest,
    ::testing::Values(
        ScoreCase{"onePresentLabelMatch", {.presentLabelsPreference = {"foo"}}, 100},
        ScoreCase{"onePresentLabelMismatch", {.presentLabelsPreference = {"somelabel"}}, 0},
        ScoreCase{"twoPresentLabelsMatch", {.presentLabelsPreference = {"foo", "bar"}}, 100},
        ScoreCase{"twoPresentLabelsMismatch",
                  {.presentLabelsPreference = {"somelabel1", "somelabel2"}},
                  0},
        ScoreCase{"twoPresentLabelsOnlyOneMatches",
                  {.presentLabelsPreference = {"foo", "somelabel"}},
                  50},
        ScoreCase{"oneAbsentLabelMatch", {.absentLabelsPreference = {"foo"}}, 0},
        ScoreCase{"oneAbsentLabelMismatch", {.absentLabelsPreference = {"somelabel"}}, 100},
        ScoreCase{"twoAbsentLabelsMatch", {.absentLabelsPreference = {"foo", "bar"}}, 0},
        ScoreCase{"twoAbsentLabelsMismatch",
                  {.absentLabelsPreference = {"somelabel1", "somelabel2"}},
                  100},
        ScoreCase{
            "twoAbsentLabelsOnlyOneMatches", {.absentLabelsPreference = {"foo", "somelabel"}}, 50},
        ScoreCase{"twoPresentMatchTwoAbsentMismatch",
                  {.presentLabelsPreference = {"foo", "bar"},
                   .absentLabelsPreference = {"somelabel1", "somelabel2"}},
                  100},
        ScoreCase{"twoPresentMismatchTwoAbsentMatch",
                  {.presentLabelsPreference = {"somelabel1", "somelabel2"},
                   .absentLabelsPreference = {"foo", "bar"}},
                  0},
        ScoreCase{"twoPresentOneMatchesTwoAbsentMismatch",
                  {.presentLabelsPreference = {"foo", "somelabel"},
                   .absentLabelsPreference = {"somelabel1", "somelabel2"}},
                  75},
        // Beyond upstream (which divides by zero there): no preference labels score 0.
        ScoreCase{"noPreferenceLabels", {}, 0}),
    [](const auto& info) { return info.param.name; });

TEST(NodeLabelTest, WithoutNodeIsError) {
  NodeLabel pl({});
  CycleState state;
  NodeInfo empty;
  EXPECT_EQ(pl.filter(state, PodWrapper().obj(), empty).code(), Code::kError);
  int64_t v = 0;
  EXPECT_EQ(pl.score(state, PodWrapper().obj(), empty, v).code(), Code::kError);
}

std::string newError(const nlohmann::json& args) {
  testutil::FakeHandle h;
  try {
    (void)makePlugin(nodeLabelFactory(), args, h);
  } catch (const PluginArgsError& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(NodeLabelArgsTest, Validate) {
  EXPECT_EQ(newError(nlohmann::json::parse(R"({
      "kind": "NodeLabelArgs", "apiVersion": "kubescheduler.config.k8s.io/v1beta1",
      "presentLabels": ["present"], "absentLabels": ["absent"],
      "presentLabelsPreference": ["present-preference"],
      "absentLabelsPreference": ["absent-preference"]})")),
            "<no error>");
  EXPECT_EQ(newError(nullptr), "<no error>");
  EXPECT_EQ(newError({{"presentLabels", {"label"}}, {"absentLabels", {"label"}}}),
            "absentLabels: detecting at least one label (e.g., \"label\") that exist in both the "
            "present([label]) and absent([label]) label list");
  EXPECT_EQ(
      newError({{"presentLabelsPreference", {"label"}}, {"absentLabelsPreference", {"label"}}}),
      "absentLabelsPreference: detecting at least one label (e.g., \"label\") that exist in "
      "both the present([label]) and absent([label]) label list");
  EXPECT_EQ(newError({{"presentLabels", {"a", "b"}}, {"absentLabels", {"c", "b"}}}),
            "absentLabels: detecting at least one label (e.g., \"b\") that exist in both the "
            "present([a b]) and absent([c b]) label list");
  // A label may be required present and preferred absent: the lists are checked pairwise.
  EXPECT_EQ(newError({{"presentLabels", {"a"}}, {"absentLabelsPreference", {"a"}}}), "<no error>");
}

TEST(NodeLabelArgsTest, DecodeErrors) {
  EXPECT_EQ(newError({{"presentLabel", {"a"}}}), "presentLabel: unknown field");
  EXPECT_NE(newError({{"absentLabels", "a"}}).find("absentLabels: "), std::string::npos);
  EXPECT_NE(newError({{"absentLabels", {1}}}).find("absentLabels"), std::string::npos);
}

TEST(NodeLabelTest, QueueingHints) {
  using testutil::event;
  using testutil::kNotRegistered;
  using testutil::kWantQueue;
  using testutil::kWantSkip;
  using testutil::obj;
  constexpr auto kNode = EventResource::kNode;
  NodeLabel pl({.presentLabels = {"ssd"}, .absentLabels = {"retiring"}});
  const api::Pod pod = PodWrapper().obj();
  const NodeWrapper fits = NodeWrapper("n").label("ssd", "");
  testutil::expectHints(
      pl,
      {
          {"fitting node added", event(kNode, kAdd), pod, {}, obj(fits), kWantQueue},
          {"other node added", event(kNode, kAdd), pod, {}, obj(NodeWrapper("n")), kWantSkip},
          {"label added", event(kNode, kUpdateNodeLabel), pod, obj(NodeWrapper("n")), obj(fits),
           kWantQueue},
          {"still fits", event(kNode, kUpdateNodeLabel), pod, obj(fits),
           obj(NodeWrapper("n").label("ssd", "").label("x", "")), kWantSkip},
          {"label retiring added", event(kNode, kUpdateNodeLabel), pod, obj(fits),
           obj(NodeWrapper("n").label("ssd", "").label("retiring", "")), kWantSkip},
          {"node taint change", event(kNode, kUpdateNodeTaint), pod, obj(fits),
           obj(NodeWrapper("n").label("ssd", "").taint("k", "v", "NoSchedule")), kNotRegistered},
          {"node deleted", event(kNode, kDelete), pod, obj(fits), {}, kNotRegistered},
      });
}

}  // namespace
}  // namespace ksched::plugins
