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
#include "scheduler/algorithm.h"

namespace ksched {
namespace {

using framework::Framework;
using framework::FrameworkError;

class NullRecorder final : public EventRecorder {
 public:
  void event(const api::Pod&, std::string_view, std::string_view, std::string_view,
             std::string) override {}
};

// A sort plugin, a binder, and configurable filter/score plugins.
class Sort final : public QueueSortPlugin {
 public:
  std::string_view name() const override { return "Sort"; }
  bool less(const QueuedPodInfo& a, const QueuedPodInfo& b) const override {
    return a.timestamp < b.timestamp;
  }
};

// Binds, or fails with args.fail (the message) and args.httpCode.
class Binder final : public BindPlugin {
 public:
  explicit Binder(nlohmann::json args) : args_(std::move(args)) {}
  std::string_view name() const override { return "Binder"; }
  Status bind(CycleState&, const api::Pod&, const std::string&) override {
    if (!args_.is_object() || !args_.contains("fail")) return {};
    return Status::error(args_["fail"].get<std::string>()).withHttpCode(args_.value("httpCode", 0));
  }

 private:
  nlohmann::json args_;
};

// Rejects nodes whose name is listed in args.reject (reason args.reason), scores nodes by
// args.scores[name].
class Fake final : public FilterPlugin, public ScorePlugin, public EnqueueExtensions {
 public:
  Fake(std::string name, nlohmann::json args) : name_(std::move(name)), args_(std::move(args)) {}
  std::string_view name() const override { return name_; }
  Status filter(const CycleState&, const api::Pod&, const NodeInfo& n) const override {
    if (args_.contains("reject")) {
      for (const auto& r : args_["reject"]) {
        if (r == n.name()) {
          return Status(args_.value("unresolvable", false) ? Code::kUnschedulableAndUnresolvable
                                                           : Code::kUnschedulable,
                        {args_.value("reason", std::string("rejected"))});
        }
      }
    }
    return {};
  }
  Status score(const CycleState&, const api::Pod&, const NodeInfo& n, int64_t& s) const override {
    s = args_.contains("scores") ? args_["scores"].value(n.name(), 0) : 0;
    return {};
  }
  std::vector<ClusterEventWithHint> eventsToRegister() const override {
    return {ClusterEvent{EventResource::kNode, kAdd, {}}};
  }

 private:
  std::string name_;
  nlohmann::json args_;
};

// Permit: Wait with args.waitMs (0: allow); PostFilter: Unschedulable with args.postFilter
// reasons (absent: no reasons).
class Waiter final : public PermitPlugin, public PostFilterPlugin {
 public:
  Waiter(std::string name, nlohmann::json args) : name_(std::move(name)), args_(std::move(args)) {}
  std::string_view name() const override { return name_; }
  Status permit(CycleState&, const api::Pod&, const std::string&,
                std::chrono::milliseconds& timeout) override {
    const int ms = args_.value("waitMs", 0);
    if (ms == 0) return {};
    timeout = std::chrono::milliseconds(ms);
    return Status::wait();
  }
  std::pair<PostFilterResult, Status> postFilter(CycleState&, const api::Pod&,
                                                 const NodeToStatus&) override {
    std::vector<std::string> reasons;
    for (const auto& r : args_.value("postFilter", nlohmann::json::array())) reasons.push_back(r);
    return {{}, Status(Code::kUnschedulable, reasons)};
  }

 private:
  std::string name_;
  nlohmann::json args_;
};

// The args as written, for test plugins that read their JSON.
const auto kRawArgs = [](const nlohmann::json& args) { return args; };

Registry testRegistry() {
  Registry r;
  for (const char* n : {"W1", "W2"}) {
    r.add(n, kRawArgs,
          [n](const nlohmann::json& args, Handle&) { return std::make_unique<Waiter>(n, args); });
  }
  r.add("Sort", [](Handle&) { return std::make_unique<Sort>(); });
  r.add("Binder", kRawArgs,
        [](const nlohmann::json& args, Handle&) { return std::make_unique<Binder>(args); });
  for (const char* n : {"A", "B", "C"}) {
    r.add(
        n,
        [](const nlohmann::json& args) {
          if (args.is_object() && args.contains("bad"))
            throw PluginArgsError("bad: must not be set");
          return args;
        },
        [n](const nlohmann::json& args, Handle&) { return std::make_unique<Fake>(n, args); });
  }
  return r;
}

config::Profile profile(std::vector<config::PluginRef> multiPoint) {
  config::Profile p;
  p.plugins.multiPoint.enabled = std::move(multiPoint);
  return p;
}

struct Env {
  NullRecorder rec;
  framework::ThreadPoolParallelizer par{4};
  framework::Services services() {
    framework::Services s;
    s.events = &rec;
    s.parallelizer = &par;
    return s;
  }
};

std::string wiringError(const config::Profile& p) {
  Env env;
  try {
    Framework f(p, testRegistry(), env.services());
  } catch (const FrameworkError& e) {
    return e.what();
  }
  return "";
}

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
  config::WiringResult w = check(p, "profiles[0]");
  EXPECT_TRUE(w.errors.empty()) << w.errors;
  EXPECT_EQ(w.queueSort, "Sort");
  EXPECT_EQ(seen->decoded, 1);
  EXPECT_EQ(seen->built, 0);
  // Args errors are found by decoding alone.
  auto bad = profile({{"Sort", 0}, {"A", 0}, {"Binder", 0}});
  bad.pluginConfig.push_back({"A", nlohmann::json{{"bad", true}}});
  EXPECT_EQ(check(bad, "profiles[1]").errors,
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

api::Node node(const std::string& name) {
  api::Node n;
  n.metadata.name = name;
  n.metadata.uid = "uid-" + name;
  n.status.allocatable["cpu"] = api::Quantity::parse("4");
  n.status.allocatable["pods"] = api::Quantity::parse("110");
  return n;
}

cache::Snapshot snapshotOf(std::initializer_list<const char*> names) {
  std::vector<NodePtr> nodes;
  for (const char* n : names) nodes.push_back(std::make_shared<api::Node>(node(n)));
  return cache::Snapshot::fromForTest({}, nodes);
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
  auto nominatedInfo = std::make_shared<const PodInfo>(nominated);
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
