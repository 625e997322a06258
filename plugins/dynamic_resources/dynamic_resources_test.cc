// DynamicResources over a DraState fed by hand (the objects a watch would deliver): PreEnqueue's
// upstream messages, PreFilter's checks, Filter through the allocator, Reserve's in-flight
// allocation keeping the device from the next pod and Unreserve giving it back, the queueing
// hints. PreBind's writes run against a real apiserver (tests/integration/dra_plugin_test.cc).
#include "plugins/dynamic_resources/dynamic_resources.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/dra_plugin_json.h"
#include "tests/support/plugin_test_util.h"

namespace ksched::plugins {
namespace {

// The default feature gates, for args decoded outside a profile.
const features::Gates kDefaultGates;

using dra::testjson::gpuClass;
using dra::testjson::meta;
using nlohmann::json;
using testutil::NodeWrapper;
using testutil::PodWrapper;

json claim(const std::string& name, const json& extraMeta = json::object()) {
  json m = meta(name, "ml");
  m.update(extraMeta);
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceClaim"},
          {"metadata", m},
          {"spec",
           {{"devices",
             {{"requests",
               json::array({{{"name", "gpu"}, {"exactly", {{"deviceClassName", "gpu"}}}}})}}}}}};
}

api::Pod podWith(const std::string& name, std::vector<api::PodResourceClaim> claims,
                 std::vector<api::PodResourceClaimStatus> statuses = {}) {
  api::Pod p = PodWrapper(name).obj();
  p.metadata.namespace_ = "ml";
  p.metadata.uid = name + "-uid";
  p.spec.resourceClaims = std::move(claims);
  p.status.resourceClaimStatuses = std::move(statuses);
  return p;
}

api::PodResourceClaim byName(const std::string& claimName) {
  return {"gpu", claimName, std::nullopt};
}

class DynamicResourcesTest : public ::testing::Test {
 protected:
  DynamicResourcesTest() : state(std::make_shared<dra::DraState>()), plugin(handle, state) {
    state->onClass(gpuClass());
    state->onSlice(dra::testjson::nodeSlice("n1", 1));
  }

  testing::FakeHandle handle;
  std::shared_ptr<dra::DraState> state;
  DynamicResources plugin;
  NodeInfo n1{std::make_shared<api::Node>(NodeWrapper("n1").obj())};
};

TEST_F(DynamicResourcesTest, PreEnqueueSaysWhatIsMissingInUpstreamsWords) {
  state->onClaim(claim("present"));
  state->onClaim(claim("leaving", {{"deletionTimestamp", "2026-11-26T10:00:00Z"}}));
  state->onClaim(
      claim("p-gpu-abcde", {{"ownerReferences", json::array({{{"apiVersion", "v1"},
                                                              {"kind", "Pod"},
                                                              {"name", "p"},
                                                              {"uid", "p-uid"},
                                                              {"controller", true}}})}}));
  state->onClaim(
      claim("other-gpu-abcde", {{"ownerReferences", json::array({{{"apiVersion", "v1"},
                                                                  {"kind", "Pod"},
                                                                  {"name", "other"},
                                                                  {"uid", "other-uid"},
                                                                  {"controller", true}}})}}));
  const api::PodResourceClaim templated{"gpu", std::nullopt, std::string("one-gpu")};
  const struct {
    const char* name;
    api::Pod pod;
    Code code;
    std::string message;
  } cases[] = {
      {"no claims", podWith("p", {}), Code::kSuccess, ""},
      {"a claim that exists", podWith("p", {byName("present")}), Code::kSuccess, ""},
      {"a claim that does not", podWith("p", {byName("gone")}), Code::kUnschedulableAndUnresolvable,
       "could not find ResourceClaim \"ml/gone\""},
      {"a claim being deleted", podWith("p", {byName("leaving")}),
       Code::kUnschedulableAndUnresolvable, "resourceclaim \"leaving\" is being deleted"},
      {"a template claim not generated yet", podWith("p", {templated}),
       Code::kUnschedulableAndUnresolvable, "pod \"ml/p\": ResourceClaim not created yet"},
      {"a template claim generated for the pod",
       podWith("p", {templated}, {{"gpu", "p-gpu-abcde"}}), Code::kSuccess, ""},
      {"a template claim that needed none", podWith("p", {templated}, {{"gpu", std::nullopt}}),
       Code::kSuccess, ""},
      {"a template claim of another pod", podWith("p", {templated}, {{"gpu", "other-gpu-abcde"}}),
       Code::kUnschedulableAndUnresolvable,
       "ResourceClaim ml/other-gpu-abcde was not created for pod ml/p (pod is not owner)"},
  };
  for (const auto& c : cases) {
    const Status s = plugin.preEnqueue(c.pod);
    EXPECT_EQ(s.code(), c.code) << c.name;
    EXPECT_EQ(s.message(), c.message) << c.name;
  }
}

// Reserve puts the allocation in flight: the next pod's cycle sees the device in use and the
// node cannot serve it; Unreserve gives the device back.
TEST_F(DynamicResourcesTest, AnInFlightAllocationKeepsTheDeviceFromTheNextPod) {
  state->onClaim(claim("a"));
  state->onClaim(claim("b"));
  const api::Pod a = podWith("a", {byName("a")});
  const api::Pod b = podWith("b", {byName("b")});
  PreFilterResult r;

  CycleState sa;
  ASSERT_TRUE(plugin.preFilter(sa, a, handle.snapshot(), r).ok());
  ASSERT_TRUE(plugin.filter(sa, a, n1).ok());
  ASSERT_TRUE(plugin.reserve(sa, a, "n1").ok());
  EXPECT_TRUE(state->hasPendingAllocation("a-uid"));

  CycleState sb;
  ASSERT_TRUE(plugin.preFilter(sb, b, handle.snapshot(), r).ok());
  const Status rejected = plugin.filter(sb, b, n1);
  EXPECT_EQ(rejected.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(rejected.message(), "cannot allocate all claims");
  ASSERT_EQ(rejected.details().size(), 1u);
  EXPECT_NE(rejected.details()[0].find("claim b"), std::string::npos) << rejected.details()[0];

  // The claim being allocated cannot be used by another pod meanwhile.
  const api::Pod sharer = podWith("sharer", {byName("a")});
  CycleState ss;
  const Status inFlight = plugin.preFilter(ss, sharer, handle.snapshot(), r);
  EXPECT_EQ(inFlight.message(), "resource claim ml/a is in the process of being allocated");

  plugin.unreserve(sa, a, "n1");
  EXPECT_FALSE(state->hasPendingAllocation("a-uid"));
  CycleState sb2;
  ASSERT_TRUE(plugin.preFilter(sb2, b, handle.snapshot(), r).ok());
  EXPECT_TRUE(plugin.filter(sb2, b, n1).ok());
}

// The slices are indexed once and the index kept across cycles: a slice that changes, arrives or
// goes is seen by the next cycle.
TEST_F(DynamicResourcesTest, TheNextCycleSeesSlicesThatChanged) {
  state->onClaim(claim("a"));
  state->onClaim(claim("b"));
  const api::Pod a = podWith("a", {byName("a")});
  const api::Pod b = podWith("b", {byName("b")});
  PreFilterResult r;
  auto fits = [&](const api::Pod& pod, const NodeInfo& node) {
    CycleState s;
    EXPECT_TRUE(plugin.preFilter(s, pod, handle.snapshot(), r).ok());
    return plugin.filter(s, pod, node).ok();
  };
  CycleState sa;
  ASSERT_TRUE(plugin.preFilter(sa, a, handle.snapshot(), r).ok());
  ASSERT_TRUE(plugin.filter(sa, a, n1).ok());
  ASSERT_TRUE(plugin.reserve(sa, a, "n1").ok());  // n1's one device is in flight
  EXPECT_FALSE(fits(b, n1));
  EXPECT_FALSE(fits(b, n1));  // the same slices: the kept index
  state->onSlice(dra::testjson::nodeSlice("n1", 2));
  EXPECT_TRUE(fits(b, n1));
  const NodeInfo n2{std::make_shared<api::Node>(NodeWrapper("n2").obj())};
  EXPECT_FALSE(fits(b, n2));
  state->onSlice(dra::testjson::nodeSlice("n2", 1));
  EXPECT_TRUE(fits(b, n2));
  state->onSliceDelete("n1-gpus");
  EXPECT_FALSE(fits(b, n1));
  EXPECT_TRUE(fits(b, n2));
}

// A claim allocated on n2 only: n1 is refused with upstream's reason; a full reservedFor list
// refuses every new consumer.
TEST_F(DynamicResourcesTest, AllocatedClaimsBindThePodToTheirNodes) {
  json allocated = claim("here");
  allocated["status"] = {
      {"allocation",
       {{"devices",
         {{"results", json::array({{{"request", "gpu"},
                                    {"driver", "gpu.example.com"},
                                    {"pool", "n2"},
                                    {"device", "gpu-0"}}})}}},
        {"nodeSelector",
         {{"nodeSelectorTerms",
           json::array({{{"matchFields", json::array({{{"key", "metadata.name"},
                                                       {"operator", "In"},
                                                       {"values", {"n2"}}}})}}})}}}}}};
  state->onClaim(allocated);
  const api::Pod p = podWith("p", {byName("here")});
  PreFilterResult r;
  CycleState s;
  ASSERT_TRUE(plugin.preFilter(s, p, handle.snapshot(), r).ok());
  const Status onN1 = plugin.filter(s, p, n1);
  EXPECT_EQ(onN1.message(), "resourceclaim not available on the node");
  NodeInfo n2{std::make_shared<api::Node>(NodeWrapper("n2").obj())};
  EXPECT_TRUE(plugin.filter(s, p, n2).ok());

  json full = allocated;
  full["metadata"]["name"] = "full";
  full["metadata"]["uid"] = "full-uid";
  json reserved = json::array();
  for (size_t i = 0; i < dra::kReservedForMaxSize; ++i) {
    reserved.push_back({{"resource", "pods"},
                        {"name", "x" + std::to_string(i)},
                        {"uid", "x" + std::to_string(i)}});
  }
  full["status"]["reservedFor"] = reserved;
  state->onClaim(full);
  CycleState s2;
  const Status inUse = plugin.preFilter(s2, podWith("q", {byName("full")}), handle.snapshot(), r);
  EXPECT_EQ(inUse.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(inUse.message(), "resourceclaim in use");
}

TEST_F(DynamicResourcesTest, PreFilterSkipsPodsWithoutClaimsAndNamesAMissingClass) {
  PreFilterResult r;
  CycleState s;
  EXPECT_TRUE(plugin.preFilter(s, podWith("p", {}), handle.snapshot(), r).isSkip());
  json noClass = claim("odd");
  noClass["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] = "missing";
  state->onClaim(noClass);
  CycleState s2;
  const Status st = plugin.preFilter(s2, podWith("p", {byName("odd")}), handle.snapshot(), r);
  EXPECT_EQ(st.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(st.message(), "request gpu: device class missing does not exist");
}

// Hints: the pod's own claim appearing or changing status wakes it; a claim of someone else
// does not, unless it was deallocated (its devices are free); the pod's generated claim named
// in its status wakes it once the claim exists.
TEST_F(DynamicResourcesTest, HintsWakeThePodOnlyForChangesThatCanHelpIt) {
  state->onClaim(claim("mine"));
  const api::Pod p = podWith("p", {byName("mine")});
  QueueingHintFn claimHint;
  QueueingHintFn podHint;
  for (const auto& e : plugin.eventsToRegister()) {
    if (e.event.resource == EventResource::kResourceClaim) claimHint = e.hint;
    if (e.event.resource == EventResource::kPod) podHint = e.hint;
  }
  ASSERT_TRUE(claimHint && podHint);
  auto typed = [](const json& j) { return dra::DraState::decodeClaim(j)->claim; };
  json allocated = claim("mine");
  allocated["status"] = {{"allocation", {{"devices", {{"results", json::array()}}}}}};
  EXPECT_EQ(claimHint(p, std::monostate{}, typed(claim("mine"))), QueueingHint::kQueue);
  EXPECT_EQ(claimHint(p, typed(claim("mine")), typed(claim("mine"))), QueueingHint::kSkip);
  EXPECT_EQ(claimHint(p, typed(claim("mine")), typed(allocated)), QueueingHint::kQueue);
  json otherAllocated = allocated;
  otherAllocated["metadata"]["name"] = "other";
  otherAllocated["metadata"]["uid"] = "other-uid";
  EXPECT_EQ(claimHint(p, std::monostate{}, typed(claim("other"))), QueueingHint::kSkip);
  EXPECT_EQ(claimHint(p, typed(otherAllocated), typed(claim("other"))), QueueingHint::kQueue);

  const api::PodResourceClaim templated{"gpu", std::nullopt, std::string("t")};
  const api::Pod waiting = podWith("w", {templated});
  state->onClaim(claim("w-gpu-1", {{"ownerReferences", json::array({{{"apiVersion", "v1"},
                                                                     {"kind", "Pod"},
                                                                     {"name", "w"},
                                                                     {"uid", "w-uid"},
                                                                     {"controller", true}}})}}));
  auto named = std::make_shared<api::Pod>(podWith("w", {templated}, {{"gpu", "w-gpu-1"}}));
  EXPECT_EQ(podHint(waiting, std::make_shared<api::Pod>(waiting), named), QueueingHint::kQueue);
  auto other = std::make_shared<api::Pod>(podWith("x", {templated}, {{"gpu", "w-gpu-1"}}));
  EXPECT_EQ(podHint(waiting, std::make_shared<api::Pod>(waiting), other), QueueingHint::kSkip);
}

// KEP 5004: a class serving example.com/gpu. A node whose allocatable lists the resource gets
// it from its device plugin (nothing to allocate); one without gets devices through the pod's
// in-memory claim, in flight from Reserve under the pod's own uid; a claim an earlier attempt
// left is refused on every node until PostFilter deletes it.
TEST_F(DynamicResourcesTest, ExtendedResourcesComeFromDevicesWhereNoDevicePluginServesThem) {
  json cls = gpuClass();
  cls["spec"]["extendedResourceName"] = "example.com/gpu";
  state->onClass(cls);
  api::Pod pod = PodWrapper("trainer").req({{"example.com/gpu", "1"}}).obj();
  pod.metadata.namespace_ = "ml";
  PreFilterResult r;

  CycleState s;
  ASSERT_TRUE(plugin.preFilter(s, pod, handle.snapshot(), r).ok());
  NodeInfo withPlugin{std::make_shared<api::Node>(
      NodeWrapper("n1").capacity({{"example.com/gpu", "4"}, {"pods", "110"}}).obj())};
  EXPECT_TRUE(plugin.filter(s, pod, withPlugin).ok());
  EXPECT_TRUE(plugin.reserve(s, pod, "n1").ok());
  EXPECT_FALSE(state->hasPendingAllocation("extended-resources/trainer-uid"));
  EXPECT_TRUE(plugin.preBindPreFlight(s, pod, "n1").isSkip());

  CycleState s2;
  ASSERT_TRUE(plugin.preFilter(s2, pod, handle.snapshot(), r).ok());
  ASSERT_TRUE(plugin.filter(s2, pod, n1).ok());
  ASSERT_TRUE(plugin.reserve(s2, pod, "n1").ok());
  EXPECT_TRUE(state->hasPendingAllocation("extended-resources/trainer-uid"));
  EXPECT_TRUE(plugin.preBindPreFlight(s2, pod, "n1").ok());

  // n1's one device is in flight: a second pod finds none.
  api::Pod other = PodWrapper("other").req({{"example.com/gpu", "1"}}).obj();
  other.metadata.namespace_ = "ml";
  CycleState s3;
  ASSERT_TRUE(plugin.preFilter(s3, other, handle.snapshot(), r).ok());
  const Status none = plugin.filter(s3, other, n1);
  EXPECT_EQ(none.message(), "cannot allocate all claims");
  ASSERT_EQ(none.details().size(), 1u);
  EXPECT_NE(none.details()[0].find("claim <extended-resources>, request container-0-request-0"),
            std::string::npos)
      << none.details()[0];
  plugin.unreserve(s2, pod, "n1");
  EXPECT_FALSE(state->hasPendingAllocation("extended-resources/trainer-uid"));

  // A claim of an earlier attempt.
  json stale = claim("trainer-extended-resources-abcde",
                     {{"annotations", {{"resource.kubernetes.io/extended-resource-claim", "true"}}},
                      {"ownerReferences", json::array({{{"apiVersion", "v1"},
                                                        {"kind", "Pod"},
                                                        {"name", "trainer"},
                                                        {"uid", "trainer-uid"},
                                                        {"controller", true}}})}});
  state->onClaim(stale);
  CycleState s4;
  ASSERT_TRUE(plugin.preFilter(s4, pod, handle.snapshot(), r).ok());
  const Status refused = plugin.filter(s4, pod, n1);
  EXPECT_EQ(refused.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(refused.message(), "cannot schedule extended resource claim");

  // Without a class for the resource the plugin has nothing to do.
  api::Pod plain = PodWrapper("plain").req({{"example.com/fpga", "1"}}).obj();
  CycleState s5;
  EXPECT_TRUE(plugin.preFilter(s5, plain, handle.snapshot(), r).isSkip());
}

// A prioritized list: the node where the first choice (an a100) was allocated scores 8, the one
// where only the second (a t4) was, 7; normalized, 100 and 87. A claim without a list skips
// Score altogether.
TEST_F(DynamicResourcesTest, ScoreFavoursTheNodeThatGotAnEarlierChoiceOfAPrioritizedList) {
  auto modelSlice = [](const std::string& node, const std::string& model) {
    json j = dra::testjson::nodeSlice(node, 1);
    j["spec"]["devices"][0]["attributes"] = {{"model", {{"string", model}}}};
    return j;
  };
  state->onSlice(modelSlice("n1", "a100"));  // replaces n1's plain device
  state->onSlice(modelSlice("n2", "t4"));
  json c = claim("either");
  auto sub = [](const std::string& name, const std::string& model) {
    return json{
        {"name", name},
        {"deviceClassName", "gpu"},
        {"selectors",
         json::array({{{"cel",
                        {{"expression", "device.attributes[\"gpu.example.com\"].model == \"" +
                                            model + "\""}}}}})}};
  };
  c["spec"]["devices"]["requests"] = json::array(
      {{{"name", "gpu"}, {"firstAvailable", {sub("big", "a100"), sub("small", "t4")}}}});
  state->onClaim(c);
  const api::Pod pod = podWith("p", {byName("either")});
  const NodeInfo n2{std::make_shared<api::Node>(NodeWrapper("n2").obj())};
  CycleState s;
  PreFilterResult r;
  ASSERT_TRUE(plugin.preFilter(s, pod, handle.snapshot(), r).ok());
  ASSERT_TRUE(plugin.filter(s, pod, n1).ok());
  ASSERT_TRUE(plugin.filter(s, pod, n2).ok());
  ASSERT_TRUE(plugin.preScore(s, pod, {&n1, &n2}).ok());
  int64_t s1 = -1;
  int64_t s2 = -1;
  ASSERT_TRUE(plugin.score(s, pod, n1, s1).ok());
  ASSERT_TRUE(plugin.score(s, pod, n2, s2).ok());
  EXPECT_EQ(s1, 8);
  EXPECT_EQ(s2, 7);
  std::vector<NodeScore> scores = {{"n1", s1}, {"n2", s2}};
  ASSERT_TRUE(plugin.normalizeScore(s, pod, scores).ok());
  EXPECT_EQ(scores[0].score, 100);
  EXPECT_EQ(scores[1].score, 87);

  state->onClaim(claim("plain"));
  CycleState plainState;
  const api::Pod plainPod = podWith("q", {byName("plain")});
  ASSERT_TRUE(plugin.preFilter(plainState, plainPod, handle.snapshot(), r).ok());
  EXPECT_TRUE(plugin.preScore(plainState, plainPod, {&n1}).isSkip());
}

// DRASchedulerFilterTimeout: a search longer than filterTimeout makes the node unschedulable
// with upstream's message, not the pod an error.
TEST_F(DynamicResourcesTest, AFilterLongerThanFilterTimeoutRefusesTheNode) {
  json devs = json::array();
  for (int i = 0; i < 38; ++i) {
    devs.push_back(
        {{"name", "gpu-" + std::to_string(i)}, {"attributes", {{"numa", {{"int", i % 2}}}}}});
  }
  json big = dra::testjson::nodeSlice("n1", 0);
  big["spec"]["devices"] = devs;
  state->onSlice(big);
  json c = claim("twenty");
  c["spec"]["devices"]["requests"][0]["exactly"]["count"] = 20;
  c["spec"]["devices"]["constraints"] = json::array({{{"matchAttribute", "gpu.example.com/numa"}}});
  state->onClaim(c);
  DynamicResources quick(handle, state,
                         DynamicResourcesArgs::fromJson({{"filterTimeout", "1ms"}}, kDefaultGates));
  const api::Pod pod = podWith("p", {byName("twenty")});
  CycleState s;
  PreFilterResult r;
  ASSERT_TRUE(quick.preFilter(s, pod, handle.snapshot(), r).ok());
  const Status st = quick.filter(s, pod, n1);
  EXPECT_EQ(st.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(st.message(), "timed out trying to allocate devices");
}

TEST(DynamicResourcesArgsTest, DecodesDurationsAndRefusesWhatUpstreamRefuses) {
  const DynamicResourcesArgs defaults = DynamicResourcesArgs::fromJson(nullptr, kDefaultGates);
  EXPECT_EQ(defaults.filterTimeout, std::chrono::seconds(10));
  EXPECT_EQ(defaults.bindingTimeout, std::chrono::seconds(600));
  const DynamicResourcesArgs set = DynamicResourcesArgs::fromJson(
      {{"filterTimeout", "0"}, {"bindingTimeout", "1m30s"}, {"kind", "DynamicResourcesArgs"}},
      kDefaultGates);
  EXPECT_EQ(set.filterTimeout, std::chrono::seconds(0));
  EXPECT_EQ(set.bindingTimeout, std::chrono::seconds(90));
  const struct {
    json args;
    std::string error;
  } bad[] = {
      {{{"filterTimeout", "-1s"}},
       "filterTimeout: Invalid value: \"-1s\": must be zero or positive"},
      {{{"bindingTimeout", "500ms"}},
       "bindingTimeout: Invalid value: \"500ms\": must be at least 1 second"},
      {{{"filterTimeout", "soon"}}, "filterTimeout: invalid duration \"soon\""},
      {{{"filterTimeout", 10}}, "filterTimeout"},
      {{{"timeout", "1s"}}, "timeout"},
  };
  for (const auto& b : bad) {
    try {
      (void)DynamicResourcesArgs::fromJson(b.args, kDefaultGates);
      ADD_FAILURE() << b.args.dump() << " was accepted";
    } catch (const PluginArgsError& e) {
      EXPECT_NE(std::string(e.what()).find(b.error), std::string::npos) << e.what();
    }
  }  // With DRASchedulerFilterTimeout off, the gates handed to decode forbid filterTimeout.
  features::Gates noTimeout;
  noTimeout.force(features::Feature::kDRASchedulerFilterTimeout, false);
  try {
    (void)DynamicResourcesArgs::fromJson({{"filterTimeout", "1s"}}, noTimeout);
    ADD_FAILURE() << "filterTimeout accepted with its gate off";
  } catch (const PluginArgsError& e) {
    EXPECT_NE(std::string(e.what()).find("Forbidden: DRASchedulingFilterTimeout feature gate is "
                                         "disabled"),
              std::string::npos)
        << e.what();
  }
}

// A Handle that records what DraState reports to the queue.
class RecordingHandle final : public testing::HandleBase {
 public:
  [[nodiscard]] const NodeInfoLister& snapshot() const override { return lister_; }
  void clusterEvent(const ClusterEvent& event, const EventObject&, const EventObject&) override {
    events.push_back(event.label());
  }
  std::vector<std::string> events;

 private:
  testing::FakeLister lister_;
};

// A driver publishing its devices after a pod was rejected: the state watches the three kinds
// (v1, falling back to v1beta2 and v1beta1, optional), reports the slice's arrival as
// ResourceSliceAdd, and DynamicResources registered that event without a hint, so the pod is
// retried.
TEST(DraStateTest, ASliceArrivingIsAnEventThatRetriesRejectedPods) {
  RecordingHandle handle;
  dra::DraState state(handle);
  EXPECT_EQ(
      handle.watchedPaths(),
      (std::vector<std::string>{
          "/apis/resource.k8s.io/v1/resourceclaims", "/apis/resource.k8s.io/v1/resourceslices",
          "/apis/resource.k8s.io/v1/deviceclasses", "/apis/resource.k8s.io/v1/devicetaintrules"}));
  state.onSlice(dra::testjson::nodeSlice("late", 2));
  state.onSlice(dra::testjson::nodeSlice("late", 3));
  state.onClass(gpuClass());
  EXPECT_EQ(handle.events, (std::vector<std::string>{"resource.k8s.io/ResourceSliceAdd",
                                                     "resource.k8s.io/ResourceSliceUpdate",
                                                     "resource.k8s.io/DeviceClassAdd"}));
  DynamicResources plugin(handle, std::make_shared<dra::DraState>());
  bool registered = false;
  for (const auto& e : plugin.eventsToRegister()) {
    if (e.event.matches({EventResource::kResourceSlice, kAdd, {}})) registered = !e.hint;
  }
  EXPECT_TRUE(registered) << "ResourceSlice Add is registered, without a hint (always retried)";
}

// DRADeviceTaintRules: a rule's taint lands on the devices its selector picks (driver, pool,
// device; unset matches any) and nowhere else; the allocator then keeps untolerated pods off
// them; the rule's removal takes the taint away and is reported as the slices' update.
TEST(DraStateTest, DeviceTaintRulesTaintTheDevicesTheySelect) {
  RecordingHandle handle;
  dra::DraState state(handle);
  state.onSlice(dra::testjson::nodeSlice("n1", 2));
  state.onSlice(dra::testjson::nodeSlice("n2", 1));
  auto rule = [](const std::string& name, json selector) {
    return json{
        {"apiVersion", "resource.k8s.io/v1beta2"},
        {"kind", "DeviceTaintRule"},
        {"metadata", meta(name)},
        {"spec",
         {{"deviceSelector", std::move(selector)},
          {"taint", {{"key", "maintenance"}, {"value", "true"}, {"effect", "NoSchedule"}}}}}};
  };
  handle.events.clear();
  state.onTaintRule(rule("one-device", {{"pool", "n1"}, {"device", "gpu-1"}}));
  auto taintsOf = [&](const std::string& sliceName) {
    std::vector<size_t> out;
    for (const auto& s : *state.slices()) {
      if (s->metadata.name != sliceName) continue;
      for (const auto& d : s->spec.devices) out.push_back(d.taints.size());
    }
    return out;
  };
  EXPECT_EQ(taintsOf("n1-gpus"), (std::vector<size_t>{0, 1}));
  EXPECT_EQ(taintsOf("n2-gpus"), (std::vector<size_t>{0}));
  EXPECT_EQ(handle.events, std::vector<std::string>{"resource.k8s.io/ResourceSliceUpdate"});
  state.onTaintRule(rule("whole-driver", {{"driver", "gpu.example.com"}}));
  EXPECT_EQ(taintsOf("n1-gpus"), (std::vector<size_t>{1, 2}));
  EXPECT_EQ(taintsOf("n2-gpus"), (std::vector<size_t>{1}));
  state.onTaintRule(rule("other-driver", {{"driver", "nic.example.com"}}));
  EXPECT_EQ(taintsOf("n2-gpus"), (std::vector<size_t>{1}));
  state.onTaintRuleDelete("whole-driver");
  state.onTaintRuleDelete("one-device");
  EXPECT_EQ(taintsOf("n1-gpus"), (std::vector<size_t>{0, 0}));

  // Through the plugin: the tainted device is not handed out.
  auto shared = std::make_shared<dra::DraState>();
  shared->onClass(gpuClass());
  shared->onSlice(dra::testjson::nodeSlice("n1", 1));
  shared->onTaintRule(rule("down", {{"device", "gpu-0"}}));
  shared->onClaim(claim("c"));
  testing::FakeHandle fake;
  DynamicResources plugin(fake, shared);
  const api::Pod pod = podWith("p", {byName("c")});
  const NodeInfo n1{std::make_shared<api::Node>(NodeWrapper("n1").obj())};
  CycleState s;
  PreFilterResult r;
  ASSERT_TRUE(plugin.preFilter(s, pod, fake.snapshot(), r).ok());
  const Status st = plugin.filter(s, pod, n1);
  EXPECT_EQ(st.message(), "cannot allocate all claims");
  ASSERT_EQ(st.details().size(), 1u);
  EXPECT_NE(st.details()[0].find("taint"), std::string::npos) << st.details()[0];
  shared->onTaintRuleDelete("down");
  CycleState s2;
  ASSERT_TRUE(plugin.preFilter(s2, pod, fake.snapshot(), r).ok());
  EXPECT_TRUE(plugin.filter(s2, pod, n1).ok());
}

}  // namespace
}  // namespace ksched::plugins
