#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include <ksched/registry.h>

#include "plugins/inter_pod_affinity/inter_pod_affinity.h"
#include "tests/support/plugin_test_util.h"

namespace ksched::plugins {
namespace {

using nlohmann::json;

std::unique_ptr<InterPodAffinity> makePlugin(Handle& h, const json& args = nullptr) {
  auto p = makePlugin(interPodAffinityFactory(), args, h);
  return std::unique_ptr<InterPodAffinity>(dynamic_cast<InterPodAffinity*>(p.release()));
}

TEST(InterPodAffinityArgs, Defaults) {
  const auto a = InterPodAffinityArgs::fromJson(nullptr);
  EXPECT_EQ(a.hardPodAffinityWeight, 1);
  EXPECT_FALSE(a.ignorePreferredTermsOfExistingPods);
  const auto b = InterPodAffinityArgs::fromJson(json::object());
  EXPECT_EQ(b.hardPodAffinityWeight, 1);
  EXPECT_FALSE(b.ignorePreferredTermsOfExistingPods);
}

TEST(InterPodAffinityArgs, Decodes) {
  const auto a = InterPodAffinityArgs::fromJson({{"apiVersion", "kubescheduler.config.k8s.io/v1"},
                                                 {"kind", "InterPodAffinityArgs"},
                                                 {"hardPodAffinityWeight", 0},
                                                 {"ignorePreferredTermsOfExistingPods", true}});
  EXPECT_EQ(a.hardPodAffinityWeight, 0);
  EXPECT_TRUE(a.ignorePreferredTermsOfExistingPods);
  EXPECT_TRUE(a.validationErrors().empty());
  EXPECT_EQ(InterPodAffinityArgs::fromJson({{"hardPodAffinityWeight", 100}}).hardPodAffinityWeight,
            100);
}

std::string argsError(const json& args) {
  testutil::FakeHandle h;
  try {
    (void)makePlugin(interPodAffinityFactory(), args, h);
  } catch (const PluginArgsError& e) {
    return e.what();
  }
  return "";
}

TEST(InterPodAffinityArgs, Errors) {
  EXPECT_EQ(argsError({{"hardPodAffinityWeight", -1}}),
            "hardPodAffinityWeight: Invalid value: -1: not in valid range [0-100]");
  EXPECT_EQ(argsError({{"hardPodAffinityWeight", 110}}),
            "hardPodAffinityWeight: Invalid value: 110: not in valid range [0-100]");
  EXPECT_EQ(argsError({{"hardPodAffinityWeight", "1"}}),
            "hardPodAffinityWeight: expected an integer, got string");
  EXPECT_EQ(argsError({{"ignorePreferredTermsOfExistingPods", 1}}),
            "ignorePreferredTermsOfExistingPods: expected a boolean, got number");
  EXPECT_EQ(argsError({{"hardPodAffinityWeigth", 1}}), "hardPodAffinityWeigth: unknown field");
  EXPECT_EQ(argsError(json::array()), "expected an object, got array");
  EXPECT_EQ(argsError(nullptr), "");
}

TEST(InterPodAffinityPlugin, Name) {
  testutil::FakeHandle h;
  auto pl = makePlugin(h);
  EXPECT_EQ(pl->name(), "InterPodAffinity");
  EXPECT_TRUE(pl->hasNormalizeScore());
  EXPECT_EQ(pl->preFilterExtensions(), pl.get());
}

}  // namespace
}  // namespace ksched::plugins
