#include "plugins/dynamic_resources/binding_conditions.h"

#include <ksched/api/rfc3339.h>

namespace ksched::plugins::dra {

namespace {

// The driver's status of an allocated device: same driver, pool and device, and the same
// shareID when the result has one.
const api::AllocatedDeviceStatus* statusOf(const api::ResourceClaim& claim,
                                           const api::DeviceRequestAllocationResult& r) {
  for (const auto& d : claim.status.devices) {
    if (d.driver == r.driver && d.pool == r.pool && d.device == r.device &&
        (!r.shareID || d.shareID == r.shareID)) {
      return &d;
    }
  }
  return nullptr;
}

}  // namespace

BindingState bindingState(const api::ResourceClaim& claim) {
  if (!claim.status.allocation) return {BindingState::Code::kPending, {}};
  for (const auto& r : claim.status.allocation->devices) {
    if (r.bindingConditions.empty()) continue;
    const api::AllocatedDeviceStatus* st = statusOf(claim, r);
    if (st == nullptr) return {BindingState::Code::kPending, {}};
    for (const auto& type : r.bindingFailureConditions) {
      const api::Condition* c = st->condition(type);
      if (c != nullptr && c->status == "True") {
        return {BindingState::Code::kFailed, "claim " + claim.metadata.name +
                                                 " binding failed: reason=" + c->reason +
                                                 ", message=\"" + c->message + "\""};
      }
    }
    for (const auto& type : r.bindingConditions) {
      const api::Condition* c = st->condition(type);
      if (c == nullptr || c->status != "True") return {BindingState::Code::kPending, {}};
    }
  }
  return {};
}

bool hasBindingConditions(const api::ResourceClaim& claim) {
  if (!claim.status.allocation) return false;
  for (const auto& r : claim.status.allocation->devices) {
    if (!r.bindingConditions.empty()) return true;
  }
  return false;
}

bool bindingTimedOut(const api::ResourceClaim& claim, std::chrono::nanoseconds timeout,
                     std::chrono::system_clock::time_point now) {
  if (!claim.status.allocation || !claim.status.allocation->allocationTimestamp) return false;
  if (!hasBindingConditions(claim)) return false;
  const auto at = api::parseRFC3339(*claim.status.allocation->allocationTimestamp);
  return at && *at + std::chrono::duration_cast<std::chrono::system_clock::duration>(timeout) < now;
}

}  // namespace ksched::plugins::dra
