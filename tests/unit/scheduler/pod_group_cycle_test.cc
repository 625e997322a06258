// The pod-group cycle (GenericWorkload) driven through SchedulerCore's seam, with a scripted
// PlacementFeasible plugin in place of GangScheduling: upstream's TestPodGroupSchedulingAlgorithm
// and TestSubmitPodGroupAlgorithmResult rows, asserted as a user sees them (which pods are bound
// and where, each pod's FailedScheduling message, the room left in the cache, the PodGroup's
// condition as patched).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <ksched/api/decode.h>
#include <ksched/pod_group_plugin.h>
#include <ksched/testing/fakes.h>

#include "plugins/registry.h"
#include "scheduler/scheduler_core.h"
#include "tests/support/scheduler_core_test_util.h"

namespace ksched::scheduler {
namespace {

using namespace std::chrono_literals;
using ksched::testing::FakeClusterApi;
using ksched::testing::NodeWrapper;
using ksched::testing::PodWrapper;
using schedulertest::callsOf;
using schedulertest::eventually;
using schedulertest::RecordingSink;

// Answers PlacementFeasible from a script ("S", "W", "U", "E" per call; Success past its end)
// and records the progress it was asked about.
class ScriptedFeasible final : public PlacementFeasiblePlugin {
 public:
  static constexpr std::string_view kName = "ScriptedFeasible";
  explicit ScriptedFeasible(std::vector<std::string> script) : script_(std::move(script)) {}
  [[nodiscard]] std::string_view name() const override { return kName; }
  Status placementFeasible(CycleState&, const PodGroupInfo& group,
                           const PlacementProgress& progress) override {
    std::lock_guard lock(mu_);
    calls.push_back({progress.scheduled, progress.remaining});
    podsSeen = group.pods.size();
    const size_t i = calls.size() - 1;
    const std::string a = i < script_.size() ? script_[i] : "S";
    if (a == "W") return Status::wait("waiting at " + std::to_string(i));
    if (a == "U") return Status::unschedulable("cannot at " + std::to_string(i));
    if (a == "E") return Status::error("broken at " + std::to_string(i));
    return {};
  }
  std::mutex mu_;
  std::vector<std::pair<int32_t, int32_t>> calls;
  size_t podsSeen = 0;

 private:
  const std::vector<std::string> script_;
};

NodeWrapper node(const std::string& name, const std::string& cpu) {
  return std::move(NodeWrapper(name).capacity({{"cpu", cpu}, {"memory", "8Gi"}, {"pods", "110"}}));
}

PodWrapper member(const std::string& name, const std::string& cpu, const std::string& group) {
  return std::move(
      PodWrapper(name).uid(name + "-uid").req({{"cpu", cpu}, {"memory", "100Mi"}}).podGroup(group));
}

nlohmann::json podGroupJson(const std::string& name, int minCount,
                            const nlohmann::json& conditions = nlohmann::json::array()) {
  return {{"apiVersion", "scheduling.k8s.io/v1beta1"},
          {"kind", "PodGroup"},
          {"metadata",
           {{"name", name}, {"namespace", "default"}, {"uid", name + "-uid"}, {"generation", 3}}},
          {"spec", {{"schedulingPolicy", {{"gang", {{"minCount", minCount}}}}}}},
          {"status", {{"conditions", conditions}}}};
}

// A core with GenericWorkload on, the default profile plus ScriptedFeasible, and the PodGroups
// `groups` served to its watch.
struct GroupCore {
  GroupCore(std::vector<std::string> script, std::vector<nlohmann::json> groups,
            const std::string& gates = "GenericWorkload=true") {
    Registry registry = plugins::inTreeRegistry();
    registry.add(std::string(ScriptedFeasible::kName), [this, script](Handle&) {
      auto p = std::make_unique<ScriptedFeasible>(script);
      feasible = p.get();
      return p;
    });
    Options o;
    o.binderThreads = 2;
    o.parallelism = 2;
    o.queue.podInitialBackoff = 60s;
    o.queue.podMaxBackoff = 60s;
    EXPECT_EQ(o.features.set(gates), std::nullopt);
    // The profile without GangScheduling (its PreEnqueue would hold the pods back until
    // minCount of them exist): the script stands in for it.
    o.profiles = {config::defaultProfile(features::Gates{})};
    o.profiles[0].plugins.placementFeasible.enabled.push_back(
        {std::string(ScriptedFeasible::kName), 0});
    Environment env;
    env.api = &api;
    env.events = &events;
    env.watchObjects = [groups](const ObjectWatch& w, ObjectEventHandlers h) {
      if (h.onAdd) {
        for (const auto& g : groups) {
          if (g.value("kind", "") != w.kind) continue;
          auto u = std::make_shared<UnstructuredObject>();
          u->metadata = api::decode<api::ObjectMeta>(g.at("metadata"));
          u->object = g;
          h.onAdd(u);
        }
      }
      return std::shared_ptr<const ObjectStore>(std::make_shared<EmptyObjectStore>());
    };
    core = std::make_unique<SchedulerCore>(std::move(env), registry, std::move(o));
  }
  ~GroupCore() { core->stop(); }

  // Feeds the nodes and pods, then starts the loop: the group's pods are all queued when the
  // first is popped.
  void run(const std::vector<NodeWrapper>& nodes, const std::vector<PodWrapper>& pods) {
    for (const auto& n : nodes) core->onNodeAdd(n.ptr());
    for (const auto& p : pods) core->onPodAdd(p.ptr());
    core->startScheduling();
  }
  [[nodiscard]] int64_t requestedMilliCPU(const std::string& nodeName) const {
    auto ni = core->cache().nodeInfo(nodeName);
    return ni ? ni->requested().milliCPU : -1;
  }
  // The pods bound, "pod->node", sorted.
  [[nodiscard]] std::vector<std::string> bound() const {
    std::vector<std::string> out;
    for (const auto& c : callsOf(api, "bind"))
      out.push_back(c.target + "->" + c.body.get<std::string>());
    std::ranges::sort(out);
    return out;
  }
  // The FailedScheduling message of each pod, in `names` order, once every one has one (the
  // counters the tests wait on move before the events are recorded); "" for a pod that has none.
  [[nodiscard]] std::vector<std::string> failures(const std::vector<std::string>& names) const {
    auto collect = [&] {
      std::vector<std::string> out;
      for (const auto& n : names) {
        std::string msg;
        for (const auto& e : events.withReason("FailedScheduling")) {
          if (e.object == "default/" + n) msg = e.message;
        }
        out.push_back(msg);
      }
      return out;
    };
    (void)eventually([&] { return std::ranges::none_of(collect(), &std::string::empty); });
    return collect();
  }
  // The last PodGroupInitiallyScheduled condition patched: status/reason/message.
  [[nodiscard]] std::string condition() const {
    auto patches = callsOf(api, "patch");
    if (patches.empty()) return "";
    const auto& c = patches.back().body.at("status").at("conditions").at(0);
    return c.at("status").get<std::string>() + "/" + c.at("reason").get<std::string>() + "/" +
           c.at("message").get<std::string>();
  }

  FakeClusterApi api;
  RecordingSink events;
  ScriptedFeasible* feasible = nullptr;
  std::unique_ptr<SchedulerCore> core;
};

const std::vector<std::string> kPods = {"p1", "p2", "p3"};
// What workload-aware preemption (DefaultPreemption, in the default profile) adds to a group
// rejected as Unschedulable when no pod of lower priority runs.
const std::string kNoVictims =
    ", pod group preemption: No preemption victims found for incoming preemptor";

std::vector<PodWrapper> threeMembers(const std::string& cpu1 = "1") {
  return {member("p1", cpu1, "pg"), member("p2", "1", "pg"), member("p3", "1", "pg")};
}

TEST(PodGroupCycleTest, AllFeasibleBindsEveryPodAndSaysScheduled) {
  GroupCore c({"W", "W", "W", "S"}, {podGroupJson("pg", 3)});
  c.run({node("node1", "4")}, threeMembers());
  ASSERT_TRUE(eventually([&] { return c.core->stats().scheduled == 3; }));
  EXPECT_EQ(c.bound(), (std::vector<std::string>{"default/p1->node1", "default/p2->node1",
                                                 "default/p3->node1"}));
  ASSERT_TRUE(eventually([&] { return !c.condition().empty(); }));
  EXPECT_EQ(c.condition(), "True/Scheduled/");
  // One cycle for the three: asked before the first pod and after each.
  EXPECT_EQ(c.feasible->podsSeen, 3u);
  EXPECT_EQ(c.feasible->calls,
            (std::vector<std::pair<int32_t, int32_t>>{{0, 3}, {1, 2}, {2, 1}, {3, 0}}));
  const auto patch = callsOf(c.api, "patch").back();
  EXPECT_EQ(patch.target, "/apis/scheduling.k8s.io/v1beta1/namespaces/default/podgroups/pg/status");
  EXPECT_EQ(patch.body["status"]["conditions"][0]["type"], "PodGroupInitiallyScheduled");
  EXPECT_EQ(patch.body["status"]["conditions"][0]["observedGeneration"], 3);
}

TEST(PodGroupCycleTest, EndingOnWaitPlacesNothingAndEveryPodSaysWhy) {
  GroupCore c({"W", "W", "W", "W"}, {podGroupJson("pg", 4)});
  c.run({node("node1", "4")}, threeMembers());
  ASSERT_TRUE(eventually([&] { return c.core->stats().unschedulable == 3; }));
  EXPECT_TRUE(c.bound().empty());
  EXPECT_EQ(c.requestedMilliCPU("node1"), 0);  // the placements were taken back
  const std::string want = "waiting at 3" + kNoVictims;
  EXPECT_EQ(c.failures(kPods), (std::vector<std::string>{want, want, want}));
  ASSERT_TRUE(eventually([&] { return !c.condition().empty(); }));
  EXPECT_EQ(c.condition(), "False/Unschedulable/" + want);
}

TEST(PodGroupCycleTest, ARejectionStopsTheCycleAtOnce) {
  GroupCore c({"W", "U"}, {podGroupJson("pg", 3)});
  c.run({node("node1", "4")}, threeMembers());
  ASSERT_TRUE(eventually([&] { return c.core->stats().unschedulable == 3; }));
  EXPECT_EQ(c.feasible->calls.size(), 2u);  // only p1 was tried
  EXPECT_EQ(c.requestedMilliCPU("node1"), 0);
  const std::string want = "cannot at 1" + kNoVictims;
  EXPECT_EQ(c.failures(kPods), (std::vector<std::string>{want, want, want}));
}

TEST(PodGroupCycleTest, RejectedBeforeTheFirstPodTriesNone) {
  GroupCore c({"U"}, {podGroupJson("pg", 3)});
  c.run({node("node1", "4")}, threeMembers());
  ASSERT_TRUE(eventually([&] { return c.core->stats().unschedulable == 3; }));
  EXPECT_EQ(c.feasible->calls.size(), 1u);
  const std::string want = "cannot at 0" + kNoVictims;
  EXPECT_EQ(c.failures(kPods), (std::vector<std::string>{want, want, want}));
}

TEST(PodGroupCycleTest, APodThatDoesNotFitFailsOnItsOwnWhileTheGroupBinds) {
  // p1 asks for more than the node has; the script says the group is fine with two.
  GroupCore c({"W", "W", "W", "S"}, {podGroupJson("pg", 2)});
  c.run({node("node1", "4")}, threeMembers("8"));
  ASSERT_TRUE(eventually([&] { return c.core->stats().scheduled == 2; }));
  EXPECT_EQ(c.bound(), (std::vector<std::string>{"default/p2->node1", "default/p3->node1"}));
  ASSERT_TRUE(eventually([&] { return !c.failures({"p1"})[0].empty(); }));
  EXPECT_EQ(c.failures({"p1"})[0], "0/1 nodes are available: 1 Insufficient cpu.");
  ASSERT_TRUE(eventually([&] { return !c.condition().empty(); }));
  EXPECT_EQ(c.condition(), "True/Scheduled/");
}

TEST(PodGroupCycleTest, AnErrorIsTheSchedulersErrorForEveryPod) {
  GroupCore c({"W", "S", "E"}, {podGroupJson("pg", 1)});
  c.run({node("node1", "4")}, threeMembers());
  ASSERT_TRUE(eventually([&] { return c.core->stats().errors == 3; }));
  EXPECT_TRUE(c.bound().empty());
  EXPECT_EQ(c.requestedMilliCPU("node1"), 0);
  const std::string want =
      "failed to evaluate placement feasibility: running PlacementFeasible plugin "
      "\"ScriptedFeasible\": broken at 2";
  EXPECT_EQ(c.failures(kPods), (std::vector<std::string>{want, want, want}));
  ASSERT_TRUE(eventually([&] { return !c.condition().empty(); }));
  EXPECT_EQ(c.condition(), "False/SchedulerError/" + want);
}

TEST(PodGroupCycleTest, MembersOfDifferentPriorityAreRefusedWithUpstreamsMessage) {
  GroupCore c({}, {podGroupJson("pg", 2)});
  c.run({node("node1", "4")},
        {member("p1", "1", "pg"), std::move(member("p2", "1", "pg").priority(10))});
  ASSERT_TRUE(eventually([&] { return c.core->stats().errors == 2; }));
  EXPECT_TRUE(c.bound().empty());
  const std::string want =
      "all pods in a pod group hierarchy should have the same priority as the root pod group's "
      "priority, got 10 (\"p2\") and 0 (\"default/pg\")";
  EXPECT_EQ(c.failures({"p1", "p2"}), (std::vector<std::string>{want, want}));
  ASSERT_TRUE(eventually([&] { return !c.condition().empty(); }));
  EXPECT_EQ(c.condition(), "False/SchedulerError/" + want);
}

TEST(PodGroupCycleTest, PreemptionPoliciesMustAgreeWithTheFirstPodOrThePodGroup) {
  auto never = [](const std::string& name) {
    return std::move(member(name, "1", "pg").preemptionPolicy("Never"));
  };
  {
    // Gate off: the pods agree among themselves.
    GroupCore c({}, {podGroupJson("pg", 2)});
    c.run({node("node1", "4")}, {member("p1", "1", "pg"), never("p2")});
    ASSERT_TRUE(eventually([&] { return c.core->stats().errors == 2; }));
    EXPECT_EQ(c.failures({"p2"})[0],
              "all pods in a pod group hierarchy should have the same preemption policy, got Never "
              "(\"p2\") and PreemptLowerPriority (\"p1\")");
  }
  {
    // PodGroupPreemptionPolicy: the PodGroup's policy (default PreemptLowerPriority) rules.
    GroupCore c({}, {podGroupJson("pg", 2)}, "GenericWorkload=true,PodGroupPreemptionPolicy=true");
    c.run({node("node1", "4")}, {never("p1"), never("p2")});
    ASSERT_TRUE(eventually([&] { return c.core->stats().errors == 2; }));
    EXPECT_EQ(c.failures({"p1"})[0],
              "all pods in a pod group hierarchy should have the same preemption policy as the "
              "root pod group's preemption policy, got Never (\"p1\") and PreemptLowerPriority "
              "(\"default/pg\")");
  }
}

TEST(PodGroupCycleTest, AConditionThatIsTrueIsNeverTurnedBack) {
  const nlohmann::json scheduled =
      nlohmann::json::array({{{"type", "PodGroupInitiallyScheduled"},
                              {"status", "True"},
                              {"reason", "Scheduled"},
                              {"message", "All pods scheduled"},
                              {"lastTransitionTime", "2026-11-01T00:00:00Z"}}});
  GroupCore c({"U"}, {podGroupJson("pg", 3, scheduled)});
  c.run({node("node1", "4")}, threeMembers());
  ASSERT_TRUE(eventually([&] { return c.core->stats().unschedulable == 3; }));
  EXPECT_TRUE(callsOf(c.api, "patch").empty());
}

TEST(PodGroupCycleTest, AnUnknownPodGroupIsASchedulerError) {
  GroupCore c({}, {});
  c.run({node("node1", "4")}, {member("p1", "1", "missing")});
  ASSERT_TRUE(eventually([&] { return c.core->stats().errors == 1; }));
  EXPECT_EQ(c.failures({"p1"})[0],
            "failed to get pod group state: pod group \"missing\" not found");
}

TEST(PodGroupCycleTest, PodsOfNoGroupAndOfAnotherGroupAreNotTakenAlong) {
  GroupCore c({}, {podGroupJson("a", 1), podGroupJson("b", 1)});
  c.run({node("node1", "4")}, {member("a1", "1", "a"), member("b1", "1", "b"),
                               std::move(PodWrapper("solo").uid("solo-uid").req({{"cpu", "1"}}))});
  ASSERT_TRUE(eventually([&] { return c.core->stats().scheduled == 3; }));
  // Two group cycles of one pod each (asked twice each), the lone pod in a cycle of its own.
  EXPECT_EQ(c.feasible->calls.size(), 4u);
}

}  // namespace
}  // namespace ksched::scheduler

namespace ksched::scheduler {
namespace {

nlohmann::json compositeJson(const std::string& name, int minGroupCount) {
  return {{"apiVersion", "scheduling.k8s.io/v1alpha3"},
          {"kind", "CompositePodGroup"},
          {"metadata", {{"name", name}, {"namespace", "default"}, {"uid", name + "-uid"}}},
          {"spec",
           {{"workloadRef", {{"workloadName", name}, {"templateName", name}}},
            {"schedulingPolicy", {{"gang", {{"minGroupCount", minGroupCount}}}}}}}};
}

nlohmann::json childGroupJson(const std::string& name, const std::string& parent) {
  nlohmann::json g = podGroupJson(name, 1);
  g["spec"]["parentCompositePodGroupName"] = parent;
  return g;
}

TEST(PodGroupCycleTest, ACompositeTreeIsPlacedInOneCycleAndEveryGroupSaysSo) {
  const nlohmann::json job = compositeJson("job", 2);
  GroupCore c({}, {job, childGroupJson("a", "job"), childGroupJson("b", "job")},
              "GenericWorkload=true,CompositePodGroup=true");
  c.run({node("node1", "4")}, {member("a1", "1", "a"), member("b1", "1", "b")});
  ASSERT_TRUE(eventually([&] { return c.core->stats().scheduled == 2; }));
  EXPECT_EQ(c.bound(), (std::vector<std::string>{"default/a1->node1", "default/b1->node1"}));
  // Asked for the root before its children and after each, and for each leaf around its pod.
  EXPECT_EQ(c.feasible->calls, (std::vector<std::pair<int32_t, int32_t>>{
                                   {0, 2}, {0, 1}, {1, 0}, {1, 1}, {0, 1}, {1, 0}, {2, 0}}));
  std::map<std::string, std::string> written;
  ASSERT_TRUE(eventually([&] { return callsOf(c.api, "patch").size() == 3; }));
  for (const auto& p : callsOf(c.api, "patch")) {
    const auto& cond = p.body.at("status").at("conditions").at(0);
    written[p.target] = cond.at("type").get<std::string>() + "/" +
                        cond.at("status").get<std::string>() + "/" +
                        cond.at("reason").get<std::string>();
  }
  EXPECT_EQ(
      written,
      (std::map<std::string, std::string>{
          {"/apis/scheduling.k8s.io/v1alpha3/namespaces/default/compositepodgroups/job/status",
           "CompositePodGroupInitiallyScheduled/True/Scheduled"},
          {"/apis/scheduling.k8s.io/v1beta1/namespaces/default/podgroups/a/status",
           "PodGroupInitiallyScheduled/True/Scheduled"},
          {"/apis/scheduling.k8s.io/v1beta1/namespaces/default/podgroups/b/status",
           "PodGroupInitiallyScheduled/True/Scheduled"}}));
}

TEST(PodGroupCycleTest, WithoutTheCompositeGateAChildGroupIsPlacedAlone) {
  const nlohmann::json job = compositeJson("job", 2);
  GroupCore c({}, {job, childGroupJson("a", "job"), childGroupJson("b", "job")});
  c.run({node("node1", "4")}, {member("a1", "1", "a"), member("b1", "1", "b")});
  ASSERT_TRUE(eventually([&] { return c.core->stats().scheduled == 2; }));
  // Two cycles of one group each: before and after the pod, twice.
  EXPECT_EQ(c.feasible->calls,
            (std::vector<std::pair<int32_t, int32_t>>{{0, 1}, {1, 0}, {0, 1}, {1, 0}}));
}

}  // namespace
}  // namespace ksched::scheduler
