#include "plugins/node_ports/node_ports.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "tests/support/plugin_test_util.h"
#include "tests/support/queueing_hint_test_util.h"

namespace ksched::plugins {
namespace {

using testutil::NodeWrapper;
using testutil::PodWrapper;

// (protocol, hostIP, hostPort)
using Port = std::tuple<std::string, std::string, int32_t>;

api::Pod podWithPorts(const std::vector<Port>& ports, const std::string& name = "pod") {
  api::Pod pod = PodWrapper(name).obj();
  api::Container c;
  c.name = "c0";
  for (const auto& [protocol, ip, port] : ports) {
    api::ContainerPort p;
    p.protocol = protocol;
    p.hostIP = ip;
    p.hostPort = port;
    p.containerPort = port;
    c.ports.push_back(p);
  }
  pod.spec.containers.push_back(std::move(c));
  return pod;
}

std::shared_ptr<NodeInfo> nodeWithPodPorts(const std::vector<Port>& ports) {
  auto ni = testutil::makeNodeInfo(NodeWrapper("node"));
  ni->addPod(std::make_shared<const PodInfo>(
      std::make_shared<const api::Pod>(podWithPorts(ports, "existing")), features::Gates{}));
  return ni;
}

struct Case {
  std::string name;
  std::vector<Port> podPorts;
  std::vector<Port> existingPorts;
  Code wantFilter;
};

class NodePortsFilterTest : public ::testing::TestWithParam<Case> {};

TEST_P(NodePortsFilterTest, Filter) {
  const Case& c = GetParam();
  NodePorts pl;
  CycleState state;
  const api::Pod pod = podWithPorts(c.podPorts);
  auto ni = nodeWithPodPorts(c.existingPorts);
  testutil::FakeLister lister;
  PreFilterResult result;
  ASSERT_TRUE(pl.preFilter(state, pod, lister, result).ok());
  EXPECT_FALSE(result.nodeNames.has_value());
  Status s = pl.filter(state, pod, *ni);
  EXPECT_EQ(s.code(), c.wantFilter);
  if (c.wantFilter == Code::kSuccess) {
    EXPECT_TRUE(s.reasons().empty());
  } else {
    EXPECT_EQ(s.reasons(), std::vector<std::string>{
                               "node(s) didn't have free ports for the requested pod ports"});
  }
}

// Mirrors upstream's TestNodePorts.
INSTANTIATE_TEST_SUITE_P(
    Table, NodePortsFilterTest,
    ::testing::Values(Case{"otherPort",
                           {{"UDP", "127.0.0.1", 8080}},
                           {{"UDP", "127.0.0.1", 9090}},
                           Code::kSuccess},
                      Case{"sameUdpPort",
                           {{"UDP", "127.0.0.1", 8080}},
                           {{"UDP", "127.0.0.1", 8080}},
                           Code::kUnschedulable},
                      Case{"sameTcpPort",
                           {{"TCP", "127.0.0.1", 8080}},
                           {{"TCP", "127.0.0.1", 8080}},
                           Code::kUnschedulable},
                      Case{"differentHostIP",
                           {{"TCP", "127.0.0.1", 8080}},
                           {{"TCP", "127.0.0.2", 8080}},
                           Code::kSuccess},
                      Case{"differentProtocol",
                           {{"UDP", "127.0.0.1", 8080}},
                           {{"TCP", "127.0.0.1", 8080}},
                           Code::kSuccess},
                      Case{"secondUdpPortConflict",
                           {{"UDP", "127.0.0.1", 8000}, {"UDP", "127.0.0.1", 8080}},
                           {{"UDP", "127.0.0.1", 8080}},
                           Code::kUnschedulable},
                      Case{"firstTcpPortConflict",
                           {{"TCP", "127.0.0.1", 8001}, {"UDP", "127.0.0.1", 8080}},
                           {{"TCP", "127.0.0.1", 8001}, {"UDP", "127.0.0.1", 8081}},
                           Code::kUnschedulable},
                      Case{"wildcardPodIPConflicts",
                           {{"TCP", "0.0.0.0", 8001}},
                           {{"TCP", "127.0.0.1", 8001}},
                           Code::kUnschedulable},
                      Case{"wildcardBothConflicts",
                           {{"TCP", "10.0.10.10", 8001}, {"TCP", "0.0.0.0", 8001}},
                           {{"TCP", "0.0.0.0", 8001}},
                           Code::kUnschedulable},
                      Case{"wildcardExistingConflicts",
                           {{"TCP", "127.0.0.1", 8001}},
                           {{"TCP", "0.0.0.0", 8001}},
                           Code::kUnschedulable},
                      Case{"wildcardDifferentProtocol",
                           {{"UDP", "0.0.0.0", 8001}},
                           {{"TCP", "0.0.0.0", 8001}},
                           Code::kSuccess},
                      Case{"wildcardUdpConflict",
                           {{"UDP", "0.0.0.0", 8001}},
                           {{"TCP", "0.0.0.0", 8001}, {"UDP", "0.0.0.0", 8001}},
                           Code::kUnschedulable},
                      Case{"emptyIPAndProtocolDefault",
                           {{"", "", 8001}},
                           {{"TCP", "127.0.0.1", 8001}},
                           Code::kUnschedulable}),
    [](const auto& info) { return info.param.name; });

TEST(NodePortsTest, PreFilterSkipsPodWithoutHostPorts) {
  NodePorts pl;
  CycleState state;
  testutil::FakeLister lister;
  PreFilterResult result;
  EXPECT_TRUE(pl.preFilter(state, PodWrapper().obj(), lister, result).isSkip());
  // Container ports without hostPort do not count.
  api::Pod pod = podWithPorts({{"TCP", "", 0}});
  pod.spec.containers[0].ports[0].containerPort = 80;
  EXPECT_TRUE(pl.preFilter(state, pod, lister, result).isSkip());
}

TEST(NodePortsTest, HostPortsIncludeSidecarsOnly) {
  api::Pod pod = podWithPorts({{"TCP", "", 8080}});
  api::Container init;
  init.name = "init";
  init.ports.push_back({"", 9000, 9000, "", "TCP"});
  pod.spec.initContainers.push_back(init);
  EXPECT_EQ(NodePorts::hostPorts(pod).size(), 1u);
  pod.spec.initContainers[0].restartPolicy = "Always";
  const auto ports = NodePorts::hostPorts(pod);
  ASSERT_EQ(ports.size(), 2u);
  EXPECT_EQ(ports[0].hostPort, 9000);
  EXPECT_EQ(ports[1].hostPort, 8080);
}

TEST(NodePortsTest, FilterWithoutPreFilterIsError) {
  NodePorts pl;
  CycleState state;
  auto ni = testutil::makeNodeInfo(NodeWrapper());
  Status s = pl.filter(state, podWithPorts({{"TCP", "", 80}}), *ni);
  EXPECT_EQ(s.code(), Code::kError);
  EXPECT_EQ(s.message(), "reading \"PreFilterNodePorts\" from cycleState: not found");
}

TEST(NodePortsTest, Factory) {
  testutil::FakeHandle h;
  auto plugin = makePlugin(nodePortsFactory(), nullptr, h);
  ASSERT_NE(plugin, nullptr);
  EXPECT_EQ(plugin->name(), "NodePorts");
  EXPECT_NE(dynamic_cast<EnqueueExtensions*>(plugin.get()), nullptr);
}

TEST(NodePortsTest, QueueingHints) {
  using testutil::event;
  using testutil::kNotRegistered;
  using testutil::kWantQueue;
  using testutil::kWantSkip;
  using testutil::obj;
  constexpr auto kAssigned = EventResource::kAssignedPod;
  constexpr auto kUnscheduled = EventResource::kUnscheduledPod;
  constexpr auto kNode = EventResource::kNode;
  const api::Pod pod = podWithPorts({{"TCP", "", 8080}});
  const api::Pod onIP = podWithPorts({{"TCP", "127.0.0.2", 8080}});
  auto assigned = [](const std::vector<Port>& ports) {
    api::Pod p = podWithPorts(ports, "other");
    p.spec.nodeName = "n1";
    return obj(p);
  };
  auto nominated = [](const std::vector<Port>& ports) {
    api::Pod p = podWithPorts(ports, "other");
    p.status.nominatedNodeName = "n1";
    return obj(p);
  };

  NodePorts pl;
  testutil::expectHints(
      pl, {
              {"assigned pod with the port deleted",
               event(kAssigned, kDelete),
               pod,
               assigned({{"TCP", "", 8080}}),
               {},
               kWantQueue},
              {"assigned pod with the port on one IP deleted",
               event(kAssigned, kDelete),
               pod,
               assigned({{"TCP", "127.0.0.1", 8080}}),
               {},
               kWantQueue},
              {"assigned pod with the port on all IPs deleted",
               event(kAssigned, kDelete),
               onIP,
               assigned({{"TCP", "0.0.0.0", 8080}}),
               {},
               kWantQueue},
              {"assigned pod with the port on another IP deleted",
               event(kAssigned, kDelete),
               onIP,
               assigned({{"TCP", "127.0.0.1", 8080}}),
               {},
               kWantSkip},
              {"assigned pod with another port deleted",
               event(kAssigned, kDelete),
               pod,
               assigned({{"TCP", "", 8081}}),
               {},
               kWantSkip},
              {"assigned pod with the port over UDP deleted",
               event(kAssigned, kDelete),
               pod,
               assigned({{"UDP", "", 8080}}),
               {},
               kWantSkip},
              {"assigned pod without host ports deleted",
               event(kAssigned, kDelete),
               pod,
               assigned({}),
               {},
               kWantSkip},
              {"nominated pod with the port deleted",
               event(kUnscheduled, kDelete),
               pod,
               nominated({{"TCP", "", 8080}}),
               {},
               kWantQueue},
              {"unscheduled pod with the port deleted",
               event(kUnscheduled, kDelete),
               pod,
               obj(podWithPorts({{"TCP", "", 8080}}, "other")),
               {},
               kWantSkip},
              {"assigned pod added",
               event(kAssigned, kAdd),
               pod,
               {},
               assigned({{"TCP", "", 8081}}),
               kNotRegistered},
              {"assigned pod updated", event(kAssigned, kUpdateOther), pod,
               assigned({{"TCP", "", 8080}}), assigned({{"TCP", "", 8080}}), kNotRegistered},
              {"node added", event(kNode, kAdd), pod, {}, obj(NodeWrapper("n1")), kWantQueue},
              {"node label update", event(kNode, kUpdateNodeLabel), pod, obj(NodeWrapper("n1")),
               obj(NodeWrapper("n1").label("k", "v")), kNotRegistered},
              {"node taint update", event(kNode, kUpdateNodeTaint), pod, obj(NodeWrapper("n1")),
               obj(NodeWrapper("n1").taint("k", "v", "NoSchedule")), kNotRegistered},
              {"node allocatable update", event(kNode, kUpdateNodeAllocatable), pod,
               obj(NodeWrapper("n1")), obj(NodeWrapper("n1").capacity({{"pods", "10"}})),
               kNotRegistered},
          });
}

// What the plugin says of its rejections (FilterExplainer), as explain shows them.
TEST(NodePortsExplain, NamesThePortAndThePodHoldingIt) {
  auto withHostPort = [](api::Pod p, int32_t port) {
    api::Container c;
    c.name = "c";
    c.ports.push_back({"http", 80, port, "", "TCP"});
    p.spec.containers.push_back(std::move(c));
    return std::make_shared<const api::Pod>(std::move(p));
  };
  testutil::SnapshotHandle h(
      {withHostPort(PodWrapper("web-1").uid("web-1").nodeName("n1").obj(), 8080)},
      {NodeWrapper("n1").ptr()});
  auto pl = makePlugin(nodePortsFactory(), nullptr, h);
  EXPECT_EQ(
      testutil::explainAfterFilter(*pl, h.snapshot(),
                                   *withHostPort(PodWrapper("p").uid("p").obj(), 8080), "n1"),
      std::vector<std::string>{"hostPort 8080/TCP on 0.0.0.0 is in use by pod default/web-1"});
}

}  // namespace
}  // namespace ksched::plugins
