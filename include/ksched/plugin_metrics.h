// PluginMetrics: the scheduler metrics a plugin records itself (upstream's plugins update
// metrics.PreemptionAttempts and metrics.PreemptionVictims directly), reached through
// Handle::metrics(). Every other metric is recorded by the framework around the plugin calls.
#pragma once

#include <cstddef>
#include <string_view>

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
  // The load-aware plugins (docs/load-aware.md), `source` "prometheus" or "metrics-server":
  // scheduler_load_metrics_refreshes_total{source,result} (success, error) and
  // scheduler_load_metrics_refresh_duration_seconds{source}: one background refresh.
  virtual void observeLoadRefresh(std::string_view /*source*/, bool /*ok*/, double /*seconds*/) {}
  // scheduler_load_metrics_nodes{source,state}: after a refresh, the nodes whose reading is fresh
  // and those whose reading is older than staleAfter.
  virtual void setLoadNodes(std::string_view /*source*/, size_t /*fresh*/, size_t /*stale*/) {}
  // scheduler_load_fallback_total{plugin,reason}: nodes a plugin scored by requests in one cycle
  // for want of a fresh reading (reason stale or missing).
  virtual void observeLoadFallback(std::string_view /*plugin*/, std::string_view /*reason*/,
                                   size_t /*nodes*/) {}
};

}  // namespace ksched
