// Composite pod groups (CompositePodGroup gate, KEP-6012) through `ksched simulate -f`: a tree of
// groups placed in one cycle, with objects shaped as a 1.37 apiserver serves them. Asserted:
// which pods got a node (and in which rack), each pod's reason.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "simulate_dir.h"

namespace ksched::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

const char* const kGates =
    "GenericWorkload=true,CompositePodGroup=true,TopologyAwareWorkloadScheduling=true";

std::string rackNode(const std::string& name, const std::string& rack, const std::string& cpu) {
  return "apiVersion: v1\nkind: Node\nmetadata:\n  name: " + name +
         "\n  labels:\n    kubernetes.io/hostname: " + name + "\n    example.com/rack: " + rack +
         "\nstatus:\n  allocatable:\n    cpu: \"" + cpu +
         "\"\n    memory: 16Gi\n    pods: \"110\"\n";
}

// A CompositePodGroup (v1alpha3) needing `minGroupCount` of its children; `topology`: the label
// all of its pods must share.
std::string composite(const std::string& name, int minGroupCount, const std::string& topology = "",
                      const std::string& parent = "") {
  std::string out =
      "apiVersion: scheduling.k8s.io/v1alpha3\nkind: CompositePodGroup\nmetadata:\n"
      "  name: " +
      name + "\n  namespace: ml\n  uid: " + name +
      "-uid\nspec:\n  workloadRef:\n    workloadName: job\n    templateName: " + name +
      "\n  schedulingPolicy:\n    gang:\n      minGroupCount: " + std::to_string(minGroupCount) +
      "\n";
  if (!parent.empty()) out += "  parentCompositePodGroupName: " + parent + "\n";
  if (!topology.empty())
    out += "  schedulingConstraints:\n    topology:\n    - key: " + topology + "\n";
  return out;
}

// A gang PodGroup of `n` pods of `cpu` under `parent`, with its pods.
std::string leaf(const std::string& name, int minCount, const std::string& parent, int n,
                 const std::string& cpu = "1") {
  std::string out =
      "---\napiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata:\n"
      "  name: " +
      name + "\n  namespace: ml\n  uid: " + name +
      "-uid\nspec:\n  parentCompositePodGroupName: " + parent +
      "\n  schedulingPolicy:\n    gang:\n      minCount: " + std::to_string(minCount) + "\n";
  for (int i = 1; i <= n; ++i) {
    out += "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "-" + std::to_string(i) +
           "\n  namespace: ml\nspec:\n  schedulingGroup:\n    podGroupName: " + name +
           "\n  containers:\n  - name: c\n    image: trainer\n    resources:\n      requests:\n"
           "        cpu: \"" +
           cpu + "\"\n";
  }
  return out;
}

// pod name -> node ("" when not placed) and pod name -> reason.
struct Outcome {
  std::map<std::string, std::string> node, reason;
  [[nodiscard]] int placed() const {
    int n = 0;
    for (const auto& [pod, where] : node) n += where.empty() ? 0 : 1;
    return n;
  }
};

Outcome outcomeOf(const std::string& out) {
  Outcome o;
  const json doc = json::parse(out);
  for (const auto& pod : doc.at("pods")) {
    const std::string name = pod.at("name");
    o.node[name] = pod.at("node").is_string() ? pod.at("node").get<std::string>() : "";
    if (pod.contains("reason") && pod.at("reason").is_string()) o.reason[name] = pod.at("reason");
  }
  return o;
}

class SimulateComposite : public SimulateDir {
 protected:
  // `work` placed on `cluster` with the gates on; `out` keeps the JSON for the messages.
  Outcome place(const std::string& cluster, const std::string& work) {
    const auto r =
        simulate({"-f", cluster, "--pods", work, "--feature-gates", kGates, "-o", "json", "-q"});
    EXPECT_EQ(r.exitCode, 0) << r.err;
    out = r.out;
    return r.exitCode == 0 ? outcomeOf(r.out) : Outcome{};
  }
  std::string out;
};

TEST_F(SimulateComposite, TwoOfThreeChildGroupsPlacedWhenTheRootNeedsTwo) {
  // Room for 5 pods of 1 cpu: two gangs of 2 fit, the third's second pod does not.
  const std::string cluster = file("cluster.yaml", rackNode("n1", "a", "5"));
  const std::string work = file("job.yaml", composite("job", 2) + leaf("g1", 2, "job", 2) +
                                                leaf("g2", 2, "job", 2) + leaf("g3", 2, "job", 2));
  const Outcome o = place(cluster, work);
  EXPECT_EQ(o.placed(), 4) << out;
  EXPECT_NE(o.node.at("g1-1"), "");
  EXPECT_NE(o.node.at("g2-2"), "");
  EXPECT_EQ(o.node.at("g3-1"), "");
  EXPECT_EQ(o.node.at("g3-2"), "");
  // g3 failed on its own: one pod fitted and waited for the other, which did not fit.
  EXPECT_THAT(o.reason.at("g3-1"),
              HasSubstr("minCount (2) cannot be satisfied: 1 scheduled, 0 remaining"))
      << out;
  EXPECT_THAT(o.reason.at("g3-2"), HasSubstr("0/1 nodes are available: 1 Insufficient cpu."))
      << out;
}

TEST_F(SimulateComposite, NothingIsPlacedWhenTheRootsQuorumCannotBeMet) {
  const std::string cluster = file("cluster.yaml", rackNode("n1", "a", "5"));
  const std::string work = file("job.yaml", composite("job", 3) + leaf("g1", 2, "job", 2) +
                                                leaf("g2", 2, "job", 2) + leaf("g3", 2, "job", 2));
  const Outcome o = place(cluster, work);
  EXPECT_EQ(o.placed(), 0) << out;
  // The groups that fitted carry the root's verdict.
  EXPECT_THAT(o.reason.at("g1-1"),
              HasSubstr("0/1 placements are available, first placement status: minCount (3) "
                        "cannot be satisfied: 2 scheduled, 0 remaining"))
      << out;
  EXPECT_THAT(o.reason.at("g2-2"), HasSubstr("minCount (3) cannot be satisfied")) << out;
}

TEST_F(SimulateComposite, ATreeWithATopologyConstraintLandsInOneRack) {
  // Rack a: one node of 4 cpus; rack b: two of 3. Two gangs of 2 one-cpu pods: spread by
  // LeastAllocated without the constraint, in one rack with it.
  const std::string cluster =
      file("cluster.yaml", rackNode("a1", "a", "4") + "---\n" + rackNode("b1", "b", "3") + "---\n" +
                               rackNode("b2", "b", "3"));
  const std::string work = file("job.yaml", composite("job", 2, "example.com/rack") +
                                                leaf("g1", 2, "job", 2) + leaf("g2", 2, "job", 2));
  const Outcome o = place(cluster, work);
  EXPECT_EQ(o.placed(), 4) << out;
  std::set<char> racks;
  for (const auto& [pod, node] : o.node) racks.insert(node.at(0));
  EXPECT_EQ(racks.size(), 1u) << out;

  // Without the constraint the same pods use both racks.
  const std::string loose =
      file("loose.yaml", composite("job", 2) + leaf("g1", 2, "job", 2) + leaf("g2", 2, "job", 2));
  std::set<char> spread;
  for (const auto& [pod, node] : place(cluster, loose).node) spread.insert(node.at(0));
  EXPECT_EQ(spread.size(), 2u) << out;
}

TEST_F(SimulateComposite, ACompositeGroupWaitsForItsQuorum) {
  // The root needs 2 ready children; only g1 has its minCount of pods.
  const std::string cluster = file("cluster.yaml", rackNode("n1", "a", "16"));
  const std::string work =
      file("job.yaml", composite("job", 2) + leaf("g1", 2, "job", 2) + leaf("g2", 3, "job", 1));
  const Outcome o = place(cluster, work);
  EXPECT_EQ(o.placed(), 0) << out;
  EXPECT_EQ(o.reason.at("g1-1"),
            "not attempted: held at PreEnqueue by GangScheduling: waiting for composite pod group "
            "\"job\" tree to meet quorum")
      << out;
}

TEST_F(SimulateComposite, NestedCompositeGroupsArePlacedAsOneTree) {
  // job (needs 2) -> {left (needs 1) -> g1, right (needs 1) -> g2}.
  const std::string cluster = file("cluster.yaml", rackNode("n1", "a", "8"));
  const std::string work =
      file("job.yaml", composite("job", 2) + "---\n" + composite("left", 1, "", "job") + "---\n" +
                           composite("right", 1, "", "job") + leaf("g1", 2, "left", 2) +
                           leaf("g2", 2, "right", 2));
  EXPECT_EQ(place(cluster, work).placed(), 4) << out;
}

}  // namespace
}  // namespace ksched::testing
