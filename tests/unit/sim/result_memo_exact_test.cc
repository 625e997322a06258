// The node-local plugins' answers kept from cycle to cycle (framework::ResultMemo) must not
// change a placement: each workload is scheduled twice with the same seed, with the memo and
// without it, and every pod must end the same (node, ties, message, diagnosis, attempts). The
// workloads make the memo keep passes, rejections (full nodes, taints, selectors) and scores
// (preferred affinity, PreferNoSchedule taints, images, resources), for several classes of
// pods at once, beside plugins that run every cycle (PodTopologySpread, pods with extended
// resources) and pods nominated by preemption.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <ksched/api/quantity.h>
#include <ksched/sim.h>

#include "framework/result_memo.h"
#include "tests/unit/sim/app_workload.h"

namespace ksched::sim {
namespace {

using api::Quantity;
using fixtures::addReplicaSets;
using fixtures::appPod;
using fixtures::ownedBy;
using fixtures::scheduleWith;
using framework::ResultMemo;

constexpr const char* kZone = "topology.kubernetes.io/zone";

// 240 nodes of four sizes in three zones; every 7th has disk=ssd, every 11th a NoSchedule
// taint, every 5th a PreferNoSchedule one, every 13th the gpu extended resource; every 3rd
// holds the pods' image (ImageLocality scores it), every 4th another.
Cluster makeCluster(int nodes = 240) {
  Cluster cluster;
  for (int i = 0; i < nodes; ++i) {
    auto n = std::make_shared<api::Node>();
    n->metadata.name = "node-" + std::to_string(i);
    n->metadata.uid = "node-uid-" + std::to_string(i);
    n->metadata.labels = {{"kubernetes.io/hostname", n->metadata.name},
                          {kZone, std::string(1, static_cast<char>('a' + i % 3))}};
    if (i % 7 == 0) n->metadata.labels["disk"] = "ssd";
    if (i % 11 == 0) n->spec.taints.push_back({"dedicated", "infra", "NoSchedule", std::nullopt});
    if (i % 5 == 0) n->spec.taints.push_back({"busy", "yes", "PreferNoSchedule", std::nullopt});
    if (i % 3 == 0) n->status.images.push_back({{"registry.example/app:1"}, 600'000'000});
    if (i % 4 == 0) n->status.images.push_back({{"registry.example/other:2"}, 90'000'000});
    const int cpus = 2 << (i % 4);  // 2, 4, 8, 16
    for (auto* list : {&n->status.allocatable, &n->status.capacity}) {
      (*list)["cpu"] = Quantity::fromValue(cpus);
      (*list)["memory"] = Quantity::parse(std::to_string(cpus * 2) + "Gi");
      (*list)["pods"] = Quantity::parse("30");
      if (i % 13 == 0) (*list)["example.com/gpu"] = Quantity::parse("2");
    }
    cluster.nodes.push_back(std::move(n));
  }
  addReplicaSets(cluster, {"web", "api"});
  return cluster;
}

std::shared_ptr<api::Pod> makePod(const std::string& name, const std::string& app,
                                  const std::string& cpu, const std::string& memory) {
  auto p = appPod(name, app, cpu, memory);
  p->spec.containers[0].image = "registry.example/app:1";
  return p;
}

std::vector<std::string> outcomes(Cluster cluster, const std::vector<PodPtr>& work, bool memo,
                                  int64_t* served) {
  ResultMemo::setEnabled(memo);
  const int64_t before = ResultMemo::cyclesServed();
  const Result r = scheduleWith(std::move(cluster), work, 7, 30);
  ResultMemo::setEnabled(true);
  *served = ResultMemo::cyclesServed() - before;
  std::vector<std::string> out;
  for (const PodResult& p : r.pods) {
    std::string line = p.origin + " " + p.namespace_ + "/" + p.name + " -> " +
                       p.node.value_or("<none>") + " ties " + std::to_string(p.ties) +
                       " attempts " + std::to_string(p.attempts) + " " + p.reason + " " +
                       p.diagnosis;
    for (const auto& t : p.tiedWith) line += " " + t;
    out.push_back(std::move(line));
  }
  for (const Victim& v : r.victims) {
    out.push_back("victim " + v.namespace_ + "/" + v.name + " on " + v.node + " of " + v.preemptor);
  }
  return out;
}

// Both runs end every pod the same; the memo served most cycles, and some pods found no node.
std::vector<std::string> expectSameOutcomes(const Cluster& cluster, const std::vector<PodPtr>& work,
                                            bool someUnschedulable = true) {
  int64_t servedWith = 0;
  int64_t servedWithout = 0;
  const std::vector<std::string> with = outcomes(cluster, work, true, &servedWith);
  const std::vector<std::string> without = outcomes(cluster, work, false, &servedWithout);
  EXPECT_GE(with.size(), work.size());
  EXPECT_EQ(with, without);
  EXPECT_EQ(servedWithout, 0);
  EXPECT_GE(servedWith * 2, static_cast<int64_t>(work.size())) << "the memo served few cycles";
  if (someUnschedulable) {
    EXPECT_TRUE(std::ranges::any_of(with, [](const std::string& s) {
      return s.find("<none>") != std::string::npos;
    })) << "the workload should fill the cluster";
  }
  return with;
}

TEST(ResultMemoExact, ReplicaSetsUntilTheClusterIsFull) {
  std::vector<PodPtr> work;
  // Default spreading (PodTopologySpread runs every cycle), nodes filling up: the kept
  // rejections are NodeResourcesFit's, TaintToleration's and NodeAffinity's.
  for (int i = 0; i < 1500; ++i) {
    const std::string app = i % 4 == 3 ? "api" : "web";
    auto p = makePod("w-" + std::to_string(i), app, app == "web" ? "1" : "2", "1Gi");
    ownedBy(*p, app);
    if (i % 9 == 0) p->spec.nodeSelector = {{"disk", "ssd"}};
    if (i % 13 == 0) {
      p->spec.tolerations.push_back({"dedicated", "Equal", "infra", "NoSchedule", {}});
    }
    work.push_back(std::move(p));
  }
  expectSameOutcomes(makeCluster(), work);
}

TEST(ResultMemoExact, MixedShapesWithPreferencesPortsAndExtendedResources) {
  std::vector<PodPtr> work;
  const char* cpus[] = {"100m", "250m", "500m", "1"};
  const char* mems[] = {"128Mi", "256Mi", "512Mi", "1Gi"};
  for (int i = 0; i < 1200; ++i) {
    auto p = makePod("m-" + std::to_string(i), "solo", cpus[i % 4], mems[(i / 4) % 4]);
    if (i % 16 == 5) {
      api::Affinity affinity;
      affinity.nodeAffinity = api::NodeAffinity{};
      api::PreferredSchedulingTerm term;
      term.weight = 30;
      term.preference.matchExpressions.push_back({"disk", api::SelectorOperator::kIn, {"ssd"}});
      affinity.nodeAffinity->preferredDuringSchedulingIgnoredDuringExecution.push_back(term);
      p->spec.affinity = affinity;
    }
    if (i % 16 == 9) {
      p->spec.tolerations.push_back({"busy", "Exists", "", "PreferNoSchedule", {}});
    }
    if (i % 23 == 0) {
      api::ContainerPort port;
      port.containerPort = 8080;
      port.hostPort = 8080;
      p->spec.containers[0].ports.push_back(port);
    }
    if (i % 29 == 0) {  // not kept: NodeResourcesFit runs for it every cycle
      p->spec.containers[0].resources.requests["example.com/gpu"] = Quantity::parse("1");
      p->spec.containers[0].resources.limits["example.com/gpu"] = Quantity::parse("1");
    }
    work.push_back(std::move(p));
  }
  expectSameOutcomes(makeCluster(), work);
}

TEST(ResultMemoExact, PreemptionNominatesPods) {
  Cluster cluster = makeCluster(60);
  // Low-priority pods fill every node; high-priority ones preempt them, and while a preemptor
  // waits for its node, the victims (back as pending copies) and more low-priority pods are
  // placed: the nominated pods' nodes run every Filter plugin. Both are ReplicaSets' pods
  // (default spreading), so that batching does not serve them.
  for (int i = 0; i < 60; ++i) {
    const int slots = (2 << (i % 4)) * 2;  // 500m each
    for (int k = 0; k < slots; ++k) {
      auto p =
          makePod("old-" + std::to_string(i) + "-" + std::to_string(k), "web", "500m", "512Mi");
      ownedBy(*p, "web");
      p->spec.priority = 0;
      p->spec.nodeName = "node-" + std::to_string(i);
      cluster.pods.push_back(std::move(p));
    }
  }
  std::vector<PodPtr> work;
  for (int i = 0; i < 200; ++i) {
    if (i % 5 == 0) {
      auto p = makePod("high-" + std::to_string(i), "api", "3", "1Gi");
      ownedBy(*p, "api");
      p->spec.priority = 1000;
      work.push_back(std::move(p));
    }
    auto p = makePod("low-" + std::to_string(i), "web", "500m", "512Mi");
    ownedBy(*p, "web");
    p->spec.priority = 0;
    work.push_back(std::move(p));
  }
  const std::vector<std::string> with = expectSameOutcomes(cluster, work);
  EXPECT_TRUE(std::ranges::any_of(with, [](const std::string& s) {
    return s.starts_with("victim ") && s.ends_with(" of default/high-0");
  })) << "high-0 should have preempted";
}

// Kept raw scores are 32 bits wide: a raw score beyond them (preferred terms of huge weights;
// NodeAffinity sums them in 64 bits, and its NormalizeScore scales them to 0-100) is not kept,
// and the node is scored again in every cycle.
TEST(ResultMemoExact, RawScoresBeyondThirtyTwoBitsAreScoredAgain) {
  std::vector<PodPtr> work;
  for (int i = 0; i < 600; ++i) {
    auto p = makePod("h-" + std::to_string(i), "solo", i % 2 == 0 ? "250m" : "500m", "256Mi");
    api::Affinity affinity;
    affinity.nodeAffinity = api::NodeAffinity{};
    for (const auto& [key, value] : {std::pair{"disk", "ssd"}, std::pair{kZone, "a"}}) {
      api::PreferredSchedulingTerm term;
      term.weight = 2'000'000'000;  // both: 4e9 on an ssd node of zone a
      term.preference.matchExpressions.push_back({key, api::SelectorOperator::kIn, {value}});
      affinity.nodeAffinity->preferredDuringSchedulingIgnoredDuringExecution.push_back(term);
    }
    p->spec.affinity = affinity;
    work.push_back(std::move(p));
  }
  const std::vector<std::string> with = expectSameOutcomes(makeCluster(), work, false);
  // The first pods go to the ssd nodes of zone a (0, 21, 42...: i % 7 == 0 and i % 3 == 0).
  EXPECT_TRUE(with[0].find(" -> node-") != std::string::npos) << with[0];
  for (size_t k = 0; k < 3; ++k) {
    const auto at = with[k].find(" -> node-") + 9;
    const int n = std::stoi(with[k].substr(at));
    EXPECT_EQ(n % 21, 0) << with[k];
  }
}

}  // namespace
}  // namespace ksched::sim
