// --defragment (advise/defragment.h): the fewest moves that make room for one pod, on the
// example of docs/examples/advise (four nodes of 8 GPUs, 8 free in all, at most 4 on one).
#include "advise/defragment.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "advise/render.h"
#include "sim/load.h"
#include "tests/support/sim_test_util.h"
#include "tests/support/source_dir.h"

namespace ksched::advise {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

sim::Cluster example() {
  sim::Cluster c;
  sim::loadFile((ksched::testing::repoRoot() / "docs/examples/advise/gpus.yaml").string(),
                sim::LoadAs::kCluster, c);
  sim::checkCluster(c);
  EXPECT_THAT(c.skipped, IsEmpty());
  return c;
}

api::Pod gpuPod(const std::string& gpus, const std::string& cpu = "24") {
  sim::Cluster one;
  sim::loadText(R"(apiVersion: v1
kind: Pod
metadata: {name: train-8gpu, namespace: ml}
spec:
  containers:
  - name: c
    resources:
      requests: {cpu: ")" +
                    cpu + R"(", memory: 128Gi, nvidia.com/gpu: ")" + gpus + R"("}
      limits: {nvidia.com/gpu: ")" +
                    gpus + R"("}
)",
                "pod.yaml", sim::LoadAs::kWork, one);
  return *one.pods.at(0);
}

TEST(AdviseDefragment, MakesRoomForEightGpusWithTheFewestMovesThatWork) {
  const Plan p = planDefragment(example(), {}, gpuPod("8"), {});
  // gpu-1 would take two moves, but its two 4-GPU pods have nowhere to go (the scheduler says
  // so); gpu-2 takes three: its 4-GPU pod to gpu-4, the two 1-GPU pods to gpu-3.
  ASSERT_EQ(p.notFreed.size(), 1U);
  EXPECT_EQ(p.notFreed[0].node, "gpu-1");
  EXPECT_THAT(p.notFreed[0].reason, HasSubstr("Insufficient nvidia.com/gpu"));
  EXPECT_EQ(p.forPod, "ml/train-8gpu");
  EXPECT_EQ(p.forPodNode, "gpu-2");
  EXPECT_EQ(p.uncordonAfter, std::vector<std::string>{"gpu-2"});
  std::vector<std::string> moves;
  for (const auto& m : p.moves) moves.push_back(m.name + ":" + m.from + "->" + m.to);
  EXPECT_THAT(moves,
              ElementsAre("train-3:gpu-2->gpu-4", "infer-4:gpu-2->gpu-3", "infer-5:gpu-2->gpu-3"));
  EXPECT_THAT(planTable(p),
              HasSubstr("Plan: 3 moves off gpu-2, then ml/train-8gpu fits, on gpu-2."));
  EXPECT_EQ(planDocument(p).at("makeRoomOn"), nlohmann::ordered_json::array({"gpu-2"}));
}

TEST(AdviseDefragment, APodThatFitsNeedsNoMove) {
  const Plan p = planDefragment(example(), {}, gpuPod("4", "4"), {});
  EXPECT_THAT(p.moves, IsEmpty());
  EXPECT_EQ(p.forPodNode, "gpu-4");
  EXPECT_THAT(planTable(p), HasSubstr("Plan: nothing to move: ml/train-8gpu fits now, on gpu-4."));
}

TEST(AdviseDefragment, NoRoomSaysWhyThePodDoesNotFit) {
  const Plan p = planDefragment(example(), {}, gpuPod("9"), {});
  EXPECT_THAT(p.moves, IsEmpty());
  EXPECT_EQ(p.forPodNode, "");
  EXPECT_THAT(p.forPodReason, HasSubstr("4 Insufficient nvidia.com/gpu"));
  EXPECT_TRUE(planDocument(p).at("forPodNode").is_null());
}

TEST(AdviseDefragment, APodNoProfileSchedulesIsAnError) {
  api::Pod pod = gpuPod("1");
  pod.spec.schedulerName = "elsewhere";
  EXPECT_THROW((void)planDefragment(example(), {}, pod, {}), std::invalid_argument);
}

}  // namespace
}  // namespace ksched::advise
