// `ksched simulate` speaking in pod groups (GenericWorkload): --capacity with a PodGroup and its
// pods counts whole gangs and says why the next does not fit; --report shows each group (its
// policy, pods placed, where they went, its message). What is asserted is what an operator
// reads: the counts, the messages, the rows.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "simulate_dir.h"

namespace ksched::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

class SimulateGangCapacity : public SimulateDir {
 protected:
  std::string read(const std::string& path) const {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
};

std::string capNode(const std::string& name, int cpu, const std::string& rack = "") {
  return "apiVersion: v1\nkind: Node\nmetadata:\n  name: " + name +
         "\n  labels:\n    kubernetes.io/hostname: " + name +
         (rack.empty() ? "" : "\n    example.com/rack: " + rack) +
         "\nstatus:\n  allocatable:\n    cpu: \"" + std::to_string(cpu) +
         "\"\n    memory: 16Gi\n    pods: \"110\"\n---\n";
}

// A v1beta1 gang `name` of `n` pods of `cpu` cpus, minCount `minCount`, optionally within one
// domain of `topology`.
std::string capGang(const std::string& name, int minCount, int n, int cpu,
                    const std::string& topology = "") {
  std::string out =
      "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata:\n  name: " + name +
      "\n  namespace: ml\n  uid: " + name +
      "-uid\nspec:\n  schedulingPolicy:\n    gang:\n      minCount: " + std::to_string(minCount) +
      "\n";
  if (!topology.empty()) {
    out += "  schedulingConstraints:\n    topology:\n    - key: " + topology + "\n";
  }
  for (int i = 1; i <= n; ++i) {
    out += "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "-" + std::to_string(i) +
           "\n  namespace: ml\nspec:\n  schedulingGroup:\n" + "    podGroupName: " + name +
           "\n  containers:\n  - name: c\n    image: trainer\n" +
           "    resources:\n      requests:\n        cpu: \"" + std::to_string(cpu) + "\"\n";
  }
  return out;
}

// Five nodes of 4 cpus.
std::string twentyCpus() {
  std::string out;
  for (int i = 1; i <= 5; ++i) out += capNode("n" + std::to_string(i), 4);
  return out;
}

constexpr const char* kThirdGang = "minCount (8) cannot be satisfied: 4 scheduled, 3 remaining";

TEST_F(SimulateGangCapacity, TwoGangsOfEightFitInTwentyCpusAndTheThirdSaysWhyNot) {
  const std::string cluster = file("cluster.yaml", twentyCpus());
  const std::string gang = file("gang.yaml", capGang("train", 8, 8, 1));
  const auto r = simulate({"-f", cluster, "--capacity", gang, "--feature-gates",
                           "GenericWorkload=true", "-o", "json", "-q"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j.at("kind"), "CapacityResult");
  EXPECT_EQ(j.at("podGroup"), "ml/train");
  EXPECT_EQ(j.at("pods"), 8);
  EXPECT_EQ(j.at("policy"), "gang");
  EXPECT_EQ(j.at("minCount"), 8);
  EXPECT_EQ(j.at("fits"), 2);
  const json& next = j.at("next");
  EXPECT_EQ(next.at("podGroup"), "ml/train-3");
  EXPECT_EQ(next.at("reason"), kThirdGang);
  ASSERT_EQ(next.at("pods").size(), 8u);
  int insufficient = 0, group = 0;
  for (const auto& p : next.at("pods")) {
    EXPECT_TRUE(p.at("node").is_null()) << p;
    if (p.at("reason") == "0/5 nodes are available: 5 Insufficient cpu.") ++insufficient;
    if (p.at("reason") == kThirdGang) ++group;
  }
  EXPECT_EQ(insufficient, 1) << r.out;
  EXPECT_EQ(group, 7) << r.out;

  const auto table = simulate(
      {"-f", cluster, "--capacity", gang, "--feature-gates", "GenericWorkload=true", "-q"});
  ASSERT_EQ(table.exitCode, 0) << table.err;
  EXPECT_EQ(table.out,
            "2 more gangs of ml/train (8 pods, gang minCount 8) fit.\n"
            "The next one (ml/train-3) does not: minCount (8) cannot be satisfied: 4 scheduled, 3 "
            "remaining\n"
            "  7 pods: minCount (8) cannot be satisfied: 4 scheduled, 3 remaining\n"
            "  1 pod: 0/5 nodes are available: 5 Insufficient cpu.\n");
}

TEST_F(SimulateGangCapacity, NoPreemptionMeansNoWorkloadAwarePreemptionEither) {
  const std::string cluster = file("cluster.yaml", capNode("n1", 4) + capNode("n2", 3));
  const std::string work = file("gang.yaml", capGang("train", 8, 8, 1));
  const auto r = simulate({"-f", cluster, "--pods", work, "--feature-gates", "GenericWorkload=true",
                           "--no-preemption", "-o", "json", "-q"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const json doc = json::parse(r.out);
  // The group's message as the cycle gave it, without "pod group preemption: ...".
  EXPECT_EQ(doc.at("podGroups").at(0).at("reason"),
            "minCount (8) cannot be satisfied: 7 scheduled, 0 remaining");
  for (const auto& p : doc.at("pods")) {
    EXPECT_THAT(p.at("reason").get<std::string>(), Not(HasSubstr("preemption"))) << p;
  }
}

TEST_F(SimulateGangCapacity, ATopologyGangNamesThePlacementsTried) {
  // Rack a: 8 cpus, rack b: 12. A gang of 4 two-cpu pods in one rack: one in each, and the
  // third finds room for 2 pods in b only.
  const std::string cluster =
      file("cluster.yaml", capNode("a1", 4, "a") + capNode("a2", 4, "a") + capNode("b1", 4, "b") +
                               capNode("b2", 4, "b") + capNode("b3", 4, "b"));
  const std::string gang = file("ring.yaml", capGang("ring", 4, 4, 2, "example.com/rack"));
  const auto r =
      simulate({"-f", cluster, "--capacity", gang, "--feature-gates",
                "GenericWorkload=true,TopologyAwareWorkloadScheduling=true", "-o", "json", "-q"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j.at("fits"), 2);
  const json& next = j.at("next");
  EXPECT_EQ(next.at("topologyKey"), "example.com/rack");
  ASSERT_EQ(next.at("placements").size(), 2u);
  EXPECT_EQ(next.at("placements")[0].at("feasible"), false);
  EXPECT_EQ(next.at("placements")[1].at("feasible"), false);
  EXPECT_THAT(next.at("reason").get<std::string>(),
              HasSubstr("0/2 placements are available, first placement status: minCount (4) "
                        "cannot be satisfied"));
}

TEST_F(SimulateGangCapacity, APodGroupWithoutTheGateOrWithAStrangerIsRefused) {
  const std::string cluster = file("cluster.yaml", twentyCpus());
  const std::string gang = file("gang.yaml", capGang("train", 2, 2, 1));
  auto r = simulate({"-f", cluster, "--capacity", gang, "-q"});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_THAT(r.err, HasSubstr("--capacity of a PodGroup needs --feature-gates "
                               "GenericWorkload=true"));
  const std::string mixed = file(
      "mixed.yaml", capGang("train", 2, 2, 1) +
                        "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: stranger\n"
                        "  namespace: ml\nspec:\n  containers:\n  - name: c\n    image: app\n");
  r = simulate(
      {"-f", cluster, "--capacity", mixed, "--feature-gates", "GenericWorkload=true", "-q"});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_THAT(r.err, HasSubstr("pod ml/stranger is not of PodGroup ml/train"));
}

TEST_F(SimulateGangCapacity, TheReportShowsEachGroupWithWhereItLandedAndWhyNot) {
  // Rack a: 8 cpus, rack b: 12: the ring (4 x 2 cpus, one rack) is placed; the gang of 24
  // one-cpu pods is not.
  const std::string cluster =
      file("cluster.yaml", capNode("a1", 4, "a") + capNode("a2", 4, "a") + capNode("b1", 4, "b") +
                               capNode("b2", 4, "b") + capNode("b3", 4, "b"));
  const std::string work = file("work.yaml", capGang("ring", 4, 4, 2, "example.com/rack") +
                                                 "---\n" + capGang("big", 24, 24, 1));
  const std::string report = dir_ + "/report.html";
  const auto r = simulate({"-f", cluster, "--pods", work, "--feature-gates",
                           "GenericWorkload=true,TopologyAwareWorkloadScheduling=true", "-o",
                           "json", "-q", "--report", report});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const json doc = json::parse(r.out);
  ASSERT_EQ(doc.at("podGroups").size(), 2u) << r.out;
  const json& big = doc["podGroups"][0];
  const json& ring = doc["podGroups"][1];
  EXPECT_EQ(big.at("podGroup"), "ml/big");
  EXPECT_EQ(big.at("placed"), 0);
  EXPECT_THAT(big.at("reason").get<std::string>(), HasSubstr("minCount (24) cannot be satisfied"));
  EXPECT_EQ(ring.at("podGroup"), "ml/ring");
  EXPECT_EQ(ring.at("placed"), 4);
  EXPECT_EQ(ring.at("topologyKey"), "example.com/rack");
  ASSERT_TRUE(ring.at("placement").is_string()) << r.out;
  const std::string rack = ring.at("placement");
  for (const auto& n : ring.at("nodes")) EXPECT_EQ(n.get<std::string>().substr(0, 1), rack);
  EXPECT_FALSE(ring.contains("reason"));

  const std::string html = read(report);
  EXPECT_THAT(html, HasSubstr("<section id=\"section-pod-groups\"><h2>Pod groups</h2>"));
  EXPECT_THAT(html, HasSubstr("1 of 2 pod groups had every pod placed."));
  EXPECT_THAT(html, HasSubstr("<td>ml/ring</td><td>gang, minCount 4</td><td class=\"num\">4</td>"
                              "<td class=\"num\">4</td><td>example.com/rack=" +
                              rack + ": "));
  EXPECT_THAT(html, HasSubstr("<td>ml/big</td><td>gang, minCount 24</td><td class=\"num\">24</td>"
                              "<td class=\"num\">0</td><td>\u2013</td><td>"));
  EXPECT_THAT(html, HasSubstr("minCount (24) cannot be satisfied"));
}

TEST_F(SimulateGangCapacity, AReportWithoutGroupsHasNoGroupSection) {
  const std::string cluster = file("cluster.yaml", twentyCpus());
  const std::string work =
      file("work.yaml",
           "apiVersion: v1\nkind: Pod\nmetadata:\n  name: solo\nspec:\n  containers:\n"
           "  - name: c\n    image: app\n");
  const std::string report = dir_ + "/report.html";
  const auto r = simulate({"-f", cluster, "--pods", work, "-q", "--report", report});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_THAT(read(report), Not(HasSubstr("section-pod-groups")));
}

}  // namespace
}  // namespace ksched::testing
