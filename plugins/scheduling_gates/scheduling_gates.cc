#include "plugins/scheduling_gates/scheduling_gates.h"

#include <string>

#include <ksched/api/pod.h>

namespace ksched::plugins {

Status SchedulingGates::preEnqueue(const api::Pod& pod) {
  const auto& gates = pod.spec.schedulingGates;
  if (gates.empty()) return {};
  std::string reason(kReasonPrefix);
  reason += '[';
  for (size_t i = 0; i < gates.size(); ++i) {
    if (i > 0) reason += ' ';
    reason += gates[i];
  }
  reason += ']';
  return Status::unresolvable(std::move(reason));
}

std::vector<ClusterEventWithHint> SchedulingGates::eventsToRegister() const {
  return {{EventResource::kPod, kUpdatePodSchedulingGatesEliminated,
           &isSchedulableAfterUpdatePodSchedulingGatesEliminated}};
}

QueueingHint SchedulingGates::isSchedulableAfterUpdatePodSchedulingGatesEliminated(
    const api::Pod& pod, const EventObject& /*oldObj*/, const EventObject& newObj) {
  const api::Pod* modified = as<api::Pod>(newObj);
  if (modified == nullptr) return QueueingHint::kQueue;
  return modified->metadata.uid == pod.metadata.uid ? QueueingHint::kQueue : QueueingHint::kSkip;
}

PluginFactory schedulingGatesFactory() {
  return makePluginFactory<SchedulingGates>(
      [](Handle&) { return std::make_unique<SchedulingGates>(); });
}

}  // namespace ksched::plugins
