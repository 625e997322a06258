// The scheduler core's options that a KubeSchedulerConfiguration and the daemon's flags give:
// the one mapping the daemon, `ksched explain` and `ksched simulate` start from, so that a
// setting of the configuration reaches all three the same way. Each caller then sets, after
// it, only what its mode changes: the daemon its identity and metrics, explain one binder and
// no extenders, simulate its clock, seed and synchronous mode.
#pragma once

#include "config/command_line.h"
#include "config/scheduler_config.h"
#include "scheduler/scheduler_core.h"

namespace ksched::scheduler {

// From `config`: the framework profiles, parallelism, percentageOfNodesToScore, the extenders
// and the queue's podInitialBackoffSeconds and podMaxBackoffSeconds. From `flags`:
// --diagnosis-annotation and --shutdown-grace-period (a mode without the daemon's flags passes
// the defaults).
[[nodiscard]] Options optionsFromConfig(const config::SchedulerConfiguration& config,
                                        const config::CommandLine& flags = {});

}  // namespace ksched::scheduler
