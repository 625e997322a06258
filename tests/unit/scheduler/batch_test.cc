// Opportunistic batching (scheduler/batch.h, KEP 5598) with the in-tree default profile: a
// batched pod lands where a full cycle would put it, a node the pod no longer fits is never
// reused, and upstream's flush rules and metrics.
#include "scheduler/batch.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <ksched/api/features.h>
#include <ksched/api/pod.h>
#include <ksched/testing/fakes.h>

#include "cache/snapshot.h"
#include "config/profile.h"
#include "plugins/registry.h"
#include "scheduler/algorithm.h"
#include "tests/support/framework_test_plugins.h"

namespace ksched::scheduler {
namespace {

using ksched::testing::NodeWrapper;
using ksched::testing::PodWrapper;

NodePtr node(const std::string& name, const std::string& cpu, bool tainted = false) {
  NodeWrapper n(name);
  n.capacity({{"cpu", cpu}, {"memory", "64Gi"}, {"pods", "110"}});
  if (tainted) n.taint("gone", "", "NoSchedule");
  return n.ptr();
}

PodPtr pod(const std::string& name, const std::string& cpu) {
  return PodWrapper(name).req({{"cpu", cpu}, {"memory", "100Mi"}}).ptr();
}

framework::Services withGates(framework::Services s, const features::Gates& gates) {
  s.features = gates;
  return s;
}

// The default profile over a snapshot rebuilt after each placement (as the cache would show the
// assumed pod), with one Algorithm that batches and one that never does (the reference); the
// framework runs with `gates`.
struct Bench {
  frameworktest::Env env;
  metrics::SchedulerMetrics metrics;
  Registry registry = plugins::inTreeRegistry();
  features::Gates gates;
  framework::Framework fwk{config::defaultProfile(gates), registry,
                           withGates(env.services(), gates)};
  Algorithm batching{1};
  Algorithm reference{2};
  std::vector<NodePtr> nodes;
  std::vector<PodPtr> placed;
  cache::Snapshot snap;
  int64_t cycle = 0;

  explicit Bench(std::vector<NodePtr> n, const features::Gates& g = {})
      : gates(g), nodes(std::move(n)) {
    batching.enableBatching(&metrics);
    reference.recordTies(true);
    rebuild();
  }
  void rebuild() {
    snap = cache::Snapshot::fromForTest(placed, nodes, gates);
    fwk.setSnapshot(&snap);
  }
  // The nodes a full cycle rates best for `p` now: the one it picks and those tied with it.
  std::set<std::string> best(const PodPtr& p) {
    CycleState state;
    ScheduleResult r;
    FitError fe;
    Status err;
    EXPECT_EQ(reference.schedulePod(fwk, state, *p, snap, 100, r, fe, err),
              Algorithm::Outcome::kScheduled);
    std::set<std::string> out(r.tiedWith.begin(), r.tiedWith.end());
    out.insert(r.suggestedHost);
    return out;
  }
  // One cycle of the loop for `p`; places it (or returns "" when it fits nowhere).
  std::string schedule(const PodPtr& p, bool* batched = nullptr) {
    CycleState state;
    ScheduleResult r;
    FitError fe;
    Status err;
    auto out = batching.schedulePod(fwk, state, p, ++cycle, snap, 100, r, fe, err);
    if (out != Algorithm::Outcome::kScheduled) return "";
    if (batched != nullptr) *batched = r.batched;
    auto bound = std::make_shared<api::Pod>(*p);
    bound->spec.nodeName = r.suggestedHost;
    placed.push_back(bound);
    rebuild();
    return r.suggestedHost;
  }
  double counter(const std::string& name, const std::string& label) {
    const std::string text = metrics.scrape();
    const std::string key =
        name + "{profile=\"default-scheduler\"" + (label.empty() ? "" : "," + label) + "}";
    auto at = text.find(key + " ");
    return at == std::string::npos ? -1 : std::stod(text.substr(at + key.size() + 1));
  }
};

std::string podName(int i) { return "p" + std::to_string(i); }

// Nodes of different sizes take several pods each; every pod, batched or not, goes to a node a
// full cycle rates best at that moment.
TEST(OpportunisticBatchTest, BatchedPodsGoWhereAFullCycleWould) {
  std::vector<NodePtr> nodes;
  for (int i = 0; i < 8; ++i) nodes.push_back(node("n" + std::to_string(i), std::to_string(4 + i)));
  Bench b(nodes);
  int batched = 0;
  for (int i = 0; i < 40; ++i) {
    const PodPtr p = pod(podName(i), "500m");
    const std::set<std::string> best = b.best(p);
    bool wasBatched = false;
    const std::string chosen = b.schedule(p, &wasBatched);
    EXPECT_TRUE(best.contains(chosen)) << "pod " << i << " went to " << chosen;
    batched += wasBatched ? 1 : 0;
  }
  EXPECT_GE(batched, 35);  // all but the first (and the rare hint that fails)
  EXPECT_EQ(b.batching.batchedPods(b.fwk), batched);
  EXPECT_EQ(b.counter("scheduler_batch_attempts_total", "result=\"hint_used\""), batched);
  EXPECT_GE(b.counter("scheduler_batch_rescore_attempts_total", ""), 30);
}

// One pod per node (upstream's case): each node is used once, and every pod after the first is
// batched.
TEST(OpportunisticBatchTest, AFullNodeLeavesTheBatch) {
  std::vector<NodePtr> nodes;
  for (int i = 0; i < 6; ++i) nodes.push_back(node("n" + std::to_string(i), "1"));
  Bench b(nodes);
  std::set<std::string> used;
  for (int i = 0; i < 6; ++i) used.insert(b.schedule(pod(podName(i), "800m")));
  EXPECT_EQ(used.size(), 6U);
  EXPECT_EQ(b.batching.batchedPods(b.fwk), 5);
  EXPECT_EQ(b.schedule(pod("p6", "800m")), "");  // full everywhere
}

// A hint is filtered again: a node tainted since the batch was made is not used.
TEST(OpportunisticBatchTest, TheHintIsFilteredAgain) {
  std::vector<NodePtr> nodes;
  for (int i = 0; i < 4; ++i) nodes.push_back(node("n" + std::to_string(i), "1"));
  Bench b(nodes);
  const std::string first = b.schedule(pod("p0", "800m"));
  // Every other node but one is tainted now: the pod must go to that one.
  std::string spare;
  for (auto& n : b.nodes) {
    if (n->metadata.name == first) continue;
    if (spare.empty()) {
      spare = n->metadata.name;
      continue;
    }
    n = node(n->metadata.name, "1", true);
  }
  b.rebuild();
  EXPECT_EQ(b.schedule(pod("p1", "800m")), spare);
}

TEST(OpportunisticBatchTest, FlushRulesFollowUpstream) {
  std::vector<NodePtr> nodes;
  for (int i = 0; i < 5; ++i) nodes.push_back(node("n" + std::to_string(i), "8"));
  Bench b(nodes);
  b.schedule(pod("a0", "500m"));
  // Another pod in between: the next cycle number is skipped.
  ++b.cycle;
  bool batched = true;
  b.schedule(pod("a1", "500m"), &batched);
  EXPECT_FALSE(batched);
  EXPECT_EQ(b.counter("scheduler_batch_cache_flushed_total", "reason=\"pod_skipped\""), 1);
  // Other requests: another pod.
  b.schedule(pod("b0", "600m"), &batched);
  EXPECT_FALSE(batched);
  EXPECT_EQ(b.counter("scheduler_batch_cache_flushed_total", "reason=\"pod_incompatible\""), 1);
  // The same again: batched.
  b.schedule(pod("b1", "600m"), &batched);
  EXPECT_TRUE(batched);
  // Older than 500 ms.
  std::this_thread::sleep_for(OpportunisticBatch::kMaxAge + std::chrono::milliseconds(20));
  b.schedule(pod("b2", "600m"), &batched);
  EXPECT_FALSE(batched);
  EXPECT_EQ(b.counter("scheduler_batch_cache_flushed_total", "reason=\"expired\""), 1);
  // A pod with inter-pod anti-affinity is not signed.
  api::Pod anti =
      *PodWrapper("c0").req({{"cpu", "600m"}, {"memory", "100Mi"}}).label("app", "c").ptr();
  api::PodAffinityTerm term;
  term.labelSelector = api::LabelSelector{{{"app", "c"}}, {}};
  term.topologyKey = "kubernetes.io/hostname";
  anti.spec.affinity = api::Affinity{};
  anti.spec.affinity->podAntiAffinity = api::PodAntiAffinity{{term}, {}};
  b.schedule(std::make_shared<api::Pod>(anti), &batched);
  EXPECT_FALSE(batched);
  EXPECT_EQ(b.counter("scheduler_batch_cache_flushed_total", "reason=\"pod_not_batchable\""), 1);
  // A placement that failed after the cycle (Reserve, Permit, the cache).
  b.schedule(pod("d0", "600m"));
  b.batching.placementFailed(b.fwk);
  b.schedule(pod("d1", "600m"), &batched);
  EXPECT_FALSE(batched);
  EXPECT_EQ(b.counter("scheduler_batch_cache_flushed_total", "reason=\"pod_failed\""), 1);
}

TEST(OpportunisticBatchTest, TheGateTurnsItOff) {
  ASSERT_TRUE(features::Gates{}.enabled(features::Feature::kOpportunisticBatching));
  features::Gates off;
  off.force(features::Feature::kOpportunisticBatching, false);
  std::vector<NodePtr> nodes;
  for (int i = 0; i < 4; ++i) nodes.push_back(node("n" + std::to_string(i), "8"));
  Bench b(nodes, off);
  for (int i = 0; i < 6; ++i) b.schedule(pod(podName(i), "500m"));
  EXPECT_EQ(b.batching.batchedPods(b.fwk), 0);
}

TEST(SameSchedulingInputsTest, IgnoresIdentityAndUnreadVolumes) {
  auto base = [](const std::string& name) {
    api::Pod p = *PodWrapper(name).req({{"cpu", "1"}}).label("app", "web").ptr();
    p.metadata.annotations["note"] = name;
    api::Volume token;
    token.name = "kube-api-access-" + name;  // projected: no source the decoder keeps
    p.spec.volumes.push_back(token);
    p.spec.containers[0].volumeMounts.push_back({token.name, "/var/run/secrets", {}});
    return p;
  };
  const api::Pod a = base("a");
  EXPECT_TRUE(api::sameSchedulingInputs(a, base("b")));
  api::Pod labels = base("b");
  labels.metadata.labels["tier"] = "x";
  EXPECT_FALSE(api::sameSchedulingInputs(a, labels));
  api::Pod ns = base("b");
  ns.metadata.namespace_ = "other";
  EXPECT_FALSE(api::sameSchedulingInputs(a, ns));
  api::Pod tolerations = base("b");
  tolerations.spec.tolerations.push_back({"k", "Exists", "", "NoSchedule", std::nullopt});
  EXPECT_FALSE(api::sameSchedulingInputs(a, tolerations));
  api::Pod claim = base("b");
  api::Volume pvc;
  pvc.name = "data";
  pvc.persistentVolumeClaim = api::PersistentVolumeClaimVolumeSource{"data-b", false};
  claim.spec.volumes.push_back(pvc);
  EXPECT_FALSE(api::sameSchedulingInputs(a, claim));
  api::Pod claimA = a;
  pvc.persistentVolumeClaim->claimName = "data-b";
  pvc.name = "other-name";
  claimA.spec.volumes.push_back(pvc);
  EXPECT_TRUE(api::sameSchedulingInputs(claimA, claim));  // the same claim, named otherwise
  api::Pod ephemeral = a;
  api::Volume eph;
  eph.name = "scratch";
  eph.ephemeral = true;
  ephemeral.spec.volumes.push_back(eph);
  EXPECT_FALSE(api::sameSchedulingInputs(ephemeral, ephemeral));  // its claim is its own
  api::Pod nominated = base("b");
  nominated.status.nominatedNodeName = "n1";
  EXPECT_FALSE(api::sameSchedulingInputs(a, nominated));
  api::Pod containerClaim = base("b");
  containerClaim.spec.containers[0].resources.claims.push_back({.name = "gpu", .request = ""});
  EXPECT_FALSE(api::sameSchedulingInputs(a, containerClaim));
}

// A batch's age is read from the clock enableBatching was given (the queue's): the simulator's
// virtual time, which moves only as it counts, never expires one however slow the machine.
TEST(OpportunisticBatchTest, AgeIsTimedByTheGivenClock) {
  std::vector<NodePtr> nodes;
  for (int i = 0; i < 5; ++i) nodes.push_back(node("n" + std::to_string(i), "8"));
  Bench b(nodes);
  auto now = std::make_shared<OpportunisticBatch::Clock::time_point>();
  b.batching.enableBatching(&b.metrics, [now] { return *now; });
  b.schedule(pod("a0", "500m"));
  bool batched = false;
  // Wall time past the age, the given clock not: still batched.
  std::this_thread::sleep_for(OpportunisticBatch::kMaxAge + std::chrono::milliseconds(20));
  b.schedule(pod("a1", "500m"), &batched);
  EXPECT_TRUE(batched);
  // The given clock past the age: expired.
  *now += OpportunisticBatch::kMaxAge + std::chrono::milliseconds(1);
  b.schedule(pod("a2", "500m"), &batched);
  EXPECT_FALSE(batched);
  EXPECT_EQ(b.counter("scheduler_batch_cache_flushed_total", "reason=\"expired\""), 1);
}

}  // namespace
}  // namespace ksched::scheduler
