#include "plugins/volume_binding/volume_binding.h"

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include <ksched/api/node.h>
#include <ksched/api/quantity.h>
#include <ksched/registry.h>

#include "tests/support/hint_test_util.h"
#include "tests/support/plugin_test_util.h"
#include "tests/support/volume_test_objects.h"

namespace ksched::plugins {
namespace {

using testutil::PodWrapper;

using namespace testutil::volumes;  // NOLINT(google-build-using-namespace)

void addClasses(StaticClusterListers& l) {
  l.add(storageClass(kWaitClass, api::kVolumeBindingWaitForFirstConsumer,
                     volume_binding::kNotSupportedProvisioner));
  l.add(storageClass(kImmediateClass, api::kVolumeBindingImmediate, "example.com/csi"));
  l.add(storageClass(kProvisionClass, api::kVolumeBindingWaitForFirstConsumer, "example.com/csi"));
  api::TopologySelectorTerm zoneA;
  zoneA.matchLabelExpressions.push_back({"topology.kubernetes.io/zone", {"a"}});
  l.add(storageClass(kTopologyClass, api::kVolumeBindingWaitForFirstConsumer, "example.com/csi",
                     {zoneA}));
}

// A plugin over in-memory listers and one cycle's state.
class Fixture {
 public:
  Fixture() : plugin_(VolumeBindingArgs{}, handle_) { addClasses(handle_.mutableListers()); }
  StaticClusterListers& listers() { return handle_.mutableListers(); }
  VolumeBinding& plugin() { return plugin_; }

  Status preFilter(const api::Pod& pod, CycleState& state) {
    PreFilterResult result;
    testutil::FakeLister nodes;
    return plugin_.preFilter(state, pod, nodes, result);
  }
  // The chosen PV per claim on `node` after a successful Filter.
  std::map<std::string, std::string> decision(const CycleState& state, const std::string& node) {
    std::map<std::string, std::string> out;
    auto& data = state.read(volume_binding::kStateKey)->data();
    std::lock_guard lock(data.mu);
    auto it = data.podVolumesByNode.find(node);
    if (it == data.podVolumesByNode.end()) return out;
    for (const auto& b : it->second->staticBindings)
      out[b.pvc->metadata.name] = b.pv->metadata.name;
    for (const auto& c : it->second->dynamicProvisions) out[c->metadata.name] = "<provision>";
    return out;
  }

 private:
  testutil::FakeHandle handle_;
  VolumeBinding plugin_;
};

struct FilterCase {
  std::string name;
  std::vector<PVCSpec> claims;
  std::vector<PVSpec> pvs;
  std::string node = "node-a";
  std::string zone = "a";
  Code want = Code::kSuccess;
  std::vector<std::string> wantReasons;
  std::map<std::string, std::string> wantChoice;  // claim -> PV (or "<provision>")
};

class VolumeBindingFilterTest : public ::testing::TestWithParam<FilterCase> {};

TEST_P(VolumeBindingFilterTest, Filter) {
  const FilterCase& c = GetParam();
  Fixture f;
  std::vector<std::string> names;
  for (const PVCSpec& pvc : c.claims) {
    f.listers().add(makePVC(pvc));
    names.push_back(pvc.name);
  }
  for (const PVSpec& pv : c.pvs) f.listers().add(makePV(pv));
  const api::Pod pod = podWithClaims(names);
  CycleState state;
  Status pre = f.preFilter(pod, state);
  ASSERT_TRUE(pre.ok()) << pre.message();
  auto ni = nodeInfo(c.node, c.zone);
  Status st = f.plugin().filter(state, pod, *ni);
  EXPECT_EQ(st.code(), c.want) << st.message();
  EXPECT_EQ(st.reasons(), c.wantReasons);
  if (st.ok()) {
    EXPECT_EQ(f.decision(state, c.node), c.wantChoice);
  }
}

const std::string kBindConflict(VolumeBinding::kErrReasonBindConflict);
const std::string kNodeConflict(VolumeBinding::kErrReasonNodeConflict);

INSTANTIATE_TEST_SUITE_P(
    Cases, VolumeBindingFilterTest,
    ::testing::Values(
        FilterCase{
            .name = "bound_pv_fits_node",
            .claims = {{.name = "c", .volumeName = "pv"}},
            .pvs =
                {{.name = "pv", .hostname = "node-a", .phase = "Bound", .claimRef = "default/c"}}},
        FilterCase{
            .name = "bound_pv_affinity_conflict",
            .claims = {{.name = "c", .volumeName = "pv"}},
            .pvs =
                {{.name = "pv", .hostname = "node-b", .phase = "Bound", .claimRef = "default/c"}},
            .want = Code::kUnschedulableAndUnresolvable,
            .wantReasons = {kNodeConflict}},
        FilterCase{.name = "bound_pv_missing",
                   .claims = {{.name = "c", .volumeName = "gone"}},
                   .want = Code::kUnschedulableAndUnresolvable,
                   .wantReasons = {std::string(VolumeBinding::kErrReasonPVNotExist)}},
        FilterCase{.name = "smallest_fit_wins",
                   .claims = {{.name = "c", .size = "5Gi"}},
                   .pvs = {{.name = "big", .size = "100Gi"},
                           {.name = "small", .size = "6Gi"},
                           {.name = "tiny", .size = "1Gi"}},
                   .wantChoice = {{"c", "small"}}},
        FilterCase{.name = "exact_size_fits",
                   .claims = {{.name = "c", .size = "5Gi"}},
                   .pvs = {{.name = "pv", .size = "5Gi"}},
                   .wantChoice = {{"c", "pv"}}},
        FilterCase{.name = "too_small",
                   .claims = {{.name = "c", .size = "5Gi"}},
                   .pvs = {{.name = "pv", .size = "4Gi"}},
                   .want = Code::kUnschedulableAndUnresolvable,
                   .wantReasons = {kBindConflict}},
        FilterCase{.name = "other_class",
                   .claims = {{.name = "c"}},
                   .pvs = {{.name = "pv", .cls = "other"}},
                   .want = Code::kUnschedulableAndUnresolvable,
                   .wantReasons = {kBindConflict}},
        FilterCase{
            .name = "access_mode_missing",
            .claims = {{.name = "c", .modes = {"ReadWriteMany"}}},
            .pvs = {{.name = "rwo", .modes = {"ReadWriteOnce"}},
                    {.name = "rwx", .size = "50Gi", .modes = {"ReadWriteOnce", "ReadWriteMany"}}},
            .wantChoice = {{"c", "rwx"}}},
        FilterCase{.name = "access_mode_conflict",
                   .claims = {{.name = "c", .modes = {"ReadWriteMany"}}},
                   .pvs = {{.name = "rwo", .modes = {"ReadWriteOnce"}}},
                   .want = Code::kUnschedulableAndUnresolvable,
                   .wantReasons = {kBindConflict}},
        FilterCase{.name = "node_affinity_picks_local_pv",
                   .claims = {{.name = "c"}},
                   .pvs = {{.name = "on-b", .size = "6Gi", .hostname = "node-b"},
                           {.name = "on-a", .size = "20Gi", .hostname = "node-a"}},
                   .wantChoice = {{"c", "on-a"}}},
        FilterCase{.name = "node_affinity_conflict",
                   .claims = {{.name = "c"}},
                   .pvs = {{.name = "on-b", .hostname = "node-b"}},
                   .want = Code::kUnschedulableAndUnresolvable,
                   .wantReasons = {kBindConflict}},
        FilterCase{.name = "claimed_by_other_claim",
                   .claims = {{.name = "c"}},
                   .pvs = {{.name = "pv", .claimRef = "default/other"}},
                   .want = Code::kUnschedulableAndUnresolvable,
                   .wantReasons = {kBindConflict}},
        FilterCase{.name = "not_available_phase",
                   .claims = {{.name = "c"}},
                   .pvs = {{.name = "pv", .phase = "Released"}},
                   .want = Code::kUnschedulableAndUnresolvable,
                   .wantReasons = {kBindConflict}},
        FilterCase{.name = "volume_mode_mismatch",
                   .claims = {{.name = "c", .volumeMode = "Block"}},
                   .pvs = {{.name = "pv"}},
                   .want = Code::kUnschedulableAndUnresolvable,
                   .wantReasons = {kBindConflict}},
        FilterCase{
            .name = "selector",
            .claims = {{.name = "c", .selector = api::LabelSelector{{{"tier", "fast"}}, {}}}},
            .pvs = {{.name = "slow", .size = "6Gi", .labels = {{"tier", "slow"}}},
                    {.name = "fast", .size = "9Gi", .labels = {{"tier", "fast"}}}},
            .wantChoice = {{"c", "fast"}}},
        FilterCase{.name = "two_claims_two_pvs",
                   .claims = {{.name = "big", .size = "8Gi"}, {.name = "small", .size = "2Gi"}},
                   .pvs = {{.name = "pv3", .size = "3Gi"}, {.name = "pv9", .size = "9Gi"}},
                   .wantChoice = {{"big", "pv9"}, {"small", "pv3"}}},
        FilterCase{.name = "two_claims_one_pv",
                   .claims = {{.name = "a"}, {.name = "b"}},
                   .pvs = {{.name = "pv"}},
                   .want = Code::kUnschedulableAndUnresolvable,
                   .wantReasons = {kBindConflict}},
        FilterCase{.name = "provision",
                   .claims = {{.name = "c", .cls = std::string(kProvisionClass)}},
                   .wantChoice = {{"c", "<provision>"}}},
        FilterCase{.name = "provision_topology_match",
                   .claims = {{.name = "c", .cls = std::string(kTopologyClass)}},
                   .wantChoice = {{"c", "<provision>"}}},
        FilterCase{.name = "provision_topology_mismatch",
                   .claims = {{.name = "c", .cls = std::string(kTopologyClass)}},
                   .zone = "b",
                   .want = Code::kUnschedulableAndUnresolvable,
                   .wantReasons = {kBindConflict}},
        FilterCase{.name = "static_pv_preferred_over_provisioning",
                   .claims = {{.name = "c", .cls = std::string(kProvisionClass)}},
                   .pvs = {{.name = "pv", .cls = std::string(kProvisionClass)}},
                   .wantChoice = {{"c", "pv"}}},
        FilterCase{.name = "selected_other_node",
                   .claims = {{.name = "c",
                               .cls = std::string(kProvisionClass),
                               .selectedNode = "node-b"}},
                   .want = Code::kUnschedulableAndUnresolvable,
                   .wantReasons = {kBindConflict}},
        // VolumeAttributesClass (upstream FindMatchingVolume): a claim naming a class matches
        // only PVs of that class, a claim naming none only PVs of none.
        FilterCase{.name = "vac_claim_matches_its_class_only",
                   .claims = {{.name = "c", .vac = "gold"}},
                   .pvs = {{.name = "silver", .size = "6Gi", .vac = "silver"},
                           {.name = "none", .size = "7Gi"},
                           {.name = "gold", .size = "50Gi", .vac = "gold"}},
                   .wantChoice = {{"c", "gold"}}},
        FilterCase{.name = "vac_unset_claim_takes_unclassed_pv_only",
                   .claims = {{.name = "c"}},
                   .pvs = {{.name = "gold", .size = "6Gi", .vac = "gold"},
                           {.name = "none", .size = "50Gi"}},
                   .wantChoice = {{"c", "none"}}},
        FilterCase{.name = "vac_no_pv_of_the_class",
                   .claims = {{.name = "c", .vac = "gold"}},
                   .pvs = {{.name = "none"}, {.name = "silver", .vac = "silver"}},
                   .want = Code::kUnschedulableAndUnresolvable,
                   .wantReasons = {kBindConflict}},
        FilterCase{.name = "vac_prebound_pv_of_another_class",
                   .claims = {{.name = "c", .vac = "gold"}},
                   .pvs = {{.name = "pv", .claimRef = "default/c", .vac = "silver"}},
                   .want = Code::kUnschedulableAndUnresolvable,
                   .wantReasons = {kBindConflict}},
        FilterCase{.name = "bound_conflict_and_pv_for_unbound",
                   .claims = {{.name = "bound", .volumeName = "pv-b"}, {.name = "c"}},
                   .pvs = {{.name = "pv-b",
                            .hostname = "node-b",
                            .phase = "Bound",
                            .claimRef = "default/bound"},
                           {.name = "pv"}},
                   .want = Code::kUnschedulableAndUnresolvable,
                   .wantReasons = {kNodeConflict}}),
    [](const ::testing::TestParamInfo<FilterCase>& info) { return info.param.name; });

TEST(VolumeBindingPreFilterTest, Outcomes) {
  Fixture f;
  f.listers().add(makePVC({.name = "wait"}));
  f.listers().add(makePVC({.name = "immediate", .cls = std::string(kImmediateClass)}));
  f.listers().add(makePVC({.name = "deleting", .deleting = true}));
  f.listers().add(makePVC({.name = "bound", .volumeName = "pv"}));
  f.listers().add(makePVC({.name = "prebound", .volumeName = ""}));
  struct Case {
    std::vector<std::string> claims;
    Code want;
    std::string reason;
  } cases[] = {
      {{}, Code::kSkip, ""},
      {{"missing"},
       Code::kUnschedulableAndUnresolvable,
       "persistentvolumeclaim \"missing\" not found"},
      {{"deleting"},
       Code::kUnschedulableAndUnresolvable,
       "persistentvolumeclaim \"deleting\" is being deleted"},
      {{"wait", "immediate"},
       Code::kUnschedulableAndUnresolvable,
       "pod has unbound immediate PersistentVolumeClaims"},
      {{"wait", "bound"}, Code::kSuccess, ""},
  };
  for (const Case& c : cases) {
    CycleState state;
    Status st = f.preFilter(podWithClaims(c.claims), state);
    EXPECT_EQ(st.code(), c.want) << ::testing::PrintToString(c.claims);
    EXPECT_EQ(st.message(), c.reason);
  }
  // A claim naming a volume that is not bound yet counts as unbound immediate (the PV
  // controller binds it).
  api::PersistentVolumeClaim prebound = makePVC({.name = "prebound"});
  prebound.spec.volumeName = "pv";
  f.listers().add(prebound);
  CycleState state;
  Status st = f.preFilter(podWithClaims({"prebound"}), state);
  EXPECT_EQ(st.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(st.message(), "pod has unbound immediate PersistentVolumeClaims");
}

TEST(VolumeBindingPreFilterTest, EphemeralClaimMustBeOwnedByThePod) {
  Fixture f;
  api::Pod pod = PodWrapper("pod").obj();
  api::Volume v;
  v.name = "scratch";
  v.ephemeral = true;
  pod.spec.volumes.push_back(v);
  api::PersistentVolumeClaim pvc = makePVC({.name = "pod-scratch"});
  f.listers().add(pvc);
  CycleState state;
  Status st = f.preFilter(pod, state);
  EXPECT_EQ(st.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(st.message(),
            "PVC default/pod-scratch was not created for pod default/pod (pod is not owner)");
  pvc.metadata.ownerReferences.push_back({"v1", "Pod", "pod", pod.metadata.uid, true});
  f.listers().add(pvc);
  CycleState state2;
  EXPECT_TRUE(f.preFilter(pod, state2).ok());
}

// Reserve assumes the chosen PV, so the next pod's cycle does not pick it; Unreserve gives it
// back.
TEST(VolumeBindingReserveTest, AssumedPVIsNotChosenTwice) {
  Fixture f;
  f.listers().add(makePVC({.name = "c1"}));
  f.listers().add(makePVC({.name = "c2"}));
  f.listers().add(makePV({.name = "pv", .hostname = "node-a"}));
  auto ni = nodeInfo("node-a");

  api::Pod pod1 = podWithClaims({"c1"});
  CycleState s1;
  ASSERT_TRUE(f.preFilter(pod1, s1).ok());
  ASSERT_TRUE(f.plugin().filter(s1, pod1, *ni).ok());
  ASSERT_TRUE(f.plugin().reserve(s1, pod1, "node-a").ok());
  EXPECT_EQ(f.plugin().assumeCacheForTest().sizeForTest(), 1u);

  api::Pod pod2 = podWithClaims({"c2"});
  pod2.metadata.name = "pod2";
  CycleState s2;
  ASSERT_TRUE(f.preFilter(pod2, s2).ok());
  Status st = f.plugin().filter(s2, pod2, *ni);
  EXPECT_EQ(st.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(st.message(), kBindConflict);

  f.plugin().unreserve(s1, pod1, "node-a");
  EXPECT_EQ(f.plugin().assumeCacheForTest().sizeForTest(), 0u);
  CycleState s3;
  ASSERT_TRUE(f.preFilter(pod2, s3).ok());
  EXPECT_TRUE(f.plugin().filter(s3, pod2, *ni).ok());
  EXPECT_EQ(f.decision(s3, "node-a"), (std::map<std::string, std::string>{{"c2", "pv"}}));
}

// Once the informer holds a newer version of an assumed PV, the informer's version wins.
TEST(VolumeBindingReserveTest, NewerInformerVersionWins) {
  Fixture f;
  f.listers().add(makePVC({.name = "c1"}));
  f.listers().add(makePV({.name = "pv"}));
  api::Pod pod = podWithClaims({"c1"});
  CycleState s;
  ASSERT_TRUE(f.preFilter(pod, s).ok());
  ASSERT_TRUE(f.plugin().filter(s, pod, *nodeInfo("node-a")).ok());
  ASSERT_TRUE(f.plugin().reserve(s, pod, "node-a").ok());
  const auto& cache = f.plugin().assumeCacheForTest();
  auto assumed = cache.getPV(f.listers(), "pv");
  ASSERT_TRUE(assumed && assumed->spec.claimRef);
  EXPECT_EQ(assumed->spec.claimRef->name, "c1");
  EXPECT_EQ(assumed->spec.claimRef->uid, "c1-uid");
  EXPECT_EQ(assumed->metadata.annotations.at("pv.kubernetes.io/bound-by-controller"), "yes");
  api::PersistentVolume newer = makePV({.name = "pv"});
  newer.metadata.resourceVersion = "2";
  f.listers().add(newer);
  EXPECT_FALSE(cache.getPV(f.listers(), "pv")->spec.claimRef.has_value());
}

TEST(VolumeBindingReserveTest, ProvisioningAssumesSelectedNode) {
  Fixture f;
  f.listers().add(makePVC({.name = "c", .cls = std::string(kProvisionClass)}));
  api::Pod pod = podWithClaims({"c"});
  CycleState s;
  ASSERT_TRUE(f.preFilter(pod, s).ok());
  ASSERT_TRUE(f.plugin().filter(s, pod, *nodeInfo("node-a")).ok());
  ASSERT_TRUE(f.plugin().reserve(s, pod, "node-a").ok());
  auto pvc = f.plugin().assumeCacheForTest().getPVC(f.listers(), "default", "c");
  ASSERT_TRUE(pvc);
  EXPECT_EQ(pvc->metadata.annotations.at(std::string(api::kAnnSelectedNode)), "node-a");
  // Another pod with the same claim now only fits node-a.
  CycleState s2;
  ASSERT_TRUE(f.preFilter(pod, s2).ok());
  Status st = f.plugin().filter(s2, pod, *nodeInfo("node-b"));
  EXPECT_EQ(st.message(), kBindConflict);
  EXPECT_TRUE(f.plugin().filter(s2, pod, *nodeInfo("node-a")).ok());
}

TEST(VolumeBindingReserveTest, AllBoundNeedsNoPreBind) {
  Fixture f;
  f.listers().add(makePVC({.name = "c", .volumeName = "pv"}));
  f.listers().add(makePV({.name = "pv", .phase = "Bound", .claimRef = "default/c"}));
  api::Pod pod = podWithClaims({"c"});
  CycleState s;
  ASSERT_TRUE(f.preFilter(pod, s).ok());
  ASSERT_TRUE(f.plugin().filter(s, pod, *nodeInfo("node-a")).ok());
  ASSERT_TRUE(f.plugin().reserve(s, pod, "node-a").ok());
  // No API client in unit tests: PreBind would fail if it tried to write.
  EXPECT_TRUE(f.plugin().preBind(s, pod, "node-a").ok());
  EXPECT_EQ(f.plugin().assumeCacheForTest().sizeForTest(), 0u);
}

features::Gates scoringOff() {
  features::Gates g;
  EXPECT_EQ(g.set("StorageCapacityScoring=false"), std::nullopt);
  return g;
}

TEST(VolumeBindingArgsTest, DefaultsAndValidation) {
  const features::Gates on;
  const features::Gates off = scoringOff();
  EXPECT_EQ(decodeVolumeBindingArgs(nullptr, on).bindTimeoutSeconds, 600);
  EXPECT_EQ(decodeVolumeBindingArgs(nlohmann::json::object(), on).bindTimeoutSeconds, 600);
  EXPECT_EQ(decodeVolumeBindingArgs({{"bindTimeoutSeconds", 0}}, on).bindTimeoutSeconds, 0);
  EXPECT_EQ(decodeVolumeBindingArgs({{"kind", "VolumeBindingArgs"}, {"bindTimeoutSeconds", 30}}, on)
                .bindTimeoutSeconds,
            30);
  // Upstream SetDefaults_VolumeBindingArgs: the shape only with StorageCapacityScoring.
  using Shape = std::vector<helper::UtilizationShapePoint>;
  EXPECT_EQ(decodeVolumeBindingArgs(nullptr, on).shape, (Shape{{0, 10}, {100, 0}}));
  EXPECT_EQ(decodeVolumeBindingArgs({{"shape", nlohmann::json::array()}}, on).shape,
            (Shape{{0, 10}, {100, 0}}));
  EXPECT_TRUE(decodeVolumeBindingArgs(nullptr, off).shape.empty());
  EXPECT_EQ(
      decodeVolumeBindingArgs(
          {{"shape", {{{"utilization", 0}, {"score", 0}}, {{"utilization", 100}, {"score", 10}}}}},
          on)
          .shape,
      (Shape{{0, 0}, {100, 10}}));
  // Upstream TestValidateVolumeBindingArgs.
  struct Case {
    nlohmann::json args;
    bool scoring = true;
    std::string want;
  } cases[] = {
      {{{"bindTimeoutSeconds", -10}},
       true,
       "bindTimeoutSeconds: Invalid value: -10: invalid BindTimeoutSeconds, should not be a "
       "negative value"},
      {{{"shape", nlohmann::json::array()}},
       false,
       "shape: Invalid value: \"[]\": unexpected field `shape`, remove it or turn on the feature "
       "gate StorageCapacityScoring"},
      {{{"shape", {{{"utilization", 3}, {"score", 3}}, {{"utilization", 1}, {"score", 1}}}}},
       true,
       "shape[1].utilization: Invalid value: 1: values must be sorted in increasing order"},
      {{{"shape",
         {{{"utilization", -1}, {"score", 1}},
          {{"utilization", 10}, {"score", -1}},
          {{"utilization", 20}, {"score", 11}},
          {{"utilization", 101}, {"score", 1}}}}},
       true,
       // ksched's args errors name the first field (upstream lists all four).
       "shape[0].utilization: Invalid value: -1: not in valid range [0, 100]"},
  };
  for (const Case& c : cases) {
    try {
      (void)decodeVolumeBindingArgs(c.args, c.scoring ? on : off);
      ADD_FAILURE() << "accepted " << c.args.dump();
    } catch (const PluginArgsError& e) {
      EXPECT_EQ(std::string(e.what()), c.want);
    }
  }
  EXPECT_THROW((void)decodeVolumeBindingArgs({{"bindTimeout", 1}}, on), PluginArgsError);
  EXPECT_THROW((void)decodeVolumeBindingArgs({{"bindTimeoutSeconds", "1"}}, on), PluginArgsError);
  EXPECT_THROW((void)decodeVolumeBindingArgs({{"shape", "x"}}, on), PluginArgsError);
}

TEST(VolumeBindingTest, QueueingHints) {
  struct Case {
    std::string name;
    ClusterEvent event;
    EventObject oldObj;
    EventObject newObj;
    std::optional<QueueingHint> want;
  };
  using testutil::obj;
  constexpr auto kQueue = QueueingHint::kQueue;
  constexpr auto kSkip = QueueingHint::kSkip;
  const ClusterEvent scAdd{EventResource::kStorageClass, kAdd, {}};
  const ClusterEvent scUpdate{EventResource::kStorageClass, kUpdateOther, {}};
  const ClusterEvent pvcAdd{EventResource::kPersistentVolumeClaim, kAdd, {}};
  const ClusterEvent pvcUpdate{EventResource::kPersistentVolumeClaim, kUpdateOther, {}};
  const ClusterEvent csiNodeUpdate{EventResource::kCSINode, kUpdateOther, {}};
  api::TopologySelectorTerm zoneA;
  zoneA.matchLabelExpressions.push_back({"topology.kubernetes.io/zone", {"a"}});
  api::TopologySelectorTerm zoneB;
  zoneB.matchLabelExpressions.push_back({"topology.kubernetes.io/zone", {"b"}});
  const api::StorageClass cls =
      storageClass(kProvisionClass, api::kVolumeBindingWaitForFirstConsumer, "csi", {zoneA});
  api::StorageClass clsZoneB = cls;
  clsZoneB.allowedTopologies = {zoneB};
  api::StorageClass clsParams = cls;
  clsParams.parameters["type"] = "ssd";
  auto claimIn = [](std::string name, std::string ns) {
    api::PersistentVolumeClaim c = makePVC({.name = std::move(name)});
    c.metadata.namespace_ = std::move(ns);
    return obj(std::move(c));
  };
  const EventObject pv = obj(makePV({.name = "pv"}));
  const EventObject node = obj(testutil::NodeWrapper("n").label("zone", "a").obj());
  auto csiNode = [](std::string migrated, std::vector<std::string> drivers) {
    api::CSINode n;
    n.metadata.name = "n";
    if (!migrated.empty()) {
      n.metadata.annotations["storage.alpha.kubernetes.io/migrated-plugins"] = migrated;
    }
    for (auto& d : drivers) n.spec.drivers.push_back({std::move(d), "id", {}, std::nullopt});
    return obj(std::move(n));
  };

  const EventObject none;
  const std::vector<Case> cases = {
      {"class added", scAdd, none, obj(cls), kQueue},
      {"class allowedTopologies changed", scUpdate, obj(cls), obj(clsZoneB), kQueue},
      {"class parameters changed", scUpdate, obj(cls), obj(clsParams), kSkip},
      {"class delete is not registered", testutil::event(EventResource::kStorageClass, kDelete),
       obj(cls), none, std::nullopt},
      {"the pod's claim added", pvcAdd, none, claimIn("c1", "default"), kQueue},
      {"the pod's claim updated", pvcUpdate, claimIn("c1", "default"), claimIn("c1", "default"),
       kQueue},
      {"the pod's ephemeral claim updated", pvcUpdate, claimIn("pod-scratch", "default"),
       claimIn("pod-scratch", "default"), kQueue},
      {"another claim updated", pvcUpdate, claimIn("c2", "default"), claimIn("c2", "default"),
       kSkip},
      {"a claim of that name in another namespace", pvcAdd, none, claimIn("c1", "other"), kSkip},
      {"PV added", testutil::event(EventResource::kPersistentVolume, kAdd), none, pv, kQueue},
      {"PV updated", testutil::event(EventResource::kPersistentVolume, kUpdateOther), pv, pv,
       kQueue},
      {"PV delete is not registered", testutil::event(EventResource::kPersistentVolume, kDelete),
       pv, none, std::nullopt},
      {"node added", events::kNodeAdd, none, node, kQueue},
      {"node label update", testutil::event(EventResource::kNode, kUpdateNodeLabel), node, node,
       kQueue},
      {"node taint update is not registered",
       testutil::event(EventResource::kNode, kUpdateNodeTaint), node, node, std::nullopt},
      {"node allocatable update is not registered",
       testutil::event(EventResource::kNode, kUpdateNodeAllocatable), node, node, std::nullopt},
      {"CSINode added", testutil::event(EventResource::kCSINode, kAdd), none, csiNode("", {}),
       kQueue},
      {"CSINode migrated plugins changed", csiNodeUpdate, csiNode("", {"ebs.csi.aws.com"}),
       csiNode("kubernetes.io/aws-ebs", {"ebs.csi.aws.com"}), kQueue},
      {"CSINode got a driver", csiNodeUpdate, csiNode("", {}), csiNode("", {"ebs.csi.aws.com"}),
       kSkip},
      {"pod delete is not registered", events::kAssignedPodDelete,
       obj(PodWrapper("e").nodeName("n").obj()), none, std::nullopt},
  };

  testutil::FakeHandle h;
  VolumeBinding pl(VolumeBindingArgs{}, h);
  api::Pod pod = podWithClaims({"c1"});
  api::Volume scratch;
  scratch.name = "scratch";
  scratch.ephemeral = true;
  pod.spec.volumes.push_back(scratch);
  for (const Case& c : cases) {
    EXPECT_EQ(testutil::hintName(testutil::hintFor(pl, c.event, pod, c.oldObj, c.newObj)),
              testutil::hintName(c.want))
        << c.name;
  }
}

// What the plugin says of its rejections (FilterExplainer): per claim, the PV whose node
// affinity does not match, the PV that does not exist, the class that cannot provision, the
// node a claim is provisioned for.
TEST(VolumeBindingExplain, NamesTheClaimAndItsPVOrClass) {
  struct Case {
    std::string name;
    std::vector<PVCSpec> claims;
    std::vector<PVSpec> pvs;
    std::string zone = "a";
    std::vector<std::string> want;
  };
  const std::vector<Case> cases = {
      {"boundPVOnAnotherNode",
       {{.name = "data", .volumeName = "pv-b"}},
       {{.name = "pv-b",
         .hostname = "node-b",
         .phase = std::string(api::kVolumeBound),
         .claimRef = "default/data"}},
       "a",
       {"claim default/data: the node affinity of its PV pv-b does not match the node"}},
      {"boundPVMissing",
       {{.name = "data", .volumeName = "pv-gone"}},
       {},
       "a",
       {"claim default/data is bound to PV pv-gone, which does not exist"}},
      {"noPVAndNoProvisioner",
       {{.name = "data"}},
       {{.name = "pv-b", .hostname = "node-b"}},
       "a",
       {"claim default/data: no available PV of class \"wait\" matches it here, and class "
        "\"wait\" does not provision volumes"}},
      {"provisionerOutsideItsTopology",
       {{.name = "data", .cls = std::string(kTopologyClass)}},
       {},
       "b",
       {"claim default/data: no available PV of class \"provision-zone-a\" matches it here, and "
        "class \"provision-zone-a\" does not provision on this node (allowedTopologies)"}},
      {"provisionedForAnotherNode",
       {{.name = "data", .cls = std::string(kProvisionClass), .selectedNode = "node-b"}},
       {},
       "a",
       {"claim default/data is being provisioned for node node-b"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Fixture f;
    std::vector<std::string> names;
    for (const PVCSpec& pvc : c.claims) {
      f.listers().add(makePVC(pvc));
      names.push_back(pvc.name);
    }
    for (const PVSpec& pv : c.pvs) f.listers().add(makePV(pv));
    const api::Pod pod = podWithClaims(names);
    CycleState state;
    ASSERT_TRUE(f.preFilter(pod, state).ok());
    auto node = nodeInfo("node-a", c.zone);
    ASSERT_TRUE(f.plugin().filter(state, pod, *node).isRejected());
    EXPECT_EQ(f.plugin().explainRejection(state, pod, *node), c.want);
  }
}

// KEP-5381 (MutablePVNodeAffinity, an apiserver gate): a bound PV's node affinity may change;
// VolumeBinding reads the PV as it is now in every cycle, and the PV update requeues the pod
// (no hint, as upstream).
TEST(VolumeBindingTest, APVsChangedNodeAffinityIsFollowed) {
  Fixture f;
  f.listers().add(makePVC({.name = "c", .volumeName = "pv"}));
  PVSpec spec{.name = "pv", .hostname = "node-b", .phase = "Bound", .claimRef = "default/c"};
  f.listers().add(makePV(spec));
  const api::Pod pod = podWithClaims({"c"});
  auto nodeA = nodeInfo("node-a");
  {
    CycleState state;
    ASSERT_TRUE(f.preFilter(pod, state).ok());
    Status st = f.plugin().filter(state, pod, *nodeA);
    EXPECT_EQ(st.reasons(), std::vector<std::string>{kNodeConflict});
  }
  // The data moved: the CSI driver rewrote the PV's affinity to node-a.
  auto oldPV = std::make_shared<const api::PersistentVolume>(makePV(spec));
  spec.hostname = "node-a";
  f.listers().add(makePV(spec));
  auto newPV = std::make_shared<const api::PersistentVolume>(makePV(spec));
  EXPECT_EQ(testutil::hintFor(f.plugin(), {EventResource::kPersistentVolume, kUpdateOther, {}}, pod,
                              oldPV, newPV),
            QueueingHint::kQueue);
  CycleState state;
  ASSERT_TRUE(f.preFilter(pod, state).ok());
  EXPECT_TRUE(f.plugin().filter(state, pod, *nodeA).ok());
}

}  // namespace
}  // namespace ksched::plugins
