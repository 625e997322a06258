// Claims on groups (DRAWorkloadResourceClaims, KEP-5729) in DynamicResources, over a DraState and
// a PodGroupIndex fed by hand: which claim a member pod's entry resolves to (upstream's
// NameFromPodGroup and BindTo tables), the group's reservation accepted for its members
// (IsReservedForPod's table), one allocation made by the first member placed and taken by the
// others of the same cycle, and given back with the last. PreBind's writes are covered through
// `ksched simulate` (tests/integration/simulate_gang_test.cc).
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "plugins/dynamic_resources/dynamic_resources.h"
#include "tests/support/plugin_test_util.h"

namespace ksched::plugins {
namespace {

using nlohmann::json;
using testutil::NodeWrapper;
using testutil::PodWrapper;

json groupMeta(const std::string& name) {
  return {{"name", name}, {"namespace", "ml"}, {"uid", name + "-uid"}, {"resourceVersion", "1"}};
}

json gpus() {
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "DeviceClass"},
          {"metadata", {{"name", "gpu"}, {"uid", "gpu-uid"}}},
          {"spec",
           {{"selectors",
             json::array({{{"cel", {{"expression", "device.driver == \"gpu.example.com\""}}}}})}}}};
}

json rackSlice(const std::string& node) {
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceSlice"},
          {"metadata", {{"name", node + "-gpus"}, {"uid", node + "-gpus"}}},
          {"spec",
           {{"driver", "gpu.example.com"},
            {"nodeName", node},
            {"pool", {{"name", node}, {"generation", 1}, {"resourceSliceCount", 1}}},
            {"devices", json::array({{{"name", "gpu-0"}}})}}}};
}

// A claim of one gpu; `owner`: the uid of its controller (a PodGroup's or a pod's), if any.
json gpuClaim(const std::string& name, const std::string& owner = "",
              const std::string& ownerKind = "PodGroup") {
  json m = groupMeta(name);
  if (!owner.empty()) {
    m["ownerReferences"] = json::array({{{"apiVersion", "scheduling.k8s.io/v1beta1"},
                                         {"kind", ownerKind},
                                         {"name", "owner"},
                                         {"uid", owner},
                                         {"controller", true}}});
  }
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceClaim"},
          {"metadata", m},
          {"spec",
           {{"devices",
             {{"requests",
               json::array({{{"name", "gpu"}, {"exactly", {{"deviceClassName", "gpu"}}}}})}}}}}};
}

api::PodResourceClaim named(const std::string& entry, const std::string& claim) {
  return {entry, claim, std::nullopt};
}
api::PodResourceClaim templated(const std::string& entry, const std::string& tmpl) {
  return {entry, std::nullopt, tmpl};
}

std::shared_ptr<const api::PodGroup> group(
    const std::string& name, std::vector<api::PodGroupResourceClaim> claims,
    std::vector<api::PodGroupResourceClaimStatus> statuses = {}) {
  auto pg = std::make_shared<api::PodGroup>();
  pg->apiVersion = "scheduling.k8s.io/v1beta1";
  pg->metadata.namespace_ = "ml";
  pg->metadata.name = name;
  pg->metadata.uid = name + "-uid";
  pg->spec.schedulingPolicy.gangMinCount = 4;
  pg->spec.resourceClaims = std::move(claims);
  pg->status.resourceClaimStatuses = std::move(statuses);
  return pg;
}

api::Pod member(const std::string& name, std::vector<api::PodResourceClaim> claims,
                const std::string& podGroup = "train") {
  api::Pod p = PodWrapper(name).obj();
  p.metadata.namespace_ = "ml";
  p.metadata.uid = name + "-uid";
  p.spec.resourceClaims = std::move(claims);
  if (!podGroup.empty()) p.spec.schedulingGroup = api::PodSchedulingGroup{podGroup};
  return p;
}

features::Gates gates(bool on) {
  features::Gates g;
  g.force(features::Feature::kGenericWorkload, true);
  g.force(features::Feature::kDRAWorkloadResourceClaims, on);
  return g;
}

class GroupClaimsTest : public ::testing::Test {
 protected:
  explicit GroupClaimsTest(bool on = true) : state(std::make_shared<dra::DraState>()) {
    handle.setFeatures(gates(on));
    plugin = std::make_unique<DynamicResources>(handle, state);
    state->onClass(gpus());
    // Only rack b's node reaches a device.
    state->onSlice(rackSlice("b1"));
  }
  void setGroup(std::shared_ptr<const api::PodGroup> pg) {
    plugin->podGroups()->set(std::move(pg));
  }

  testing::FakeHandle handle;
  std::shared_ptr<dra::DraState> state;
  std::unique_ptr<DynamicResources> plugin;
  NodeInfo a1{std::make_shared<api::Node>(NodeWrapper("a1").obj())};
  NodeInfo b1{std::make_shared<api::Node>(NodeWrapper("b1").obj())};
};

class GroupClaimsGateOffTest : public GroupClaimsTest {
 protected:
  GroupClaimsGateOffTest() : GroupClaimsTest(false) {}
};

// Upstream's BindTo and NameFromPodGroup rows: only an entry equal in every field to one of the
// group's refers to the group's claim; a template's claim is named by the PodGroup's status and
// must be the group's.
TEST_F(GroupClaimsTest, AnEntryEqualToTheGroupsRefersToTheGroupsClaim) {
  state->onClaim(gpuClaim("shared"));
  state->onClaim(gpuClaim("own"));
  state->onClaim(gpuClaim("train-gpu-x1y2z", "train-uid"));
  state->onClaim(gpuClaim("p-gpu-abcde", "p-uid", "Pod"));
  const struct {
    const char* name;
    std::shared_ptr<const api::PodGroup> group;  // null: not known
    api::Pod pod;
    std::string error;
    std::vector<std::string> claims;
    std::vector<char> forGroup;
  } cases[] = {
      {"claim with resourceClaimName matching the PodGroup's",
       group("train", {{"gpu", "shared", {}}}),
       member("p", {named("gpu", "shared")}),
       "",
       {"shared"},
       {1}},
      {"claim with resourceClaimTemplateName matching, generated for the group",
       group("train", {{"gpu", {}, "one-gpu"}}, {{"gpu", "train-gpu-x1y2z"}}),
       member("p", {templated("gpu", "one-gpu")}),
       "",
       {"train-gpu-x1y2z"},
       {1}},
      {"template claim not generated for the group yet",
       group("train", {{"gpu", {}, "one-gpu"}}),
       member("p", {templated("gpu", "one-gpu")}),
       "PodGroup ml/train: ResourceClaim not created yet",
       {},
       {}},
      {"template claim the group did not need",
       group("train", {{"gpu", {}, "one-gpu"}}, {{"gpu", {}}}),
       member("p", {templated("gpu", "one-gpu")}),
       "",
       {},
       {}},
      {"template claim not owned by the group",
       group("train", {{"gpu", {}, "one-gpu"}}, {{"gpu", "p-gpu-abcde"}}),
       member("p", {templated("gpu", "one-gpu")}),
       "ResourceClaim ml/p-gpu-abcde was not created for PodGroup ml/train (PodGroup is not owner)",
       {},
       {}},
      {"find the matching claim among the group's",
       group("train",
             {{"not-gpu", "shared", {}}, {"nor-gpu", "shared", {}}, {"gpu", "shared", {}}}),
       member("p", {named("gpu", "shared")}),
       "",
       {"shared"},
       {1}},
      {"no matching claim in the PodGroup",
       group("train", {{"not-gpu", "shared", {}}, {"nor-gpu", "shared", {}}}),
       member("p", {named("gpu", "shared")}),
       "",
       {"shared"},
       {0}},
      {"claim name mismatch",
       group("train", {{"other", "shared", {}}}),
       member("p", {named("gpu", "shared")}),
       "",
       {"shared"},
       {0}},
      {"resourceClaimName mismatch",
       group("train", {{"gpu", "shared", {}}}),
       member("p", {named("gpu", "own")}),
       "",
       {"own"},
       {0}},
      {"resourceClaimTemplateName mismatch: the pod's own template claim",
       group("train", {{"gpu", {}, "other-template"}}, {{"gpu", "train-gpu-x1y2z"}}),
       member("p", {templated("gpu", "one-gpu")}),
       "pod \"ml/p\": ResourceClaim not created yet",
       {},
       {}},
      {"a pod of another group",
       group("other", {{"gpu", "shared", {}}}),
       member("p", {named("gpu", "shared")}),
       "",
       {"shared"},
       {0}},
      {"PodGroup not known: the pod's own claims",
       nullptr,
       member("p", {named("gpu", "shared")}),
       "",
       {"shared"},
       {0}},
      {"a pod of no group",
       group("train", {{"gpu", "shared", {}}}),
       member("p", {named("gpu", "shared")}, ""),
       "",
       {"shared"},
       {0}},
  };
  for (const auto& c : cases) {
    plugin->podGroups()->remove("ml", "train");
    plugin->podGroups()->remove("ml", "other");
    if (c.group) setGroup(c.group);
    const auto pc = plugin->podClaims(c.pod);
    EXPECT_EQ(pc.error, c.error) << c.name;
    std::vector<std::string> names;
    for (const auto& e : pc.claims) names.push_back(e->claim->metadata.name);
    EXPECT_EQ(names, c.claims) << c.name;
    EXPECT_EQ(pc.forGroup, c.forGroup) << c.name;
    EXPECT_EQ(pc.podGroup != nullptr,
              std::find(c.forGroup.begin(), c.forGroup.end(), 1) != c.forGroup.end())
        << c.name;
    const Status s = plugin->preEnqueue(c.pod);
    EXPECT_EQ(s.message(), c.error) << c.name;
    EXPECT_EQ(s.code(), c.error.empty() ? Code::kSuccess : Code::kUnschedulableAndUnresolvable)
        << c.name;
  }
}

// With the gate off the pod's entry is its own, as before: its template claim is the one its
// own status names.
TEST_F(GroupClaimsGateOffTest, TheEntryIsThePodsOwn) {
  EXPECT_EQ(plugin->podGroups(), nullptr);
  const api::Pod p = member("p", {templated("gpu", "one-gpu")});
  EXPECT_EQ(plugin->preEnqueue(p).message(), "pod \"ml/p\": ResourceClaim not created yet");
  for (const auto& e : plugin->eventsToRegister()) {
    EXPECT_NE(e.event.resource, EventResource::kPodGroup);
  }
}

// Upstream's IsReservedForPod rows.
TEST(GroupClaimsReservedFor, APodIsReservedThroughItsGroupOnlyWithTheGate) {
  auto claimFor = [](std::vector<api::ResourceClaimConsumerReference> refs) {
    api::ResourceClaim c;
    c.status.reservedFor = std::move(refs);
    return c;
  };
  const api::ResourceClaimConsumerReference pod{"", "pods", "podReserved", "podReserved-uid"};
  const api::ResourceClaimConsumerReference otherPod{"", "pods", "podOther", "podOther-uid"};
  const api::ResourceClaimConsumerReference grp{"scheduling.k8s.io", "podgroups", "pgReserved",
                                                "pgReserved-uid"};
  const api::ResourceClaimConsumerReference otherGrp{"scheduling.k8s.io", "podgroups", "pgOther",
                                                     "pgOther-uid"};
  const struct {
    const char* name;
    api::Pod pod;
    api::ResourceClaim claim;
    bool acceptGroup;
    bool want;
  } cases[] = {
      {"not-reserved", member("podNotReserved", {}, ""), claimFor({}), false, false},
      {"reserved-for-pod", member("podReserved", {}, ""), claimFor({pod}), false, true},
      {"reserved-for-other-pod", member("podNotReserved", {}, ""), claimFor({pod}), false, false},
      {"multiple-reservations-including-pod", member("podReserved", {}, ""),
       claimFor({pod, otherPod}), false, true},
      {"multiple-reservations-excluding-pod", member("podNotReserved", {}, ""),
       claimFor({pod, otherPod}), false, false},
      {"reserved-for-podgroup", member("podNotReserved", {}, "pgReserved"), claimFor({grp}), true,
       true},
      {"podgroup-disabled", member("podNotReserved", {}, "pgReserved"), claimFor({grp}), false,
       false},
      {"reserved-for-pod-and-podgroup", member("podReserved", {}, "pgReserved"),
       claimFor({pod, grp}), true, true},
      {"reserved-for-other-podgroup", member("podNotReserved", {}, "pgNotReserved"),
       claimFor({pod}), true, false},
      {"multiple-reservations-including-podgroup", member("podNotReserved", {}, "pgReserved"),
       claimFor({grp, otherGrp}), true, true},
      {"multiple-reservations-excluding-podgroup", member("podNotReserved", {}, "pgNotReserved"),
       claimFor({grp, otherGrp}), true, false},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(dra::reservedForPodOrGroup(c.pod, c.claim, c.acceptGroup), c.want) << c.name;
  }
  const auto ref = dra::groupReference(*group("pgReserved", {}));
  EXPECT_EQ(ref, grp);
}

// One pod-group cycle: the first member allocates the group's claim on b1 (the only node with a
// device); the members placed after it take that allocation in flight, so a1 is refused to
// them as a node the allocation does not reach; a pod outside the group waits for the
// allocation to be written. The group rejected, its members give their holds back and the
// allocation is gone with the last.
TEST_F(GroupClaimsTest, TheFirstMemberAllocatesAndTheOthersShareItUntilTheGroupIsTakenBack) {
  state->onClaim(gpuClaim("train-gpu-x1y2z", "train-uid"));
  setGroup(group("train", {{"gpu", {}, "one-gpu"}}, {{"gpu", "train-gpu-x1y2z"}}));
  std::vector<api::Pod> pods;
  for (int i = 1; i <= 4; ++i) {
    pods.push_back(member("m" + std::to_string(i), {templated("gpu", "one-gpu")}));
  }
  std::vector<CycleState> states(pods.size());
  PreFilterResult r;
  ASSERT_TRUE(plugin->preFilter(states[0], pods[0], handle.snapshot(), r).ok());
  EXPECT_EQ(plugin->filter(states[0], pods[0], a1).message(), "cannot allocate all claims");
  ASSERT_TRUE(plugin->filter(states[0], pods[0], b1).ok());
  ASSERT_TRUE(plugin->reserve(states[0], pods[0], "b1").ok());
  ASSERT_TRUE(state->hasPendingAllocation("train-gpu-x1y2z-uid"));
  for (size_t i = 1; i < pods.size(); ++i) {
    ASSERT_TRUE(plugin->preFilter(states[i], pods[i], handle.snapshot(), r).ok()) << i;
    const Status onA1 = plugin->filter(states[i], pods[i], a1);
    EXPECT_EQ(onA1.code(), Code::kUnschedulableAndUnresolvable) << i;
    EXPECT_EQ(onA1.message(), "resourceclaim not available on the node") << i;
    EXPECT_TRUE(plugin->filter(states[i], pods[i], b1).ok()) << i;
    ASSERT_TRUE(plugin->reserve(states[i], pods[i], "b1").ok()) << i;
    EXPECT_TRUE(plugin->preBindPreFlight(states[i], pods[i], "b1").ok()) << i;
  }

  // Not through the group: the claim is being allocated.
  CycleState outside;
  const Status waits = plugin->preFilter(
      outside, member("x", {named("gpu", "train-gpu-x1y2z")}, ""), handle.snapshot(), r);
  EXPECT_EQ(waits.message(),
            "resource claim ml/train-gpu-x1y2z is in the process of being allocated");

  // Taken back in reverse order: the allocation stays until the first member lets it go.
  for (size_t i = pods.size(); i-- > 1;) {
    plugin->unreserve(states[i], pods[i], "b1");
    EXPECT_TRUE(state->hasPendingAllocation("train-gpu-x1y2z-uid")) << i;
  }
  plugin->unreserve(states[0], pods[0], "b1");
  EXPECT_FALSE(state->hasPendingAllocation("train-gpu-x1y2z-uid"));
  // Idempotent: a second Unreserve gives back nothing.
  plugin->unreserve(states[1], pods[1], "b1");
  EXPECT_FALSE(state->hasPendingAllocation("train-gpu-x1y2z-uid"));
}

// A member placed while an allocation of another group is in flight does not take it.
TEST_F(GroupClaimsTest, AnotherGroupsAllocationInFlightIsNotShared) {
  state->onClaim(gpuClaim("shared"));
  setGroup(group("train", {{"gpu", "shared", {}}}));
  setGroup(group("other", {{"gpu", "shared", {}}}));
  const api::Pod first = member("m1", {named("gpu", "shared")});
  const api::Pod stranger = member("o1", {named("gpu", "shared")}, "other");
  PreFilterResult r;
  CycleState s1;
  ASSERT_TRUE(plugin->preFilter(s1, first, handle.snapshot(), r).ok());
  ASSERT_TRUE(plugin->filter(s1, first, b1).ok());
  ASSERT_TRUE(plugin->reserve(s1, first, "b1").ok());
  CycleState s2;
  EXPECT_EQ(plugin->preFilter(s2, stranger, handle.snapshot(), r).message(),
            "resource claim ml/shared is in the process of being allocated");
  plugin->unreserve(s1, first, "b1");
  EXPECT_FALSE(state->hasPendingAllocation("shared-uid"));
}

// Written and reserved for the PodGroup: every member may use it where it is allocated, has
// nothing to write, and PostFilter leaves a claim a group holds allocated (KEP-5729: a
// non-pod consumer's pods cannot be counted).
TEST_F(GroupClaimsTest, AClaimReservedForTheGroupServesEveryMember) {
  json written = gpuClaim("shared");
  written["status"] = {
      {"allocation",
       {{"devices",
         {{"results", json::array({{{"request", "gpu"},
                                    {"driver", "gpu.example.com"},
                                    {"pool", "b1"},
                                    {"device", "gpu-0"}}})}}},
        {"nodeSelector",
         {{"nodeSelectorTerms",
           json::array({{{"matchFields", json::array({{{"key", "metadata.name"},
                                                       {"operator", "In"},
                                                       {"values", {"b1"}}}})}}})}}}}},
      {"reservedFor", json::array({{{"apiGroup", "scheduling.k8s.io"},
                                    {"resource", "podgroups"},
                                    {"name", "train"},
                                    {"uid", "train-uid"}}})}};
  state->onClaim(written);
  setGroup(group("train", {{"gpu", "shared", {}}}));
  const api::Pod late = member("m5", {named("gpu", "shared")});
  PreFilterResult r;
  CycleState s;
  ASSERT_TRUE(plugin->preFilter(s, late, handle.snapshot(), r).ok());
  EXPECT_EQ(plugin->filter(s, late, a1).message(), "resourceclaim not available on the node");
  EXPECT_TRUE(plugin->filter(s, late, b1).ok());
  ASSERT_TRUE(plugin->reserve(s, late, "b1").ok());
  EXPECT_TRUE(plugin->preBindPreFlight(s, late, "b1").isSkip());
  EXPECT_EQ(plugin->postFilter(s, late, {}).second.message(), "still not schedulable");
}

// The PodGroup's claims named or generated bring its waiting pods back; other changes of it
// and other groups do not.
TEST_F(GroupClaimsTest, TheGroupsClaimStatusWakesItsPods) {
  state->onClaim(gpuClaim("train-gpu-x1y2z", "train-uid"));
  const auto before = group("train", {{"gpu", {}, "one-gpu"}});
  const auto after = group("train", {{"gpu", {}, "one-gpu"}}, {{"gpu", "train-gpu-x1y2z"}});
  auto relabelled = std::make_shared<api::PodGroup>(*before);
  relabelled->metadata.labels["x"] = "y";
  setGroup(before);
  const api::Pod p = member("m1", {templated("gpu", "one-gpu")});
  EXPECT_EQ(plugin->preEnqueue(p).message(), "PodGroup ml/train: ResourceClaim not created yet");
  QueueingHintFn hint;
  for (const auto& e : plugin->eventsToRegister()) {
    if (e.event.resource == EventResource::kPodGroup) hint = e.hint;
  }
  ASSERT_TRUE(hint);
  EXPECT_EQ(hint(p, before, relabelled), QueueingHint::kSkip);
  setGroup(after);
  EXPECT_EQ(hint(p, before, after), QueueingHint::kQueue);
  EXPECT_EQ(hint(p, std::monostate{}, after), QueueingHint::kQueue);
  EXPECT_EQ(hint(member("o1", {templated("gpu", "one-gpu")}, "other"), before, after),
            QueueingHint::kSkip);
  EXPECT_TRUE(plugin->preEnqueue(p).ok());
}

}  // namespace
}  // namespace ksched::plugins
