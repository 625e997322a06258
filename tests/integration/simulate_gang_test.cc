// Gang scheduling with the Workload API (GenericWorkload) through `ksched simulate -f`, with the
// PodGroups and pods shaped as a 1.37 apiserver serves them (a v1.20 apiserver drops the pod's
// spec.schedulingGroup, so live pods cannot carry it: docs/testing.md). What is asserted is what
// an operator reads: which pods got a node, and each pod's reason.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "simulate_dir.h"

namespace ksched::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

class SimulateGang : public SimulateDir {};

std::string node(const std::string& name, const std::string& cpu) {
  return "apiVersion: v1\nkind: Node\nmetadata:\n  name: " + name +
         "\n  labels:\n    kubernetes.io/hostname: " + name +
         "\nstatus:\n  allocatable:\n    cpu: \"" + cpu +
         "\"\n    memory: 16Gi\n    pods: \"110\"\n";
}

// A v1beta1 PodGroup (1.37) or its v1alpha2 shape (1.36).
std::string podGroup(const std::string& name, int minCount, bool alpha2 = false) {
  const std::string ref = alpha2 ? "  podGroupTemplateRef:\n    workload:\n      workloadName: "
                                   "train\n      podGroupTemplateName: workers\n"
                                 : "  workloadRef:\n    workloadName: train\n    templateName: "
                                   "workers\n";
  return std::string("apiVersion: scheduling.k8s.io/") + (alpha2 ? "v1alpha2" : "v1beta1") +
         "\nkind: PodGroup\nmetadata:\n  name: " + name + "\n  namespace: ml\n  uid: " + name +
         "-uid\n  generation: 1\nspec:\n" + ref +
         "  schedulingPolicy:\n    gang:\n      minCount: " + std::to_string(minCount) + "\n";
}

// `n` pods of 1 cpu in PodGroup `group`.
std::string members(const std::string& group, int n) {
  std::string out;
  for (int i = 1; i <= n; ++i) {
    out += std::string(out.empty() ? "" : "---\n") +
           "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + group + "-" + std::to_string(i) +
           "\n  namespace: ml\nspec:\n  schedulingGroup:\n    podGroupName: " + group +
           "\n  containers:\n  - name: c\n    image: trainer\n    resources:\n      requests:\n"
           "        cpu: \"1\"\n        memory: 64Mi\n";
  }
  return out;
}

struct Placement {
  int placed = 0;
  std::vector<std::string> reasons;  // of the pods not placed
};

Placement placementOf(const json& result) {
  Placement p;
  for (const auto& pod : result.at("pods")) {
    if (pod.at("node").is_string()) {
      ++p.placed;
    } else {
      p.reasons.push_back(pod.at("reason"));
    }
  }
  return p;
}

TEST_F(SimulateGang, AGangOfEightWithRoomForSevenPlacesNothingAndSaysWhy) {
  const std::string cluster = file("cluster.yaml", node("n1", "4") + "---\n" + node("n2", "3"));
  const std::string work = file("gang.yaml", podGroup("train", 8) + "---\n" + members("train", 8));
  const auto r = simulate({"-f", cluster, "--pods", work, "--feature-gates", "GenericWorkload=true",
                           "-o", "json", "-q"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const Placement p = placementOf(json::parse(r.out));
  EXPECT_EQ(p.placed, 0) << r.out;
  ASSERT_EQ(p.reasons.size(), 8u) << r.out;
  // Seven fit and wait for the eighth; the eighth does not fit.
  int short7 = 0, noRoom = 0;
  for (const auto& reason : p.reasons) {
    if (reason.find("minCount (8) cannot be satisfied: 7 scheduled, 0 remaining") !=
        std::string::npos) {
      ++short7;
    }
    if (reason.find("0/2 nodes are available: 2 Insufficient cpu.") != std::string::npos) ++noRoom;
  }
  EXPECT_EQ(short7, 7) << r.out;
  EXPECT_EQ(noRoom, 1) << r.out;
}

TEST_F(SimulateGang, AGangOfEightWithRoomForEightPlacesAllEight) {
  const std::string cluster = file("cluster.yaml", node("n1", "4") + "---\n" + node("n2", "4"));
  const std::string work = file("gang.yaml", podGroup("train", 8) + "---\n" + members("train", 8));
  const auto r = simulate({"-f", cluster, "--pods", work, "--feature-gates", "GenericWorkload=true",
                           "-o", "json", "-q"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const Placement p = placementOf(json::parse(r.out));
  EXPECT_EQ(p.placed, 8) << r.out;
}

TEST_F(SimulateGang, The136ShapeOfThePodGroupWorksTheSame) {
  const std::string cluster = file("cluster.yaml", node("n1", "4") + "---\n" + node("n2", "3"));
  const std::string work =
      file("gang.yaml", podGroup("train", 8, true) + "---\n" + members("train", 8));
  const auto r = simulate({"-f", cluster, "--pods", work, "--feature-gates", "GenericWorkload=true",
                           "-o", "json", "-q"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(placementOf(json::parse(r.out)).placed, 0) << r.out;
}

TEST_F(SimulateGang, AGangShortOfMembersIsHeldUntilMinCountPodsExist) {
  const std::string cluster = file("cluster.yaml", node("n1", "16"));
  const std::string work = file("gang.yaml", podGroup("train", 8) + "---\n" + members("train", 5));
  const auto r = simulate({"-f", cluster, "--pods", work, "--feature-gates", "GenericWorkload=true",
                           "-o", "json", "-q"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const Placement p = placementOf(json::parse(r.out));
  EXPECT_EQ(p.placed, 0) << r.out;
  ASSERT_EQ(p.reasons.size(), 5u);
  for (const auto& reason : p.reasons) {
    EXPECT_EQ(reason,
              "not attempted: held at PreEnqueue by GangScheduling: waiting for minCount pods "
              "from a gang to appear in scheduling queue");
  }
}

TEST_F(SimulateGang, WithTheGateOffTheGroupIsIgnoredAndPodsArePlacedOneByOne) {
  const std::string cluster = file("cluster.yaml", node("n1", "4") + "---\n" + node("n2", "3"));
  const std::string work = file("gang.yaml", podGroup("train", 8) + "---\n" + members("train", 8));
  const auto r = simulate({"-f", cluster, "--pods", work, "-o", "json", "-q"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(placementOf(json::parse(r.out)).placed, 7) << r.out;
}

}  // namespace
}  // namespace ksched::testing
