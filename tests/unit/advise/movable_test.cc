// Which pods a plan may move (advise/movable.h): the descheduler's DefaultEvictor conventions,
// cluster-autoscaler's safe-to-evict annotation and PodDisruptionBudgets, one row each.
#include "advise/movable.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include <ksched/testing/fakes.h>

namespace ksched::advise {
namespace {

using ksched::testing::PodWrapper;

// A pod of ReplicaSet web-rs, labelled app=web, bound to n1: movable by default.
api::Pod replicaPod() {
  return PodWrapper("web-1")
      .label("app", "web")
      .ownerReference("ReplicaSet", "web-rs", "rs-uid")
      .nodeName("n1")
      .req({{"cpu", "100m"}})
      .obj();
}

api::Volume volume(const std::string& name, bool emptyDir, bool hostPath) {
  api::Volume v;
  v.name = name;
  v.emptyDir = emptyDir;
  v.hostPath = hostPath;
  return v;
}

api::PodDisruptionBudget budget(const std::string& name, int32_t allowed,
                                bool nilSelector = false) {
  api::PodDisruptionBudget b;
  b.metadata.name = name;
  b.metadata.namespace_ = "default";
  if (!nilSelector) b.spec.selector = api::LabelSelector{{{"app", "web"}}, {}};
  b.status.disruptionsAllowed = allowed;
  return b;
}

struct Row {
  std::string name;
  std::function<void(api::Pod&)> change;
  EvictionPolicy policy;
  std::vector<api::PodDisruptionBudget> budgets;
  Disposition want;
  std::string reason;  // expected exactly
};

TEST(AdviseMovable, FollowsTheEvictionConventions) {
  const auto annotate = [](const char* k, const char* v) {
    return [k, v](api::Pod& p) { p.metadata.annotations[k] = v; };
  };
  const auto bare = [](api::Pod& p) { p.metadata.ownerReferences.clear(); };
  const auto critical = [](api::Pod& p) { p.spec.priority = 2000001000; };
  const auto cache = [](api::Pod& p) { p.spec.volumes.push_back(volume("cache", true, false)); };
  const std::vector<Row> rows = {
      {"a ReplicaSet's pod moves", nullptr, {}, {}, Disposition::kMoves, ""},
      {"a mirror pod stays with its node",
       annotate("kubernetes.io/config.mirror", "abc"),
       {},
       {},
       Disposition::kStays,
       "static pod (kubelet-managed)"},
      {"a static pod read from a file stays",
       annotate("kubernetes.io/config.source", "file"),
       {},
       {},
       Disposition::kStays,
       "static pod (kubelet-managed)"},
      {"config.source api is an ordinary pod",
       annotate("kubernetes.io/config.source", "api"),
       {},
       {},
       Disposition::kMoves,
       ""},
      {"a DaemonSet's pod stays",
       [](api::Pod& p) {
         p.metadata.ownerReferences = {{"apps/v1", "DaemonSet", "ds", "u", true}};
       },
       {},
       {},
       Disposition::kStays,
       "DaemonSet pod"},
      {"a terminating pod stays",
       [](api::Pod& p) { p.metadata.deletionTimestamp = "2026-11-30T00:00:00Z"; },
       {},
       {},
       Disposition::kStays,
       "terminating"},
      {"safe-to-evict=false keeps it",
       annotate(kSafeToEvictAnnotation, "false"),
       {},
       {},
       Disposition::kBlocks,
       "annotation cluster-autoscaler.kubernetes.io/safe-to-evict=false"},
      {"a bare pod keeps it",
       bare,
       {},
       {},
       Disposition::kBlocks,
       "no controller would recreate it (no ownerReferences)"},
      {"a bare pod with the evict annotation moves",
       [&](api::Pod& p) {
         bare(p);
         p.metadata.annotations[kEvictAnnotation] = "";
       },
       {},
       {},
       Disposition::kMoves,
       ""},
      {"a bare pod with safe-to-evict=true moves",
       [&](api::Pod& p) {
         bare(p);
         p.metadata.annotations[kSafeToEvictAnnotation] = "true";
       },
       {},
       {},
       Disposition::kMoves,
       ""},
      {"system-critical priority keeps it",
       critical,
       {},
       {},
       Disposition::kBlocks,
       "system-critical priority 2000001000"},
      {"priority just below system-critical moves",
       [](api::Pod& p) { p.spec.priority = 1999999999; },
       {},
       {},
       Disposition::kMoves,
       ""},
      {"evictSystemCriticalPods lets it move",
       critical,
       {false, true},
       {},
       Disposition::kMoves,
       ""},
      {"an emptyDir volume keeps it",
       cache,
       {},
       {},
       Disposition::kBlocks,
       "node-local storage (emptyDir volume \"cache\")"},
      {"a hostPath volume keeps it",
       [](api::Pod& p) { p.spec.volumes.push_back(volume("logs", false, true)); },
       {},
       {},
       Disposition::kBlocks,
       "node-local storage (hostPath volume \"logs\")"},
      {"evictLocalStoragePods lets it move", cache, {true, false}, {}, Disposition::kMoves, ""},
      {"a budget allowing one disruption lets it move",
       nullptr,
       {},
       {budget("web", 1)},
       Disposition::kMoves,
       ""},
      {"a budget allowing none keeps it",
       nullptr,
       {},
       {budget("web", 0)},
       Disposition::kBlocks,
       "PodDisruptionBudget default/web allows no disruption now"},
      {"the evict annotation does not waive a budget",
       annotate(kEvictAnnotation, "true"),
       {},
       {budget("web", 0)},
       Disposition::kBlocks,
       "PodDisruptionBudget default/web allows no disruption now"},
      {"a budget of nil selector covers nothing",
       nullptr,
       {},
       {budget("none", 0, true)},
       Disposition::kMoves,
       ""},
      {"a budget of another namespace does not cover it",
       [](api::Pod& p) { p.metadata.namespace_ = "other"; },
       {},
       {budget("web", 0)},
       Disposition::kMoves,
       ""},
  };
  for (const auto& row : rows) {
    api::Pod pod = replicaPod();
    if (row.change) row.change(pod);
    const Budgets budgets(row.budgets);
    const Verdict v = judge(pod, row.policy, budgets);
    EXPECT_EQ(v.disposition, row.want) << row.name;
    EXPECT_EQ(v.reason, row.reason) << row.name;
  }
}

TEST(AdviseMovable, AnEmptySelectorCoversEveryPodOfItsNamespace) {
  api::PodDisruptionBudget all = budget("all", 0);
  all.spec.selector = api::LabelSelector{};
  const Budgets budgets({all});
  ASSERT_EQ(budgets.covering(replicaPod()).size(), 1U);
  EXPECT_EQ(judge(replicaPod(), {}, budgets).disposition, Disposition::kBlocks);
}

}  // namespace
}  // namespace ksched::advise
