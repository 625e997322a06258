#include "plugins/coscheduling/podgroup.h"

#include <charconv>

#include <ksched/api/decode.h>
#include <ksched/api/rfc3339.h>

namespace ksched::plugins::coscheduling {

PodGroup decodePodGroup(const nlohmann::json& j) {
  PodGroup pg;
  if (!j.is_object()) throw api::DecodeError("expected an object");
  api::readField(j, "metadata", pg.metadata);
  if (auto ts = api::parseRFC3339(pg.metadata.creationTimestamp)) pg.created = *ts;
  if (const auto it = j.find("spec"); it != j.end() && !it->is_null()) {
    try {
      api::readField(*it, "minMember", pg.minMember);
      api::readField(*it, "minResources", pg.minResources);
      api::readField(*it, "scheduleTimeoutSeconds", pg.scheduleTimeoutSeconds);
    } catch (const api::DecodeError& e) {
      throw api::DecodeError(std::string("spec.") + e.what());
    }
  }
  if (const auto it = j.find("status"); it != j.end() && !it->is_null()) {
    try {
      api::readField(*it, "phase", pg.status.phase);
      api::readField(*it, "occupiedBy", pg.status.occupiedBy);
      api::readField(*it, "scheduled", pg.status.scheduled);
      api::readField(*it, "running", pg.status.running);
      api::readField(*it, "succeeded", pg.status.succeeded);
      api::readField(*it, "failed", pg.status.failed);
      api::readField(*it, "scheduleStartTime", pg.status.scheduleStartTime);
    } catch (const api::DecodeError& e) {
      throw api::DecodeError(std::string("status.") + e.what());
    }
  }
  return pg;
}

nlohmann::json statusToJson(const PodGroupStatus& s) {
  nlohmann::json j = {{"phase", s.phase},
                      {"scheduled", s.scheduled},
                      {"running", s.running},
                      {"succeeded", s.succeeded},
                      {"failed", s.failed}};
  if (!s.occupiedBy.empty()) j["occupiedBy"] = s.occupiedBy;
  if (!s.scheduleStartTime.empty()) j["scheduleStartTime"] = s.scheduleStartTime;
  return j;
}

std::optional<GroupRef> groupOf(const api::Pod& pod) {
  const auto& labels = pod.metadata.labels;
  if (auto it = labels.find(kPodGroupLabel); it != labels.end() && !it->second.empty()) {
    return GroupRef{pod.metadata.namespace_, it->second, false, -1};
  }
  auto it = labels.find(kLegacyNameLabel);
  if (it == labels.end() || it->second.empty()) return std::nullopt;
  GroupRef ref{pod.metadata.namespace_, it->second, true, -1};
  if (auto m = labels.find(kLegacyMinAvailableLabel); m != labels.end()) {
    int32_t v = 0;
    const char* b = m->second.data();
    const char* e = b + m->second.size();
    auto [ptr, ec] = std::from_chars(b, e, v);
    if (ec == std::errc() && ptr == e && v > 0) ref.minAvailable = v;
  }
  return ref;
}

}  // namespace ksched::plugins::coscheduling
