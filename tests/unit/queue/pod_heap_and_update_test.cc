#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "queue/pod_heap.h"
#include "queue/pod_update.h"

namespace ksched::queue {
namespace {

TEST(QueueHeapTest, MatchesASortedReferenceUnderPushEraseFix) {
  std::vector<std::unique_ptr<detail::Entry>> entries;
  std::vector<int> keys;
  for (int i = 0; i < 200; ++i) {
    auto e = std::make_unique<detail::Entry>();
    e->info = std::make_unique<QueuedPodInfo>();
    e->info->attempts = i;
    entries.push_back(std::move(e));
  }
  auto key = [](const detail::Entry& e) { return e.info->attempts; };
  detail::EntryHeap heap(
      [&](const detail::Entry& a, const detail::Entry& b) { return key(a) < key(b); });
  std::mt19937 rng(42);
  std::shuffle(entries.begin(), entries.end(), rng);
  for (auto& e : entries) heap.push(e.get());
  std::vector<detail::Entry*> live;
  for (auto& e : entries) live.push_back(e.get());
  // Erase a third, re-key a third.
  for (size_t i = 0; i < live.size(); i += 3) heap.erase(live[i]);
  for (size_t i = 1; i < live.size(); i += 3) {
    live[i]->info->attempts = static_cast<int>(rng() % 1000) - 500;
    heap.fix(live[i]);
  }
  std::vector<int> want;
  for (size_t i = 0; i < live.size(); ++i) {
    if (i % 3 != 0) want.push_back(key(*live[i]));
  }
  std::sort(want.begin(), want.end());
  std::vector<int> got;
  while (!heap.empty()) got.push_back(key(*heap.pop()));
  EXPECT_EQ(got, want);
}

TEST(QueuePodUpdateTest, OnlySchedulingRelevantChangesCount) {
  api::Pod base;
  base.metadata.name = "p";
  base.metadata.uid = "u";
  base.metadata.resourceVersion = "1";
  base.spec.schedulingGates = {"gate"};
  base.spec.containers.push_back({.name = "c"});
  const struct {
    const char* name;
    void (*mutate)(api::Pod&);
    bool want;
  } cases[] = {
      {"nothing", [](api::Pod&) {}, false},
      {"resourceVersion and generation",
       [](api::Pod& p) {
         p.metadata.resourceVersion = "2";
         p.metadata.generation = 3;
       },
       false},
      {"status",
       [](api::Pod& p) {
         p.status.nominatedNodeName = "n";
         p.status.conditions.push_back({.type = "PodScheduled", .status = "False"});
       },
       false},
      {"label", [](api::Pod& p) { p.metadata.labels["a"] = "b"; }, true},
      {"annotation", [](api::Pod& p) { p.metadata.annotations["a"] = "b"; }, true},
      {"gates removed", [](api::Pod& p) { p.spec.schedulingGates.clear(); }, true},
      {"toleration", [](api::Pod& p) { p.spec.tolerations.push_back({.key = "k"}); }, true},
      {"container request",
       [](api::Pod& p) { p.spec.containers[0].resources.requests["cpu"] = api::Quantity(); }, true},
      {"container port",
       [](api::Pod& p) { p.spec.containers[0].ports.push_back({.hostPort = 80}); }, true},
      {"node affinity",
       [](api::Pod& p) { p.spec.affinity = api::Affinity{.nodeAffinity = api::NodeAffinity{}}; },
       true},
      {"pod affinity term",
       [](api::Pod& p) {
         api::PodAffinity pa;
         pa.requiredDuringSchedulingIgnoredDuringExecution.push_back({.topologyKey = "zone"});
         p.spec.affinity = api::Affinity{.podAffinity = pa};
       },
       true},
      {"volume", [](api::Pod& p) { p.spec.volumes.push_back({.name = "v", .ephemeral = true}); },
       true},
      {"deletion", [](api::Pod& p) { p.metadata.deletionTimestamp = "2024-01-01T00:00:00Z"; },
       true},
      {"pod-level requests",
       [](api::Pod& p) { p.spec.resources.emplace().requests["cpu"] = api::Quantity::parse("1"); },
       true},
      {"resize status",
       [](api::Pod& p) {
         p.status.containerStatuses.push_back(
             {.name = "c", .allocatedResources = {{"cpu", api::Quantity::parse("1")}}});
       },
       false},
      {"restart rule",
       [](api::Pod& p) {
         p.spec.containers[0].restartPolicyRules.push_back({.action = "RestartAllContainers"});
       },
       true},
      {"bind mount option",
       [](api::Pod& p) {
         p.spec.containers[0].volumeMounts.push_back({.name = "v", .bindMountOptions = {"noexec"}});
       },
       true},
      {"host network", [](api::Pod& p) { p.spec.hostNetwork = true; }, true},
      {"host users", [](api::Pod& p) { p.spec.hostUsers = false; }, true},
      {"ephemeral container",
       [](api::Pod& p) { p.spec.ephemeralContainers.push_back({.name = "debug"}); }, true},
      {"resource claim",
       [](api::Pod& p) {
         p.spec.resourceClaims.push_back({.name = "gpu", .resourceClaimName = "gpu-claim"});
       },
       true},
      {"container resource claim",
       [](api::Pod& p) { p.spec.containers[0].resources.claims.push_back({.name = "gpu"}); },
       true},
      {"resource claim status",
       [](api::Pod& p) {
         p.status.resourceClaimStatuses.push_back({.name = "gpu", .resourceClaimName = "g-1"});
       },
       false},
  };
  for (const auto& c : cases) {
    api::Pod changed = base;
    c.mutate(changed);
    EXPECT_EQ(isPodUpdated(base, changed), c.want) << c.name;
  }
}

TEST(QueuePodUpdateTest, ResizeStatusChanges) {
  api::Pod base;
  base.spec.containers.push_back({.name = "c"});
  base.status.containerStatuses.push_back(
      {.name = "c", .allocatedResources = {{"cpu", api::Quantity::parse("2")}}});
  const struct {
    const char* name;
    void (*mutate)(api::Pod&);
    bool want;
  } cases[] = {
      {"nothing", [](api::Pod&) {}, false},
      {"phase and other conditions",
       [](api::Pod& p) {
         p.status.phase = "Running";
         p.status.conditions.push_back({.type = "Ready", .status = "True"});
       },
       false},
      {"allocated",
       [](api::Pod& p) {
         p.status.containerStatuses[0].allocatedResources["cpu"] = api::Quantity::parse("1");
       },
       true},
      {"actual",
       [](api::Pod& p) {
         p.status.containerStatuses[0].resources.emplace().requests["cpu"] =
             api::Quantity::parse("1");
       },
       true},
      {"init container status",
       [](api::Pod& p) { p.status.initContainerStatuses.push_back({.name = "i"}); }, true},
      {"pod-level allocated",
       [](api::Pod& p) { p.status.allocatedResources["cpu"] = api::Quantity::parse("1"); }, true},
      {"pod-level actual", [](api::Pod& p) { p.status.resources.emplace(); }, true},
      {"resize infeasible",
       [](api::Pod& p) {
         p.status.conditions.push_back(
             {.type = "PodResizePending", .status = "True", .reason = "Infeasible"});
       },
       true},
  };
  for (const auto& c : cases) {
    api::Pod changed = base;
    c.mutate(changed);
    EXPECT_EQ(podResizeStatusChanged(base, changed), c.want) << c.name;
  }
}

}  // namespace
}  // namespace ksched::queue
