// PodTopologySpread keeps PreScore's per-node counts from cycle to cycle (spread::ScoreCounts).
// The simulator's placements must not depend on it: each workload is scheduled twice with the
// same seed, with the kept counts and with PreScore walking every node in every cycle, and the
// two runs must place every pod on the same node.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <ksched/api/quantity.h>
#include <ksched/sim.h>

#include "plugins/pod_topology_spread/pod_topology_spread.h"
#include "tests/unit/sim/app_workload.h"

namespace ksched::sim {
namespace {

using api::Quantity;
using fixtures::addReplicaSets;
using fixtures::appPod;
using fixtures::ownedBy;
using fixtures::scheduleWith;
using plugins::PodTopologySpread;

constexpr const char* kZone = "topology.kubernetes.io/zone";

// 300 nodes: zones a, b, c, and every 25th node without a zone label; every 7th has disk=ssd,
// every 11th a NoSchedule taint. Percentage 20: 100 feasible nodes per cycle, so PreScore counts
// only the domains that hold one of them.
Cluster makeCluster() {
  Cluster cluster;
  for (int i = 0; i < 300; ++i) {
    auto n = std::make_shared<api::Node>();
    n->metadata.name = "node-" + std::to_string(i);
    n->metadata.uid = "node-uid-" + std::to_string(i);
    n->metadata.labels = {{"kubernetes.io/hostname", n->metadata.name}};
    if (i % 25 != 0) n->metadata.labels[kZone] = std::string(1, static_cast<char>('a' + i % 3));
    if (i % 7 == 0) n->metadata.labels["disk"] = "ssd";
    if (i % 11 == 0) n->spec.taints.push_back({"dedicated", "infra", "NoSchedule", std::nullopt});
    for (auto* list : {&n->status.allocatable, &n->status.capacity}) {
      (*list)["cpu"] = Quantity::parse("4");
      (*list)["memory"] = Quantity::parse("16Gi");
      (*list)["pods"] = Quantity::parse("20");
    }
    cluster.nodes.push_back(std::move(n));
  }
  addReplicaSets(cluster, {"web", "api"});
  return cluster;
}

std::shared_ptr<api::Pod> makePod(const std::string& name, const std::string& app,
                                  const std::string& ns = "default") {
  return appPod(name, app, "100m", "128Mi", ns);
}

// Bound pods of the same and of other apps, some in another namespace.
void addExisting(Cluster& cluster) {
  for (int i = 0; i < 120; ++i) {
    const std::string app = i % 3 == 0 ? "web" : (i % 3 == 1 ? "api" : "db");
    auto p = makePod("old-" + std::to_string(i), app, i % 5 == 0 ? "other" : "default");
    if (app != "db") ownedBy(*p, app);
    p->spec.nodeName = "node-" + std::to_string((i * 37) % 300);
    cluster.pods.push_back(std::move(p));
  }
}

api::TopologySpreadConstraint constraint(const std::string& key, const std::string& when,
                                         int32_t maxSkew, const std::string& app) {
  api::TopologySpreadConstraint c;
  c.topologyKey = key;
  c.whenUnsatisfiable = when;
  c.maxSkew = maxSkew;
  c.labelSelector = api::LabelSelector{};
  c.labelSelector->matchLabels = {{"app", app}};
  return c;
}

std::vector<std::string> placements(Cluster cluster, const std::vector<PodPtr>& work,
                                    bool keepCounts) {
  PodTopologySpread::setCountCacheEnabledForTest(keepCounts);
  const Result r = scheduleWith(std::move(cluster), work, 11, 20);
  PodTopologySpread::setCountCacheEnabledForTest(true);
  // Most pods placed: the runs exercised the counts, not only failures.
  EXPECT_GE(r.scheduled * 4, work.size() * 3);
  std::vector<std::string> out;
  for (const PodResult& p : r.pods) {
    out.push_back(p.namespace_ + "/" + p.name + " -> " + p.node.value_or("<none>"));
  }
  return out;
}

void expectSamePlacements(const Cluster& cluster, const std::vector<PodPtr>& work) {
  const std::vector<std::string> kept = placements(cluster, work, true);
  const std::vector<std::string> walked = placements(cluster, work, false);
  ASSERT_EQ(kept.size(), work.size());
  EXPECT_EQ(kept, walked);
}

TEST(SpreadCountsExact, ReplicaSetsWithDefaultSpreading) {
  Cluster cluster = makeCluster();
  addExisting(cluster);
  std::vector<PodPtr> work;
  for (int i = 0; i < 400; ++i) {
    const std::string app = i % 4 == 3 ? "api" : "web";
    auto p = makePod("w-" + std::to_string(i), app);
    ownedBy(*p, app);
    if (i % 9 == 0) p->spec.nodeSelector = {{"disk", "ssd"}};
    if (i % 13 == 0)
      p->spec.tolerations.push_back({"dedicated", "Equal", "infra", "NoSchedule", {}});
    work.push_back(std::move(p));
  }
  expectSamePlacements(cluster, work);
}

TEST(SpreadCountsExact, OwnConstraintsWithPolicies) {
  Cluster cluster = makeCluster();
  addExisting(cluster);
  std::vector<PodPtr> work;
  // Runs of pods with the same constraints and policies (kept counts reused), with every 7th
  // pod different in between (several sets of counts kept at once).
  for (int i = 0; i < 300; ++i) {
    auto p = makePod("s-" + std::to_string(i), (i / 15) % 2 == 0 ? "web" : "api");
    const std::string app = p->metadata.labels["app"];
    auto zone = constraint(kZone, "DoNotSchedule", 2, app);
    auto host = constraint("kubernetes.io/hostname", "ScheduleAnyway", 1, "web");
    auto zoneSoft = constraint(kZone, "ScheduleAnyway", 1, app);
    if ((i / 30) % 3 == 0) {
      p->spec.nodeSelector = {{"disk", "ssd"}};
      zoneSoft.nodeAffinityPolicy = "Ignore";
    }
    if ((i / 45) % 2 == 0) {
      host.nodeTaintsPolicy = "Honor";
      p->spec.tolerations.push_back({"dedicated", "Exists", "", "", {}});
    }
    if (i % 7 == 0) host.matchLabelKeys = {"app"};
    p->spec.topologySpreadConstraints = {zone, host, zoneSoft};
    work.push_back(std::move(p));
  }
  expectSamePlacements(cluster, work);
}

TEST(SpreadCountsExact, StandalonePods) {
  Cluster cluster = makeCluster();
  addExisting(cluster);
  std::vector<PodPtr> work;
  for (int i = 0; i < 200; ++i) work.push_back(makePod("p-" + std::to_string(i), "solo"));
  expectSamePlacements(cluster, work);
}

}  // namespace
}  // namespace ksched::sim
