#include "config/scheduler_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <ksched/api/features.h>

#include "config/command_line.h"
#include "config/yaml_json.h"
#include "framework/framework.h"
#include "plugins/registry.h"
#include "tests/support/source_dir.h"

namespace ksched::config {
namespace {

// The default feature gates, which every configuration here runs with unless it says otherwise.
const features::Gates kDefaultGates;

using ::testing::ElementsAre;

const std::string kHeader =
    "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n";
const std::string kHeaderV1beta3 =
    "apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n";

// A second queue sort, to test that profiles must agree on one.
class OtherSort final : public QueueSortPlugin {
 public:
  std::string_view name() const override { return "OtherSort"; }
  bool less(const QueuedPodInfo& a, const QueuedPodInfo& b) const override {
    return a.timestamp < b.timestamp;
  }
};

WiringCheck inTree() { return config::wiringCheck(plugins::inTreeRegistry()); }

Registry testRegistry() {
  Registry r = plugins::inTreeRegistry();
  r.add("OtherSort", [](Handle&) { return std::make_unique<OtherSort>(); });
  return r;
}

std::vector<std::string> errorsOf(const std::string& text) {
  return loadConfig(text, "test.yaml", config::wiringCheck(testRegistry())).errors;
}

SchedulerConfiguration mustLoad(const std::string& text) {
  LoadResult r = loadConfig(text, "test.yaml", inTree());
  EXPECT_TRUE(r.ok()) << ::testing::PrintToString(r.errors);
  return r.ok() ? *r.config : SchedulerConfiguration{};
}

// The repository's config/.
std::string configDir() { return (ksched::testing::repoRoot() / "config").string(); }

LoadResult loadFile(const std::string& name) {
  std::ifstream in(configDir() + "/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return loadConfig(ss.str(), name, inTree());
}

std::vector<std::string> names(const std::vector<PluginRef>& refs) {
  std::vector<std::string> out;
  for (const auto& r : refs) {
    std::string s = r.name;
    if (r.weight != 0) s.append(":").append(std::to_string(r.weight));
    out.push_back(std::move(s));
  }
  return out;
}

// The default multiPoint names, edited: `drop` removed, `reweight` name -> new weight.
std::vector<std::string> defaultsWith(const std::vector<std::string>& drop,
                                      const std::map<std::string, int32_t>& reweight = {}) {
  PluginSet d = defaultMultiPoint(kDefaultGates);
  std::vector<PluginRef> kept;
  for (auto r : d.enabled) {
    if (std::find(drop.begin(), drop.end(), r.name) != drop.end()) continue;
    if (auto it = reweight.find(r.name); it != reweight.end()) r.weight = it->second;
    kept.push_back(r);
  }
  return names(kept);
}

struct BadConfig {
  const char* name;
  std::string text;
  std::vector<std::string> errors;
};

class SchedulerConfigBadTest : public ::testing::TestWithParam<BadConfig> {};

TEST_P(SchedulerConfigBadTest, ReportsEveryError) {
  const BadConfig& c = GetParam();
  LoadResult r = loadConfig(c.text, "test.yaml", config::wiringCheck(testRegistry()));
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.errors, c.errors);
}

const std::string kOtherSortProfiles = kHeader +
                                       "profiles:\n"
                                       "- schedulerName: a\n"
                                       "- schedulerName: b\n"
                                       "  plugins:\n"
                                       "    queueSort:\n"
                                       "      enabled: [{name: OtherSort}]\n"
                                       "      disabled: [{name: '*'}]\n";

INSTANTIATE_TEST_SUITE_P(
    Table, SchedulerConfigBadTest,
    ::testing::Values(
        BadConfig{"ParallelismZero",
                  kHeader + "parallelism: 0\n",
                  {"parallelism: Invalid value: 0: should be an integer value greater than zero"}},
        BadConfig{"ParallelismNegative",
                  kHeader + "parallelism: -3\n",
                  {"parallelism: Invalid value: -3: should be an integer value greater than zero"}},
        BadConfig{"ParallelismString",
                  kHeader + "parallelism: \"16\"\n",
                  {"parallelism: expected an integer, got string"}},
        BadConfig{"ParallelismOverflow",
                  kHeader + "parallelism: 3000000000\n",
                  {"parallelism: integer 3000000000 out of range"}},
        BadConfig{"ParallelismFloat",
                  kHeader + "parallelism: 1.5\n",
                  {"parallelism: expected an integer, got number"}},
        BadConfig{"PercentageTooHigh",
                  kHeader + "percentageOfNodesToScore: 101\n",
                  {"percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]"}},
        BadConfig{"PercentageNegative",
                  kHeader + "percentageOfNodesToScore: -1\n",
                  {"percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]"}},
        BadConfig{
            "PlacementPercentageTooHigh",
            kHeader + "percentageOfPlacementsToScore: 101\n",
            {"percentageOfPlacementsToScore: Invalid value: 101: not in valid range [0-100]"}},
        BadConfig{"ProfilePlacementPercentageNegative",
                  kHeader + "profiles:\n- percentageOfPlacementsToScore: -1\n",
                  {"profiles[0].percentageOfPlacementsToScore: Invalid value: -1: not in valid "
                   "range [0-100]"}},
        BadConfig{"InitialBackoffZero",
                  kHeader + "podInitialBackoffSeconds: 0\n",
                  {"podInitialBackoffSeconds: Invalid value: 0: must be greater than 0"}},
        BadConfig{"MaxBackoffBelowInitial",
                  kHeader + "podInitialBackoffSeconds: 20\n",
                  {"podMaxBackoffSeconds: Invalid value: 10: must be greater than or equal to "
                   "PodInitialBackoffSeconds"}},
        BadConfig{"UnknownTopLevelField",
                  kHeader + "foo: 1\nbar: {}\n",
                  {"bar: unknown field", "foo: unknown field"}},
        BadConfig{"HealthzBindAddressRemovedInV1",
                  kHeader + "healthzBindAddress: 0.0.0.0:10251\n",
                  {"healthzBindAddress: unknown field"}},
        BadConfig{"MetricsBindAddressRemovedInV1beta3",
                  kHeaderV1beta3 + "metricsBindAddress: 0.0.0.0:10251\n",
                  {"metricsBindAddress: unknown field"}},
        BadConfig{"LeaseNotLongerThanRenew",
                  kHeader + "leaderElection:\n  leaseDuration: 5s\n",
                  {"leaderElection.leaseDuration: Invalid value: 10s: must be greater than "
                   "`RenewDeadline`"}},
        BadConfig{"NegativeRetryPeriod",
                  kHeader + "leaderElection:\n  retryPeriod: -1s\n",
                  {"leaderElection.retryPeriod: Invalid value: -1s: must be greater than zero"}},
        BadConfig{"NegativeDurations",
                  kHeader + "leaderElection:\n  leaseDuration: -1m\n  renewDeadline: -2s\n",
                  {"leaderElection.leaseDuration: Invalid value: -1m0s: must be greater than zero",
                   "leaderElection.renewDeadline: Invalid value: -2s: must be greater than zero",
                   "leaderElection.leaseDuration: Invalid value: -2s: must be greater than "
                   "`RenewDeadline`"}},
        BadConfig{"ResourceLockNotLeases",
                  kHeader + "leaderElection:\n  resourceLock: endpoints\n",
                  {"leaderElection.resourceLock: Invalid value: \"endpoints\": resourceLock value "
                   "must be \"leases\""}},
        BadConfig{"DurationAsNumber",
                  kHeader + "leaderElection:\n  leaseDuration: 15\n",
                  {"leaderElection.leaseDuration: expected a string, got number"}},
        BadConfig{"DurationMalformed",
                  kHeader + "leaderElection:\n  leaseDuration: 15x\n",
                  {"leaderElection.leaseDuration: invalid duration \"15x\""}},
        BadConfig{"LeaderElectNotBoolean",
                  kHeader + "leaderElection:\n  leaderElect: yes\n",
                  {"leaderElection.leaderElect: expected a boolean, got string"}},
        BadConfig{"LeaderElectionUnknownField",
                  kHeader + "leaderElection:\n  leaseSeconds: 3\n",
                  {"leaderElection.leaseSeconds: unknown field"}},
        BadConfig{"NegativeBurst",
                  kHeader + "clientConnection:\n  burst: -1\n",
                  {"clientConnection.burst: Invalid value: -1: must be non-negative"}},
        BadConfig{"QpsNotNumber",
                  kHeader + "clientConnection:\n  qps: fast\n",
                  {"clientConnection.qps: expected a number, got string"}},
        BadConfig{"ClientConnectionUnknownField",
                  kHeader + "clientConnection:\n  kubeconfig: /x\n  timeout: 5s\n",
                  {"clientConnection.timeout: unknown field"}},
        BadConfig{"ProfilesNotAList",
                  kHeader + "profiles: {}\n",
                  {"profiles: expected an array, got object"}},
        BadConfig{"DuplicateSchedulerName",
                  kHeader + "profiles:\n- schedulerName: x\n- schedulerName: x\n",
                  {"profiles[1].schedulerName: Duplicate value: \"x\""}},
        BadConfig{"SchedulerNameRequiredWithTwoProfiles",
                  kHeader + "profiles:\n- schedulerName: a\n- percentageOfNodesToScore: 10\n",
                  {"profiles[1].schedulerName: Required value"}},
        BadConfig{"EmptySchedulerName",
                  kHeader + "profiles:\n- schedulerName: \"\"\n",
                  {"profiles[0].schedulerName: Required value"}},
        BadConfig{"ProfilePercentage",
                  kHeader + "profiles:\n- schedulerName: a\n  percentageOfNodesToScore: 200\n",
                  {"profiles[0].percentageOfNodesToScore: Invalid value: 200: not in valid range "
                   "[0-100]"}},
        BadConfig{"ProfileUnknownField",
                  kHeader + "profiles:\n- schedulerName: a\n  plugin: {}\n",
                  {"profiles[0].plugin: unknown field"}},
        BadConfig{"ScoreWeightOutOfRange",
                  kHeader + "profiles:\n- plugins:\n    score:\n      enabled:\n"
                            "      - name: ImageLocality\n      - name: NodeAffinity\n"
                            "        weight: 101\n",
                  {"profiles[0].plugins.score.enabled[1].weight: must be in range [1, 100]"}},
        BadConfig{"NegativeScoreWeight",
                  kHeader + "profiles:\n- plugins:\n    score:\n      enabled:\n"
                            "      - {name: TaintToleration, weight: -1}\n",
                  {"profiles[0].plugins.score.enabled[0].weight: must be in range [1, 100]"}},
        BadConfig{"MultiPointWeightOutOfRange",
                  kHeader + "profiles:\n- plugins:\n    multiPoint:\n      enabled:\n"
                            "      - {name: TaintToleration, weight: 200}\n",
                  {"profiles[0].plugins.multiPoint.weight: must be in range [1, 100]"}},
        BadConfig{"WeightNotInteger",
                  kHeader + "profiles:\n- plugins:\n    score:\n      enabled:\n"
                            "      - {name: TaintToleration, weight: heavy}\n",
                  {"profiles[0].plugins.score.enabled[0].weight: expected an integer, got string"}},
        BadConfig{
            "UnknownPlugin",
            kHeader + "profiles:\n- plugins:\n    filter:\n      enabled:\n      - name: Foo\n",
            {"profiles[0].plugins.filter.enabled[0]: plugin \"Foo\" does not exist"}},
        BadConfig{"UnknownMultiPointPluginNamedByFileIndex",
                  kHeader + "profiles:\n- plugins:\n    multiPoint:\n      enabled:\n"
                            "      - name: NodeAffinity\n      - name: Bar\n",
                  {"profiles[0].plugins.multiPoint.enabled[1]: plugin \"Bar\" does not exist"}},
        BadConfig{
            "PluginDoesNotExtendPoint",
            kHeader + "profiles:\n- plugins:\n    score:\n      enabled:\n      - name: NodeName\n",
            {"profiles[0].plugins.score.enabled[0]: plugin \"NodeName\" does not extend "
             "Score"}},
        BadConfig{"UnknownPluginSetField",
                  kHeader + "profiles:\n- plugins:\n    filter:\n      enable: []\n",
                  {"profiles[0].plugins.filter.enable: unknown field"}},
        BadConfig{
            "RemovedPlugin",
            kHeader +
                "profiles:\n- plugins:\n    filter:\n      enabled:\n      - name: EBSLimits\n",
            {"profiles[0].plugins.filter.enabled[0]: Invalid value: \"EBSLimits\": was "
             "invalid in version \"kubescheduler.config.k8s.io/v1\" "
             "(KubeSchedulerConfiguration is version \"kubescheduler.config.k8s.io/v1\")"}},
        BadConfig{"DuplicatePluginConfig",
                  kHeader + "profiles:\n- pluginConfig:\n  - name: NodeAffinity\n"
                            "  - name: NodeAffinity\n",
                  {"profiles[0].pluginConfig[1]: Duplicate value: \"NodeAffinity\""}},
        BadConfig{"PluginArgsInvalid",
                  kHeader + "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n"
                            "    args:\n      scoringStrategy:\n        type: Foo\n",
                  {"profiles[0].pluginConfig[0].args.scoringStrategy.type: Unsupported value: "
                   "\"Foo\": supported values: \"LeastAllocated\", \"MostAllocated\", "
                   "\"RequestedToCapacityRatio\""}},
        BadConfig{"PluginArgsUnknownField",
                  kHeader + "profiles:\n- pluginConfig:\n  - name: NodeAffinity\n"
                            "    args: {foo: 1}\n",
                  {"profiles[0].pluginConfig[0].args.foo: unknown field"}},
        BadConfig{"PluginArgsWrongKind",
                  kHeader + "profiles:\n- pluginConfig:\n  - name: NodeAffinity\n"
                            "    args: {kind: NodeResourcesFitArgs}\n",
                  {"profiles[0].pluginConfig[0].args.kind: Invalid value: "
                   "\"NodeResourcesFitArgs\": must be \"NodeAffinityArgs\""}},
        BadConfig{"PluginArgsNotObject",
                  kHeader + "profiles:\n- pluginConfig:\n  - name: NodeAffinity\n    args: [1]\n",
                  {"profiles[0].pluginConfig[0].args: expected an object, got array"}},
        BadConfig{
            "PluginConfigForDisabledPlugin",
            kHeader +
                "profiles:\n- plugins:\n    multiPoint:\n      disabled: [{name: ImageLocality}]\n"
                "  pluginConfig:\n  - name: ImageLocality\n",
            {"profiles[0].pluginConfig[0]: plugin \"ImageLocality\" has args but is not "
             "enabled"}},
        BadConfig{
            "NoQueueSort",
            kHeader + "profiles:\n- plugins:\n    queueSort:\n      disabled: [{name: '*'}]\n",
            {"profiles[0].plugins.queueSort: no queue sort plugin is enabled"}},
        BadConfig{
            "NoBinder",
            kHeader +
                "profiles:\n- plugins:\n    multiPoint:\n      disabled: [{name: DefaultBinder}]\n",
            {"profiles[0].plugins.bind: at least one bind plugin is needed"}},
        BadConfig{"QueueSortDiffers",
                  kOtherSortProfiles,
                  {"profiles[1].plugins.queueSort: queueSort must be the same for all profiles"}},
        BadConfig{"ExtenderWithoutWeight",
                  kHeader + "extenders:\n- urlPrefix: http://e\n  prioritizeVerb: prioritize\n",
                  {"extenders[0].weight: Invalid value: 0: must have a positive weight applied to "
                   "it"}},
        BadConfig{"TwoBinderExtenders",
                  kHeader + "extenders:\n- {urlPrefix: http://a, bindVerb: bind}\n"
                            "- {urlPrefix: http://b, bindVerb: bind}\n",
                  {"extenders: Invalid value: \"found 2 extenders implementing bind\": only one "
                   "extender can implement bind"}},
        BadConfig{
            "ManagedNativeResource",
            kHeader + "extenders:\n- urlPrefix: http://e\n  managedResources: [{name: cpu}]\n",
            {"extenders[0].managedResources[0].name: Invalid value: \"cpu\": is an invalid "
             "extended resource name"}},
        BadConfig{
            "ManagedResourceDuplicate",
            kHeader +
                "extenders:\n- urlPrefix: http://a\n  managedResources: [{name: example.com/gpu}]\n"
                "- urlPrefix: http://b\n  managedResources: [{name: example.com/gpu}]\n",
            {"extenders[1].managedResources[0].name: Invalid value: \"example.com/gpu\": "
             "duplicate extender managed resource name"}},
        BadConfig{"ExtenderTimeoutNumber",
                  kHeader + "extenders:\n- urlPrefix: http://e\n  httpTimeout: 5\n",
                  {"extenders[0].httpTimeout: expected a string, got number"}},
        BadConfig{"ExtenderBadBase64",
                  kHeader + "extenders:\n- urlPrefix: http://e\n  tlsConfig: {certData: \"!!\"}\n",
                  {"extenders[0].tlsConfig.certData: illegal base64 data"}},
        BadConfig{"ExtenderUnknownField",
                  kHeader + "extenders:\n- urlPrefix: http://e\n  verb: x\n",
                  {"extenders[0].verb: unknown field"}},
        BadConfig{"MissingApiVersionAndKind",
                  "parallelism: 3\n",
                  {"apiVersion: Required value", "kind: Required value"}},
        BadConfig{
            "UnsupportedApiVersion",
            "apiVersion: kubescheduler.config.k8s.io/v1alpha2\nkind: KubeSchedulerConfiguration\n",
            {"apiVersion: Unsupported value: \"kubescheduler.config.k8s.io/v1alpha2\": "
             "supported values: \"kubescheduler.config.k8s.io/v1\", "
             "\"kubescheduler.config.k8s.io/v1beta3\", \"kubescheduler.config.k8s.io/v1beta2\", "
             "\"kubescheduler.config.k8s.io/v1beta1\""}},
        BadConfig{"WrongKind",
                  "apiVersion: kubescheduler.config.k8s.io/v1\nkind: Policy\n",
                  {"kind: Unsupported value: \"Policy\": supported values: "
                   "\"KubeSchedulerConfiguration\""}},
        BadConfig{"NotAnObject", "- a\n- b\n", {"test.yaml: expected an object, got array"}},
        BadConfig{"YamlSyntax",
                  kHeader + "profiles: [\n  - a\n",
                  {"test.yaml: invalid YAML at line 4, column 3: illegal block entry"}},
        // Bytes that are not UTF-8 cannot become JSON: the field is named, nothing aborts.
        BadConfig{"InvalidUtf8Value",
                  kHeader + "profiles:\n- schedulerName: \"ks\xFF"
                            "ched\"\n",
                  {"test.yaml: invalid YAML at line 4, column 18: profiles[0].schedulerName: "
                   "invalid UTF-8 (a string must be UTF-8)"}},
        BadConfig{"InvalidUtf8Key",
                  kHeader + "profiles:\n- sched\xC0"
                            "uler: a\n",
                  {"test.yaml: invalid YAML at line 4, column 3: profiles[0].sched\xEF\xBF\xBD"
                   "uler: "
                   "invalid UTF-8 (a string must be UTF-8)"}},
        BadConfig{"V1beta3HasNoPreEnqueue",
                  kHeaderV1beta3 + "profiles:\n- plugins:\n    preEnqueue: {}\n",
                  {"profiles[0].plugins.preEnqueue: unknown field"}},
        BadConfig{"V1beta3HasNoProfilePercentage",
                  kHeaderV1beta3 + "profiles:\n- percentageOfNodesToScore: 5\n",
                  {"profiles[0].percentageOfNodesToScore: unknown field"}},
        BadConfig{"EveryErrorIsReported",
                  kHeader + "parallelism: 0\npodInitialBackoffSeconds: 0\n"
                            "leaderElection:\n  resourceLock: configmaps\n"
                            "profiles:\n- schedulerName: a\n  plugins:\n    filter:\n"
                            "      enabled: [{name: Foo}]\n- schedulerName: a\n"
                            "extenders:\n- {urlPrefix: http://e, prioritizeVerb: p}\n",
                  {"leaderElection.resourceLock: Invalid value: \"configmaps\": resourceLock value "
                   "must be \"leases\"",
                   "parallelism: Invalid value: 0: should be an integer value greater than zero",
                   "profiles[0].plugins.filter.enabled[0]: plugin \"Foo\" does not exist",
                   "profiles[1].schedulerName: Duplicate value: \"a\"",
                   "podInitialBackoffSeconds: Invalid value: 0: must be greater than 0",
                   "extenders[0].weight: Invalid value: 0: must have a positive weight applied to "
                   "it"}},
        BadConfig{"DecodeErrorsAreAllReported",
                  kHeader + "parallelism: x\npodMaxBackoffSeconds: y\nprofiles:\n- foo: 1\n",
                  {"parallelism: expected an integer, got string",
                   "podMaxBackoffSeconds: expected an integer, got string",
                   "profiles[0].foo: unknown field"}}),
    [](const ::testing::TestParamInfo<BadConfig>& info) { return info.param.name; });

TEST(SchedulerConfigTest, EmptyConfigGetsUpstreamDefaults) {
  SchedulerConfiguration c = mustLoad(kHeader);
  EXPECT_EQ(c.apiVersion, kApiVersionV1);
  EXPECT_EQ(c.parallelism, 16);
  EXPECT_EQ(c.percentageOfNodesToScore, 0);
  EXPECT_EQ(c.podInitialBackoffSeconds, 1);
  EXPECT_EQ(c.podMaxBackoffSeconds, 10);
  EXPECT_TRUE(c.enableProfiling);
  EXPECT_TRUE(c.enableContentionProfiling);
  EXPECT_FALSE(c.delayCacheUntilActive);
  EXPECT_TRUE(c.leaderElection.leaderElect);
  EXPECT_EQ(c.leaderElection.leaseDuration, std::chrono::seconds(15));
  EXPECT_EQ(c.leaderElection.renewDeadline, std::chrono::seconds(10));
  EXPECT_EQ(c.leaderElection.retryPeriod, std::chrono::seconds(2));
  EXPECT_EQ(c.leaderElection.resourceLock, "leases");
  EXPECT_EQ(c.leaderElection.resourceName, "kube-scheduler");
  EXPECT_EQ(c.leaderElection.resourceNamespace, "kube-system");
  EXPECT_EQ(c.clientConnection.kubeconfig, "");
  EXPECT_EQ(c.clientConnection.contentType, "application/vnd.kubernetes.protobuf");
  EXPECT_EQ(c.clientConnection.acceptContentTypes, "");
  EXPECT_EQ(c.clientConnection.qps, 50.0f);
  EXPECT_EQ(c.clientConnection.burst, 100);
  EXPECT_TRUE(c.extenders.empty());
  ASSERT_EQ(c.profiles.size(), 1u);
  EXPECT_EQ(c.profiles[0].schedulerName, "default-scheduler");
  EXPECT_FALSE(c.profiles[0].percentageOfNodesToScore.has_value());
  const Profile eff = effectiveProfile(c.profiles[0], c.apiVersion, kDefaultGates);
  EXPECT_EQ(names(eff.plugins.multiPoint.enabled), names(defaultMultiPoint(kDefaultGates).enabled));
  EXPECT_THAT(names(eff.plugins.multiPoint.enabled),
              ::testing::IsSupersetOf(
                  {"SchedulingGates", "PrioritySort", "NodeUnschedulable", "NodeName",
                   "TaintToleration:3", "NodeAffinity:2", "NodePorts", "NodeResourcesFit:1",
                   "NodeResourcesBalancedAllocation:1", "ImageLocality:1", "DefaultBinder"}));
  EXPECT_TRUE(eff.plugins.multiPoint.disabled.empty());
  EXPECT_TRUE(eff.plugins.score.enabled.empty());
  // An empty document and an empty profile list default the same way.
  EXPECT_EQ(toJson(mustLoad(kHeader + "profiles: []\n")), toJson(c));
  EXPECT_EQ(toJson(c), toJson(defaultConfiguration()));
}

TEST(SchedulerConfigTest, ZeroValuesTakeDefaultsLikeUpstream) {
  SchedulerConfiguration c =
      mustLoad(kHeader +
               "leaderElection:\n  leaseDuration: 0s\n  renewDeadline: \"0\"\n"
               "  resourceName: \"\"\n"
               "clientConnection:\n  qps: 0\n  burst: 0\n  contentType: \"\"\n"
               "enableProfiling: false\n");
  EXPECT_EQ(c.leaderElection.leaseDuration, std::chrono::seconds(15));
  EXPECT_EQ(c.leaderElection.renewDeadline, std::chrono::seconds(10));
  EXPECT_EQ(c.leaderElection.resourceName, "kube-scheduler");
  EXPECT_EQ(c.clientConnection.qps, 50.0f);
  EXPECT_EQ(c.clientConnection.burst, 100);
  EXPECT_EQ(c.clientConnection.contentType, "application/vnd.kubernetes.protobuf");
  EXPECT_FALSE(c.enableProfiling);
  EXPECT_FALSE(c.enableContentionProfiling);  // defaults to enableProfiling
}

TEST(SchedulerConfigTest, LeaderElectionIsNotValidatedWhenDisabled) {
  SchedulerConfiguration c =
      mustLoad(kHeader +
               "leaderElection:\n  leaderElect: false\n  resourceLock: endpoints\n"
               "  leaseDuration: 1s\n");
  EXPECT_FALSE(c.leaderElection.leaderElect);
  EXPECT_EQ(c.leaderElection.resourceLock, "endpoints");
}

TEST(SchedulerConfigTest, ExplicitValuesAreKept) {
  SchedulerConfiguration c = mustLoad(
      kHeader +
      "parallelism: 4\npercentageOfNodesToScore: 30\npodInitialBackoffSeconds: 2\n"
      "podMaxBackoffSeconds: 60\ndelayCacheUntilActive: true\n"
      "leaderElection:\n  leaseDuration: 1m30s\n  renewDeadline: 500ms\n  retryPeriod: 1.5s\n"
      "  resourceNamespace: sched\n"
      "clientConnection:\n  kubeconfig: /etc/k.conf\n  qps: 12.5\n  burst: 7\n");
  EXPECT_EQ(c.parallelism, 4);
  EXPECT_EQ(c.percentageOfNodesToScore, 30);
  EXPECT_EQ(c.podInitialBackoffSeconds, 2);
  EXPECT_EQ(c.podMaxBackoffSeconds, 60);
  EXPECT_TRUE(c.delayCacheUntilActive);
  EXPECT_EQ(c.leaderElection.leaseDuration, std::chrono::seconds(90));
  EXPECT_EQ(c.leaderElection.renewDeadline, std::chrono::milliseconds(500));
  EXPECT_EQ(c.leaderElection.retryPeriod, std::chrono::milliseconds(1500));
  EXPECT_EQ(c.leaderElection.resourceNamespace, "sched");
  EXPECT_EQ(c.clientConnection.kubeconfig, "/etc/k.conf");
  EXPECT_EQ(c.clientConnection.qps, 12.5f);
  EXPECT_EQ(c.clientConnection.burst, 7);
}

TEST(SchedulerConfigTest, JsonInputIsAccepted) {
  SchedulerConfiguration c = mustLoad(
      R"({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
          "parallelism": 8, "profiles": [{"schedulerName": "json"}]})");
  EXPECT_EQ(c.parallelism, 8);
  ASSERT_EQ(c.profiles.size(), 1u);
  EXPECT_EQ(c.profiles[0].schedulerName, "json");
}

TEST(SchedulerConfigTest, PluginsMergeIntoTheDefaultsLikeUpstream) {
  SchedulerConfiguration c =
      mustLoad(kHeader +
               "profiles:\n- plugins:\n"
               "    multiPoint:\n      enabled:\n      - {name: NodeAffinity, weight: 7}\n"
               "      disabled:\n      - name: ImageLocality\n"
               "    score:\n      disabled:\n      - name: NodeResourcesBalancedAllocation\n");
  const Profile eff = effectiveProfile(c.profiles[0], c.apiVersion, kDefaultGates);
  // Re-enabled default keeps its place with the new weight; the disabled one is gone.
  EXPECT_EQ(names(eff.plugins.multiPoint.enabled),
            defaultsWith({"ImageLocality"}, {{"NodeAffinity", 7}}));
  EXPECT_THAT(names(eff.plugins.multiPoint.enabled), ::testing::Contains("NodeAffinity:7"));
  EXPECT_THAT(names(eff.plugins.multiPoint.disabled), ElementsAre("ImageLocality"));
  EXPECT_THAT(names(eff.plugins.score.disabled), ElementsAre("NodeResourcesBalancedAllocation"));
  // Merging is idempotent.
  EXPECT_EQ(names(effectiveProfile(eff, c.apiVersion, kDefaultGates).plugins.multiPoint.enabled),
            names(eff.plugins.multiPoint.enabled));
}

TEST(SchedulerConfigTest, DisableAllMultiPointKeepsOnlyTheEnabledOnes) {
  SchedulerConfiguration c =
      mustLoad(kHeader +
               "profiles:\n- plugins:\n    multiPoint:\n"
               "      enabled: [{name: PrioritySort}, {name: NodeName}, {name: DefaultBinder}]\n"
               "      disabled: [{name: '*'}]\n");
  const Profile eff = effectiveProfile(c.profiles[0], c.apiVersion, kDefaultGates);
  EXPECT_THAT(names(eff.plugins.multiPoint.enabled),
              ElementsAre("PrioritySort", "NodeName", "DefaultBinder"));
  EXPECT_THAT(names(eff.plugins.multiPoint.disabled), ElementsAre("*"));
  // The framework gets them although "*" is disabled (enabled wins over disabled upstream).
  const Profile fw = frameworkProfile(c.profiles[0], c.apiVersion, kDefaultGates);
  EXPECT_TRUE(fw.plugins.multiPoint.disabled.empty());
  EXPECT_THAT(names(fw.plugins.multiPoint.enabled),
              ElementsAre("PrioritySort", "NodeName", "DefaultBinder"));
}

TEST(SchedulerConfigTest, V1beta3DefaultsPutSchedulingGatesLast) {
  SchedulerConfiguration c = mustLoad(kHeaderV1beta3);
  EXPECT_EQ(c.apiVersion, kApiVersionV1beta3);
  const Profile eff = effectiveProfile(c.profiles[0], c.apiVersion, kDefaultGates);
  std::vector<std::string> want = defaultsWith({"SchedulingGates"});
  want.push_back("SchedulingGates");
  EXPECT_EQ(names(eff.plugins.multiPoint.enabled), want);
  EXPECT_NE(names(eff.plugins.multiPoint.enabled), names(defaultMultiPoint(kDefaultGates).enabled));
  // Removed plugins are only flagged for v1; v1beta3 accepts them (they are registered).
  EXPECT_THAT(errorsOf(kHeaderV1beta3 +
                       "profiles:\n- plugins:\n    filter:\n      enabled: [{name: EBSLimits}]\n"),
              ElementsAre());
}

TEST(SchedulerConfigTest, QueueSortArgsMustMatchAcrossProfiles) {
  Registry r = testRegistry();
  r.add("ArgSort", [](Handle&) {
    struct ArgSort final : QueueSortPlugin {
      std::string_view name() const override { return "ArgSort"; }
      bool less(const QueuedPodInfo&, const QueuedPodInfo&) const override { return false; }
    };
    return std::make_unique<ArgSort>();
  });
  const std::string profile =
      "  plugins:\n    queueSort:\n      enabled: [{name: ArgSort}]\n"
      "      disabled: [{name: '*'}]\n";
  auto errs = loadConfig(kHeader + "profiles:\n- schedulerName: a\n" + profile +
                             "  pluginConfig: [{name: ArgSort, args: {x: 1}}]\n"
                             "- schedulerName: b\n" +
                             profile +
                             "  pluginConfig: [{name: ArgSort, args: {x: 2}}]\n"
                             "- schedulerName: c\n" +
                             profile,
                         "t", config::wiringCheck(r))
                  .errors;
  EXPECT_THAT(errs,
              ElementsAre("profiles[1].pluginConfig[0].args: queueSort args must be the same for "
                          "all profiles",
                          "profiles[2].pluginConfig: queueSort args must be the same for all "
                          "profiles"));
}

TEST(SchedulerConfigTest, ShippedExamplesLoad) {
  {
    LoadResult r = loadFile("default.yaml");
    ASSERT_TRUE(r.ok()) << ::testing::PrintToString(r.errors);
    EXPECT_EQ(r.config->clientConnection.kubeconfig, "/etc/kubernetes/scheduler.conf");
    // Apart from the kubeconfig it is exactly the defaults.
    SchedulerConfiguration d = defaultConfiguration();
    d.clientConnection.kubeconfig = "/etc/kubernetes/scheduler.conf";
    EXPECT_EQ(toJson(*r.config), toJson(d));
  }
  {
    LoadResult r = loadFile("bin-packing.yaml");
    ASSERT_TRUE(r.ok()) << ::testing::PrintToString(r.errors);
    const Profile eff =
        effectiveProfile(r.config->profiles[0], r.config->apiVersion, kDefaultGates);
    EXPECT_EQ(names(eff.plugins.multiPoint.enabled),
              defaultsWith({"NodeResourcesBalancedAllocation"}));
    EXPECT_THAT(names(eff.plugins.score.enabled), ElementsAre("NodeResourcesFit:5"));
    ASSERT_EQ(eff.pluginConfig.size(), 1u);
    EXPECT_EQ(eff.pluginConfig[0].args["scoringStrategy"]["type"], "MostAllocated");
    // What the scheduler runs: the explicit Score entry comes first and its weight wins over
    // multiPoint's; balanced allocation is gone; the other default Score plugins stay in order.
    const Registry registry = plugins::inTreeRegistry();
    framework::Framework defaults(defaultProfile(kDefaultGates), registry, framework::Services{});
    std::vector<std::string> want = {"NodeResourcesFit:5"};
    auto defaultPoints = defaults.pluginsPerExtensionPoint();
    for (const auto& s : defaultPoints["Score"]) {
      if (s != "NodeResourcesFit:1" && s != "NodeResourcesBalancedAllocation:1") want.push_back(s);
    }
    framework::Framework fwk(
        frameworkProfile(r.config->profiles[0], r.config->apiVersion, kDefaultGates), registry,
        framework::Services{});
    EXPECT_EQ(fwk.pluginsPerExtensionPoint()["Score"], want);
    EXPECT_THAT(want, ::testing::IsSupersetOf({"TaintToleration:3", "ImageLocality:1"}));
  }
  {
    LoadResult r = loadFile("two-profiles.yaml");
    ASSERT_TRUE(r.ok()) << ::testing::PrintToString(r.errors);
    ASSERT_EQ(r.config->profiles.size(), 2u);
    EXPECT_EQ(r.config->profiles[0].schedulerName, "default-scheduler");
    EXPECT_EQ(r.config->profiles[1].schedulerName, "no-image-locality");
    EXPECT_EQ(r.config->profiles[1].percentageOfNodesToScore, 50);
    EXPECT_THAT(names(effectiveProfile(r.config->profiles[1], kApiVersionV1, kDefaultGates)
                          .plugins.score.disabled),
                ElementsAre("ImageLocality"));
  }
  {
    LoadResult r = loadFile("extender.yaml");
    ASSERT_TRUE(r.ok()) << ::testing::PrintToString(r.errors);
    ASSERT_EQ(r.config->extenders.size(), 1u);
    const Extender& e = r.config->extenders[0];
    EXPECT_EQ(e.urlPrefix, "https://extender.kube-system.svc:8443/scheduler");
    EXPECT_EQ(e.filterVerb, "filter");
    EXPECT_EQ(e.prioritizeVerb, "prioritize");
    EXPECT_EQ(e.weight, 5);
    EXPECT_TRUE(e.enableHTTPS);
    ASSERT_TRUE(e.tlsConfig.has_value());
    EXPECT_EQ(e.tlsConfig->serverName, "extender.kube-system.svc");
    EXPECT_EQ(e.httpTimeout, std::chrono::seconds(90));
    EXPECT_TRUE(e.nodeCacheCapable);
    ASSERT_EQ(e.managedResources.size(), 1u);
    EXPECT_EQ(e.managedResources[0], (ExtenderManagedResource{"example.com/gpu", true}));
  }
}

TEST(SchedulerConfigTest, RoundTripThroughYaml) {
  const std::vector<std::string> inputs = {
      kHeader,
      kHeader +
          "parallelism: 3\npercentageOfNodesToScore: 40\nenableProfiling: false\n"
          "leaderElection: {leaderElect: false, leaseDuration: 1h0m0.5s, retryPeriod: 250us}\n"
          "clientConnection: {qps: 0.1, burst: 3, kubeconfig: \"/a b/#c\", contentType: "
          "application/json}\n",
      kHeader +
          "profiles:\n- schedulerName: \"yes\"\n  percentageOfNodesToScore: 0\n"
          "  plugins:\n    multiPoint:\n      enabled: [{name: PrioritySort}, {name: "
          "DefaultBinder}, {name: NodeName}]\n      disabled: [{name: '*'}]\n"
          "- schedulerName: \"123\"\n  plugins:\n    score:\n      enabled: [{name: "
          "ImageLocality, weight: 9}]\n      disabled: [{name: TaintToleration}]\n"
          "  pluginConfig:\n  - name: NodeAffinity\n    args:\n      addedAffinity: {}\n",
      kHeader +
          "extenders:\n- urlPrefix: http://e\n  prioritizeVerb: p\n  weight: 2\n"
          "  tlsConfig: {insecure: true, certData: aGVsbG8=, keyData: YQ==, caData: YWI=}\n"
          "  httpTimeout: 3s\n  managedResources: [{name: example.com/x}]\n"
          "- urlPrefix: http://f\n  bindVerb: bind\n",
  };
  for (const auto& in : inputs) {
    SchedulerConfiguration a = mustLoad(in);
    const std::string yaml = toYaml(a);
    LoadResult b = loadConfig(yaml, "written.yaml", inTree());
    ASSERT_TRUE(b.ok()) << yaml << ::testing::PrintToString(b.errors);
    EXPECT_EQ(toJson(*b.config), toJson(a)) << yaml;
    EXPECT_EQ(toYaml(*b.config), yaml);
  }
}

// Upstream's getDefaultPlugins + applyFeatureGates at 1.37, restricted to the plugins ksched
// has: DynamicResources before DefaultPreemption and NodeDeclaredFeatures last, each only while
// its gate is on (both are locked on; tests force them off). EBSLimits, GCEPDLimits and
// AzureDiskLimits left the defaults in 1.31.
TEST(SchedulerConfigTest, DefaultPluginsFollowTheGates) {
  const std::vector<std::string> v137 = {"SchedulingGates",
                                         "PrioritySort",
                                         "NodeUnschedulable",
                                         "NodeName",
                                         "TaintToleration:3",
                                         "NodeAffinity:2",
                                         "NodePorts",
                                         "NodeResourcesFit:1",
                                         "VolumeRestrictions",
                                         "NodeVolumeLimits",
                                         "VolumeBinding",
                                         "VolumeZone",
                                         "PodTopologySpread:2",
                                         "InterPodAffinity:2",
                                         "DynamicResources:2",
                                         "DefaultPreemption",
                                         "NodeResourcesBalancedAllocation:1",
                                         "ImageLocality:1",
                                         "DefaultBinder",
                                         "NodeDeclaredFeatures"};
  EXPECT_EQ(names(defaultMultiPoint(kDefaultGates).enabled), v137);
  EXPECT_EQ(names(effectiveProfile(defaultProfile(kDefaultGates), kApiVersionV1, kDefaultGates)
                      .plugins.multiPoint.enabled),
            v137);
  {
    features::Gates off;
    off.force(features::Feature::kNodeDeclaredFeatures, false);
    std::vector<std::string> want = v137;
    want.pop_back();
    EXPECT_EQ(names(defaultMultiPoint(off).enabled), want);
  }
  {
    features::Gates off;
    off.force(features::Feature::kDynamicResourceAllocation, false);
    std::vector<std::string> want = v137;
    std::erase(want, "DynamicResources:2");
    EXPECT_EQ(names(defaultMultiPoint(off).enabled), want);
  }
  {
    // The Workload API's plugins, as upstream's applyFeatureGates adds them.
    features::Gates on;
    ASSERT_EQ(on.set("GenericWorkload=true,TopologyAwareWorkloadScheduling=true"), std::nullopt);
    std::vector<std::string> want = v137;
    want.insert(want.end(),
                {"GangScheduling", "TopologyPlacementGenerator", "PodGroupPodsCount:1"});
    EXPECT_EQ(names(defaultMultiPoint(on).enabled), want);
    framework::Framework fwk(defaultProfile(on), plugins::inTreeRegistry(), framework::Services{});
    auto points = fwk.pluginsPerExtensionPoint();
    EXPECT_THAT(points["PlacementGenerate"], ElementsAre("TopologyPlacementGenerator"));
    EXPECT_THAT(points["PlacementScore"], ElementsAre("PodGroupPodsCount"));
    EXPECT_THAT(points["PlacementFeasible"], ElementsAre("GangScheduling"));
    EXPECT_THAT(points["PodGroupPostFilter"], ElementsAre("DefaultPreemption"));
  }
  // What the default profile runs where: DynamicResources at PreEnqueue (after SchedulingGates),
  // PostFilter before DefaultPreemption, Reserve and PreBind after VolumeBinding, Score with
  // weight 2 after InterPodAffinity; NodeDeclaredFeatures at PreFilter and Filter, last in both.
  framework::Framework fwk(defaultProfile(kDefaultGates), plugins::inTreeRegistry(),
                           framework::Services{});
  auto points = fwk.pluginsPerExtensionPoint();
  EXPECT_THAT(points["PreEnqueue"],
              ElementsAre("SchedulingGates", "DynamicResources", "DefaultPreemption"));
  EXPECT_EQ(points["Filter"].back(), "NodeDeclaredFeatures");
  EXPECT_EQ(points["PreFilter"].back(), "NodeDeclaredFeatures");
  EXPECT_THAT(points["PostFilter"], ElementsAre("DynamicResources", "DefaultPreemption"));
  EXPECT_THAT(points["Reserve"], ElementsAre("VolumeBinding", "DynamicResources"));
  EXPECT_THAT(points["PreBind"], ElementsAre("VolumeBinding", "DynamicResources"));
  // VolumeBinding scores (StorageCapacityScoring), weight 1 as upstream's multiPoint gives it.
  EXPECT_THAT(
      points["Score"],
      ElementsAre("TaintToleration:3", "NodeAffinity:2", "NodeResourcesFit:1", "VolumeBinding:1",
                  "PodTopologySpread:2", "InterPodAffinity:2", "DynamicResources:2",
                  "NodeResourcesBalancedAllocation:1", "ImageLocality:1"));
}

TEST(SchedulerConfigTest, WrittenYamlLooksLikeKubeSchedulers) {
  const std::string yaml = toYaml(defaultConfiguration());
  EXPECT_THAT(yaml, ::testing::StartsWith("apiVersion: kubescheduler.config.k8s.io/v1\n"
                                          "clientConnection:\n"
                                          "  acceptContentTypes: \"\"\n"
                                          "  burst: 100\n"
                                          "  contentType: application/vnd.kubernetes.protobuf\n"
                                          "  kubeconfig: \"\"\n"
                                          "  qps: 50\n"
                                          "delayCacheUntilActive: false\n"
                                          "enableContentionProfiling: true\n"
                                          "enableProfiling: true\n"
                                          "kind: KubeSchedulerConfiguration\n"
                                          "leaderElection:\n"
                                          "  leaderElect: true\n"
                                          "  leaseDuration: 15s\n"
                                          "  renewDeadline: 10s\n"
                                          "  resourceLock: leases\n"
                                          "  resourceName: kube-scheduler\n"
                                          "  resourceNamespace: kube-system\n"
                                          "  retryPeriod: 2s\n"
                                          "parallelism: 16\n"
                                          "percentageOfNodesToScore: 0\n"
                                          "podInitialBackoffSeconds: 1\n"
                                          "podMaxBackoffSeconds: 10\n"
                                          "profiles:\n"
                                          "- plugins:\n"
                                          "    bind: {}\n"
                                          "    filter: {}\n"
                                          "    multiPoint:\n"
                                          "      enabled:\n"
                                          "      - name: SchedulingGates\n"
                                          "      - name: PrioritySort\n"));
  EXPECT_THAT(yaml, ::testing::HasSubstr("      - name: TaintToleration\n        weight: 3\n"));
  EXPECT_THAT(yaml, ::testing::HasSubstr("      - name: InterPodAffinity\n        weight: 2\n"
                                         "      - name: DynamicResources\n        weight: 2\n"
                                         "      - name: DefaultPreemption\n"));
  EXPECT_THAT(yaml, ::testing::HasSubstr("      - name: DefaultBinder\n"
                                         "      - name: NodeDeclaredFeatures\n"));
  EXPECT_THAT(yaml, ::testing::EndsWith("  schedulerName: default-scheduler\n"));
}

TEST(SchedulerConfigTest, GoDurations) {
  struct Case {
    const char* in;
    int64_t ns;
    const char* out;
  };
  const Case cases[] = {
      {"0", 0, "0s"},
      {"15s", 15'000'000'000, "15s"},
      {"1m30s", 90'000'000'000, "1m30s"},
      {"500ms", 500'000'000, "500ms"},
      {"1.5s", 1'500'000'000, "1.5s"},
      {"1h", 3'600'000'000'000, "1h0m0s"},
      {"-2s", -2'000'000'000, "-2s"},
      {"+3ms", 3'000'000, "3ms"},
      {"250us", 250'000, "250\xC2\xB5s"},
      {"250\xC2\xB5s", 250'000, "250\xC2\xB5s"},
      {"7ns", 7, "7ns"},
      {".5m", 30'000'000'000, "30s"},
      {"1h2m3.004s", 3'723'004'000'000, "1h2m3.004s"},
      {"2562047h47m16.854775807s", INT64_MAX, "2562047h47m16.854775807s"},
  };
  for (const auto& c : cases) {
    auto d = parseDuration(c.in);
    ASSERT_TRUE(d.has_value()) << c.in;
    EXPECT_EQ(d->count(), c.ns) << c.in;
    EXPECT_EQ(formatDuration(*d), c.out) << c.in;
  }
  for (const char* bad : {"", "s", "1", "1x", "1.s5", "--1s", ".s", "3000000h", "1s2"}) {
    EXPECT_FALSE(parseDuration(bad).has_value()) << bad;
  }
}

TEST(SchedulerConfigTest, YamlTextThatIsNotUtf8IsAnErrorWithItsPath) {
  EXPECT_NO_THROW((void)yamlToJson("a: [\"\xC3\xA9\"]\n"));
  try {
    (void)yamlToJson("a:\n  - ok\n  - \"x\xFF\"\n");
    ADD_FAILURE() << "no error";
  } catch (const YamlSyntaxError& e) {
    EXPECT_STREQ(e.what(),
                 "invalid YAML at line 3, column 5: a[1]: invalid UTF-8 (a string must be UTF-8)");
  }
  // A surrogate escape is no character either (found by tests/fuzz/config_fuzz).
  EXPECT_THROW((void)yamlToJson("b: \"\\uD800\"\n"), YamlSyntaxError);
}

TEST(SchedulerConfigTest, YamlScalarsResolveLikeJson) {
  EXPECT_EQ(yamlToJson("a: 1\nb: '1'\nc: true\nd: \"true\"\ne: ~\nf: 0x10\ng: 1.5\nh: x y\n"),
            nlohmann::json::parse(R"({"a":1,"b":"1","c":true,"d":"true","e":null,"f":16,
                                     "g":1.5,"h":"x y"})"));
  EXPECT_EQ(jsonToYaml(nlohmann::json::parse(R"({"a":"true","b":"","c":"*","d":"x: y","e":[],
                                                "f":{},"g":"-x","h":"ok"})")),
            "a: \"true\"\nb: \"\"\nc: \"*\"\nd: \"x: y\"\ne: []\nf: {}\ng: \"-x\"\nh: ok\n");
}

// Command line: flags, and how they combine with --config.

ParsedCommandLine parse(std::vector<std::string> args) { return parseCommandLine(args); }

TEST(SchedulerCommandLineTest, ShutdownGracePeriod) {
  EXPECT_EQ(parse({}).flags.shutdownGracePeriod, std::chrono::seconds(5));
  auto p = parse({"--shutdown-grace-period=1500ms"});
  ASSERT_TRUE(p.errors.empty()) << ::testing::PrintToString(p.errors);
  EXPECT_EQ(p.flags.shutdownGracePeriod, std::chrono::milliseconds(1500));
  EXPECT_EQ(parse({"--shutdown-grace-period", "0s"}).flags.shutdownGracePeriod,
            std::chrono::seconds(0));
  for (const char* bad : {"-1s", "soon", "5"}) {
    auto q = parse({std::string("--shutdown-grace-period=") + bad});
    ASSERT_EQ(q.errors.size(), 1u) << bad;
    EXPECT_EQ(q.errors[0],
              std::string("--shutdown-grace-period: invalid duration \"") + bad + "\"");
  }
}

TEST(SchedulerCommandLineTest, ParsesUpstreamFlags) {
  auto p = parse({"--config=/etc/ksched.yaml",
                  "--write-config-to",
                  "/tmp/out.yaml",
                  "--kubeconfig",
                  "/k",
                  "--master=http://m",
                  "--secure-port",
                  "0",
                  "--bind-address=127.0.0.1",
                  "--cert-dir",
                  "/certs",
                  "--tls-cert-file=/c",
                  "--tls-private-key-file=/k.pem",
                  "--leader-elect=false",
                  "--leader-elect-lease-duration=30s",
                  "--leader-elect-renew-deadline",
                  "20s",
                  "--leader-elect-retry-period=5s",
                  "--leader-elect-resource-name=n",
                  "--leader-elect-resource-namespace",
                  "ns",
                  "--leader-elect-resource-lock=leases",
                  "--kube-api-qps",
                  "7.5",
                  "--kube-api-burst=9",
                  "-v",
                  "4"});
  ASSERT_TRUE(p.errors.empty()) << ::testing::PrintToString(p.errors);
  const CommandLine& f = p.flags;
  EXPECT_EQ(f.configFile, "/etc/ksched.yaml");
  EXPECT_EQ(f.writeConfigTo, "/tmp/out.yaml");
  EXPECT_EQ(f.kubeconfig, "/k");
  EXPECT_EQ(f.master, "http://m");
  EXPECT_EQ(f.serving.securePort, 0);
  EXPECT_EQ(f.serving.bindAddress, "127.0.0.1");
  EXPECT_EQ(f.serving.certDir, "/certs");
  EXPECT_EQ(f.serving.tlsCertFile, "/c");
  EXPECT_EQ(f.serving.tlsPrivateKeyFile, "/k.pem");
  EXPECT_EQ(f.leaderElect, false);
  EXPECT_EQ(f.leaseDuration, std::chrono::seconds(30));
  EXPECT_EQ(f.renewDeadline, std::chrono::seconds(20));
  EXPECT_EQ(f.retryPeriod, std::chrono::seconds(5));
  EXPECT_EQ(f.resourceName, "n");
  EXPECT_EQ(f.resourceNamespace, "ns");
  EXPECT_EQ(f.resourceLock, "leases");
  EXPECT_EQ(f.kubeApiQps, 7.5);
  EXPECT_EQ(f.kubeApiBurst, 9);
  EXPECT_EQ(f.verbosity, 4);

  auto d = parse({});
  EXPECT_TRUE(d.errors.empty());
  EXPECT_EQ(d.flags.serving.securePort, 10259);
  EXPECT_EQ(d.flags.serving.bindAddress, "0.0.0.0");
  EXPECT_FALSE(d.flags.leaderElect.has_value());
  EXPECT_FALSE(d.flags.kubeconfig.has_value());
  // A bare boolean flag means true and does not take the next argument.
  auto b = parse({"--leader-elect", "--v=2"});
  EXPECT_TRUE(b.errors.empty());
  EXPECT_EQ(b.flags.leaderElect, true);
  EXPECT_EQ(b.flags.verbosity, 2);
  EXPECT_TRUE(parse({"--help", "--bogus"}).flags.help);
  EXPECT_TRUE(parse({"-version"}).flags.version);
}

TEST(SchedulerCommandLineTest, ReportsEveryBadFlag) {
  auto p = parse({"--secure-port=70000", "--bind-address", "localhost", "--leader-elect=maybe",
                  "--leader-elect-lease-duration=15", "--kube-api-qps=x", "--bogus", "stray",
                  "--tls-cert-file=/c", "--config"});
  EXPECT_THAT(p.errors,
              ElementsAre("--secure-port 70000 must be between 0 and 65535, inclusive. 0 for "
                          "turning off secure port",
                          "--bind-address: \"localhost\" is not a valid IP address",
                          "--leader-elect: \"maybe\" is not a boolean",
                          "--leader-elect-lease-duration: invalid duration \"15\"",
                          "--kube-api-qps: \"x\" is not a number", "unknown flag: --bogus",
                          "unexpected argument: stray", "--config: needs a value",
                          "--tls-cert-file and --tls-private-key-file must be given together"));
}

class TempFile {
 public:
  explicit TempFile(const std::string& contents)
      : path_((std::filesystem::temp_directory_path() /
               ("ksched-config-test-" + std::to_string(::getpid()) + "-" +
                std::to_string(counter_++) + ".yaml"))
                  .string()) {
    std::ofstream(path_) << contents;
  }
  ~TempFile() { std::filesystem::remove(path_); }
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  std::string path_;
};

TEST(SchedulerCommandLineTest, FlagsCombineWithConfigLikeKubeScheduler) {
  const Registry registry = plugins::inTreeRegistry();
  std::vector<std::string> warnings;
  // Without --config the deprecated client flags apply.
  auto noFile =
      parse({"--kubeconfig=/k", "--kube-api-qps=5", "--kube-api-burst=6", "--leader-elect=false"});
  LoadResult r = resolveConfiguration(noFile.flags, config::wiringCheck(registry), warnings);
  ASSERT_TRUE(r.ok()) << ::testing::PrintToString(r.errors);
  EXPECT_EQ(r.config->clientConnection.kubeconfig, "/k");
  EXPECT_EQ(r.config->clientConnection.qps, 5.0f);
  EXPECT_EQ(r.config->clientConnection.burst, 6);
  EXPECT_FALSE(r.config->leaderElection.leaderElect);
  EXPECT_TRUE(warnings.empty());

  // With --config they are ignored (with a warning); leader election flags still override.
  TempFile file(kHeader +
                "clientConnection: {kubeconfig: /from-file, qps: 11}\n"
                "leaderElection: {resourceName: from-file, leaseDuration: 20s}\n");
  auto withFile = parse({"--config", file.path(), "--kubeconfig=/k", "--kube-api-burst=6",
                         "--leader-elect-resource-name=from-flag"});
  r = resolveConfiguration(withFile.flags, config::wiringCheck(registry), warnings);
  ASSERT_TRUE(r.ok()) << ::testing::PrintToString(r.errors);
  EXPECT_EQ(r.config->clientConnection.kubeconfig, "/from-file");
  EXPECT_EQ(r.config->clientConnection.qps, 11.0f);
  EXPECT_EQ(r.config->clientConnection.burst, 100);
  EXPECT_EQ(r.config->leaderElection.resourceName, "from-flag");
  EXPECT_EQ(r.config->leaderElection.leaseDuration, std::chrono::seconds(20));
  EXPECT_THAT(warnings,
              ElementsAre("--kubeconfig is ignored because --config is given; set it in the "
                          "file's clientConnection",
                          "--kube-api-burst is ignored because --config is given; set it in the "
                          "file's clientConnection"));

  // Flags are validated together with the file.
  auto badFlags = parse({"--config", file.path(), "--leader-elect-renew-deadline=30s"});
  r = resolveConfiguration(badFlags.flags, config::wiringCheck(registry), warnings);
  EXPECT_THAT(r.errors, ElementsAre("leaderElection.leaseDuration: Invalid value: 30s: must be "
                                    "greater than `RenewDeadline`"));
  auto missing = parse({"--config=/nonexistent/ksched.yaml"});
  r = resolveConfiguration(missing.flags, config::wiringCheck(registry), warnings);
  EXPECT_THAT(r.errors,
              ElementsAre("/nonexistent/ksched.yaml: cannot read: No such file or directory"));
}

}  // namespace
}  // namespace ksched::config
