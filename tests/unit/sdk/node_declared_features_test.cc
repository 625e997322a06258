#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include <ksched/helper/node_declared_features.h>
#include <ksched/node_info.h>

namespace ksched::plugins::helper {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::vector<std::string_view> names(const std::vector<DeclaredFeature>& fs) {
  std::vector<std::string_view> out;
  for (const auto& f : fs) out.push_back(f.name);
  return out;
}

// Upstream's AllFeatures (component-helpers master after v0.37.0-beta.0), in name order.
TEST(NodeDeclaredFeaturesTest, RegistryIsUpstreams) {
  const auto r = declaredFeatureRegistry();
  EXPECT_THAT(names({r.begin(), r.end()}),
              ElementsAre("DRANodeAllocatableResources", "DRAOptionalNodeOperations",
                          "ExtendWebSocketsToKubelet", "InPlacePodLevelResourcesVerticalScaling",
                          "InPlacePodVerticalScalingInitContainers",
                          "InPlacePodVerticalScalingMemoryBackedVolumes",
                          "RestartAllContainersOnContainerExits",
                          "UserNamespacesHostNetworkSupport", "VolumeBindMountOptions"));
  std::vector<std::string_view> inferred;
  for (const auto& f : r) {
    if (f.neededBy != nullptr) {
      inferred.push_back(f.name);
      EXPECT_FALSE(f.neededWhen.empty()) << f.name;
    }
  }
  EXPECT_THAT(inferred, ElementsAre("RestartAllContainersOnContainerExits",
                                    "UserNamespacesHostNetworkSupport", "VolumeBindMountOptions"));
}

api::Container container(std::string name) {
  api::Container c;
  c.name = std::move(name);
  return c;
}

// The inference tables of upstream's feature tests (restart_all_containers_test.go,
// user_namespaces_host_network_test.go, and the volumebindmountoptions feature).
TEST(NodeDeclaredFeaturesTest, RequiredFeatures) {
  struct Case {
    std::string name;
    std::function<void(api::PodSpec&)> spec;
    std::vector<std::string_view> want;
  };
  const std::vector<Case> cases = {
      {"plain pod", [](api::PodSpec&) {}, {}},
      {"restart rule RestartAllContainers",
       [](api::PodSpec& s) {
         s.containers[0].restartPolicyRules = {{"Restart"}, {"RestartAllContainers"}};
       },
       {"RestartAllContainersOnContainerExits"}},
      {"init container restart rule RestartAllContainers",
       [](api::PodSpec& s) {
         s.initContainers.push_back(container("init"));
         s.initContainers[0].restartPolicyRules = {{"RestartAllContainers"}};
       },
       {"RestartAllContainersOnContainerExits"}},
      {"restart rule Restart only",
       [](api::PodSpec& s) { s.containers[0].restartPolicyRules = {{"Restart"}}; },
       {}},
      {"ephemeral containers do not count for restart rules",
       [](api::PodSpec& s) {
         s.ephemeralContainers.push_back(container("debug"));
         s.ephemeralContainers[0].restartPolicyRules = {{"RestartAllContainers"}};
       },
       {}},
      {"hostNetwork with hostUsers false",
       [](api::PodSpec& s) {
         s.hostNetwork = true;
         s.hostUsers = false;
       },
       {"UserNamespacesHostNetworkSupport"}},
      {"hostNetwork with hostUsers unset", [](api::PodSpec& s) { s.hostNetwork = true; }, {}},
      {"hostNetwork with hostUsers true",
       [](api::PodSpec& s) {
         s.hostNetwork = true;
         s.hostUsers = true;
       },
       {}},
      {"hostUsers false without hostNetwork", [](api::PodSpec& s) { s.hostUsers = false; }, {}},
      {"bindMountOptions in a container",
       [](api::PodSpec& s) {
         s.containers[0].volumeMounts = {{"v", "/v", {"noexec"}}};
       },
       {"VolumeBindMountOptions"}},
      {"bindMountOptions in an ephemeral container",
       [](api::PodSpec& s) {
         s.ephemeralContainers.push_back(container("debug"));
         s.ephemeralContainers[0].volumeMounts = {{"v", "/v", {"nosuid"}}};
       },
       {"VolumeBindMountOptions"}},
      {"mounts without options",
       [](api::PodSpec& s) { s.containers[0].volumeMounts = {{"v"}}; },
       {}},
      {"all three",
       [](api::PodSpec& s) {
         s.hostNetwork = true;
         s.hostUsers = false;
         s.containers[0].restartPolicyRules = {{"RestartAllContainers"}};
         s.containers[0].volumeMounts = {{"v", "/v", {"nodev"}}};
       },
       {"RestartAllContainersOnContainerExits", "UserNamespacesHostNetworkSupport",
        "VolumeBindMountOptions"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    api::Pod pod;
    pod.spec.containers.push_back(container("main"));
    c.spec(pod.spec);
    const FeatureSet required = requiredFeatures(pod);
    EXPECT_EQ(required.names(), c.want);
    EXPECT_EQ(required.empty(), c.want.empty());
  }
}

TEST(NodeDeclaredFeaturesTest, DeclaredFeaturesIgnoreUnknownNames) {
  api::Node node;
  node.status.declaredFeatures = {"ANewerFeature", "RestartAllContainersOnContainerExits",
                                  "UserNamespacesHostNetworkSupport", "ZZZ"};
  EXPECT_THAT(declaredFeatures(node).names(), ElementsAre("RestartAllContainersOnContainerExits",
                                                          "UserNamespacesHostNetworkSupport"));
  EXPECT_TRUE(declaredFeatures(api::Node{}).empty());
}

TEST(NodeDeclaredFeaturesTest, SubsetAndMinus) {
  api::Node node;
  node.status.declaredFeatures = {"RestartAllContainersOnContainerExits"};
  const FeatureSet declared = declaredFeatures(node);
  api::Pod pod;
  pod.spec.containers.push_back(container("main"));
  EXPECT_TRUE(requiredFeatures(pod).isSubsetOf(declared));
  EXPECT_TRUE(requiredFeatures(pod).isSubsetOf(FeatureSet{}));
  pod.spec.containers[0].restartPolicyRules = {{"RestartAllContainers"}};
  EXPECT_TRUE(requiredFeatures(pod).isSubsetOf(declared));
  EXPECT_FALSE(requiredFeatures(pod).isSubsetOf(FeatureSet{}));
  pod.spec.hostNetwork = true;
  pod.spec.hostUsers = false;
  EXPECT_FALSE(requiredFeatures(pod).isSubsetOf(declared));
  EXPECT_THAT(requiredFeatures(pod).minus(declared).names(),
              ElementsAre("UserNamespacesHostNetworkSupport"));
  EXPECT_THAT(declared.minus(requiredFeatures(pod)).names(), IsEmpty());
}

TEST(NodeDeclaredFeaturesTest, NodeInfoKeepsTheNodesSet) {
  auto node = std::make_shared<api::Node>();
  node->metadata.name = "n";
  node->status.declaredFeatures = {"UserNamespacesHostNetworkSupport"};
  NodeInfo ni(node);
  EXPECT_THAT(ni.declaredFeatures().names(), ElementsAre("UserNamespacesHostNetworkSupport"));
  const int64_t before = ni.generation();
  auto updated = std::make_shared<api::Node>(*node);
  updated->status.declaredFeatures.clear();
  ni.setNode(updated);
  EXPECT_TRUE(ni.declaredFeatures().empty());
  EXPECT_GT(ni.generation(), before);
  ni.setNode(node);
  ni.removeNode();
  EXPECT_TRUE(ni.declaredFeatures().empty());
}

}  // namespace
}  // namespace ksched::plugins::helper
