#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <ksched/api/decode.h>
#include <ksched/api/meta.h>

namespace ksched::api {
namespace {

TEST(ObjectMetaTest, DecodesKnownFieldsAndIgnoresUnknown) {
  auto j = nlohmann::json::parse(R"({
    "name": "p", "namespace": "ns", "uid": "u1", "resourceVersion": "42",
    "labels": {"app": "web"}, "somethingNew": {"x": 1},
    "ownerReferences": [{"kind": "ReplicaSet", "name": "rs", "uid": "u2", "controller": true}],
    "deletionTimestamp": "2026-01-01T00:00:00Z"})");
  auto m = decode<ObjectMeta>(j);
  EXPECT_EQ(m.key(), "ns/p");
  EXPECT_EQ(m.resourceVersion, "42");
  EXPECT_EQ(m.labels.at("app"), "web");
  ASSERT_EQ(m.ownerReferences.size(), 1u);
  EXPECT_TRUE(m.ownerReferences[0].controller);
  ASSERT_TRUE(m.deletionTimestamp.has_value());
}

TEST(ObjectMetaTest, WrongTypeNamesTheField) {
  auto j = nlohmann::json::parse(R"({"name": "p", "labels": ["not", "a", "map"]})");
  try {
    (void)decode<ObjectMeta>(j);
    FAIL() << "expected DecodeError";
  } catch (const DecodeError& e) {
    EXPECT_NE(std::string(e.what()).find("labels"), std::string::npos) << e.what();
  }
}

TEST(ObjectMetaTest, ClusterScopedKeyIsName) {
  auto m = decode<ObjectMeta>(nlohmann::json::parse(R"({"name": "node-1"})"));
  EXPECT_EQ(m.key(), "node-1");
}

}  // namespace
}  // namespace ksched::api
