// Two ksched processes with --leader-elect=true against the real apiserver: one leads and binds,
// the other keeps a warm cache; killing or stopping the leader hands the Lease over.
//
// The processes run with the admin kubeconfig: v1.20's system:kube-scheduler role only allows
// get/update on the Lease named "kube-scheduler", and every test here uses its own Lease name.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <sstream>

#include <ksched/api/lease.h>
#include <ksched/api/rfc3339.h>

#include "cluster.h"
#include "daemon.h"
#include "https_get.h"
#include "scheduling.h"

namespace ksched::testing {
namespace {

constexpr auto kLeaseDuration = 4s;
constexpr auto kRetryPeriod = 1s;

// A ksched taking part in leader election on `leaseName` (kube-system) with short timings,
// serving /metrics to anyone on a port of its own.
// The admin identity: v1.20's system:kube-scheduler may only touch the Lease "kube-scheduler".
class Elected : public Daemon {
 public:
  Elected(std::string logPath, const std::string& leaseName, int port = freeLoopbackPort())
      : Daemon(std::move(logPath),
               {"--kubeconfig", TestCluster::get().kubeconfig("admin"), "--leader-elect=true",
                "--leader-elect-lease-duration=4s", "--leader-elect-renew-deadline=3s",
                "--leader-elect-retry-period=1s", "--leader-elect-resource-namespace=kube-system",
                "--leader-elect-resource-name=" + leaseName, "--bind-address=127.0.0.1",
                "--secure-port=" + std::to_string(port),
                "--authorization-always-allow-paths=/healthz,/metrics"}),
        port_(port),
        series_("leader_election_master_status{name=\"" + leaseName + "\"}") {}

  // leader_election_master_status of its Lease from its /metrics; -1 when it does not answer
  // or has no such series.
  [[nodiscard]] double leading() const {
    return metricSample(httpsGet(port_, "/metrics").body, series_);
  }

 private:
  int port_;
  std::string series_;
};

std::string leasePath(const std::string& name) {
  return "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/" + name;
}

std::optional<api::Lease> readLease(RestClient& c, const std::string& name) {
  try {
    return api::decode<api::Lease>(c.get(leasePath(name)));
  } catch (const client::ApiError& e) {
    if (e.isNotFound()) return std::nullopt;
    throw;
  }
}

void deleteLease(RestClient& c, const std::string& name) {
  try {
    c.del(leasePath(name));
  } catch (const client::ApiError& e) {
    if (!e.isNotFound()) throw;
  }
}

api::TimePoint timeOf(const std::optional<std::string>& s) {
  auto t = api::parseRFC3339(s.value_or(""));
  EXPECT_TRUE(t.has_value()) << s.value_or("<unset>");
  return t.value_or(api::TimePoint{});
}

// reportingInstance of every Scheduled event in `ns`.
std::multiset<std::string> schedulingInstances(RestClient& c, const std::string& ns) {
  std::multiset<std::string> out;
  for (const auto& e : c.list("/apis/events.k8s.io/v1/namespaces/" + ns + "/events").items) {
    if (e.value("reason", "") == "Scheduled") out.insert(e.value("reportingInstance", ""));
  }
  return out;
}

// Starts two instances and returns them as (leader, follower) once one of them leads.
std::pair<std::unique_ptr<Elected>, std::unique_ptr<Elected>> startPair(const std::string& test,
                                                                        const std::string& lease) {
  auto a = std::make_unique<Elected>(logPath(test + "-a"), lease);
  auto b = std::make_unique<Elected>(logPath(test + "-b"), lease);
  EXPECT_TRUE(
      eventually([&] { return a->logHas("started leading") || b->logHas("started leading"); }, 60s))
      << a->log() << b->log();
  if (b->logHas("started leading")) std::swap(a, b);
  EXPECT_TRUE(b->waitForLog("synced:")) << b->log();
  return {std::move(a), std::move(b)};
}

TEST(LeaderElectionIntegration, FollowerTakesOverAfterTheLeaderIsKilled) {
  auto& admin = TestCluster::get().admin();
  deleteAllNodes(admin);
  const std::string ns = "le-kill";
  const std::string lease = "ksched-le-kill";
  ensureNamespace(admin, ns);
  deleteLease(admin, lease);
  for (int i = 0; i < 20; ++i)
    admin.post("/api/v1/nodes", sizedNode("le-kill-" + std::to_string(i), "4", "8Gi"));
  auto pair = startPair("le-kill", lease);
  auto& leader = pair.first;
  auto& follower = pair.second;
  ASSERT_TRUE(leader && follower);
  auto held = readLease(admin, lease);
  ASSERT_TRUE(held);
  const std::string leaderId = held->spec.holderIdentity.value_or("");
  ASSERT_FALSE(leaderId.empty());
  EXPECT_EQ(held->spec.leaseDurationSeconds, 4);

  const int kPods = 200;
  std::jthread creator([&] {
    parallelFor(kPods, 4, [&](int i) {
      admin.post("/api/v1/namespaces/" + ns + "/pods",
                 sizedPod(ns, "p-" + std::to_string(i), "250m"));
      std::this_thread::sleep_for(50ms);  // ~4 s in all
    });
  });
  EXPECT_TRUE(eventually([&] {
    size_t bound = 0;
    for (const auto& p : listPods(admin, ns)) bound += p.spec.nodeName.empty() ? 0 : 1;
    return bound >= 40;
  }));
  // Only the leader binds so far.
  for (const auto& instance : schedulingInstances(admin, ns)) EXPECT_EQ(instance, leaderId);
  EXPECT_FALSE(follower->logHas("started leading")) << follower->log();
  // kube-scheduler's leader metric: 1 on the leader, 0 on the follower.
  EXPECT_EQ(leader->leading(), 1);
  EXPECT_EQ(follower->leading(), 0);

  leader->signal(SIGKILL);
  EXPECT_EQ(leader->wait(), -1);
  std::this_thread::sleep_for(300ms);  // a renewal in flight at the kill lands
  auto last = readLease(admin, lease);
  ASSERT_TRUE(last);
  ASSERT_EQ(last->spec.holderIdentity, leaderId);
  const api::TimePoint lastRenew = timeOf(last->spec.renewTime);

  std::optional<api::Lease> taken;
  ASSERT_TRUE(eventually(
      [&] {
        taken = readLease(admin, lease);
        return taken && taken->spec.holderIdentity.value_or("") != leaderId;
      },
      30s));
  EXPECT_TRUE(follower->waitForLog("started leading")) << follower->log();
  EXPECT_TRUE(eventually([&] { return follower->leading() == 1; }));
  const std::string followerId = taken->spec.holderIdentity.value_or("");
  EXPECT_FALSE(followerId.empty());
  EXPECT_EQ(taken->spec.leaseTransitions, held->spec.leaseTransitions.value_or(0) + 1);
  // The follower judges expiry by when it saw the last renewal (up to one jittered retry period
  // after it was written), then retries every jittered retry period (up to 2.2 periods).
  const auto gap = timeOf(taken->spec.acquireTime) - lastRenew;
  EXPECT_GE(gap, kLeaseDuration) << "took over a live lease";
  EXPECT_LE(gap, kLeaseDuration + 2 * 2.2 * kRetryPeriod + 500ms);

  creator.join();
  EXPECT_EQ(waitAllBound(admin, ns, kPods, 90s), static_cast<size_t>(kPods)) << follower->log();
  expectNoNodeOvercommitted(admin);
  // Every pod bound once: at most one Scheduled event each (the killed leader's queued events
  // may be lost), and every pod the new leader bound has one.
  std::set<std::string> instances;
  EXPECT_TRUE(eventually(
      [&] {
        auto all = schedulingInstances(admin, ns);
        instances = {all.begin(), all.end()};
        return all.count(followerId) > 0 && eventsByPod(admin, ns, "Scheduled").size() >= 100;
      },
      60s));
  for (const auto& [pod, notes] : eventsByPod(admin, ns, "Scheduled")) {
    EXPECT_EQ(notes.size(), 1u) << pod;
  }
  for (const auto& instance : instances) {
    EXPECT_TRUE(instance == leaderId || instance == followerId) << instance;
  }
  follower->signal(SIGTERM);
  EXPECT_EQ(follower->wait(), 0) << follower->log();
  deleteLease(admin, lease);
}

TEST(LeaderElectionIntegration, SigtermReleasesTheLeaseForAFastTakeover) {
  auto& admin = TestCluster::get().admin();
  deleteAllNodes(admin);
  const std::string ns = "le-term";
  const std::string lease = "ksched-le-term";
  ensureNamespace(admin, ns);
  deleteLease(admin, lease);
  for (int i = 0; i < 3; ++i)
    admin.post("/api/v1/nodes", sizedNode("le-term-" + std::to_string(i), "4", "8Gi"));
  auto pair = startPair("le-term", lease);
  auto& leader = pair.first;
  auto& follower = pair.second;
  ASSERT_TRUE(leader && follower);
  auto held = readLease(admin, lease);
  ASSERT_TRUE(held);
  const std::string leaderId = held->spec.holderIdentity.value_or("");
  for (int i = 0; i < 5; ++i)
    admin.post("/api/v1/namespaces/" + ns + "/pods",
               sizedPod(ns, "p-" + std::to_string(i), "100m"));
  EXPECT_EQ(waitAllBound(admin, ns, 5), 5u);

  const auto termAt = std::chrono::steady_clock::now();
  leader->signal(SIGTERM);
  EXPECT_EQ(leader->wait(), 0) << leader->log();
  const auto exitedAt = std::chrono::steady_clock::now();
  EXPECT_LT(exitedAt - termAt, 10s) << leader->log();
  EXPECT_TRUE(leader->logHas("released lease")) << leader->log();
  EXPECT_FALSE(leader->logHas("leaderelection lost")) << leader->log();
  std::optional<api::Lease> now;
  ASSERT_TRUE(eventually(
      [&] {
        now = readLease(admin, lease);
        const std::string h = now ? now->spec.holderIdentity.value_or("") : "";
        return !h.empty() && h != leaderId;
      },
      10s));
  // A released lease is taken on the follower's next try — within one jittered retry period
  // (up to 2.2 periods) of the release, which happened before the leader exited — not after
  // leaseDuration.
  const auto tookOver = std::chrono::steady_clock::now() - exitedAt;
  EXPECT_LT(tookOver, 2.2 * kRetryPeriod + 300ms);
  EXPECT_EQ(now->spec.leaseTransitions, held->spec.leaseTransitions.value_or(0) + 1);
  EXPECT_TRUE(follower->waitForLog("started leading")) << follower->log();
  admin.post("/api/v1/namespaces/" + ns + "/pods", sizedPod(ns, "after", "100m"));
  EXPECT_EQ(waitAllBound(admin, ns, 6), 6u) << follower->log();

  follower->signal(SIGTERM);
  EXPECT_EQ(follower->wait(), 0) << follower->log();
  auto released = readLease(admin, lease);
  ASSERT_TRUE(released);
  EXPECT_EQ(released->spec.holderIdentity, "");
  EXPECT_EQ(released->spec.leaseDurationSeconds, 1);
  deleteLease(admin, lease);
}

}  // namespace
}  // namespace ksched::testing
