#include "config/command_line.h"

#include <arpa/inet.h>

#include <cstdlib>
#include <functional>
#include <map>
#include <stdexcept>

#include "config/policy.h"

namespace ksched::config {
namespace {

std::optional<long long> parseInteger(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || end != s.c_str() + s.size()) return std::nullopt;
  return v;
}

std::optional<double> parseNumber(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (errno != 0 || end != s.c_str() + s.size()) return std::nullopt;
  return v;
}

std::optional<bool> parseBool(const std::string& s) {
  // strconv.ParseBool
  if (s == "1" || s == "t" || s == "T" || s == "true" || s == "TRUE" || s == "True") return true;
  if (s == "0" || s == "f" || s == "F" || s == "false" || s == "FALSE" || s == "False") {
    return false;
  }
  return std::nullopt;
}

bool isIP(const std::string& s) {
  unsigned char buf[16];
  return inet_pton(AF_INET, s.c_str(), buf) == 1 || inet_pton(AF_INET6, s.c_str(), buf) == 1;
}

}  // namespace

std::string usage() {
  return R"(Usage: ksched [flags]
       ksched explain [-n NAMESPACE] POD [flags]   why a pod is pending (ksched explain --help)
       ksched simulate -f CLUSTER.yaml [flags]    what the scheduler would do, offline (ksched simulate --help)

A Kubernetes scheduler, drop-in compatible with kube-scheduler.

Configuration:
  --config string                     path to a KubeSchedulerConfiguration file
                                      (kubescheduler.config.k8s.io/v1, v1beta3, or the
                                      v1beta2/v1beta1 of older clusters)
  --write-config-to string            write the effective configuration to this file and exit
                                      (as v1; a converted v1beta1/v1beta2 file or Policy with
                                      comments where current upstream differs)
  --master string                     the address of the Kubernetes API server (overrides the
                                      kubeconfig)
  --kubeconfig string                 DEPRECATED: path to a kubeconfig (ignored with --config;
                                      use clientConnection.kubeconfig)
  --kube-api-qps float                DEPRECATED: QPS towards kube-apiserver (default 50;
                                      ignored with --config)
  --kube-api-burst int                DEPRECATED: burst towards kube-apiserver (default 100;
                                      ignored with --config)
  --scheduler-name string             DEPRECATED: the profile's schedulerName (default
                                      "default-scheduler"; ignored with --config)

Legacy Policy (kube-scheduler v1.10-v1.22; docs/migrating.md):
  --policy-config-file string         DEPRECATED: file with a scheduler Policy; used when
                                      --policy-configmap is not given or with
                                      --use-legacy-policy-config
  --policy-configmap string           DEPRECATED: ConfigMap holding the Policy under the key
                                      "policy.cfg", read at start-up
  --policy-configmap-namespace string DEPRECATED: its namespace (default "kube-system")
  --use-legacy-policy-config          DEPRECATED: read --policy-config-file, ignore
                                      --policy-configmap
  A Policy replaces the plugins of every profile; a --config file that sets profiles of its
  own cannot be combined with it. --write-config-to writes the equivalent v1 configuration.

Secure serving:
  --bind-address ip                   address to serve HTTPS on (default 0.0.0.0)
  --secure-port int                   HTTPS port, 0 for none (default 10259)
  --cert-dir string                   directory for a self-signed certificate when
                                      --tls-cert-file/--tls-private-key-file are not given
  --tls-cert-file string              x509 certificate (PEM) for HTTPS
  --tls-private-key-file string       private key (PEM) matching --tls-cert-file
  --tls-min-version string            VersionTLS12 (default) or VersionTLS13; VersionTLS10 and
                                      VersionTLS11 are accepted as upstream
  --tls-cipher-suites strings         TLS 1.2 cipher suites by IANA name, comma-separated
                                      (default: OpenSSL's secure defaults)

Authentication (who calls the HTTPS port; as kube-scheduler's delegated authentication):
  --authentication-kubeconfig string  where TokenReviews go and the client CA is looked up
                                      (default: the scheduler's own connection)
  --authentication-skip-lookup        do not read the client CA and request-header settings
                                      from kube-system/extension-apiserver-authentication
  --authentication-tolerate-lookup-failure
                                      start even if that lookup fails (default true)
  --authentication-token-webhook-cache-ttl duration
                                      how long TokenReview answers are cached (default 10s)
  --client-ca-file string             CA bundle (PEM) for client certificates: the CN is the
                                      user, the O entries its groups
  --requestheader-client-ca-file string
                                      CA bundle of the front proxy allowed to set the
                                      --requestheader-*-headers
  --requestheader-allowed-names strings
                                      client certificate common names allowed to set them
                                      (default: any signed by that CA)
  --requestheader-username-headers strings    (default x-remote-user)
  --requestheader-group-headers strings       (default x-remote-group)
  --requestheader-extra-headers-prefix strings
                                              (default x-remote-extra-)

Authorization (what a caller may read; SubjectAccessReview on path and verb):
  --authorization-kubeconfig string   where SubjectAccessReviews go (default: the scheduler's
                                      own connection)
  --authorization-always-allow-paths strings
                                      paths served without authorization; a trailing * matches
                                      a prefix (default /healthz,/readyz,/livez)
  --authorization-webhook-cache-authorized-ttl duration
                                      how long an allowed review is cached (default 10s)
  --authorization-webhook-cache-unauthorized-ttl duration
                                      how long a denied review is cached (default 10s)

Leader election (override the --config file):
  --leader-elect                      take part in leader election (default true)
  --leader-elect-lease-duration duration       (default 15s)
  --leader-elect-renew-deadline duration       (default 10s)
  --leader-elect-retry-period duration         (default 2s)
  --leader-elect-resource-lock string          (default "leases")
  --leader-elect-resource-name string          (default "kube-scheduler")
  --leader-elect-resource-namespace string     (default "kube-system")

Explain:
  --diagnosis-annotation              each unschedulable attempt writes a compact diagnosis
                                      (reasons with counts and example nodes, the closest
                                      nodes with their shortfall) into the pod's annotation
                                      ksched.io/diagnosis, in the PodScheduled patch

Shutdown:
  --shutdown-grace-period duration    on SIGTERM, how long in-flight bindings and queued events
                                      may still take; then requests still going are cut off,
                                      the events left are dropped (counted in the log and in
                                      scheduler_events_dropped_total), the Lease is released
                                      and ksched exits 0 (default 5s)

Other:
  -v, --v int                         log verbosity (0 quiet ... 4 per-pod ... 10 everything)
  --version                           print the version and exit
  -h, --help                          this help
)" + featureGatesUsage();
}

std::string featureGatesUsage() {
  std::string out = R"(
Feature gates (docs/compatibility.md says what each does in ksched):
  --feature-gates mapStringBool       A set of key=value pairs that describe feature gates for
                                      alpha/experimental features. Options are:
)";
  for (const auto& line : features::knownFeatures()) {
    out += "                                      " + line + "\n";
  }
  out += R"(                                      GA gates are accepted as upstream; a locked one
                                      cannot be set to the other value.
)";
  return out;
}

namespace {

using Setter = std::function<void(const std::string& flag, const std::string& value)>;
using Setters = std::map<std::string, Setter>;

// Setters of the common kinds of flag: how a value becomes a field, or an error.
class Values {
 public:
  explicit Values(std::vector<std::string>& errors) : errs_(errors) {}

  static Setter str(std::string& dst) {
    return [&dst](const std::string&, const std::string& v) { dst = v; };
  }
  static Setter optStr(std::optional<std::string>& dst) {
    return [&dst](const std::string&, const std::string& v) { dst = v; };
  }
  Setter dur(std::optional<Duration>& dst) {
    return [&dst, this](const std::string& flag, const std::string& v) {
      if (auto d = parseDuration(v)) {
        dst = *d;
      } else {
        errs_.push_back(flag + ": invalid duration \"" + v + "\"");
      }
    };
  }
  // A duration that may not be negative.
  Setter required(Duration& dst) {
    return [&dst, this](const std::string& flag, const std::string& v) {
      if (auto d = parseDuration(v); d && d->count() >= 0) {
        dst = *d;
      } else {
        errs_.push_back(flag + ": invalid duration \"" + v + "\"");
      }
    };
  }
  // pflag's stringSlice: comma-separated; the first use replaces the default, later uses append.
  Setter strings(std::vector<std::string>& dst) {
    return [&dst, this](const std::string& flag, const std::string& v) {
      if (!sliceSeen_[flag]) dst.clear();
      sliceSeen_[flag] = true;
      size_t start = 0;
      while (start <= v.size()) {
        size_t comma = v.find(',', start);
        if (comma == std::string::npos) comma = v.size();
        std::string item = v.substr(start, comma - start);
        if (!item.empty()) dst.push_back(std::move(item));
        start = comma + 1;
      }
    };
  }
  std::vector<std::string>& errors() { return errs_; }

 private:
  std::vector<std::string>& errs_;
  std::map<std::string, bool> sliceSeen_;
};

// The HTTPS endpoint's flags, with its delegated authentication and authorization.
void addServingFlags(Setters& out, ServingOptions& s, Values& v) {
  auto& errs = v.errors();
  auto& authn = s.authentication;
  auto& authz = s.authorization;
  out.insert({
      {"cert-dir", Values::str(s.certDir)},
      {"tls-cert-file", Values::str(s.tlsCertFile)},
      {"tls-private-key-file", Values::str(s.tlsPrivateKeyFile)},
      {"tls-min-version",
       [&s, &errs](const std::string& flag, const std::string& value) {
         if (value == "VersionTLS10" || value == "VersionTLS11" || value == "VersionTLS12" ||
             value == "VersionTLS13") {
           s.tlsMinVersion = value;
         } else {
           errs.push_back(flag + ": unknown TLS version \"" + value +
                          "\" (allowed: VersionTLS10, VersionTLS11, VersionTLS12, VersionTLS13)");
         }
       }},
      {"tls-cipher-suites", v.strings(s.tlsCipherSuites)},
      {"authentication-kubeconfig", Values::str(authn.kubeconfig)},
      {"authentication-token-webhook-cache-ttl", v.required(authn.tokenCacheTTL)},
      {"client-ca-file", Values::str(authn.clientCAFile)},
      {"requestheader-client-ca-file", Values::str(authn.requestheaderClientCAFile)},
      {"requestheader-allowed-names", v.strings(authn.requestheaderAllowedNames)},
      {"requestheader-username-headers", v.strings(authn.requestheaderUsernameHeaders)},
      {"requestheader-group-headers", v.strings(authn.requestheaderGroupHeaders)},
      {"requestheader-extra-headers-prefix", v.strings(authn.requestheaderExtraHeadersPrefix)},
      {"authorization-kubeconfig", Values::str(authz.kubeconfig)},
      {"authorization-always-allow-paths", v.strings(authz.alwaysAllowPaths)},
      {"authorization-webhook-cache-authorized-ttl", v.required(authz.allowCacheTTL)},
      {"authorization-webhook-cache-unauthorized-ttl", v.required(authz.denyCacheTTL)},
      {"bind-address",
       [&s, &errs](const std::string& flag, const std::string& value) {
         if (isIP(value)) {
           s.bindAddress = value;
         } else {
           errs.push_back(flag + ": \"" + value + "\" is not a valid IP address");
         }
       }},
      {"secure-port",
       [&s, &errs](const std::string& flag, const std::string& value) {
         auto n = parseInteger(value);
         if (!n) {
           errs.push_back(flag + ": \"" + value + "\" is not an integer");
         } else if (*n < 0 || *n > 65535) {
           errs.push_back(flag + " " + value +
                          " must be between 0 and 65535, inclusive. 0 for turning off secure "
                          "port");
         } else {
           s.securePort = static_cast<int>(*n);
         }
       }},
  });
}

// The flags of the configuration, the legacy Policy, the client, leader election, the feature
// gates and logging.
void addSchedulerFlags(Setters& out, CommandLine& f, Values& v) {
  auto& errs = v.errors();
  out.insert({
      {"config", Values::str(f.configFile)},
      {"write-config-to", Values::str(f.writeConfigTo)},
      {"policy-config-file", Values::str(f.policyConfigFile)},
      {"policy-configmap", Values::str(f.policyConfigMap)},
      {"policy-configmap-namespace",
       [&f](const std::string&, const std::string& value) {
         f.policyConfigMapNamespace = value.empty() ? "kube-system" : value;
       }},
      {"scheduler-name", Values::optStr(f.schedulerName)},
      {"master", Values::str(f.master)},
      {"kubeconfig", Values::optStr(f.kubeconfig)},
      {"shutdown-grace-period", v.required(f.shutdownGracePeriod)},
      {"leader-elect-lease-duration", v.dur(f.leaseDuration)},
      {"leader-elect-renew-deadline", v.dur(f.renewDeadline)},
      {"leader-elect-retry-period", v.dur(f.retryPeriod)},
      {"leader-elect-resource-lock", Values::optStr(f.resourceLock)},
      {"leader-elect-resource-name", Values::optStr(f.resourceName)},
      {"leader-elect-resource-namespace", Values::optStr(f.resourceNamespace)},
      {"kube-api-qps",
       [&f, &errs](const std::string& flag, const std::string& value) {
         if (auto n = parseNumber(value)) {
           f.kubeApiQps = *n;
         } else {
           errs.push_back(flag + ": \"" + value + "\" is not a number");
         }
       }},
      {"kube-api-burst",
       [&f, &errs](const std::string& flag, const std::string& value) {
         auto n = parseInteger(value);
         if (n && *n >= INT32_MIN && *n <= INT32_MAX) {
           f.kubeApiBurst = static_cast<int32_t>(*n);
         } else {
           errs.push_back(flag + ": \"" + value + "\" is not an integer");
         }
       }},
      {"feature-gates",
       [&f, &errs](const std::string&, const std::string& value) {
         if (auto err = f.featureGates.set(value)) {
           errs.push_back("invalid argument \"" + value +
                          "\" for \"--feature-gates\" flag: " + *err);
         }
       }},
      {"v",
       [&f, &errs](const std::string& flag, const std::string& value) {
         auto n = parseInteger(value);
         if (n && *n >= 0 && *n <= 100) {
           f.verbosity = static_cast<int>(*n);
         } else {
           errs.push_back(flag + ": \"" + value + "\" is not an integer");
         }
       }},
  });
}

std::map<std::string, std::function<void(bool)>> booleanFlags(CommandLine& f) {
  auto& authn = f.serving.authentication;
  return {
      {"leader-elect", [&f](bool v) { f.leaderElect = v; }},
      {"diagnosis-annotation", [&f](bool v) { f.diagnosisAnnotation = v; }},
      {"use-legacy-policy-config", [&f](bool v) { f.useLegacyPolicyConfig = v; }},
      {"authentication-skip-lookup", [&authn](bool v) { authn.skipLookup = v; }},
      {"authentication-tolerate-lookup-failure",
       [&authn](bool v) { authn.tolerateLookupFailure = v; }},
  };
}

// What the flags say together that none says alone.
void checkCombinations(const CommandLine& f, std::vector<std::string>& errs) {
  if (f.useLegacyPolicyConfig && f.policyConfigFile.empty()) {
    errs.push_back("--policy-config-file: required when --use-legacy-policy-config is true");
  }
  if (f.serving.tlsCertFile.empty() != f.serving.tlsPrivateKeyFile.empty()) {
    errs.push_back("--tls-cert-file and --tls-private-key-file must be given together");
  }
  for (const auto& p : f.serving.authorization.alwaysAllowPaths) {
    if (auto star = p.find('*'); star != std::string::npos && star + 1 != p.size()) {
      errs.push_back("--authorization-always-allow-paths: \"" + p +
                     "\": only a trailing * is allowed");
    }
  }
}

}  // namespace

ParsedCommandLine parseCommandLine(const std::vector<std::string>& args) {
  ParsedCommandLine out;
  CommandLine& f = out.flags;
  auto& errs = out.errors;
  Values values(errs);
  Setters valued;
  addSchedulerFlags(valued, f, values);
  addServingFlags(valued, f.serving, values);
  const auto booleans = booleanFlags(f);

  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    std::string name = a;
    std::optional<std::string> value;
    if (auto eq = a.find('='); eq != std::string::npos) {
      name = a.substr(0, eq);
      value = a.substr(eq + 1);
    }
    if (name.size() < 2 || name.front() != '-') {
      errs.push_back("unexpected argument: " + a);
      continue;
    }
    while (!name.empty() && name.front() == '-') name.erase(0, 1);
    const std::string flag = "--" + name;
    if (name == "help" || name == "h") {
      f.help = true;
      return out;
    }
    if (name == "version") {
      f.version = true;
      return out;
    }
    if (auto b = booleans.find(name); b != booleans.end()) {
      if (!value) {
        b->second(true);
      } else if (auto v = parseBool(*value)) {
        b->second(*v);
      } else {
        errs.push_back(flag + ": \"" + *value + "\" is not a boolean");
      }
      continue;
    }
    auto it = valued.find(name);
    if (it == valued.end()) {
      errs.push_back("unknown flag: " + a.substr(0, a.find('=')));
      continue;
    }
    if (!value) {
      if (i + 1 >= args.size()) {
        errs.push_back(flag + ": needs a value");
        continue;
      }
      value = args[++i];
    }
    it->second(name == "v" ? "-v" : flag, *value);
  }
  checkCombinations(f, errs);
  return out;
}

LoadResult resolveConfiguration(const CommandLine& flags, const WiringCheck& wiring,
                                std::vector<std::string>& warnings,
                                const PolicyConfigMapReader& readConfigMap) {
  LoadResult r;
  bool ownProfiles =
      false;  // the --config file sets profiles (upstream emptySchedulerProfileConfig)
  if (flags.configFile.empty()) {
    r.config = defaultConfiguration();
    auto& cc = r.config->clientConnection;
    if (flags.kubeconfig) cc.kubeconfig = *flags.kubeconfig;
    if (flags.kubeApiQps) cc.qps = static_cast<float>(*flags.kubeApiQps);
    if (flags.kubeApiBurst) cc.burst = *flags.kubeApiBurst;
    if (flags.schedulerName) r.config->profiles[0].schedulerName = *flags.schedulerName;
  } else {
    r = decodeConfigFile(flags.configFile);
    if (!r.ok()) return r;
    ownProfiles = r.config->customProfiles;
    for (const auto& [given, name] :
         {std::pair{flags.kubeconfig.has_value(), "--kubeconfig"},
          std::pair{flags.kubeApiQps.has_value(), "--kube-api-qps"},
          std::pair{flags.kubeApiBurst.has_value(), "--kube-api-burst"},
          std::pair{flags.schedulerName.has_value(), "--scheduler-name"}}) {
      if (given) {
        warnings.push_back(std::string(name) +
                           " is ignored because --config is given; set it in the file's "
                           "clientConnection");
      }
    }
  }
  const bool policyFile = flags.useLegacyPolicyConfig ||
                          (!flags.policyConfigFile.empty() && flags.policyConfigMap.empty());
  if (policyFile || !flags.policyConfigMap.empty()) {
    if (ownProfiles) {
      r.errors.push_back(
          "cannot set a Plugin config and Policy config: the --config file sets profiles; "
          "drop the profiles' plugins and pluginConfig, or the Policy flags");
      r.config.reset();
      return r;
    }
    PolicyResult policy;
    if (policyFile) {
      policy = decodePolicyFile(flags.policyConfigFile);
    } else {
      const std::string source = "ConfigMap " + flags.policyConfigMapNamespace + "/" +
                                 flags.policyConfigMap + " key " + std::string(kPolicyConfigMapKey);
      try {
        if (!readConfigMap) throw std::runtime_error("no API server connection to read it");
        policy = decodePolicy(readConfigMap(r.config->clientConnection,
                                            flags.policyConfigMapNamespace, flags.policyConfigMap),
                              source);
      } catch (const std::exception& e) {
        policy.errors.push_back(source + ": " + e.what());
      }
    }
    if (policy.policy) {
      policy.errors = applyPolicy(
          *policy.policy,
          policyFile ? flags.policyConfigFile
                     : "ConfigMap " + flags.policyConfigMapNamespace + "/" + flags.policyConfigMap,
          *r.config);
    }
    if (!policy.errors.empty()) {
      r.errors = std::move(policy.errors);
      r.config.reset();
      return r;
    }
  }
  auto& le = r.config->leaderElection;
  if (flags.leaderElect) le.leaderElect = *flags.leaderElect;
  if (flags.leaseDuration) le.leaseDuration = *flags.leaseDuration;
  if (flags.renewDeadline) le.renewDeadline = *flags.renewDeadline;
  if (flags.retryPeriod) le.retryPeriod = *flags.retryPeriod;
  if (flags.resourceLock) le.resourceLock = *flags.resourceLock;
  if (flags.resourceName) le.resourceName = *flags.resourceName;
  if (flags.resourceNamespace) le.resourceNamespace = *flags.resourceNamespace;
  r.config->featureGates = flags.featureGates;
  r.errors = validateConfig(*r.config, wiring);
  if (!r.errors.empty()) r.config.reset();
  return r;
}

}  // namespace ksched::config
