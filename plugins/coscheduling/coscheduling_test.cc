// Coscheduling tables, re-derived from scheduler-plugins' coscheduling_test.go and core_test.go
// (Less, PreFilter, Permit, PostFilter, Unreserve) and its PodGroup controller's phase rules,
// plus the label form, args decoding and the activation of siblings.
#include "plugins/coscheduling/coscheduling.h"

#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <ksched/api/decode.h>
#include <ksched/registry.h>

#include "plugins/coscheduling/coscheduling_test_util.h"
#include "plugins/registry.h"

namespace ksched::plugins {
namespace {

using coscheduling::groupOf;
using coscheduling_test::Fixture;
using coscheduling_test::gangPod;
using coscheduling_test::podGroup;
using coscheduling_test::queued;
using testutil::NodeWrapper;
using testutil::PodWrapper;

TEST(CoschedulingArgsTest, DefaultsValuesAndErrors) {
  auto d = CoschedulingArgs::fromJson(nullptr);
  EXPECT_EQ(d.permitWaitingTimeSeconds, 60);
  EXPECT_EQ(d.podGroupBackoffSeconds, 0);
  auto a =
      CoschedulingArgs::fromJson({{"permitWaitingTimeSeconds", 10}, {"podGroupBackoffSeconds", 3}});
  EXPECT_EQ(a.permitWaitingTimeSeconds, 10);
  EXPECT_EQ(a.podGroupBackoffSeconds, 3);
  try {
    (void)CoschedulingArgs::fromJson({{"permitWaitingTimeSeconds", -1}});
    FAIL() << "no error";
  } catch (const PluginArgsError& e) {
    EXPECT_STREQ(e.what(),
                 "permitWaitingTimeSeconds: Invalid value: -1: must be greater than or equal to 0");
  }
  EXPECT_THROW((void)CoschedulingArgs::fromJson({{"podGroupBackoffSeconds", -5}}), PluginArgsError);
  EXPECT_THROW((void)CoschedulingArgs::fromJson({{"kubeConfigPath", "/x"}}), PluginArgsError);
  EXPECT_THROW((void)CoschedulingArgs::fromJson({{"permitWaitingTimeSeconds", "10"}}),
               PluginArgsError);
}

TEST(CoschedulingTest, RegistersPodHandlersAndThePodGroupWatch) {
  Fixture f;
  EXPECT_EQ(f.handle.podHandlerCount(), 1u);
  EXPECT_EQ(f.handle.watchedPaths(),
            std::vector<std::string>{"/apis/scheduling.x-k8s.io/v1alpha1/podgroups"});
  EXPECT_NE(inTreeRegistry().find("Coscheduling"), nullptr);
}

TEST(CoschedulingGroupOfTest, LabelForms) {
  EXPECT_FALSE(groupOf(PodWrapper("p").obj()));
  auto crd = groupOf(*gangPod("p", "pg1"));
  ASSERT_TRUE(crd);
  EXPECT_EQ(crd->key(), "default/pg1");
  EXPECT_FALSE(crd->labelForm);

  auto legacy = groupOf(PodWrapper("p")
                            .label("pod-group.scheduling.sigs.k8s.io/name", "g")
                            .label("pod-group.scheduling.sigs.k8s.io/min-available", "3")
                            .obj());
  ASSERT_TRUE(legacy);
  EXPECT_TRUE(legacy->labelForm);
  EXPECT_EQ(legacy->minAvailable, 3);
  EXPECT_EQ(legacy->key(), "label:default/g");

  for (const char* bad : {"0", "-2", "x", "3x", ""}) {
    auto r = groupOf(PodWrapper("p")
                         .label("pod-group.scheduling.sigs.k8s.io/name", "g")
                         .label("pod-group.scheduling.sigs.k8s.io/min-available", bad)
                         .obj());
    ASSERT_TRUE(r);
    EXPECT_EQ(r->minAvailable, -1) << bad;
  }
  // Both: the PodGroup label wins.
  auto both = groupOf(PodWrapper("p")
                          .label("scheduling.x-k8s.io/pod-group", "pg")
                          .label("pod-group.scheduling.sigs.k8s.io/name", "g")
                          .obj());
  ASSERT_TRUE(both);
  EXPECT_EQ(both->key(), "default/pg");
}

TEST(CoschedulingLessTest, PriorityThenGroupCreationThenGroupThenPod) {
  Fixture f;
  f.plugin.onPodGroup(nullptr, podGroup("older", 2, "2026-01-01T00:00:00Z"));
  f.plugin.onPodGroup(nullptr, podGroup("newer", 2, "2026-01-01T00:00:05Z"));
  f.plugin.onPodGroup(nullptr, podGroup("same-a", 2, "2026-01-01T00:00:05Z"));
  auto o1 = queued(gangPod("z-1", "older"));
  auto n1 = queued(gangPod("a-1", "newer"));
  auto s1 = queued(gangPod("b-1", "same-a"));
  auto n2 = queued(gangPod("c-2", "newer"));
  // The older group first, whatever the pod names.
  EXPECT_TRUE(f.plugin.less(o1, n1));
  EXPECT_FALSE(f.plugin.less(n1, o1));
  // Same creation second: groups stay together (by group, not interleaved by pod name).
  EXPECT_TRUE(f.plugin.less(n1, n2));
  EXPECT_TRUE(f.plugin.less(n2, s1));
  EXPECT_TRUE(f.plugin.less(n1, s1));
  // Priority beats everything.
  auto hi = queued(std::make_shared<const api::Pod>(
      PodWrapper("hi").label("scheduling.x-k8s.io/pod-group", "newer").priority(10).obj()));
  EXPECT_TRUE(f.plugin.less(hi, o1));
  // A pod of no group sorts by its first attempt against the groups' creation times: one that
  // arrived now comes after groups created in January.
  auto plain = queued(std::make_shared<const api::Pod>(PodWrapper("plain").obj()),
                      std::chrono::steady_clock::now());
  EXPECT_TRUE(f.plugin.less(o1, plain));
  EXPECT_FALSE(f.plugin.less(plain, o1));
}

TEST(CoschedulingPreFilterTest, Table) {
  Fixture f;
  // No group: nothing to check.
  EXPECT_TRUE(f.preFilter(std::make_shared<const api::Pod>(PodWrapper("p").obj())).isSkip());

  // A PodGroup that does not exist.
  Status s = f.preFilter(gangPod("p-0", "missing"));
  EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(s.message(),
            "PodGroup default/missing not found (named by the pod's scheduling.x-k8s.io/pod-group "
            "label)");

  // Fewer pods than minMember.
  f.plugin.onPodGroup(nullptr, podGroup("pg", 3));
  f.plugin.onPod(nullptr, gangPod("p-0", "pg"));
  f.plugin.onPod(nullptr, gangPod("p-1", "pg"));
  s = f.preFilter(gangPod("p-0", "pg"));
  EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(s.message(),
            "pre-filter pod p-0 cannot find enough sibling pods, current pods number: 2, "
            "minMember of group: 3");
  // A finished or terminating pod does not count.
  auto done = PodWrapper("p-2").label("scheduling.x-k8s.io/pod-group", "pg").obj();
  done.status.phase = "Succeeded";
  f.plugin.onPod(nullptr, std::make_shared<const api::Pod>(done));
  EXPECT_FALSE(f.preFilter(gangPod("p-0", "pg")).ok());
  f.plugin.onPod(nullptr, gangPod("p-3", "pg"));
  EXPECT_TRUE(f.preFilter(gangPod("p-0", "pg")).ok());

  // Label form: min-available must be a positive integer.
  auto bad = std::make_shared<const api::Pod>(
      PodWrapper("l-0").label("pod-group.scheduling.sigs.k8s.io/name", "g").obj());
  s = f.preFilter(bad);
  EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(s.message(),
            "pod group default/g: label pod-group.scheduling.sigs.k8s.io/min-available must be a "
            "positive integer");
  auto legacy = [](const std::string& name) {
    return std::make_shared<const api::Pod>(
        PodWrapper(name)
            .label("pod-group.scheduling.sigs.k8s.io/name", "g")
            .label("pod-group.scheduling.sigs.k8s.io/min-available", "2")
            .obj());
  };
  // Not seen by the pod handler yet: the pod counts itself.
  EXPECT_EQ(f.preFilter(legacy("l-1")).message(),
            "pre-filter pod l-1 cannot find enough sibling pods, current pods number: 1, "
            "minMember of group: 2");
  f.plugin.onPod(nullptr, legacy("l-1"));
  EXPECT_EQ(f.preFilter(legacy("l-1")).message(),
            "pre-filter pod l-1 cannot find enough sibling pods, current pods number: 1, "
            "minMember of group: 2");
  f.plugin.onPod(nullptr, legacy("l-2"));
  EXPECT_TRUE(f.preFilter(legacy("l-1")).ok());
}

TEST(CoschedulingPreFilterTest, MinResourcesAgainstTheClusterFreeRoom) {
  // Two nodes with 4 cpu each; 3 cpu used by another pod on n1.
  testutil::FakeHandle handle(testutil::FakeLister(
      {testutil::makeNodeInfo(NodeWrapper("n1").capacity({{"cpu", "4"}, {"pods", "10"}}),
                              {PodWrapper("other").req({{"cpu", "3"}}).nodeName("n1")}),
       testutil::makeNodeInfo(NodeWrapper("n2").capacity({{"cpu", "4"}, {"pods", "10"}}))}));
  Coscheduling plugin({}, handle);
  CycleState state;
  PreFilterResult result;
  plugin.onPodGroup(
      nullptr, podGroup("fits", 2, "2026-01-01T00:00:00Z", {{"minResources", {{"cpu", "5"}}}}));
  plugin.onPodGroup(nullptr,
                    podGroup("big", 2, "2026-01-01T00:00:00Z", {{"minResources", {{"cpu", "6"}}}}));
  for (const char* g : {"fits", "big"}) {
    plugin.onPod(nullptr, gangPod(std::string(g) + "-0", g));
    plugin.onPod(nullptr, gangPod(std::string(g) + "-1", g));
  }
  EXPECT_TRUE(plugin.preFilter(state, *gangPod("fits-0", "fits"), handle.snapshot(), result).ok());
  Status s = plugin.preFilter(state, *gangPod("big-0", "big"), handle.snapshot(), result);
  EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(s.message(),
            "resource gap: PodGroup default/big needs more than the cluster has free: cpu 1000m");
}

TEST(CoschedulingPermitTest, WaitsUntilMinMemberThenAllowsTheGroup) {
  Fixture f(CoschedulingArgs{30, 0});
  f.plugin.onPodGroup(nullptr,
                      podGroup("pg", 3, "2026-01-01T00:00:00Z", {{"scheduleTimeoutSeconds", 10}}));
  f.plugin.onPodGroup(nullptr, podGroup("other", 2));
  for (int i = 0; i < 3; ++i) f.plugin.onPod(nullptr, gangPod("p-" + std::to_string(i), "pg"));
  f.plugin.onPod(nullptr, gangPod("o-0", "other"));
  f.plugin.onPod(nullptr, gangPod("o-1", "other"));

  // No group: allowed at once.
  std::chrono::milliseconds timeout{0};
  EXPECT_TRUE(f.permit(std::make_shared<const api::Pod>(PodWrapper("plain").obj()), timeout).ok());

  // First pod: waits with the PodGroup's scheduleTimeoutSeconds and activates its siblings.
  f.handle.clearActivated();
  auto p0 = gangPod("p-0", "pg");
  ASSERT_TRUE(f.plugin.reserve(f.state, *p0, "node-a").ok());
  EXPECT_TRUE(f.permit(p0, timeout).isWait());
  EXPECT_EQ(timeout, std::chrono::seconds(10));
  EXPECT_EQ(f.handle.activated(), (std::vector<std::string>{"default/p-1", "default/p-2"}));
  auto w0 = f.handle.addWaitingPod(*p0);

  // Second pod waits, no new activation.
  f.handle.clearActivated();
  auto p1 = gangPod("p-1", "pg");
  ASSERT_TRUE(f.plugin.reserve(f.state, *p1, "node-a").ok());
  EXPECT_TRUE(f.permit(p1, timeout).isWait());
  EXPECT_TRUE(f.handle.activated().empty());
  auto w1 = f.handle.addWaitingPod(*p1);
  auto wOther = f.handle.addWaitingPod(*gangPod("o-0", "other"));

  // Third: the group is complete: it passes and allows the group's waiting pods, only those.
  auto p2 = gangPod("p-2", "pg");
  ASSERT_TRUE(f.plugin.reserve(f.state, *p2, "node-a").ok());
  EXPECT_TRUE(f.permit(p2, timeout).ok());
  EXPECT_EQ(w0->allowedBy(), std::vector<std::string>{"Coscheduling"});
  EXPECT_EQ(w1->allowedBy(), std::vector<std::string>{"Coscheduling"});
  EXPECT_TRUE(wOther->allowedBy().empty());

  // Without scheduleTimeoutSeconds the args' permitWaitingTimeSeconds applies.
  auto o1 = gangPod("o-1", "other");
  ASSERT_TRUE(f.plugin.reserve(f.state, *o1, "node-a").ok());
  // o-0 is not reserved here: o-1 is the first of its group.
  EXPECT_TRUE(f.permit(o1, timeout).isWait());
  EXPECT_EQ(timeout, std::chrono::seconds(30));
}

TEST(CoschedulingPermitTest, BoundPodsCountAsAssigned) {
  Fixture f;
  f.plugin.onPodGroup(nullptr, podGroup("pg", 3));
  f.plugin.onPod(nullptr, gangPod("p-0", "pg", "n1"));
  f.plugin.onPod(nullptr, gangPod("p-1", "pg", "n2"));
  auto p2 = gangPod("p-2", "pg");
  f.plugin.onPod(nullptr, p2);
  std::chrono::milliseconds timeout{0};
  EXPECT_TRUE(f.permit(p2, timeout).ok());
}

TEST(CoschedulingUnreserveTest, RejectsTheGroupsWaitingPods) {
  Fixture f;
  f.plugin.onPodGroup(nullptr, podGroup("pg", 3));
  f.plugin.onPodGroup(nullptr, podGroup("other", 3));
  auto w0 = f.handle.addWaitingPod(*gangPod("p-0", "pg"));
  auto wOther = f.handle.addWaitingPod(*gangPod("o-0", "other"));
  auto p1 = gangPod("p-1", "pg");
  ASSERT_TRUE(f.plugin.reserve(f.state, *p1, "n").ok());
  f.plugin.unreserve(f.state, *p1, "n");
  EXPECT_EQ(w0->rejected(), "Coscheduling: rejection in Unreserve");
  EXPECT_EQ(wOther->rejected(), "");
}

TEST(CoschedulingPostFilterTest, ReleasesTheGroupUnlessWithinTenPercent) {
  Fixture f(CoschedulingArgs{60, 20});
  f.group("pg", 9, 9);
  // 2 of 9 assumed and waiting, p-2 fits nowhere: released.
  auto waiting = f.holdWaiting("pg", 2);
  NodeToStatus statuses{{"n1", Status::unschedulable("Insufficient cpu")},
                        {"n2", Status::unschedulable("Insufficient cpu")}};
  // A pod PreFilter turned away releases nothing.
  {
    CycleState fresh;
    auto [r0, s0] = f.plugin.postFilter(fresh, *gangPod("p-2", "pg"), statuses);
    EXPECT_TRUE(s0.reasons().empty());
    for (auto& w : waiting) EXPECT_EQ(w->rejected(), "");
  }
  ASSERT_TRUE(f.preFilter(gangPod("p-2", "pg")).ok());
  auto [result, s] = f.plugin.postFilter(f.state, *gangPod("p-2", "pg"), statuses);
  EXPECT_EQ(s.code(), Code::kUnschedulable);
  EXPECT_EQ(s.message(),
            "PodGroup default/pg gets rejected due to Pod p-2 is unschedulable even after "
            "PostFilter");
  EXPECT_FALSE(result.nominatedNodeName);
  for (auto& w : waiting) {
    EXPECT_EQ(w->rejected(),
              "Coscheduling: optimistic rejection in PostFilter: pod p-2 of PodGroup default/pg "
              "fits no node");
  }
  auto events = f.handle.fakeEvents().events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, "PodGroup");
  EXPECT_EQ(events[0].key, "default/pg");
  EXPECT_EQ(events[0].reason, "FailedScheduling");
  EXPECT_EQ(events[0].message,
            "the group's 9 pods do not all fit (2 Insufficient cpu); its waiting pods were "
            "released");
  // Released: the group's pods are turned away until room frees up; a sibling unreserved is
  // not room, a pod of another group deleted or a node added is.
  {
    Fixture r;
    r.group("pg", 3, 3);
    ASSERT_TRUE(r.preFilter(gangPod("p-0", "pg")).ok());
    (void)r.plugin.postFilter(r.state, *gangPod("p-0", "pg"), statuses);
    EXPECT_EQ(r.preFilter(gangPod("p-1", "pg")).message(),
              "podGroup default/pg failed recently: its pods do not all fit; it waits for room "
              "to free up");
    auto events = r.plugin.eventsToRegister();
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(events[0].event.label(), "AssignedPodDelete");
    const auto& hint = events[0].hint;
    EXPECT_EQ(hint(*gangPod("p-1", "pg"), gangPod("p-0", "pg", "n1"), {}), QueueingHint::kSkip);
    EXPECT_FALSE(r.preFilter(gangPod("p-1", "pg")).ok());
    EXPECT_EQ(hint(*gangPod("p-1", "pg"), gangPod("x-0", "other", "n1"), {}), QueueingHint::kQueue);
    EXPECT_TRUE(r.preFilter(gangPod("p-1", "pg")).ok());
  }
  // podGroupBackoffSeconds: the group backs off.
  EXPECT_EQ(f.preFilter(gangPod("p-0", "pg")).message(), "podGroup default/pg failed recently");

  // 8/9 placed: gap 1/9 = 11% > 10%: released; with minMember 10 and 9 placed it would not be.
  Fixture g;
  g.group("pg", 9, 9);
  auto held = g.holdWaiting("pg", 8);
  ASSERT_TRUE(g.preFilter(gangPod("p-8", "pg")).ok());
  auto [r2, s2] = g.plugin.postFilter(g.state, *gangPod("p-8", "pg"), statuses);
  EXPECT_EQ(s2.code(), Code::kUnschedulable);
  EXPECT_NE(held[0]->rejected(), "");

  Fixture h;
  h.group("pg", 10, 10);
  auto kept = h.holdWaiting("pg", 9);
  ASSERT_TRUE(h.preFilter(gangPod("p-9", "pg")).ok());
  auto [r3, s3] = h.plugin.postFilter(h.state, *gangPod("p-9", "pg"), statuses);
  EXPECT_EQ(s3.code(), Code::kUnschedulable);
  EXPECT_TRUE(s3.reasons().empty());
  for (auto& w : kept) EXPECT_EQ(w->rejected(), "");
  EXPECT_TRUE(h.handle.fakeEvents().events().empty());

  // A pod of no group: nothing added to the other PostFilter plugins' verdict.
  auto [r4, s4] = h.plugin.postFilter(h.state, PodWrapper("plain").obj(), statuses);
  EXPECT_EQ(s4.code(), Code::kUnschedulable);
  EXPECT_TRUE(s4.reasons().empty());
}

// Room freed while a pod of the group was being scheduled (after its PreFilter, so perhaps not in
// its cycle's snapshot) keeps that pod's failure from releasing the group: the release would
// wait for an event that already came. Any assigned pod deleted counts, seen by the pod handler
// whether or not a queueing hint runs; room the group's own pods free does not count for it.
TEST(CoschedulingPostFilterTest, RoomFreedDuringTheCycleKeepsTheGroupSchedulable) {
  NodeToStatus statuses{{"n1", Status::unschedulable("Insufficient cpu")}};
  const std::string released =
      "podGroup default/pg failed recently: its pods do not all fit; it waits for room to free up";
  struct Case {
    std::string name;
    std::function<void(Coscheduling&)> meanwhile;
    bool releasedAfter;
  };
  const std::vector<Case> cases = {
      {"nothing", [](Coscheduling&) {}, true},
      {"another group's bound pod deleted",
       [](Coscheduling& c) { c.onPod(gangPod("x-0", "other", "n1"), nullptr); }, false},
      {"a bound pod of no group deleted",
       [](Coscheduling& c) {
         c.onPod(std::make_shared<const api::Pod>(PodWrapper("plain").nodeName("n1").obj()),
                 nullptr);
       },
       false},
      {"a pending pod of no group deleted",
       [](Coscheduling& c) {
         c.onPod(std::make_shared<const api::Pod>(PodWrapper("plain").obj()), nullptr);
       },
       true},
      {"a node added (hint of a third group's pod)",
       [](Coscheduling& c) {
         auto node = std::make_shared<const api::Node>(NodeWrapper("n9").obj());
         (void)c.eventsToRegister()[1].hint(*gangPod("c-0", "third"), {}, node);
       },
       false},
      {"the group's own pod unreserved (hint of a third group's pod)",
       [](Coscheduling& c) {
         (void)c.eventsToRegister()[0].hint(*gangPod("c-0", "third"), gangPod("p-1", "pg", "n1"),
                                            {});
       },
       true},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    Fixture f;
    f.group("pg", 3, 3);
    f.plugin.onPodGroup(nullptr, podGroup("other", 1));
    f.plugin.onPod(nullptr, gangPod("x-0", "other", "n1"));
    ASSERT_TRUE(f.preFilter(gangPod("p-0", "pg")).ok());
    tc.meanwhile(f.plugin);
    auto [r, s] = f.plugin.postFilter(f.state, *gangPod("p-0", "pg"), statuses);
    EXPECT_EQ(s.code(), Code::kUnschedulable);
    CycleState next;
    Status again = f.plugin.preFilter(next, *gangPod("p-1", "pg"), f.handle.snapshot(), f.result);
    EXPECT_EQ(again.message(), tc.releasedAfter ? released : "");
    // Room freed after the release lifts it.
    f.plugin.onPod(gangPod("x-0", "other", "n1"), nullptr);
    EXPECT_TRUE(f.preFilter(gangPod("p-1", "pg")).ok());
  }
}

TEST(CoschedulingPodEventsTest, ReachingMinMemberActivatesTheGroupsPendingPods) {
  Fixture f;
  f.plugin.onPodGroup(nullptr, podGroup("pg", 3));
  f.plugin.onPod(nullptr, gangPod("p-0", "pg"));
  f.plugin.onPod(nullptr, gangPod("p-1", "pg"));
  EXPECT_TRUE(f.handle.activated().empty());
  f.plugin.onPod(nullptr, gangPod("p-2", "pg"));
  EXPECT_EQ(f.handle.activated(),
            (std::vector<std::string>{"default/p-0", "default/p-1", "default/p-2"}));
  // A PodGroup created after its pods activates them too.
  f.handle.clearActivated();
  f.plugin.onPod(nullptr, gangPod("q-0", "late"));
  f.plugin.onPodGroup(nullptr, podGroup("late", 1));
  EXPECT_EQ(f.handle.activated(), std::vector<std::string>{"default/q-0"});
}

TEST(CoschedulingStatusTest, PhasesAsTheControllerKeepsThem) {
  Fixture f;
  f.plugin.onPodGroup(nullptr, podGroup("pg", 2));
  auto phase = [&] { return f.plugin.desiredStatus("default/pg")->phase; };
  EXPECT_FALSE(f.plugin.desiredStatus("default/unknown"));
  EXPECT_EQ(phase(), "Pending");
  auto p0 = PodWrapper("p-0")
                .label("scheduling.x-k8s.io/pod-group", "pg")
                .ownerReference("Job", "train", "job-uid", true, "batch/v1")
                .obj();
  p0.metadata.creationTimestamp = "2026-01-01T00:00:00Z";
  f.plugin.onPod(nullptr, std::make_shared<const api::Pod>(p0));
  EXPECT_EQ(phase(), "Pending");
  f.plugin.onPod(nullptr, gangPod("p-1", "pg"));
  auto s = *f.plugin.desiredStatus("default/pg");
  EXPECT_EQ(s.phase, "Scheduling");
  EXPECT_EQ(s.scheduled, 0);
  EXPECT_EQ(s.occupiedBy, "default/train");
  EXPECT_FALSE(s.scheduleStartTime.empty());

  auto bound = [](const std::string& name, const std::string& phase) {
    auto p = PodWrapper(name).label("scheduling.x-k8s.io/pod-group", "pg").nodeName("n1").obj();
    p.status.phase = phase;
    return std::make_shared<const api::Pod>(p);
  };
  f.plugin.onPod(gangPod("p-0", "pg"), bound("p-0", "Pending"));
  EXPECT_EQ(phase(), "Scheduling");
  f.plugin.onPod(gangPod("p-1", "pg"), bound("p-1", "Pending"));
  s = *f.plugin.desiredStatus("default/pg");
  EXPECT_EQ(s.phase, "Scheduled");
  EXPECT_EQ(s.scheduled, 2);
  f.plugin.onPod(bound("p-0", "Pending"), bound("p-0", "Running"));
  f.plugin.onPod(bound("p-1", "Pending"), bound("p-1", "Running"));
  s = *f.plugin.desiredStatus("default/pg");
  EXPECT_EQ(s.phase, "Running");
  EXPECT_EQ(s.running, 2);
  f.plugin.onPod(bound("p-0", "Running"), bound("p-0", "Failed"));
  s = *f.plugin.desiredStatus("default/pg");
  EXPECT_EQ(s.phase, "Failed");
  EXPECT_EQ(s.failed, 1);
  f.plugin.onPod(bound("p-0", "Failed"), bound("p-0", "Succeeded"));
  f.plugin.onPod(bound("p-1", "Running"), bound("p-1", "Succeeded"));
  s = *f.plugin.desiredStatus("default/pg");
  EXPECT_EQ(s.phase, "Finished");
  EXPECT_EQ(s.succeeded, 2);
  // Pods deleted: back to Pending.
  f.plugin.onPod(bound("p-0", "Succeeded"), nullptr);
  EXPECT_EQ(phase(), "Pending");
}

TEST(CoschedulingStatusTest, WriterPatchesTheStatusSubresourceOnceStarted) {
  testutil::FakeHandle handle;
  testing::FakeClusterApi api;
  handle.setApi(&api);
  Coscheduling plugin({}, handle);
  plugin.onPodGroup(nullptr, podGroup("pg", 1));
  plugin.onPod(nullptr, gangPod("p-0", "pg", "n1"));
  EXPECT_TRUE(api.calls().empty());  // nothing written before start(): a follower writes nothing
  plugin.start();
  for (int i = 0; i < 100 && api.calls().empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  plugin.close();
  auto calls = api.calls();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].verb, "patch");
  EXPECT_EQ(calls[0].target,
            "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/default/podgroups/pg/status");
  EXPECT_EQ(calls[0].body["status"]["phase"], "Scheduled");
  EXPECT_EQ(calls[0].body["status"]["scheduled"], 1);
}

}  // namespace
}  // namespace ksched::plugins
