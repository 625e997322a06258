#include <gtest/gtest.h>

#include <algorithm>

#include <ksched/api/features.h>

namespace ksched::features {
namespace {

TEST(FeatureGates, DefaultsAreUpstreams) {
  const Gates g;
  // A sample of Kubernetes 1.37's defaults, one per stage.
  EXPECT_TRUE(g.enabled(Feature::kPodLevelResources));                    // beta, on
  EXPECT_TRUE(g.enabled(Feature::kInPlacePodVerticalScaling));            // GA, locked
  EXPECT_TRUE(g.enabled(Feature::kNominatedNodeNameForExpectation));      // beta, on
  EXPECT_TRUE(g.enabled(Feature::kNodeDeclaredFeatures));                 // GA, locked
  EXPECT_FALSE(g.enabled(Feature::kTaintTolerationComparisonOperators));  // alpha
  EXPECT_FALSE(g.enabled(Feature::kSchedulerAsyncAPICalls));              // beta, off
  EXPECT_EQ(g.changed(), "");
}

TEST(FeatureGates, SetParsesTheFlagValue) {
  Gates g;
  EXPECT_EQ(g.set("TaintTolerationComparisonOperators=true, PodLevelResources=false"),
            std::nullopt);
  EXPECT_TRUE(g.enabled(Feature::kTaintTolerationComparisonOperators));
  EXPECT_FALSE(g.enabled(Feature::kPodLevelResources));
  EXPECT_EQ(g.changed(), "PodLevelResources=false,TaintTolerationComparisonOperators=true");
  // Go's ParseBool spellings.
  EXPECT_EQ(g.set("PodLevelResources=T,SchedulerAsyncAPICalls=1"), std::nullopt);
  EXPECT_TRUE(g.enabled(Feature::kPodLevelResources));
  EXPECT_TRUE(g.enabled(Feature::kSchedulerAsyncAPICalls));
  EXPECT_EQ(g.set(""), std::nullopt);
}

TEST(FeatureGates, ErrorsAreUpstreamsAndChangeNothing) {
  struct Case {
    const char* value;
    const char* error;
  };
  const Case cases[] = {
      {"NoSuchGate=true", "unrecognized feature gate: NoSuchGate"},
      {"podlevelresources=true", "unrecognized feature gate: podlevelresources"},
      {"InPlacePodVerticalScaling=false",
       "cannot set feature gate InPlacePodVerticalScaling to false, feature is locked to true"},
      {"NodeDeclaredFeatures=false",
       "cannot set feature gate NodeDeclaredFeatures to false, feature is locked to true"},
      {"PodLevelResources", "missing bool value for PodLevelResources"},
      {"PodLevelResources=yes",
       "invalid value of PodLevelResources=yes, err: strconv.ParseBool: parsing \"yes\": invalid "
       "syntax"},
  };
  for (const auto& c : cases) {
    Gates g;
    // The valid item before the bad one is not applied either.
    EXPECT_EQ(g.set(std::string("SchedulerAsyncAPICalls=true,") + c.value), c.error) << c.value;
    EXPECT_EQ(g, Gates()) << c.value;
  }
  // A locked gate may be set to its own value (a warning upstream, not an error).
  Gates g;
  EXPECT_EQ(g.set("InPlacePodVerticalScaling=true"), std::nullopt);
}

TEST(FeatureGates, AllAlphaAndAllBetaLeaveNamedAndLockedGatesAlone) {
  Gates g;
  ASSERT_EQ(g.set("AllAlpha=true,AllBeta=false,PodLevelResources=true"), std::nullopt);
  EXPECT_TRUE(g.enabled(Feature::kTaintTolerationComparisonOperators));  // alpha
  EXPECT_TRUE(g.enabled(Feature::kCompositePodGroup));                   // alpha
  EXPECT_FALSE(g.enabled(Feature::kNominatedNodeNameForExpectation));    // beta
  EXPECT_TRUE(g.enabled(Feature::kPodLevelResources));                   // beta, named
  EXPECT_TRUE(g.enabled(Feature::kDynamicResourceAllocation));           // GA, locked
}

TEST(FeatureGates, KnownFeaturesListsAlphaAndBetaAsUpstream) {
  const auto lines = knownFeatures();
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(lines[0], "AllAlpha=true|false (ALPHA - default=false)");
  EXPECT_EQ(lines[1], "AllBeta=true|false (BETA - default=false)");
  auto has = [&](const std::string& l) {
    return std::find(lines.begin(), lines.end(), l) != lines.end();
  };
  EXPECT_TRUE(has("PodLevelResources=true|false (BETA - default=true)"));
  EXPECT_TRUE(has("TaintTolerationComparisonOperators=true|false (ALPHA - default=false)"));
  // GA gates are accepted but not listed.
  EXPECT_FALSE(has("InPlacePodVerticalScaling=true|false (GA - default=true)"));
}

// Gates are values: changing a copy leaves the original as it was.
TEST(FeatureGates, CopiesAreIndependent) {
  const Gates defaults;
  Gates on = defaults;
  on.force(Feature::kTaintTolerationComparisonOperators, true);
  EXPECT_TRUE(on.enabled(Feature::kTaintTolerationComparisonOperators));
  EXPECT_FALSE(defaults.enabled(Feature::kTaintTolerationComparisonOperators));
  EXPECT_NE(on, defaults);
  EXPECT_EQ(find("PodLevelResources")->feature, Feature::kPodLevelResources);
  EXPECT_EQ(find("Nope"), nullptr);
}

}  // namespace
}  // namespace ksched::features

namespace ksched::features {
namespace {

TEST(FeatureGates, CheckRefusesNothingOf137AndWarnsAboutWhatChangesNothing) {
  std::vector<std::string> errors, warnings;
  Gates defaults;
  defaults.check(errors, warnings);
  EXPECT_TRUE(errors.empty());
  EXPECT_TRUE(warnings.empty());

  // The gates once refused (CompositePodGroup, DRAWorkloadResourceClaims) now switch.
  Gates g;
  ASSERT_EQ(g.set("CompositePodGroup=true,DRAWorkloadResourceClaims=true,"
                  "DRAFractionalCapacityRange=false,SchedulerAsyncAPICalls=true,"
                  "TaintTolerationComparisonOperators=true,VolumeLimitScaling=false,"
                  "StorageCapacityScoring=false"),
            std::nullopt);
  g.check(errors, warnings);
  EXPECT_TRUE(errors.empty());
  EXPECT_EQ(warnings,
            (std::vector<std::string>{
                "feature gate DRAFractionalCapacityRange=false: ksched does not have this feature "
                "yet, it changes nothing (docs/compatibility.md)",
                "feature gate SchedulerAsyncAPICalls=true: changes nothing in ksched "
                "(docs/compatibility.md)"}));
}

TEST(FeatureGates, ListTypeAttributesSwitches) {
  const Spec& s = spec(Feature::kDRAListTypeAttributes);
  EXPECT_EQ(s.stage, Stage::kAlpha);
  EXPECT_FALSE(s.defaultValue);
  EXPECT_EQ(s.support, Support::kSwitches);
  Gates g;
  ASSERT_EQ(g.set("DRAListTypeAttributes=true"), std::nullopt);
  EXPECT_TRUE(g.enabled(Feature::kDRAListTypeAttributes));
  std::vector<std::string> errors, warnings;
  g.check(errors, warnings);
  EXPECT_TRUE(errors.empty());
  EXPECT_TRUE(warnings.empty());
}

// kube-scheduler's process accepts every component's gates (one process-wide set): a
// --feature-gates value shared by a cluster's components starts ksched too, with a warning.
TEST(FeatureGates, OtherComponentsGatesAreAcceptedWithAWarning) {
  Gates g;
  ASSERT_EQ(g.set("NodeSwap=true, PodLevelResources=false,KubeletPSI=false"), std::nullopt);
  EXPECT_FALSE(g.enabled(Feature::kPodLevelResources));
  ASSERT_EQ(g.set("NodeSwap", false), std::nullopt);  // set again: the last value counts
  std::vector<std::string> errors, warnings;
  g.check(errors, warnings);
  EXPECT_TRUE(errors.empty());
  ASSERT_GE(warnings.size(), 2U);
  EXPECT_EQ(warnings[0],
            "feature gate KubeletPSI=false: a gate of other Kubernetes components, not of the "
            "scheduler; ksched accepts it and it changes nothing (docs/compatibility.md)");
  EXPECT_EQ(warnings[1],
            "feature gate NodeSwap=false: a gate of other Kubernetes components, not of the "
            "scheduler; ksched accepts it and it changes nothing (docs/compatibility.md)");
  // Names are case-sensitive, and a name no component has is still refused.
  EXPECT_EQ(g.set("nodeswap=true"), "unrecognized feature gate: nodeswap");
  EXPECT_EQ(g.set("NodeSwap=true,NoSuchGate=true"), "unrecognized feature gate: NoSuchGate");
  EXPECT_EQ(g.changed(), "PodLevelResources=false") << "ksched's own gates only";
}

}  // namespace
}  // namespace ksched::features
