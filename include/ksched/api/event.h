// Events the scheduler posts (Scheduled, FailedScheduling, Preempted, ...).
//
// One struct, two wire shapes:
//   - core/v1 Event (to_json): involvedObject, message, reportingComponent, source, count,
//     firstTimestamp/lastTimestamp. When eventTime is set the apiserver also requires action,
//     reason, reportingComponent and reportingInstance.
//   - events.k8s.io/v1 Event (toEventsV1Json): regarding, note, reportingController; eventTime,
//     action, reason, reportingController and reportingInstance are required there and the
//     legacy fields (count, source, firstTimestamp, lastTimestamp) must be unset, so they are
//     never written.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>

#include <ksched/api/meta.h>
#include <ksched/api/object_reference.h>

namespace ksched::api {

inline constexpr std::string_view kEventTypeNormal = "Normal";
inline constexpr std::string_view kEventTypeWarning = "Warning";

struct EventSource {
  std::string component;
  std::string host;
};

struct Event {
  ObjectMeta metadata;              // name and namespace (the involved object's namespace)
  ObjectReference involvedObject;   // "regarding" in events.k8s.io/v1
  std::string reason;               // e.g. "Scheduled", "FailedScheduling"
  std::string message;              // "note" in events.k8s.io/v1
  std::string type;                 // Normal or Warning
  std::string action;               // e.g. "Scheduling", "Binding"
  std::string reportingController;  // "reportingComponent" in core/v1
  std::string reportingInstance;
  std::optional<std::string> eventTime;       // metav1.MicroTime
  std::optional<std::string> firstTimestamp;  // core/v1 only, metav1.Time
  std::optional<std::string> lastTimestamp;   // core/v1 only
  int32_t count = 0;                          // core/v1 only; 0 is omitted
  EventSource source;                         // core/v1 only; omitted when empty
};

void from_json(const nlohmann::json& j, EventSource& s);
// Reads core/v1 field names, and the events.k8s.io/v1 names (regarding, note,
// reportingController) when those are present.
void from_json(const nlohmann::json& j, Event& e);
// core/v1 shape with apiVersion "v1" and kind "Event"; unset fields are omitted.
void to_json(nlohmann::json& j, const Event& e);
// events.k8s.io/v1 shape (see above).
[[nodiscard]] nlohmann::json toEventsV1Json(const Event& e);

}  // namespace ksched::api
