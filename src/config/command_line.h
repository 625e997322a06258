// kube-scheduler's command line, for ksched: flag parsing and the rules by which flags and the
// --config file combine into the configuration the daemon runs with.
//
// Flags take "--name value" or "--name=value" (one or two leading dashes); boolean flags take
// only "--name" or "--name=true|false", like pflag.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/scheduler_config.h"

namespace ksched::config {

// The HTTPS endpoint settings (/healthz, /metrics, /configz): parsed here, served elsewhere.
struct ServingOptions {
  std::string bindAddress = "0.0.0.0";
  int securePort = 10259;  // 0: no HTTPS endpoint
  std::string certDir;     // where a self-signed pair goes when no certificate is given
  std::string tlsCertFile;
  std::string tlsPrivateKeyFile;
};

struct CommandLine {
  bool help = false;
  bool version = false;
  std::string configFile;     // --config
  std::string writeConfigTo;  // --write-config-to: write the effective config and exit
  std::string master;         // --master: overrides the kubeconfig's server
  int verbosity = 0;          // -v
  ServingOptions serving;
  // Flags that feed the configuration; nullopt when not given.
  std::optional<std::string> kubeconfig;         // --kubeconfig
  std::optional<double> kubeApiQps;              // --kube-api-qps
  std::optional<int32_t> kubeApiBurst;           // --kube-api-burst
  std::optional<bool> leaderElect;               // --leader-elect
  std::optional<Duration> leaseDuration;         // --leader-elect-lease-duration
  std::optional<Duration> renewDeadline;         // --leader-elect-renew-deadline
  std::optional<Duration> retryPeriod;           // --leader-elect-retry-period
  std::optional<std::string> resourceLock;       // --leader-elect-resource-lock
  std::optional<std::string> resourceName;       // --leader-elect-resource-name
  std::optional<std::string> resourceNamespace;  // --leader-elect-resource-namespace
};

struct ParsedCommandLine {
  CommandLine flags;
  std::vector<std::string> errors;  // "--flag: what is wrong" / "unknown flag: --x"
};

// `args` without the program name. Stops at --help/--version.
[[nodiscard]] ParsedCommandLine parseCommandLine(const std::vector<std::string>& args);

// The --help text.
[[nodiscard]] std::string usage();

// The configuration kube-scheduler would run with, in its order: the --config file (or the
// defaults), then the leader election flags; --kubeconfig, --kube-api-qps and --kube-api-burst
// (deprecated upstream) only when there is no --config, otherwise they are ignored with a
// warning. Then validateConfig() with `wiring`.
[[nodiscard]] LoadResult resolveConfiguration(const CommandLine& flags, const WiringCheck& wiring,
                                              std::vector<std::string>& warnings);

}  // namespace ksched::config
