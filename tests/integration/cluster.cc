#include "cluster.h"

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <mutex>
#include <stdexcept>
#include <string_view>
#include <thread>

namespace ksched::testing {
namespace {

int envInt(const char* name, int def) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::atoi(v) : def;
}

}  // namespace

std::string readFile(const std::string& path) {
  std::ifstream f(path);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

std::string runCommand(const std::string& cmd) {
  std::string out;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (p == nullptr) throw std::runtime_error("popen failed: " + cmd);
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  int rc = pclose(p);
  if (rc != 0)
    throw std::runtime_error("command failed (" + std::to_string(rc) + "): " + cmd + "\n" + out);
  return out;
}

TestCluster& TestCluster::get() {
  static TestCluster c;
  return c;
}

TestCluster::TestCluster()
    : port_(envInt("KSCHED_TEST_APISERVER_PORT", 16443)),
      etcdPort_(envInt("KSCHED_TEST_ETCD_PORT", 12379)),
      dir_("/tmp/ksched-test-cluster-" + std::to_string(port_)) {}

std::string TestCluster::env() const {
  return "KSCHED_APISERVER_PORT=" + std::to_string(port_) +
         " KSCHED_ETCD_PORT=" + std::to_string(etcdPort_) + " KSCHED_CLUSTER_DIR=" + dir_ + " ";
}

std::string TestCluster::ctl(const std::string& verb) const {
  return runCommand(env() + std::string(KSCHED_SOURCE_DIR) + "/deploy/local/cluster.sh " + verb);
}

std::string TestCluster::etcdctl(const std::string& args) const {
  return runCommand("ETCDCTL_API=3 etcdctl --endpoints 127.0.0.1:" + std::to_string(etcdPort_) +
                    " " + args);
}

void TestCluster::up() {
  if (started_) return;
  ctl("down");  // a leftover from a crashed run
  ctl("up");
  started_ = true;
}

void TestCluster::startControllerManager() {
  up();
  ctl("start-controller-manager");
}

void TestCluster::startWorkloadControllers() {
  up();
  ctl("start-workload-controllers");
}

void TestCluster::stopWorkloadControllers() { ctl("stop-workload-controllers"); }

void TestCluster::down() {
  admin_.reset();
  if (!started_) return;
  if (std::getenv("KSCHED_TEST_KEEP_CLUSTER") == nullptr) ctl("down");
  started_ = false;
}

client::Config TestCluster::config(const std::string& who) const {
  client::Config c = client::loadKubeconfig(kubeconfig(who));
  c.qps = 5000;
  c.burst = 5000;
  c.userAgent = "ksched-tests";
  return c;
}

client::RestClient& TestCluster::admin() {
  if (!admin_) admin_ = std::make_unique<client::RestClient>(config("admin"));
  return *admin_;
}

void ensureNamespace(client::RestClient& c, const std::string& name) {
  createOrIgnore(c, "/api/v1/namespaces",
                 {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", name}}}});
}

void createOrIgnore(client::RestClient& c, const std::string& path, const nlohmann::json& body) {
  try {
    c.post(path, body);
  } catch (const client::ApiError& e) {
    if (!e.isConflict()) throw;
  }
}

class ClusterEnvironment : public ::testing::Environment {
 public:
  // Starts the cluster unless only suites that never talk to it (ConfigCliTest, SimulateFiles)
  // are selected.
  void SetUp() override {
    const auto* ut = ::testing::UnitTest::GetInstance();
    for (int i = 0; i < ut->total_test_suite_count(); ++i) {
      const auto* suite = ut->GetTestSuite(i);
      const std::string_view name = suite->name();
      if (suite->test_to_run_count() > 0 && name != "ConfigCliTest" && name != "SimulateFiles") {
        TestCluster::get().up();
        return;
      }
    }
  }
  void TearDown() override { TestCluster::get().down(); }
};

}  // namespace ksched::testing

namespace {

// Names the test and aborts the run when one test takes longer than
// KSCHED_TEST_TIMEOUT_SECONDS (default 300): a hang fails that test in minutes, with its name,
// instead of using up the whole suite's time limit without saying where.
class Watchdog final : public ::testing::EmptyTestEventListener {
 public:
  Watchdog() : limit_(ksched::testing::envInt("KSCHED_TEST_TIMEOUT_SECONDS", 300)) {
    thread_ = std::jthread([this](std::stop_token st) { run(st); });
  }

  void OnTestStart(const ::testing::TestInfo& info) override {
    std::lock_guard lock(mu_);
    current_ = std::string(info.test_suite_name()) + "." + info.name();
    deadline_ = std::chrono::steady_clock::now() + limit_;
    cv_.notify_all();
  }

  void OnTestEnd(const ::testing::TestInfo&) override {
    std::lock_guard lock(mu_);
    current_.clear();
    cv_.notify_all();
  }

 private:
  void run(const std::stop_token& st) {
    std::unique_lock lock(mu_);
    while (!st.stop_requested()) {
      if (current_.empty()) {
        cv_.wait(lock, st, [&] { return !current_.empty(); });
        continue;
      }
      const std::string test = current_;
      if (cv_.wait_until(lock, st, deadline_, [&] { return current_ != test; })) continue;
      if (st.stop_requested()) return;
      std::fprintf(stderr, "\n*** %s still running after %lld s: aborting the suite\n",
                   test.c_str(), static_cast<long long>(limit_.count()));
      std::fflush(stderr);
      std::abort();
    }
  }

  const std::chrono::seconds limit_;
  std::mutex mu_;
  std::condition_variable_any cv_;
  std::string current_;                             // guarded by mu_
  std::chrono::steady_clock::time_point deadline_;  // guarded by mu_
  std::jthread thread_;
};

}  // namespace

int main(int argc, char** argv) {
  // spdlog creates its registry on first use inside the (uninstrumented) library; create it here,
  // before tests start threads, so ThreadSanitizer sees it published to them.
  spdlog::default_logger_raw();
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new ksched::testing::ClusterEnvironment);
  ::testing::UnitTest::GetInstance()->listeners().Append(new Watchdog);
  return RUN_ALL_TESTS();
}
