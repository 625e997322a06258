// SchedulingGates (PreEnqueue): keeps a pod out of activeQ while spec.schedulingGates is
// non-empty.
#pragma once

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string_view>
#include <vector>

#include <ksched/handle.h>
#include <ksched/plugin.h>
#include <ksched/plugin_names.h>
#include <ksched/registry.h>

namespace ksched::plugins {

class SchedulingGates final : public PreEnqueuePlugin, public EnqueueExtensions {
 public:
  static constexpr std::string_view kName = names::kSchedulingGates;
  // Followed by the gate names as Go prints a []string: "[gate1 gate2]".
  static constexpr std::string_view kReasonPrefix = "waiting for scheduling gates: ";

  [[nodiscard]] std::string_view name() const override { return kName; }
  // UnschedulableAndUnresolvable "waiting for scheduling gates: [a b]" while gated.
  Status preEnqueue(const api::Pod& pod) override;
  // A pod's scheduling gates all removed (isSchedulableAfterUpdatePodSchedulingGatesEliminated).
  [[nodiscard]] std::vector<ClusterEventWithHint> eventsToRegister() const override;

 private:
  // Queueing hint: kQueue if the changed pod is `pod` itself.
  [[nodiscard]] static QueueingHint isSchedulableAfterUpdatePodSchedulingGatesEliminated(
      const api::Pod& pod, const EventObject& oldObj, const EventObject& newObj);
};

// Takes no args (ignored).
PluginFactory schedulingGatesFactory();

}  // namespace ksched::plugins
