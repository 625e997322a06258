// Opportunistic batching of pods with claims: pods of one ResourceClaimTemplate have the same
// scheduling inputs (their generated claims' names aside), and DynamicResources signs such a pod
// only while each of its claims is generated and not allocated.
#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include <ksched/api/pod.h>

#include "plugins/dynamic_resources/dynamic_resources.h"
#include "tests/support/plugin_test_util.h"

namespace ksched::plugins {
namespace {

using nlohmann::json;

// Pod `name` with the template claim "gpu" of template `tmpl`, generated as `<name>-gpu`
// (none: not generated yet).
api::Pod templatePod(const std::string& name, const std::string& tmpl = "one-gpu",
                     bool generated = true) {
  api::Pod p = testutil::PodWrapper(name).obj();
  p.metadata.namespace_ = "ml";
  p.metadata.uid = name + "-uid";
  p.spec.resourceClaims.push_back({"gpu", std::nullopt, tmpl});
  if (generated) p.status.resourceClaimStatuses.push_back({"gpu", name + "-gpu"});
  return p;
}

json generatedClaim(const std::string& name, bool allocated = false) {
  json c = {
      {"apiVersion", "resource.k8s.io/v1"},
      {"kind", "ResourceClaim"},
      {"metadata",
       {{"name", name}, {"namespace", "ml"}, {"uid", name + "-uid"}, {"resourceVersion", "1"}}},
      {"spec",
       {{"devices",
         {{"requests",
           json::array({{{"name", "gpu"}, {"exactly", {{"deviceClassName", "gpu"}}}}})}}}}}};
  if (allocated) {
    c["status"]["allocation"] = {{"devices",
                                  {{"results", json::array({{{"request", "gpu"},
                                                             {"driver", "gpu.example.com"},
                                                             {"pool", "n1"},
                                                             {"device", "gpu-0"}}})}}}};
  }
  return c;
}

TEST(DraBatching, PodsOfOneTemplateHaveTheSameSchedulingInputs) {
  EXPECT_TRUE(api::sameSchedulingInputs(templatePod("a"), templatePod("b")));
  EXPECT_FALSE(api::sameSchedulingInputs(templatePod("a"), templatePod("b", "two-gpus")));
  EXPECT_FALSE(api::sameSchedulingInputs(templatePod("a"), templatePod("b", "one-gpu", false)));
  // A named claim is the same claim for both pods: its name counts.
  api::Pod a = testutil::PodWrapper("a").obj();
  api::Pod b = testutil::PodWrapper("b").obj();
  a.spec.resourceClaims.push_back({"gpu", std::string("shared"), std::nullopt});
  b.spec.resourceClaims.push_back({"gpu", std::string("other"), std::nullopt});
  EXPECT_FALSE(api::sameSchedulingInputs(a, b));
}

TEST(DraBatching, OnlyPodsWhoseTemplateClaimsAreUnallocatedAreSigned) {
  testing::FakeHandle handle;
  auto state = std::make_shared<dra::DraState>();
  state->onClaim(generatedClaim("fresh-gpu"));
  state->onClaim(generatedClaim("taken-gpu", true));
  DynamicResources plugin(handle, state);

  EXPECT_TRUE(plugin.signPod(testutil::PodWrapper("plain").obj())) << "no claims";
  EXPECT_TRUE(plugin.signPod(templatePod("fresh")));
  EXPECT_FALSE(plugin.signPod(templatePod("taken"))) << "allocated: asks for its own devices";
  EXPECT_FALSE(plugin.signPod(templatePod("pending", "one-gpu", false))) << "not generated yet";
  EXPECT_FALSE(plugin.signPod(templatePod("unknown"))) << "generated claim not seen yet";
  api::Pod named = testutil::PodWrapper("named").obj();
  named.spec.resourceClaims.push_back({"gpu", std::string("fresh-gpu"), std::nullopt});
  EXPECT_FALSE(plugin.signPod(named)) << "a named claim may be shared";
}

}  // namespace
}  // namespace ksched::plugins
