// ksched advise over files (no apiserver): the examples of docs/examples/advise through the
// command, its exit codes and its errors.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "simulate_dir.h"
#include "tests/support/source_dir.h"

namespace ksched::testing {
namespace {

using nlohmann::json;

class AdviseFiles : public SimulateDir {
 protected:
  static std::string example(const std::string& name) {
    return (repoRoot() / "docs/examples/advise" / name).string();
  }
  CliOutcome advise(std::vector<std::string> args) const {
    args.insert(args.begin(), "advise");
    return runKsched(args, dir_, std::chrono::seconds(60));
  }
};

TEST_F(AdviseFiles, TheShopIsScaledDownToItsLowerBound) {
  const CliOutcome r = advise({"-f", example("cluster.yaml"), "--scale-down", "-o", "json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const json plan = json::parse(r.out);
  EXPECT_EQ(plan.at("cordon"), json::array({"node-1", "node-4", "node-5"}));
  EXPECT_EQ(plan.at("moves").size(), 7U);
  EXPECT_EQ(plan.at("lowerBoundNodes"), 3);
  EXPECT_EQ(plan.at("after").at("nodesUsed"), 3);
  // db-0 may only run in zone-b: it goes to node-6, the zone's one node left.
  for (const auto& m : plan["moves"]) {
    if (m.at("pod") == "shop/db-0") {
      EXPECT_EQ(m.at("to"), "node-6");
    }
  }
}

TEST_F(AdviseFiles, TheSkewedReplicaSetIsSpreadOverBothZones) {
  const CliOutcome r = advise({"-f", example("skewed.yaml"), "--spread", "-o", "json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const json plan = json::parse(r.out);
  EXPECT_EQ(plan.at("moves").size(), 3U);
  ASSERT_EQ(plan.at("skews").size(), 1U);
  EXPECT_EQ(plan["skews"][0].at("before"), 6);
  EXPECT_EQ(plan["skews"][0].at("after"), 0);
}

TEST_F(AdviseFiles, DefragmentingForEightGpusExitsZeroAndTwoWhenThereIsNoRoom) {
  const CliOutcome r =
      advise({"-f", example("gpus.yaml"), "--defragment", example("gpu-job.yaml")});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("Plan: 3 moves off gpu-2, then ml/train-8gpu fits, on gpu-2."),
            std::string::npos)
      << r.out;
  const std::string big = file("big.yaml", R"(apiVersion: v1
kind: Pod
metadata: {name: huge, namespace: ml}
spec:
  containers:
  - name: c
    resources: {requests: {nvidia.com/gpu: "9"}, limits: {nvidia.com/gpu: "9"}}
)");
  const CliOutcome none = advise({"-f", example("gpus.yaml"), "--defragment", big, "-o", "json"});
  EXPECT_EQ(none.exitCode, 2) << none.err;
  EXPECT_TRUE(json::parse(none.out).at("forPodNode").is_null());
}

TEST_F(AdviseFiles, BadFlagsAndFilesExitOneWithTheReason) {
  const CliOutcome noGoal = advise({"-f", example("cluster.yaml")});
  EXPECT_EQ(noGoal.exitCode, 1);
  EXPECT_NE(
      noGoal.err.find("the goal: --free-nodes N, --scale-down, --spread or --defragment POD.yaml"),
      std::string::npos)
      << noGoal.err;
  const CliOutcome applyFiles = advise({"-f", example("cluster.yaml"), "--scale-down", "--apply"});
  EXPECT_EQ(applyFiles.exitCode, 1);
  EXPECT_NE(applyFiles.err.find("--apply: needs --kubeconfig"), std::string::npos);
  const CliOutcome missing = advise({"-f", dir_ + "/nope.yaml", "--free-nodes", "1"});
  EXPECT_EQ(missing.exitCode, 1);
  EXPECT_NE(missing.err.find("nope.yaml"), std::string::npos) << missing.err;
  const std::string config = file("bad.yaml",
                                  "apiVersion: kubescheduler.config.k8s.io/v1\n"
                                  "kind: KubeSchedulerConfiguration\n"
                                  "percentageOfNodesToScore: 300\n");
  const CliOutcome badConfig =
      advise({"-f", example("cluster.yaml"), "--scale-down", "--config", config});
  EXPECT_EQ(badConfig.exitCode, 1);
  EXPECT_NE(badConfig.err.find("percentageOfNodesToScore"), std::string::npos) << badConfig.err;
  const CliOutcome twoPods =
      advise({"-f", example("gpus.yaml"), "--defragment", example("gpus.yaml")});
  EXPECT_EQ(twoPods.exitCode, 1);
  EXPECT_NE(twoPods.err.find("--defragment needs exactly one pod, found 12"), std::string::npos)
      << twoPods.err;
}

}  // namespace
}  // namespace ksched::testing
