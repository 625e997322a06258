#include "plugins/dynamic_resources/dynamic_resources.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/plugin_test_util.h"

namespace ksched::plugins {
namespace {

TEST(DynamicResourcesTest, PreEnqueue) {
  struct Case {
    std::string name;
    std::vector<api::PodResourceClaim> claims;
    Code wantCode;
    std::string wantMessage;
  };
  const std::string prefix =
      "ksched does not support Dynamic Resource Allocation yet, so the pod's resource claims "
      "cannot be allocated: ";
  const std::vector<Case> cases = {
      {"no claims", {}, Code::kSuccess, ""},
      {"a claim by name",
       {{"gpu", std::string("gpu-claim"), std::nullopt}},
       Code::kUnschedulableAndUnresolvable,
       prefix + "gpu (ResourceClaim gpu-claim)"},
      {"a claim from a template and one by name",
       {{"scratch", std::nullopt, std::string("scratch-template")},
        {"gpu", std::string("gpu-claim"), std::nullopt}},
       Code::kUnschedulableAndUnresolvable,
       prefix + "scratch (ResourceClaimTemplate scratch-template), gpu (ResourceClaim gpu-claim)"},
      {"a claim naming neither (invalid, still refused)",
       {{"odd", std::nullopt, std::nullopt}},
       Code::kUnschedulableAndUnresolvable,
       prefix + "odd"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    api::Pod pod = testutil::PodWrapper("p").obj();
    pod.spec.resourceClaims = c.claims;
    DynamicResources pl;
    Status s = pl.preEnqueue(pod);
    EXPECT_EQ(s.code(), c.wantCode);
    EXPECT_EQ(s.message(), c.wantMessage);
  }
}

TEST(DynamicResourcesTest, ClaimStatusesAloneAreNoClaims) {
  api::Pod pod = testutil::PodWrapper("p").obj();
  pod.status.resourceClaimStatuses.push_back({"gpu", std::string("p-gpu-1")});
  EXPECT_TRUE(DynamicResources().preEnqueue(pod).ok());
}

TEST(DynamicResourcesTest, Factory) {
  testutil::FakeHandle h;
  auto pl = makePlugin(dynamicResourcesFactory(), nullptr, h);
  EXPECT_EQ(pl->name(), "DynamicResources");
  EXPECT_NE(dynamic_cast<PreEnqueuePlugin*>(pl.get()), nullptr);
  EXPECT_EQ(dynamic_cast<FilterPlugin*>(pl.get()), nullptr);
}

}  // namespace
}  // namespace ksched::plugins
