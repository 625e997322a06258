#include "plugins/node_affinity/node_affinity.h"

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include <ksched/api/node.h>
#include <ksched/registry.h>

#include "tests/support/plugin_test_util.h"
#include "tests/support/queueing_hint_test_util.h"

namespace ksched::plugins {
namespace {

using nlohmann::json;

api::Pod podFrom(const json& spec) {
  api::Pod pod;
  json j = {{"metadata", {{"name", "pod"}, {"namespace", "default"}, {"uid", "pod-uid"}}},
            {"spec", spec}};
  api::from_json(j, pod);
  return pod;
}

std::shared_ptr<NodeInfo> nodeFrom(const std::string& name, const json& labels) {
  api::Node node;
  json j = {{"metadata", {{"name", name}, {"labels", labels}}}};
  api::from_json(j, node);
  return std::make_shared<NodeInfo>(std::make_shared<const api::Node>(node));
}

json required(const std::vector<json>& terms) {
  return {
      {"affinity",
       {{"nodeAffinity",
         {{"requiredDuringSchedulingIgnoredDuringExecution", {{"nodeSelectorTerms", terms}}}}}}}};
}

json expr(const std::string& key, const std::string& op, const std::vector<std::string>& values) {
  json e = {{"key", key}, {"operator", op}};
  if (!values.empty()) e["values"] = values;
  return e;
}

std::unique_ptr<NodeAffinity> makePlugin(const json& args = nullptr) {
  testutil::FakeHandle h;
  auto p = makePlugin(nodeAffinityFactory(), args, h);
  return std::unique_ptr<NodeAffinity>(dynamic_cast<NodeAffinity*>(p.release()));
}

constexpr const char* kReasonPod = "node(s) didn't match Pod's node affinity/selector";

struct FilterCase {
  std::string name;
  json podSpec;
  json nodeLabels;
  json args;
  Code want;
  std::string reason;
};

class NodeAffinityFilterTest : public ::testing::TestWithParam<FilterCase> {};

TEST_P(NodeAffinityFilterTest, Filter) {
  const FilterCase& c = GetParam();
  auto pl = makePlugin(c.args);
  const api::Pod pod = podFrom(c.podSpec);
  auto ni = nodeFrom("node1", c.nodeLabels);
  CycleState state;
  testutil::FakeLister lister;
  PreFilterResult result;
  Status pre = pl->preFilter(state, pod, lister, result);
  ASSERT_TRUE(pre.ok() || pre.isSkip()) << pre.message();
  Status s = pl->filter(state, pod, *ni);
  EXPECT_EQ(s.code(), c.want);
  if (c.want == Code::kSuccess) {
    EXPECT_TRUE(s.reasons().empty());
  } else {
    EXPECT_EQ(s.reasons(), std::vector<std::string>{c.reason});
  }
}

const json kFooBar = {{"foo", "bar"}};

// Mirrors upstream's TestNodeAffinity (Filter part).
INSTANTIATE_TEST_SUITE_P(
    Table, NodeAffinityFilterTest,
    ::testing::Values(
        FilterCase{"noSelector", json::object(), kFooBar, nullptr, Code::kSuccess, ""},
        FilterCase{"nodeSelectorMismatch", {{"nodeSelector", kFooBar}}, json::object(), nullptr,
                   Code::kUnschedulableAndUnresolvable, kReasonPod},
        FilterCase{"nodeSelectorMatch", {{"nodeSelector", kFooBar}}, kFooBar, nullptr,
                   Code::kSuccess, ""},
        FilterCase{"nodeSelectorPartialMatch",
                   {{"nodeSelector", {{"foo", "bar"}, {"baz", "blah"}}}},
                   kFooBar,
                   nullptr,
                   Code::kUnschedulableAndUnresolvable,
                   kReasonPod},
        FilterCase{"inMatches",
                   required({{{"matchExpressions", {expr("foo", "In", {"value1", "bar"})}}}}),
                   kFooBar, nullptr, Code::kSuccess, ""},
        FilterCase{"gtMatches",
                   required({{{"matchExpressions", {expr("kernel-version", "Gt", {"0204"})}}}}),
                   {{"kernel-version", "0206"}}, nullptr, Code::kSuccess, ""},
        FilterCase{"notInMismatch",
                   required({{{"matchExpressions", {expr("mem-type", "NotIn", {"DDR", "DDR2"})}}}}),
                   {{"mem-type", "DDR3"}}, nullptr, Code::kSuccess, ""},
        FilterCase{"existsMatches",
                   required({{{"matchExpressions", {expr("GPU", "Exists", {})}}}}),
                   {{"GPU", "NVIDIA-GRID-K1"}}, nullptr, Code::kSuccess, ""},
        FilterCase{"doesNotExistRejects",
                   required({{{"matchExpressions", {expr("foo", "DoesNotExist", {})}}}}),
                   kFooBar, nullptr, Code::kUnschedulableAndUnresolvable, kReasonPod},
        FilterCase{"emptyTermsMatchNothing", required({}), kFooBar, nullptr,
                   Code::kUnschedulableAndUnresolvable, kReasonPod},
        FilterCase{"emptyTermMatchesNothing", required({json::object()}), kFooBar, nullptr,
                   Code::kUnschedulableAndUnresolvable, kReasonPod},
        FilterCase{"termsAreORed",
                   required({{{"matchExpressions", {expr("foo", "In", {"nope"})}}},
                             {{"matchExpressions", {expr("foo", "In", {"bar"})}}}}),
                   kFooBar, nullptr, Code::kSuccess, ""},
        FilterCase{"requirementsAreANDed",
                   required({{{"matchExpressions",
                               {expr("foo", "In", {"bar"}), expr("GPU", "Exists", {})}}}}),
                   kFooBar, nullptr, Code::kUnschedulableAndUnresolvable, kReasonPod},
        FilterCase{"selectorAndAffinityBothNeeded",
                   [] {
                     json spec = required({{{"matchExpressions", {expr("foo", "Exists", {})}}}});
                     spec["nodeSelector"] = {{"foo", "other"}};
                     return spec;
                   }(),
                   kFooBar, nullptr, Code::kUnschedulableAndUnresolvable, kReasonPod},
        FilterCase{"matchFieldsName",
                   required({{{"matchFields", {expr("metadata.name", "In", {"node1"})}}}}),
                   json::object(), nullptr, Code::kSuccess, ""},
        FilterCase{"matchFieldsOtherName",
                   required({{{"matchFields", {expr("metadata.name", "In", {"node2"})}}}}),
                   json::object(), nullptr, Code::kUnschedulableAndUnresolvable, kReasonPod},
        FilterCase{"matchFieldsAndExpressions",
                   required({{{"matchFields", {expr("metadata.name", "In", {"node1"})}},
                              {"matchExpressions", {expr("foo", "In", {"bar"})}}}}),
                   kFooBar, nullptr, Code::kSuccess, ""},
        FilterCase{"addedAffinityMatches",
                   json::object(),
                   {{"zone", "foo"}},
                   {{"addedAffinity",
                     {{"requiredDuringSchedulingIgnoredDuringExecution",
                       {{"nodeSelectorTerms",
                         {{{"matchExpressions", {expr("zone", "In", {"foo"})}}}}}}}}}},
                   Code::kSuccess, ""},
        FilterCase{"addedAffinityRejects",
                   {{"nodeSelector", {{"zone", "bar"}}}},
                   {{"zone", "bar"}},
                   {{"addedAffinity",
                     {{"requiredDuringSchedulingIgnoredDuringExecution",
                       {{"nodeSelectorTerms",
                         {{{"matchExpressions", {expr("zone", "In", {"foo"})}}}}}}}}}},
                   Code::kUnschedulableAndUnresolvable,
                   "node(s) didn't match scheduler-enforced node affinity"},
        FilterCase{"addedAffinityMatchesPodRejects",
                   {{"nodeSelector", {{"zone", "bar"}}}},
                   {{"zone", "foo"}},
                   {{"addedAffinity",
                     {{"requiredDuringSchedulingIgnoredDuringExecution",
                       {{"nodeSelectorTerms",
                         {{{"matchExpressions", {expr("zone", "In", {"foo"})}}}}}}}}}},
                   Code::kUnschedulableAndUnresolvable, kReasonPod}),
    [](const auto& info) { return info.param.name; });

struct PreFilterCase {
  std::string name;
  json podSpec;
  json args;
  Code want;
  std::optional<std::set<std::string, std::less<>>> wantNodeNames;
};

class NodeAffinityPreFilterTest : public ::testing::TestWithParam<PreFilterCase> {};

TEST_P(NodeAffinityPreFilterTest, PreFilter) {
  const PreFilterCase& c = GetParam();
  auto pl = makePlugin(c.args);
  CycleState state;
  testutil::FakeLister lister;
  PreFilterResult result;
  Status s = pl->preFilter(state, podFrom(c.podSpec), lister, result);
  EXPECT_EQ(s.code(), c.want);
  if (s.code() == Code::kUnschedulableAndUnresolvable) {
    EXPECT_EQ(s.reasons(), std::vector<std::string>{"pod affinity terms conflict"});
  }
  EXPECT_EQ(result.nodeNames, c.wantNodeNames);
}

using NameSet = std::set<std::string, std::less<>>;

INSTANTIATE_TEST_SUITE_P(
    Table, NodeAffinityPreFilterTest,
    ::testing::Values(
        PreFilterCase{"nothingToDo", json::object(), nullptr, Code::kSkip, std::nullopt},
        PreFilterCase{"emptyNodeSelectorSkips",
                      {{"nodeSelector", json::object()}},
                      nullptr,
                      Code::kSkip,
                      std::nullopt},
        PreFilterCase{"addedAffinityPreventsSkip",
                      json::object(),
                      {{"addedAffinity",
                        {{"requiredDuringSchedulingIgnoredDuringExecution",
                          {{"nodeSelectorTerms",
                            {{{"matchExpressions", {expr("zone", "In", {"foo"})}}}}}}}}}},
                      Code::kSuccess,
                      std::nullopt},
        PreFilterCase{
            "nodeSelectorOnly", {{"nodeSelector", kFooBar}}, nullptr, Code::kSuccess, std::nullopt},
        PreFilterCase{"labelTermsOnly",
                      required({{{"matchExpressions", {expr("foo", "In", {"bar"})}}}}), nullptr,
                      Code::kSuccess, std::nullopt},
        PreFilterCase{"singleNodeName",
                      required({{{"matchFields", {expr("metadata.name", "In", {"node1"})}}}}),
                      nullptr, Code::kSuccess, NameSet{"node1"}},
        PreFilterCase{"intersectionWithinTerm",
                      required({{{"matchFields",
                                  {expr("metadata.name", "In", {"node1", "node2"}),
                                   expr("metadata.name", "In", {"node2", "node3"})}}}}),
                      nullptr, Code::kSuccess, NameSet{"node2"}},
        PreFilterCase{"unionOverTerms",
                      required({{{"matchFields", {expr("metadata.name", "In", {"node1"})}}},
                                {{"matchFields", {expr("metadata.name", "In", {"node2"})}}}}),
                      nullptr, Code::kSuccess, NameSet{"node1", "node2"}},
        PreFilterCase{"termWithoutNameAdmitsAll",
                      required({{{"matchFields", {expr("metadata.name", "In", {"node1"})}}},
                                {{"matchExpressions", {expr("foo", "In", {"bar"})}}}}),
                      nullptr, Code::kSuccess, std::nullopt},
        PreFilterCase{"notInIgnored",
                      required({{{"matchFields", {expr("metadata.name", "NotIn", {"node1"})}}}}),
                      nullptr, Code::kSuccess, std::nullopt},
        PreFilterCase{"conflict",
                      required({{{"matchFields",
                                  {expr("metadata.name", "In", {"node1"}),
                                   expr("metadata.name", "In", {"node2"})}}}}),
                      nullptr, Code::kUnschedulableAndUnresolvable, std::nullopt}),
    [](const auto& info) { return info.param.name; });

struct ScoreCase {
  std::string name;
  json podSpec;
  json args;
  std::vector<json> nodeLabels;  // node1, node2, ...
  bool wantSkip;
  std::vector<int64_t> wantRaw;
  std::vector<int64_t> wantNormalized;
};

class NodeAffinityScoreTest : public ::testing::TestWithParam<ScoreCase> {};

TEST_P(NodeAffinityScoreTest, Score) {
  const ScoreCase& c = GetParam();
  auto pl = makePlugin(c.args);
  const api::Pod pod = podFrom(c.podSpec);
  std::vector<std::shared_ptr<NodeInfo>> infos;
  std::vector<const NodeInfo*> nodes;
  for (size_t i = 0; i < c.nodeLabels.size(); ++i) {
    infos.push_back(nodeFrom("node" + std::to_string(i + 1), c.nodeLabels[i]));
    nodes.push_back(infos.back().get());
  }
  CycleState state;
  Status pre = pl->preScore(state, pod, nodes);
  EXPECT_EQ(pre.isSkip(), c.wantSkip);
  if (c.wantSkip) return;
  ASSERT_TRUE(pre.ok());
  std::vector<NodeScore> scores;
  std::vector<int64_t> raw;
  for (const NodeInfo* ni : nodes) {
    int64_t score = -1;
    ASSERT_TRUE(pl->score(state, pod, *ni, score).ok());
    raw.push_back(score);
    scores.push_back({ni->name(), score});
  }
  EXPECT_EQ(raw, c.wantRaw);
  ASSERT_TRUE(pl->hasNormalizeScore());
  // The framework hands this plugin lists without node names (normalizesScoresAlone in
  // src/framework/run.cc): the names must not matter.
  std::vector<NodeScore> unnamed;
  for (int64_t r : raw) unnamed.push_back({"", r});
  ASSERT_TRUE(pl->normalizeScore(state, pod, unnamed).ok());
  ASSERT_TRUE(pl->normalizeScore(state, pod, scores).ok());
  std::vector<int64_t> normalized;
  for (const auto& s : scores) normalized.push_back(s.score);
  EXPECT_EQ(normalized, c.wantNormalized);
  for (size_t i = 0; i < unnamed.size(); ++i) EXPECT_EQ(unnamed[i].score, normalized[i]);
}

json preferred(const std::vector<json>& terms) {
  return {{"affinity",
           {{"nodeAffinity", {{"preferredDuringSchedulingIgnoredDuringExecution", terms}}}}}};
}

json weighted(int weight, const std::vector<json>& exprs) {
  return {{"weight", weight}, {"preference", {{"matchExpressions", exprs}}}};
}

// Upstream's TestNodeAffinityPriority affinities.
const json kAffinity1 = preferred({weighted(2, {expr("foo", "In", {"bar"})})});
const json kAffinity2 = preferred({
    weighted(2, {expr("foo", "In", {"bar"})}),
    weighted(4, {expr("key", "In", {"value"})}),
    weighted(5,
             {expr("foo", "In", {"bar"}), expr("key", "In", {"value"}), expr("az", "In", {"az1"})}),
});
const json kLabel1 = {{"foo", "bar"}};
const json kLabel2 = {{"key", "value"}};
const json kLabel3 = {{"az", "az1"}};
const json kLabel4 = {{"abc", "az11"}, {"def", "az22"}};
const json kLabel5 = {{"foo", "bar"}, {"key", "value"}, {"az", "az1"}};

INSTANTIATE_TEST_SUITE_P(
    Table, NodeAffinityScoreTest,
    ::testing::Values(
        ScoreCase{"noPreferredSkips", json::object(), nullptr, {kLabel1}, true, {}, {}},
        ScoreCase{"noMatch",
                  kAffinity1,
                  nullptr,
                  {kLabel4, kLabel2, kLabel3},
                  false,
                  {0, 0, 0},
                  {0, 0, 0}},
        ScoreCase{"oneMatch",
                  kAffinity1,
                  nullptr,
                  {kLabel1, kLabel2, kLabel3},
                  false,
                  {2, 0, 0},
                  {100, 0, 0}},
        ScoreCase{"weightedSum",
                  kAffinity2,
                  nullptr,
                  {kLabel1, kLabel5, kLabel2},
                  false,
                  {2, 11, 4},
                  {18, 100, 36}},
        ScoreCase{"zeroWeightIgnored",
                  preferred({weighted(0, {expr("foo", "In", {"bar"})}),
                             weighted(3, {expr("foo", "Exists", {})})}),
                  nullptr,
                  {kLabel1, kLabel2},
                  false,
                  {3, 0},
                  {100, 0}},
        ScoreCase{"addedAffinityOnly",
                  json::object(),
                  {{"addedAffinity",
                    {{"preferredDuringSchedulingIgnoredDuringExecution",
                      {weighted(5, {expr("foo", "In", {"bar"})})}}}}},
                  {kLabel1, kLabel2},
                  false,
                  {5, 0},
                  {100, 0}},
        ScoreCase{"addedAndPodAffinity",
                  kAffinity1,
                  {{"addedAffinity",
                    {{"preferredDuringSchedulingIgnoredDuringExecution",
                      {weighted(3, {expr("key", "In", {"value"})})}}}}},
                  {kLabel1, kLabel5, kLabel2, kLabel3},
                  false,
                  {2, 5, 3, 0},
                  {40, 100, 60, 0}}),
    [](const auto& info) { return info.param.name; });

std::string argsError(const json& args) {
  testutil::FakeHandle h;
  try {
    (void)makePlugin(nodeAffinityFactory(), args, h);
  } catch (const PluginArgsError& e) {
    return e.what();
  }
  return "";
}

json addedRequired(const json& term) {
  return {{"addedAffinity",
           {{"requiredDuringSchedulingIgnoredDuringExecution", {{"nodeSelectorTerms", {term}}}}}}};
}

TEST(NodeAffinityTest, QueueingHints) {
  using testutil::event;
  using testutil::kNotRegistered;
  using testutil::kWantQueue;
  using testutil::kWantSkip;
  using testutil::NodeWrapper;
  using testutil::obj;
  constexpr auto kNode = EventResource::kNode;
  const api::Pod selector = podFrom({{"nodeSelector", {{"zone", "a"}}}});
  json bothSpec = required({{{"matchExpressions", {expr("disk", "In", {"ssd"})}}}});
  const api::Pod affinity = podFrom(bothSpec);
  bothSpec["nodeSelector"] = {{"zone", "a"}};
  const api::Pod both = podFrom(bothSpec);
  const api::Pod any = podFrom(json::object());
  const auto plain = NodeWrapper("n1");
  const auto zoneA = NodeWrapper("n1").label("zone", "a");
  const auto zoneB = NodeWrapper("n1").label("zone", "b");
  const auto ssd = NodeWrapper("n1").label("disk", "ssd");
  const auto zoneAssd = NodeWrapper("n1").label("zone", "a").label("disk", "ssd");

  auto pl = makePlugin();
  EXPECT_EQ(pl->name(), "NodeAffinity");
  testutil::expectHints(
      *pl, {
               {"added node matches nodeSelector",
                event(kNode, kAdd),
                selector,
                {},
                obj(zoneA),
                kWantQueue},
               {"added node does not match nodeSelector",
                event(kNode, kAdd),
                selector,
                {},
                obj(zoneB),
                kWantSkip},
               {"added node matches required affinity",
                event(kNode, kAdd),
                affinity,
                {},
                obj(ssd),
                kWantQueue},
               {"added node does not match required affinity",
                event(kNode, kAdd),
                affinity,
                {},
                obj(plain),
                kWantSkip},
               {"added node matches required affinity, not nodeSelector",
                event(kNode, kAdd),
                both,
                {},
                obj(ssd),
                kWantSkip},
               {"added node matches both", event(kNode, kAdd), both, {}, obj(zoneAssd), kWantQueue},
               {"added node, pod without constraints",
                event(kNode, kAdd),
                any,
                {},
                obj(plain),
                kWantQueue},
               {"label added makes the node match", event(kNode, kUpdateNodeLabel), selector,
                obj(plain), obj(zoneA), kWantQueue},
               {"label changed makes the node match", event(kNode, kUpdateNodeLabel), selector,
                obj(zoneB), obj(zoneA), kWantQueue},
               {"label changed, node still does not match", event(kNode, kUpdateNodeLabel),
                selector, obj(plain), obj(zoneB), kWantSkip},
               {"label changed, node matched before", event(kNode, kUpdateNodeLabel), selector,
                obj(zoneA), obj(zoneAssd), kWantSkip},
               {"label removed, node no longer matches", event(kNode, kUpdateNodeLabel), affinity,
                obj(ssd), obj(plain), kWantSkip},
               {"label added completes both constraints", event(kNode, kUpdateNodeLabel), both,
                obj(zoneA), obj(zoneAssd), kWantQueue},
               {"node taint update", event(kNode, kUpdateNodeTaint), selector, obj(zoneB),
                obj(zoneA), kNotRegistered},
               {"node allocatable update", event(kNode, kUpdateNodeAllocatable), selector,
                obj(zoneB), obj(zoneA), kNotRegistered},
               {"node deleted", event(kNode, kDelete), selector, obj(zoneA), {}, kNotRegistered},
               {"assigned pod deleted",
                event(EventResource::kAssignedPod, kDelete),
                selector,
                obj(testutil::PodWrapper("other").nodeName("n1")),
                {},
                kNotRegistered},
           });

  // addedAffinity must match too, in the old node as in the new one.
  auto enforced = makePlugin(addedRequired({{"matchExpressions", {expr("pool", "In", {"x"})}}}));
  const auto poolX = NodeWrapper("n1").label("pool", "x");
  testutil::expectHints(
      *enforced,
      {
          {"added node outside addedAffinity",
           event(kNode, kAdd),
           selector,
           {},
           obj(zoneA),
           kWantSkip},
          {"added node matches addedAffinity and pod",
           event(kNode, kAdd),
           selector,
           {},
           obj(NodeWrapper("n1").label("zone", "a").label("pool", "x")),
           kWantQueue},
          {"added node matches addedAffinity, pod without constraints",
           event(kNode, kAdd),
           any,
           {},
           obj(poolX),
           kWantQueue},
          {"label added makes the node match addedAffinity", event(kNode, kUpdateNodeLabel),
           selector, obj(zoneA), obj(NodeWrapper("n1").label("zone", "a").label("pool", "x")),
           kWantQueue},
          {"label changed, node matched before", event(kNode, kUpdateNodeLabel), any, obj(poolX),
           obj(NodeWrapper("n1").label("pool", "x").label("zone", "b")), kWantSkip},
      });
}

TEST(NodeAffinityArgsTest, Decoding) {
  EXPECT_FALSE(NodeAffinityArgs::fromJson(nullptr).addedAffinity.has_value());
  EXPECT_FALSE(NodeAffinityArgs::fromJson(json::object()).addedAffinity.has_value());
  const auto args = NodeAffinityArgs::fromJson(
      {{"kind", "NodeAffinityArgs"},
       {"addedAffinity",
        {{"requiredDuringSchedulingIgnoredDuringExecution",
          {{"nodeSelectorTerms", {{{"matchExpressions", {expr("zone", "In", {"a"})}}}}}}},
         {"preferredDuringSchedulingIgnoredDuringExecution",
          {weighted(7, {expr("x", "Exists", {})})}}}}});
  ASSERT_TRUE(args.addedAffinity.has_value());
  const auto& req = args.addedAffinity->requiredDuringSchedulingIgnoredDuringExecution;
  ASSERT_TRUE(req.has_value());
  ASSERT_EQ(req->nodeSelectorTerms.size(), 1u);
  EXPECT_EQ(req->nodeSelectorTerms[0].matchExpressions[0].key, "zone");
  ASSERT_EQ(args.addedAffinity->preferredDuringSchedulingIgnoredDuringExecution.size(), 1u);
  EXPECT_EQ(args.addedAffinity->preferredDuringSchedulingIgnoredDuringExecution[0].weight, 7);
  EXPECT_TRUE(args.validationErrors().empty());
  EXPECT_EQ(argsError(nullptr), "");
}

TEST(NodeAffinityArgsTest, StrictDecoding) {
  EXPECT_NE(argsError({{"unknown", 1}}), "");
  EXPECT_NE(argsError({{"addedAffinity",
                        {{"requiredDuringSchedulingRequiredDuringExecution", json::object()}}}}),
            "");
  EXPECT_NE(argsError(addedRequired({{"matchExpressions", {{{"key", "a"}, {"bogus", 1}}}}})), "");
  EXPECT_EQ(argsError(addedRequired({{"matchExpressions", {expr("a", "Foo", {"x"})}}})),
            "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]."
            "matchExpressions[0].operator: Unsupported value: \"Foo\": supported values: \"In\", "
            "\"NotIn\", \"Exists\", \"DoesNotExist\", \"Gt\", \"Lt\"");
}

TEST(NodeAffinityArgsTest, Validation) {
  const std::string req =
      "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].";
  EXPECT_EQ(argsError(addedRequired({{"matchExpressions", {expr("foo", "In", {})}}})),
            req +
                "matchExpressions[0].values: Invalid value: []string(nil): for 'in', 'notin' "
                "operators, values set can't be empty");
  EXPECT_EQ(argsError(addedRequired({{"matchExpressions", {expr("foo", "Exists", {"x"})}}})),
            req +
                "matchExpressions[0].values: Forbidden: values set must be empty for exists "
                "and does not exist");
  EXPECT_EQ(argsError(addedRequired({{"matchExpressions", {expr("foo", "Gt", {"1", "2"})}}})),
            req +
                "matchExpressions[0].values: Invalid value: []string{\"1\", \"2\"}: for 'Gt', "
                "'Lt' operators, exactly one value is required");
  EXPECT_EQ(argsError(addedRequired({{"matchExpressions", {expr("foo", "Lt", {"x"})}}})),
            req +
                "matchExpressions[0].values[0]: Invalid value: \"x\": for 'Gt', 'Lt' "
                "operators, the value must be an integer");
  EXPECT_EQ(argsError(addedRequired({{"matchExpressions", {expr("-foo", "Exists", {})}}})),
            req +
                "matchExpressions[0].key: Invalid value: \"-foo\": name part must consist of "
                "alphanumeric characters, '-', '_' or '.', and must start and end with an "
                "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
                "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')");
  EXPECT_EQ(argsError(addedRequired({{"matchExpressions", {expr("foo", "In", {"a b"})}}})),
            req +
                "matchExpressions[0].values[0][foo]: Invalid value: \"a b\": a valid label "
                "must be an empty string or consist of alphanumeric characters, '-', '_' or "
                "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  "
                "or 'my_value',  or '12345', regex used for validation is "
                "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')");
  EXPECT_EQ(argsError(addedRequired({{"matchFields", {expr("metadata.name", "In", {"a", "b"})}}})),
            req +
                "matchFields[0].values: Invalid value: []string{\"a\", \"b\"}: must have one "
                "element");
  EXPECT_EQ(argsError(addedRequired({{"matchFields", {expr("metadata.name", "Exists", {"a"})}}})),
            req +
                "matchFields[0].operator: Invalid value: \"Exists\": not a valid selector "
                "operator");
  // Preferred terms: errors under [i].preference; weight-0 terms are not checked.
  EXPECT_EQ(
      argsError(
          {{"addedAffinity",
            {{"preferredDuringSchedulingIgnoredDuringExecution",
              {weighted(0, {expr("foo", "In", {})}), weighted(1, {expr("foo", "In", {})})}}}}}),
      "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[1].preference."
      "matchExpressions[0].values: Invalid value: []string(nil): for 'in', 'notin' "
      "operators, values set can't be empty");
}

// What the plugin says of its rejections (FilterExplainer), as explain shows them: the pod's
// nodeSelector and required terms, and the profile's addedAffinity.
TEST(NodeAffinityExplain, NamesTheSelectorOrTermAndTheNodesLabel) {
  using testutil::NodeWrapper;
  using testutil::PodWrapper;
  testutil::SnapshotHandle h(
      {}, {NodeWrapper("hdd").label("disktype", "hdd").ptr(), NodeWrapper("bare").ptr(),
           NodeWrapper("zone-c").label("zone", "c").ptr()});
  auto pl = makePlugin(nodeAffinityFactory(), nullptr, h);
  const api::Pod ssd = PodWrapper("p").uid("p").nodeSelector({{"disktype", "ssd"}}).obj();
  EXPECT_EQ(testutil::explainAfterFilter(*pl, h.snapshot(), ssd, "hdd"),
            std::vector<std::string>{"nodeSelector disktype=ssd: node has disktype=hdd"});
  EXPECT_EQ(testutil::explainAfterFilter(*pl, h.snapshot(), ssd, "bare"),
            std::vector<std::string>{"nodeSelector disktype=ssd: label disktype missing"});
  const api::Pod zones =
      PodWrapper("p").uid("p").nodeAffinity("zone", api::SelectorOperator::kIn, {"a", "b"}).obj();
  EXPECT_EQ(testutil::explainAfterFilter(*pl, h.snapshot(), zones, "zone-c"),
            std::vector<std::string>{"requiredDuringScheduling term 0: zone In [a,b]: node has "
                                     "zone=c"});

  auto added = makePlugin(nodeAffinityFactory(), json::parse(R"({"addedAffinity": {
      "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["batch"]}]}]}}})"),
                          h);
  EXPECT_EQ(
      testutil::explainAfterFilter(*added, h.snapshot(), PodWrapper("p").uid("p").obj(), "bare"),
      std::vector<std::string>{
          "the profile's addedAffinity term 0: pool In [batch]: label pool missing"});
}

}  // namespace
}  // namespace ksched::plugins
