// Claims on groups (DRAWorkloadResourceClaims) in the Simulator, over the documentation's
// example (docs/examples/workload/shared-device.yaml with cluster.yaml): a gang of 4 sharing
// the interconnect of rack b through its PodGroup. What the cluster holds afterwards: the
// group's claim allocated once and reserved for the PodGroup, not for each pod.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>

#include <ksched/api/decode.h>
#include <ksched/api/resource.h>
#include <ksched/sim.h>

#include "sim/load.h"

namespace ksched::sim {
namespace {

// __FILE__ is relative to the directory the test binary is built in (and runs from under ctest).
std::string example(const std::string& name) {
  std::filesystem::path dir = std::filesystem::path(__FILE__).parent_path();
  if (dir.is_relative()) dir = std::filesystem::read_symlink("/proc/self/exe").parent_path() / dir;
  return (dir / ".." / ".." / ".." / "docs" / "examples" / "workload" / name).string();
}

Simulator gang(bool claimsOnGroups) {
  Cluster c;
  loadFile(example("cluster.yaml"), LoadAs::kCluster, c);
  loadFile(example("shared-device.yaml"), LoadAs::kCluster, c);
  EXPECT_TRUE(c.skipped.empty());
  Options o;
  o.features.force(features::Feature::kGenericWorkload, true);
  o.features.force(features::Feature::kDRAWorkloadResourceClaims, claimsOnGroups);
  return Simulator(std::move(c), o);
}

api::ResourceClaim groupClaim(const Simulator& sim) {
  for (const auto& o : sim.cluster().others.at("resource.k8s.io/v1/ResourceClaim")) {
    if (o->metadata.name == "ring-fabric-7x2kq") return api::decode<api::ResourceClaim>(o->object);
  }
  ADD_FAILURE() << "no claim ring-fabric-7x2kq";
  return {};
}

TEST(GroupClaimsSimulation, TheGangSharesOneAllocationReservedForItsPodGroup) {
  Simulator sim = gang(true);
  const Result r = sim.schedule();
  std::set<std::string> nodes;
  for (const auto& p : r.pods) {
    ASSERT_TRUE(p.node.has_value()) << p.name << ": " << p.reason;
    nodes.insert(*p.node);
    EXPECT_EQ(p.devices, std::vector<std::string>{"fabric: fabric.example.com/rack-b/fabric-0"})
        << p.name;
  }
  EXPECT_EQ(r.pods.size(), 4u);
  for (const auto& n : nodes) EXPECT_EQ(n[0], 'b') << n;  // rack b only

  const api::ResourceClaim claim = groupClaim(sim);
  ASSERT_TRUE(claim.status.allocation.has_value());
  ASSERT_EQ(claim.status.allocation->devices.size(), 1u);
  EXPECT_EQ(claim.status.allocation->devices[0].device, "fabric-0");
  const std::vector<api::ResourceClaimConsumerReference> group = {
      {"scheduling.k8s.io", "podgroups", "ring", "6d1c0a52-ring"}};
  EXPECT_EQ(claim.status.reservedFor, group);
}

// Gate off: each pod's entry is its own template claim, which nothing generated here.
TEST(GroupClaimsSimulation, WithoutTheGateEachPodWaitsForItsOwnClaim) {
  Simulator sim = gang(false);
  const Result r = sim.schedule();
  ASSERT_EQ(r.pods.size(), 4u);
  for (const auto& p : r.pods) {
    EXPECT_FALSE(p.node.has_value()) << p.name;
    EXPECT_NE(p.reason.find("pod \"ml/" + p.name + "\": ResourceClaim not created yet"),
              std::string::npos)
        << p.reason;
  }
  EXPECT_FALSE(groupClaim(sim).status.allocation.has_value());
}

}  // namespace
}  // namespace ksched::sim
