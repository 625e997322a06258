// The out-of-tree example (docs/examples/out-of-tree-plugin), built against the installed SDK
// by tests/sdk/run.sh, run as its users would: its own binary, a --config profile enabling its
// plugin by name. Registered as the ctest `sdk`; skipped when run without that script.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "cluster.h"
#include "daemon.h"
#include "scheduling.h"

namespace ksched::testing {
namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

class SdkIntegration : public NamespacedTest {
 protected:
  void SetUp() override {
    binary_ = env("KSCHED_EXAMPLE_BINARY");
    config_ = env("KSCHED_EXAMPLE_CONFIG");
    if (binary_.empty()) GTEST_SKIP() << "run by tests/sdk/run.sh";
  }
  // The example's config with the test cluster's scheduler identity.
  std::string configFor(const std::string& name, const std::string& extra = "") {
    std::ifstream in(config_);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str() + extra;
    text.insert(
        text.find("leaderElection:"),
        "clientConnection:\n  kubeconfig: " + TestCluster::get().kubeconfig("scheduler") + "\n");
    const std::string path = TestCluster::get().dir() + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  std::string binary_;
  std::string config_;
};

TEST_F(SdkIntegration, ProfilePluginDecidesWhereThePodsGo) {
  auto& admin = TestCluster::get().admin();
  deleteAllNodes(admin);
  const std::string ns = useNamespace("sdk-example");
  // Without LabelPreference every default Score plugin prefers the emptier, bigger node.
  auto ssd = sizedNode("sdk-ssd", "2", "4Gi");
  ssd["metadata"]["labels"]["disk"] = "ssd";
  admin.post("/api/v1/nodes", ssd);
  auto big = sizedNode("sdk-big", "16", "64Gi");
  big["metadata"]["labels"]["disk"] = "hdd";
  admin.post("/api/v1/nodes", big);

  Daemon d(logPath("sdk-example"), {"--config", configFor("sdk-example.yaml"), "--secure-port=0"},
           binary_);
  ASSERT_TRUE(d.waitForLog("synced:", 60s)) << d.log();
  for (int i = 0; i < 3; ++i) {
    auto p = sizedPod(ns, "p-" + std::to_string(i), "200m");
    p["spec"]["schedulerName"] = "my-scheduler";
    admin.post("/api/v1/namespaces/" + ns + "/pods", p);
  }
  ASSERT_EQ(waitAllBound(admin, ns, 3, 60s), 3u) << d.log();
  for (const auto& p : listPods(admin, ns)) {
    EXPECT_EQ(p.spec.nodeName, "sdk-ssd") << p.metadata.name;
  }
  EXPECT_EQ(d.signalAndWait(SIGTERM), 0) << d.log();
}

TEST_F(SdkIntegration, BadPluginArgsExitWithTheFieldPath) {
  const std::string path = configFor("sdk-bad.yaml");
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  text.replace(text.find("score: 80"), 9, "score: 0");
  std::ofstream(path) << text;
  Daemon d(logPath("sdk-bad"), {"--config", path}, binary_);
  EXPECT_EQ(d.wait(30s), 1);
  EXPECT_TRUE(
      d.logHas("profiles[0].pluginConfig[0].args.score: Invalid value: 0: must be in "
               "the range [1, 100]"))
      << d.log();
}

TEST_F(SdkIntegration, TakesEveryKschedFlag) {
  Daemon d(logPath("sdk-help"), {"--help"}, binary_);
  EXPECT_EQ(d.wait(10s), 0);
  EXPECT_TRUE(d.logHas("--config")) << d.log();
  EXPECT_TRUE(d.logHas("--leader-elect")) << d.log();
}

}  // namespace
}  // namespace ksched::testing
