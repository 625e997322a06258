// Unit tests with the SDK's fakes: (args) -> error, (node) -> score.
#include "label_preference.h"

#include <gtest/gtest.h>

#include <ksched/registry.h>
#include <ksched/testing/fakes.h>
#include <nlohmann/json.hpp>

namespace example {
namespace {

using ksched::testing::FakeHandle;
using ksched::testing::makeNodeInfo;
using ksched::testing::NodeWrapper;
using ksched::testing::PodWrapper;

std::string argsError(const nlohmann::json& args) {
  try {
    (void)decodeArgs(args);
  } catch (const ksched::PluginArgsError& e) {
    return e.what();
  }
  return "";
}

TEST(LabelPreferenceArgs, Errors) {
  EXPECT_EQ(argsError(nullptr), "key: Required value: a label name is required");
  EXPECT_EQ(argsError({{"key", "disk"}}), "values: Required value: at least one value");
  EXPECT_EQ(argsError({{"key", "disk"}, {"values", {"ssd"}}, {"score", 0}}),
            "score: Invalid value: 0: must be in the range [1, 100]");
  EXPECT_EQ(argsError({{"key", "disk"}, {"values", {"ssd"}}, {"scor", 5}}),
            "scor: unknown field");
  EXPECT_EQ(argsError({{"key", "disk"}, {"values", "ssd"}}),
            "values: expected an array, got string");
  EXPECT_NE(argsError({{"key", "-bad"}, {"values", {"x"}}}).find("key: Invalid value: \"-bad\""),
            std::string::npos);
  EXPECT_EQ(argsError({{"key", "disk"}, {"values", {"ssd"}}}), "");
}

TEST(LabelPreference, ScoresNodesWithAPreferredValue) {
  FakeHandle handle;
  auto plugin = ksched::makePlugin(
      labelPreferenceFactory(), {{"key", "disk"}, {"values", {"ssd", "nvme"}}, {"score", 80}}, handle);
  auto* scorer = dynamic_cast<ksched::ScorePlugin*>(plugin.get());
  ASSERT_NE(scorer, nullptr);
  const auto pod = PodWrapper("p").obj();
  struct Case {
    NodeWrapper node;
    int64_t want;
  };
  for (const auto& c : {Case{NodeWrapper("ssd").label("disk", "ssd"), 80},
                        Case{NodeWrapper("nvme").label("disk", "nvme"), 80},
                        Case{NodeWrapper("hdd").label("disk", "hdd"), 0},
                        Case{NodeWrapper("none"), 0}}) {
    int64_t score = -1;
    ksched::CycleState state;
    EXPECT_TRUE(scorer->score(state, pod, *makeNodeInfo(c.node), score).ok());
    EXPECT_EQ(score, c.want) << c.node.obj().metadata.name;
  }
}

}  // namespace
}  // namespace example
