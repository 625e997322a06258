#include "plugins/default_preemption/default_preemption.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cache/snapshot.h"
#include "config/profile.h"
#include "framework/framework.h"
#include "metrics/metrics.h"
#include "plugins/registry.h"
#include "tests/support/plugin_test_util.h"

namespace ksched::plugins {
namespace {

using preemption::Candidate;
using testutil::PodWrapper;

// A pod with a priority, cpu request, node and optional labels / start time.
PodPtr pod(const std::string& name, int32_t prio, const std::string& cpu,
           const std::string& node = "", const api::Labels& labels = {},
           const std::string& start = "") {
  api::Pod p = PodWrapper(name).priority(prio).req({{"cpu", cpu}}).nodeName(node).obj();
  p.metadata.labels = labels;
  if (!start.empty()) p.status.startTime = start;
  return std::make_shared<const api::Pod>(std::move(p));
}

PodInfoPtr info(const PodPtr& p) { return std::make_shared<const PodInfo>(p, features::Gates{}); }

NodePtr node(const std::string& name, const std::string& cpu) {
  return testutil::NodeWrapper(name)
      .capacity({{"cpu", cpu}, {"memory", "8Gi"}, {"pods", "110"}})
      .ptr();
}

std::shared_ptr<const api::PodDisruptionBudget> pdb(const std::string& ns, const api::Labels& sel,
                                                    int32_t allowed,
                                                    std::vector<std::string> disrupted = {}) {
  auto p = std::make_shared<api::PodDisruptionBudget>();
  p->metadata.name = "pdb";
  p->metadata.namespace_ = ns;
  if (!sel.empty()) {
    api::LabelSelector s;
    s.matchLabels = sel;
    p->spec.selector = s;
  }
  p->status.disruptionsAllowed = allowed;
  for (auto& d : disrupted) p->status.disruptedPods[d] = "2026-01-01T00:00:00Z";
  return p;
}

std::vector<std::string> names(const std::vector<PodInfoPtr>& pods) {
  std::vector<std::string> out;
  for (const auto& p : pods) out.push_back(p->pod->metadata.name);
  return out;
}

// ---- pure helpers ----

TEST(DefaultPreemptionArgsTest, DefaultsAndValidation) {
  auto a = decodeDefaultPreemptionArgs(nullptr);
  EXPECT_EQ(a.minCandidateNodesPercentage, 10);
  EXPECT_EQ(a.minCandidateNodesAbsolute, 100);
  a = decodeDefaultPreemptionArgs({{"minCandidateNodesPercentage", 50}});
  EXPECT_EQ(a.minCandidateNodesPercentage, 50);
  EXPECT_EQ(a.minCandidateNodesAbsolute, 100);
  struct Bad {
    nlohmann::json args;
    std::string msg;
  };
  for (const auto& c : std::vector<Bad>{
           {{{"minCandidateNodesPercentage", 101}},
            "minCandidateNodesPercentage: Invalid value: 101: not in valid range [0, 100]"},
           {{{"minCandidateNodesPercentage", -1}},
            "minCandidateNodesPercentage: Invalid value: -1: not in valid range [0, 100]"},
           {{{"minCandidateNodesAbsolute", -1}},
            "minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)"},
           {{{"minCandidateNodesPercentage", 0}, {"minCandidateNodesAbsolute", 0}},
            "minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as "
            "minCandidateNodesAbsolute"},
       }) {
    try {
      (void)decodeDefaultPreemptionArgs(c.args);
      ADD_FAILURE() << "accepted " << c.args.dump();
    } catch (const PluginArgsError& e) {
      EXPECT_EQ(e.what(), c.msg);
    }
  }
  EXPECT_THROW((void)decodeDefaultPreemptionArgs({{"minCandidates", 1}}), PluginArgsError);
}

TEST(PreemptionNumCandidatesTest, PercentageAbsoluteAndClamp) {
  struct Case {
    int32_t pct, abs, nodes, want;
  };
  for (const auto& c : std::vector<Case>{
           {10, 100, 50, 50},     // fewer nodes than the absolute minimum: all
           {10, 100, 5000, 500},  // 10 % of 5000
           {10, 100, 500, 100},   // 10 % is 50, the absolute minimum wins
           {0, 3, 100, 3},        // absolute only
           {100, 0, 7, 7},        // all
           {40, 0, 10, 4},
       }) {
    EXPECT_EQ(preemption::numCandidates({c.pct, c.abs}, c.nodes), c.want)
        << c.pct << "% abs " << c.abs << " of " << c.nodes;
  }
}

TEST(PreemptionPDBTest, DisruptionsAllowedAreSpentInOrder) {
  std::vector<PodInfoPtr> pods = {
      info(pod("a", 1, "1", "n", {{"app", "web"}})), info(pod("b", 1, "1", "n", {{"app", "web"}})),
      info(pod("c", 1, "1", "n", {{"app", "db"}})), info(pod("d", 1, "1", "n"))};
  struct Case {
    std::string name;
    std::vector<std::shared_ptr<const api::PodDisruptionBudget>> pdbs;
    std::vector<std::string> violating, nonViolating;
  };
  for (const auto& c : std::vector<Case>{
           {"no PDBs", {}, {}, {"a", "b", "c", "d"}},
           {"one disruption allowed",
            {pdb("default", {{"app", "web"}}, 1)},
            {"b"},
            {"a", "c", "d"}},
           {"none allowed", {pdb("default", {{"app", "web"}}, 0)}, {"a", "b"}, {"c", "d"}},
           {"other namespace", {pdb("prod", {{"app", "web"}}, 0)}, {}, {"a", "b", "c", "d"}},
           {"empty selector matches nothing", {pdb("default", {}, 0)}, {}, {"a", "b", "c", "d"}},
           {"already disrupted pods are not counted",
            {pdb("default", {{"app", "web"}}, 0, {"a"})},
            {"b"},
            {"a", "c", "d"}},
       }) {
    std::vector<PodInfoPtr> v, nv;
    preemption::filterPodsWithPDBViolation(pods, c.pdbs, v, nv);
    EXPECT_EQ(names(v), c.violating) << c.name;
    EXPECT_EQ(names(nv), c.nonViolating) << c.name;
  }
}

Candidate cand(const std::string& node, std::vector<PodPtr> victims, int64_t violations = 0) {
  Candidate c;
  c.node = node;
  for (auto& v : victims) c.victims.push_back(info(v));
  c.numPDBViolations = violations;
  return c;
}

TEST(PreemptionPickOneTest, UpstreamCriteriaInOrder) {
  const std::string early = "2026-01-01T00:00:00Z", late = "2026-01-02T00:00:00Z";
  struct Case {
    std::string name;
    std::vector<Candidate> cs;
    std::string want;
  };
  std::vector<Case> cases = {
      {"fewest PDB violations",
       {cand("n1", {pod("a", 1, "1")}, 1), cand("n2", {pod("b", 5, "1"), pod("c", 5, "1")}, 0)},
       "n2"},
      {"lowest highest-priority victim",
       {cand("n1", {pod("a", 10, "1")}), cand("n2", {pod("b", 5, "1"), pod("c", 4, "1")})},
       "n2"},
      {"smallest sum of priorities",
       {cand("n1", {pod("a", 5, "1"), pod("b", 5, "1")}),
        cand("n2", {pod("c", 5, "1"), pod("d", 1, "1")})},
       "n2"},
      {"negative priorities still sum lower",
       {cand("n1", {pod("a", 0, "1")}), cand("n2", {pod("b", 0, "1"), pod("c", -5, "1")})},
       "n1"},
      {"fewest victims",
       {cand("n1", {pod("a", 3, "1"), pod("b", 0, "1"), pod("c", 0, "1")}),
        cand("n2", {pod("d", 3, "1"), pod("e", 0, "1")})},
       "n2"},
      {"latest start of the highest-priority victims",
       {cand("n1", {pod("a", 3, "1", "", {}, early)}), cand("n2", {pod("b", 3, "1", "", {}, late)}),
        cand("n3", {pod("c", 3, "1", "", {}, early)})},
       "n2"},
      {"first of equals", {cand("n1", {pod("a", 3, "1")}), cand("n2", {pod("b", 3, "1")})}, "n1"},
      {"a node without victims wins at once",
       {cand("n1", {pod("a", 0, "1")}), cand("n2", {})},
       "n2"},
  };
  // Identical start times make "first of equals" deterministic.
  for (auto& c : cases) {
    if (c.name == "first of equals") {
      for (auto& cd : c.cs) {
        api::Pod p = *cd.victims[0]->pod;
        p.status.startTime = early;
        cd.victims[0] = info(std::make_shared<const api::Pod>(p));
      }
    }
    EXPECT_EQ(c.cs[preemption::pickOneCandidate(c.cs)].node, c.want) << c.name;
  }
}

TEST(PreemptionEligibilityTest, PolicyNeverAndTerminatingVictims) {
  auto terminating = std::make_shared<api::Pod>(*pod("victim", 1, "1", "n1"));
  terminating->metadata.deletionTimestamp = "2026-01-01T00:00:00Z";
  api::PodCondition cond;
  cond.type = "DisruptionTarget";
  cond.status = "True";
  cond.reason = "PreemptionByScheduler";
  terminating->status.conditions.push_back(cond);
  auto snap = cache::Snapshot::fromForTest({terminating}, {node("n1", "4"), node("n2", "4")});

  api::Pod never = *pod("p", 10, "1");
  never.spec.preemptionPolicy = "Never";
  EXPECT_EQ(preemption::ineligibleReason(never, snap, nullptr),
            "not eligible due to preemptionPolicy=Never.");

  api::Pod nominated = *pod("p", 10, "1");
  nominated.status.nominatedNodeName = "n1";
  EXPECT_EQ(preemption::ineligibleReason(nominated, snap, nullptr),
            "not eligible due to a terminating pod on the nominated node.");
  // The nominated node cannot take the pod anyway: preempt again.
  Status unresolvable = Status::unresolvable("node(s) didn't match Pod's node affinity/selector");
  EXPECT_EQ(preemption::ineligibleReason(nominated, snap, &unresolvable), "");
  // A terminating pod of higher priority does not hold the preemptor back.
  api::Pod low = *pod("p", 0, "1");
  low.status.nominatedNodeName = "n1";
  EXPECT_EQ(preemption::ineligibleReason(low, snap, nullptr), "");
  nominated.status.nominatedNodeName = "n2";
  EXPECT_EQ(preemption::ineligibleReason(nominated, snap, nullptr), "");
}

// ---- the dry run through a real framework (PrioritySort, NodeResourcesFit, DefaultBinder) ----

class PreemptionDryRunTest : public ::testing::Test {
 protected:
  void build(std::vector<PodPtr> pods, std::vector<NodePtr> nodes) {
    snapshot_ = cache::Snapshot::fromForTest(std::move(pods), std::move(nodes));
    config::Profile p;
    p.plugins.multiPoint.enabled = {
        {"PrioritySort", 0}, {"NodeResourcesFit", 1}, {"DefaultBinder", 0}};
    framework::Services s;
    s.events = &events_;
    s.parallelizer = &parallelizer_;
    s.listers = &listers_;
    s.metrics = &metrics_;
    fwk_ = std::make_unique<framework::Framework>(p, inTreeRegistry(), s);
    fwk_->setSnapshot(&snapshot_);
    plugin_ = std::make_unique<DefaultPreemption>(DefaultPreemptionArgs{}, *fwk_);
    plugin_->setOffsetForTest(0);
  }

  // Runs PreFilter and Filter like a cycle, then the PostFilter dry run.
  Status run(const api::Pod& preemptor, Candidate& chosen, const NodeToStatus& overrides = {}) {
    state_ = CycleState{};
    PreFilterResult pre;
    EXPECT_TRUE(fwk_->runPreFilterPlugins(state_, preemptor, pre).ok());
    NodeToStatus statuses;
    for (const NodeInfo* n : snapshot_.list()) {
      Status s = fwk_->runFilterPlugins(state_, preemptor, *n);
      EXPECT_FALSE(s.ok()) << n->name() << " fits: nothing to preempt for";
      statuses.insert_or_assign(n->name(), std::move(s));
    }
    for (const auto& [n, s] : overrides) statuses.insert_or_assign(n, s);
    return plugin_->findCandidate(state_, preemptor, statuses, chosen);
  }

  // The work the plugin handed to the framework's pool (evicting victims) ends while the plugin
  // still lives, as the scheduler drains it before its plugins go.
  void TearDown() override {
    if (fwk_) fwk_->close();
  }

  testutil::FakeEventRecorder events_;
  testutil::InlineParallelizer parallelizer_;
  StaticClusterListers listers_;
  metrics::SchedulerMetrics metrics_;
  cache::Snapshot snapshot_;
  CycleState state_;
  std::unique_ptr<framework::Framework> fwk_;
  std::unique_ptr<DefaultPreemption> plugin_;
};

TEST_F(PreemptionDryRunTest, ReprievesAsManyAsFitAndPicksLowestPriorityVictims) {
  // n1: after evicting all, reprieving p3 (2 cpu) leaves 2 free: p2 and p1 must go.
  // n2: reprieving q1 leaves 2 free: only q2 (priority 0) goes -> n2 wins.
  build({pod("p1", 1, "1", "n1"), pod("p2", 2, "1", "n1"), pod("p3", 3, "2", "n1"),
         pod("q1", 4, "2", "n2", {{"app", "db"}}), pod("q2", 0, "2", "n2", {{"app", "web"}})},
        {node("n1", "4"), node("n2", "4")});
  Candidate c;
  ASSERT_TRUE(run(*pod("big", 10, "2"), c).ok());
  EXPECT_EQ(c.node, "n2");
  EXPECT_EQ(names(c.victims), std::vector<std::string>{"q2"});
  EXPECT_EQ(c.numPDBViolations, 0);
}

TEST_F(PreemptionDryRunTest, PDBMovesPreemptionToAnotherNodeAndIsViolatedOnlyWhenNeeded) {
  build({pod("p1", 1, "1", "n1"), pod("p2", 2, "1", "n1"), pod("p3", 3, "2", "n1"),
         pod("q1", 4, "2", "n2", {{"app", "db"}}), pod("q2", 0, "2", "n2", {{"app", "web"}})},
        {node("n1", "4"), node("n2", "4")});
  listers_.add(*pdb("default", {{"app", "web"}}, 0));
  Candidate c;
  ASSERT_TRUE(run(*pod("big", 10, "2"), c).ok());
  EXPECT_EQ(c.node, "n1");
  EXPECT_EQ(names(c.victims), (std::vector<std::string>{"p2", "p1"}));

  // Reprieving the protected pod first: q1 goes instead of q2.
  build({pod("h1", 20, "4", "n1"), pod("q1", 4, "2", "n2", {{"app", "db"}}),
         pod("q2", 0, "2", "n2", {{"app", "web"}})},
        {node("n1", "4"), node("n2", "4")});
  ASSERT_TRUE(run(*pod("big", 10, "2"), c).ok());
  EXPECT_EQ(c.node, "n2");
  EXPECT_EQ(names(c.victims), std::vector<std::string>{"q1"});
  EXPECT_EQ(c.numPDBViolations, 0);

  // Only the protected pod can make room: the PDB is violated.
  build({pod("h1", 20, "4", "n1"), pod("q1", 20, "2", "n2", {{"app", "db"}}),
         pod("q2", 0, "2", "n2", {{"app", "web"}})},
        {node("n1", "4"), node("n2", "4")});
  ASSERT_TRUE(run(*pod("big", 10, "2"), c).ok());
  EXPECT_EQ(c.node, "n2");
  EXPECT_EQ(names(c.victims), std::vector<std::string>{"q2"});
  EXPECT_EQ(c.numPDBViolations, 1);
}

// The framework's Handle::metrics() is the scheduler's: postFilter counts the attempt and
// observes the victims of the node it chose.
TEST_F(PreemptionDryRunTest, RecordsAttemptsAndVictimsThroughTheHandle) {
  build({pod("p1", 1, "2", "n1"), pod("p2", 2, "2", "n1")}, {node("n1", "4")});
  Candidate c;
  ASSERT_TRUE(run(*pod("big", 10, "4"), c).ok());
  NodeToStatus statuses{{"n1", Status::unschedulable("Insufficient cpu")}};
  auto [r, s] = plugin_->postFilter(state_, *pod("big", 10, "4"), statuses);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(r.nominatedNodeName.value_or("-"), "n1");
  const std::string text = metrics_.scrape();
  EXPECT_THAT(text, ::testing::HasSubstr("\nscheduler_preemption_attempts_total 1\n"));
  EXPECT_THAT(text, ::testing::HasSubstr("\nscheduler_preemption_victims_sum 2\n"));
}

TEST_F(PreemptionDryRunTest, EqualPriorityNeverPreempts) {
  build({pod("a", 10, "4", "n1"), pod("b", 10, "4", "n2")}, {node("n1", "4"), node("n2", "4")});
  Candidate c;
  Status s = run(*pod("p", 10, "1"), c);
  EXPECT_EQ(s.code(), Code::kUnschedulable);
  EXPECT_EQ(s.message(),
            "0/2 nodes are available: 2 No preemption victims found for incoming pod.");
  // Through postFilter: the prefix, and the nomination is cleared.
  NodeToStatus statuses;
  for (const NodeInfo* n : snapshot_.list()) {
    statuses.insert_or_assign(n->name(), Status::unschedulable("Insufficient cpu"));
  }
  auto [r, ps] = plugin_->postFilter(state_, *pod("p", 10, "1"), statuses);
  EXPECT_EQ(ps.message(),
            "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming "
            "pod.");
  ASSERT_TRUE(r.nominatedNodeName.has_value());
  EXPECT_EQ(*r.nominatedNodeName, "");
}

TEST_F(PreemptionDryRunTest, PolicyNeverIsNotEligible) {
  build({pod("a", 0, "4", "n1")}, {node("n1", "4")});
  api::Pod p = *pod("p", 10, "1");
  p.spec.preemptionPolicy = "Never";
  Candidate c;
  Status s = run(p, c);
  EXPECT_EQ(s.code(), Code::kUnschedulable);
  EXPECT_EQ(s.message(), "not eligible due to preemptionPolicy=Never.");
}

TEST_F(PreemptionDryRunTest, UnresolvableNodesAreNotCandidatesAndTooBigPodsStayPending) {
  // n1 is rejected for a reason eviction cannot fix; on n2 only 1 of the 3 cpu needed can be
  // freed (c has a higher priority than the preemptor).
  build({pod("a", 0, "2", "n1"), pod("b", 0, "1", "n2"), pod("c", 20, "2", "n2")},
        {node("n1", "4"), node("n2", "4")});
  Candidate c;
  Status s =
      run(*pod("big", 10, "3"), c,
          {{"n1", Status::unresolvable("node(s) didn't match Pod's node affinity/selector")}});
  EXPECT_EQ(s.code(), Code::kUnschedulable);
  EXPECT_EQ(s.message(),
            "0/2 nodes are available: 1 Insufficient cpu, 1 Preemption is not helpful for "
            "scheduling.");
}

TEST_F(PreemptionDryRunTest, NominatedPodsOfHigherPriorityKeepTheirRoom) {
  // n1 has 2 free after evicting `low`; a nominated pod of priority 20 takes 2 of them.
  build({pod("low", 0, "2", "n1"), pod("mid", 15, "2", "n1")}, {node("n1", "4")});
  auto nominated = info(pod("nom", 20, "2"));
  config::Profile p;
  p.plugins.multiPoint.enabled = {
      {"PrioritySort", 0}, {"NodeResourcesFit", 1}, {"DefaultBinder", 0}};
  framework::Services s;
  s.events = &events_;
  s.parallelizer = &parallelizer_;
  s.listers = &listers_;
  s.nominatedPodsForNode = [&](const std::string& n) {
    return n == "n1" ? std::vector<PodInfoPtr>{nominated} : std::vector<PodInfoPtr>{};
  };
  fwk_ = std::make_unique<framework::Framework>(p, inTreeRegistry(), s);
  fwk_->setSnapshot(&snapshot_);
  plugin_ = std::make_unique<DefaultPreemption>(DefaultPreemptionArgs{}, *fwk_);
  Candidate c;
  Status st = run(*pod("p", 10, "2"), c);
  EXPECT_EQ(st.message(), "0/1 nodes are available: 1 Insufficient cpu.");
  // A preemptor above the nominated pod's priority ignores it.
  ASSERT_TRUE(run(*pod("p", 30, "2"), c).ok());
  EXPECT_EQ(names(c.victims), std::vector<std::string>{"low"});
}

TEST_F(PreemptionDryRunTest, StopsAfterEnoughCandidates) {
  std::vector<PodPtr> pods;
  std::vector<NodePtr> nodes;
  for (int i = 0; i < 20; ++i) {
    const std::string n = "n" + std::to_string(i);
    nodes.push_back(node(n, "1"));
    pods.push_back(pod("v" + std::to_string(i), 0, "1", n));
  }
  build(pods, nodes);
  plugin_ = std::make_unique<DefaultPreemption>(DefaultPreemptionArgs{10, 3}, *fwk_);
  plugin_->setOffsetForTest(5);
  Candidate c;
  ASSERT_TRUE(run(*pod("p", 10, "1"), c).ok());
  // The dry run started at offset 5 and stopped after 3 equal candidates: the first wins.
  EXPECT_EQ(c.node, snapshot_.list()[5]->name());
}

// ---- workload-aware preemption (podGroupPostFilter), with a stand-in for the group's placement:
// each of the group's pods takes 2 cpus on the first node with room, in node order ----

class GroupPreemptionTest : public PreemptionDryRunTest {
 protected:
  PodGroupInfo group(int32_t priority, int pods, std::optional<std::string> policy = {}) {
    auto pg = std::make_shared<api::PodGroup>();
    pg->metadata.name = "train";
    pg->metadata.namespace_ = "default";
    pg->spec.priority = priority;
    PodGroupInfo info{.ns = "default", .name = "train", .podGroup = pg, .pods = {}};
    for (int i = 0; i < pods; ++i) {
      api::Pod p = *pod("w" + std::to_string(i), priority, "2");
      p.spec.preemptionPolicy = policy;
      info.pods.push_back(std::make_shared<const api::Pod>(std::move(p)));
    }
    return info;
  }
  static PodGroupScheduleFn twoCpusEach(const PodGroupInfo& info) {
    return [&info](const NodeInfoLister& nodes,
                   std::vector<std::pair<PodPtr, std::string>>& proposed) {
      std::map<std::string, int64_t> free;
      for (const NodeInfo* n : nodes.list()) {
        free[n->name()] = n->allocatable().milliCPU - n->requested().milliCPU;
      }
      for (const PodPtr& p : info.pods) {
        bool placed = false;
        for (const NodeInfo* n : nodes.list()) {
          if (free[n->name()] >= 2000) {
            free[n->name()] -= 2000;
            proposed.emplace_back(p, n->name());
            placed = true;
            break;
          }
        }
        if (!placed) return Status::unschedulable("minCount cannot be satisfied");
      }
      return Status::success();
    };
  }
};

TEST_F(GroupPreemptionTest, EvictsTheLeastImportantPodsTheGroupNeedsAndNominatesItsPods) {
  build({pod("low", 1, "2", "n1"), pod("lower", 0, "2", "n1"), pod("mid", 5, "4", "n2")},
        {node("n1", "4"), node("n2", "4")});
  const PodGroupInfo info = group(10, 2);
  CycleState state;
  auto [result, s] = plugin_->podGroupPostFilter(state, info, snapshot_, twoCpusEach(info));
  ASSERT_TRUE(s.ok()) << s.message();
  // "mid" is given back first (most important) and the group still fits on n1.
  EXPECT_EQ(result.message, "found a placement for podgroup, preempting 2 victims");
  EXPECT_EQ(result.nominations,
            (std::map<std::string, std::string>{{"default/w0", "n1"}, {"default/w1", "n1"}}));
  EXPECT_EQ(plugin_->victimsTotal(), 2u);

  // Its victims are still in the snapshot: the group waits on its nominations.
  auto [again, s2] = plugin_->podGroupPostFilter(state, info, snapshot_, twoCpusEach(info));
  EXPECT_TRUE(s2.ok());
  EXPECT_EQ(again.message, "ongoing preemption on nominated nodes");
  EXPECT_EQ(again.nominations, result.nominations);
  EXPECT_EQ(plugin_->victimsTotal(), 2u);
}

TEST_F(GroupPreemptionTest, NeverPreemptsWithPolicyNeverNorWithoutLowerPriorityPods) {
  build({pod("low", 1, "4", "n1")}, {node("n1", "4")});
  const PodGroupInfo never = group(10, 2, "Never");
  CycleState state;
  auto [r1, s1] = plugin_->podGroupPostFilter(state, never, snapshot_, twoCpusEach(never));
  EXPECT_EQ(s1.code(), Code::kUnschedulable);
  EXPECT_EQ(s1.message(), "not eligible due to preemptionPolicy=Never.");

  const PodGroupInfo equal = group(1, 2);
  auto [r2, s2] = plugin_->podGroupPostFilter(state, equal, snapshot_, twoCpusEach(equal));
  EXPECT_EQ(s2.message(), "No preemption victims found for incoming preemptor");

  // Even with every lower pod gone the group does not fit: the placement's reason.
  const PodGroupInfo big = group(10, 3);
  auto [r3, s3] = plugin_->podGroupPostFilter(state, big, snapshot_, twoCpusEach(big));
  EXPECT_EQ(s3.message(), "minCount cannot be satisfied");
  EXPECT_EQ(plugin_->victimsTotal(), 0u);
}

}  // namespace
}  // namespace ksched::plugins
