// Gang scheduling against the real apiserver with the PodGroup CRD of deploy/manifests installed:
// the ksched binary runs a profile that enables Coscheduling, as an operator would configure it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cluster.h"
#include "config/yaml_json.h"
#include "daemon.h"
#include "podgroups.h"
#include "scheduling.h"

namespace ksched::testing {
namespace {

using ::testing::HasSubstr;

constexpr const char* kNs = "gang";
constexpr const char* kPodGroups = "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/gang/podgroups";

nlohmann::json podGroupJson(const std::string& name, int minMember) {
  return {{"apiVersion", "scheduling.x-k8s.io/v1alpha1"},
          {"kind", "PodGroup"},
          {"metadata", {{"name", name}, {"namespace", kNs}}},
          {"spec", {{"minMember", minMember}}}};
}

nlohmann::json gangPod(const std::string& name, const std::string& group) {
  auto p = sizedPod(kNs, name, "1", "64Mi");
  p["spec"]["schedulerName"] = "gang";
  p["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] = group;
  return p;
}

std::string boundNode(RestClient& c, const std::string& name) {
  return c.get(std::string("/api/v1/namespaces/") + kNs + "/pods/" + name)["spec"].value("nodeName",
                                                                                         "");
}

std::string scheduledMessage(RestClient& c, const std::string& name) {
  auto pod = c.get(std::string("/api/v1/namespaces/") + kNs + "/pods/" + name);
  for (const auto& cond : pod["status"].value("conditions", nlohmann::json::array())) {
    if (cond.value("type", "") == "PodScheduled" && cond.value("status", "") == "False") {
      return cond.value("message", "");
    }
  }
  return "";
}

// "<name>: <PodScheduled=False message>" of each of prefix0 .. prefix<n-1> not bound: first in
// a failure's output, before the daemon's log.
std::string pendingMessages(RestClient& c, const std::string& prefix, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) {
    const std::string name = prefix + std::to_string(i);
    if (boundNode(c, name).empty()) out += name + ": " + scheduledMessage(c, name) + "\n";
  }
  return out;
}

size_t boundCount(RestClient& c, const std::string& prefix, int n) {
  size_t bound = 0;
  for (int i = 0; i < n; ++i) bound += boundNode(c, prefix + std::to_string(i)).empty() ? 0 : 1;
  return bound;
}

class GangIntegration : public NamespacedTest {
 protected:
  void SetUp() override {
    auto& admin = TestCluster::get().admin();
    installPodGroupCrd(admin);
    useNamespace(kNs);
    deleteAllNodes(admin);
    for (const auto& pg : admin.list(kPodGroups).items) {
      admin.del(std::string(kPodGroups) + "/" + pg["metadata"]["name"].get<std::string>());
    }
    // 4 nodes with room for 2 one-cpu pods each.
    for (int i = 0; i < 4; ++i)
      admin.post("/api/v1/nodes", sizedNode("gn-" + std::to_string(i), "2", "8Gi"));
    const std::string dir = TestCluster::get().dir();
    const std::string config = dir + "/gang-config.yaml";
    std::ofstream(config) << "apiVersion: kubescheduler.config.k8s.io/v1\n"
                             "kind: KubeSchedulerConfiguration\n"
                             "clientConnection:\n"
                             "  kubeconfig: " +
                                 TestCluster::get().kubeconfig("scheduler") +
                                 "\n"
                                 "leaderElection:\n"
                                 "  leaderElect: false\n"
                                 "profiles:\n"
                                 "- schedulerName: gang\n" +
                                 kCoschedulingProfile;
    daemon_ = std::make_unique<Daemon>(
        dir + "/gang-" + ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".log",
        std::vector<std::string>{"--config", config, "--secure-port=0", "-v", "4"});
    ASSERT_TRUE(daemon_->waitForLog("synced:")) << daemon_->log();
  }
  void TearDown() override {
    daemon_.reset();
    NamespacedTest::TearDown();
  }
  std::unique_ptr<Daemon> daemon_;
};

// A gang of 8 on 4 nodes that hold 2 each: all 8 bound, the PodGroup says Scheduled.
TEST_F(GangIntegration, GangThatFitsIsBoundWhole) {
  auto& admin = TestCluster::get().admin();
  admin.post(kPodGroups, podGroupJson("g8", 8));
  for (int i = 0; i < 8; ++i)
    admin.post(std::string("/api/v1/namespaces/gang/pods"),
               gangPod("g8-" + std::to_string(i), "g8"));
  EXPECT_TRUE(eventually([&] { return boundCount(admin, "g8-", 8) == 8; }, 60s)) << daemon_->log();
  expectNoNodeOvercommitted(admin);
  nlohmann::json status;
  EXPECT_TRUE(eventually(
      [&] {
        status = objectOrEmpty(admin.get(std::string(kPodGroups) + "/g8"), "status");
        return status.value("phase", "") == "Scheduled" && status.value("scheduled", 0) == 8;
      },
      20s))
      << status.dump();
  EXPECT_FALSE(status.value("scheduleStartTime", "").empty());
}

// A gang of 9 on room for 8: none bound; the pods and the PodGroup say why.
TEST_F(GangIntegration, GangThatCannotFitBindsNothing) {
  auto& admin = TestCluster::get().admin();
  admin.post(kPodGroups, podGroupJson("g9", 9));
  for (int i = 0; i < 9; ++i)
    admin.post(std::string("/api/v1/namespaces/gang/pods"),
               gangPod("g9-" + std::to_string(i), "g9"));
  // Messages (the pods' FailedScheduling events): the pod that fits nowhere, and the waiting
  // pods released for it.
  bool fitMessage = false;
  bool released = false;
  EXPECT_TRUE(eventually(
      [&] {
        for (const auto& [pod, notes] : eventsByPod(admin, kNs, "FailedScheduling")) {
          for (const auto& m : notes) {
            if (m.find("Insufficient cpu") != std::string::npos &&
                m.find("PodGroup gang/g9 gets rejected due to Pod") != std::string::npos) {
              fitMessage = true;
            }
            if (m.find("optimistic rejection in PostFilter: pod g9-") != std::string::npos) {
              released = true;
            }
          }
        }
        return fitMessage && released;
      },
      30s))
      << daemon_->log();
  // Every pod says why it is pending (the condition patches trail the events).
  for (int i = 0; i < 9; ++i) {
    EXPECT_TRUE(eventually([&] {
      return !scheduledMessage(admin, "g9-" + std::to_string(i)).empty();
    })) << i;
  }
  EXPECT_EQ(boundCount(admin, "g9-", 9), 0u);
  // The PodGroup: scheduling, nothing scheduled, and an Event saying why.
  nlohmann::json status;
  EXPECT_TRUE(eventually(
      [&] {
        status = objectOrEmpty(admin.get(std::string(kPodGroups) + "/g9"), "status");
        return status.value("phase", "") == "Scheduling" && status.value("scheduled", -1) == 0;
      },
      20s))
      << status.dump();
  std::string note;
  EXPECT_TRUE(eventually([&] {
    for (const auto& e : admin.list("/apis/events.k8s.io/v1/namespaces/gang/events").items) {
      if (e["regarding"].value("kind", "") == "PodGroup" &&
          e["regarding"].value("name", "") == "g9" && e.value("reason", "") == "FailedScheduling") {
        note = e.value("note", "");
        return true;
      }
    }
    return false;
  }));
  EXPECT_EQ(note,
            "the group's 9 pods do not all fit (4 Insufficient cpu); its waiting pods were "
            "released");
  // Still none bound a while later.
  std::this_thread::sleep_for(3s);
  EXPECT_EQ(boundCount(admin, "g9-", 9), 0u);
}

// Two gangs of 6 on room for 8: one completes, the other waits without holding nodes (a plain
// pod still gets the free room), then completes once the first one's pods are deleted.
TEST_F(GangIntegration, CompetingGangsDoNotDeadlock) {
  auto& admin = TestCluster::get().admin();
  admin.post(kPodGroups, podGroupJson("a", 6));
  admin.post(kPodGroups, podGroupJson("b", 6));
  for (int i = 0; i < 6; ++i) {
    admin.post("/api/v1/namespaces/gang/pods", gangPod("a-" + std::to_string(i), "a"));
    admin.post("/api/v1/namespaces/gang/pods", gangPod("b-" + std::to_string(i), "b"));
  }
  size_t a = 0;
  size_t b = 0;
  EXPECT_TRUE(eventually(
      [&] {
        a = boundCount(admin, "a-", 6);
        b = boundCount(admin, "b-", 6);
        return a == 6 || b == 6;
      },
      60s))
      << daemon_->log();
  const std::string first = a == 6 ? "a-" : "b-";
  const std::string second = a == 6 ? "b-" : "a-";
  std::this_thread::sleep_for(2s);
  EXPECT_EQ(boundCount(admin, second, 6), 0u);
  expectNoNodeOvercommitted(admin);
  // The waiting gang holds no room for long: a plain pod takes one of the two free slots.
  auto plain = sizedPod(kNs, "plain", "1", "64Mi");
  plain["spec"]["schedulerName"] = "gang";
  admin.post("/api/v1/namespaces/gang/pods", plain);
  EXPECT_TRUE(eventually([&] { return !boundNode(admin, "plain").empty(); }, 30s))
      << daemon_->log();
  // The first gang leaves: the second completes.
  for (int i = 0; i < 6; ++i) {
    admin.del("/api/v1/namespaces/gang/pods/" + first + std::to_string(i),
              {{"gracePeriodSeconds", 0}});
  }
  EXPECT_TRUE(eventually([&] { return boundCount(admin, second, 6) == 6; }, 90s))
      << pendingMessages(admin, second, 6) << daemon_->log();
  expectNoNodeOvercommitted(admin);
}

// A pod naming a PodGroup that does not exist waits with a clear message, and is scheduled once
// the PodGroup is created.
TEST_F(GangIntegration, MissingPodGroupWaitsWithAMessage) {
  auto& admin = TestCluster::get().admin();
  admin.post("/api/v1/namespaces/gang/pods", gangPod("lone", "nope"));
  std::string msg;
  EXPECT_TRUE(eventually(
      [&] {
        msg = scheduledMessage(admin, "lone");
        return !msg.empty();
      },
      30s))
      << daemon_->log();
  EXPECT_THAT(msg, HasSubstr("PodGroup gang/nope not found (named by the pod's "
                             "scheduling.x-k8s.io/pod-group label)"));
  EXPECT_TRUE(boundNode(admin, "lone").empty());
  admin.post(kPodGroups, podGroupJson("nope", 1));
  EXPECT_TRUE(eventually([&] { return !boundNode(admin, "lone").empty(); }, 30s)) << daemon_->log();
}

// The label form of the reference document: no PodGroup object, min-available on the pods.
TEST_F(GangIntegration, LabelFormGroup) {
  auto& admin = TestCluster::get().admin();
  auto legacy = [](const std::string& name) {
    auto p = sizedPod(kNs, name, "1", "64Mi");
    p["spec"]["schedulerName"] = "gang";
    p["metadata"]["labels"]["pod-group.scheduling.sigs.k8s.io/name"] = "lf";
    p["metadata"]["labels"]["pod-group.scheduling.sigs.k8s.io/min-available"] = "3";
    return p;
  };
  admin.post("/api/v1/namespaces/gang/pods", legacy("lf-0"));
  admin.post("/api/v1/namespaces/gang/pods", legacy("lf-1"));
  // The second pod's attempt counts both.
  std::string msg;
  EXPECT_TRUE(eventually(
      [&] {
        msg = scheduledMessage(admin, "lf-1");
        return msg.find("number: 2") != std::string::npos;
      },
      30s))
      << msg;
  EXPECT_THAT(msg, HasSubstr("pre-filter pod lf-1 cannot find enough sibling pods, current pods "
                             "number: 2, minMember of group: 3"));
  EXPECT_EQ(boundCount(admin, "lf-", 2), 0u);
  admin.post("/api/v1/namespaces/gang/pods", legacy("lf-2"));
  EXPECT_TRUE(eventually([&] { return boundCount(admin, "lf-", 3) == 3; }, 30s)) << daemon_->log();
}

}  // namespace
}  // namespace ksched::testing
