#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <ksched/node_info.h>

#include "tests/support/cache_test_util.h"

namespace ksched {
namespace {

using cache::testutil::NodeBuilder;
using cache::testutil::PodBuilder;

constexpr int64_t kMi = 1024 * 1024;

std::vector<std::string> uids(const std::vector<PodInfoPtr>& pods) {
  std::vector<std::string> out;
  for (const auto& p : pods) out.push_back(p->pod->metadata.uid);
  return out;
}

TEST(NodeInfoPodInfoTest, PrecomputedFields) {
  struct Case {
    std::string name;
    PodBuilder pod;
    int64_t milliCPU, memory, nonZeroCPU, nonZeroMemory;
    bool hasAffinity, hasRequiredAntiAffinity;
  };
  const std::vector<Case> cases = {
      {"bestEffort", PodBuilder("p").container(), 0, 0, 100, 200 * kMi, false, false},
      {"noContainers", PodBuilder("p"), 0, 0, 0, 0, false, false},
      {"cpuOnly", PodBuilder("p").container("500m"), 500, 0, 500, 200 * kMi, false, false},
      {"twoContainers", PodBuilder("p").container("1", "1Gi").container("", "64Mi"), 1000,
       1088 * kMi, 1100, 1088 * kMi, false, false},
      {"requiredAffinity", PodBuilder("p").container("1", "1Gi").requiredAffinity(), 1000,
       1024 * kMi, 1000, 1024 * kMi, true, false},
      {"preferredAntiAffinity", PodBuilder("p").preferredAntiAffinity(), 0, 0, 0, 0, true, false},
      {"requiredAntiAffinity", PodBuilder("p").requiredAntiAffinity(), 0, 0, 0, 0, true, true},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const PodInfo info(c.pod.build(), features::Gates{});
    EXPECT_EQ(info.requests.milliCPU, c.milliCPU);
    EXPECT_EQ(info.requests.memory, c.memory);
    EXPECT_EQ(info.nonZeroMilliCPU, c.nonZeroCPU);
    EXPECT_EQ(info.nonZeroMemory, c.nonZeroMemory);
    EXPECT_EQ(info.hasAffinity, c.hasAffinity);
    EXPECT_EQ(info.hasRequiredAntiAffinity, c.hasRequiredAntiAffinity);
  }
}

TEST(NodeInfoPodInfoTest, AffinityWithoutTermsIsNoAffinity) {
  api::Pod pod = PodBuilder("p").object();
  pod.spec.affinity.emplace().podAffinity.emplace();
  pod.spec.affinity->podAntiAffinity.emplace();
  const PodInfo info(std::make_shared<const api::Pod>(pod), features::Gates{});
  EXPECT_FALSE(info.hasAffinity);
  EXPECT_FALSE(info.hasRequiredAntiAffinity);
}

TEST(HostPortInfoTest, ConflictTable) {
  struct Entry {
    std::string ip, protocol;
    int32_t port;
  };
  struct Case {
    std::string name;
    std::vector<Entry> used;
    Entry probe;
    bool conflict;
  };
  const std::vector<Case> cases = {
      {"empty", {}, {"127.0.0.1", "TCP", 80}, false},
      {"sameIpSamePort", {{"127.0.0.1", "TCP", 80}}, {"127.0.0.1", "TCP", 80}, true},
      {"sameIpOtherPort", {{"127.0.0.1", "TCP", 80}}, {"127.0.0.1", "TCP", 81}, false},
      {"sameIpOtherProtocol", {{"127.0.0.1", "TCP", 80}}, {"127.0.0.1", "UDP", 80}, false},
      {"otherIp", {{"127.0.0.1", "TCP", 80}}, {"127.0.0.2", "TCP", 80}, false},
      {"anyIpProbeVsSpecific", {{"127.0.0.1", "TCP", 80}}, {"0.0.0.0", "TCP", 80}, true},
      {"specificProbeVsAnyIp", {{"0.0.0.0", "TCP", 80}}, {"127.0.0.1", "TCP", 80}, true},
      {"anyIpOtherProtocol", {{"0.0.0.0", "UDP", 80}}, {"127.0.0.1", "TCP", 80}, false},
      {"emptyIpIsAnyIp", {{"", "TCP", 80}}, {"10.0.0.1", "TCP", 80}, true},
      {"emptyProbeIpIsAnyIp", {{"10.0.0.1", "TCP", 80}}, {"", "TCP", 80}, true},
      {"emptyProtocolIsTcp", {{"10.0.0.1", "", 80}}, {"10.0.0.1", "TCP", 80}, true},
      {"emptyProtocolNotUdp", {{"10.0.0.1", "", 80}}, {"10.0.0.1", "UDP", 80}, false},
      {"portZeroIgnored", {{"0.0.0.0", "TCP", 0}}, {"0.0.0.0", "TCP", 0}, false},
      {"sctp", {{"10.0.0.1", "SCTP", 9}}, {"0.0.0.0", "SCTP", 9}, true},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    HostPortInfo ports;
    for (const auto& u : c.used) ports.add(u.ip, u.protocol, u.port);
    EXPECT_EQ(ports.conflicts(c.probe.ip, c.probe.protocol, c.probe.port), c.conflict);
  }
}

TEST(HostPortInfoTest, CountsAndRemoval) {
  HostPortInfo ports;
  ports.add("", "", 80);
  ports.add("0.0.0.0", "TCP", 80);  // same entry, a second user
  ports.add("10.0.0.1", "UDP", 53);
  ports.add("10.0.0.1", "UDP", 0);
  EXPECT_EQ(ports.size(), 2u);
  ports.remove("0.0.0.0", "TCP", 80);
  EXPECT_TRUE(ports.conflicts("1.2.3.4", "TCP", 80));  // still used once
  ports.remove("", "", 80);
  EXPECT_FALSE(ports.conflicts("1.2.3.4", "TCP", 80));
  ports.remove("10.0.0.9", "UDP", 53);  // unknown: no effect
  EXPECT_EQ(ports.size(), 1u);
  ports.remove("10.0.0.1", "UDP", 53);
  EXPECT_EQ(ports.size(), 0u);
}

TEST(NodeInfoTest, SetNodeFillsAllocatableAndImages) {
  NodeInfo info(NodeBuilder("n1")
                    .allocatable("cpu", "4")
                    .allocatable("memory", "8Gi")
                    .allocatable("pods", "110")
                    .allocatable("example.com/gpu", "2")
                    .image({"nginx:1", "nginx@sha256:abc"}, 1000)
                    .image({"redis:7"}, 500)
                    .build());
  EXPECT_EQ(info.name(), "n1");
  ASSERT_NE(info.node(), nullptr);
  EXPECT_EQ(info.allocatable().milliCPU, 4000);
  EXPECT_EQ(info.allocatable().memory, 8192 * kMi);
  EXPECT_EQ(info.allocatable().allowedPodNumber, 110);
  EXPECT_EQ(info.allocatable().scalarValue("example.com/gpu"), 2);
  ASSERT_EQ(info.imageStates().size(), 3u);
  EXPECT_EQ(info.imageStates().at("nginx:1").size, 1000);
  EXPECT_EQ(info.imageStates().at("nginx@sha256:abc").size, 1000);
  EXPECT_EQ(info.imageStates().at("redis:7").size, 500);
  EXPECT_EQ(info.imageStates().at("redis:7").numNodes, 0);

  info.setImageNumNodes("redis:7", 3);
  const int64_t before = info.generation();
  info.setNode(NodeBuilder("n1").allocatable("cpu", "2").image({"redis:7"}, 500).build());
  EXPECT_GT(info.generation(), before);
  EXPECT_EQ(info.allocatable().milliCPU, 2000);
  ASSERT_EQ(info.imageStates().size(), 1u);
  EXPECT_EQ(info.imageStates().at("redis:7").numNodes, 3);  // kept for the cache to refresh
}

TEST(NodeInfoTest, AddRemovePodAggregates) {
  NodeInfo info(NodeBuilder("n1").allocatable("cpu", "4").build());
  const auto a = PodBuilder("a").node("n1").container("1", "1Gi").hostPort(80).info();
  const auto b = PodBuilder("b").node("n1").container().hostPort(53, "UDP", "10.0.0.1").info();
  const auto c = PodBuilder("c")
                     .node("n1")
                     .container("250m")
                     .request("example.com/gpu", "1")
                     .requiredAntiAffinity()
                     .info();
  const auto d = PodBuilder("d").node("n1").preferredAntiAffinity().info();

  struct Step {
    std::string name;
    bool add;
    PodInfoPtr pod;
    int64_t milliCPU, memory, gpu, nonZeroCPU, nonZeroMemory;
    size_t ports;
    std::vector<std::string> pods, affinity, antiAffinity;
  };
  const std::vector<Step> steps = {
      {"addA", true, a, 1000, 1024 * kMi, 0, 1000, 1024 * kMi, 1, {"uid-a"}, {}, {}},
      {"addB", true, b, 1000, 1024 * kMi, 0, 1100, 1224 * kMi, 2, {"uid-a", "uid-b"}, {}, {}},
      {"addC",
       true,
       c,
       1250,
       1024 * kMi,
       1,
       1350,
       1424 * kMi,
       2,
       {"uid-a", "uid-b", "uid-c"},
       {"uid-c"},
       {"uid-c"}},
      {"addD",
       true,
       d,
       1250,
       1024 * kMi,
       1,
       1350,
       1424 * kMi,
       2,
       {"uid-a", "uid-b", "uid-c", "uid-d"},
       {"uid-c", "uid-d"},
       {"uid-c"}},
      {"removeA",
       false,
       a,
       250,
       0,
       1,
       350,
       400 * kMi,
       1,
       {"uid-b", "uid-c", "uid-d"},
       {"uid-c", "uid-d"},
       {"uid-c"}},
      {"removeC", false, c, 0, 0, 0, 100, 200 * kMi, 1, {"uid-b", "uid-d"}, {"uid-d"}, {}},
      {"removeB", false, b, 0, 0, 0, 0, 0, 0, {"uid-d"}, {"uid-d"}, {}},
  };
  int64_t generation = info.generation();
  for (const auto& s : steps) {
    SCOPED_TRACE(s.name);
    if (s.add) {
      info.addPod(s.pod);
    } else {
      ASSERT_TRUE(info.removePod(s.pod->pod->metadata.uid));
    }
    EXPECT_GT(info.generation(), generation);
    generation = info.generation();
    EXPECT_EQ(info.requested().milliCPU, s.milliCPU);
    EXPECT_EQ(info.requested().memory, s.memory);
    EXPECT_EQ(info.requested().scalarValue("example.com/gpu"), s.gpu);
    EXPECT_EQ(info.nonZeroRequested().milliCPU, s.nonZeroCPU);
    EXPECT_EQ(info.nonZeroRequested().memory, s.nonZeroMemory);
    EXPECT_EQ(info.usedPorts().size(), s.ports);
    EXPECT_THAT(uids(info.pods()), ::testing::UnorderedElementsAreArray(s.pods));
    EXPECT_THAT(uids(info.podsWithAffinity()), ::testing::UnorderedElementsAreArray(s.affinity));
    EXPECT_THAT(uids(info.podsWithRequiredAntiAffinity()),
                ::testing::UnorderedElementsAreArray(s.antiAffinity));
  }
  EXPECT_FALSE(info.usedPorts().conflicts("0.0.0.0", "TCP", 80));
  EXPECT_FALSE(info.removePod("uid-a"));
  EXPECT_EQ(info.generation(), generation);  // a failed removal changes nothing
  ASSERT_NE(info.findPod("uid-d"), nullptr);
  EXPECT_EQ(info.findPod("uid-d")->pod->metadata.name, "d");
  EXPECT_EQ(info.findPod("uid-a"), nullptr);
}

TEST(NodeInfoTest, PortsOfPodsAreAccounted) {
  NodeInfo info(NodeBuilder("n1").build());
  info.addPod(PodBuilder("a").hostPort(8080).hostPort(9090, "UDP", "10.0.0.1").info());
  EXPECT_TRUE(info.usedPorts().conflicts("10.0.0.2", "TCP", 8080));
  EXPECT_TRUE(info.usedPorts().conflicts("0.0.0.0", "UDP", 9090));
  EXPECT_FALSE(info.usedPorts().conflicts("10.0.0.2", "UDP", 9090));
  info.addPod(PodBuilder("b").hostPort(8080).info());  // same port twice
  ASSERT_TRUE(info.removePod("uid-a"));
  EXPECT_TRUE(info.usedPorts().conflicts("10.0.0.2", "TCP", 8080));
  EXPECT_FALSE(info.usedPorts().conflicts("0.0.0.0", "UDP", 9090));
}

TEST(NodeInfoTest, SidecarPortsAreHeldAndPlainInitContainerPortsAreNot) {
  api::Pod p = *PodBuilder("s").container("100m").info()->pod;
  api::Container sidecar, init;
  sidecar.name = "proxy";
  sidecar.restartPolicy = std::string(api::kContainerRestartPolicyAlways);
  sidecar.ports.push_back({.containerPort = 15001, .hostPort = 15001, .protocol = "TCP"});
  init.name = "setup";
  init.ports.push_back({.containerPort = 7000, .hostPort = 7000, .protocol = "TCP"});
  p.spec.initContainers = {init, sidecar};
  NodeInfo info(NodeBuilder("n1").build());
  info.addPod(std::make_shared<const PodInfo>(std::make_shared<const api::Pod>(p), features::Gates{}));
  EXPECT_TRUE(info.usedPorts().conflicts("0.0.0.0", "TCP", 15001));
  EXPECT_FALSE(info.usedPorts().conflicts("0.0.0.0", "TCP", 7000));
  ASSERT_TRUE(info.removePod(p.metadata.uid));
  EXPECT_EQ(info.usedPorts().size(), 0u);
}

TEST(NodeInfoTest, PVCRefCountsFollowPods) {
  using Counts = std::map<std::string, int, std::less<>>;
  NodeInfo info(NodeBuilder("n1").build());
  const auto a = PodBuilder("a").node("n1").pvc("data").pvc("logs").info();
  const auto b = PodBuilder("b").node("n1").pvc("data").ephemeral("scratch").info();
  auto other = PodBuilder("c").node("n1").pvc("data").object();
  other.metadata.namespace_ = "other";
  const auto c = std::make_shared<const PodInfo>(std::make_shared<const api::Pod>(other), features::Gates{});

  info.addPod(a);
  EXPECT_EQ(info.pvcRefCounts(), (Counts{{"default/data", 1}, {"default/logs", 1}}));
  const int64_t g = info.generation();
  info.addPod(b);
  info.addPod(c);
  EXPECT_GT(info.generation(), g);
  EXPECT_EQ(
      info.pvcRefCounts(),
      (Counts{
          {"default/b-scratch", 1}, {"default/data", 2}, {"default/logs", 1}, {"other/data", 1}}));
  ASSERT_TRUE(info.removePod("uid-a"));
  EXPECT_EQ(info.pvcRefCounts(),
            (Counts{{"default/b-scratch", 1}, {"default/data", 1}, {"other/data", 1}}));
  EXPECT_EQ(info.clone()->pvcRefCounts(), info.pvcRefCounts());
  ASSERT_TRUE(info.removePod("uid-b"));
  ASSERT_TRUE(info.removePod("uid-c"));
  EXPECT_TRUE(info.pvcRefCounts().empty());
}

TEST(NodeInfoTest, RemoveNodeKeepsPods) {
  NodeInfo info(NodeBuilder("n1").allocatable("cpu", "4").image({"img"}, 10).build());
  info.addPod(PodBuilder("a").container("1").info());
  const int64_t before = info.generation();
  info.removeNode();
  EXPECT_GT(info.generation(), before);
  EXPECT_EQ(info.node(), nullptr);
  EXPECT_EQ(info.name(), "n1");
  EXPECT_EQ(info.pods().size(), 1u);
  EXPECT_EQ(info.requested().milliCPU, 1000);
  EXPECT_EQ(info.allocatable().milliCPU, 0);
  EXPECT_TRUE(info.imageStates().empty());
}

TEST(NodeInfoTest, NamedPlaceholderAndClone) {
  NodeInfo info(std::string("ghost"));
  EXPECT_EQ(info.node(), nullptr);
  EXPECT_EQ(info.name(), "ghost");
  info.addPod(PodBuilder("a").container("1").info());
  auto copy = info.clone();
  info.addPod(PodBuilder("b").container("1").info());
  EXPECT_EQ(copy->pods().size(), 1u);
  EXPECT_EQ(copy->requested().milliCPU, 1000);
  EXPECT_EQ(info.requested().milliCPU, 2000);
  EXPECT_LT(copy->generation(), info.generation());
}

TEST(NodeInfoTest, GenerationsAreGlobal) {
  NodeInfo x(NodeBuilder("x").build());
  NodeInfo y(NodeBuilder("y").build());
  EXPECT_GT(y.generation(), x.generation());
  x.addPod(PodBuilder("a").info());
  EXPECT_GT(x.generation(), y.generation());
  const int64_t g = nextGeneration();
  EXPECT_GT(g, x.generation());
  EXPECT_GT(nextGeneration(), g);
}

TEST(NodeInfoTest, SetImageStatesBumps) {
  NodeInfo info(NodeBuilder("n").build());
  const int64_t before = info.generation();
  info.setImageStates({{"a", {.size = 5, .numNodes = 2}}});
  EXPECT_GT(info.generation(), before);
  EXPECT_EQ(info.imageStates().at("a").numNodes, 2);
  const int64_t after = info.generation();
  info.setImageNumNodes("a", 7);
  info.setImageNumNodes("missing", 7);
  EXPECT_EQ(info.generation(), after);
  EXPECT_EQ(info.imageStates().at("a").numNodes, 7);
  EXPECT_THAT(info.imageStates(), ::testing::SizeIs(1));
}

}  // namespace
}  // namespace ksched
