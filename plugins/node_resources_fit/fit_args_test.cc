#include "plugins/node_resources_fit/fit_args.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <ksched/registry.h>

namespace ksched::plugins {
namespace {

NodeResourcesFitArgs decode(const char* json) {
  return NodeResourcesFitArgs::fromJson(nlohmann::json::parse(json));
}

std::vector<std::string> errorsOf(const NodeResourcesFitArgs& args) {
  std::vector<std::string> out;
  for (const auto& e : args.validationErrors()) out.push_back(e.toString());
  return out;
}

TEST(NodeResourcesFitArgsTest, NullIsDefaults) {
  NodeResourcesFitArgs args = NodeResourcesFitArgs::fromJson(nullptr);
  EXPECT_TRUE(args.ignoredResources.empty());
  EXPECT_TRUE(args.ignoredResourceGroups.empty());
  EXPECT_EQ(args.scoringStrategy.type, "LeastAllocated");
  EXPECT_EQ(args.scoringStrategy.resources, (std::vector<ResourceSpec>{{"cpu", 1}, {"memory", 1}}));
  EXPECT_FALSE(args.scoringStrategy.requestedToCapacityRatio);
  EXPECT_TRUE(args.validationErrors().empty());
}

TEST(NodeResourcesFitArgsTest, V1Defaulting) {
  NodeResourcesFitArgs args = decode(R"({"scoringStrategy": {"type": "MostAllocated"}})");
  EXPECT_EQ(args.scoringStrategy.type, "MostAllocated");
  EXPECT_EQ(args.scoringStrategy.resources, (std::vector<ResourceSpec>{{"cpu", 1}, {"memory", 1}}));

  args = decode(R"({"scoringStrategy": {"type": "LeastAllocated",
                    "resources": [{"name": "cpu"}, {"name": "memory", "weight": 0},
                                  {"name": "example.com/foo", "weight": 5}]}})");
  EXPECT_EQ(args.scoringStrategy.resources,
            (std::vector<ResourceSpec>{{"cpu", 1}, {"memory", 1}, {"example.com/foo", 5}}));
  EXPECT_TRUE(args.validationErrors().empty());
}

TEST(NodeResourcesFitArgsTest, DecodesEverything) {
  NodeResourcesFitArgs args = decode(R"({
    "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "NodeResourcesFitArgs",
    "ignoredResources": ["example.com/aaa"],
    "ignoredResourceGroups": ["example.com"],
    "scoringStrategy": {
      "type": "RequestedToCapacityRatio",
      "resources": [{"name": "intel.com/foo", "weight": 3}],
      "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 0},
                                             {"utilization": 100, "score": 10}]}}})");
  EXPECT_EQ(args.ignoredResources, std::vector<std::string>{"example.com/aaa"});
  EXPECT_EQ(args.ignoredResourceGroups, std::vector<std::string>{"example.com"});
  EXPECT_EQ(args.scoringStrategy.type, "RequestedToCapacityRatio");
  ASSERT_TRUE(args.scoringStrategy.requestedToCapacityRatio);
  EXPECT_EQ(args.scoringStrategy.requestedToCapacityRatio->shape,
            (std::vector<UtilizationShapePoint>{{0, 0}, {100, 10}}));
  EXPECT_TRUE(args.validationErrors().empty());
}

struct DecodeErrorCase {
  std::string name;
  std::string json;
  std::string want;
};

class NodeResourcesFitArgsDecodeTest : public ::testing::TestWithParam<DecodeErrorCase> {};

TEST_P(NodeResourcesFitArgsDecodeTest, Throws) {
  const DecodeErrorCase& c = GetParam();
  try {
    (void)NodeResourcesFitArgs::fromJson(nlohmann::json::parse(c.json));
    ADD_FAILURE() << "no error";
  } catch (const PluginArgsError& e) {
    EXPECT_EQ(std::string(e.what()), c.want);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Table, NodeResourcesFitArgsDecodeTest,
    ::testing::Values(
        DecodeErrorCase{"unknownTopLevel", R"({"foo": 1})", "foo: unknown field"},
        DecodeErrorCase{"unknownNested", R"({"scoringStrategy": {"typ": "MostAllocated"}})",
                        "scoringStrategy.typ: unknown field"},
        DecodeErrorCase{"weightNotInteger",
                        R"({"scoringStrategy": {"resources": [{"name": "cpu", "weight": "1"}]}})",
                        "scoringStrategy.resources[0].weight: expected an integer, got string"},
        DecodeErrorCase{"ignoredResourcesNotList", R"({"ignoredResources": "a"})",
                        "ignoredResources: expected an array, got string"},
        DecodeErrorCase{"ignoredResourceNotString", R"({"ignoredResources": ["a", 1]})",
                        "ignoredResources[1]: expected a string, got number"},
        DecodeErrorCase{"scoreOutOfInt32",
                        R"({"scoringStrategy": {"requestedToCapacityRatio":
                              {"shape": [{"utilization": 0, "score": 4294967296}]}}})",
                        "scoringStrategy.requestedToCapacityRatio.shape[0].score: integer "
                        "4294967296 out of range"}),
    [](const auto& info) { return info.param.name; });

struct ValidationCase {
  std::string name;
  std::string json;
  std::vector<std::string> want;
};

class NodeResourcesFitArgsValidationTest : public ::testing::TestWithParam<ValidationCase> {};

TEST_P(NodeResourcesFitArgsValidationTest, Errors) {
  const ValidationCase& c = GetParam();
  NodeResourcesFitArgs args = NodeResourcesFitArgs::fromJson(nlohmann::json::parse(c.json));
  EXPECT_EQ(errorsOf(args), c.want);
  if (c.want.empty()) {
    EXPECT_NO_THROW(args.validate());
  } else {
    try {
      args.validate();
      ADD_FAILURE() << "no error";
    } catch (const PluginArgsError& e) {
      EXPECT_EQ(std::string(e.what()), c.want.front());
    }
  }
}

// Messages and paths as upstream ValidateNodeResourcesFitArgs words them.
INSTANTIATE_TEST_SUITE_P(
    Table, NodeResourcesFitArgsValidationTest,
    ::testing::Values(
        ValidationCase{"valid",
                       R"({"ignoredResources": ["example.com/aaa", "aaa"],
                                    "ignoredResourceGroups": ["example.com"]})",
                       {}},
        ValidationCase{"ignoredResourceNotQualifiedName",
                       R"({"ignoredResources": ["foo/bar/baz"]})",
                       {"ignoredResources[0]: Invalid value: \"foo/bar/baz\": a qualified name "
                        "must consist of alphanumeric characters, '-', '_' or '.', and must start "
                        "and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  "
                        "or '123-abc', regex used for validation is "
                        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS "
                        "subdomain prefix and '/' (e.g. 'example.com/MyName')"}},
        ValidationCase{"ignoredResourceBadPrefix",
                       R"({"ignoredResources": ["Example.com/aaa"]})",
                       {"ignoredResources[0]: Invalid value: \"Example.com/aaa\": prefix part a "
                        "lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                        "characters, '-' or '.', and must start and end with an alphanumeric "
                        "character (e.g. 'example.com', regex used for validation is "
                        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"}},
        ValidationCase{"ignoredResourceGroupWithSlash",
                       R"({"ignoredResourceGroups": ["example.com/aaa"]})",
                       {"ignoredResourceGroups[0]: Invalid value: \"example.com/aaa\": resource "
                        "group name can't contain '/'"}},
        ValidationCase{"unsupportedType",
                       R"({"scoringStrategy": {"type": "Foo"}})",
                       {"scoringStrategy.type: Unsupported value: \"Foo\": supported values: "
                        "\"LeastAllocated\", \"MostAllocated\", \"RequestedToCapacityRatio\""}},
        ValidationCase{"missingType",
                       R"({"scoringStrategy": {"resources": [{"name": "cpu"}]}})",
                       {"scoringStrategy.type: Unsupported value: \"\": supported values: "
                        "\"LeastAllocated\", \"MostAllocated\", \"RequestedToCapacityRatio\""}},
        ValidationCase{"weightTooLarge",
                       R"({"scoringStrategy": {"type": "MostAllocated",
                            "resources": [{"name": "cpu", "weight": 101}]}})",
                       {"scoringStrategy.resources[0].weight: Invalid value: 101: resource weight "
                        "of cpu not in valid range (0, 100]"}},
        ValidationCase{"negativeWeights",
                       R"({"scoringStrategy": {"type": "LeastAllocated",
                            "resources": [{"name": "cpu", "weight": 1},
                                          {"name": "memory", "weight": -1},
                                          {"name": "example.com/foo", "weight": -2}]}})",
                       {"scoringStrategy.resources[1].weight: Invalid value: -1: resource weight "
                        "of memory not in valid range (0, 100]",
                        "scoringStrategy.resources[2].weight: Invalid value: -2: resource weight "
                        "of example.com/foo not in valid range (0, 100]"}},
        ValidationCase{"emptyShape",
                       R"({"scoringStrategy": {"type": "RequestedToCapacityRatio",
                            "requestedToCapacityRatio": {"shape": []}}})",
                       {"scoringStrategy.shape: Required value: at least one point must be "
                        "specified"}},
        ValidationCase{"ratioWithoutShape",
                       R"({"scoringStrategy": {"type": "RequestedToCapacityRatio"}})",
                       {"scoringStrategy.shape: Required value: at least one point must be "
                        "specified"}},
        ValidationCase{"unsortedShape",
                       R"({"scoringStrategy": {"type": "RequestedToCapacityRatio",
                            "requestedToCapacityRatio": {"shape": [
                              {"utilization": 10, "score": 1}, {"utilization": 10, "score": 2},
                              {"utilization": 5, "score": 3}]}}})",
                       {"scoringStrategy.shape[1].utilization: Invalid value: 10: values must be "
                        "sorted in increasing order"}},
        ValidationCase{"shapeOutOfRange",
                       R"({"scoringStrategy": {"type": "RequestedToCapacityRatio",
                            "requestedToCapacityRatio": {"shape": [
                              {"utilization": -1, "score": 11}, {"utilization": 101, "score": 0}]}}})",
                       {"scoringStrategy.shape[0].utilization: Invalid value: -1: not in valid "
                        "range [0, 100]",
                        "scoringStrategy.shape[0].score: Invalid value: 11: not in valid range "
                        "[0, 10]",
                        "scoringStrategy.shape[1].utilization: Invalid value: 101: not in valid "
                        "range [0, 100]"}}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace ksched::plugins
