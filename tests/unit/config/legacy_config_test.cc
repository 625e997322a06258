// v1beta1/v1beta2 KubeSchedulerConfiguration and the legacy Policy: what v1.20.2 (and v1beta2's
// last release) would run, in ksched's v1 shape.
#include "config/legacy_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "config/command_line.h"
#include "config/policy.h"
#include "config/scheduler_config.h"
#include "framework/framework.h"
#include "plugins/registry.h"

namespace ksched::config {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const std::string kV1beta1 =
    "apiVersion: kubescheduler.config.k8s.io/v1beta1\nkind: KubeSchedulerConfiguration\n";
const std::string kV1beta2 =
    "apiVersion: kubescheduler.config.k8s.io/v1beta2\nkind: KubeSchedulerConfiguration\n";

// "Name" or "Name:weight".
std::vector<std::string> names(const PluginSet& s) {
  std::vector<std::string> out;
  for (const auto& r : s.enabled) {
    out.push_back(r.weight == 0 ? r.name : r.name + ":" + std::to_string(r.weight));
  }
  return out;
}

SchedulerConfiguration decoded(const std::string& text) {
  LoadResult r = decodeConfig(text, "test.yaml");
  EXPECT_TRUE(r.ok()) << ::testing::PrintToString(r.errors);
  return r.ok() ? *r.config : SchedulerConfiguration{};
}

std::vector<std::string> decodeErrors(const std::string& text) {
  return decodeConfig(text, "test.yaml").errors;
}

const PluginConfig* argsOf(const Profile& p, const std::string& name) {
  for (const auto& pc : p.pluginConfig) {
    if (pc.name == name) return &pc;
  }
  return nullptr;
}

TEST(LegacyConfigTest, V1beta1DefaultsAreV120s) {
  const SchedulerConfiguration c = decoded(kV1beta1);
  ASSERT_EQ(c.profiles.size(), 1u);
  const Profile& p = c.profiles[0];
  EXPECT_EQ(p.schedulerName, "default-scheduler");
  EXPECT_THAT(names(p.plugins.queueSort), ElementsAre("PrioritySort"));
  EXPECT_THAT(names(p.plugins.preFilter),
              ElementsAre("NodeResourcesFit", "NodePorts", "PodTopologySpread", "InterPodAffinity",
                          "VolumeBinding"));
  EXPECT_THAT(names(p.plugins.filter),
              ElementsAre("NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity",
                          "NodePorts", "NodeResourcesFit", "VolumeRestrictions", "EBSLimits",
                          "GCEPDLimits", "NodeVolumeLimits", "AzureDiskLimits", "VolumeBinding",
                          "VolumeZone", "PodTopologySpread", "InterPodAffinity"));
  EXPECT_THAT(names(p.plugins.postFilter), ElementsAre("DefaultPreemption"));
  EXPECT_THAT(names(p.plugins.preScore),
              ElementsAre("InterPodAffinity", "PodTopologySpread", "TaintToleration"));
  EXPECT_THAT(names(p.plugins.score),
              ElementsAre("NodeResourcesBalancedAllocation:1", "ImageLocality:1",
                          "InterPodAffinity:1", "NodeResourcesLeastAllocated:1", "NodeAffinity:1",
                          "NodePreferAvoidPods:10000", "PodTopologySpread:2", "TaintToleration:1"));
  EXPECT_THAT(names(p.plugins.reserve), ElementsAre("VolumeBinding"));
  EXPECT_THAT(names(p.plugins.preBind), ElementsAre("VolumeBinding"));
  EXPECT_THAT(names(p.plugins.bind), ElementsAre("DefaultBinder"));
  EXPECT_THAT(names(p.plugins.preEnqueue), ElementsAre("SchedulingGates"));
  EXPECT_THAT(names(p.plugins.multiPoint), IsEmpty());
  ASSERT_EQ(p.plugins.multiPoint.disabled.size(), 1u);
  EXPECT_EQ(p.plugins.multiPoint.disabled[0].name, "*");
  EXPECT_TRUE(p.v120ScoreWeights);
  const PluginConfig* ba = argsOf(p, "NodeResourcesBalancedAllocation");
  ASSERT_NE(ba, nullptr);
  EXPECT_EQ(ba->args, nlohmann::json({{"formula", "v1.20"}}));
  // The effective (framework) profile is the same: v1's multiPoint defaults are all disabled.
  const Profile eff = frameworkProfile(p, c.apiVersion, features::Gates{});
  EXPECT_THAT(names(eff.plugins.multiPoint), IsEmpty());
  EXPECT_EQ(names(eff.plugins.score), names(p.plugins.score));
}

TEST(LegacyConfigTest, V1beta2DefaultsAreItsLastReleases) {
  const SchedulerConfiguration c = decoded(kV1beta2 + "profiles:\n- schedulerName: b2\n");
  const Profile& p = c.profiles[0];
  EXPECT_EQ(p.schedulerName, "b2");
  EXPECT_THAT(names(p.plugins.score),
              ElementsAre("NodeResourcesBalancedAllocation:1", "ImageLocality:1",
                          "InterPodAffinity:1", "NodeResourcesFit:1", "NodeAffinity:1",
                          "PodTopologySpread:2", "TaintToleration:1"));
  EXPECT_THAT(names(p.plugins.preScore), ElementsAre("InterPodAffinity", "PodTopologySpread",
                                                     "TaintToleration", "NodeAffinity"));
  EXPECT_FALSE(p.v120ScoreWeights);
  EXPECT_EQ(argsOf(p, "NodeResourcesBalancedAllocation"), nullptr);
}

TEST(LegacyConfigTest, CustomPluginsMergePerPoint) {
  const SchedulerConfiguration c = decoded(kV1beta1 + R"(
profiles:
- schedulerName: packer
  plugins:
    score:
      disabled:
      - name: NodeResourcesLeastAllocated
      - name: NodePreferAvoidPods
      enabled:
      - name: NodeResourcesMostAllocated
        weight: 5
      - name: ImageLocality
        weight: 3
    filter:
      disabled:
      - name: '*'
      enabled:
      - name: NodeResourcesFit
  pluginConfig:
  - name: NodeResourcesMostAllocated
    args:
      apiVersion: kubescheduler.config.k8s.io/v1beta1
      kind: NodeResourcesMostAllocatedArgs
      resources:
      - name: cpu
        weight: 2
)");
  const Profile& p = c.profiles[0];
  EXPECT_THAT(names(p.plugins.score),
              ElementsAre("NodeResourcesBalancedAllocation:1", "ImageLocality:3",
                          "InterPodAffinity:1", "NodeAffinity:1", "PodTopologySpread:2",
                          "TaintToleration:1", "NodeResourcesMostAllocated:5"));
  EXPECT_THAT(names(p.plugins.filter), ElementsAre("NodeResourcesFit"));
  EXPECT_THAT(names(p.plugins.preFilter),
              ElementsAre("NodeResourcesFit", "NodePorts", "PodTopologySpread", "InterPodAffinity",
                          "VolumeBinding"));
  ASSERT_NE(argsOf(p, "NodeResourcesMostAllocated"), nullptr);
  EXPECT_EQ(argsOf(p, "NodeResourcesMostAllocated")->args["resources"][0]["weight"], 2);
  // Typed in the file's version, they are v1's untyped args.
  EXPECT_FALSE(argsOf(p, "NodeResourcesMostAllocated")->args.contains("apiVersion"));
  EXPECT_EQ(argsOf(p, "NodeResourcesMostAllocated")->args["kind"],
            "NodeResourcesMostAllocatedArgs");
}

TEST(LegacyConfigTest, VersionFieldsAreStrict) {
  EXPECT_THAT(decodeErrors(kV1beta1 + "delayCacheUntilActive: true\n"),
              ElementsAre("delayCacheUntilActive: unknown field"));
  EXPECT_THAT(decodeErrors(kV1beta1 + "profiles:\n- plugins:\n    multiPoint: {}\n"),
              ElementsAre("profiles[0].plugins.multiPoint: unknown field"));
  EXPECT_THAT(decodeErrors(kV1beta2 + "profiles:\n- plugins:\n    preEnqueue: {}\n"),
              ElementsAre("profiles[0].plugins.preEnqueue: unknown field"));
  EXPECT_THAT(decodeErrors(kV1beta2 + "profiles:\n- percentageOfNodesToScore: 5\n"),
              ElementsAre("profiles[0].percentageOfNodesToScore: unknown field"));
  EXPECT_THAT(decodeErrors(kV1beta1 + "profiles:\n- plugins:\n    score: 3\n"),
              ElementsAre("profiles[0].plugins.score: expected an object, got number"));
  // healthz/metricsBindAddress are read (and noted), not served.
  const SchedulerConfiguration c = decoded(kV1beta1 + "healthzBindAddress: 0.0.0.0:10251\n");
  EXPECT_EQ(c.healthzBindAddress, "0.0.0.0:10251");
  EXPECT_THAT(decodeErrors(kV1beta1 + "healthzBindAddress: 0.0.0.0:10251\n"), IsEmpty());
  EXPECT_THAT(
      decodeErrors("apiVersion: kubescheduler.config.k8s.io/v1alpha1\nkind: "
                   "KubeSchedulerConfiguration\n"),
      ElementsAre("apiVersion: Unsupported value: \"kubescheduler.config.k8s.io/v1alpha1\": "
                  "supported values: \"kubescheduler.config.k8s.io/v1\", "
                  "\"kubescheduler.config.k8s.io/v1beta3\", "
                  "\"kubescheduler.config.k8s.io/v1beta2\", "
                  "\"kubescheduler.config.k8s.io/v1beta1\""));
}

TEST(LegacyConfigTest, WrittenAsV1WithNotes) {
  const SchedulerConfiguration c =
      decoded(kV1beta1 + "metricsBindAddress: 0.0.0.0:10251\nprofiles:\n- schedulerName: old\n");
  const std::string yaml = toYaml(c);
  EXPECT_THAT(yaml, HasSubstr("# Converted from kubescheduler.config.k8s.io/v1beta1 (test.yaml)"));
  EXPECT_THAT(yaml, HasSubstr("# healthzBindAddress/metricsBindAddress are not in v1"));
  EXPECT_THAT(yaml, HasSubstr("apiVersion: kubescheduler.config.k8s.io/v1\n"));
  // The notes sit above the field they are about.
  EXPECT_THAT(yaml, HasSubstr("    # NodePreferAvoidPods has weight 10000 (v1.20 allowed it); v1 "
                              "allows at most 100, written as 100 here\n"));
  EXPECT_THAT(yaml, HasSubstr("    # NodeResourcesLeastAllocated is not in current upstream"));
  EXPECT_THAT(yaml, HasSubstr("  # NodeResourcesBalancedAllocation formula v1.20"));
  EXPECT_THAT(yaml, HasSubstr("      - name: NodePreferAvoidPods\n        weight: 100\n"));
  // The written v1 file reads back with the same plugins.
  LoadResult back = decodeConfig(yaml, "written.yaml");
  ASSERT_TRUE(back.ok()) << ::testing::PrintToString(back.errors);
  EXPECT_EQ(back.config->apiVersion, kApiVersionV1);
  const Profile a = frameworkProfile(c.profiles[0], c.apiVersion, features::Gates{});
  const Profile b = frameworkProfile(back.config->profiles[0], back.config->apiVersion, features::Gates{});
  // ... but for the in-tree volume limits, which v1 rejects.
  std::vector<std::string> filtersInV1;
  for (const auto& n : names(a.plugins.filter)) {
    if (n != "EBSLimits" && n != "GCEPDLimits" && n != "AzureDiskLimits") filtersInV1.push_back(n);
  }
  EXPECT_EQ(names(b.plugins.filter), filtersInV1);
  EXPECT_THAT(yaml, HasSubstr("    # EBSLimits, GCEPDLimits, AzureDiskLimits and CinderLimits are "
                              "invalid in v1 and left out here"));
  EXPECT_EQ(names(a.plugins.preFilter), names(b.plugins.preFilter));
  EXPECT_EQ(a.pluginConfig.size(), b.pluginConfig.size());
  EXPECT_THAT(back.config->notes, IsEmpty());
}

// --- Policy ---------------------------------------------------------------------------------

SchedulerConfiguration withPolicy(const std::string& policyText,
                                  std::vector<std::string>* errors = nullptr) {
  PolicyResult r = decodePolicy(policyText, "policy.json");
  SchedulerConfiguration c = defaultConfiguration();
  if (!r.policy) {
    if (errors != nullptr) *errors = r.errors;
    EXPECT_NE(errors, nullptr) << ::testing::PrintToString(r.errors);
    return c;
  }
  std::vector<std::string> errs = applyPolicy(*r.policy, "policy.json", c);
  if (errors != nullptr) {
    *errors = errs;
  } else {
    EXPECT_THAT(errs, IsEmpty());
  }
  return c;
}

std::string policyWith(const std::string& predicates, const std::string& priorities) {
  return R"({"kind": "Policy", "apiVersion": "v1", "predicates": [)" + predicates +
         R"(], "priorities": [)" + priorities + "]}";
}

struct PredicateCase {
  std::string name;
  std::vector<std::string> preFilter;
  std::vector<std::string> filter;
};

class PolicyPredicateTest : public ::testing::TestWithParam<PredicateCase> {};

// Every predicate name v1.20 accepts, alone: the mandatory CheckNodeUnschedulable and
// PodToleratesNodeTaints come with it, in v1.20's predicate order.
TEST_P(PolicyPredicateTest, MapsAsV120) {
  const auto& tc = GetParam();
  const SchedulerConfiguration c = withPolicy(policyWith(R"({"name": ")" + tc.name + R"("})", ""));
  const Profile& p = c.profiles[0];
  EXPECT_EQ(names(p.plugins.preFilter), tc.preFilter);
  EXPECT_EQ(names(p.plugins.filter), tc.filter);
  EXPECT_THAT(names(p.plugins.score), IsEmpty());
  EXPECT_THAT(names(p.plugins.queueSort), ElementsAre("PrioritySort"));
  EXPECT_THAT(names(p.plugins.postFilter), ElementsAre("DefaultPreemption"));
  EXPECT_THAT(names(p.plugins.bind), ElementsAre("DefaultBinder"));
}

using V = std::vector<std::string>;
INSTANTIATE_TEST_SUITE_P(
    AllNames, PolicyPredicateTest,
    ::testing::Values(
        PredicateCase{"CheckNodeUnschedulable", {}, {"NodeUnschedulable", "TaintToleration"}},
        PredicateCase{"GeneralPredicates",
                      {"NodeResourcesFit", "NodePorts"},
                      {"NodeUnschedulable", "NodeResourcesFit", "NodeName", "NodePorts",
                       "NodeAffinity", "TaintToleration"}},
        PredicateCase{"PodFitsResources",
                      {"NodeResourcesFit"},
                      {"NodeUnschedulable", "NodeResourcesFit", "TaintToleration"}},
        PredicateCase{"PodFitsHostPorts",
                      {"NodePorts"},
                      {"NodeUnschedulable", "NodePorts", "TaintToleration"}},
        PredicateCase{
            "PodFitsPorts", {"NodePorts"}, {"NodeUnschedulable", "NodePorts", "TaintToleration"}},
        PredicateCase{"HostName", {}, {"NodeUnschedulable", "NodeName", "TaintToleration"}},
        PredicateCase{
            "MatchNodeSelector", {}, {"NodeUnschedulable", "NodeAffinity", "TaintToleration"}},
        PredicateCase{
            "NoDiskConflict", {}, {"NodeUnschedulable", "VolumeRestrictions", "TaintToleration"}},
        PredicateCase{"PodToleratesNodeTaints", {}, {"NodeUnschedulable", "TaintToleration"}},
        PredicateCase{
            "MaxEBSVolumeCount", {}, {"NodeUnschedulable", "TaintToleration", "EBSLimits"}},
        PredicateCase{
            "MaxGCEPDVolumeCount", {}, {"NodeUnschedulable", "TaintToleration", "GCEPDLimits"}},
        PredicateCase{"MaxCSIVolumeCountPred",
                      {},
                      {"NodeUnschedulable", "TaintToleration", "NodeVolumeLimits"}},
        PredicateCase{"MaxAzureDiskVolumeCount",
                      {},
                      {"NodeUnschedulable", "TaintToleration", "AzureDiskLimits"}},
        PredicateCase{
            "MaxCinderVolumeCount", {}, {"NodeUnschedulable", "TaintToleration", "CinderLimits"}},
        PredicateCase{"CheckVolumeBinding",
                      {"VolumeBinding"},
                      {"NodeUnschedulable", "TaintToleration", "VolumeBinding"}},
        PredicateCase{
            "NoVolumeZoneConflict", {}, {"NodeUnschedulable", "TaintToleration", "VolumeZone"}},
        PredicateCase{"EvenPodsSpread",
                      {"PodTopologySpread"},
                      {"NodeUnschedulable", "TaintToleration", "PodTopologySpread"}},
        PredicateCase{"MatchInterPodAffinity",
                      {"InterPodAffinity"},
                      {"NodeUnschedulable", "TaintToleration", "InterPodAffinity"}}),
    [](const auto& info) { return info.param.name; });

struct PriorityCase {
  std::string json;  // the priority entry
  std::vector<std::string> preScore;
  std::vector<std::string> score;
  std::string argsPlugin;  // "" = no args
  nlohmann::json args;
};

class PolicyPriorityTest : public ::testing::TestWithParam<PriorityCase> {};

TEST_P(PolicyPriorityTest, MapsAsV120) {
  const auto& tc = GetParam();
  const SchedulerConfiguration c = withPolicy(policyWith("", tc.json));
  const Profile& p = c.profiles[0];
  EXPECT_EQ(names(p.plugins.preScore), tc.preScore);
  EXPECT_EQ(names(p.plugins.score), tc.score);
  if (!tc.argsPlugin.empty()) {
    const PluginConfig* pc = argsOf(p, tc.argsPlugin);
    ASSERT_NE(pc, nullptr);
    EXPECT_EQ(pc->args, tc.args);
  }
}

INSTANTIATE_TEST_SUITE_P(
    AllNames, PolicyPriorityTest,
    ::testing::Values(
        PriorityCase{R"({"name": "LeastRequestedPriority", "weight": 3})",
                     {},
                     {"NodeResourcesLeastAllocated:3"}},
        PriorityCase{R"({"name": "MostRequestedPriority", "weight": 2})",
                     {},
                     {"NodeResourcesMostAllocated:2"}},
        PriorityCase{R"({"name": "BalancedResourceAllocation", "weight": 1})",
                     {},
                     {"NodeResourcesBalancedAllocation:1"},
                     "NodeResourcesBalancedAllocation",
                     {{"formula", "v1.20"}}},
        PriorityCase{R"({"name": "SelectorSpreadPriority", "weight": 4})",
                     {"PodTopologySpread"},
                     {"PodTopologySpread:4"},
                     "PodTopologySpread",
                     {{"defaultingType", "System"}}},
        PriorityCase{R"({"name": "ServiceSpreadingPriority", "weight": 1})",
                     {"PodTopologySpread"},
                     {"PodTopologySpread:1"},
                     "PodTopologySpread",
                     {{"defaultingType", "System"}}},
        PriorityCase{R"({"name": "EvenPodsSpreadPriority", "weight": 2})",
                     {"PodTopologySpread"},
                     {"PodTopologySpread:2"},
                     "PodTopologySpread",
                     {{"defaultingType", "List"}}},
        PriorityCase{R"({"name": "InterPodAffinityPriority", "weight": 1})",
                     {"InterPodAffinity"},
                     {"InterPodAffinity:1"}},
        PriorityCase{R"({"name": "NodeAffinityPriority", "weight": 1})", {}, {"NodeAffinity:1"}},
        PriorityCase{R"({"name": "TaintTolerationPriority", "weight": 1})",
                     {"TaintToleration"},
                     {"TaintToleration:1"}},
        PriorityCase{R"({"name": "ImageLocalityPriority", "weight": 1})", {}, {"ImageLocality:1"}},
        PriorityCase{R"({"name": "NodePreferAvoidPodsPriority", "weight": 10000})",
                     {},
                     {"NodePreferAvoidPods:10000"}},
        PriorityCase{R"({"name": "EqualPriority", "weight": 1})", {}, {}},
        PriorityCase{
            R"({"name": "RequestedToCapacityRatioPriority", "weight": 2, "argument":
                        {"requestedToCapacityRatioArguments": {"shape": [{"utilization": 0,
                        "score": 0}, {"utilization": 100, "score": 10}], "resources":
                        [{"name": "cpu", "weight": 1}]}}})",
            {},
            {"RequestedToCapacityRatio:2"},
            "RequestedToCapacityRatio",
            {{"shape", {{{"utilization", 0}, {"score", 0}}, {{"utilization", 100}, {"score", 10}}}},
             {"resources", {{{"name", "cpu"}, {"weight", 1}}}}}},
        PriorityCase{R"({"name": "zone-spread", "weight": 2, "argument":
                        {"serviceAntiAffinity": {"label": "zone"}}})",
                     {},
                     {"ServiceAffinity:2"},
                     "ServiceAffinity",
                     {{"antiAffinityLabelsPreference", {"zone"}}}},
        PriorityCase{R"({"name": "ssd", "weight": 3, "argument":
                        {"labelPreference": {"label": "ssd", "presence": true}}},
                        {"name": "no-spot", "weight": 3, "argument":
                        {"labelPreference": {"label": "spot", "presence": false}}})",
                     {},
                     {"NodeLabel:6"},
                     "NodeLabel",
                     {{"presentLabelsPreference", {"ssd"}}, {"absentLabelsPreference", {"spot"}}}}),
    [](const auto& info) { return "Case" + std::to_string(info.index); });

TEST(PolicyTest, NoListsMeansV120Defaults) {
  const SchedulerConfiguration c = withPolicy(R"({"kind": "Policy", "apiVersion": "v1"})");
  const Profile& p = c.profiles[0];
  EXPECT_THAT(names(p.plugins.filter),
              ElementsAre("NodeUnschedulable", "NodeResourcesFit", "NodeName", "NodePorts",
                          "NodeAffinity", "VolumeRestrictions", "TaintToleration", "EBSLimits",
                          "GCEPDLimits", "NodeVolumeLimits", "AzureDiskLimits", "VolumeBinding",
                          "VolumeZone", "PodTopologySpread", "InterPodAffinity"));
  EXPECT_THAT(names(p.plugins.score),
              ElementsAre("NodeResourcesBalancedAllocation:1", "PodTopologySpread:2",
                          "ImageLocality:1", "InterPodAffinity:1", "NodeResourcesLeastAllocated:1",
                          "NodeAffinity:1", "NodePreferAvoidPods:10000", "TaintToleration:1"));
  // SelectorSpreadPriority (sorted after EvenPodsSpreadPriority) sets System defaulting.
  EXPECT_EQ(argsOf(p, "PodTopologySpread")->args, nlohmann::json({{"defaultingType", "System"}}));
  // Empty lists mean none (the mandatory predicates stay).
  const SchedulerConfiguration none = withPolicy(policyWith("", ""));
  EXPECT_THAT(names(none.profiles[0].plugins.filter),
              ElementsAre("NodeUnschedulable", "TaintToleration"));
  EXPECT_THAT(names(none.profiles[0].plugins.score), IsEmpty());
}

TEST(PolicyTest, PredicateArgumentsAccumulate) {
  const SchedulerConfiguration c = withPolicy(policyWith(
      R"({"name": "zone", "argument": {"serviceAffinity": {"labels": ["zone"]}}},
         {"name": "rack", "argument": {"serviceAffinity": {"labels": ["rack"]}}},
         {"name": "gpu", "argument": {"labelsPresence": {"labels": ["gpu"], "presence": true}}},
         {"name": "no-retire", "argument": {"labelsPresence": {"labels": ["retiring"],
          "presence": false}}})",
      ""));
  const Profile& p = c.profiles[0];
  EXPECT_THAT(names(p.plugins.filter),
              ElementsAre("NodeUnschedulable", "TaintToleration", "NodeLabel", "ServiceAffinity"));
  EXPECT_THAT(names(p.plugins.preFilter), ElementsAre("ServiceAffinity"));
  EXPECT_EQ(argsOf(p, "ServiceAffinity")->args,
            nlohmann::json({{"affinityLabels", {"zone", "rack"}}}));
  EXPECT_EQ(argsOf(p, "NodeLabel")->args,
            nlohmann::json({{"presentLabels", {"gpu"}}, {"absentLabels", {"retiring"}}}));
}

// The reference document's ConfigMap example: predicates, priorities, an extender and
// hardPodAffinitySymmetricWeight.
const char* kReferencePolicy = R"({
    "kind" : "Policy",
    "apiVersion" : "v1",
    "predicates" : [
      {"name" : "PodFitsHostPorts"},
      {"name" : "PodFitsResources"},
      {"name" : "NoDiskConflict"},
      {"name" : "MatchNodeSelector"},
      {"name" : "HostName"}
    ],
    "priorities" : [
      {"name" : "LeastRequestedPriority", "weight" : 1},
      {"name" : "BalancedResourceAllocation", "weight" : 1},
      {"name" : "ServiceSpreadingPriority", "weight" : 1},
      {"name" : "EqualPriority", "weight" : 1}
    ],
    "extenders" : [{
      "urlPrefix": "http://10.168.107.12:80/scheduler",
      "filterVerb": "predicates/always_true",
      "prioritizeVerb": "priorities/zero_score",
      "preemptVerb": "preemption",
      "bindVerb": "",
      "weight": 1,
      "enableHttps": false,
      "nodeCacheCapable": false
    }],
    "hardPodAffinitySymmetricWeight" : 10
  })";

TEST(PolicyTest, ReferenceConfigMapExampleLoads) {
  const SchedulerConfiguration c = withPolicy(kReferencePolicy);
  const Profile& p = c.profiles[0];
  EXPECT_THAT(names(p.plugins.filter),
              ElementsAre("NodeUnschedulable", "NodeName", "NodePorts", "NodeAffinity",
                          "NodeResourcesFit", "VolumeRestrictions", "TaintToleration"));
  EXPECT_THAT(names(p.plugins.preFilter), ElementsAre("NodePorts", "NodeResourcesFit"));
  EXPECT_THAT(names(p.plugins.score),
              ElementsAre("NodeResourcesBalancedAllocation:1", "NodeResourcesLeastAllocated:1",
                          "PodTopologySpread:1"));
  EXPECT_THAT(names(p.plugins.preScore), ElementsAre("PodTopologySpread"));
  // hardPodAffinitySymmetricWeight only reaches InterPodAffinity's score, which is not enabled.
  EXPECT_EQ(argsOf(p, "InterPodAffinity"), nullptr);
  ASSERT_EQ(c.extenders.size(), 1u);
  EXPECT_EQ(c.extenders[0].urlPrefix, "http://10.168.107.12:80/scheduler");
  EXPECT_EQ(c.extenders[0].filterVerb, "predicates/always_true");
  EXPECT_EQ(c.extenders[0].prioritizeVerb, "priorities/zero_score");
  EXPECT_EQ(c.extenders[0].preemptVerb, "preemption");
  EXPECT_EQ(c.extenders[0].weight, 1);
  EXPECT_FALSE(c.extenders[0].enableHTTPS);
  EXPECT_EQ(c.policySource, "policy.json");
  EXPECT_TRUE(p.v120ScoreWeights);
  EXPECT_THAT(toYaml(c), HasSubstr("# Converted from the Policy policy.json."));
}

TEST(PolicyTest, HardPodAffinityWeightReachesInterPodAffinity) {
  const SchedulerConfiguration c = withPolicy(
      R"({"kind": "Policy", "apiVersion": "v1", "hardPodAffinitySymmetricWeight": 10,
          "priorities": [{"name": "InterPodAffinityPriority", "weight": 1}]})");
  EXPECT_EQ(argsOf(c.profiles[0], "InterPodAffinity")->args,
            nlohmann::json({{"hardPodAffinityWeight", 10}}));
}

TEST(PolicyTest, CustomNamesFailNamingThemAndTheFile) {
  std::vector<std::string> errors;
  withPolicy(policyWith(R"({"name": "CheckNodeUnschedulable"}, {"name": "LimitSRIOVQuantity"})",
                        R"({"name": "GpuBinpackPriority", "weight": 20},
                           {"name": "ImageLocalityPriority", "weight": 1})"),
             &errors);
  EXPECT_THAT(errors,
              ElementsAre("policy.json: predicates[1].name: Unsupported value: "
                          "\"LimitSRIOVQuantity\": predicate type not found (not a predicate of "
                          "v1.20, and no serviceAffinity or labelsPresence argument)",
                          "policy.json: priorities[0].name: Unsupported value: "
                          "\"GpuBinpackPriority\": priority type not found (not a priority of "
                          "v1.20, and no serviceAntiAffinity, labelPreference or "
                          "requestedToCapacityRatioArguments argument)"));
}

TEST(PolicyTest, ValidatesAsV120) {
  std::vector<std::string> errors;
  withPolicy(R"({"kind": "Policy", "apiVersion": "v1", "hardPodAffinitySymmetricWeight": 101,
                 "priorities": [{"name": "ImageLocalityPriority", "weight": 0},
                   {"name": "a", "weight": 1, "argument": {"labelPreference": {"label": "x"}}},
                   {"name": "b", "weight": 2, "argument": {"labelPreference": {"label": "y"}}}]})",
             &errors);
  EXPECT_THAT(errors,
              ElementsAre("policy.json: priorities[0].weight: Invalid value: 0: priority "
                          "ImageLocalityPriority should have a positive weight applied to it or "
                          "it has overflown",
                          "policy.json: priorities[2].weight: LabelPreference priority \"b\" has "
                          "a different weight with \"a\"",
                          "policy.json: hardPodAffinitySymmetricWeight: Invalid value: 101: not "
                          "in valid range [0-100]"));
}

TEST(PolicyTest, DecodingIsStrict) {
  std::vector<std::string> errors;
  withPolicy(R"({"kind": "Policy", "apiVersion": "v1", "predicate": [],
                 "priorities": [{"name": "x", "weight": "1"}],
                 "extenders": [{"urlPrefix": "http://e", "enableHTTPS": true}]})",
             &errors);
  EXPECT_THAT(errors, ElementsAre("policy.json: predicate: unknown field",
                                  "policy.json: priorities[0].weight: expected an integer, got "
                                  "string",
                                  "policy.json: extenders[0].enableHTTPS: unknown field"));
  withPolicy(R"({"kind": "Policy", "apiVersion": "v1", "predicates": [{"name": "x",
                 "argument": {"serviceAffinity": {"labels": ["a"]},
                              "labelsPresence": {"labels": ["b"]}}}]})",
             &errors);
  EXPECT_THAT(errors, ElementsAre("policy.json: predicates[0].argument: exactly 1 predicate "
                                  "argument is required, got 2"));
  withPolicy(R"({"kind": "KubeSchedulerConfiguration", "apiVersion": "v1"})", &errors);
  EXPECT_THAT(errors, ElementsAre("policy.json: kind: Unsupported value: "
                                  "\"KubeSchedulerConfiguration\": supported values: \"Policy\""));
  // A legacy extender's httpTimeout is a Go duration in nanoseconds.
  const SchedulerConfiguration c = withPolicy(
      R"({"kind": "Policy", "apiVersion": "v1", "extenders": [{"urlPrefix": "https://e",
          "enableHttps": true, "httpTimeout": 3000000000, "filterVerb": "f"}]})");
  EXPECT_TRUE(c.extenders[0].enableHTTPS);
  EXPECT_EQ(c.extenders[0].httpTimeout, std::chrono::seconds(3));
}

// --- Flags ----------------------------------------------------------------------------------

class PolicyFlagsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ksched-policy-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const auto path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  LoadResult resolve(const std::vector<std::string>& args,
                     const PolicyConfigMapReader& reader = {}) {
    auto parsed = parseCommandLine(args);
    EXPECT_THAT(parsed.errors, IsEmpty());
    std::vector<std::string> warnings;
    return resolveConfiguration(parsed.flags, {}, warnings, reader);
  }
  std::filesystem::path dir_;
};

TEST_F(PolicyFlagsTest, FileAndConfigMapAsV120) {
  const std::string policy = write("policy.json", kReferencePolicy);
  LoadResult r = resolve({"--policy-config-file", policy, "--scheduler-name", "my-scheduler"});
  ASSERT_TRUE(r.ok()) << ::testing::PrintToString(r.errors);
  EXPECT_EQ(r.config->profiles[0].schedulerName, "my-scheduler");
  EXPECT_EQ(r.config->policySource, policy);
  EXPECT_EQ(r.config->extenders.size(), 1u);

  // --policy-configmap wins over the file unless --use-legacy-policy-config.
  std::string askedFor;
  auto reader = [&](const ClientConnectionConfiguration&, const std::string& ns,
                    const std::string& name) {
    askedFor = ns + "/" + name;
    return std::string(R"({"kind": "Policy", "apiVersion": "v1", "predicates": [],
                           "priorities": []})");
  };
  r = resolve({"--policy-config-file", policy, "--policy-configmap", "my-scheduler-policy"},
              reader);
  ASSERT_TRUE(r.ok()) << ::testing::PrintToString(r.errors);
  EXPECT_EQ(askedFor, "kube-system/my-scheduler-policy");
  EXPECT_EQ(r.config->policySource, "ConfigMap kube-system/my-scheduler-policy");
  EXPECT_TRUE(r.config->extenders.empty());
  r = resolve(
      {"--policy-config-file", policy, "--policy-configmap", "p", "--use-legacy-policy-config"},
      reader);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.config->policySource, policy);

  auto failing = [](const ClientConnectionConfiguration&, const std::string&,
                    const std::string&) -> std::string {
    throw std::runtime_error("missing policy config map value at key \"policy.cfg\"");
  };
  r = resolve({"--policy-configmap", "p", "--policy-configmap-namespace", "ops"}, failing);
  EXPECT_THAT(r.errors, ElementsAre("ConfigMap ops/p key policy.cfg: missing policy config map "
                                    "value at key \"policy.cfg\""));
}

TEST_F(PolicyFlagsTest, PolicyAndProfilesDoNotMix) {
  const std::string policy = write("policy.json", kReferencePolicy);
  const std::string withPlugins =
      write("config.yaml", kV1beta1 + "profiles:\n- schedulerName: x\n  plugins:\n    score: {}\n");
  LoadResult r = resolve({"--config", withPlugins, "--policy-config-file", policy});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_THAT(r.errors[0], HasSubstr("cannot set a Plugin config and Policy config"));
  // A profile that only names the scheduler takes the Policy's plugins.
  const std::string named =
      write("named.yaml", kV1beta1 + "profiles:\n- schedulerName: my-kube-scheduler\n");
  r = resolve({"--config", named, "--policy-config-file", policy});
  ASSERT_TRUE(r.ok()) << ::testing::PrintToString(r.errors);
  EXPECT_EQ(r.config->profiles[0].schedulerName, "my-kube-scheduler");
  EXPECT_THAT(names(r.config->profiles[0].plugins.filter),
              ElementsAre("NodeUnschedulable", "NodeName", "NodePorts", "NodeAffinity",
                          "NodeResourcesFit", "VolumeRestrictions", "TaintToleration"));
  // --use-legacy-policy-config needs the file.
  auto parsed = parseCommandLine({"--use-legacy-policy-config"});
  EXPECT_THAT(parsed.errors,
              ElementsAre("--policy-config-file: required when --use-legacy-policy-config is "
                          "true"));
}

}  // namespace
}  // namespace ksched::config
