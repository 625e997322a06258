// The daemon once its configuration is resolved (app.cc reads the flags and the --config file):
// connect, check leader election, build the scheduler, serve HTTPS, sync the informers, schedule
// (at once, or while holding the Lease) and shut down cleanly on SIGTERM/SIGINT.
#pragma once

#include <string>

#include <ksched/registry.h>

#include "config/command_line.h"
#include "config/scheduler_config.h"
#include "metrics/metrics.h"
#include "scheduler/scheduler_core.h"

namespace ksched::app {

// Runs the daemon until SIGTERM/SIGINT (0), a fatal error or a lost Lease (1). Blocks SIGTERM and
// SIGINT before it starts any thread.
int runDaemon(const config::CommandLine& flags, const config::SchedulerConfiguration& config,
              const Registry& registry);

// The scheduler's options for the daemon: scheduler::optionsFromConfig, with the daemon's own
// identity (the events' reportingInstance) and metrics.
[[nodiscard]] scheduler::Options daemonOptions(const config::SchedulerConfiguration& config,
                                               const config::CommandLine& flags,
                                               const std::string& identity,
                                               metrics::SchedulerMetrics* metrics);

}  // namespace ksched::app
