#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include <ksched/api/event.h>
#include <ksched/api/object_reference.h>

#include "tests/support/api_test_util.h"

namespace ksched::api {
namespace {

using testing::decodeError;
using testing::decodeString;
using ::testing::HasSubstr;

Event scheduledEvent() {
  ObjectMeta pod;
  pod.name = "web-0";
  pod.namespace_ = "prod";
  pod.uid = "u-1";
  pod.resourceVersion = "12";
  Event e;
  e.metadata.name = "web-0.17a";
  e.metadata.namespace_ = "prod";
  e.involvedObject = objectReferenceTo("v1", "Pod", pod);
  e.reason = "Scheduled";
  e.message = "Successfully assigned prod/web-0 to node-1";
  e.type = std::string(kEventTypeNormal);
  e.action = "Binding";
  e.reportingController = "ksched";
  e.reportingInstance = "ksched-host-a";
  e.eventTime = "2026-01-01T00:00:00.123456Z";
  return e;
}

TEST(ObjectReferenceTest, RoundTrips) {
  ObjectMeta m;
  m.name = "data";
  m.namespace_ = "prod";
  m.uid = "c-1";
  const ObjectReference r = objectReferenceTo("v1", "PersistentVolumeClaim", m);
  EXPECT_EQ(r, (ObjectReference{"v1", "PersistentVolumeClaim", "prod", "data", "c-1", "", ""}));
  const nlohmann::json j = r;
  EXPECT_EQ(j, nlohmann::json::parse(
                   R"({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": "prod",
                       "name": "data", "uid": "c-1"})"));
  EXPECT_EQ(decode<ObjectReference>(j), r);
  EXPECT_EQ(nlohmann::json(ObjectReference{}), nlohmann::json::object());
  EXPECT_THAT(decodeError<ObjectReference>(R"({"uid": 5})"), HasSubstr("uid:"));
}

TEST(EventTest, EncodesCoreV1) {
  Event e = scheduledEvent();
  e.count = 1;
  e.firstTimestamp = "2026-01-01T00:00:00Z";
  e.lastTimestamp = "2026-01-01T00:00:00Z";
  e.source.component = "ksched";
  const nlohmann::json j = e;
  EXPECT_EQ(j, nlohmann::json::parse(R"({
    "apiVersion": "v1", "kind": "Event",
    "metadata": {"name": "web-0.17a", "namespace": "prod"},
    "involvedObject": {"apiVersion": "v1", "kind": "Pod", "namespace": "prod", "name": "web-0",
                       "uid": "u-1", "resourceVersion": "12"},
    "reason": "Scheduled", "message": "Successfully assigned prod/web-0 to node-1",
    "type": "Normal", "action": "Binding", "reportingComponent": "ksched",
    "reportingInstance": "ksched-host-a", "eventTime": "2026-01-01T00:00:00.123456Z",
    "firstTimestamp": "2026-01-01T00:00:00Z", "lastTimestamp": "2026-01-01T00:00:00Z",
    "count": 1, "source": {"component": "ksched"}})"));
  EXPECT_FALSE(j.contains("note"));
  EXPECT_FALSE(j.contains("regarding"));
  EXPECT_FALSE(j.contains("reportingController"));
}

TEST(EventTest, EncodesEventsV1WithoutLegacyFields) {
  Event e = scheduledEvent();
  e.count = 3;
  e.firstTimestamp = "2026-01-01T00:00:00Z";
  e.source.component = "ksched";
  const nlohmann::json j = toEventsV1Json(e);
  EXPECT_EQ(j, nlohmann::json::parse(R"({
    "apiVersion": "events.k8s.io/v1", "kind": "Event",
    "metadata": {"name": "web-0.17a", "namespace": "prod"},
    "regarding": {"apiVersion": "v1", "kind": "Pod", "namespace": "prod", "name": "web-0",
                  "uid": "u-1", "resourceVersion": "12"},
    "reason": "Scheduled", "note": "Successfully assigned prod/web-0 to node-1",
    "type": "Normal", "action": "Binding", "reportingController": "ksched",
    "reportingInstance": "ksched-host-a", "eventTime": "2026-01-01T00:00:00.123456Z"})"));
}

TEST(EventTest, MinimalCoreV1OmitsUnset) {
  Event e;
  e.metadata.name = "x";
  e.reason = "FailedScheduling";
  const nlohmann::json j = e;
  EXPECT_EQ(j, nlohmann::json::parse(R"({"apiVersion": "v1", "kind": "Event",
      "metadata": {"name": "x"}, "involvedObject": {}, "reason": "FailedScheduling"})"));
}

TEST(EventTest, DecodesBothShapes) {
  const Event e = scheduledEvent();
  for (const nlohmann::json& j : {nlohmann::json(e), toEventsV1Json(e)}) {
    SCOPED_TRACE(j.value("apiVersion", ""));
    const auto back = decode<Event>(j);
    EXPECT_EQ(back.involvedObject, e.involvedObject);
    EXPECT_EQ(back.message, e.message);
    EXPECT_EQ(back.reportingController, "ksched");
    EXPECT_EQ(back.reportingInstance, "ksched-host-a");
    EXPECT_EQ(back.eventTime, e.eventTime);
    EXPECT_EQ(back.action, "Binding");
  }
  const auto legacy = decodeString<Event>(
      R"({"count": 4, "source": {"component": "kubelet", "host": "n1"}, "lastTimestamp": "t"})");
  EXPECT_EQ(legacy.count, 4);
  EXPECT_EQ(legacy.source.component, "kubelet");
  EXPECT_EQ(legacy.source.host, "n1");
  EXPECT_EQ(legacy.lastTimestamp, "t");
  EXPECT_THAT(decodeError<Event>(R"({"count": "4"})"), HasSubstr("count:"));
  EXPECT_THAT(decodeError<Event>(R"({"source": {"host": 1}})"), HasSubstr("source.host:"));
  EXPECT_THAT(decodeError<Event>(R"({"involvedObject": {"kind": []}})"),
              HasSubstr("involvedObject.kind:"));
}

}  // namespace
}  // namespace ksched::api
