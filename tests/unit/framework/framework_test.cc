#include "framework/framework.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <initializer_list>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <ksched/testing/fakes.h>

#include "cache/snapshot.h"
#include "framework/parallelizer.h"
#include "tests/support/framework_test_plugins.h"

namespace ksched {
namespace {

using framework::Framework;
using framework::FrameworkError;

using namespace frameworktest;  // NOLINT(google-build-using-namespace)

TEST(FrameworkWiringTest, MultiPointExpandsToEveryExtensionPointWithWeights) {
  Env env;
  auto p = profile({{"Sort", 0}, {"A", 3}, {"B", 0}, {"Binder", 0}});
  p.plugins.score.enabled = {{"B", 5}};
  Framework f(p, testRegistry(), env.services());
  auto m = f.pluginsPerExtensionPoint();
  EXPECT_EQ(m["Filter"], (std::vector<std::string>{"A", "B"}));     // multiPoint order
  EXPECT_EQ(m["Score"], (std::vector<std::string>{"B:5", "A:3"}));  // explicit override first
  EXPECT_EQ(m["QueueSort"], (std::vector<std::string>{"Sort"}));
  EXPECT_EQ(m["Bind"], (std::vector<std::string>{"Binder"}));
  auto ev = f.enqueueEvents();
  ASSERT_TRUE(ev.contains("A"));
  EXPECT_EQ(ev["A"][0].event.label(), "NodeAdd");
}

TEST(FrameworkWiringTest, DisabledRemovesFromOnePoint) {
  Env env;
  auto p = profile({{"Sort", 0}, {"A", 0}, {"B", 0}, {"Binder", 0}});
  p.plugins.score.disabled = {{"*", 0}};
  p.plugins.filter.disabled = {{"A", 0}};
  Framework f(p, testRegistry(), env.services());
  auto m = f.pluginsPerExtensionPoint();
  EXPECT_EQ(m["Filter"], (std::vector<std::string>{"B"}));
  EXPECT_FALSE(m.contains("Score"));
}

// A plugin that implements Reserve, enabled at other points but not there (a profile that
// enables it under `score` alone), keeps no state at Reserve: the profile gets a warning.
TEST(FrameworkWiringTest, APluginEnabledWithoutItsReserveIsWarnedOf) {
  Env env;
  auto scoreOnly = profile({{"Sort", 0}, {"A", 0}, {"Binder", 0}});
  scoreOnly.plugins.score.enabled = {{"Keeper", 0}};
  Framework f(scoreOnly, testRegistry(), env.services(), "profiles[1]");
  EXPECT_EQ(
      f.warnings(),
      std::vector<std::string>{
          "profiles[1].plugins: plugin \"Keeper\" is enabled at Score but not at Reserve, "
          "which it implements: what it keeps there is not kept (enable it under multiPoint)"});
  auto whole = profile({{"Sort", 0}, {"A", 0}, {"Binder", 0}, {"Keeper", 0}});
  Framework g(whole, testRegistry(), env.services());
  EXPECT_TRUE(g.warnings().empty());
  auto reserveDisabled = whole;
  reserveDisabled.plugins.reserve.disabled = {{"*", 0}};
  Framework h(reserveDisabled, testRegistry(), env.services());
  EXPECT_EQ(h.warnings().size(), 1u);
}

TEST(FrameworkWiringTest, ValidationErrorsNameTheField) {
  struct Case {
    const char* name;
    config::Profile profile;
    std::string want;
  };
  auto noSort = profile({{"A", 0}, {"Binder", 0}});
  auto twoSorts = profile({{"Sort", 0}, {"Binder", 0}});
  twoSorts.plugins.queueSort.enabled = {{"Sort", 0}};
  twoSorts.plugins.queueSort.enabled.push_back({"Sort", 0});
  auto noBind = profile({{"Sort", 0}});
  auto unknown = profile({{"Sort", 0}, {"Binder", 0}});
  unknown.plugins.filter.enabled = {{"A", 0}, {"Nope", 0}};
  auto badWeight = profile({{"Sort", 0}, {"Binder", 0}});
  badWeight.plugins.score.enabled = {{"A", 0}, {"B", 101}};
  auto notAFilter = profile({{"Sort", 0}, {"Binder", 0}});
  notAFilter.plugins.filter.enabled = {{"Binder", 0}};
  auto badArgs = profile({{"Sort", 0}, {"A", 0}, {"Binder", 0}});
  badArgs.pluginConfig = {{"A", {{"bad", 1}}}};
  auto dupArgs = profile({{"Sort", 0}, {"A", 0}, {"Binder", 0}});
  dupArgs.pluginConfig = {{"A", nullptr}, {"A", nullptr}};
  std::vector<Case> cases = {
      {"no queue sort", noSort, "profiles[0].plugins.queueSort: no queue sort plugin is enabled"},
      {"two queue sorts", twoSorts,
       "profiles[0].plugins.queueSort.enabled[1]: plugin \"Sort\" is enabled twice"},
      {"no bind", noBind, "profiles[0].plugins.bind: at least one bind plugin is needed"},
      {"unknown", unknown, "profiles[0].plugins.filter.enabled[1]: plugin \"Nope\" does not exist"},
      {"weight", badWeight,
       "profiles[0].plugins.score.enabled[1].weight: must be in range [1, 100]"},
      {"not a filter", notAFilter,
       "profiles[0].plugins.filter.enabled[0]: plugin \"Binder\" does not extend Filter"},
      {"bad args", badArgs, "profiles[0].pluginConfig[0].args.bad: must not be set"},
      {"duplicate args", dupArgs, "profiles[0].pluginConfig[1]: duplicate plugin config for \"A\""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    std::string err = wiringError(c.profile);
    EXPECT_NE(err.find(c.want), std::string::npos) << err;
  }
}

TEST(FrameworkWiringTest, DuplicateRegistrationIsRejected) {
  Registry r = testRegistry();
  auto sort = [](Handle&) { return std::make_unique<Sort>(); };
  EXPECT_THROW(r.add("A", sort), std::invalid_argument);
  Registry other;
  other.add("A", sort);
  EXPECT_THROW(r.merge(other), std::invalid_argument);
  Registry third;
  third.add("Z", [](Handle&) { return std::make_unique<Sort>(); });
  r.merge(third);
  EXPECT_NE(r.find("Z"), nullptr);
}

// Validation decodes every plugin's args and builds nothing; the framework then builds each
// plugin once, with its services in place: what a plugin asks for while it is built (pod event
// handlers, a watch, the listers it keeps) reaches the services at once.
TEST(FrameworkWiringTest, ValidationBuildsNothingAndTheFrameworkBuildsOnce) {
  struct Seen {
    int decoded = 0;
    int built = 0;
    const ClusterListers* listers = nullptr;
    std::shared_ptr<const ObjectStore> store;
  };
  auto seen = std::make_shared<Seen>();
  Registry r = testRegistry();
  r.add(
      "Watcher",
      [seen](const nlohmann::json& args) {
        ++seen->decoded;
        return args;
      },
      [seen](const nlohmann::json&, Handle& h) {
        ++seen->built;
        seen->listers = &h.listers();
        h.addPodEventHandlers({[](const PodPtr&) {}, nullptr, nullptr});
        seen->store = h.watchObjects({"Thing", "/apis/x/v1/things", ""}, {});
        return std::make_unique<Fake>("Watcher", nlohmann::json::object());
      });
  auto check = config::wiringCheck(r);
  auto p = profile({{"Sort", 0}, {"Watcher", 0}, {"Binder", 0}});
  p.schedulerName = "one";
  config::WiringResult w = check(p, "profiles[0]", features::Gates{});
  EXPECT_TRUE(w.errors.empty()) << w.errors;
  EXPECT_EQ(w.queueSort, "Sort");
  EXPECT_EQ(seen->decoded, 1);
  EXPECT_EQ(seen->built, 0);
  // Args errors are found by decoding alone.
  auto bad = profile({{"Sort", 0}, {"A", 0}, {"Binder", 0}});
  bad.pluginConfig.push_back({"A", nlohmann::json{{"bad", true}}});
  EXPECT_EQ(check(bad, "profiles[1]", features::Gates{}).errors,
            "profiles[1].pluginConfig[0].args.bad: must not be set");
  EXPECT_EQ(seen->built, 0);

  Env env;
  StaticClusterListers listers;
  api::Namespace ns;
  ns.metadata.name = "team-a";
  listers.add(ns);
  int podHandlers = 0;
  std::vector<std::string> watched;
  auto target = std::make_shared<EmptyObjectStore>();
  framework::Services s = env.services();
  s.listers = &listers;
  s.addPodEventHandlers = [&](PodEventHandlers h) { podHandlers += h.onAdd ? 1 : 0; };
  s.watchObjects = [&](const ObjectWatch& what, ObjectEventHandlers) {
    watched.push_back(what.path);
    return std::shared_ptr<const ObjectStore>(target);
  };
  Framework f(p, r, s);
  EXPECT_EQ(seen->built, 1);
  EXPECT_EQ(podHandlers, 1);
  EXPECT_EQ(watched, (std::vector<std::string>{"/apis/x/v1/things"}));
  EXPECT_EQ(seen->store, target);
  ASSERT_EQ(seen->listers->namespaces().size(), 1u);
  EXPECT_EQ(seen->listers->getNamespace("team-a")->metadata.name, "team-a");
  EXPECT_EQ(f.pluginsPerExtensionPoint().at("Filter"), (std::vector<std::string>{"Watcher"}));
}

// The registry knows a plugin's extension points from its class, without building it.
TEST(FrameworkWiringTest, FactoriesDeclareTheirPointsFromTheClass) {
  Registry r = testRegistry();
  const PluginFactory* sort = r.find("Sort");
  ASSERT_NE(sort, nullptr);
  EXPECT_TRUE(sort->points.has(ExtensionPoint::kQueueSort));
  EXPECT_FALSE(sort->points.has(ExtensionPoint::kFilter));
  const PluginFactory* fake = r.find("A");
  ASSERT_NE(fake, nullptr);
  testing::FakeHandle handle;
  auto built = makePlugin(*fake, nlohmann::json::object(), handle);
  EXPECT_EQ(fake->points, extensionPointsOf(*built));
}

config::Profile waitProfile(int w1Ms, int w2Ms) {
  auto p = profile({{"Sort", 0}, {"W1", 0}, {"W2", 0}, {"Binder", 0}});
  p.pluginConfig.push_back({"W1", {{"waitMs", w1Ms}, {"postFilter", {"w1 says no"}}}});
  p.pluginConfig.push_back({"W2", {{"waitMs", w2Ms}}});
  return p;
}

api::Pod podWithUid(const std::string& uid) {
  api::Pod p;
  p.metadata.name = uid;
  p.metadata.namespace_ = "default";
  p.metadata.uid = uid;
  return p;
}

TEST(FrameworkPermitTest, AWaitEndsWhenEveryWaitingPluginAllows) {
  Env env;
  Framework f(waitProfile(60000, 60000), testRegistry(), env.services());
  CycleState state;
  const api::Pod pod = podWithUid("u1");
  std::atomic<int> decided{0};
  ASSERT_TRUE(f.runPermitPlugins(state, pod, "n1").isWait());
  f.onPermitDecided(pod.metadata.uid, [&] { ++decided; });
  auto wp = f.getWaitingPod("u1");
  ASSERT_NE(wp, nullptr);
  wp->allow("W1");
  EXPECT_EQ(decided.load(), 0);  // W2 still waits
  wp->allow("W2");
  EXPECT_EQ(decided.load(), 1);
  wp->reject("W1", "too late");  // decided already: no second call, no change
  EXPECT_EQ(decided.load(), 1);
  std::chrono::duration<double> waited{-1};
  EXPECT_TRUE(f.waitOnPermit(pod, &waited).ok());
  EXPECT_GE(waited.count(), 0.0);
  EXPECT_EQ(f.getWaitingPod("u1"), nullptr);  // collected
  // A pod that does not wait.
  EXPECT_TRUE(f.waitOnPermit(podWithUid("other")).ok());
}

TEST(FrameworkPermitTest, RejectionAndTimeoutDecideWithoutAnyoneBlocking) {
  Env env;
  Framework f(waitProfile(60000, 150), testRegistry(), env.services());
  CycleState state;
  std::atomic<int> decided{0};
  const api::Pod rejected = podWithUid("r");
  const api::Pod timedOut = podWithUid("t");
  ASSERT_TRUE(f.runPermitPlugins(state, rejected, "n1").isWait());
  f.onPermitDecided(rejected.metadata.uid, [&] { ++decided; });
  ASSERT_TRUE(f.runPermitPlugins(state, timedOut, "n1").isWait());
  f.onPermitDecided(timedOut.metadata.uid, [&] { ++decided; });
  f.getWaitingPod("r")->reject("W1", "group released");
  EXPECT_EQ(decided.load(), 1);
  Status s = f.waitOnPermit(rejected);
  EXPECT_EQ(s.code(), Code::kUnschedulable);
  EXPECT_EQ(s.message(), "group released");
  EXPECT_EQ(s.plugin(), "W1");
  // The shortest timeout (W2's 150 ms) ends the other wait: the permit timer calls back.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (decided.load() < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(decided.load(), 2);
  s = f.waitOnPermit(timedOut);
  EXPECT_EQ(s.message(), "rejected due to timeout after waiting 0.15s at plugin W2");
  EXPECT_EQ(s.plugin(), "W2");
  f.close();
}

TEST(FrameworkPermitTest, ShutdownRejectsWaitingPods) {
  Env env;
  Framework f(waitProfile(60000, 0), testRegistry(), env.services());
  CycleState state;
  std::atomic<int> decided{0};
  ASSERT_TRUE(f.runPermitPlugins(state, podWithUid("s"), "n1").isWait());
  f.onPermitDecided(podWithUid("s").metadata.uid, [&] { ++decided; });
  f.rejectAllWaitingPods("scheduler is shutting down");
  EXPECT_EQ(decided.load(), 1);
  EXPECT_EQ(f.waitOnPermit(podWithUid("s")).message(), "scheduler is shutting down");
}

TEST(FrameworkPostFilterTest, RejectionsAddUpAndTheFirstRejectorIsNamed) {
  Env env;
  auto p = profile({{"Sort", 0}, {"W1", 0}, {"W2", 0}, {"Binder", 0}});
  p.pluginConfig.push_back({"W1", {{"postFilter", nlohmann::json::array()}}});
  p.pluginConfig.push_back({"W2", {{"postFilter", {"w2: no room", "w2: really"}}}});
  Framework f(p, testRegistry(), env.services());
  CycleState state;
  auto [result, s] = f.runPostFilterPlugins(state, podWithUid("x"), {});
  EXPECT_EQ(s.code(), Code::kUnschedulable);
  EXPECT_EQ(s.message(), "w2: no room, w2: really");
  EXPECT_EQ(s.plugin(), "W1");
}

// Totals are the weighted sums of the plugins' scores, whether the framework sums them as
// scored (no NormalizeScore, no breakdown asked for) or from the lists; a score outside [0, 100]
// is an error naming the plugin either way.
TEST(FrameworkScoreTest, TotalsAreWeightedSumsAndAScoreOutOfRangeIsAnError) {
  Env env;
  auto p = profile({{"Sort", 0}, {"A", 2}, {"B", 3}, {"Binder", 0}});
  p.pluginConfig.push_back({"A", {{"scores", {{"n1", 10}, {"n2", 100}, {"n3", 0}}}}});
  p.pluginConfig.push_back({"B", {{"scores", {{"n1", 7}, {"n2", 0}, {"n3", 50}}}}});
  Framework f(p, testRegistry(), env.services());
  cache::Snapshot snap = snapshotOf({"n1", "n2", "n3"});
  const std::vector<const NodeInfo*>& nodes = snap.list();
  ASSERT_EQ(nodes.size(), 3U);
  std::vector<int64_t> expected;
  for (const NodeInfo* ni : nodes) {
    const std::string& n = ni->name();
    expected.push_back(n == "n1" ? 2 * 10 + 3 * 7 : n == "n2" ? 2 * 100 : 3 * 50);
  }
  for (const bool withBreakdown : {false, true}) {
    SCOPED_TRACE(withBreakdown ? "with a breakdown" : "summed as scored");
    CycleState state;
    std::vector<int64_t> totals;
    Framework::ScoreBreakdown breakdown;
    ASSERT_TRUE(f.runScorePlugins(state, podWithUid("x"), nodes, totals,
                                  withBreakdown ? &breakdown : nullptr)
                    .ok());
    EXPECT_EQ(totals, expected);
  }

  auto bad = profile({{"Sort", 0}, {"A", 1}, {"B", 1}, {"Binder", 0}});
  bad.pluginConfig.push_back({"B", {{"scores", {{"n2", 101}}}}});
  Framework g(bad, testRegistry(), env.services());
  for (const bool withBreakdown : {false, true}) {
    SCOPED_TRACE(withBreakdown ? "with a breakdown" : "summed as scored");
    CycleState state;
    std::vector<int64_t> totals;
    Framework::ScoreBreakdown breakdown;
    Status s = g.runScorePlugins(state, podWithUid("x"), nodes, totals,
                                 withBreakdown ? &breakdown : nullptr);
    EXPECT_EQ(s.code(), Code::kError);
    EXPECT_EQ(s.plugin(), "B");
    EXPECT_EQ(s.message(),
              "plugin \"B\" returns an invalid score 101, it should in the range of [0, 100] "
              "after normalizing");
  }
}

// NormalizeScore gets the nodes' names when the plugin says it reads them; when it says it does
// not, none are copied (each case runs on a thread of its own: the lists are kept per thread
// from cycle to cycle, so a later cycle may see names an earlier one filled in).
TEST(FrameworkScoreTest, NormalizeScoreGetsNamesOnlyWhenItReadsThem) {
  Env env;
  cache::Snapshot snap = snapshotOf({"n1", "n2", "n3"});
  const std::vector<const NodeInfo*>& nodes = snap.list();
  std::vector<std::string> names;
  for (const NodeInfo* ni : nodes) names.push_back(ni->name());
  for (const bool reads : {true, false}) {
    SCOPED_TRACE(reads ? "reads names" : "reads scores alone");
    auto p = profile({{"Sort", 0}, {"Namer", 1}, {"Binder", 0}});
    p.pluginConfig.push_back({"Namer", {{"prefer", {"n2"}}, {"readsNames", reads}}});
    Framework f(p, testRegistry(), env.services());
    const auto* namer = dynamic_cast<const Namer*>(f.scorePlugin("Namer"));
    ASSERT_NE(namer, nullptr);
    std::vector<int64_t> totals;
    Status s;
    std::thread([&] {
      CycleState state;
      s = f.runScorePlugins(state, podWithUid("x"), nodes, totals);
    }).join();
    ASSERT_TRUE(s.ok()) << s.message();
    std::vector<int64_t> expected;
    for (const std::string& n : names) expected.push_back(reads && n == "n2" ? 100 : 0);
    EXPECT_EQ(totals, expected);
    EXPECT_EQ(namer->seen(), reads ? names : std::vector<std::string>(names.size()));
  }
}

// A refused binding keeps the apiserver's HTTP code through the framework: the scheduler reads
// 409 (bound already, e.g. by its own earlier try whose answer was lost) and 404 from it.
TEST(FrameworkBindTest, AFailedBindingKeepsItsHttpCode) {
  Env env;
  auto p = profile({{"Sort", 0}, {"Binder", 0}});
  p.pluginConfig.push_back(
      {"Binder", {{"fail", "pod p is already assigned to node \"n1\""}, {"httpCode", 409}}});
  Framework f(p, testRegistry(), env.services());
  CycleState state;
  Status s = f.runBindPlugins(state, podWithUid("p"), "n1");
  EXPECT_EQ(s.code(), Code::kError);
  EXPECT_EQ(s.httpCode(), 409);
  EXPECT_EQ(s.plugin(), "Binder");
  EXPECT_EQ(s.message(),
            "running Bind plugin \"Binder\": pod p is already assigned to node \"n1\"");
}

// Whether any PreBind plugin has work (upstream RunPreBindPreFlights): its answer decides
// whether the scheduler publishes the pod's nomination before PreBind.
TEST(FrameworkPreBindTest, PreFlightSaysWhetherAnyPreBindPluginHasWork) {
  struct Case {
    const char* name;
    std::vector<nlohmann::json> preFlights;  // P1's, P2's (null: not enabled)
    Code code;
    std::string message;
    std::string plugin;
  };
  const std::string unsupported =
      "PreBindPreFlight P1 returned \"Unschedulable\", which is unsupported. It is supposed to "
      "return Success, Skip, or Error status";
  const std::vector<Case> cases = {
      {"no PreBind plugin", {}, Code::kSkip, "", ""},
      {"the SDK's default", {nlohmann::json::object()}, Code::kSkip, "", ""},
      {"all skip", {{{"preFlight", "Skip"}}, {{"preFlight", "Skip"}}}, Code::kSkip, "", ""},
      {"one has work",
       {{{"preFlight", "Skip"}}, {{"preFlight", "Success"}}},
       Code::kSuccess,
       "",
       ""},
      {"an error ends it",
       {{{"preFlight", "Success"}}, {{"preFlight", "Error"}, {"message", "boom"}}},
       Code::kError,
       "running PreBindPreFlight \"P2\": boom",
       "P2"},
      {"a rejection is an error",
       {{{"preFlight", "Unschedulable"}}},
       Code::kError,
       unsupported,
       "P1"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Env env;
    std::vector<config::PluginRef> plugins = {{"Sort", 0}, {"Binder", 0}};
    auto p = profile({});
    for (size_t i = 0; i < c.preFlights.size(); ++i) {
      const std::string name = i == 0 ? "P1" : "P2";
      plugins.push_back({name, 0});
      p.pluginConfig.push_back({name, c.preFlights[i]});
    }
    p.plugins.multiPoint.enabled = plugins;
    Framework f(p, testRegistry(), env.services());
    CycleState state;
    Status s = f.runPreBindPreFlights(state, podWithUid("p"), "n1");
    EXPECT_EQ(s.code(), c.code) << codeName(s.code());
    EXPECT_EQ(s.message(), c.message);
    EXPECT_EQ(s.plugin(), c.plugin);
  }
}

// The pool used from the start (wakeAfter 0) and the default (the caller starts alone).
class ParallelizerTest : public ::testing::TestWithParam<std::chrono::microseconds> {};

INSTANTIATE_TEST_SUITE_P(WakeAfter, ParallelizerTest,
                         ::testing::Values(std::chrono::microseconds(0),
                                           framework::ThreadPoolParallelizer::kDefaultWakeAfter));

TEST_P(ParallelizerTest, RunsEveryIndexOnceAndStopsEarly) {
  framework::ThreadPoolParallelizer par(4, GetParam());
  for (int round = 0; round < 50; ++round) {
    std::vector<std::atomic<int>> hits(1000);
    par.until(1000, [&](int i) { hits[static_cast<size_t>(i)].fetch_add(1); });
    for (auto& h : hits) ASSERT_EQ(h.load(), 1);
  }
  std::atomic<int> calls{0};
  par.until(
      100000, [&](int) { calls.fetch_add(1); }, [&] { return calls.load() >= 10; });
  EXPECT_LT(calls.load(), 100000);
}

std::set<std::thread::id> threadsRunning(framework::ThreadPoolParallelizer& par, int n,
                                         std::chrono::microseconds each) {
  std::mutex mu;
  std::set<std::thread::id> ids;
  par.until(n, [&](int) {
    std::this_thread::sleep_for(each);
    std::lock_guard lock(mu);
    ids.insert(std::this_thread::get_id());
  });
  return ids;
}

TEST(ParallelizerWakeTest, AJobShorterThanWakeAfterStaysOnTheCaller) {
  framework::ThreadPoolParallelizer par(4, std::chrono::hours(1));
  auto ids = threadsRunning(par, 40, std::chrono::microseconds(100));
  EXPECT_EQ(ids, (std::set<std::thread::id>{std::this_thread::get_id()}));
}

TEST(ParallelizerWakeTest, AJobOfOnePiecePerThreadStartsEveryPieceAtOnce) {
  // Each piece waits (up to 5 s) for the other to start: run one after the other, they would not
  // meet.
  framework::ThreadPoolParallelizer par(2, std::chrono::hours(1));
  std::atomic<int> started{0};
  std::atomic<int> met{0};
  par.until(2, [&](int) {
    started.fetch_add(1);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (started.load() < 2 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    if (started.load() == 2) met.fetch_add(1);
  });
  EXPECT_EQ(met.load(), 2);
}

TEST(ParallelizerWakeTest, ALongerJobIsSharedWithThePool) {
  framework::ThreadPoolParallelizer par(4);  // default wakeAfter, 50 us
  auto ids = threadsRunning(par, 40, std::chrono::milliseconds(1));
  EXPECT_GT(ids.size(), 1U);
  EXPECT_TRUE(ids.contains(std::this_thread::get_id()));
}

}  // namespace
}  // namespace ksched
