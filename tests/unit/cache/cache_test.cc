#include "cache/cache.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "cache/snapshot.h"
#include "tests/support/cache_test_util.h"

namespace ksched::cache {
namespace {

using namespace std::chrono_literals;
using testutil::NodeBuilder;
using testutil::PodBuilder;
using Clock = Cache::Clock;

class CacheTest : public ::testing::Test {
 protected:
  CacheOptions options(std::chrono::nanoseconds ttl = 30s) {
    CacheOptions o;
    o.assumedPodTTL = ttl;
    o.clock = [this] { return now_; };
    return o;
  }

  // The node's requested milli-CPU as a fresh snapshot sees it; -1 when not in the snapshot.
  static int64_t requestedCPU(Cache& cache, const std::string& node) {
    Snapshot snapshot;
    (void)cache.updateSnapshot(snapshot);
    const NodeInfo* info = snapshot.get(node);
    return info == nullptr ? -1 : info->requested().milliCPU;
  }

  Clock::time_point now_ = Clock::time_point(1000h);
};

TEST_F(CacheTest, AssumeFinishBindingAddConfirms) {
  Cache cache(options());
  cache.addNode(NodeBuilder("n1").build());
  const auto pod = PodBuilder("p").node("n1").container("1");
  ASSERT_TRUE(cache.assumePod(pod.info()).ok());
  EXPECT_TRUE(cache.isAssumed("uid-p"));
  EXPECT_EQ(cache.podCount(), 1u);
  EXPECT_EQ(cache.assumedPodCount(), 1u);
  EXPECT_EQ(requestedCPU(cache, "n1"), 1000);

  cache.finishBinding("uid-p");
  ASSERT_TRUE(cache.addPod(pod.build()).ok());
  EXPECT_FALSE(cache.isAssumed("uid-p"));
  EXPECT_EQ(cache.podCount(), 1u);
  EXPECT_EQ(cache.assumedPodCount(), 0u);
  EXPECT_EQ(requestedCPU(cache, "n1"), 1000);  // counted once

  now_ += 1h;
  EXPECT_EQ(cache.cleanupExpiredAssumedPods(), 0u);  // Added pods never expire
  EXPECT_EQ(requestedCPU(cache, "n1"), 1000);
  EXPECT_FALSE(cache.addPod(pod.build()).ok());  // already Added
}

TEST_F(CacheTest, NodeInfoIsTheCurrentStateCopiedOncePerChange) {
  Cache cache(options());
  EXPECT_EQ(cache.nodeInfo("n1"), nullptr);
  cache.addNode(NodeBuilder("n1").build());
  cache.addNode(NodeBuilder("n2").build());
  auto first = cache.nodeInfo("n1");
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->requested().milliCPU, 0);
  EXPECT_EQ(cache.nodeInfo("n1"), first) << "unchanged: the same copy";
  ASSERT_TRUE(cache.assumePod(PodBuilder("p").node("n1").container("1").info()).ok());
  auto second = cache.nodeInfo("n1");
  EXPECT_NE(second, first);
  EXPECT_EQ(second->requested().milliCPU, 1000);
  EXPECT_EQ(first->requested().milliCPU, 0) << "an earlier copy does not change";
  EXPECT_EQ(cache.nodeInfo("n2")->name(), "n2");
  ASSERT_TRUE(cache.removeNode(*NodeBuilder("n1").build()).ok());
  EXPECT_EQ(cache.nodeInfo("n1"), nullptr) << "only a placeholder for its pods is left";
}

TEST_F(CacheTest, AssumeThenForget) {
  Cache cache(options());
  cache.addNode(NodeBuilder("n1").build());
  ASSERT_TRUE(cache.assumePod(PodBuilder("p").node("n1").container("1").info()).ok());
  EXPECT_FALSE(cache.assumePod(PodBuilder("p").node("n1").info()).ok());  // known uid
  ASSERT_TRUE(cache.forgetPod("uid-p").ok());
  EXPECT_EQ(cache.podCount(), 0u);
  EXPECT_EQ(cache.assumedPodCount(), 0u);
  EXPECT_EQ(cache.getPod("uid-p"), nullptr);
  EXPECT_EQ(requestedCPU(cache, "n1"), 0);
  EXPECT_FALSE(cache.forgetPod("uid-p").ok());  // Initial again: nothing to forget
}

TEST_F(CacheTest, ExpireAfterTTLThenAddReAdds) {
  Cache cache(options(30s));
  cache.addNode(NodeBuilder("n1").build());
  const auto pod = PodBuilder("p").node("n1").container("2");
  ASSERT_TRUE(cache.assumePod(pod.info()).ok());
  cache.finishBinding("uid-p");

  EXPECT_EQ(cache.cleanupExpiredAssumedPods(now_ + 30s), 0u);  // deadline not passed
  EXPECT_EQ(requestedCPU(cache, "n1"), 2000);
  now_ += 31s;
  EXPECT_EQ(cache.cleanupExpiredAssumedPods(), 1u);
  EXPECT_EQ(cache.podCount(), 0u);
  EXPECT_EQ(cache.assumedPodCount(), 0u);
  EXPECT_EQ(requestedCPU(cache, "n1"), 0);

  ASSERT_TRUE(cache.addPod(pod.build()).ok());  // Expired -> Added
  EXPECT_FALSE(cache.isAssumed("uid-p"));
  EXPECT_EQ(requestedCPU(cache, "n1"), 2000);
}

TEST_F(CacheTest, NoExpiryWithoutFinishedBindingOrWithZeroTTL) {
  struct Case {
    std::string name;
    std::chrono::nanoseconds ttl;
    bool finishBinding;
    size_t expired;
  };
  const std::vector<Case> cases = {
      {"bindingInProgress", 30s, false, 0},
      {"zeroTTL", 0s, true, 0},
      {"finished", 30s, true, 1},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Cache cache(options(c.ttl));
    ASSERT_TRUE(cache.assumePod(PodBuilder("p").node("n1").info()).ok());
    if (c.finishBinding) cache.finishBinding("uid-p");
    EXPECT_EQ(cache.cleanupExpiredAssumedPods(now_ + 24h), c.expired);
    EXPECT_EQ(cache.assumedPodCount(), 1u - c.expired);
  }
}

TEST_F(CacheTest, FinishBindingUsesClockAtThatTime) {
  Cache cache(options(30s));
  ASSERT_TRUE(cache.assumePod(PodBuilder("p").node("n1").info()).ok());
  now_ += 10min;  // a slow binding: the TTL starts when it finishes
  cache.finishBinding("uid-p");
  EXPECT_EQ(cache.cleanupExpiredAssumedPods(now_ + 20s), 0u);
  EXPECT_EQ(cache.cleanupExpiredAssumedPods(now_ + 31s), 1u);
}

TEST_F(CacheTest, AddOnDifferentNodeMovesAssumedPod) {
  Cache cache(options());
  cache.addNode(NodeBuilder("n1").build());
  cache.addNode(NodeBuilder("n2").build());
  ASSERT_TRUE(cache.assumePod(PodBuilder("p").node("n1").container("1").info()).ok());
  ASSERT_TRUE(cache.addPod(PodBuilder("p").node("n2").container("1").build()).ok());
  EXPECT_EQ(requestedCPU(cache, "n1"), 0);
  EXPECT_EQ(requestedCPU(cache, "n2"), 1000);
  ASSERT_NE(cache.getPod("uid-p"), nullptr);
  EXPECT_EQ(cache.getPod("uid-p")->pod->spec.nodeName, "n2");
  EXPECT_FALSE(cache.isAssumed("uid-p"));
  EXPECT_EQ(cache.podCount(), 1u);
}

TEST_F(CacheTest, RemoveAssumedPod) {
  Cache cache(options());
  cache.addNode(NodeBuilder("n1").build());
  const auto pod = PodBuilder("p").node("n1").container("1");
  ASSERT_TRUE(cache.assumePod(pod.info()).ok());
  ASSERT_TRUE(cache.removePod(pod.object()).ok());
  EXPECT_EQ(cache.podCount(), 0u);
  EXPECT_EQ(cache.assumedPodCount(), 0u);
  EXPECT_EQ(requestedCPU(cache, "n1"), 0);
  EXPECT_FALSE(cache.removePod(pod.object()).ok());
}

TEST_F(CacheTest, ErrorsOnInvalidTransitions) {
  Cache cache(options());
  cache.addNode(NodeBuilder("n1").build());
  const auto added = PodBuilder("added").node("n1");
  const auto assumed = PodBuilder("assumed").node("n1");
  ASSERT_TRUE(cache.addPod(added.build()).ok());
  ASSERT_TRUE(cache.assumePod(assumed.info()).ok());

  EXPECT_FALSE(cache.forgetPod("uid-added").ok());    // not assumed
  EXPECT_FALSE(cache.forgetPod("uid-unknown").ok());  // unknown
  EXPECT_FALSE(cache.assumePod(added.info()).ok());   // already in the cache
  EXPECT_FALSE(cache.assumePod(PodBuilder("unbound").info()).ok());
  EXPECT_FALSE(cache.addPod(PodBuilder("unbound").build()).ok());
  EXPECT_FALSE(cache.updatePod(assumed.build(), assumed.build()).ok());  // assumed
  const auto unknown = PodBuilder("unknown").node("n1");
  EXPECT_FALSE(cache.updatePod(unknown.build(), unknown.build()).ok());
  EXPECT_FALSE(cache.removePod(unknown.object()).ok());
  EXPECT_EQ(cache.podCount(), 2u);
  EXPECT_EQ(cache.assumedPodCount(), 1u);
}

TEST_F(CacheTest, UpdatePodReplacesAccounting) {
  Cache cache(options());
  cache.addNode(NodeBuilder("n1").build());
  const auto oldPod = PodBuilder("p").node("n1").container("1").build();
  ASSERT_TRUE(cache.addPod(oldPod).ok());
  ASSERT_TRUE(cache.updatePod(oldPod, PodBuilder("p").node("n1").container("3").build()).ok());
  EXPECT_EQ(requestedCPU(cache, "n1"), 3000);
  EXPECT_EQ(cache.getPod("uid-p")->requests.milliCPU, 3000);
  EXPECT_EQ(cache.podCount(), 1u);
}

// In-place resize: the kubelet reports the new size in status first (allocatedResources), then
// what the container runs with. The node counts the larger of spec and status, and the old
// amount is released by the update.
TEST_F(CacheTest, ResizedPodCountsAtItsStatusSize) {
  Cache cache(options());
  cache.addNode(NodeBuilder("n1").build());
  const auto spec = PodBuilder("p").node("n1").container("1", "1Gi").build();
  ASSERT_TRUE(cache.addPod(spec).ok());
  EXPECT_EQ(requestedCPU(cache, "n1"), 1000);

  api::Pod resized = *spec;
  resized.status.containerStatuses.push_back(
      {resized.spec.containers[0].name, {{"cpu", api::Quantity::parse("3")}}, std::nullopt});
  const auto up = std::make_shared<const api::Pod>(resized);
  ASSERT_TRUE(cache.updatePod(spec, up).ok());
  EXPECT_EQ(requestedCPU(cache, "n1"), 3000);
  EXPECT_EQ(cache.nodeInfo("n1")->requested().memory, 1024LL * 1024 * 1024);
  EXPECT_EQ(cache.nodeInfo("n1")->nonZeroRequested().milliCPU, 3000);

  // Infeasible: the spec (5) is not counted, the allocated size (3) is.
  api::Pod infeasible = resized;
  infeasible.spec.containers[0].resources.requests["cpu"] = api::Quantity::parse("5");
  infeasible.status.conditions.push_back(
      {std::string(api::kPodConditionResizePending), "True", "Infeasible", "", ""});
  ASSERT_TRUE(cache.updatePod(up, std::make_shared<const api::Pod>(infeasible)).ok());
  EXPECT_EQ(requestedCPU(cache, "n1"), 3000);
}

TEST_F(CacheTest, PodBeforeNode) {
  Cache cache(options());
  ASSERT_TRUE(cache.addPod(PodBuilder("p").node("n1").container("1").build()).ok());
  EXPECT_EQ(cache.nodeCount(), 1u);  // a NodeInfo without a node
  Snapshot snapshot;
  (void)cache.updateSnapshot(snapshot);
  EXPECT_EQ(snapshot.numNodes(), 0u);
  EXPECT_EQ(snapshot.get("n1"), nullptr);

  cache.addNode(NodeBuilder("n1").allocatable("cpu", "4").build());
  EXPECT_EQ(cache.updateSnapshot(snapshot), 1u);
  ASSERT_EQ(snapshot.numNodes(), 1u);
  const NodeInfo* info = snapshot.get("n1");
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->requested().milliCPU, 1000);
  EXPECT_EQ(info->allocatable().milliCPU, 4000);
  EXPECT_EQ(info->pods().size(), 1u);
  EXPECT_EQ(cache.nodeCount(), 1u);
}

TEST_F(CacheTest, NodeDeletedWhilePodsRemain) {
  Cache cache(options());
  const auto node = NodeBuilder("n1").build();
  cache.addNode(node);
  const auto pod = PodBuilder("p").node("n1").container("1");
  ASSERT_TRUE(cache.addPod(pod.build()).ok());
  Snapshot snapshot;
  (void)cache.updateSnapshot(snapshot);
  ASSERT_EQ(snapshot.numNodes(), 1u);

  ASSERT_TRUE(cache.removeNode(*node).ok());
  EXPECT_FALSE(cache.removeNode(*node).ok());  // already gone
  EXPECT_EQ(cache.nodeCount(), 1u);            // kept for its pod
  EXPECT_EQ(cache.updateSnapshot(snapshot), 0u);
  EXPECT_EQ(snapshot.numNodes(), 0u);
  EXPECT_EQ(snapshot.get("n1"), nullptr);

  ASSERT_TRUE(cache.removePod(pod.object()).ok());
  EXPECT_EQ(cache.nodeCount(), 0u);
  EXPECT_EQ(cache.podCount(), 0u);

  cache.addNode(node);  // back again, empty
  EXPECT_EQ(cache.updateSnapshot(snapshot), 1u);
  ASSERT_NE(snapshot.get("n1"), nullptr);
  EXPECT_TRUE(snapshot.get("n1")->pods().empty());
}

TEST_F(CacheTest, RemoveUnknownNodeIsError) {
  Cache cache(options());
  EXPECT_FALSE(cache.removeNode(NodeBuilder("n1").object()).ok());
  ASSERT_TRUE(cache.addPod(PodBuilder("p").node("n1").build()).ok());
  EXPECT_FALSE(cache.removeNode(NodeBuilder("n1").object()).ok());  // only a placeholder
  EXPECT_EQ(cache.nodeCount(), 1u);
}

int32_t numNodes(const Snapshot& snapshot, const std::string& node, const std::string& image) {
  const NodeInfo* info = snapshot.get(node);
  if (info == nullptr) return -1;
  auto it = info->imageStates().find(image);
  return it == info->imageStates().end() ? -1 : it->second.numNodes;
}

TEST_F(CacheTest, ImageNumNodesAcrossNodes) {
  Cache cache(options());
  cache.addNode(NodeBuilder("n1").image({"a", "a@sha"}, 100).image({"b"}, 50).build());
  cache.addNode(NodeBuilder("n2").image({"a"}, 100).build());
  Snapshot snapshot;
  EXPECT_EQ(cache.updateSnapshot(snapshot), 2u);
  EXPECT_EQ(numNodes(snapshot, "n1", "a"), 2);
  EXPECT_EQ(numNodes(snapshot, "n1", "a@sha"), 1);
  EXPECT_EQ(numNodes(snapshot, "n1", "b"), 1);
  EXPECT_EQ(numNodes(snapshot, "n2", "a"), 2);
  EXPECT_EQ(snapshot.get("n1")->imageStates().at("a").size, 100);

  const auto n3 = NodeBuilder("n3").image({"a"}, 100).build();
  cache.addNode(n3);
  EXPECT_EQ(cache.updateSnapshot(snapshot), 3u);  // n3, plus n1 and n2 whose count moved
  EXPECT_EQ(numNodes(snapshot, "n1", "a"), 3);
  EXPECT_EQ(numNodes(snapshot, "n2", "a"), 3);
  EXPECT_EQ(numNodes(snapshot, "n3", "a"), 3);

  cache.updateNode(n3, NodeBuilder("n3").image({"b"}, 50).build());
  EXPECT_EQ(cache.updateSnapshot(snapshot), 3u);
  EXPECT_EQ(numNodes(snapshot, "n1", "a"), 2);
  EXPECT_EQ(numNodes(snapshot, "n1", "b"), 2);
  EXPECT_EQ(numNodes(snapshot, "n3", "b"), 2);
  EXPECT_EQ(numNodes(snapshot, "n3", "a"), -1);

  cache.updateNode(n3, NodeBuilder("n3").image({"b"}, 50).label("x", "y").build());
  EXPECT_EQ(cache.updateSnapshot(snapshot), 1u);  // same images: only n3

  ASSERT_TRUE(cache.removeNode(NodeBuilder("n2").object()).ok());
  EXPECT_EQ(cache.updateSnapshot(snapshot), 1u);  // n1's "a" count
  EXPECT_EQ(numNodes(snapshot, "n1", "a"), 1);
  EXPECT_EQ(snapshot.get("n2"), nullptr);
}

TEST_F(CacheTest, ImageNumNodesWithoutRefreshIsAsOfLastCopy) {
  CacheOptions o = options();
  o.refreshImageNumNodes = false;
  Cache cache(o);
  cache.addNode(NodeBuilder("n1").image({"a"}, 100).build());
  Snapshot snapshot;
  (void)cache.updateSnapshot(snapshot);
  cache.addNode(NodeBuilder("n2").image({"a"}, 100).build());
  EXPECT_EQ(cache.updateSnapshot(snapshot), 1u);
  EXPECT_EQ(numNodes(snapshot, "n1", "a"), 1);  // stale until n1 changes (upstream)
  EXPECT_EQ(numNodes(snapshot, "n2", "a"), 2);
  ASSERT_TRUE(cache.addPod(PodBuilder("p").node("n1").build()).ok());
  EXPECT_EQ(cache.updateSnapshot(snapshot), 1u);
  EXPECT_EQ(numNodes(snapshot, "n1", "a"), 2);
}

TEST(CacheCleanupTest, BackgroundLoopExpiresPods) {
  std::atomic<int64_t> seconds{0};
  CacheOptions o;
  o.assumedPodTTL = 1s;
  o.clock = [&seconds] { return Clock::time_point(std::chrono::seconds(seconds.load())); };
  Cache cache(o);
  ASSERT_TRUE(cache.assumePod(PodBuilder("p").node("n1").info()).ok());
  cache.finishBinding("uid-p");
  cache.startCleanup(5ms);
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(cache.assumedPodCount(), 1u);
  seconds = 2;
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (cache.assumedPodCount() != 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_EQ(cache.assumedPodCount(), 0u);
  cache.stopCleanup();
}

TEST(CacheConcurrencyTest, WritersAndSnapshotter) {
  Cache cache;
  constexpr int kNodes = 20;
  constexpr int kPodsPerWriter = 300;
  for (int i = 0; i < kNodes; ++i) cache.addNode(NodeBuilder("n" + std::to_string(i)).build());
  {
    std::vector<std::jthread> writers;
    for (int w = 0; w < 2; ++w) {
      writers.emplace_back([&cache, w] {
        for (int i = 0; i < kPodsPerWriter; ++i) {
          const auto pod = PodBuilder("w" + std::to_string(w) + "-" + std::to_string(i))
                               .node("n" + std::to_string(i % kNodes))
                               .container("10m");
          if (i % 2 == 0) {
            (void)cache.assumePod(pod.info());
            (void)cache.addPod(pod.build());
          } else {
            (void)cache.addPod(pod.build());
            if (i % 3 == 0) (void)cache.removePod(pod.object());
          }
        }
      });
    }
    Snapshot snapshot;
    for (int i = 0; i < 50; ++i) (void)cache.updateSnapshot(snapshot);
  }
  Snapshot snapshot;
  (void)cache.updateSnapshot(snapshot);
  int64_t cpu = 0;
  size_t pods = 0;
  for (const NodeInfo* info : snapshot.list()) {
    cpu += info->requested().milliCPU;
    pods += info->pods().size();
  }
  // Per writer: 150 even pods stay, 50 of the 150 odd ones (i % 3 == 0) are removed.
  EXPECT_EQ(cache.podCount(), 2u * 250u);
  EXPECT_EQ(pods, 2u * 250u);
  EXPECT_EQ(cpu, 2 * 250 * 10);
  EXPECT_EQ(cache.assumedPodCount(), 0u);
}

}  // namespace
}  // namespace ksched::cache
