// The Workload API's gang scheduling (GenericWorkload) against the real apiserver: a
// SchedulerCore built as the daemon builds it (the default profile of the gates, a
// RestClusterApi, ObjectInformers for the watches its plugins and the core ask for), with the
// PodGroup and Workload of scheduling.k8s.io/v1alpha2 served as CustomResourceDefinitions
// (tests/integration/crds/scheduling.k8s.io.yaml). What is asserted is what the apiserver holds
// afterwards: the pods' bindings and the PodGroup's PodGroupScheduled condition as read back.
//
// Two things the test cluster's kube-apiserver v1.20 cannot do are worked around here:
//   - It does not route a custom resource of a group it serves itself (scheduling.k8s.io:
//     PriorityClass): every /apis/scheduling.k8s.io/... path answers 404 from the built-in
//     group, whatever version a CRD adds. The CRDs are installed under kAliasGroup instead, and
//     the test's ClusterApi and watches translate the paths and apiVersions between the two
//     groups; the requests themselves (LIST/WATCH, the status PATCHes and their 415) reach the
//     apiserver unchanged otherwise.
//   - It drops spec.schedulingGroup (1.35+) from the pods it stores. The pods are created
//     without it and fed to the core as the apiserver returned them, with the field set in
//     memory; binding them is real.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <ksched/api/decode.h>
#include <ksched/api/node.h>
#include <ksched/api/pod.h>

#include "client/errors.h"
#include "client/rest_client.h"
#include "cluster.h"
#include "config/yaml_json.h"
#include "dra.h"
#include "plugins/registry.h"
#include "scheduler/object_informer.h"
#include "scheduler/rest_cluster_api.h"
#include "scheduler/scheduler_core.h"
#include "scheduling.h"
#include "tests/support/scheduler_core_test_util.h"

namespace ksched::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr const char* kNs = "workload-api";
constexpr const char* kGroup = "scheduling.k8s.io";
// The group the CRDs are served under in the test cluster (see the file comment).
constexpr const char* kAliasGroup = "scheduling.ksched.io";
constexpr const char* kPodGroups =
    "/apis/scheduling.ksched.io/v1alpha2/namespaces/workload-api/podgroups";

// `s` with the first "<from>/" replaced by "<to>/" (`s` itself when it has none).
std::string swapGroup(const std::string& s, const std::string& from, const std::string& to) {
  const auto at = s.find(from + "/");
  if (at == std::string::npos) return s;
  return s.substr(0, at) + to + s.substr(at + from.size());
}
// A path of scheduling.k8s.io as the test cluster serves it.
std::string served(const std::string& path) { return swapGroup(path, kGroup, kAliasGroup); }

// The CRD documents under kAliasGroup: group and names rewritten, and without the approval
// annotation only a *.k8s.io group carries.
std::vector<nlohmann::json> aliasedCrds() {
  auto docs = config::yamlDocumentsToJson(
      readFile(std::string(KSCHED_SOURCE_DIR) + "/tests/integration/crds/scheduling.k8s.io.yaml"));
  for (auto& d : docs) {
    EXPECT_EQ(d["spec"]["group"], kGroup);
    d["spec"]["group"] = kAliasGroup;
    d["metadata"]["name"] = d["spec"]["names"]["plural"].get<std::string>() + "." + kAliasGroup;
    d["metadata"].erase("annotations");
  }
  return docs;
}

// Creates the CRDs (idempotent) and waits until each is Established and its collection served.
void installWorkloadCrds(client::RestClient& admin) {
  const auto crds = aliasedCrds();
  ASSERT_EQ(crds.size(), 2u);
  for (const auto& crd : crds)
    createOrIgnore(admin, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd);
  for (const auto& crd : crds) {
    const std::string name = crd["metadata"]["name"];
    const std::string plural = crd["spec"]["names"]["plural"];
    ASSERT_TRUE(eventually([&] { return crdEstablished(admin, name); }, std::chrono::seconds(30)))
        << name << " is not Established";
    ASSERT_TRUE(eventually(
        [&] {
          try {
            admin.get(std::string("/apis/") + kAliasGroup + "/v1alpha2/" + plural);
            return true;
          } catch (const client::ApiError&) {
            return false;
          }
        },
        std::chrono::seconds(30)))
        << plural << " is not served";
  }
}

// The core's ClusterApi: the live one, with scheduling.k8s.io's paths translated; it keeps the
// PodGroup status PATCHes it passed on and what the apiserver answered.
class AliasApi final : public ClusterApi {
 public:
  struct Patch {
    std::string path, contentType;
    int code = 0;  // 0: success
  };
  explicit AliasApi(client::RestClient& c) : api_(c) {}
  ApiResult bindPod(const api::Pod& pod, const std::string& nodeName) override {
    return api_.bindPod(pod, nodeName);
  }
  ApiResult deletePod(const api::Pod& pod) override { return api_.deletePod(pod); }
  ApiResult patchPodStatus(const api::Pod& pod, const nlohmann::json& patch,
                           std::string_view contentType) override {
    return api_.patchPodStatus(pod, patch, contentType);
  }
  ApiResult get(const std::string& path, nlohmann::json* out) override {
    return api_.get(served(path), out);
  }
  ApiResult patch(const std::string& path, const nlohmann::json& patch, nlohmann::json* out,
                  std::string_view contentType) override {
    ApiResult r = api_.patch(served(path), patch, out, contentType);
    if (path.find("/podgroups/") != std::string::npos) {
      std::lock_guard lock(mu_);
      patches_.push_back({path, std::string(contentType), r ? r->code : 0});
    }
    return r;
  }
  ApiResult create(const std::string& path, const nlohmann::json& object,
                   nlohmann::json* out) override {
    return api_.create(served(path), object, out);
  }
  ApiResult remove(const std::string& path, const nlohmann::json& preconditions) override {
    return api_.remove(served(path), preconditions);
  }
  [[nodiscard]] std::vector<Patch> patches() const {
    std::lock_guard lock(mu_);
    return patches_;
  }

 private:
  scheduler::RestClusterApi api_;
  mutable std::mutex mu_;
  std::vector<Patch> patches_;
};

// Handlers that see every object with scheduling.k8s.io's apiVersion: a custom resource names
// kAliasGroup's; as scheduler.cc's, they also fill in `apiVersion` where an item has none.
ObjectEventHandlers withApiVersion(const std::string& apiVersion, ObjectEventHandlers h) {
  auto fix = [apiVersion](const UnstructuredPtr& o) -> UnstructuredPtr {
    if (!o || !o->object.is_object()) return o;
    auto copy = std::make_shared<UnstructuredObject>(*o);
    copy->object["apiVersion"] =
        swapGroup(o->object.value("apiVersion", apiVersion), kAliasGroup, kGroup);
    return copy;
  };
  ObjectEventHandlers out;
  if (h.onAdd) out.onAdd = [fix, f = std::move(h.onAdd)](const UnstructuredPtr& o) { f(fix(o)); };
  if (h.onUpdate) {
    out.onUpdate = [fix, f = std::move(h.onUpdate)](
                       const UnstructuredPtr& a, const UnstructuredPtr& b) { f(fix(a), fix(b)); };
  }
  if (h.onDelete) {
    out.onDelete = [fix, f = std::move(h.onDelete)](const UnstructuredPtr& o) { f(fix(o)); };
  }
  return out;
}

// Whether the apiserver serves the collection at `path` (of the test cluster).
bool isServed(client::RestClient& c, const std::string& path) {
  try {
    c.get(path);
    return true;
  } catch (const client::ApiError& e) {
    if (e.code() == 404) return false;
    throw;
  }
}

// A SchedulerCore with GenericWorkload on, plugged into the test cluster as the daemon plugs
// its core in (scheduler.cc), its events recorded.
struct LiveCore {
  LiveCore() {
    auto& admin = TestCluster::get().admin();
    scheduler::Options o;
    EXPECT_EQ(o.features.set("GenericWorkload=true"), std::nullopt);
    o.profiles = {config::defaultProfile(o.features)};
    o.binderThreads = 2;
    o.parallelism = 2;
    // A rejected group is not retried during the test: the condition it wrote stays.
    o.queue.podInitialBackoff = std::chrono::seconds(60);
    o.queue.podMaxBackoff = std::chrono::seconds(60);
    scheduler::Environment env;
    env.api = &api;
    env.events = &events;
    env.watchObjects = [this, &admin](ObjectWatch what, ObjectEventHandlers h) {
      // The first of the path and its alternatives the apiserver serves (v1alpha2 here: the
      // CRDs serve no v1beta1), as the daemon resolves them.
      std::vector<std::string> paths{what.path};
      paths.insert(paths.end(), what.alternatives.begin(), what.alternatives.end());
      std::string path;
      for (const auto& p : paths) {
        if (isServed(admin, served(p))) {
          path = p;
          break;
        }
      }
      if (path.empty()) {
        return std::shared_ptr<const ObjectStore>(std::make_shared<EmptyObjectStore>());
      }
      const std::string apiVersion = path.substr(6, path.find('/', path.find('/', 6) + 1) - 6);
      what.path = served(path);
      h = withApiVersion(apiVersion, std::move(h));
      // One informer per collection (the core and GangScheduling both watch PodGroups), started
      // once every handler is added, as the daemon does.
      std::shared_ptr<scheduler::ObjectInformer> inf;
      for (auto& i : informers) {
        if (i->what().path == what.path) inf = i;
      }
      if (!inf)
        inf = informers.emplace_back(std::make_shared<scheduler::ObjectInformer>(admin, what));
      inf->addHandlers(std::move(h));
      if (what.kind == "PodGroup") podGroupWatches.push_back(path);
      return std::shared_ptr<const ObjectStore>(inf);
    };
    core = std::make_unique<scheduler::SchedulerCore>(std::move(env), plugins::inTreeRegistry(),
                                                      std::move(o));
    for (auto& i : informers) i->start();
    for (auto& i : informers) EXPECT_TRUE(i->waitForSync(std::chrono::seconds(30)));
  }
  ~LiveCore() {
    core->stop();
    for (auto& i : informers) i->stop();
  }
  // Nodes and pods as the apiserver returned them; each pod a member of `group`.
  void feed(const std::vector<std::string>& nodes, const std::vector<std::string>& pods,
            const std::string& group) {
    auto& admin = TestCluster::get().admin();
    for (const auto& n : nodes) {
      core->onNodeAdd(std::make_shared<const api::Node>(
          api::decode<api::Node>(admin.get("/api/v1/nodes/" + n))));
    }
    for (const auto& p : pods) {
      auto j = admin.get(std::string("/api/v1/namespaces/") + kNs + "/pods/" + p);
      // The membership a 1.36 apiserver would have kept: v1.20 drops the field it does not
      // know, so it is set on the pod as read back, in memory only.
      ASSERT_FALSE(j["spec"].contains("schedulingGroup"));
      j["spec"]["schedulingGroup"]["podGroupName"] = group;
      core->onPodAdd(std::make_shared<const api::Pod>(api::decode<api::Pod>(j)));
    }
    core->startScheduling();
  }
  // The FailedScheduling messages recorded, one per pod that got one.
  [[nodiscard]] std::vector<std::string> failures() const {
    std::vector<std::string> out;
    for (const auto& e : events.withReason("FailedScheduling")) out.push_back(e.message);
    return out;
  }

  AliasApi api{TestCluster::get().admin()};
  schedulertest::RecordingSink events;
  std::vector<std::shared_ptr<scheduler::ObjectInformer>> informers;
  std::vector<std::string> podGroupWatches;  // the resolved paths, one per watch asked for
  std::unique_ptr<scheduler::SchedulerCore> core;
};

class WorkloadApiIntegration : public NamespacedTest {
 protected:
  void SetUp() override {
    auto& admin = TestCluster::get().admin();
    installWorkloadCrds(admin);
    if (HasFatalFailure()) return;
    useNamespace(kNs);
    deleteAllPods(admin, kNs);
    deleteAllNodes(admin);
    for (const auto& pg : admin.list(kPodGroups).items) {
      admin.del(std::string(kPodGroups) + "/" + pg["metadata"]["name"].get<std::string>());
    }
  }
  void TearDown() override {
    NamespacedTest::TearDown();
    deleteAllNodes(TestCluster::get().admin());
  }

  // `n` nodes with room for one one-cpu pod each.
  static std::vector<std::string> nodes(int n) {
    std::vector<std::string> names;
    for (int i = 0; i < n; ++i) {
      names.push_back("wl-" + std::to_string(i));
      TestCluster::get().admin().post("/api/v1/nodes", sizedNode(names.back(), "1", "4Gi"));
    }
    return names;
  }
  // Pods <prefix>-0..n-1 asking for one cpu each, created without spec.schedulingGroup.
  static std::vector<std::string> pods(const std::string& prefix, int n) {
    std::vector<std::string> names;
    for (int i = 0; i < n; ++i) {
      names.push_back(prefix + "-" + std::to_string(i));
      TestCluster::get().admin().post(std::string("/api/v1/namespaces/") + kNs + "/pods",
                                      sizedPod(kNs, names.back(), "1"));
    }
    return names;
  }
  // A v1alpha2 PodGroup with a gang policy, stamped from a Workload's template; the object
  // the apiserver returned.
  static nlohmann::json createPodGroup(const std::string& name, int minCount) {
    const std::string workloads =
        std::string("/apis/") + kAliasGroup + "/v1alpha2/namespaces/" + kNs + "/workloads";
    createOrIgnore(TestCluster::get().admin(), workloads,
                   {{"apiVersion", std::string(kAliasGroup) + "/v1alpha2"},
                    {"kind", "Workload"},
                    {"metadata", {{"name", "train"}, {"namespace", kNs}}},
                    {"spec",
                     {{"podGroupTemplates",
                       {{{"name", "workers"},
                         {"schedulingPolicy", {{"gang", {{"minCount", minCount}}}}}}}}}}});
    return TestCluster::get().admin().post(
        kPodGroups,
        {{"apiVersion", std::string(kAliasGroup) + "/v1alpha2"},
         {"kind", "PodGroup"},
         {"metadata", {{"name", name}, {"namespace", kNs}}},
         {"spec",
          {{"podGroupTemplateRef",
            {{"workload", {{"workloadName", "train"}, {"podGroupTemplateName", "workers"}}}}},
           {"schedulingPolicy", {{"gang", {{"minCount", minCount}}}}}}}});
  }
  static nlohmann::json getPodGroup(const std::string& name) {
    return TestCluster::get().admin().get(std::string(kPodGroups) + "/" + name);
  }
  // The PodGroupScheduled condition of the PodGroup as the apiserver holds it (null: none).
  static nlohmann::json scheduledCondition(const std::string& name) {
    for (const auto& c :
         objectOrEmpty(getPodGroup(name), "status").value("conditions", nlohmann::json::array())) {
      if (c.value("type", "") == "PodGroupScheduled") return c;
    }
    return nullptr;
  }
  static std::string boundNode(const std::string& pod) {
    return TestCluster::get()
        .admin()
        .get(std::string("/api/v1/namespaces/") + kNs + "/pods/" + pod)["spec"]
        .value("nodeName", "");
  }
};

TEST_F(WorkloadApiIntegration, GangWithRoomIsBoundAndItsPodGroupScheduled) {
  const auto pg = createPodGroup("fits", 3);
  const auto names = pods("fits", 3);
  const auto room = nodes(3);
  LiveCore live;
  // Every watch of PodGroups (the core's, GangScheduling's, ...) found v1alpha2, the version the
  // CRDs serve, after v1beta1 answered 404.
  EXPECT_THAT(live.podGroupWatches,
              ::testing::Each(std::string("/apis/scheduling.k8s.io/v1alpha2/podgroups")));
  EXPECT_GE(live.podGroupWatches.size(), 2u);
  live.feed(room, names, "fits");

  ASSERT_TRUE(eventually([&] {
    for (const auto& p : names) {
      if (boundNode(p).empty()) return false;
    }
    return true;
  })) << ::testing::PrintToString(live.failures());
  std::set<std::string> used;
  for (const auto& p : names) used.insert(boundNode(p));
  EXPECT_EQ(used.size(), 3u) << "one pod per node";

  ASSERT_TRUE(eventually([&] { return !scheduledCondition("fits").is_null(); }));
  const auto c = scheduledCondition("fits");
  EXPECT_EQ(c.value("status", ""), "True");
  EXPECT_EQ(c.value("reason", ""), "Scheduled");
  EXPECT_EQ(c.value("message", ""), "");
  EXPECT_EQ(c.value("observedGeneration", int64_t{-1}),
            getPodGroup("fits")["metadata"]["generation"].get<int64_t>());
  EXPECT_EQ(pg["metadata"]["generation"], getPodGroup("fits")["metadata"]["generation"]);
  EXPECT_FALSE(c.value("lastTransitionTime", "").empty());
  // A custom resource takes no strategic merge patch: the apiserver's 415, then the merge patch.
  live.core->stop();
  const auto patches = live.api.patches();
  ASSERT_EQ(patches.size(), 2u);
  EXPECT_EQ(patches[0].contentType, "application/strategic-merge-patch+json");
  EXPECT_EQ(patches[0].code, 415);
  EXPECT_EQ(patches[1].contentType, "application/merge-patch+json");
  EXPECT_EQ(patches[1].code, 0);
  EXPECT_EQ(patches[1].path,
            "/apis/scheduling.k8s.io/v1alpha2/namespaces/workload-api/podgroups/fits/status");
}

TEST_F(WorkloadApiIntegration, GangWithoutRoomIsNotBoundAndItsPodGroupUnschedulable) {
  createPodGroup("short", 3);
  const auto names = pods("short", 3);
  const auto room = nodes(2);
  LiveCore live;
  live.feed(room, names, "short");

  ASSERT_TRUE(eventually([&] {
    const auto c = scheduledCondition("short");
    return !c.is_null() && c.value("status", "") == "False";
  })) << ::testing::PrintToString(live.failures());
  ASSERT_TRUE(eventually([&] { return live.failures().size() == 3; }));
  live.core->stop();
  for (const auto& p : names) EXPECT_EQ(boundNode(p), "") << p;

  const auto c = scheduledCondition("short");
  EXPECT_EQ(c.value("reason", ""), "Unschedulable");
  EXPECT_EQ(c.value("observedGeneration", int64_t{-1}),
            getPodGroup("short")["metadata"]["generation"].get<int64_t>());
  // The group's words, as the pods placed and taken back were told them (the one that did not
  // fit has its own).
  const std::string message = c.value("message", "");
  EXPECT_EQ(message,
            "minCount (3) cannot be satisfied: 2 scheduled, 0 remaining, pod group preemption: No "
            "preemption victims found for incoming preemptor");
  EXPECT_EQ(std::ranges::count(live.failures(), message), 2);
  EXPECT_THAT(live.failures(), ::testing::Contains(HasSubstr("Insufficient cpu")));
}

TEST_F(WorkloadApiIntegration, ScheduledConditionIsTerminal) {
  createPodGroup("done", 3);
  // Scheduled before (by an earlier scheduler, say): True is never turned back.
  const nlohmann::json scheduled = {{"type", "PodGroupScheduled"},
                                    {"status", "True"},
                                    {"reason", "Scheduled"},
                                    {"message", ""},
                                    {"lastTransitionTime", "2026-01-02T03:04:05Z"},
                                    {"observedGeneration", 1}};
  TestCluster::get().admin().patch(
      std::string(kPodGroups) + "/done/status",
      {{"status", {{"conditions", nlohmann::json::array({scheduled})}}}});
  const auto before = getPodGroup("done");
  const auto names = pods("done", 3);
  const auto room = nodes(2);
  LiveCore live;
  live.feed(room, names, "done");

  // The cycle fails as it did without the condition ...
  ASSERT_TRUE(eventually([&] { return live.failures().size() == 3; }))
      << ::testing::PrintToString(live.failures());
  EXPECT_THAT(live.failures(), ::testing::Contains(StartsWith("minCount (3) cannot be satisfied")));
  // ... and, once the core's writes are drained, the PodGroup is as it was.
  live.core->stop();
  for (const auto& p : names) EXPECT_EQ(boundNode(p), "") << p;
  const auto after = getPodGroup("done");
  EXPECT_EQ(after["status"], before["status"]);
  EXPECT_EQ(after["metadata"]["resourceVersion"], before["metadata"]["resourceVersion"]);
  EXPECT_EQ(scheduledCondition("done"), scheduled);
  EXPECT_TRUE(live.api.patches().empty());
}

}  // namespace
}  // namespace ksched::testing
