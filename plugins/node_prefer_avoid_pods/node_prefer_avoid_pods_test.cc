// NodePreferAvoidPods tables, from v1.20's node_prefer_avoid_pods_test.go
// (TestNodePreferAvoidPods), plus annotations that do not decode.
#include "plugins/node_prefer_avoid_pods/node_prefer_avoid_pods.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/plugin_test_util.h"

namespace ksched::plugins {
namespace {

using testutil::NodeWrapper;
using testutil::PodWrapper;

std::string avoid(const std::string& kind, const std::string& uid) {
  return R"({
    "preferAvoidPods": [
      {
        "podSignature": {
          "podController": {
            "apiVersion": "v1", "kind": ")" +
         kind + R"(", "name": "foo", "uid": ")" + uid + R"(", "controller": true
          }
        },
        "reason": "some reason",
        "message": "some message"
      }
    ]
  })";
}

const std::string kKey(kPreferAvoidPodsAnnotationKey);

std::vector<NodeWrapper> testNodes() {
  return {NodeWrapper("machine1").annotation(kKey, avoid("ReplicationController", "abcdef123456")),
          NodeWrapper("machine2").annotation(kKey, avoid("ReplicaSet", "qwert12345")),
          NodeWrapper("machine3")};
}

struct AvoidCase {
  std::string name;
  api::Pod pod;
  std::vector<int64_t> want;  // machine1, machine2, machine3
};

class NodePreferAvoidPodsTest : public ::testing::TestWithParam<AvoidCase> {};

TEST_P(NodePreferAvoidPodsTest, Score) {
  const AvoidCase& c = GetParam();
  testutil::FakeHandle h;
  auto plugin = makePlugin(nodePreferAvoidPodsFactory(), nullptr, h);
  auto& pl = dynamic_cast<ScorePlugin&>(*plugin);
  EXPECT_EQ(plugin->name(), "NodePreferAvoidPods");
  EXPECT_FALSE(pl.hasNormalizeScore());
  std::vector<int64_t> got;
  CycleState state;
  for (const NodeWrapper& n : testNodes()) {
    int64_t v = -1;
    ASSERT_TRUE(pl.score(state, c.pod, *testutil::makeNodeInfo(n), v).ok());
    got.push_back(v);
  }
  EXPECT_EQ(got, c.want);
}

INSTANTIATE_TEST_SUITE_P(
    Table, NodePreferAvoidPodsTest,
    ::testing::Values(
        AvoidCase{"replicationControllerAvoidsNode",
                  PodWrapper().ownerReference("ReplicationController", "foo", "abcdef123456").obj(),
                  {0, 100, 100}},
        AvoidCase{"randomControllerIsIgnored",
                  PodWrapper().ownerReference("RandomController", "foo", "abcdef123456").obj(),
                  {100, 100, 100}},
        AvoidCase{"ownerWithoutControllerIsIgnored",
                  PodWrapper()
                      .ownerReference("ReplicationController", "foo", "abcdef123456", false)
                      .obj(),
                  {100, 100, 100}},
        AvoidCase{
            "replicaSetAvoidsNode",
            PodWrapper().ownerReference("ReplicaSet", "foo", "qwert12345", true, "apps/v1").obj(),
            {100, 0, 100}},
        // Beyond upstream's table.
        AvoidCase{"noOwner", PodWrapper().obj(), {100, 100, 100}},
        AvoidCase{"kindMustMatchToo",
                  PodWrapper().ownerReference("ReplicaSet", "foo", "abcdef123456").obj(),
                  {100, 100, 100}},
        AvoidCase{"firstControllerCounts",
                  PodWrapper()
                      .ownerReference("StatefulSet", "s", "abcdef123456")
                      .ownerReference("ReplicationController", "foo", "abcdef123456")
                      .obj(),
                  {100, 100, 100}}),
    [](const auto& info) { return info.param.name; });

struct AnnotationCase {
  std::string name;
  std::string annotation;
  bool avoided;
};

class NodePreferAvoidPodsAnnotationTest : public ::testing::TestWithParam<AnnotationCase> {};

TEST_P(NodePreferAvoidPodsAnnotationTest, Score) {
  const AnnotationCase& c = GetParam();
  NodePreferAvoidPods pl;
  CycleState state;
  int64_t v = -1;
  const api::Pod pod = PodWrapper().ownerReference("ReplicaSet", "rs", "u1", true, "apps/v1").obj();
  ASSERT_TRUE(pl.score(state, pod,
                       *testutil::makeNodeInfo(NodeWrapper("n").annotation(kKey, c.annotation)), v)
                  .ok());
  EXPECT_EQ(v, c.avoided ? 0 : 100);
}

INSTANTIATE_TEST_SUITE_P(
    Table, NodePreferAvoidPodsAnnotationTest,
    ::testing::Values(
        AnnotationCase{"matching", avoid("ReplicaSet", "u1"), true},
        AnnotationCase{"empty", "", false}, AnnotationCase{"null", "null", false},
        AnnotationCase{"notJson", "{preferAvoidPods", false},
        AnnotationCase{"notAnObject", R"([1])", false},
        AnnotationCase{"listNotAnArray", R"({"preferAvoidPods": {}})", false},
        AnnotationCase{"uidOfWrongType",
                       R"({"preferAvoidPods": [{"podSignature": {"podController":
                           {"kind": "ReplicaSet", "uid": 1}}}]})",
                       false},
        // A later entry of the wrong type spoils the whole annotation, as in Go.
        AnnotationCase{"laterEntryOfWrongType",
                       R"({"preferAvoidPods": [{"podSignature": {"podController":
                           {"kind": "ReplicaSet", "uid": "u1"}}}, 3]})",
                       false},
        AnnotationCase{"badEvictionTime",
                       R"({"preferAvoidPods": [{"evictionTime": "yesterday", "podSignature":
                           {"podController": {"kind": "ReplicaSet", "uid": "u1"}}}]})",
                       false},
        AnnotationCase{"goodEvictionTime",
                       R"({"preferAvoidPods": [{"evictionTime": "2021-01-02T03:04:05Z",
                           "podSignature": {"podController": {"kind": "ReplicaSet",
                           "uid": "u1"}}}]})",
                       true},
        AnnotationCase{"namesIgnoreCaseAndUnknownFieldsAreIgnored",
                       R"({"PreferAvoidPods": [{"extra": 1, "PODSIGNATURE": {"podController":
                           {"Kind": "ReplicaSet", "UID": "u1"}}}]})",
                       true},
        AnnotationCase{"entryWithoutControllerIsSkipped",
                       R"({"preferAvoidPods": [{"podSignature": {}}, null, {"podSignature":
                           {"podController": {"kind": "ReplicaSet", "uid": "u1"}}}]})",
                       true}),
    [](const auto& info) { return info.param.name; });

TEST(NodePreferAvoidPodsTest, WithoutNodeIsError) {
  NodePreferAvoidPods pl;
  CycleState state;
  NodeInfo empty;
  int64_t v = 0;
  EXPECT_EQ(pl.score(state, PodWrapper().obj(), empty, v).code(), Code::kError);
}

}  // namespace
}  // namespace ksched::plugins
