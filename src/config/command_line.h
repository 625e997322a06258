// kube-scheduler's command line, for ksched: flag parsing and the rules by which flags and the
// --config file combine into the configuration the daemon runs with.
//
// Flags take "--name value" or "--name=value" (one or two leading dashes); boolean flags take
// only "--name" or "--name=true|false", like pflag.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <ksched/api/features.h>

#include "config/scheduler_config.h"

namespace ksched::config {

// Who may call the HTTPS endpoint, as kube-scheduler's delegated authentication: bearer tokens
// checked by TokenReview, client certificates against a client CA, and the front-proxy's
// request headers. Defaults are kube-scheduler's.
struct AuthenticationOptions {
  // Where TokenReviews (and the in-cluster CA lookup) go; "" = the scheduler's own connection.
  std::string kubeconfig;                              // --authentication-kubeconfig
  bool skipLookup = false;                             // --authentication-skip-lookup
  bool tolerateLookupFailure = true;                   // --authentication-tolerate-lookup-failure
  Duration tokenCacheTTL = std::chrono::seconds(10);   // --authentication-token-webhook-cache-ttl
  std::string clientCAFile;                            // --client-ca-file
  std::string requestheaderClientCAFile;               // --requestheader-client-ca-file
  std::vector<std::string> requestheaderAllowedNames;  // --requestheader-allowed-names
  std::vector<std::string> requestheaderUsernameHeaders = {"x-remote-user"};
  std::vector<std::string> requestheaderGroupHeaders = {"x-remote-group"};
  std::vector<std::string> requestheaderExtraHeadersPrefix = {"x-remote-extra-"};
};

// What an authenticated caller may do, as kube-scheduler's delegated authorization:
// SubjectAccessReview on the non-resource path and verb.
struct AuthorizationOptions {
  // Where SubjectAccessReviews go; "" = the scheduler's own connection.
  std::string kubeconfig;  // --authorization-kubeconfig
  std::vector<std::string> alwaysAllowPaths = {"/healthz", "/readyz", "/livez"};
  Duration allowCacheTTL =
      std::chrono::seconds(10);  // --authorization-webhook-cache-authorized-ttl
  Duration denyCacheTTL =
      std::chrono::seconds(10);  // --authorization-webhook-cache-unauthorized-ttl
};

// The HTTPS endpoint settings (/healthz, /metrics, /configz): parsed here, served elsewhere.
struct ServingOptions {
  std::string bindAddress = "0.0.0.0";
  int securePort = 10259;  // 0: no HTTPS endpoint
  std::string certDir;     // where a self-signed pair goes when no certificate is given
  std::string tlsCertFile;
  std::string tlsPrivateKeyFile;
  std::string tlsMinVersion;                 // --tls-min-version: VersionTLS12 when empty
  std::vector<std::string> tlsCipherSuites;  // --tls-cipher-suites (IANA names); empty = defaults
  AuthenticationOptions authentication;
  AuthorizationOptions authorization;
};

struct CommandLine {
  bool help = false;
  bool version = false;
  std::string configFile;     // --config
  std::string writeConfigTo;  // --write-config-to: write the effective config and exit
  std::string master;         // --master: overrides the kubeconfig's server
  int verbosity = 0;          // -v
  // --diagnosis-annotation: failed attempts leave a compact diagnosis on the pod.
  bool diagnosisAnnotation = false;
  // --shutdown-grace-period: on SIGTERM, the time bindings and queued events still get.
  Duration shutdownGracePeriod = std::chrono::seconds(5);
  ServingOptions serving;
  // --feature-gates, applied over the defaults (the configuration's featureGates, handed down
  // to the scheduler from there).
  features::Gates featureGates;
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
  // The legacy Policy (config/policy.h), as kube-scheduler v1.20's deprecated flags.
  std::string policyConfigFile;                          // --policy-config-file
  std::string policyConfigMap;                           // --policy-configmap
  std::string policyConfigMapNamespace = "kube-system";  // --policy-configmap-namespace
  bool useLegacyPolicyConfig = false;                    // --use-legacy-policy-config
  std::optional<std::string> schedulerName;              // --scheduler-name (without --config)
};

struct ParsedCommandLine {
  CommandLine flags;
  std::vector<std::string> errors;  // "--flag: what is wrong" / "unknown flag: --x"
};

// `args` without the program name. Stops at --help/--version.
[[nodiscard]] ParsedCommandLine parseCommandLine(const std::vector<std::string>& args);

// The --help text.
[[nodiscard]] std::string usage();
// Its feature gate section (also in `ksched simulate --help`).
[[nodiscard]] std::string featureGatesUsage();

// Reads the Policy ConfigMap `ns`/`name` through `connection` and returns the text of its key
// "policy.cfg"; throws std::runtime_error saying what failed.
using PolicyConfigMapReader =
    std::function<std::string(const ClientConnectionConfiguration& connection,
                              const std::string& ns, const std::string& name)>;

// The configuration kube-scheduler would run with, in its order: the --config file (or the
// defaults), then the leader election flags; --kubeconfig, --kube-api-qps, --kube-api-burst and
// --scheduler-name (deprecated upstream) only when there is no --config, otherwise they are
// ignored with a warning. Then the Policy, as v1.20: --use-legacy-policy-config or
// --policy-config-file without --policy-configmap reads the file, else --policy-configmap
// reads the ConfigMap through `readConfigMap`; it replaces the plugins of every profile, and is
// an error when the --config file sets profiles of its own. Then validateConfig() with `wiring`,
// the configuration's featureGates being --feature-gates.
[[nodiscard]] LoadResult resolveConfiguration(const CommandLine& flags, const WiringCheck& wiring,
                                              std::vector<std::string>& warnings,
                                              const PolicyConfigMapReader& readConfigMap = {});

}  // namespace ksched::config
