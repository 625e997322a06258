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

TEST_F(AdviseFiles, TheShopIsBalancedWithinTheDeviation) {
  const CliOutcome r = advise({"-f", example("cluster.yaml"), "--balance", "-o", "json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const json plan = json::parse(r.out);
  EXPECT_EQ(plan.at("balance").at("deviation"), 10);
  EXPECT_EQ(plan.at("balance").at("nodesOverBefore"), 3);
  EXPECT_EQ(plan.at("balance").at("nodesOverAfter"), 1);
  ASSERT_EQ(plan.at("moves").size(), 2U);
  EXPECT_EQ(plan["moves"][0].at("from"), "node-5");
  EXPECT_EQ(plan["moves"][1].at("from"), "node-6");
  const json& cpuBefore = plan.at("before").at("requestedPercentPerNode").at("cpu");
  const json& cpuAfter = plan.at("after").at("requestedPercentPerNode").at("cpu");
  EXPECT_DOUBLE_EQ(cpuBefore.at("max").get<double>(), 65.0);
  EXPECT_DOUBLE_EQ(cpuAfter.at("max").get<double>(), 52.5);
  EXPECT_LT(cpuAfter.at("stddev").get<double>(), cpuBefore.at("stddev").get<double>());
  // node-3's movable pod comes back to it: its cache pod (emptyDir) keeps it above.
  ASSERT_EQ(plan.at("notFreed").size(), 1U);
  EXPECT_EQ(plan["notFreed"][0].at("node"), "node-3");
  EXPECT_NE(plan["notFreed"][0].at("reason").get<std::string>().find("on node-3 again"),
            std::string::npos);

  // A wider band: nothing to move.
  const CliOutcome wide = advise({"-f", example("cluster.yaml"), "--balance", "--deviation", "20"});
  ASSERT_EQ(wide.exitCode, 0) << wide.err;
  EXPECT_NE(wide.out.find("Plan: 0 moves; 0 nodes more than 20.0 points above the cluster's "
                          "requested share before, 0 nodes after."),
            std::string::npos)
      << wide.out;
  const CliOutcome stray = advise({"-f", example("cluster.yaml"), "--spread", "--deviation", "5"});
  EXPECT_EQ(stray.exitCode, 1);
  EXPECT_NE(stray.err.find("--deviation: goes with --balance"), std::string::npos) << stray.err;
  const CliOutcome bad = advise({"-f", example("cluster.yaml"), "--balance", "--deviation", "0"});
  EXPECT_EQ(bad.exitCode, 1);
  EXPECT_NE(bad.err.find("--deviation: not in 1..100: 0"), std::string::npos) << bad.err;
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

TEST_F(AdviseFiles, RoomIsMadeForAGangOfTwoFourGpuWorkers) {
  const CliOutcome r = advise({"-f", example("gpus.yaml"), "--defragment", example("gpu-gang.yaml"),
                               "--feature-gates", "GenericWorkload=true", "-o", "json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const json plan = json::parse(r.out);
  EXPECT_EQ(plan.at("goal"), "--defragment ml/finetune (2 pods)");
  ASSERT_EQ(plan.at("moves").size(), 1U);
  EXPECT_EQ(plan["moves"][0].at("pod"), "ml/infer-6");
  EXPECT_EQ(plan["moves"][0].at("from"), "gpu-3");
  EXPECT_EQ(plan.at("forPodNode"), "gpu-3, gpu-4");
  EXPECT_EQ(plan.at("makeRoomOn"), json::array({"gpu-3", "gpu-4"}));
  ASSERT_EQ(plan.at("forPodGroupMembers").size(), 2U);
  // Without the gate the PodGroup means nothing: refused, naming the gate.
  const CliOutcome off =
      advise({"-f", example("gpus.yaml"), "--defragment", example("gpu-gang.yaml")});
  EXPECT_EQ(off.exitCode, 1);
  EXPECT_NE(off.err.find("PodGroup ml/finetune needs --feature-gates GenericWorkload=true"),
            std::string::npos)
      << off.err;
}

TEST_F(AdviseFiles, BadFlagsAndFilesExitOneWithTheReason) {
  const CliOutcome noGoal = advise({"-f", example("cluster.yaml")});
  EXPECT_EQ(noGoal.exitCode, 1);
  EXPECT_NE(
      noGoal.err.find(
          "the goal: --free-nodes N, --scale-down, --spread, --balance or --defragment POD.yaml"),
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
  EXPECT_NE(twoPods.err.find("--defragment needs exactly one pod, or a PodGroup and its pods; "
                             "found 12 pods and no PodGroup"),
            std::string::npos)
      << twoPods.err;
}

}  // namespace
}  // namespace ksched::testing
