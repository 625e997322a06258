// PluginMetrics: the scheduler metrics a plugin records itself (upstream's plugins update
// metrics.PreemptionAttempts and metrics.PreemptionVictims directly), reached through
// Handle::metrics(). Every other metric is recorded by the framework around the plugin calls.
#pragma once

#include <cstddef>

namespace ksched {

// Thread-safe, cheap, never blocks. The defaults record nothing: what a Handle without a metrics
// registry (configuration validation, explain, unit tests) returns.
class PluginMetrics {
 public:
  virtual ~PluginMetrics() = default;
  // scheduler_preemption_attempts_total: a PostFilter preemption attempt began.
  virtual void observePreemptionAttempt() {}
  // scheduler_preemption_victims: the victims of one preemption that chose a node.
  virtual void observePreemptionVictims(size_t /*victims*/) {}
};

}  // namespace ksched
