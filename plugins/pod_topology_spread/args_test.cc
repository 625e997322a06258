// PodTopologySpreadArgs decoding and validation, ported from upstream's
// TestValidatePodTopologySpreadArgs.
#include "plugins/pod_topology_spread/args.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include <ksched/registry.h>

#include "plugins/pod_topology_spread/pod_topology_spread.h"
#include "tests/support/plugin_test_util.h"

namespace ksched::plugins {
namespace {

PodTopologySpreadArgs decode(const char* json) {
  return PodTopologySpreadArgs::fromJson(nlohmann::json::parse(json));
}

std::vector<std::string> errorsOf(const char* json) {
  std::vector<std::string> out;
  for (const auto& e : decode(json).validationErrors()) out.push_back(e.toString());
  return out;
}

std::string decodeError(const char* json) {
  try {
    (void)decode(json);
  } catch (const PluginArgsError& e) {
    return e.what();
  }
  return "";
}

TEST(PodTopologySpreadArgsTest, NullIsSystemDefaulting) {
  const PodTopologySpreadArgs args = PodTopologySpreadArgs::fromJson(nullptr);
  EXPECT_EQ(args.defaultingType, "System");
  EXPECT_TRUE(args.defaultConstraints.empty());
  EXPECT_TRUE(args.validationErrors().empty());
  EXPECT_EQ(decode("{}").defaultingType, "System");
  EXPECT_EQ(decode(R"({"defaultingType": ""})").defaultingType, "System");
}

TEST(PodTopologySpreadArgsTest, DecodesList) {
  const PodTopologySpreadArgs args = decode(R"({
      "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "PodTopologySpreadArgs",
      "defaultingType": "List",
      "defaultConstraints": [
        {"maxSkew": 1, "topologyKey": "node", "whenUnsatisfiable": "DoNotSchedule"},
        {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway",
         "minDomains": 3, "nodeAffinityPolicy": "Ignore", "nodeTaintsPolicy": "Honor",
         "matchLabelKeys": ["rev"]}]})");
  EXPECT_EQ(args.defaultingType, "List");
  ASSERT_EQ(args.defaultConstraints.size(), 2u);
  EXPECT_EQ(args.defaultConstraints[0].maxSkew, 1);
  EXPECT_EQ(args.defaultConstraints[0].topologyKey, "node");
  EXPECT_EQ(args.defaultConstraints[0].whenUnsatisfiable, "DoNotSchedule");
  EXPECT_FALSE(args.defaultConstraints[0].minDomains);
  EXPECT_EQ(args.defaultConstraints[1].minDomains, 3);
  EXPECT_EQ(args.defaultConstraints[1].nodeAffinityPolicy, "Ignore");
  EXPECT_EQ(args.defaultConstraints[1].nodeTaintsPolicy, "Honor");
  EXPECT_EQ(args.defaultConstraints[1].matchLabelKeys, std::vector<std::string>{"rev"});
  EXPECT_TRUE(args.validationErrors().empty());
}

TEST(PodTopologySpreadArgsTest, StrictDecoding) {
  EXPECT_EQ(decodeError(R"({"defaultConstraint": []})"), "defaultConstraint: unknown field");
  EXPECT_EQ(decodeError(R"({"defaultConstraints": {}})"),
            "defaultConstraints: expected an array, got object");
  EXPECT_EQ(decodeError(R"({"defaultConstraints": [{"maxSkew": "1"}]})"),
            "defaultConstraints[0].maxSkew: expected an integer, got string");
  EXPECT_EQ(decodeError(R"({"defaultConstraints": [{"topologyKey": "a", "foo": 1}]})"),
            "defaultConstraints[0].foo: unknown field");
  EXPECT_EQ(decodeError(R"({"defaultingType": 1})"),
            "defaultingType: expected a string, got number");
}

struct ValidationCase {
  std::string name;
  std::string json;
  std::vector<std::string> want;
};

// gtest prints the case's name instead of its bytes.
void PrintTo(const ValidationCase& c, std::ostream* os) { *os << c.name; }

class PodTopologySpreadArgsValidationTest : public ::testing::TestWithParam<ValidationCase> {};

TEST_P(PodTopologySpreadArgsValidationTest, Validate) {
  const ValidationCase& c = GetParam();
  EXPECT_EQ(errorsOf(c.json.c_str()), c.want);
  // The factory reports the first error.
  testutil::FakeHandle h;
  if (c.want.empty()) {
    EXPECT_NE(makePlugin(podTopologySpreadFactory(), nlohmann::json::parse(c.json), h), nullptr);
  } else {
    try {
      (void)makePlugin(podTopologySpreadFactory(), nlohmann::json::parse(c.json), h);
      ADD_FAILURE() << "no error";
    } catch (const PluginArgsError& e) {
      EXPECT_EQ(std::string(e.what()), c.want.front());
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Table, PodTopologySpreadArgsValidationTest,
    ::testing::Values(
        ValidationCase{"validConstraints",
                       R"({"defaultingType": "List", "defaultConstraints": [
                           {"maxSkew": 1, "topologyKey": "node", "whenUnsatisfiable": "ScheduleAnyway"},
                           {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]})",
                       {}},
        ValidationCase{"maxSkewLessThanZero",
                       R"({"defaultingType": "List", "defaultConstraints": [
                           {"maxSkew": -1, "topologyKey": "node", "whenUnsatisfiable": "DoNotSchedule"}]})",
                       {"defaultConstraints[0].maxSkew: Invalid value: -1: not in valid range (0, "
                        "inf)"}},
        ValidationCase{"emptyTopologyKey",
                       R"({"defaultingType": "List", "defaultConstraints": [
                           {"maxSkew": 1, "topologyKey": "", "whenUnsatisfiable": "DoNotSchedule"}]})",
                       {"defaultConstraints[0].topologyKey: Required value: can not be empty"}},
        ValidationCase{"whenUnsatisfiableIsEmpty",
                       R"({"defaultingType": "List", "defaultConstraints": [
                           {"maxSkew": 1, "topologyKey": "node", "whenUnsatisfiable": ""}]})",
                       {"defaultConstraints[0].whenUnsatisfiable: Required value: can not be "
                        "empty"}},
        ValidationCase{"whenUnsatisfiableContainsUnsupportedAction",
                       R"({"defaultingType": "List", "defaultConstraints": [
                           {"maxSkew": 1, "topologyKey": "node", "whenUnsatisfiable": "Unknown"}]})",
                       {"defaultConstraints[0].whenUnsatisfiable: Unsupported value: \"Unknown\": "
                        "supported values: \"DoNotSchedule\", \"ScheduleAnyway\""}},
        ValidationCase{"duplicatedConstraints",
                       R"({"defaultingType": "List", "defaultConstraints": [
                           {"maxSkew": 1, "topologyKey": "node", "whenUnsatisfiable": "DoNotSchedule"},
                           {"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": "DoNotSchedule"}]})",
                       {"defaultConstraints[1]: Duplicate value: \"{node, DoNotSchedule}\""}},
        ValidationCase{
            "labelSelectorPresent",
            R"({"defaultingType": "List", "defaultConstraints": [
                           {"maxSkew": 1, "topologyKey": "key", "whenUnsatisfiable": "DoNotSchedule",
                            "labelSelector": {"matchLabels": {"a": "b"}}}]})",
            {"defaultConstraints[0].labelSelector: Forbidden: constraint must not define "
             "a selector, as they deduced for each pod"}},
        ValidationCase{
            "invalidTopologyKey",
            R"({"defaultingType": "List", "defaultConstraints": [
                           {"maxSkew": 1, "topologyKey": "-node", "whenUnsatisfiable": "DoNotSchedule"}]})",
            {"defaultConstraints[0].topologyKey: Invalid value: \"-node\": name part must "
             "consist of alphanumeric characters, '-', '_' or '.', and must start and end "
             "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
             "'123-abc', regex used for validation is "
             "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"}},
        ValidationCase{
            "systemDefaultingWithConstraints",
            R"({"defaultingType": "System", "defaultConstraints": [
                           {"maxSkew": 1, "topologyKey": "node", "whenUnsatisfiable": "DoNotSchedule"}]})",
            {"defaultingType: Invalid value: \"System\": when .defaultConstraints are not "
             "empty"}},
        ValidationCase{
            "defaultingTypeOmittedWithConstraints",
            R"({"defaultConstraints": [
                           {"maxSkew": 1, "topologyKey": "node", "whenUnsatisfiable": "DoNotSchedule"}]})",
            {"defaultingType: Invalid value: \"System\": when .defaultConstraints are not "
             "empty"}},
        ValidationCase{"unsupportedDefaultingType",
                       R"({"defaultingType": "Unknown"})",
                       {"defaultingType: Unsupported value: \"Unknown\": supported values: "
                        "\"System\", \"List\""}},
        ValidationCase{
            "allErrorsInOrder",
            R"({"defaultingType": "List", "defaultConstraints": [
                           {"maxSkew": 0, "topologyKey": "", "whenUnsatisfiable": "Later"}]})",
            {"defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf)",
             "defaultConstraints[0].topologyKey: Required value: can not be empty",
             "defaultConstraints[0].whenUnsatisfiable: Unsupported value: \"Later\": "
             "supported values: \"DoNotSchedule\", \"ScheduleAnyway\""}},
        ValidationCase{"listWithoutConstraints", R"({"defaultingType": "List"})", {}}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace ksched::plugins
