// DynamicResources writing real ResourceClaims (served from the CRDs of tests/integration/crds):
// PreBind adds the finalizer and writes the allocation and the reservation; a scheduler that
// restarts reads the claims back and never hands out a device already written, nor doubles one;
// a claim changed under it (a stale resourceVersion) is re-read and written on the next attempt.
// The pods stay in memory: the v1.20 apiserver cannot store spec.resourceClaims; the claims,
// slices and classes are real objects, read by a LIST as the watch's first list would.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "client/errors.h"
#include "client/rest_client.h"
#include "cluster.h"
#include "dra.h"
#include "plugins/dynamic_resources/dynamic_resources.h"
#include "scheduler/rest_cluster_api.h"
#include "scheduling.h"
#include "tests/support/plugin_test_util.h"

namespace ksched::testing {
namespace {

using client::ApiError;
using nlohmann::json;

constexpr const char* kNs = "dra-plugin";

json claimObject(const std::string& name) {
  return {
      {"apiVersion", "resource.k8s.io/v1"},
      {"kind", "ResourceClaim"},
      {"metadata", {{"name", name}, {"namespace", kNs}}},
      {"spec",
       {{"devices",
         {{"requests",
           json::array({{{"name", "gpu"}, {"exactly", {{"deviceClassName", "plugin-gpu"}}}}})}}}}}};
}

api::Pod podUsing(const std::string& name, const std::string& claim) {
  api::Pod p = plugins::testutil::PodWrapper(name).obj();
  p.metadata.namespace_ = kNs;
  p.metadata.uid = name + "-uid";
  p.spec.resourceClaims = {{"gpu", claim, std::nullopt}};
  return p;
}

class DraPlugin : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto& admin = TestCluster::get().admin();
    installResourceCrds(admin);
    ensureNamespace(admin, kNs);
  }

  void SetUp() override {
    auto& admin = TestCluster::get().admin();
    for (const char* c : {"a", "b", "c"})
      remove(std::string(kResourceApi) + "/namespaces/" + kNs + "/resourceclaims/" + c, true);
    remove(std::string(kResourceApi) + "/resourceslices/plugin-n1", false);
    remove(std::string(kResourceApi) + "/deviceclasses/plugin-gpu", false);
    admin.post(std::string(kResourceApi) + "/deviceclasses",
               {{"apiVersion", "resource.k8s.io/v1"},
                {"kind", "DeviceClass"},
                {"metadata", {{"name", "plugin-gpu"}}},
                {"spec",
                 {{"selectors",
                   json::array(
                       {{{"cel", {{"expression", "device.driver == 'plugin.example.com'"}}}}})}}}});
    admin.post(std::string(kResourceApi) + "/resourceslices",
               {{"apiVersion", "resource.k8s.io/v1"},
                {"kind", "ResourceSlice"},
                {"metadata", {{"name", "plugin-n1"}}},
                {"spec",
                 {{"driver", "plugin.example.com"},
                  {"nodeName", "n1"},
                  {"pool", {{"name", "n1"}, {"generation", 1}, {"resourceSliceCount", 1}}},
                  {"devices", json::array({{{"name", "gpu-0"}}, {{"name", "gpu-1"}}})}}}});
    for (const char* c : {"a", "b", "c"}) {
      admin.post(std::string(kResourceApi) + "/namespaces/" + kNs + "/resourceclaims",
                 claimObject(c));
    }
  }

  // Deletes `path`; a claim's finalizer is removed first so that it goes.
  static void remove(const std::string& path, bool claim) {
    auto& admin = TestCluster::get().admin();
    try {
      if (claim) admin.patch(path, {{"metadata", {{"finalizers", nullptr}}}});
      admin.del(path);
    } catch (const ApiError& e) {
      if (!e.isNotFound()) throw;
    }
    eventually([&] {
      try {
        admin.get(path);
        return false;
      } catch (const ApiError& e) {
        return e.isNotFound();
      }
    });
  }

  // A scheduler's DRA state as its watches would start it: a LIST of each kind.
  static std::shared_ptr<plugins::dra::DraState> freshState() {
    auto& admin = TestCluster::get().admin();
    auto state = std::make_shared<plugins::dra::DraState>();
    const json classes = admin.get(std::string(kResourceApi) + "/deviceclasses");
    for (const auto& o : classes["items"]) state->onClass(o);
    const json slices = admin.get(std::string(kResourceApi) + "/resourceslices");
    for (const auto& o : slices["items"]) state->onSlice(o);
    const json claims =
        admin.get(std::string(kResourceApi) + "/namespaces/" + kNs + "/resourceclaims");
    for (const auto& o : claims["items"]) state->onClaim(o);
    return state;
  }

  json claim(const std::string& name) {
    return TestCluster::get().admin().get(std::string(kResourceApi) + "/namespaces/" + kNs +
                                          "/resourceclaims/" + name);
  }

  // One scheduling of `pod` onto n1 through the plugin's extension points; the Filter status.
  Status schedule(plugins::DynamicResources& plugin, const api::Pod& pod) {
    CycleState s;
    PreFilterResult r;
    if (Status st = plugin.preFilter(s, pod, handle_.snapshot(), r); !st.ok()) return st;
    NodeInfo n1{std::make_shared<api::Node>(plugins::testutil::NodeWrapper("n1").obj())};
    if (Status st = plugin.filter(s, pod, n1); !st.ok()) return st;
    if (Status st = plugin.reserve(s, pod, "n1"); !st.ok()) return st;
    return plugin.preBind(s, pod, "n1");
  }

  scheduler::RestClusterApi api_{TestCluster::get().admin()};
  plugins::testutil::FakeHandle handle_;
};

std::string deviceOf(const json& claim) {
  const auto& results = claim["status"]["allocation"]["devices"]["results"];
  return results.size() == 1 ? results[0].value("device", "") : "";
}

// PreBind writes what upstream's writes: the finalizer, the allocation and the reservation. A
// restarted scheduler reads that back: the next claim gets the other device, and the third none.
TEST_F(DraPlugin, WrittenAllocationsSurviveARestartAndNoDeviceIsDoubled) {
  handle_.setApi(&api_);
  auto state = freshState();
  plugins::DynamicResources first(handle_, state);
  const Status st = schedule(first, podUsing("pa", "a"));
  ASSERT_TRUE(st.ok()) << st.message();
  const json a = claim("a");
  EXPECT_THAT(a["metadata"]["finalizers"],
              ::testing::Contains("resource.kubernetes.io/delete-protection"));
  const std::string deviceA = deviceOf(a);
  EXPECT_THAT(deviceA, ::testing::AnyOf("gpu-0", "gpu-1"));
  ASSERT_EQ(a["status"]["reservedFor"].size(), 1u) << a.dump(2);
  EXPECT_EQ(a["status"]["reservedFor"][0]["uid"], "pa-uid");
  EXPECT_EQ(a["status"]["reservedFor"][0]["resource"], "pods");
  EXPECT_EQ(a["status"]["allocation"]["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]
             ["values"][0],
            "n1");
  EXPECT_FALSE(state->hasPendingAllocation(a["metadata"]["uid"]));

  // A restart: nothing but what the apiserver holds.
  plugins::DynamicResources second(handle_, freshState());
  const Status st2 = schedule(second, podUsing("pb", "b"));
  ASSERT_TRUE(st2.ok()) << st2.message();
  const std::string deviceB = deviceOf(claim("b"));
  EXPECT_THAT(deviceB, ::testing::AnyOf("gpu-0", "gpu-1"));
  EXPECT_NE(deviceB, deviceA);

  plugins::DynamicResources third(handle_, freshState());
  const Status full = schedule(third, podUsing("pc", "c"));
  EXPECT_EQ(full.message(), "cannot allocate all claims");
  EXPECT_FALSE(claim("c")["status"].contains("allocation"));
}

// The claim changed after the scheduler read it (a label added): the first status write is a
// conflict; the plugin reads the claim again and writes on the next attempt.
TEST_F(DraPlugin, AConflictReReadsTheClaimAndWritesAgain) {
  handle_.setApi(&api_);
  auto state = freshState();
  plugins::DynamicResources plugin(handle_, state);
  TestCluster::get().admin().patch(
      std::string(kResourceApi) + "/namespaces/" + kNs + "/resourceclaims/a",
      {{"metadata", {{"labels", {{"touched", "yes"}}}}}});
  const Status st = schedule(plugin, podUsing("pa", "a"));
  ASSERT_TRUE(st.ok()) << st.message();
  const json a = claim("a");
  EXPECT_EQ(a["metadata"]["labels"]["touched"], "yes");
  EXPECT_THAT(deviceOf(a), ::testing::AnyOf("gpu-0", "gpu-1"));
  EXPECT_EQ(a["status"]["reservedFor"][0]["uid"], "pa-uid");
}

}  // namespace
}  // namespace ksched::testing
