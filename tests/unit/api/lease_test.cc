#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <ksched/api/lease.h>

#include "tests/support/api_test_util.h"

namespace ksched::api {
namespace {

using testing::decodeError;
using testing::decodeString;
using ::testing::HasSubstr;

TEST(LeaseTest, DecodesAndEncodes) {
  const auto l = decodeString<Lease>(R"({
    "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
    "metadata": {"name": "ksched", "namespace": "kube-system", "resourceVersion": "41"},
    "spec": {"holderIdentity": "host-a_1234", "leaseDurationSeconds": 15,
             "acquireTime": "2026-01-01T00:00:00.000000Z", "renewTime": "2026-01-01T00:00:10.500000Z",
             "leaseTransitions": 2}})");
  EXPECT_EQ(l.metadata.key(), "kube-system/ksched");
  EXPECT_EQ(l.spec.holderIdentity, "host-a_1234");
  EXPECT_EQ(l.spec.leaseDurationSeconds, 15);
  EXPECT_EQ(l.spec.acquireTime, "2026-01-01T00:00:00.000000Z");
  EXPECT_EQ(l.spec.renewTime, "2026-01-01T00:00:10.500000Z");
  EXPECT_EQ(l.spec.leaseTransitions, 2);

  const nlohmann::json j = l;
  EXPECT_EQ(j, nlohmann::json::parse(R"({
    "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
    "metadata": {"name": "ksched", "namespace": "kube-system", "resourceVersion": "41"},
    "spec": {"holderIdentity": "host-a_1234", "leaseDurationSeconds": 15,
             "acquireTime": "2026-01-01T00:00:00.000000Z", "renewTime": "2026-01-01T00:00:10.500000Z",
             "leaseTransitions": 2}})"));
  EXPECT_EQ(decode<Lease>(j).spec, l.spec);
}

TEST(LeaseTest, UnsetFieldsAreOmitted) {
  struct Case {
    std::string name;
    LeaseSpec spec;
    std::string json;
  };
  const std::vector<Case> cases = {
      {"empty", {}, "{}"},
      {"holderOnly", {std::string("me"), {}, {}, {}, {}}, R"({"holderIdentity": "me"})"},
      {"emptyHolderIsWritten", {std::string(""), {}, {}, {}, {}}, R"({"holderIdentity": ""})"},
      {"zeroTransitionsWritten",
       {{}, 10, {}, {}, 0},
       R"({"leaseDurationSeconds": 10, "leaseTransitions": 0})"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(nlohmann::json(c.spec), nlohmann::json::parse(c.json));
    EXPECT_EQ(decodeString<LeaseSpec>(c.json), c.spec);
  }
  Lease fresh;
  fresh.metadata.name = "ksched";
  fresh.metadata.namespace_ = "kube-system";
  EXPECT_EQ(nlohmann::json(fresh), nlohmann::json::parse(R"({
    "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
    "metadata": {"name": "ksched", "namespace": "kube-system"}, "spec": {}})"));
}

TEST(LeaseTest, MalformedInputNamesTheField) {
  EXPECT_THAT(decodeError<Lease>(R"({"spec": {"leaseDurationSeconds": "15"}})"),
              HasSubstr("spec.leaseDurationSeconds:"));
  EXPECT_THAT(decodeError<Lease>(R"({"spec": {"holderIdentity": 7}})"),
              HasSubstr("spec.holderIdentity:"));
  EXPECT_THAT(decodeError<Lease>(R"({"spec": {"renewTime": {}}})"), HasSubstr("spec.renewTime:"));
}

}  // namespace
}  // namespace ksched::api
