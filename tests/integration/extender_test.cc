// HTTP extenders end to end: a small extender served on loopback by the test process, an
// in-process scheduler configured to call it, and the real apiserver.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <ksched/api/decode.h>
#include <ksched/api/pod.h>
#include <ksched/testing/fakes.h>

#include "cluster.h"
#include "extender/extenders.h"
#include "extender/http_extender.h"
#include "objects.h"
#include "running_scheduler.h"
#include "scheduling.h"

namespace ksched::testing {
namespace {

using nlohmann::json;

// An extender on 127.0.0.1 (ephemeral port) answering POST /ext/<verb> with its handler and
// recording every request.
class TestExtender {
 public:
  using Handler = std::function<json(const json&)>;

  explicit TestExtender(std::map<std::string, Handler> handlers) {
    for (auto& [verb, handler] : handlers) {
      server_.Post("/ext/" + verb, [this, verb = verb, handler = std::move(handler)](
                                       const httplib::Request& req, httplib::Response& res) {
        json args = json::parse(req.body, nullptr, false);
        {
          std::lock_guard lock(mu_);
          requests_.emplace_back(verb, args);
        }
        res.set_content(handler(args).dump(), "application/json");
      });
    }
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::jthread([this] { server_.listen_after_bind(); });
  }
  ~TestExtender() { server_.stop(); }
  TestExtender(const TestExtender&) = delete;
  TestExtender& operator=(const TestExtender&) = delete;

  [[nodiscard]] std::string url() const {
    return "http://127.0.0.1:" + std::to_string(port_) + "/ext";
  }
  // The requests of that verb so far.
  [[nodiscard]] std::vector<json> requests(const std::string& verb) const {
    std::lock_guard lock(mu_);
    std::vector<json> out;
    for (const auto& [v, args] : requests_) {
      if (v == verb) out.push_back(args);
    }
    return out;
  }

 private:
  httplib::Server server_;
  int port_ = 0;
  mutable std::mutex mu_;
  std::vector<std::pair<std::string, json>> requests_;
  std::jthread thread_;
};

// The names of the nodes in an ExtenderArgs (either form).
std::vector<std::string> argNodeNames(const json& args) {
  std::vector<std::string> out;
  if (args.contains("nodenames")) return args["nodenames"].get<std::vector<std::string>>();
  for (const auto& n : args["nodes"]["items"]) out.push_back(n["metadata"]["name"]);
  return out;
}

// A URL where nothing listens: a loopback port bound (never listened on) and released again.
std::string deadUrl() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  EXPECT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  ::close(fd);
  return "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)) + "/ext";
}

class ExtenderIntegration : public NamespacedTest {
 protected:
  static scheduler::Options options(std::vector<config::Extender> extenders) {
    auto o = RunningScheduler::defaultOptions();
    o.extenders = std::move(extenders);
    return o;
  }
  static api::Pod getPod(const std::string& ns, const std::string& name) {
    return api::decode<api::Pod>(
        TestCluster::get().admin().get("/api/v1/namespaces/" + ns + "/pods/" + name));
  }
  // "status/reason/message" of the pod's PodScheduled condition ("" when it has none).
  static std::string scheduledCondition(const std::string& ns, const std::string& name) {
    const auto p = getPod(ns, name);
    const auto* c = p.condition("PodScheduled");
    return c == nullptr ? std::string() : c->status + "/" + c->reason + "/" + c->message;
  }
};

TEST_F(ExtenderIntegration, FilterRejectsANodeWithItsReason) {
  auto& admin = TestCluster::get().admin();
  deleteAllNodes(admin);
  const std::string ns = useNamespace("ext-filter");
  admin.post("/api/v1/nodes", sizedNode("ext-a", "4", "8Gi"));
  admin.post("/api/v1/nodes", sizedNode("ext-b", "1", "8Gi"));
  TestExtender ext({{"filter", [](const json& args) {
                       json keep = json::array();
                       for (const auto& name : argNodeNames(args)) {
                         if (name != "ext-a") keep.push_back({{"metadata", {{"name", name}}}});
                       }
                       return json{
                           {"nodes", {{"items", keep}}},
                           {"failedNodes", {{"ext-a", "ext-a is reserved by the extender"}}}};
                     }}});
  config::Extender cfg;
  cfg.urlPrefix = ext.url();
  cfg.filterVerb = "filter";
  RunningScheduler sched(options({cfg}));
  for (int i = 0; i < 3; ++i) {
    admin.post("/api/v1/namespaces/" + ns + "/pods",
               sizedPod(ns, "small-" + std::to_string(i), "100m"));
  }
  ASSERT_EQ(waitAllBound(admin, ns, 3), 3u);
  for (const auto& p : listPods(admin, ns)) EXPECT_EQ(p.spec.nodeName, "ext-b") << p.metadata.name;
  // The extender saw the full pod and both nodes as v1 objects.
  const auto reqs = ext.requests("filter");
  ASSERT_FALSE(reqs.empty());
  EXPECT_EQ(reqs[0]["pod"]["metadata"]["namespace"], ns);
  EXPECT_EQ(reqs[0]["pod"]["spec"]["containers"][0]["resources"]["requests"]["cpu"], "100m");
  auto names = argNodeNames(reqs[0]);
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()),
            (std::set<std::string>{"ext-a", "ext-b"}));
  EXPECT_EQ(reqs[0]["nodes"]["items"][0]["status"]["allocatable"]["memory"], "8Gi");

  // Only ext-a has room for 2 cpu, and the extender refuses it. ext-b's 1 cpu can never hold
  // 2 (UnschedulableAndUnresolvable): preemption only considers ext-a, which has no victims.
  admin.post("/api/v1/namespaces/" + ns + "/pods", sizedPod(ns, "big", "2"));
  const std::string want =
      "False/Unschedulable/0/2 nodes are available: 1 Insufficient cpu, 1 ext-a is reserved by "
      "the extender. preemption: 0/2 nodes are available: 1 No preemption victims found for "
      "incoming pod, 1 Preemption is not helpful for scheduling.";
  std::string got;
  EXPECT_TRUE(eventually([&] { return (got = scheduledCondition(ns, "big")) == want; })) << got;
  // Plugins rejected ext-b first: the extender is asked about ext-a only.
  bool sawOnlyA = false;
  for (const auto& r : ext.requests("filter")) {
    if (r["pod"]["metadata"]["name"] == "big")
      sawOnlyA = argNodeNames(r) == std::vector<std::string>{"ext-a"};
  }
  EXPECT_TRUE(sawOnlyA);
  EXPECT_TRUE(getPod(ns, "big").spec.nodeName.empty());
}

TEST_F(ExtenderIntegration, PrioritizeWithAHighWeightDecides) {
  auto& admin = TestCluster::get().admin();
  deleteAllNodes(admin);
  const std::string ns = useNamespace("ext-prio");
  for (const char* n : {"ext-c1", "ext-c2", "ext-c3"})
    admin.post("/api/v1/nodes", sizedNode(n, "4", "8Gi"));
  TestExtender ext({{"prioritize", [](const json& args) {
                       json out = json::array();
                       for (const auto& name : argNodeNames(args)) {
                         out.push_back({{"host", name}, {"score", name == "ext-c2" ? 10 : 0}});
                       }
                       return out;
                     }}});
  config::Extender cfg;
  cfg.urlPrefix = ext.url();
  cfg.prioritizeVerb = "prioritize";
  cfg.weight = 20;
  cfg.nodeCacheCapable = true;
  RunningScheduler sched(options({cfg}));
  // Without the extender LeastAllocated would spread these pods over the three nodes.
  for (int i = 0; i < 4; ++i) {
    admin.post("/api/v1/namespaces/" + ns + "/pods",
               sizedPod(ns, "p-" + std::to_string(i), "500m"));
    ASSERT_EQ(waitAllBound(admin, ns, static_cast<size_t>(i + 1)), static_cast<size_t>(i + 1));
  }
  for (const auto& p : listPods(admin, ns)) EXPECT_EQ(p.spec.nodeName, "ext-c2") << p.metadata.name;
  const auto reqs = ext.requests("prioritize");
  ASSERT_GE(reqs.size(), 4u);
  EXPECT_FALSE(reqs[0].contains("nodes"));  // nodeCacheCapable: names only
  auto names = argNodeNames(reqs[0]);
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()),
            (std::set<std::string>{"ext-c1", "ext-c2", "ext-c3"}));
}

TEST_F(ExtenderIntegration, BinderExtenderBindsThePod) {
  auto& admin = TestCluster::get().admin();
  deleteAllNodes(admin);
  const std::string ns = useNamespace("ext-bind");
  admin.post("/api/v1/nodes", sizedNode("ext-d1", "4", "8Gi"));
  admin.post("/api/v1/nodes", sizedNode("ext-d2", "4", "8Gi"));
  std::mutex mu;
  std::map<std::string, std::string> boundBy;  // pod -> node the extender bound it to
  TestExtender ext({{"bind", [&](const json& args) {
                       const std::string name = args["podName"], podNs = args["podNamespace"],
                                         node = args["node"];
                       {
                         // Recorded first: the test reads it as soon as the pod shows bound.
                         std::lock_guard lock(mu);
                         boundBy[name] = node;
                       }
                       admin.post("/api/v1/namespaces/" + podNs + "/pods/" + name + "/binding",
                                  {{"apiVersion", "v1"},
                                   {"kind", "Binding"},
                                   {"metadata", {{"name", name}, {"uid", args["podUID"]}}},
                                   {"target", {{"kind", "Node"}, {"name", node}}}});
                       return json::object();
                     }}});
  config::Extender cfg;
  cfg.urlPrefix = ext.url();
  cfg.bindVerb = "bind";
  RunningScheduler sched(options({cfg}));
  for (int i = 0; i < 3; ++i) {
    admin.post("/api/v1/namespaces/" + ns + "/pods",
               sizedPod(ns, "b-" + std::to_string(i), "100m"));
  }
  ASSERT_EQ(waitAllBound(admin, ns, 3), 3u);
  std::lock_guard lock(mu);
  ASSERT_EQ(boundBy.size(), 3u);
  for (const auto& p : listPods(admin, ns)) {
    EXPECT_EQ(p.spec.nodeName, boundBy[p.metadata.name]) << p.metadata.name;
    EXPECT_FALSE(p.metadata.uid.empty());
  }
  const auto reqs = ext.requests("bind");
  ASSERT_EQ(reqs.size(), 3u);
  EXPECT_EQ(reqs[0]["podNamespace"], ns);
  EXPECT_TRUE(eventually([&] { return eventsByPod(admin, ns, "Scheduled").size() == 3; }));
}

// An extender that answers whatever it likes: each answer in turn (status, body), repeating
// the last; bodies are sent as bytes, not re-encoded.
class RawExtender {
 public:
  explicit RawExtender(std::vector<std::pair<int, std::string>> answers)
      : answers_(std::move(answers)) {
    server_.Post("/ext/filter", [this](const httplib::Request&, httplib::Response& res) {
      const size_t i = std::min(calls_.fetch_add(1), answers_.size() - 1);
      res.status = answers_[i].first;
      res.set_content(answers_[i].second, "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::jthread([this] { server_.listen_after_bind(); });
  }
  ~RawExtender() { server_.stop(); }
  RawExtender(const RawExtender&) = delete;
  RawExtender& operator=(const RawExtender&) = delete;
  [[nodiscard]] std::string url() const {
    return "http://127.0.0.1:" + std::to_string(port_) + "/ext";
  }
  [[nodiscard]] size_t calls() const { return calls_.load(); }

 private:
  const std::vector<std::pair<int, std::string>> answers_;
  std::atomic<size_t> calls_{0};
  httplib::Server server_;
  int port_ = 0;
  std::jthread thread_;
};

// Answers that once took the process down or said nothing: every one fails the pod's attempt
// with a bounded, valid message (events and conditions are JSON), and the scheduler goes on.
TEST_F(ExtenderIntegration, MisbehavingExtenderFailsTheAttemptNotTheProcess) {
  auto& admin = TestCluster::get().admin();
  deleteAllNodes(admin);
  const std::string ns = useNamespace("ext-bad");
  admin.post("/api/v1/nodes", sizedNode("ext-m1", "4", "8Gi"));
  admin.post("/api/v1/nodes", sizedNode("ext-m2", "4", "8Gi"));
  const std::string longBytes(100000, 'x');
  RawExtender ext({
      {200, "{\"error\": \"bad \xFF\xFE byte\"}"},       // not UTF-8 in a string
      {200, "\xFF\xFF\xFF garbage"},                     // not JSON at all
      {200, "{\"nodenames\": 7, \"failedNodes\": []}"},  // wrong types
      {500, "\xC0\xC1 internal"},
      {200, "\"" + longBytes + "\xFF\""},  // a huge string with a bad byte
      {200, "{\"nodes\": {\"items\": [{\"metadata\": {\"name\": \"ext-m1\"}}]}}"},
  });
  config::Extender cfg;
  cfg.urlPrefix = ext.url();
  cfg.filterVerb = "filter";
  cfg.httpTimeout = std::chrono::seconds(2);
  RunningScheduler sched(options({cfg}));
  admin.post("/api/v1/namespaces/" + ns + "/pods", sizedPod(ns, "p", "100m"));
  // Five failed attempts (with backoff), then the sane answer binds it.
  ASSERT_EQ(waitAllBound(admin, ns, 1, std::chrono::seconds(90)), 1u);
  EXPECT_EQ(getPod(ns, "p").spec.nodeName, "ext-m1");
  EXPECT_GE(ext.calls(), 6u);
  EXPECT_GE(sched->stats().errors, 5u);
  const auto events = eventsByPod(admin, ns, "FailedScheduling");
  ASSERT_FALSE(events.at("p").empty());
  for (const auto& msg : events.at("p")) {
    EXPECT_LT(msg.size(), 1100u) << msg.substr(0, 200);
    EXPECT_EQ(msg.find(longBytes.substr(0, 1000)), std::string::npos);
  }
}

// An extender that keeps no node and names no failure: upstream's FitError text, no empty list.
TEST_F(ExtenderIntegration, ExtenderThatDropsEveryNodeGivesUpstreamsText) {
  auto& admin = TestCluster::get().admin();
  deleteAllNodes(admin);
  const std::string ns = useNamespace("ext-none");
  admin.post("/api/v1/nodes", sizedNode("ext-n1", "4", "8Gi"));
  admin.post("/api/v1/nodes", sizedNode("ext-n2", "4", "8Gi"));
  TestExtender ext({{"filter", [](const json&) { return json{{"nodenames", json::array()}}; }}});
  config::Extender cfg;
  cfg.urlPrefix = ext.url();
  cfg.filterVerb = "filter";
  cfg.nodeCacheCapable = true;
  RunningScheduler sched(options({cfg}));
  admin.post("/api/v1/namespaces/" + ns + "/pods", sizedPod(ns, "p", "100m"));
  const std::string want =
      "False/Unschedulable/0/2 nodes are available: preemption: 0/2 nodes are available: 2 "
      "Preemption is not helpful for scheduling.";
  std::string got;
  EXPECT_TRUE(eventually([&] { return (got = scheduledCondition(ns, "p")) == want; })) << got;
}

TEST_F(ExtenderIntegration, UnreachableExtenderBlocksUnlessIgnorable) {
  auto& admin = TestCluster::get().admin();
  deleteAllNodes(admin);
  const std::string ns = useNamespace("ext-down");
  admin.post("/api/v1/nodes", sizedNode("ext-e1", "4", "8Gi"));
  admin.post("/api/v1/nodes", sizedNode("ext-e2", "4", "8Gi"));
  config::Extender cfg;
  cfg.urlPrefix = deadUrl();
  cfg.filterVerb = "filter";
  cfg.prioritizeVerb = "prioritize";
  cfg.weight = 1;
  cfg.httpTimeout = std::chrono::seconds(1);
  {
    cfg.ignorable = true;
    RunningScheduler sched(options({cfg}));
    admin.post("/api/v1/namespaces/" + ns + "/pods", sizedPod(ns, "ok", "100m"));
    EXPECT_EQ(waitAllBound(admin, ns, 1), 1u);
  }
  cfg.ignorable = false;
  RunningScheduler sched(options({cfg}));
  admin.post("/api/v1/namespaces/" + ns + "/pods", sizedPod(ns, "stuck", "100m"));
  const std::string prefix = "False/SchedulerError/Post \"" + cfg.urlPrefix + "/filter\": ";
  std::string got;
  EXPECT_TRUE(eventually([&] {
    got = scheduledCondition(ns, "stuck");
    return got.rfind(prefix, 0) == 0;
  })) << got;
  EXPECT_TRUE(eventually([&] {
    auto ev = eventsByPod(admin, ns, "FailedScheduling");
    return !ev["stuck"].empty() && ev["stuck"][0].rfind("Post \"" + cfg.urlPrefix, 0) == 0;
  }));
  std::this_thread::sleep_for(2s);
  EXPECT_TRUE(getPod(ns, "stuck").spec.nodeName.empty());
  EXPECT_GE(sched->stats().errors, 1u);
}

// ---- the protocol over loopback, without the cluster ----

PodInfoPtr podInfo(const std::string& name) {
  auto p = std::make_shared<api::Pod>();
  p->metadata.name = name;
  p->metadata.namespace_ = "default";
  p->metadata.uid = "uid-" + name;
  return std::make_shared<const PodInfo>(p, features::Gates{});
}

std::shared_ptr<NodeInfo> nodeInfo(const std::string& name,
                                   const std::vector<PodInfoPtr>& pods = {}) {
  auto n = std::make_shared<api::Node>();
  n->metadata.name = name;
  auto ni = std::make_shared<NodeInfo>(NodePtr(n));
  for (const auto& p : pods) ni->addPod(p);
  return ni;
}

using Lister = ksched::testing::FakeLister;

std::vector<std::string> names(const std::vector<const NodeInfo*>& nodes) {
  std::vector<std::string> out;
  for (const NodeInfo* n : nodes) out.push_back(n->name());
  return out;
}

// Keeps every node not in `reject`, and reports them as failed with "<who> rejects <node>".
TestExtender::Handler rejecting(std::string who, std::set<std::string> reject,
                                std::set<std::string> unresolvable = {}) {
  return [who, reject, unresolvable](const json& args) {
    json keep = json::array(), failed = json::object(), never = json::object();
    for (const auto& n : argNodeNames(args)) {
      if (reject.contains(n)) {
        failed[n] = who + " rejects " + n;
      } else if (unresolvable.contains(n)) {
        never[n] = who + " never takes " + n;
      } else {
        keep.push_back(n);
      }
    }
    return json{
        {"nodenames", keep}, {"failedNodes", failed}, {"failedAndUnresolvableNodes", never}};
  };
}

TEST(ExtenderLoopback, FiltersInOrderAndAggregatesReasons) {
  TestExtender first({{"filter", rejecting("first", {"a"}, {"d"})}});
  TestExtender second({{"filter", rejecting("second", {"b"})}});
  config::Extender c1, c2;
  c1.urlPrefix = first.url();
  c2.urlPrefix = second.url();
  c1.filterVerb = c2.filterVerb = "filter";
  c1.nodeCacheCapable = c2.nodeCacheCapable = true;
  const auto exts = extender::buildExtenders({c1, c2});
  auto a = nodeInfo("a"), b = nodeInfo("b"), c = nodeInfo("c"), d = nodeInfo("d");
  std::vector<const NodeInfo*> feasible{a.get(), b.get(), c.get(), d.get()};
  NodeToStatus statuses;
  statuses.emplace("a", Status::unschedulable("Insufficient cpu"));
  Status s = extender::findNodesThatPassExtenders(exts, *podInfo("p")->pod, feasible, statuses);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(names(feasible), std::vector<std::string>{"c"});
  EXPECT_EQ(statuses.at("a").code(), Code::kUnschedulable);
  EXPECT_EQ(statuses.at("a").reasons(),
            (std::vector<std::string>{"Insufficient cpu", "first rejects a"}));
  EXPECT_EQ(statuses.at("d").code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(statuses.at("d").reasons(), std::vector<std::string>{"first never takes d"});
  EXPECT_EQ(statuses.at("b").reasons(), std::vector<std::string>{"second rejects b"});
  ASSERT_EQ(second.requests("filter").size(), 1u);
  EXPECT_EQ(argNodeNames(second.requests("filter")[0]), (std::vector<std::string>{"b", "c"}));
}

TEST(ExtenderLoopback, FilterErrorsFailUnlessIgnorable) {
  TestExtender confused({{"filter",
                          [](const json&) {
                            return json{{"error", "extender is confused"}};
                          }},
                         {"liar", [](const json&) {
                            return json{{"nodenames", {"zzz"}}};
                          }}});
  config::Extender cfg;
  cfg.urlPrefix = confused.url();
  cfg.filterVerb = "filter";
  cfg.nodeCacheCapable = true;
  auto a = nodeInfo("a");
  const auto pod = podInfo("p")->pod;
  std::vector<const NodeInfo*> feasible{a.get()};
  NodeToStatus statuses;
  Status s = extender::findNodesThatPassExtenders(extender::buildExtenders({cfg}), *pod, feasible,
                                                  statuses);
  EXPECT_EQ(s.code(), Code::kError);
  EXPECT_EQ(s.message(), "extender is confused");
  cfg.ignorable = true;
  s = extender::findNodesThatPassExtenders(extender::buildExtenders({cfg}), *pod, feasible,
                                           statuses);
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(names(feasible), std::vector<std::string>{"a"});
  EXPECT_TRUE(statuses.empty());
  cfg.ignorable = false;
  cfg.filterVerb = "liar";
  s = extender::findNodesThatPassExtenders(extender::buildExtenders({cfg}), *pod, feasible,
                                           statuses);
  EXPECT_EQ(s.message(), "extender \"" + confused.url() +
                             "\" claims a filtered node \"zzz\" which is not found in the input "
                             "node list");
  cfg.filterVerb = "missing";  // 404
  s = extender::findNodesThatPassExtenders(extender::buildExtenders({cfg}), *pod, feasible,
                                           statuses);
  EXPECT_EQ(s.message(),
            "failed missing with extender at URL " + confused.url() + "/missing, code 404");
}

TEST(ExtenderLoopback, PrioritizeScoresAreWeightedAndSummed) {
  auto scoring = [](std::map<std::string, int> scores) {
    return [scores](const json&) {
      json out = json::array();
      for (const auto& [host, score] : scores) out.push_back({{"host", host}, {"score", score}});
      return out;
    };
  };
  TestExtender e1({{"prioritize", scoring({{"a", 10}, {"b", 5}})}});
  TestExtender e2({{"prioritize", scoring({{"b", 10}, {"zz", 10}})}});
  config::Extender c1, c2, c3;
  c1.urlPrefix = e1.url();
  c1.weight = 2;
  c2.urlPrefix = e2.url();
  c2.weight = 3;
  c3.urlPrefix = deadUrl();  // fails: it simply gives no scores
  c3.weight = 100;
  c1.prioritizeVerb = c2.prioritizeVerb = c3.prioritizeVerb = "prioritize";
  auto a = nodeInfo("a"), b = nodeInfo("b");
  std::vector<int64_t> scores{1, 1};
  extender::addExtenderScores(extender::buildExtenders({c1, c2, c3}), *podInfo("p")->pod,
                              {a.get(), b.get()}, scores);
  EXPECT_EQ(scores, (std::vector<int64_t>{1 + 10 * 2 * 10, 1 + 5 * 2 * 10 + 10 * 3 * 10}));
}

TEST(ExtenderLoopback, PreemptionAnswerMapsUidsToPods) {
  TestExtender ext({{"preempt",
                     [](const json& args) {
                       // Keeps one victim on n1 only.
                       EXPECT_EQ(args["nodeNameToVictims"]["n1"]["pods"].size(), 2u);
                       return json::parse(R"({"nodeNameToMetaVictims": {"n1": {"pods":
                           [{"uid": "uid-v2"}], "numPDBViolations": 1}}})");
                     }},
                    {"bogus", [](const json&) {
                       return json::parse(
                           R"({"nodeNameToMetaVictims": {"n1": {"pods": [{"uid": "nope"}]}}})");
                     }}});
  auto v1 = podInfo("v1"), v2 = podInfo("v2"), v3 = podInfo("v3");
  Lister lister({nodeInfo("n1", {v1, v2}), nodeInfo("n2", {v3})});
  config::Extender cfg;
  cfg.urlPrefix = ext.url();
  cfg.preemptVerb = "preempt";
  const extender::HttpExtender e(cfg);
  std::map<std::string, extender::Victims> victims{{"n1", {{v1, v2}, 0}}, {"n2", {{v3}, 0}}};
  Status s = e.processPreemption(*podInfo("p")->pod, victims, lister);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(victims.size(), 1u);
  ASSERT_EQ(victims.at("n1").pods.size(), 1u);
  EXPECT_EQ(victims.at("n1").pods[0]->pod->metadata.name, "v2");
  EXPECT_EQ(victims.at("n1").numPDBViolations, 1);

  cfg.preemptVerb = "bogus";
  victims = {{"n1", {{v1}, 0}}};
  s = extender::HttpExtender(cfg).processPreemption(*podInfo("p")->pod, victims, lister);
  EXPECT_EQ(s.message(), "extender: " + ext.url() +
                             " claims to preempt pod (UID: nope) on node: n1, but the pod is not "
                             "found on that node");
}

TEST(ExtenderLoopback, BinderOnlyForInterestedPods) {
  TestExtender ext({{"bind", [](const json&) { return json{{"error", "no room at the inn"}}; }}});
  config::Extender cfg;
  cfg.urlPrefix = ext.url();
  cfg.bindVerb = "bind";
  cfg.managedResources = {{"example.com/gpu", false}};
  const auto pod = podInfo("p")->pod;
  EXPECT_FALSE(extender::bindWithExtenders(extender::buildExtenders({cfg}), *pod, "n1"));
  cfg.managedResources.clear();
  auto s = extender::bindWithExtenders(extender::buildExtenders({cfg}), *pod, "n1");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->code(), Code::kError);
  EXPECT_EQ(s->message(), "no room at the inn");
  EXPECT_EQ(
      ext.requests("bind")[0],
      json({{"podName", "p"}, {"podNamespace", "default"}, {"podUID", "uid-p"}, {"node", "n1"}}));
  cfg.ignorable = true;  // its error passes on: the Bind plugins bind
  EXPECT_FALSE(extender::bindWithExtenders(extender::buildExtenders({cfg}), *pod, "n1"));
}

TEST(ExtenderLoopback, HttpsWithClientCertificateAndServerName) {
  // The test cluster's PKI: a serving certificate for 127.0.0.1/localhost/kubernetes and the
  // scheduler's client certificate, both from ca.crt.
  const std::string pki = TestCluster::get().dir() + "/pki/";
  httplib::SSLServer server((pki + "server.crt").c_str(), (pki + "server.key").c_str(),
                            (pki + "ca.crt").c_str());
  ASSERT_TRUE(server.is_valid());
  std::atomic<int> calls{0};
  server.Post("/ext/filter", [&](const httplib::Request& req, httplib::Response& res) {
    ++calls;
    res.set_content(json{{"nodenames", json::parse(req.body)["nodenames"]}}.dump(),
                    "application/json");
  });
  const int port = server.bind_to_any_port("127.0.0.1");
  std::jthread serving([&] { server.listen_after_bind(); });
  struct Stop {
    httplib::SSLServer& s;
    ~Stop() { s.stop(); }
  } stop{server};

  config::Extender cfg;
  cfg.urlPrefix = "https://127.0.0.1:" + std::to_string(port) + "/ext";
  cfg.filterVerb = "filter";
  cfg.nodeCacheCapable = true;
  cfg.enableHTTPS = true;
  cfg.tlsConfig = config::ExtenderTLSConfig{};
  cfg.tlsConfig->caFile = pki + "ca.crt";
  cfg.tlsConfig->certFile = pki + "scheduler.crt";
  cfg.tlsConfig->keyFile = pki + "scheduler.key";
  cfg.tlsConfig->serverName = "kubernetes";  // verified against this name, not the IP
  auto a = nodeInfo("a");
  const auto pod = podInfo("p")->pod;
  auto filter = [&](const config::Extender& c) {
    std::vector<const NodeInfo*> feasible{a.get()};
    NodeToStatus statuses;
    Status s = extender::findNodesThatPassExtenders(extender::buildExtenders({c}), *pod, feasible,
                                                    statuses);
    return s.ok() ? std::to_string(feasible.size()) : s.message();
  };
  EXPECT_EQ(filter(cfg), "1");
  EXPECT_EQ(calls.load(), 1);

  // A name the certificate does not carry fails verification.
  auto wrongName = cfg;
  wrongName.tlsConfig->serverName = "extender.example";
  EXPECT_NE(filter(wrongName).find("Post \"" + cfg.urlPrefix + "/filter\": SSL"), std::string::npos)
      << filter(wrongName);
  // Without a client certificate the server refuses the handshake.
  auto noCert = cfg;
  noCert.tlsConfig->certFile.clear();
  noCert.tlsConfig->keyFile.clear();
  EXPECT_NE(filter(noCert), "1");
  // enableHTTPS without a CA does not verify the server (upstream).
  auto noCa = cfg;
  noCa.tlsConfig->caFile.clear();
  noCa.tlsConfig->serverName = "extender.example";
  EXPECT_EQ(filter(noCa), "1");
  EXPECT_EQ(calls.load(), 2);
}

}  // namespace
}  // namespace ksched::testing
