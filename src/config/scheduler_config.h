// KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1, also read as v1beta3): the file
// given to --config. Loading is decode -> defaults -> validation, as kube-scheduler does it:
//
//   decode      YAML or JSON, strict: unknown fields and wrong types are errors.
//   defaults    upstream v1 SetDefaults_KubeSchedulerConfiguration. Profiles keep their plugins
//               as written; effectiveProfile() merges them into the default plugin set
//               (upstream mergePlugins), which is what runs and what toYaml() prints.
//   validation  upstream ValidateKubeSchedulerConfiguration, then every profile is checked by
//               a WiringCheck (config::wiringCheck(registry), config/wiring.h) so that
//               unknown plugins, bad weights and plugin args errors are reported before
//               anything starts. This layer knows no plugin: the check is passed in.
//
// Every error is one line "<field path>: <what is wrong>", in upstream's field.Error words
// ("parallelism: Invalid value: 0: should be an integer value greater than zero",
// "profiles[1].schedulerName: Duplicate value: \"x\"", "profiles[0].schedulerName: Required
// value"). All errors are collected, not just the first.
//
// Pure functions of their inputs; nothing here touches the network. Thread-compatible.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/profile.h"
#include "util/duration.h"

namespace ksched::config {

inline constexpr std::string_view kGroup = "kubescheduler.config.k8s.io";
inline constexpr std::string_view kApiVersionV1 = "kubescheduler.config.k8s.io/v1";
inline constexpr std::string_view kApiVersionV1beta3 = "kubescheduler.config.k8s.io/v1beta3";
// Read for the clusters that still run them (docs/migrating.md): v1.19-v1.21 and v1.22-v1.25.
inline constexpr std::string_view kApiVersionV1beta2 = "kubescheduler.config.k8s.io/v1beta2";
inline constexpr std::string_view kApiVersionV1beta1 = "kubescheduler.config.k8s.io/v1beta1";
inline constexpr std::string_view kKind = "KubeSchedulerConfiguration";

using Duration = util::Duration;

// component-base LeaderElectionConfiguration with kube-scheduler's defaults.
struct LeaderElectionConfiguration {
  bool leaderElect = true;
  Duration leaseDuration = std::chrono::seconds(15);
  Duration renewDeadline = std::chrono::seconds(10);
  Duration retryPeriod = std::chrono::seconds(2);
  std::string resourceLock = "leases";
  std::string resourceName = "kube-scheduler";
  std::string resourceNamespace = "kube-system";
  bool operator==(const LeaderElectionConfiguration&) const = default;
};

// component-base ClientConnectionConfiguration with kube-scheduler's defaults. ksched always
// speaks JSON; contentType and acceptContentTypes are kept for compatibility only.
struct ClientConnectionConfiguration {
  std::string kubeconfig;
  std::string acceptContentTypes;
  std::string contentType = "application/vnd.kubernetes.protobuf";
  float qps = 50;
  int32_t burst = 100;
  bool operator==(const ClientConnectionConfiguration&) const = default;
};

struct ExtenderTLSConfig {
  bool insecure = false;
  std::string serverName;
  std::string certFile;
  std::string keyFile;
  std::string caFile;
  // Decoded bytes (base64 in the file, like any []byte in Kubernetes JSON).
  std::string certData;
  std::string keyData;
  std::string caData;
  bool operator==(const ExtenderTLSConfig&) const = default;
};

struct ExtenderManagedResource {
  std::string name;
  bool ignoredByScheduler = false;
  bool operator==(const ExtenderManagedResource&) const = default;
};

// An HTTP scheduler extender (called by src/extender/).
struct Extender {
  std::string urlPrefix;
  std::string filterVerb;
  std::string preemptVerb;
  std::string prioritizeVerb;
  int64_t weight = 0;
  std::string bindVerb;
  bool enableHTTPS = false;
  std::optional<ExtenderTLSConfig> tlsConfig;
  Duration httpTimeout{0};  // 0: the extender client's default (5s upstream)
  bool nodeCacheCapable = false;
  std::vector<ExtenderManagedResource> managedResources;
  bool ignorable = false;
  bool operator==(const Extender&) const = default;
};

// Where the v1 form of a converted configuration (v1beta1, v1beta2, a Policy) behaves unlike
// what it was converted from, or unlike current upstream: written as a YAML comment above the
// field at `pointer` (a JSON pointer into toJson(); "" = the top of the file).
struct ConfigNote {
  std::string pointer;
  std::string text;
  bool operator==(const ConfigNote&) const = default;
};

// The effective (defaulted) configuration. Compare two of them with toJson().
struct SchedulerConfiguration {
  // The version the file was written in; toYaml()/toJson() always write v1.
  std::string apiVersion = std::string(kApiVersionV1);
  int32_t parallelism = 16;
  LeaderElectionConfiguration leaderElection;
  ClientConnectionConfiguration clientConnection;
  bool enableProfiling = true;
  bool enableContentionProfiling = true;
  int32_t percentageOfNodesToScore = 0;       // 0: adaptive
  int32_t percentageOfPlacementsToScore = 0;  // v1, pod groups' placements; 0: adaptive
  int64_t podInitialBackoffSeconds = 1;
  int64_t podMaxBackoffSeconds = 10;
  // As written in the file (plugins not merged with the defaults): see effectiveProfile().
  std::vector<Profile> profiles{Profile{}};
  std::vector<Extender> extenders;
  bool delayCacheUntilActive = false;
  // v1beta1/v1beta2 only (not in v1): kept to be named in notes; ksched serves health and
  // metrics on the HTTPS port.
  std::string healthzBindAddress;
  std::string metricsBindAddress;
  // The file sets profiles of its own (more than one, plugins or pluginConfig), which a legacy
  // Policy may not replace.
  bool customProfiles = false;
  // Set when the profiles come from a legacy Policy (config/policy.h): what it was read from.
  std::string policySource;
  // Conversion notes, in order; empty for a v1/v1beta3 file.
  std::vector<ConfigNote> notes;
  // The feature gates the profiles run with (--feature-gates; not a field of the file): the
  // default plugins and the plugins' args follow them. Not written by toJson()/toYaml().
  features::Gates featureGates;
};

// Either a configuration or the errors that prevent one (never both).
struct LoadResult {
  std::optional<SchedulerConfiguration> config;
  std::vector<std::string> errors;
  [[nodiscard]] bool ok() const { return config.has_value(); }
};

// The defaults of `apiVersion` (v1 or v1beta3): one profile "default-scheduler" with the
// default plugins.
[[nodiscard]] SchedulerConfiguration defaultConfiguration(
    std::string_view apiVersion = kApiVersionV1);

// The default plugins of `apiVersion` with `gates`, as multiPoint. v1: defaultMultiPoint();
// v1beta3: the same plugins with SchedulingGates last (upstream appends it behind a feature gate).
[[nodiscard]] PluginSet defaultMultiPointFor(std::string_view apiVersion,
                                             const features::Gates& gates);

// Upstream mergePluginSet: defaults minus the disabled ones ("*": all), a default that is
// enabled again is replaced in place (its weight wins), other enabled plugins follow in order.
// `disabled` of the result lists the custom then the default disabled names.
[[nodiscard]] PluginSet mergePluginSet(const PluginSet& defaults, const PluginSet& custom);

// Decode + defaults only (no semantic validation): errors are syntax, apiVersion/kind, unknown
// fields and wrong types. `sourceName` names the input in syntax errors
// ("<sourceName>: invalid YAML at line 3, column 5: ...").
[[nodiscard]] LoadResult decodeConfig(std::string_view text, const std::string& sourceName);

// What wiring one profile into a framework found: `errors` holds "<field path>: <what is
// wrong>" lines (paths under `path`, multiPoint entries indexed as in the framework profile),
// empty when the profile wires; `queueSort` is then the QueueSort plugin's name.
struct WiringResult {
  std::string errors;
  std::string queueSort;
};
// Wires `profile` (a frameworkProfile()) whose config path is `path`, e.g. "profiles[0]", its
// plugins' args decoded with `gates`.
using WiringCheck = std::function<WiringResult(const Profile& profile, const std::string& path,
                                               const features::Gates& gates)>;

// Upstream ValidateKubeSchedulerConfiguration plus, when `wiring` is set, the wiring of every
// profile (and one queueSort, with the same args, across profiles), with config.featureGates.
// Empty when valid.
[[nodiscard]] std::vector<std::string> validateConfig(const SchedulerConfiguration& config,
                                                      const WiringCheck& wiring = {});

// decodeConfig + validateConfig, the configuration's featureGates set to `gates`.
[[nodiscard]] LoadResult loadConfig(std::string_view text, const std::string& sourceName,
                                    const WiringCheck& wiring = {},
                                    const features::Gates& gates = {});
// Reads `path` and decodes it (no validation); an unreadable file is one error
// "<path>: cannot read: <reason>".
[[nodiscard]] LoadResult decodeConfigFile(const std::string& path);

// `profile` with its plugins merged into the defaults of `apiVersion` with `gates` (upstream
// mergePlugins per extension point): what kube-scheduler runs and prints. Merging twice changes
// nothing.
[[nodiscard]] Profile effectiveProfile(const Profile& profile, std::string_view apiVersion,
                                       const features::Gates& gates);
// The profile to hand to framework::Framework: effectiveProfile() without multiPoint.disabled,
// which the merge already applied (upstream's framework ignores it as well).
[[nodiscard]] Profile frameworkProfile(const Profile& profile, std::string_view apiVersion,
                                       const features::Gates& gates);
// For each entry of effectiveProfile().plugins.multiPoint.enabled, its index in
// profile.plugins.multiPoint.enabled, or -1 for a default plugin (errors name the file's entry).
[[nodiscard]] std::vector<int> multiPointOrigins(const Profile& profile,
                                                 std::string_view apiVersion,
                                                 const features::Gates& gates);
// frameworkProfile() of every profile of `config`, with its featureGates.
[[nodiscard]] std::vector<Profile> frameworkProfiles(const SchedulerConfiguration& config);

// The effective configuration as kube-scheduler's --write-config-to writes it (apiVersion v1,
// every field, keys sorted), with `notes` as comments. Loads back to a configuration with the
// same toJson(); a converted one (v1beta1, v1beta2, Policy) loads back to the same decisions.
[[nodiscard]] std::string toYaml(const SchedulerConfiguration& config);
[[nodiscard]] nlohmann::json toJson(const SchedulerConfiguration& config);

using util::formatDuration;
using util::parseDuration;

}  // namespace ksched::config
