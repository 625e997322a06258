// The scheduling algorithm (scheduler/algorithm.h): how many nodes to look at, the FitError
// message, one cycle over a snapshot with the test plugins of tests/support.
#include "scheduler/algorithm.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tests/support/framework_test_plugins.h"

namespace ksched {
namespace {

using namespace frameworktest;  // NOLINT(google-build-using-namespace)

TEST(NumFeasibleNodesToFindTest, FollowsUpstream) {
  struct Case {
    int32_t pct;
    int nodes;
    int want;
  };
  for (const auto& c : std::vector<Case>{{0, 10, 10},
                                         {0, 99, 99},
                                         {0, 500, 230},   // 50 - 4 = 46 %
                                         {0, 5000, 500},  // 50 - 40 = 10 %
                                         {0, 6000, 300},  // 50 - 48 = 2 %, raised to 5 %
                                         {10, 500, 100},  // 50 nodes -> at least 100
                                         {100, 5000, 5000},
                                         {30, 1000, 300}}) {
    SCOPED_TRACE(std::to_string(c.pct) + "% of " + std::to_string(c.nodes));
    EXPECT_EQ(scheduler::numFeasibleNodesToFind(c.pct, c.nodes), c.want);
  }
}

TEST(FitErrorTest, MessageCountsReasonsSortedLikeUpstream) {
  scheduler::FitError e;
  e.numAllNodes = 5;
  e.diagnosis.nodeToStatus["a"] = Status::unschedulable("Insufficient cpu");
  e.diagnosis.nodeToStatus["b"] = Status::unschedulable("Insufficient cpu");
  e.diagnosis.nodeToStatus["c"] =
      Status(Code::kUnschedulable, {"Insufficient cpu", "Insufficient memory"});
  e.diagnosis.nodeToStatus["d"] = Status::unresolvable("node(s) had untolerated taint(s)");
  e.diagnosis.nodeToStatus["e"] = Status::unresolvable("node(s) had untolerated taint(s)");
  EXPECT_EQ(e.message(),
            "0/5 nodes are available: 1 Insufficient memory, 2 node(s) had untolerated taint(s), "
            "3 Insufficient cpu.");
  e.diagnosis.postFilterMsg = "preemption: not eligible.";
  EXPECT_EQ(e.message(),
            "0/5 nodes are available: 1 Insufficient memory, 2 node(s) had untolerated taint(s), "
            "3 Insufficient cpu. preemption: not eligible.");
  scheduler::FitError pre;
  pre.numAllNodes = 3;
  pre.diagnosis.preFilterMsg = "node(s) didn't match the requested node name";
  EXPECT_EQ(pre.message(),
            "0/3 nodes are available: node(s) didn't match the requested node name.");
  // An extender that drops every node without naming a failure leaves no reason: upstream
  // prints the head alone (then any PostFilter message), never an empty list.
  scheduler::FitError none;
  none.numAllNodes = 3;
  EXPECT_EQ(none.message(), "0/3 nodes are available:");
  none.diagnosis.postFilterMsg =
      "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.";
  EXPECT_EQ(none.message(),
            "0/3 nodes are available: preemption: 0/3 nodes are available: 3 Preemption is not "
            "helpful for scheduling.");
}

// One cycle for a pod named "p", expected to be scheduled.
scheduler::ScheduleResult scheduleP(scheduler::Algorithm& algo, Framework& f,
                                    const cache::Snapshot& snap, int32_t percentage) {
  api::Pod pod;
  pod.metadata.name = "p";
  CycleState state;
  scheduler::ScheduleResult r;
  scheduler::FitError fe;
  Status err;
  EXPECT_EQ(algo.schedulePod(f, state, pod, snap, percentage, r, fe, err),
            scheduler::Algorithm::Outcome::kScheduled);
  return r;
}

TEST(AlgorithmTest, FiltersScoresAndPicksTheBestNode) {
  Env env;
  auto snap = snapshotOf({"n1", "n2", "n3", "n4"});
  auto p = profile({{"Sort", 0}, {"A", 0}, {"B", 2}, {"Binder", 0}});
  p.pluginConfig = {{"A", {{"reject", {"n1"}}, {"reason", "nope"}}},
                    {"B", {{"scores", {{"n2", 10}, {"n3", 40}, {"n4", 30}}}}}};
  Framework f(p, testRegistry(), env.services());
  f.setSnapshot(&snap);
  scheduler::Algorithm algo(42);
  const scheduler::ScheduleResult r = scheduleP(algo, f, snap, 0);
  EXPECT_EQ(r.suggestedHost, "n3");
  EXPECT_EQ(r.feasibleNodes, 3);
  EXPECT_EQ(r.evaluatedNodes, 4);
}

// Nodes that share the top score are picked uniformly at random; a lower score never.
TEST(AlgorithmTest, TopScoreTiesArePickedUniformly) {
  Env env;
  auto snap = snapshotOf({"n1", "n2", "n3", "n4", "n5"});
  auto p = profile({{"Sort", 0}, {"B", 1}, {"Binder", 0}});
  // n1 first and n5 last among the ties, n3 below them.
  p.pluginConfig = {
      {"B", {{"scores", {{"n1", 50}, {"n2", 50}, {"n3", 49}, {"n4", 50}, {"n5", 50}}}}}};
  Framework f(p, testRegistry(), env.services());
  f.setSnapshot(&snap);
  scheduler::Algorithm algo(7);
  std::map<std::string, int> picked;
  constexpr int kRuns = 4000;
  for (int i = 0; i < kRuns; ++i) ++picked[scheduleP(algo, f, snap, 100).suggestedHost];
  EXPECT_EQ(picked.count("n3"), 0U);
  for (const char* n : {"n1", "n2", "n4", "n5"}) {
    // 1000 expected each; the binomial's standard deviation is about 27.
    EXPECT_GT(picked[n], 850) << n;
    EXPECT_LT(picked[n], 1150) << n;
  }
}

TEST(AlgorithmTest, NoFitGivesDiagnosisWithRejectingPlugins) {
  Env env;
  std::vector<NodePtr> nodes;
  for (const char* n : {"n1", "n2", "n3"}) nodes.push_back(std::make_shared<api::Node>(node(n)));
  auto snap = cache::Snapshot::fromForTest({}, nodes);
  auto p = profile({{"Sort", 0}, {"A", 0}, {"B", 0}, {"Binder", 0}});
  p.pluginConfig = {
      {"A", {{"reject", {"n1", "n2"}}, {"reason", "Insufficient cpu"}}},
      {"B",
       {{"reject", {"n3"}}, {"reason", "node(s) were unschedulable"}, {"unresolvable", true}}}};
  Framework f(p, testRegistry(), env.services());
  f.setSnapshot(&snap);
  scheduler::Algorithm algo(1);
  api::Pod pod;
  CycleState state;
  scheduler::ScheduleResult r;
  scheduler::FitError fe;
  Status err;
  ASSERT_EQ(algo.schedulePod(f, state, pod, snap, 0, r, fe, err),
            scheduler::Algorithm::Outcome::kUnschedulable);
  EXPECT_EQ(fe.message(),
            "0/3 nodes are available: 1 node(s) were unschedulable, 2 Insufficient cpu.");
  EXPECT_EQ(fe.diagnosis.unschedulablePlugins, (std::set<std::string, std::less<>>{"A", "B"}));
}

// A PreFilter that says Skip (pod label skip=<this plugin's name>) skips the plugin's Filter,
// which rejects every node; another plugin's Filter still runs. Also on a cloned state (as
// preemption uses).
TEST(AlgorithmTest, PreFilterSkipSkipsThatPluginsFilterOnly) {
  class Skipper final : public PreFilterPlugin, public FilterPlugin {
   public:
    explicit Skipper(std::string name) : name_(std::move(name)) {}
    std::string_view name() const override { return name_; }
    Status preFilter(CycleState&, const api::Pod& pod, const NodeInfoLister&,
                     PreFilterResult&) override {
      auto it = pod.metadata.labels.find("skip");
      return it != pod.metadata.labels.end() && it->second.find(name_) != std::string::npos
                 ? Status::skip()
                 : Status{};
    }
    Status filter(const CycleState&, const api::Pod&, const NodeInfo&) const override {
      return Status(Code::kUnschedulable, {name_ + " rejects"});
    }

   private:
    std::string name_;
  };
  Env env;
  auto n1 = std::make_shared<api::Node>(node("n1"));
  auto snap = cache::Snapshot::fromForTest({}, {n1});
  Registry r = testRegistry();
  for (const char* n : {"S1", "S2"}) {
    r.add(n, [n](Handle&) { return std::make_unique<Skipper>(n); });
  }
  // Filter order: A, S1, S2 (S1 at position 1, S2 at 2).
  Framework f(profile({{"Sort", 0}, {"A", 0}, {"S1", 0}, {"S2", 0}, {"Binder", 0}}), r,
              env.services());
  f.setSnapshot(&snap);
  const NodeInfo& ni = *snap.get("n1");
  auto filterWith = [&](const std::string& skip, bool cloned) {
    api::Pod pod;
    pod.metadata.labels["skip"] = skip;
    CycleState state;
    PreFilterResult pre;
    EXPECT_TRUE(f.runPreFilterPlugins(state, pod, pre).ok());
    return cloned ? f.runFilterPlugins(state.clone(), pod, ni) : f.runFilterPlugins(state, pod, ni);
  };
  for (bool cloned : {false, true}) {
    EXPECT_EQ(filterWith("", cloned).message(), "S1 rejects");
    EXPECT_EQ(filterWith("S1", cloned).message(), "S2 rejects");
    EXPECT_EQ(filterWith("S2", cloned).message(), "S1 rejects");
    EXPECT_TRUE(filterWith("S1,S2", cloned).ok());
  }
}

TEST(AlgorithmTest, NominatedPodsOfHigherPriorityReserveRoom) {
  Env env;
  auto n1 = std::make_shared<api::Node>(node("n1"));
  auto snap = cache::Snapshot::fromForTest({}, {n1});
  // A filter that rejects nodes holding any pod.
  Registry r = testRegistry();
  class Empty final : public FilterPlugin {
   public:
    std::string_view name() const override { return "Empty"; }
    Status filter(const CycleState&, const api::Pod&, const NodeInfo& n) const override {
      return n.pods().empty() ? Status{} : Status::unschedulable("node(s) not empty");
    }
  };
  r.add("Empty", [](Handle&) { return std::make_unique<Empty>(); });
  auto nominated = std::make_shared<api::Pod>();
  nominated->metadata.uid = "nom";
  nominated->spec.priority = 100;
  auto nominatedInfo = std::make_shared<const PodInfo>(nominated, features::Gates{});
  auto services = env.services();
  services.nominatedPodsForNode = [&](const std::string&) {
    return std::vector<PodInfoPtr>{nominatedInfo};
  };
  Framework f(profile({{"Sort", 0}, {"Empty", 0}, {"Binder", 0}}), r, services);
  f.setSnapshot(&snap);
  api::Pod low;
  low.metadata.uid = "low";
  low.spec.priority = 10;
  api::Pod high = low;
  high.metadata.uid = "high";
  high.spec.priority = 1000;
  CycleState state;
  EXPECT_FALSE(f.runFilterPluginsWithNominatedPods(state, low, *snap.get("n1")).ok());
  EXPECT_TRUE(f.runFilterPluginsWithNominatedPods(state, high, *snap.get("n1")).ok());
}

}  // namespace
}  // namespace ksched
