// Binding conditions (DRADeviceBindingConditions with DRAResourceClaimDeviceStatus): a device
// whose slice lists bindingConditions is allocated, but the pod binds only once the driver
// reports each of them True in the claim's status.devices (the device is attached); a binding
// failure condition True, or the binding timeout passed since the allocation, gives the device
// up: Filter finds the claim unavailable, PostFilter deallocates it and the next attempt tries
// other devices.
#pragma once

#include <chrono>
#include <string>

#include <ksched/api/pod.h>
#include <ksched/api/resource.h>

namespace ksched::plugins::dra {

struct BindingState {
  enum class Code { kReady, kPending, kFailed } code = Code::kReady;
  std::string message;  // kFailed: upstream's "claim <name> binding failed: reason=..."
};

// Upstream's isClaimReadyForBinding: kReady when every allocated device with binding conditions
// has them all True and none of its failure conditions True (no binding conditions: kReady);
// kPending when a condition is not True yet or the device has no status; kFailed when a
// failure condition is True. An unallocated claim is kPending.
[[nodiscard]] BindingState bindingState(const api::ResourceClaim& claim);

// Whether some allocated device of the claim has binding conditions.
[[nodiscard]] bool hasBindingConditions(const api::ResourceClaim& claim);

// Upstream's isClaimTimeout: the claim has binding conditions and its allocationTimestamp is
// more than `timeout` before `now`. False without a timestamp.
[[nodiscard]] bool bindingTimedOut(const api::ResourceClaim& claim,
                                   std::chrono::nanoseconds timeout,
                                   std::chrono::system_clock::time_point now);

// The key under which DraState::avoid() keeps the devices given up by the claim of a pod's
// extended resources (a new claim is created for each attempt).
[[nodiscard]] inline std::string podAvoidKey(const api::Pod& pod) {
  return "pod:" + pod.metadata.uid;
}

}  // namespace ksched::plugins::dra
