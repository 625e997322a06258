#include "informer/informer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <thread>
#include <vector>

#include <ksched/api/node.h>
#include <ksched/api/pod.h>
#include <ksched/api/resource.h>

#include "cluster.h"
#include "dra.h"
#include "objects.h"
#include "tests/support/node_equal.h"

namespace ksched::testing {
namespace {

using client::RestClient;
using informer::Informer;

template <typename T>
struct Counting {
  std::atomic<int> adds{0}, updates{0}, deletes{0};
  informer::Handlers<T> handlers() {
    return {[this](const auto&) { ++adds; }, [this](const auto&, const auto&) { ++updates; },
            [this](const auto&) { ++deletes; }};
  }
};

// key -> resourceVersion of what the apiserver holds now.
std::map<std::string, std::string> serverState(RestClient& c, const std::string& path,
                                               const std::string& labelSelector = "") {
  std::map<std::string, std::string> out;
  for (const auto& item : c.list(path, {.labelSelector = labelSelector}).items) {
    const auto& m = item["metadata"];
    std::string key = m.contains("namespace") ? m["namespace"].get<std::string>() + "/" : "";
    out[key + m["name"].get<std::string>()] = m["resourceVersion"];
  }
  return out;
}

template <typename T>
std::map<std::string, std::string> storeState(const Informer<T>& inf) {
  std::map<std::string, std::string> out;
  for (const auto& o : inf.list()) out[o->metadata.key()] = o->metadata.resourceVersion;
  return out;
}

// Polls until the informer's store equals a fresh LIST (or the deadline passes).
template <typename T>
::testing::AssertionResult convergesToList(const Informer<T>& inf, RestClient& c,
                                           const std::string& path, const std::string& sel = "",
                                           std::chrono::seconds within = std::chrono::seconds(60)) {
  auto deadline = std::chrono::steady_clock::now() + within;
  std::map<std::string, std::string> want, got;
  do {
    want = serverState(c, path, sel);
    got = storeState(inf);
    if (want == got) return ::testing::AssertionSuccess();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  } while (std::chrono::steady_clock::now() < deadline);
  return ::testing::AssertionFailure()
         << "store has " << got.size() << " objects, LIST has " << want.size();
}

informer::Reflector::Options fastRetry() {
  informer::Reflector::Options o;
  o.backoffInitial = std::chrono::milliseconds(100);
  o.backoffMax = std::chrono::milliseconds(1000);
  return o;
}

TEST(InformerIntegration, FollowsCreatesUpdatesDeletesOf1000PodsAnd100Nodes) {
  auto& admin = TestCluster::get().admin();
  const std::string ns = "inf-follow";
  const std::string podsPath = "/api/v1/namespaces/" + ns + "/pods";
  ensureNamespace(admin, ns);

  // The counters outlive the informers that call them (declared first, destroyed last).
  Counting<api::Pod> pc;
  Counting<api::Node> nc;
  RestClient sched(TestCluster::get().config("scheduler"));
  Informer<api::Pod> pods(sched, {"Pod", podsPath});
  Informer<api::Node> nodes(sched, {"Node", "/api/v1/nodes", "ksched-test=follow"});
  pods.addHandlers(pc.handlers());
  nodes.addHandlers(nc.handlers());
  pods.start();
  nodes.start();
  ASSERT_TRUE(pods.waitForSync(std::chrono::seconds(30)));
  ASSERT_TRUE(nodes.waitForSync(std::chrono::seconds(30)));

  parallelFor(1000, 8, [&](int i) {
    admin.post(podsPath, podJson(ns, "p-" + std::to_string(i), {{"i", std::to_string(i)}}));
  });
  parallelFor(100, 8, [&](int i) {
    admin.post("/api/v1/nodes",
               nodeJson("follow-" + std::to_string(i), {{"ksched-test", "follow"}}));
  });
  parallelFor(500, 8, [&](int i) {
    admin.patch(podsPath + "/p-" + std::to_string(2 * i),
                {{"metadata", {{"labels", {{"touched", "yes"}}}}}});
  });
  parallelFor(100, 8, [&](int i) {
    admin.patch("/api/v1/nodes/follow-" + std::to_string(i),
                {{"spec",
                  {{"unschedulable", true},
                   {"taints", {{{"key", "k"}, {"value", "v"}, {"effect", "NoSchedule"}}}}}}});
  });
  parallelFor(250, 8, [&](int i) {
    admin.del(podsPath + "/p-" + std::to_string(4 * i + 1), {{"gracePeriodSeconds", 0}});
  });
  parallelFor(30, 8, [&](int i) { admin.del("/api/v1/nodes/follow-" + std::to_string(i)); });

  EXPECT_TRUE(convergesToList(pods, admin, podsPath));
  EXPECT_TRUE(convergesToList(nodes, admin, "/api/v1/nodes", "ksched-test=follow"));
  EXPECT_EQ(pods.size(), 750u);
  EXPECT_EQ(nodes.size(), 70u);
  EXPECT_EQ(pc.adds.load(), 1000);
  EXPECT_EQ(pc.deletes.load(), 250);
  EXPECT_GE(pc.updates.load(), 500);
  EXPECT_EQ(nc.adds.load(), 100);
  EXPECT_EQ(nc.deletes.load(), 30);
  EXPECT_GE(nc.updates.load(), 100);
  auto p2 = pods.get(ns + "/p-2");
  ASSERT_NE(p2, nullptr);
  EXPECT_EQ(p2->metadata.labels.at("touched"), "yes");
  auto n50 = nodes.get("follow-50");
  ASSERT_NE(n50, nullptr);
  EXPECT_TRUE(n50->spec.unschedulable);
  EXPECT_EQ(pods.decodeErrors(), 0u);
  ASSERT_EQ(n50->spec.taints.size(), 1u);
  EXPECT_EQ(n50->spec.taints[0].effect, "NoSchedule");
  // Every pod and node event came through the fast path (api/fast_decode.h): 1000 pod adds, 500
  // label patches, 250 deletions; 100 node adds, 100 patches, 30 deletions.
  EXPECT_GE(pods.stats().eventsFromText, 1750u);
  EXPECT_GE(nodes.stats().eventsFromText, 230u);
  EXPECT_EQ(nodes.decodeErrors(), 0u);
  // and gave what the JSON-tree path reads from the same node: a GET of a few, decoded.
  for (const int i : {30, 50, 99}) {
    const std::string name = "follow-" + std::to_string(i);
    const api::Node served = api::decode<api::Node>(admin.get("/api/v1/nodes/" + name));
    const auto held = nodes.get(name);
    ASSERT_NE(held, nullptr) << name;
    ASSERT_EQ(held->metadata.resourceVersion, served.metadata.resourceVersion) << name;
    EXPECT_TRUE(ksched::testing::sameNode(*held, served)) << name;
  }
  // and gave what the JSON-tree path reads from the same pod: a GET of a few, decoded.
  for (const int i : {0, 2, 3, 998, 999}) {
    const std::string name = "p-" + std::to_string(i);
    const api::Pod served = api::decode<api::Pod>(admin.get(podsPath + "/" + name));
    const auto held = pods.get(ns + "/" + name);
    ASSERT_NE(held, nullptr) << name;
    ASSERT_EQ(held->metadata.resourceVersion, served.metadata.resourceVersion) << name;
    EXPECT_TRUE(held->metadata == served.metadata && held->spec == served.spec &&
                held->status == served.status)
        << name;
  }
  // A LIST of the same pods in pages of 300 is read from the text too, to the same objects.
  informer::Reflector::Options paged;
  paged.pageSize = 300;
  Informer<api::Pod> relisted(sched, {"Pod", podsPath}, paged);
  relisted.start();
  ASSERT_TRUE(relisted.waitForSync(std::chrono::seconds(30)));
  EXPECT_EQ(relisted.stats().pagesFromText, 3u);
  EXPECT_EQ(relisted.size(), 750u);
  for (const auto& held : pods.list()) {
    const auto listed = relisted.get(held->metadata.key());
    ASSERT_NE(listed, nullptr) << held->metadata.key();
    if (listed->metadata.resourceVersion != held->metadata.resourceVersion) continue;
    EXPECT_TRUE(listed->metadata == held->metadata && listed->spec == held->spec &&
                listed->status == held->status)
        << held->metadata.key();
  }
  // The nodes, LISTed in pages of 30, from the text too.
  informer::Reflector::Options nodePages;
  nodePages.pageSize = 30;
  Informer<api::Node> relistedNodes(sched, {"Node", "/api/v1/nodes", "ksched-test=follow"},
                                    nodePages);
  relistedNodes.start();
  ASSERT_TRUE(relistedNodes.waitForSync(std::chrono::seconds(30)));
  EXPECT_EQ(relistedNodes.stats().pagesFromText, 3u);
  EXPECT_EQ(relistedNodes.size(), 70u);
  for (const auto& held : nodes.list()) {
    const auto listed = relistedNodes.get(held->metadata.key());
    ASSERT_NE(listed, nullptr) << held->metadata.key();
    EXPECT_TRUE(ksched::testing::sameNode(*listed, *held)) << held->metadata.key();
  }
  parallelFor(70, 8, [&](int i) { admin.del("/api/v1/nodes/follow-" + std::to_string(30 + i)); });
}

TEST(InformerIntegration, ResumesAfterApiserverRestartWithoutLosingDeletes) {
  auto& cluster = TestCluster::get();
  auto& admin = cluster.admin();
  const std::string ns = "inf-restart";
  const std::string podsPath = "/api/v1/namespaces/" + ns + "/pods";
  ensureNamespace(admin, ns);
  parallelFor(50, 8, [&](int i) { admin.post(podsPath, podJson(ns, "a-" + std::to_string(i))); });

  Counting<api::Pod> pc;  // outlives the informer
  RestClient sched(cluster.config("scheduler"));
  Informer<api::Pod> pods(sched, {"Pod", podsPath}, fastRetry());
  pods.addHandlers(pc.handlers());
  pods.start();
  ASSERT_TRUE(pods.waitForSync(std::chrono::seconds(30)));
  ASSERT_TRUE(convergesToList(pods, admin, podsPath));

  cluster.ctl("stop-apiserver");
  // While the apiserver is down, remove 10 pods behind its back: no watch can report these,
  // only a re-LIST and its diff can.
  for (int i = 0; i < 10; ++i)
    cluster.etcdctl("del /registry/pods/" + ns + "/a-" + std::to_string(i));
  // A request issued during the outage is retried until the apiserver is back.
  RestClient patient(
      cluster.config("admin"),
      RestClient::Options{.maxRetries = 30, .retryMax = std::chrono::milliseconds(1000)});
  std::jthread waiter([&] { patient.post(podsPath, podJson(ns, "during-outage")); });
  std::this_thread::sleep_for(std::chrono::seconds(1));
  cluster.ctl("start-apiserver");
  waiter.join();

  parallelFor(20, 4, [&](int i) { admin.post(podsPath, podJson(ns, "b-" + std::to_string(i))); });
  parallelFor(5, 4, [&](int i) {
    admin.del(podsPath + "/a-" + std::to_string(40 + i), {{"gracePeriodSeconds", 0}});
  });

  EXPECT_TRUE(convergesToList(pods, admin, podsPath));
  EXPECT_EQ(pods.size(), 50u - 10 + 1 + 20 - 5);
  EXPECT_EQ(pc.deletes.load(), 15);
  EXPECT_EQ(pc.adds.load(), 50 + 1 + 20);
  EXPECT_NE(pods.get(ns + "/during-outage"), nullptr);
  EXPECT_GE(pods.stats().errors, 1u) << "the outage was not noticed";
}

TEST(InformerIntegration, RelistsAfterCompactionExpiresItsResourceVersion) {
  auto& cluster = TestCluster::get();
  auto& admin = cluster.admin();
  const std::string ns = "inf-gone";
  const std::string podsPath = "/api/v1/namespaces/" + ns + "/pods";
  ensureNamespace(admin, ns);
  parallelFor(20, 4, [&](int i) { admin.post(podsPath, podJson(ns, "g-" + std::to_string(i))); });

  Counting<api::Pod> pc;  // outlives the informer
  RestClient sched(cluster.config("scheduler"));
  Informer<api::Pod> pods(sched, {"Pod", podsPath}, fastRetry());
  pods.addHandlers(pc.handlers());
  pods.start();
  ASSERT_TRUE(pods.waitForSync(std::chrono::seconds(30)));
  const auto listsBefore = pods.stats().lists;
  const auto staleRv = pods.lastResourceVersion();

  // Cut the watch, move etcd well past the informer's resourceVersion and compact it away,
  // then bring the apiserver back: the re-WATCH from the old version must get 410 Gone.
  cluster.ctl("stop-apiserver");
  for (int i = 0; i < 5; ++i)
    cluster.etcdctl("del /registry/pods/" + ns + "/g-" + std::to_string(i));
  cluster.etcdctl("put /ksched-test/bump x");
  cluster.ctl("compact");
  cluster.ctl("start-apiserver");

  // The client sees the expiry as a typed 410.
  try {
    admin.watch(podsPath, {.resourceVersion = staleRv, .timeoutSeconds = 5},
                [](client::WatchEvent&&) { return true; });
    ADD_FAILURE() << "a watch from a compacted resourceVersion must fail with 410";
  } catch (const client::ApiError& e) {
    EXPECT_TRUE(e.isGone()) << e.what();
    EXPECT_EQ(e.code(), 410);
    EXPECT_NE(e.message().find("too old resource version"), std::string::npos) << e.what();
  }

  EXPECT_TRUE(convergesToList(pods, admin, podsPath));
  EXPECT_GE(pods.stats().relistsAfterGone, 1u);
  EXPECT_GT(pods.stats().lists, listsBefore);
  EXPECT_EQ(pods.size(), 15u);
  EXPECT_EQ(pc.deletes.load(), 5);
}

}  // namespace
// A LIST page holding an object the object model refuses (a device attribute with two values:
// the CRD cannot say "exactly one of", ksched's decoder does) is read again, the whole page:
// refused again, the object is kept out and the rest of its page is listed.
TEST(InformerIntegration, AListPageWithARefusedObjectIsReadAgainWhole) {
  auto& admin = TestCluster::get().admin();
  installResourceCrds(admin);
  const std::string slices = std::string(kResourceApi) + "/resourceslices";
  auto slice = [](const std::string& name, const nlohmann::json& attribute) {
    return nlohmann::json{
        {"apiVersion", "resource.k8s.io/v1"},
        {"kind", "ResourceSlice"},
        {"metadata", {{"name", name}, {"labels", {{"ksched-test", "reread"}}}}},
        {"spec",
         {{"driver", "gpu.example.com"},
          {"nodeName", "n-" + name},
          {"pool", {{"name", "n-" + name}, {"generation", 0}, {"resourceSliceCount", 1}}},
          {"devices", {{{"name", "gpu-0"}, {"attributes", {{"index", attribute}}}}}}}}};
  };
  // In name order, pages of two: [a, b], [c, d], [e]; c opens its page.
  for (const char* name : {"reread-a", "reread-b", "reread-c", "reread-d", "reread-e"}) {
    removeIfThere(admin, slices + "/" + name);
    const bool bad = std::string(name) == "reread-c";
    admin.post(slices, slice(name, bad ? nlohmann::json{{"int", 1}, {"string", "one"}}
                                       : nlohmann::json{{"int", 0}}));
  }

  RestClient sched(TestCluster::get().config("admin"));
  informer::Reflector::Options paged = fastRetry();
  paged.pageSize = 2;
  Informer<api::ResourceSlice> informer(sched, {"ResourceSlice", slices, "ksched-test=reread"},
                                        paged);
  informer.start();
  ASSERT_TRUE(informer.waitForSync(std::chrono::seconds(30)));
  std::vector<std::string> names;
  for (const auto& s : informer.list()) names.push_back(s->metadata.name);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"reread-a", "reread-b", "reread-d", "reread-e"}));
  EXPECT_EQ(informer.decodeErrors(), 1u);
  EXPECT_EQ(informer.rereads(), 1u);
  informer.stop();
  for (const char* name : {"reread-a", "reread-b", "reread-c", "reread-d", "reread-e"}) {
    removeIfThere(admin, slices + "/" + name);
  }
}

}  // namespace ksched::testing
