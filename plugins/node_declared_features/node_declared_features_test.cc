#include "plugins/node_declared_features/node_declared_features.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <ksched/api/features.h>

#include "tests/support/plugin_test_util.h"
#include "tests/support/queueing_hint_test_util.h"

namespace ksched::plugins {
namespace {

using testutil::NodeWrapper;

constexpr const char* kRestartAll = "RestartAllContainersOnContainerExits";
constexpr const char* kHostNetwork = "UserNamespacesHostNetworkSupport";
constexpr const char* kBindMounts = "VolumeBindMountOptions";

// A pod needing the features named (of the three a pod's spec can require).
api::Pod podNeeding(const std::vector<std::string>& features, const std::string& name = "pod") {
  api::Pod pod = testutil::PodWrapper(name).obj();
  api::Container c;
  c.name = "main";
  for (const auto& f : features) {
    if (f == kRestartAll) c.restartPolicyRules.push_back({"RestartAllContainers"});
    if (f == kBindMounts) c.volumeMounts.push_back({"data", "/data", {"noexec"}});
    if (f == kHostNetwork) {
      pod.spec.hostNetwork = true;
      pod.spec.hostUsers = false;
    }
  }
  pod.spec.containers.push_back(std::move(c));
  return pod;
}

std::shared_ptr<NodeInfo> nodeInfoDeclaring(const std::vector<std::string>& features) {
  auto node = std::make_shared<api::Node>(NodeWrapper("node-1").obj());
  node->status.declaredFeatures = features;
  return std::make_shared<NodeInfo>(node);
}

// Upstream's TestPreFilter, over the real registry.
TEST(NodeDeclaredFeaturesTest, PreFilter) {
  struct Case {
    std::string name;
    bool enabled;
    std::vector<std::string> podNeeds;
    Code wantCode;
  };
  const std::vector<Case> cases = {
      {"plugin disabled", false, {kRestartAll}, Code::kSkip},
      {"pod with a feature requirement", true, {kRestartAll}, Code::kSuccess},
      {"pod with several requirements", true, {kRestartAll, kHostNetwork}, Code::kSuccess},
      {"pod with no requirements", true, {}, Code::kSkip},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    NodeDeclaredFeatures pl(c.enabled);
    CycleState state;
    PreFilterResult result;
    testutil::FakeLister lister;
    Status s = pl.preFilter(state, podNeeding(c.podNeeds), lister, result);
    EXPECT_EQ(s.code(), c.wantCode);
    EXPECT_FALSE(result.nodeNames.has_value());
  }
}

// Upstream's TestFilter: the node must declare every feature the pod needs.
TEST(NodeDeclaredFeaturesTest, Filter) {
  struct Case {
    std::string name;
    std::vector<std::string> podNeeds;
    std::vector<std::string> nodeDeclares;
    Code wantCode;
  };
  const std::vector<Case> cases = {
      {"node matches requirements", {kRestartAll}, {kRestartAll, kHostNetwork}, Code::kSuccess},
      {"node does not match requirements",
       {kRestartAll},
       {kHostNetwork},
       Code::kUnschedulableAndUnresolvable},
      {"node with every feature, pod needs a subset",
       {kRestartAll, kBindMounts},
       {kRestartAll, kHostNetwork, kBindMounts},
       Code::kSuccess},
      {"node has no declared features (an older kubelet)",
       {kRestartAll},
       {},
       Code::kUnschedulableAndUnresolvable},
      {"node with some but not all required features",
       {kRestartAll, kHostNetwork},
       {kRestartAll},
       Code::kUnschedulableAndUnresolvable},
      {"names the registry does not know are ignored",
       {kHostNetwork},
       {"AFutureFeature", kHostNetwork},
       Code::kSuccess},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    NodeDeclaredFeatures pl(true);
    CycleState state;
    PreFilterResult result;
    testutil::FakeLister lister;
    const api::Pod pod = podNeeding(c.podNeeds);
    ASSERT_TRUE(pl.preFilter(state, pod, lister, result).ok());
    Status s = pl.filter(state, pod, *nodeInfoDeclaring(c.nodeDeclares));
    EXPECT_EQ(s.code(), c.wantCode);
    if (c.wantCode == Code::kSuccess) {
      EXPECT_TRUE(s.reasons().empty());
    } else {
      EXPECT_EQ(s.reasons(),
                std::vector<std::string>{"node(s) didn't match Pod's required features"});
    }
  }
}

TEST(NodeDeclaredFeaturesTest, FilterWithoutPreFilterStateIsAnError) {
  NodeDeclaredFeatures pl(true);
  CycleState state;
  Status s = pl.filter(state, podNeeding({kRestartAll}), *nodeInfoDeclaring({}));
  EXPECT_EQ(s.code(), Code::kError);
  EXPECT_EQ(s.message(),
            "error reading \"PreFilterNodeDeclaredFeatures\" from cycle-state: not found");
}

TEST(NodeDeclaredFeaturesTest, DisabledFilterPassesEveryNode) {
  NodeDeclaredFeatures pl(false);
  CycleState state;
  EXPECT_TRUE(pl.filter(state, podNeeding({kRestartAll}), *nodeInfoDeclaring({})).ok());
}

// Upstream's TestEventsToRegister: none when disabled.
TEST(NodeDeclaredFeaturesTest, EventsToRegister) {
  EXPECT_TRUE(NodeDeclaredFeatures(false).eventsToRegister().empty());
  EXPECT_EQ(NodeDeclaredFeatures(true).eventsToRegister().size(), 2u);
}

// Upstream's TestEnqueueExtensionsNodeUpdate and TestIsSchedulableAfterTargetPodUpdate.
TEST(NodeDeclaredFeaturesTest, QueueingHints) {
  using testutil::event;
  using testutil::kNotRegistered;
  using testutil::kWantQueue;
  using testutil::kWantSkip;
  auto nodeObj = [](const std::vector<std::string>& features, const std::string& label = "") {
    api::Node n = NodeWrapper("node-1").obj();
    n.status.declaredFeatures = features;
    if (!label.empty()) n.metadata.labels["x"] = label;
    return testutil::obj(n);
  };
  auto podObj = [](const api::Pod& p) { return testutil::obj(p); };
  constexpr auto kNode = EventResource::kNode;
  constexpr auto kUnscheduled = EventResource::kUnscheduledPod;
  const api::Pod pod = podNeeding({kRestartAll});
  api::Pod relabelled = pod;
  relabelled.metadata.labels["foo"] = "bar";
  const api::Pod other = podNeeding({}, "other");
  NodeDeclaredFeatures pl(true);
  testutil::expectHints(
      pl, {
              {"node added with a feature",
               event(kNode, kAdd),
               pod,
               {},
               nodeObj({kRestartAll}),
               kWantQueue},
              {"node added without features", event(kNode, kAdd), pod, {}, nodeObj({}), kWantQueue},
              {"node's features added", event(kNode, kUpdateNodeDeclaredFeature), pod, nodeObj({}),
               nodeObj({kRestartAll}), kWantQueue},
              {"node's features unchanged", event(kNode, kUpdateNodeDeclaredFeature), pod,
               nodeObj({kRestartAll}), nodeObj({kRestartAll}), kWantSkip},
              {"node label changed", event(kNode, kUpdateNodeLabel), pod, nodeObj({}, "a"),
               nodeObj({}, "b"), kNotRegistered},
              {"pod update adds a requirement", event(kUnscheduled, kUpdateOther), pod,
               podObj(podNeeding({})), podObj(pod), kWantQueue},
              {"pod update removes a requirement", event(kUnscheduled, kUpdateOther), pod,
               podObj(pod), podObj(podNeeding({})), kWantQueue},
              {"pod update with no change in requirements", event(kUnscheduled, kUpdatePodLabel),
               pod, podObj(pod), podObj(relabelled), kWantSkip},
              {"another pod's requirements changed", event(kUnscheduled, kUpdateOther), pod,
               podObj(other), podObj(podNeeding({kRestartAll}, "other")), kWantSkip},
              {"assigned pod update", event(EventResource::kAssignedPod, kUpdateOther), pod,
               podObj(other), podObj(other), kNotRegistered},
          });
}

TEST(NodeDeclaredFeaturesTest, FactoryReadsTheGate) {
  testutil::FakeHandle h;
  features::Gates gates;
  {
    gates.force(features::Feature::kNodeDeclaredFeatures, true);
    h.setFeatures(gates);
    auto pl = makePlugin(nodeDeclaredFeaturesFactory(), nullptr, h);
    EXPECT_EQ(pl->name(), "NodeDeclaredFeatures");
    EXPECT_EQ(dynamic_cast<EnqueueExtensions&>(*pl).eventsToRegister().size(), 2u);
  }
  {
    gates.force(features::Feature::kNodeDeclaredFeatures, false);
    h.setFeatures(gates);
    auto pl = makePlugin(nodeDeclaredFeaturesFactory(), nullptr, h);
    CycleState state;
    PreFilterResult result;
    testutil::FakeLister lister;
    EXPECT_EQ(dynamic_cast<PreFilterPlugin&>(*pl)
                  .preFilter(state, podNeeding({kRestartAll}), lister, result)
                  .code(),
              Code::kSkip);
  }
}

// What the plugin says of its rejections (FilterExplainer), as explain shows them.
TEST(NodeDeclaredFeaturesExplain, NamesTheFeatureTheNodeDoesNotDeclare) {
  api::Node declares = NodeWrapper("n2").obj();
  declares.status.declaredFeatures = {"RestartAllContainersOnContainerExits"};
  testutil::SnapshotHandle h(
      {}, {NodeWrapper("n1").ptr(), std::make_shared<const api::Node>(std::move(declares))});
  auto pl = makePlugin(nodeDeclaredFeaturesFactory(), nullptr, h);

  api::Pod restarts = testutil::PodWrapper("p").uid("p").obj();
  api::Container c;
  c.name = "main";
  c.restartPolicyRules.push_back({"RestartAllContainers"});
  restarts.spec.containers.push_back(std::move(c));
  EXPECT_EQ(testutil::explainAfterFilter(*pl, h.snapshot(), restarts, "n1"),
            std::vector<std::string>{
                "node does not declare RestartAllContainersOnContainerExits (the pod has a "
                "restartPolicyRules action RestartAllContainers); the node declares no features "
                "(a kubelet older than 1.35?)"});

  api::Pod hostNetwork = testutil::PodWrapper("p").uid("p").obj();
  hostNetwork.spec.hostNetwork = true;
  hostNetwork.spec.hostUsers = false;
  EXPECT_EQ(testutil::explainAfterFilter(*pl, h.snapshot(), hostNetwork, "n2"),
            std::vector<std::string>{"node does not declare UserNamespacesHostNetworkSupport (the "
                                     "pod has hostNetwork with hostUsers false)"});
}

}  // namespace
}  // namespace ksched::plugins
