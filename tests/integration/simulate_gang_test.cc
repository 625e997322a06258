// Gang scheduling with the Workload API (GenericWorkload) through `ksched simulate -f`, with the
// PodGroups and pods shaped as a 1.37 apiserver serves them (a v1.20 apiserver drops the pod's
// spec.schedulingGroup, so live pods cannot carry it: docs/testing.md). What is asserted is what
// an operator reads: which pods got a node, and each pod's reason.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "simulate_dir.h"

namespace ksched::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

class SimulateGang : public SimulateDir {
 protected:
  // The victims of a high-priority gang over a low one of disruptionMode `mode` (below);
  // `placedHigh`: how many of the high gang's pods got a node.
  int preemptGangs(const std::string& mode, int& placedHigh);
};

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
  EXPECT_EQ(json::parse(r.out).at("podGroups"),
            json::parse(R"([{"podGroup": "ml/train", "pods": 8, "placed": 0, "policy": "gang",
                             "minCount": 8, "nodes": [],
                             "reason": "minCount (8) cannot be satisfied: 7 scheduled, 0 remaining, pod group preemption: No preemption victims found for incoming preemptor"}])"));

  const auto table =
      simulate({"-f", cluster, "--pods", work, "--feature-gates", "GenericWorkload=true", "-q"});
  ASSERT_EQ(table.exitCode, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("Pod groups          pods   placed\n"
                                   "  ml/train              8        0\n"));
  EXPECT_THAT(table.out, HasSubstr("minCount (8) cannot be satisfied: 7 scheduled, 0 remaining"));
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

std::string rackNode(const std::string& name, const std::string& rack) {
  return "apiVersion: v1\nkind: Node\nmetadata:\n  name: " + name +
         "\n  labels:\n    kubernetes.io/hostname: " + name + "\n    example.com/rack: " + rack +
         "\nstatus:\n  allocatable:\n    cpu: \"4\"\n    memory: 16Gi\n    pods: \"110\"\n";
}

TEST_F(SimulateGang, ATopologyConstrainedGangLandsInOneRackThoughTheOtherHasMoreRoom) {
  // Rack a: 8 cpus; rack b: 12. Four pods of 2 cpus fit either rack, and would spread over
  // both without the constraint.
  const std::string cluster =
      file("cluster.yaml", rackNode("a1", "a") + "---\n" + rackNode("a2", "a") + "---\n" +
                               rackNode("b1", "b") + "---\n" + rackNode("b2", "b") + "---\n" +
                               rackNode("b3", "b"));
  std::string pods;
  for (int i = 1; i <= 4; ++i) {
    pods += "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: w-" + std::to_string(i) +
            "\n  namespace: ml\nspec:\n  schedulingGroup:\n    podGroupName: train\n"
            "  containers:\n  - name: c\n    image: trainer\n    resources:\n      requests:\n"
            "        cpu: \"2\"\n";
  }
  const std::string work =
      file("gang.yaml",
           podGroup("train", 4) +
               "  schedulingConstraints:\n    topology:\n    - key: example.com/rack\n" + pods);
  const auto r =
      simulate({"-f", cluster, "--pods", work, "--feature-gates",
                "GenericWorkload=true,TopologyAwareWorkloadScheduling=true", "-o", "json", "-q"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  std::set<char> racks;
  int placed = 0;
  const json doc = json::parse(r.out);
  for (const auto& pod : doc.at("pods")) {
    if (!pod.at("node").is_string()) continue;
    ++placed;
    racks.insert(pod.at("node").get<std::string>()[0]);
  }
  EXPECT_EQ(placed, 4) << r.out;
  EXPECT_EQ(racks.size(), 1u) << r.out;
}

// A bound gang of priority 0 (4 pods of 2 cpus, filling both nodes) and a pending gang of
// priority 100 that needs 3 such pods: the low gang is evicted whole when its disruptionMode is
// All, pod by pod (only as many as needed) when it is Single.
std::string lowGang(const std::string& mode) {
  std::string out =
      "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata:\n"
      "  name: low\n  namespace: ml\n  uid: low-uid\nspec:\n  schedulingPolicy:\n"
      "    gang:\n      minCount: 4\n  disruptionMode:\n    " +
      mode + ": {}\n  priority: 0\n";
  for (int i = 1; i <= 4; ++i) {
    out += "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: low-" + std::to_string(i) +
           "\n  namespace: ml\nspec:\n  nodeName: n" + std::to_string(1 + (i - 1) / 2) +
           "\n  priority: 0\n  schedulingGroup:\n    podGroupName: low\n  containers:\n"
           "  - name: c\n    image: trainer\n    resources:\n      requests:\n"
           "        cpu: \"2\"\nstatus:\n  phase: Running\n";
  }
  return out;
}

std::string highGang() {
  std::string out =
      "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata:\n"
      "  name: high\n  namespace: ml\n  uid: high-uid\nspec:\n  schedulingPolicy:\n"
      "    gang:\n      minCount: 3\n  priority: 100\n";
  for (int i = 1; i <= 3; ++i) {
    out += "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: high-" + std::to_string(i) +
           "\n  namespace: ml\nspec:\n  priority: 100\n  schedulingGroup:\n"
           "    podGroupName: high\n  containers:\n  - name: c\n    image: trainer\n"
           "    resources:\n      requests:\n        cpu: \"2\"\n";
  }
  return out;
}

int SimulateGang::preemptGangs(const std::string& mode, int& placedHigh) {
  const std::string cluster =
      file("cluster-" + mode + ".yaml",
           node("n1", "4") + "---\n" + node("n2", "4") + "---\n" + lowGang(mode));
  const std::string work = file("high.yaml", highGang());
  const auto r = simulate({"-f", cluster, "--pods", work, "--feature-gates", "GenericWorkload=true",
                           "-o", "json", "-q"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  const json j = json::parse(r.out);
  placedHigh = 0;
  for (const auto& pod : j.at("pods")) {
    if (pod.at("name").get<std::string>().starts_with("high") && pod.at("node").is_string()) {
      ++placedHigh;
    }
  }
  return static_cast<int>(j.at("victims").size());
}

TEST_F(SimulateGang, AHigherPriorityGangPreemptsALowerOneWholeWhenItsDisruptionModeIsAll) {
  int placed = 0;
  EXPECT_EQ(preemptGangs("all", placed), 4);
  EXPECT_EQ(placed, 3);
  EXPECT_EQ(preemptGangs("single", placed), 3);
  EXPECT_EQ(placed, 3);
}

// Claims on groups (DRAWorkloadResourceClaims): the example of docs/workload.md, a gang of 4
// whose PodGroup's claim (from a template, named in the PodGroup's status) asks for the
// interconnect of rack b, which only rack b's nodes reach. All four land in rack b with that one
// device; without the gate each pod's entry is its own template claim, which nothing generated.
TEST_F(SimulateGang, AGangSharesItsPodGroupsClaimWhereTheDeviceIs) {
  const std::string dir = std::string(KSCHED_SOURCE_DIR) + "/docs/examples/workload/";
  const std::vector<std::string> base = {
      "-f", dir + "cluster.yaml", "--pods", dir + "shared-device.yaml", "-o", "json", "-q"};
  auto args = [&](const std::string& gates) {
    std::vector<std::string> a = base;
    a.insert(a.end(), {"--feature-gates", gates});
    return a;
  };
  const auto on = simulate(args("GenericWorkload=true,DRAWorkloadResourceClaims=true"));
  ASSERT_EQ(on.exitCode, 0) << on.err;
  const json doc = json::parse(on.out);
  ASSERT_EQ(doc.at("pods").size(), 4u) << on.out;
  for (const auto& pod : doc.at("pods")) {
    ASSERT_TRUE(pod.at("node").is_string()) << pod.dump();
    EXPECT_EQ(pod.at("node").get<std::string>().substr(0, 1), "b") << pod.dump();
    EXPECT_EQ(pod.at("devices"), json::array({"fabric: fabric.example.com/rack-b/fabric-0"}))
        << pod.dump();
  }
  EXPECT_EQ(doc.at("podGroups"), json::parse(R"([{"podGroup": "ml/ring", "pods": 4, "placed": 4,
      "policy": "gang", "minCount": 4, "nodes": ["b1", "b2", "b3"]}])"));

  const auto off = simulate(args("GenericWorkload=true"));
  ASSERT_EQ(off.exitCode, 0) << off.err;
  const json offDoc = json::parse(off.out);  // kept: the loop reads into it
  for (const auto& pod : offDoc.at("pods")) {
    EXPECT_TRUE(pod.at("node").is_null()) << pod.dump();
    EXPECT_THAT(pod.at("reason").get<std::string>(),
                HasSubstr("pod \"ml/" + pod.at("name").get<std::string>() +
                          "\": ResourceClaim not created yet"));
  }
}

// The same with a named claim on the PodGroup (resourceClaimName): the pods' entries equal the
// group's; the one allocation keeps the gang in rack b.
TEST_F(SimulateGang, AGangSharesANamedClaimOfItsPodGroup) {
  const std::string dir = std::string(KSCHED_SOURCE_DIR) + "/docs/examples/workload/";
  std::string work = readFile(dir + "shared-device.yaml");
  // The template's entries become the named claim's.
  for (size_t at;
       (at = work.find("resourceClaimTemplateName: rack-fabric")) != std::string::npos;) {
    work.replace(at, std::string("resourceClaimTemplateName: rack-fabric").size(),
                 "resourceClaimName: ring-fabric-7x2kq");
  }
  const auto r =
      simulate({"-f", dir + "cluster.yaml", "--pods", file("named.yaml", work), "--feature-gates",
                "GenericWorkload=true,DRAWorkloadResourceClaims=true", "-o", "json", "-q"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const json doc = json::parse(r.out);
  ASSERT_EQ(doc.at("pods").size(), 4u) << r.out;
  for (const auto& pod : doc.at("pods")) {
    ASSERT_TRUE(pod.at("node").is_string()) << pod.dump();
    EXPECT_EQ(pod.at("node").get<std::string>().substr(0, 1), "b") << pod.dump();
    EXPECT_EQ(pod.at("devices"), json::array({"fabric: fabric.example.com/rack-b/fabric-0"}));
  }
}

}  // namespace
}  // namespace ksched::testing
