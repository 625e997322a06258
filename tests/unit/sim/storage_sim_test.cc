// The Simulator's in-memory PV controller and provisioner (sim/volume_controller.h): what one
// call provisions and binds, and the capacity it uses up, is where the next call starts.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <ksched/sim.h>

#include "sim/load.h"

namespace ksched::sim {
namespace {

// The repository's docs/examples/storage/<name>; __FILE__ is relative to the directory the test
// binary is built in.
std::string example(const std::string& name) {
  std::filesystem::path dir = std::filesystem::path(__FILE__).parent_path();
  if (dir.is_relative()) dir = std::filesystem::read_symlink("/proc/self/exe").parent_path() / dir;
  return (dir / "../../../docs/examples/storage" / name).lexically_normal().string();
}

std::map<std::string, std::string> placed(const Result& r) {
  std::map<std::string, std::string> out;
  for (const auto& p : r.pods) out[p.name] = p.node.value_or("");
  return out;
}

TEST(SimulatorStorageTest, TheNextCallStartsFromTheStorageTheLastOneLeft) {
  Cluster c;
  loadFile(example("capacity.yaml"), LoadAs::kCluster, c);
  checkCluster(c);
  ASSERT_TRUE(c.skipped.empty()) << c.skipped[0].message;
  // db-0 and db-1 now, db-2 and db-3 in a second call; db-4 and db-5 not at all.
  std::vector<PodPtr> later;
  std::erase_if(c.pods, [&](const PodPtr& p) {
    const std::string& n = p->metadata.name;
    if (n == "db-0" || n == "db-1") return false;
    if (n == "db-2" || n == "db-3") later.push_back(p);
    return true;
  });
  ASSERT_EQ(later.size(), 2u);
  Simulator sim(c);
  EXPECT_EQ(placed(sim.schedule()),
            (std::map<std::string, std::string>{{"db-0", "node-a"}, {"db-1", "node-a"}}));

  // Two 30Gi volumes provisioned on node-a: its capacity is 40Gi now, and the claims are bound.
  std::map<std::string, int64_t> capacity;
  for (const auto& cap : sim.cluster().csiStorageCapacities) {
    capacity[cap.metadata.name] = cap.capacity ? cap.capacity->value() >> 30 : -1;
  }
  EXPECT_EQ(capacity, (std::map<std::string, int64_t>{
                          {"lvm-node-a", 40}, {"lvm-node-b", 60}, {"lvm-node-c", 500}}));
  std::map<std::string, std::string> volumeOf;
  for (const auto& pvc : sim.cluster().persistentVolumeClaims) {
    volumeOf[pvc.metadata.name] = pvc.spec.volumeName;
  }
  EXPECT_EQ(volumeOf["data-db-0"], "pvc-data-db-0-uid");
  EXPECT_EQ(volumeOf["data-db-2"], "");
  bool provisioned = false;
  for (const auto& pv : sim.cluster().persistentVolumes) {
    if (pv.metadata.name != "pvc-data-db-1-uid") continue;
    provisioned = true;
    EXPECT_EQ(pv.status.phase, "Bound");
    ASSERT_TRUE(pv.spec.claimRef.has_value());
    EXPECT_EQ(pv.spec.claimRef->name, "data-db-1");
    ASSERT_TRUE(pv.spec.csi.has_value());
    EXPECT_EQ(pv.spec.csi->driver, "lvm.csi.example.com");
  }
  EXPECT_TRUE(provisioned);

  // As in one run: node-b (60Gi free) beats node-a (40Gi), then node-a (40Gi) beats node-b
  // (30Gi). Had the second call started from the files, node-a's 100Gi would win both.
  EXPECT_EQ(placed(sim.schedule(later)),
            (std::map<std::string, std::string>{{"db-2", "node-b"}, {"db-3", "node-a"}}));
}

}  // namespace
}  // namespace ksched::sim
