// The ksched binary as an operator runs it: started with a kubeconfig, stopped with signals.
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

class Daemon {
 public:
  explicit Daemon(std::string logPath) : log_(std::move(logPath)) {
    pid_ = fork();
    if (pid_ == 0) {
      FILE* f = std::freopen(log_.c_str(), "w", stderr);
      if (f == nullptr) _exit(127);
      dup2(fileno(stderr), fileno(stdout));
      std::string kc = TestCluster::get().kubeconfig("scheduler");
      execl(KSCHED_BINARY, KSCHED_BINARY, "--kubeconfig", kc.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
  }
  ~Daemon() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  [[nodiscard]] std::string log() const {
    std::ifstream f(log_);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  }
  bool waitForLog(const std::string& needle, std::chrono::seconds within = 30s) const {
    return eventually([&] { return log().find(needle) != std::string::npos; }, within);
  }
  // Sends `sig` and waits; returns the exit status (or -1 on timeout / signal death).
  int signalAndWait(int sig, std::chrono::seconds within = 20s) {
    kill(pid_, sig);
    auto deadline = std::chrono::steady_clock::now() + within;
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      pid_t r = waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
      std::this_thread::sleep_for(50ms);
    }
    return -1;
  }

 private:
  std::string log_;
  pid_t pid_ = -1;
};

std::string logPath(const std::string& name) {
  return TestCluster::get().dir() + "/" + name + ".log";
}

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
