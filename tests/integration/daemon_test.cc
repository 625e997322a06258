// The ksched binary as an operator runs it: started with a kubeconfig, stopped with signals.
#include "daemon.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "cluster.h"
#include "scheduling.h"

namespace ksched::testing {
namespace {

TEST(DaemonIntegration, SchedulesAndExitsZeroOnSigterm) {
  auto& admin = TestCluster::get().admin();
  deleteAllNodes(admin);
  const std::string ns = "daemon-term";
  ensureNamespace(admin, ns);
  for (int i = 0; i < 3; ++i)
    admin.post("/api/v1/nodes", sizedNode("term-" + std::to_string(i), "4", "8Gi"));
  Daemon d(logPath("daemon-term"));
  ASSERT_TRUE(d.waitForLog("synced:")) << d.log();
  parallelFor(10, 4, [&](int i) {
    admin.post("/api/v1/namespaces/" + ns + "/pods",
               sizedPod(ns, "p-" + std::to_string(i), "100m"));
  });
  EXPECT_EQ(waitAllBound(admin, ns, 10), 10u);
  EXPECT_EQ(d.signalAndWait(SIGTERM), 0) << d.log();
  EXPECT_NE(d.log().find("10 bound"), std::string::npos) << d.log();
}

TEST(DaemonIntegration, KilledMidRunThenRestartedBindsEveryPodOnce) {
  auto& admin = TestCluster::get().admin();
  deleteAllNodes(admin);
  const std::string ns = "daemon-kill";
  ensureNamespace(admin, ns);
  for (int i = 0; i < 20; ++i)
    admin.post("/api/v1/nodes", sizedNode("kill-" + std::to_string(i), "4", "8Gi"));
  auto first = std::make_unique<Daemon>(logPath("daemon-kill-1"));
  ASSERT_TRUE(first->waitForLog("synced:")) << first->log();
  std::jthread creator([&] {
    parallelFor(300, 4, [&](int i) {
      admin.post("/api/v1/namespaces/" + ns + "/pods",
                 sizedPod(ns, "p-" + std::to_string(i), "250m"));
    });
  });
  // Kill it while it is busy binding.
  EXPECT_TRUE(eventually([&] {
    size_t bound = 0;
    for (const auto& p : listPods(admin, ns)) bound += p.spec.nodeName.empty() ? 0 : 1;
    return bound >= 50;
  }));
  first->signalAndWait(SIGKILL);
  first.reset();
  creator.join();
  std::this_thread::sleep_for(1s);  // requests the first instance had in flight land
  size_t boundByFirst = 0;
  for (const auto& p : listPods(admin, ns)) boundByFirst += p.spec.nodeName.empty() ? 0 : 1;
  ASSERT_LT(boundByFirst, 300u) << "the kill came too late to test a restart";
  Daemon second(logPath("daemon-kill-2"));
  EXPECT_EQ(waitAllBound(admin, ns, 300, 90s), 300u) << second.log();
  expectNoNodeOvercommitted(admin);
  // Each pod was bound once: the apiserver refuses a second binding, and no pod got two
  // Scheduled events. The second instance reports every pod it bound; the first one's events
  // still queued at the kill are lost.
  EXPECT_TRUE(eventually(
      [&] { return eventsByPod(admin, ns, "Scheduled").size() >= 300 - boundByFirst; }, 60s));
  for (const auto& [pod, notes] : eventsByPod(admin, ns, "Scheduled")) {
    EXPECT_EQ(notes.size(), 1u) << pod;
  }
  EXPECT_EQ(second.signalAndWait(SIGTERM), 0) << second.log();
}

}  // namespace
}  // namespace ksched::testing
