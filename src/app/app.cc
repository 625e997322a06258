// ksched::app::run: the binary's entry. Dispatches `ksched simulate`, `ksched advise` and
// `ksched explain` (and the kubectl plugin name), reads the flags and the --config file, checks
// the whole configuration before anything is contacted, and hands it to the daemon (daemon.h).
#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <ksched/api/features.h>
#include <ksched/app.h>

#include "app/advise_cli.h"
#include "app/daemon.h"
#include "app/explain_cli.h"
#include "app/simulate_cli.h"
#include "client/config.h"
#include "client/rest_client.h"
#include "config/command_line.h"
#include "config/policy.h"
#include "config/scheduler_config.h"
#include "config/wiring.h"
#include "plugins/registry.h"
#include "server/server.h"

namespace ksched::app {
namespace {

// `ksched simulate`, `ksched advise`, `ksched explain`, and the binary installed as kubectl-ksched, a kubectl
// plugin with explain as its one command: their exit code; nullopt for the daemon.
std::optional<int> runCommand(int argc, char** argv, const Registry& registry,
                              const Registry& outOfTree) {
  if (argc >= 2 && std::string_view(argv[1]) == "simulate") {
    return runSimulate(std::vector<std::string>(argv + 2, argv + argc), outOfTree);
  }
  if (argc >= 2 && std::string_view(argv[1]) == "advise") {
    return runAdvise(std::vector<std::string>(argv + 2, argv + argc), outOfTree);
  }
  if (argc >= 2 && std::string_view(argv[1]) == "explain") {
    return runExplain(std::vector<std::string>(argv + 2, argv + argc), registry, outOfTree);
  }
  if (std::string_view prog(argv[0]); prog.substr(prog.rfind('/') + 1) == "kubectl-ksched") {
    const bool help = argc >= 2 && std::string_view(argv[1]) == "--help";
    std::fputs(explainUsage().c_str(), help ? stdout : stderr);
    return help ? 0 : 1;
  }
  return std::nullopt;
}

// Checks --feature-gates (the configuration carries them on: config::resolveConfiguration) and
// applies -v. False, with the errors printed, when the gates cannot be run with.
bool applyGatesAndLogging(const config::CommandLine& flags) {
  std::vector<std::string> gateErrors;
  std::vector<std::string> gateWarnings;
  flags.featureGates.check(gateErrors, gateWarnings);
  if (!gateErrors.empty()) {
    for (const auto& e : gateErrors) std::fprintf(stderr, "%s\n", e.c_str());
    return false;
  }
  spdlog::set_pattern("%^%L%m%d %H:%M:%S.%f%$ %t %v");
  spdlog::set_level(flags.verbosity >= 6   ? spdlog::level::trace
                    : flags.verbosity >= 2 ? spdlog::level::debug
                                           : spdlog::level::info);
  if (const std::string changed = flags.featureGates.changed(); !changed.empty()) {
    spdlog::info("feature gates: {}", changed);
  }
  for (const auto& w : gateWarnings) spdlog::warn("{}", w);
  return true;
}

// --policy-configmap: read once, before anything else starts (as v1.20, no retry loop).
std::string readPolicyConfigMap(const std::string& master,
                                const config::ClientConnectionConfiguration& connection,
                                const std::string& ns, const std::string& name) {
  client::Config cfg = client::resolveConfig(connection.kubeconfig, master);
  client::RestClient rest(cfg);
  nlohmann::json cm;
  try {
    cm = rest.get("/api/v1/namespaces/" + ns + "/configmaps/" + name);
  } catch (const client::ApiError& e) {
    throw std::runtime_error(std::string("couldn't get policy config map: ") + e.what());
  }
  const auto data = cm.value("data", nlohmann::json::object());
  auto it = data.find(config::kPolicyConfigMapKey);
  if (it == data.end() || !it->is_string()) {
    throw std::runtime_error("missing policy config map value at key \"" +
                             std::string(config::kPolicyConfigMapKey) + "\"");
  }
  return it->get<std::string>();
}

// The configuration the flags and the --config file give, validated with the plugins of
// `registry`; nullopt, with the errors printed, when it is invalid.
std::optional<config::SchedulerConfiguration> loadConfiguration(const config::CommandLine& flags,
                                                                const Registry& registry) {
  std::vector<std::string> warnings;
  auto loaded =
      config::resolveConfiguration(flags, config::wiringCheck(registry), warnings,
                                   [&flags](const config::ClientConnectionConfiguration& connection,
                                            const std::string& ns, const std::string& name) {
                                     return readPolicyConfigMap(flags.master, connection, ns, name);
                                   });
  for (const auto& w : warnings) spdlog::warn("{}", w);
  if (!loaded.ok()) {
    std::fprintf(stderr, "invalid configuration%s%s:\n", flags.configFile.empty() ? "" : " in ",
                 flags.configFile.c_str());
    for (const auto& e : loaded.errors) std::fprintf(stderr, "  %s\n", e.c_str());
    return std::nullopt;
  }
  for (const auto& note : loaded.config->notes) {
    spdlog::info("configuration{}{}: {}", note.pointer.empty() ? "" : " ", note.pointer, note.text);
  }
  return std::move(loaded.config);
}

// --write-config-to: the effective configuration, and the exit code.
int writeConfig(const std::string& path, const config::SchedulerConfiguration& config) {
  std::ofstream out(path, std::ios::trunc);
  out << config::toYaml(config);
  out.close();
  if (!out) {
    std::fprintf(stderr, "cannot write %s: %s\n", path.c_str(), std::strerror(errno));
    return 1;
  }
  spdlog::info("wrote configuration to {}", path);
  return 0;
}

}  // namespace

int run(int argc, char** argv, const Registry& outOfTree) {
  Registry registry = plugins::inTreeRegistry();
  try {
    registry.merge(outOfTree);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "out-of-tree plugins: %s\n", e.what());
    return 1;
  }
  if (auto rc = runCommand(argc, argv, registry, outOfTree)) return *rc;
  const auto parsed = config::parseCommandLine(std::vector<std::string>(argv + 1, argv + argc));
  const config::CommandLine& flags = parsed.flags;
  if (flags.help) {
    std::fputs(config::usage().c_str(), stdout);
    return 0;
  }
  if (flags.version) {
    std::puts("ksched v" KSCHED_VERSION);
    return 0;
  }
  if (!parsed.errors.empty()) {
    for (const auto& e : parsed.errors) std::fprintf(stderr, "%s\n", e.c_str());
    std::fputs("Run 'ksched --help' for the flags.\n", stderr);
    return 1;
  }
  if (!applyGatesAndLogging(flags)) return 1;

  // The whole configuration is checked before anything is contacted.
  const std::optional<config::SchedulerConfiguration> componentConfig =
      loadConfiguration(flags, registry);
  if (!componentConfig) return 1;
  if (!flags.writeConfigTo.empty()) return writeConfig(flags.writeConfigTo, *componentConfig);
  const config::LeaderElectionConfiguration& leaderElection = componentConfig->leaderElection;
  const config::ServingOptions& serving = flags.serving;
  if (auto err = server::checkTlsOptions(serving); serving.securePort != 0 && !err.empty()) {
    std::fprintf(stderr, "%s\n", err.c_str());
    return 1;
  }
  spdlog::debug("leader election: elect={} lease={} renew={} retry={} lock={}/{}/{}",
                leaderElection.leaderElect, config::formatDuration(leaderElection.leaseDuration),
                config::formatDuration(leaderElection.renewDeadline),
                config::formatDuration(leaderElection.retryPeriod), leaderElection.resourceLock,
                leaderElection.resourceNamespace, leaderElection.resourceName);
  spdlog::debug("secure serving: {}:{} (cert-dir \"{}\", cert \"{}\")", serving.bindAddress,
                serving.securePort, serving.certDir, serving.tlsCertFile);
  return runDaemon(flags, *componentConfig, registry);
}

}  // namespace ksched::app
