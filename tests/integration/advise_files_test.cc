// ksched advise over files (no apiserver): the examples of docs/examples/advise through the
// command, its exit codes, its errors and its --report page.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
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
  static std::string read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  // The row of the moves table for each move of `plan`, in order.
  static void expectEveryMove(const std::string& html, const json& plan) {
    ASSERT_FALSE(plan.at("moves").empty());
    size_t step = 0;
    for (const auto& m : plan.at("moves")) {
      const std::string row = "<tr><td class=\"num\">" + std::to_string(++step) + "</td><td>" +
                              m.at("pod").get<std::string>() + "</td><td>" +
                              m.at("from").get<std::string>() + "</td><td>" +
                              m.at("to").get<std::string>() + "</td>";
      EXPECT_NE(html.find(row), std::string::npos) << row;
    }
  }
};

// More GPUs than any node of docs/examples/advise/gpus.yaml has: no room can be made.
constexpr const char* kNineGpuPod = R"(apiVersion: v1
kind: Pod
metadata: {name: huge, namespace: ml}
spec:
  containers:
  - name: c
    resources: {requests: {nvidia.com/gpu: "9"}, limits: {nvidia.com/gpu: "9"}}
)";

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

TEST_F(AdviseFiles, TheHotNodesAreBalancedByTheirMeasuredUse) {
  const std::string config = (repoRoot() / "docs/examples/load-aware/config.yaml").string();
  const CliOutcome r =
      advise({"-f", example("hot.yaml"), "--balance", "--config", config, "-o", "json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const json plan = json::parse(r.out);
  EXPECT_EQ(plan.at("balance").at("measure"), "load");
  EXPECT_EQ(plan.at("balance").at("nodesOverBefore"), 2);
  EXPECT_EQ(plan.at("balance").at("nodesOverAfter"), 0);
  ASSERT_EQ(plan.at("moves").size(), 2U);
  EXPECT_EQ(plan["moves"][0].at("from"), "lb-0");
  EXPECT_EQ(plan["moves"][1].at("from"), "lb-1");
  EXPECT_NE(plan["moves"][0].at("to"), plan["moves"][1].at("to"));
  EXPECT_EQ(plan.at("balance").at("usedPercentPerNodeAfter").at("cpu").at("max"), 55.0);
  // By requests (no load-aware profile) the same nodes are even.
  const CliOutcome even = advise({"-f", example("hot.yaml"), "--balance"});
  ASSERT_EQ(even.exitCode, 0) << even.err;
  EXPECT_NE(even.out.find("Plan: 0 moves; 0 nodes more than 10.0 points above the cluster's "
                          "requested share before"),
            std::string::npos)
      << even.out;
}

TEST_F(AdviseFiles, DefragmentingForEightGpusExitsZeroAndTwoWhenThereIsNoRoom) {
  const CliOutcome r =
      advise({"-f", example("gpus.yaml"), "--defragment", example("gpu-job.yaml")});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("Plan: 3 moves off gpu-2, then ml/train-8gpu fits, on gpu-2."),
            std::string::npos)
      << r.out;
  const std::string big = file("big.yaml", kNineGpuPod);
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

TEST_F(AdviseFiles, TheReportIsWrittenNextToTheTableOrTheJson) {
  const json plan =
      json::parse(advise({"-f", example("cluster.yaml"), "--scale-down", "-o", "json", "-q"}).out);
  // With the table: the table on stdout, the page in the file.
  const std::string page = dir_ + "/plan.html";
  const CliOutcome table =
      advise({"-f", example("cluster.yaml"), "--scale-down", "--report", page});
  ASSERT_EQ(table.exitCode, 0) << table.err;
  EXPECT_NE(table.out.find("Plan: free 3 nodes (node-1, node-4, node-5) with 7 moves"),
            std::string::npos)
      << table.out;
  ASSERT_TRUE(std::filesystem::exists(page));
  const std::string html = read(page);
  EXPECT_TRUE(html.starts_with("<!DOCTYPE html>"));
  EXPECT_NE(html.find("<title>ksched advise: --scale-down</title>"), std::string::npos);
  EXPECT_NE(html.find("data-stat=\"nodesFreed\"><div class=\"v\">3</div>"), std::string::npos);
  expectEveryMove(html, plan);
  // With -o json: stdout is the document alone.
  const std::string spread = dir_ + "/spread.html";
  const CliOutcome j =
      advise({"-f", example("skewed.yaml"), "--spread", "-o", "json", "--report", spread});
  ASSERT_EQ(j.exitCode, 0) << j.err;
  const json spreadPlan = json::parse(j.out);
  expectEveryMove(read(spread), spreadPlan);
  EXPECT_NE(read(spread).find("id=\"plot-skews\""), std::string::npos);
  // No room for the pod: exit 2, and the page says so.
  const std::string big = file("big.yaml", kNineGpuPod);
  const std::string none = dir_ + "/none.html";
  const CliOutcome noRoom =
      advise({"-f", example("gpus.yaml"), "--defragment", big, "--report", none});
  EXPECT_EQ(noRoom.exitCode, 2) << noRoom.err;
  EXPECT_NE(read(none).find("No room found for ml/huge."), std::string::npos);
  // A page that cannot be written: exit 1, and no plan printed.
  const std::string nowhere = dir_ + "/no/such/dir/plan.html";
  const CliOutcome bad =
      advise({"-f", example("cluster.yaml"), "--scale-down", "--report", nowhere});
  EXPECT_EQ(bad.exitCode, 1);
  EXPECT_NE(bad.err.find("advise: " + nowhere + ": cannot be written"), std::string::npos)
      << bad.err;
  EXPECT_EQ(bad.out.find("Plan:"), std::string::npos) << bad.out;
  const CliOutcome noValue = advise({"-f", example("cluster.yaml"), "--scale-down", "--report"});
  EXPECT_EQ(noValue.exitCode, 1);
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
