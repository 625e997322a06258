#include <nlohmann/json.hpp>

#include <ksched/api/decode.h>
#include <ksched/api/event.h>

namespace ksched::api {
namespace {

void putIfSet(nlohmann::json& j, const char* key, const std::string& v) {
  if (!v.empty()) j[key] = v;
}

}  // namespace

void from_json(const nlohmann::json& j, EventSource& s) {
  readField(j, "component", s.component);
  readField(j, "host", s.host);
}

void from_json(const nlohmann::json& j, Event& e) {
  readField(j, "metadata", e.metadata);
  readField(j, "involvedObject", e.involvedObject);
  readField(j, "regarding", e.involvedObject);
  readField(j, "reason", e.reason);
  readField(j, "message", e.message);
  readField(j, "note", e.message);
  readField(j, "type", e.type);
  readField(j, "action", e.action);
  readField(j, "reportingComponent", e.reportingController);
  readField(j, "reportingController", e.reportingController);
  readField(j, "reportingInstance", e.reportingInstance);
  readField(j, "eventTime", e.eventTime);
  readField(j, "firstTimestamp", e.firstTimestamp);
  readField(j, "lastTimestamp", e.lastTimestamp);
  readField(j, "count", e.count);
  readField(j, "source", e.source);
}

void to_json(nlohmann::json& j, const Event& e) {
  j = {{"apiVersion", "v1"},
       {"kind", "Event"},
       {"metadata", e.metadata},
       {"involvedObject", e.involvedObject}};
  putIfSet(j, "reason", e.reason);
  putIfSet(j, "message", e.message);
  putIfSet(j, "type", e.type);
  putIfSet(j, "action", e.action);
  putIfSet(j, "reportingComponent", e.reportingController);
  putIfSet(j, "reportingInstance", e.reportingInstance);
  if (e.eventTime) j["eventTime"] = *e.eventTime;
  if (e.firstTimestamp) j["firstTimestamp"] = *e.firstTimestamp;
  if (e.lastTimestamp) j["lastTimestamp"] = *e.lastTimestamp;
  if (e.count != 0) j["count"] = e.count;
  if (!e.source.component.empty() || !e.source.host.empty()) {
    auto& src = j["source"] = nlohmann::json::object();
    putIfSet(src, "component", e.source.component);
    putIfSet(src, "host", e.source.host);
  }
}

nlohmann::json toEventsV1Json(const Event& e) {
  nlohmann::json j = {{"apiVersion", "events.k8s.io/v1"},
                      {"kind", "Event"},
                      {"metadata", e.metadata},
                      {"regarding", e.involvedObject}};
  putIfSet(j, "reason", e.reason);
  putIfSet(j, "note", e.message);
  putIfSet(j, "type", e.type);
  putIfSet(j, "action", e.action);
  putIfSet(j, "reportingController", e.reportingController);
  putIfSet(j, "reportingInstance", e.reportingInstance);
  if (e.eventTime) j["eventTime"] = *e.eventTime;
  return j;
}

}  // namespace ksched::api
