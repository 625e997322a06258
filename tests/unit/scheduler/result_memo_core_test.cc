// The results kept from cycle to cycle (framework::ResultMemo) in the scheduler core, where the
// cluster changes under them: ImageLocality's score of a node depends on how many nodes hold
// each image, so a node that did not change must be scored again when an image spreads to
// another node. The cache re-copies every node holding that image into the snapshot, and the
// memo forgets the slots the snapshot replaced; this test fails if either stops doing so.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include <ksched/testing/fakes.h>

#include "config/profile.h"
#include "framework/result_memo.h"
#include "plugins/registry.h"
#include "scheduler/scheduler_core.h"
#include "tests/support/scheduler_core_test_util.h"

namespace ksched::scheduler {
namespace {

using ksched::testing::FakeClusterApi;
using ksched::testing::NodeWrapper;
using ksched::testing::PodWrapper;
using schedulertest::callsOf;
using schedulertest::eventually;
using schedulertest::RecordingSink;

constexpr const char* kImageX = "registry.example/x:1";
constexpr const char* kImageY = "registry.example/y:1";

NodePtr node(const std::string& name, const std::vector<api::ContainerImage>& images,
             bool tainted = false) {
  NodeWrapper w(name);
  w.capacity({{"cpu", "4"}, {"memory", "8Gi"}, {"pods", "110"}});
  if (tainted) w.taint("dedicated", "infra", "NoSchedule");
  auto n = std::make_shared<api::Node>(*w.ptr());
  n->status.images = images;
  return n;
}

// Two containers, one per image; requests small enough that resources barely move the scores.
PodPtr pod(const std::string& name) {
  auto p = std::make_shared<api::Pod>(*PodWrapper(name).req({{"cpu", "10m"}}).ptr());
  p->spec.containers[0].image = kImageX;
  api::Container second = p->spec.containers[0];
  second.name = "second";
  second.image = kImageY;
  p->spec.containers.push_back(std::move(second));
  return p;
}

std::string boundTo(const FakeClusterApi& api, const std::string& pod) {
  for (const auto& call : callsOf(api, "bind")) {
    if (call.target == "default/" + pod) return call.body;
  }
  return "";
}

TEST(ResultMemoCore, ImageSpreadingToAnotherNodeScoresTheNodesHoldingItAgain) {
  // ImageLocality over 4 nodes (the tainted one counts as a node holding images): node-a holds
  // X (600 MB), node-b Y (1000 MB). Scores: a 600*1/4 = 150 MB -> 6, b 250 MB -> 11. Once X is
  // on node-d too, a has 600*2/4 = 300 MB -> 14, above b.
  features::Gates gates;
  gates.force(features::Feature::kOpportunisticBatching, false);  // every pod a full cycle
  Options o;
  o.features = gates;
  o.profiles = {config::defaultProfile(gates)};
  o.binderThreads = 1;
  o.parallelism = 2;
  FakeClusterApi api;
  RecordingSink events;
  Environment env;
  env.api = &api;
  env.events = &events;
  SchedulerCore core(std::move(env), plugins::inTreeRegistry(), std::move(o));
  const NodePtr d = node("node-d", {}, true);
  core.onNodeAdd(node("node-a", {{{kImageX}, 600'000'000}}));
  core.onNodeAdd(node("node-b", {{{kImageY}, 1'000'000'000}}));
  core.onNodeAdd(node("node-c", {}));
  core.onNodeAdd(d);
  core.startScheduling();

  const int64_t servedBefore = framework::ResultMemo::cyclesServed();
  for (int i = 1; i <= 2; ++i) {
    core.onPodAdd(pod("p" + std::to_string(i)));
    ASSERT_TRUE(eventually([&] { return core.stats().scheduled == static_cast<uint64_t>(i); }));
  }
  EXPECT_EQ(boundTo(api, "p1"), "node-b");
  EXPECT_EQ(boundTo(api, "p2"), "node-b");
  const int64_t servedAfterTwo = framework::ResultMemo::cyclesServed();
  EXPECT_GE(servedAfterTwo - servedBefore, 1) << "the second pod's cycle used the kept results";

  auto withX = std::make_shared<api::Node>(*d);
  withX->status.images.push_back({{kImageX}, 600'000'000});
  core.onNodeUpdate(d, withX);
  core.onPodAdd(pod("p3"));
  ASSERT_TRUE(eventually([&] { return core.stats().scheduled == 3; }));
  EXPECT_EQ(boundTo(api, "p3"), "node-a");
  EXPECT_GE(framework::ResultMemo::cyclesServed() - servedAfterTwo, 1);
  core.stop();
}

}  // namespace
}  // namespace ksched::scheduler
