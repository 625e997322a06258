// `ksched explain`: the explain evaluation (scheduler/explain.h) run by the command line against
// the cluster itself: it LISTs and WATCHes like the daemon, builds the same cache and snapshot,
// and evaluates the pod with the profile of its schedulerName from --config (or the defaults).
// Also answers `kubectl ksched explain` when the binary is installed as kubectl-ksched.
#pragma once

#include <string>
#include <vector>

#include <ksched/registry.h>

#include "config/scheduler_config.h"
#include "scheduler/scheduler_core.h"

namespace ksched::app {

// `args` after "explain". Returns the exit code: 0 when the pod was explained (whether it fits
// or not), 1 for bad flags, an unknown pod or node, a pod of another scheduler, or a cluster
// that cannot be reached. `registry`: every plugin; `outOfTree`: those of a custom binary (the
// copy a pod group's cycle runs on adds the in-tree ones itself).
int runExplain(const std::vector<std::string>& args, const Registry& registry,
               const Registry& outOfTree);

// The scheduler's options for explaining with `config`: scheduler::optionsFromConfig, with
// what explain changes.
[[nodiscard]] scheduler::Options explainOptions(const config::SchedulerConfiguration& config);

// The `ksched explain --help` text.
[[nodiscard]] std::string explainUsage();

}  // namespace ksched::app
