#include "app/explain_cli.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <memory>

#include <ksched/sim.h>

#include "client/config.h"
#include "client/rest_client.h"
#include "config/command_line.h"
#include "config/scheduler_config.h"
#include "config/wiring.h"
#include "framework/framework.h"
#include "scheduler/explain.h"
#include "scheduler/options_from_config.h"
#include "scheduler/scheduler.h"
#include "sim/explain_group.h"
#include "sim/load.h"

namespace ksched::app {
namespace {

// The pod-group cycle `group` would have now: the real cycle over a copy of the cluster, read
// again with LISTs (as `ksched simulate --kubeconfig` reads it), in memory, with the
// configuration and gates of this explain, without preemption. Nothing is written.
void runGroupCycle(client::RestClient& rest, const config::SchedulerConfiguration& cc,
                   const Registry& outOfTree, const std::string& ns, const std::string& group,
                   scheduler::GroupExplanation& g) {
  sim::Cluster cluster;
  sim::loadFromApiserver(rest, {}, cluster);
  sim::Options options;
  options.config = config::toYaml(cc);
  options.features = cc.featureGates;
  options.preemption = false;
  sim::Simulator simulator(std::move(cluster), options, outOfTree);
  sim::explainGroupCycle(simulator, ns, group, g);
}

}  // namespace

std::string explainUsage() {
  return R"(Usage: ksched explain [-n NAMESPACE] POD [flags]
       kubectl ksched explain [-n NAMESPACE] POD [flags]   (installed as kubectl-ksched)

Why POD is pending, or where it would land and why: every Filter plugin's verdict on every
node (with the shortfall of each resource), every Score plugin's score on every feasible node,
and the nodes a scheduling cycle would pick from. It reads the cluster like the scheduler does
and evaluates with the profile of the pod's schedulerName; it writes nothing.

A pod of a PodGroup (--feature-gates GenericWorkload=true) also gets its group: the policy
(basic, or gang and its minCount), every member's state (bound, assumed, queued, gated) and
what the group's pod-group cycle would do now, run on a copy of the cluster in memory: where
each member would land, how many more minCount needs, each member's reason, and with topology
constraints the placements tried and the one chosen.

Flags:
  -n, --namespace string   the pod's namespace (default "default")
      --node string        evaluate this node only
      --config string      KubeSchedulerConfiguration with the profiles (default: the
                           default profile)
      --kubeconfig string  how to reach the cluster (default: the --config file's
                           clientConnection.kubeconfig, $KUBECONFIG, ~/.kube/config)
      --feature-gates string
                           Name=true,Other=false, as the scheduler runs with them
  -o, --output string      table (default) or json
  -h, --help               this help
)";
}

scheduler::Options explainOptions(const config::SchedulerConfiguration& config) {
  scheduler::Options opts = scheduler::optionsFromConfig(config);
  // Explain runs the profiles' plugins and binds nothing. One binder thread is enough, and the
  // extenders are left out: explain does not call them, and building them would read TLS files
  // that may exist only where the daemon runs.
  opts.binderThreads = 1;
  opts.extenders.clear();
  return opts;
}

int runExplain(const std::vector<std::string>& args, const Registry& registry,
               const Registry& outOfTree) {
  std::string ns = "default", pod, node, configFile, kubeconfig, output = "table", gates;
  std::vector<std::string> errors;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string a = args[i];
    if (a == "-h" || a == "--help") {
      std::fputs(explainUsage().c_str(), stdout);
      return 0;
    }
    if (a.empty() || a[0] != '-') {
      if (!pod.empty()) errors.push_back("unexpected argument: " + a);
      pod = a;
      continue;
    }
    std::string name = a, value;
    bool hasValue = false;
    if (auto eq = a.find('='); eq != std::string::npos) {
      name = a.substr(0, eq);
      value = a.substr(eq + 1);
      hasValue = true;
    }
    std::string* dst = name == "-n" || name == "--namespace" ? &ns
                       : name == "--node"                    ? &node
                       : name == "--config"                  ? &configFile
                       : name == "--kubeconfig"              ? &kubeconfig
                       : name == "-o" || name == "--output"  ? &output
                       : name == "--feature-gates"           ? &gates
                                                             : nullptr;
    if (dst == nullptr) {
      errors.push_back("unknown flag: " + name);
      continue;
    }
    if (!hasValue) {
      if (i + 1 >= args.size()) {
        errors.push_back(name + ": needs a value");
        continue;
      }
      value = args[++i];
    }
    *dst = value;
  }
  if (pod.empty()) errors.emplace_back("the pod's name is missing");
  if (output != "table" && output != "json") {
    errors.push_back("--output: \"" + output + "\" is not table or json");
  }
  if (!errors.empty()) {
    for (const auto& e : errors) std::fprintf(stderr, "%s\n", e.c_str());
    std::fputs("Run 'ksched explain --help' for the flags.\n", stderr);
    return 1;
  }
  // The command's own messages go to stderr; the scheduler's logs are not for its user.
  spdlog::set_level(spdlog::level::err);

  config::CommandLine flags;
  flags.configFile = configFile;
  if (auto err = gates.empty() ? std::nullopt : flags.featureGates.set(gates)) {
    std::fprintf(stderr, "invalid argument \"%s\" for \"--feature-gates\" flag: %s\n",
                 gates.c_str(), err->c_str());
    return 1;
  }
  std::vector<std::string> warnings;
  auto loaded = config::resolveConfiguration(flags, config::wiringCheck(registry), warnings);
  if (!loaded.ok()) {
    std::fprintf(stderr, "invalid configuration%s%s:\n", configFile.empty() ? "" : " in ",
                 configFile.c_str());
    for (const auto& e : loaded.errors) std::fprintf(stderr, "  %s\n", e.c_str());
    return 1;
  }
  const config::SchedulerConfiguration& cc = *loaded.config;
  client::Config cfg;
  try {
    cfg =
        client::resolveConfig(kubeconfig.empty() ? cc.clientConnection.kubeconfig : kubeconfig, "");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  cfg.qps = std::max<double>(cc.clientConnection.qps, 50);
  cfg.burst = std::max(cc.clientConnection.burst, 100);
  cfg.userAgent = "ksched-explain";
  client::RestClient::Options clientOptions;
  clientOptions.maxRetries = 2;
  std::unique_ptr<client::RestClient> restClient;
  try {
    restClient = std::make_unique<client::RestClient>(cfg, clientOptions);
  } catch (const client::ConfigError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  client::RestClient& rest = *restClient;

  int rc = 0;
  try {
    scheduler::Scheduler sched(rest, rest, registry, explainOptions(cc));
    if (!sched.startInformers(std::chrono::seconds(60))) {
      std::fprintf(stderr, "could not read the cluster at %s: %s\n", cfg.server.c_str(),
                   sched.syncError().c_str());
      sched.stop();
      return 1;
    }
    try {
      scheduler::Explanation e = sched.explain(ns, pod, node);
      if (e.group) {
        const std::string group = e.group->podGroup.substr(ns.size() + 1);
        try {
          runGroupCycle(rest, cc, outOfTree, ns, group, *e.group);
        } catch (const std::exception& ex) {
          e.group->noCycle = std::string("the cycle could not be run on a copy: ") + ex.what();
        }
      }
      const std::string text =
          output == "json" ? scheduler::toJson(e).dump(2) + "\n" : scheduler::toTable(e);
      std::fputs(text.c_str(), stdout);
    } catch (const scheduler::ExplainError& e) {
      std::fprintf(stderr, "%s\n", e.what());
      rc = 1;
    }
    sched.stop();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return rc;
}

}  // namespace ksched::app
