#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include <ksched/api/workloads.h>

#include "tests/support/api_test_util.h"

namespace ksched::api {
namespace {

using testing::decodeError;
using testing::decodeString;
using ::testing::HasSubstr;

TEST(NamespaceTest, Decodes) {
  const auto ns = decodeString<Namespace>(
      R"({"metadata": {"name": "prod", "labels": {"team": "a"}}, "status": {"phase": "Active"}})");
  EXPECT_EQ(ns.metadata.key(), "prod");
  EXPECT_EQ(ns.metadata.labels.at("team"), "a");
  EXPECT_EQ(ns.status.phase, "Active");
}

TEST(ServiceTest, NilAndEmptySelectorsDiffer) {
  struct Case {
    std::string name;
    std::string json;
    bool hasSelector;
    bool matchesUnrelatedPod;
  };
  const std::vector<Case> cases = {
      {"noSelector", R"({"spec": {"type": "ExternalName"}})", false, false},
      {"nullSelector", R"({"spec": {"selector": null}})", false, false},
      {"emptySelector", R"({"spec": {"selector": {}}})", true, true},
      {"selector", R"({"spec": {"selector": {"app": "web"}}})", true, false},
  };
  const Labels unrelated{{"app", "db"}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const auto svc = decodeString<Service>(c.json);
    EXPECT_EQ(svc.spec.selector.has_value(), c.hasSelector);
    const Selector s = svc.spec.selector ? Selector::fromSet(*svc.spec.selector) : Selector();
    EXPECT_EQ(s.matches(unrelated), c.matchesUnrelatedPod);
  }
  const auto web = decodeString<Service>(R"({"spec": {"selector": {"app": "web"}}})");
  EXPECT_TRUE(Selector::fromSet(*web.spec.selector).matches({{"app", "web"}, {"x", "y"}}));
}

TEST(ControllersTest, DecodeSelectors) {
  const auto rs = decodeString<ReplicaSet>(
      R"({"metadata": {"name": "web-abc", "namespace": "prod"},
          "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web", "pod-template-hash": "abc"}}}})");
  EXPECT_EQ(rs.spec.replicas, 3);
  EXPECT_TRUE(
      Selector::compile(rs.spec.selector).matches({{"app", "web"}, {"pod-template-hash", "abc"}}));
  EXPECT_FALSE(Selector::compile(rs.spec.selector).matches({{"app", "web"}}));

  const auto sts = decodeString<StatefulSet>(
      R"({"spec": {"selector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["db"]}]}}})");
  EXPECT_FALSE(sts.spec.replicas.has_value());
  EXPECT_TRUE(Selector::compile(sts.spec.selector).matches({{"app", "db"}}));

  const auto rc = decodeString<ReplicationController>(
      R"({"spec": {"replicas": 2, "selector": {"app": "legacy"}}})");
  EXPECT_EQ(rc.spec.replicas, 2);
  EXPECT_EQ(rc.spec.selector, (Labels{{"app", "legacy"}}));
  EXPECT_TRUE(Selector::fromSet(rc.spec.selector).matches({{"app", "legacy"}}));

  EXPECT_FALSE(decodeString<ReplicaSet>("{}").spec.selector.has_value());
  EXPECT_TRUE(Selector::compile(decodeString<ReplicaSet>("{}").spec.selector).isNothing());
}

TEST(WorkloadsDecodeTest, MalformedInputNamesTheField) {
  struct Case {
    std::string name;
    std::string error;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"serviceSelectorArray", decodeError<Service>(R"({"spec": {"selector": ["app"]}})"),
       "spec.selector:"},
      {"rsSelectorOperator",
       decodeError<ReplicaSet>(
           R"({"spec": {"selector": {"matchExpressions": [{"key": "a", "operator": "Equals"}]}}})"),
       "spec.selector.matchExpressions.operator: unknown label selector operator \"Equals\""},
      {"stsReplicasString", decodeError<StatefulSet>(R"({"spec": {"replicas": "3"}})"),
       "spec.replicas:"},
      {"rcSelectorValue",
       decodeError<ReplicationController>(R"({"spec": {"selector": {"app": 1}}})"),
       "spec.selector:"},
      {"namespacePhase", decodeError<Namespace>(R"({"status": {"phase": 1}})"), "status.phase:"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_THAT(c.error, HasSubstr(c.message));
  }
}

}  // namespace
}  // namespace ksched::api
