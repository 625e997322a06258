#include "plugins/volume_zone/volume_zone.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <ksched/api/storage.h>

#include "tests/support/hint_test_util.h"
#include "tests/support/plugin_test_util.h"

namespace ksched::plugins {
namespace {

using testutil::FakeLister;
using testutil::NodeWrapper;
using testutil::PodWrapper;

constexpr char kZone[] = "topology.kubernetes.io/zone";
constexpr char kRegion[] = "topology.kubernetes.io/region";
constexpr char kBetaZone[] = "failure-domain.beta.kubernetes.io/zone";
constexpr char kBetaRegion[] = "failure-domain.beta.kubernetes.io/region";
constexpr char kConflict[] = "node(s) had no available volume zone";

using Labels = std::map<std::string, std::string, std::less<>>;

api::Pod podWithClaims(const std::vector<std::string>& claims) {
  api::Pod p = PodWrapper("pod").obj();
  for (const auto& c : claims) {
    api::Volume v;
    v.name = "v-" + c;
    v.persistentVolumeClaim = api::PersistentVolumeClaimVolumeSource{c, false};
    p.spec.volumes.push_back(std::move(v));
  }
  return p;
}

api::PersistentVolumeClaim pvc(std::string name, std::string volumeName,
                               std::optional<std::string> storageClass = std::nullopt) {
  api::PersistentVolumeClaim c;
  c.metadata.name = std::move(name);
  c.metadata.namespace_ = "default";
  c.spec.volumeName = std::move(volumeName);
  c.spec.storageClassName = std::move(storageClass);
  return c;
}

api::PersistentVolume pv(std::string name, Labels labels) {
  api::PersistentVolume v;
  v.metadata.name = std::move(name);
  v.metadata.labels = std::move(labels);
  return v;
}

api::StorageClass storageClass(std::string name, std::string_view mode) {
  api::StorageClass sc;
  sc.metadata.name = std::move(name);
  sc.volumeBindingMode = std::string(mode);
  return sc;
}

// The objects every case sees: PVs in zones, claims bound to them, unbound claims.
void addObjects(StaticClusterListers& l) {
  l.add(pv("pv-zone-a", {{kZone, "us-west1-a"}}));
  l.add(pv("pv-zone-ab", {{kZone, "us-west1-a__us-west1-b"}}));
  l.add(pv("pv-region", {{kRegion, "us-west1"}}));
  l.add(pv("pv-beta-zone", {{kBetaZone, "us-west1-a"}}));
  l.add(pv("pv-beta-region", {{kBetaRegion, "us-west1"}, {kBetaZone, "us-west1-b"}}));
  l.add(pv("pv-nolabel", {}));
  l.add(pv("pv-malformed", {{kZone, "us-west1-a____"}}));
  for (const char* name : {"pv-zone-a", "pv-zone-ab", "pv-region", "pv-beta-zone", "pv-beta-region",
                           "pv-nolabel", "pv-malformed"}) {
    l.add(pvc(std::string("claim-") + (name + 3), name));
  }
  l.add(pvc("claim-missing-pv", "pv-does-not-exist"));
  l.add(pvc("claim-no-class", ""));
  l.add(pvc("claim-wffc", "", "wffc"));
  l.add(pvc("claim-immediate", "", "immediate"));
  l.add(pvc("claim-unknown-class", "", "nope"));
  l.add(storageClass("wffc", api::kVolumeBindingWaitForFirstConsumer));
  l.add(storageClass("immediate", api::kVolumeBindingImmediate));
}

struct Case {
  std::string name;
  std::vector<std::string> claims;
  Labels nodeLabels;
  Code wantPreFilter;
  std::string wantPreFilterReason;
  Code wantFilter;  // when PreFilter succeeded
};

class VolumeZoneTest : public ::testing::TestWithParam<Case> {};

TEST_P(VolumeZoneTest, PreFilterAndFilter) {
  const Case& c = GetParam();
  testutil::FakeHandle h;
  addObjects(h.mutableListers());
  VolumeZone pl(h.listers());
  NodeWrapper node("node");
  for (const auto& [k, v] : c.nodeLabels) node.label(k, v);
  auto ni = testutil::makeNodeInfo(node);
  FakeLister lister({ni});
  const api::Pod pod = podWithClaims(c.claims);
  CycleState state;
  PreFilterResult result;
  Status pre = pl.preFilter(state, pod, lister, result);
  ASSERT_EQ(pre.code(), c.wantPreFilter) << pre.message();
  if (!c.wantPreFilterReason.empty()) {
    EXPECT_EQ(pre.reasons(), std::vector<std::string>{c.wantPreFilterReason});
  }
  if (!pre.ok()) return;
  Status s = pl.filter(state, pod, *ni);
  EXPECT_EQ(s.code(), c.wantFilter) << s.message();
  if (c.wantFilter != Code::kSuccess) {
    EXPECT_EQ(s.reasons(), std::vector<std::string>{kConflict});
  }
}

// Mirrors upstream's TestSingleZone, TestMultiZone and TestWithBinding.
INSTANTIATE_TEST_SUITE_P(
    Table, VolumeZoneTest,
    ::testing::Values(
        Case{"noVolumes", {}, {{kZone, "us-west1-a"}}, Code::kSkip, "", Code::kSuccess},
        Case{"pvWithoutLabels",
             {"claim-nolabel"},
             {{kZone, "us-west1-a"}},
             Code::kSkip,
             "",
             Code::kSuccess},
        Case{"sameZone",
             {"claim-zone-a"},
             {{kZone, "us-west1-a"}},
             Code::kSuccess,
             "",
             Code::kSuccess},
        Case{"otherZone",
             {"claim-zone-a"},
             {{kZone, "us-west1-b"}},
             Code::kSuccess,
             "",
             Code::kUnschedulableAndUnresolvable},
        Case{"nodeWithoutTopologyLabels",
             {"claim-zone-a"},
             {{"other", "x"}},
             Code::kSuccess,
             "",
             Code::kSuccess},
        Case{"nodeWithOnlyRegion",
             {"claim-zone-a"},
             {{kRegion, "us-west1"}},
             Code::kSuccess,
             "",
             Code::kUnschedulableAndUnresolvable},
        Case{"zoneSetSecondValue",
             {"claim-zone-ab"},
             {{kZone, "us-west1-b"}},
             Code::kSuccess,
             "",
             Code::kSuccess},
        Case{"zoneSetNoMatch",
             {"claim-zone-ab"},
             {{kZone, "us-west1-c"}},
             Code::kSuccess,
             "",
             Code::kUnschedulableAndUnresolvable},
        Case{"regionMatch",
             {"claim-region"},
             {{kRegion, "us-west1"}, {kZone, "us-west1-z"}},
             Code::kSuccess,
             "",
             Code::kSuccess},
        Case{"betaPVLabelMatchesGANodeLabel",
             {"claim-beta-zone"},
             {{kZone, "us-west1-a"}},
             Code::kSuccess,
             "",
             Code::kSuccess},
        Case{"betaPVLabelMatchesBetaNodeLabel",
             {"claim-beta-zone"},
             {{kBetaZone, "us-west1-a"}},
             Code::kSuccess,
             "",
             Code::kSuccess},
        Case{"betaRegionAndZoneOneMismatch",
             {"claim-beta-region"},
             {{kBetaRegion, "us-west1"}, {kBetaZone, "us-west1-a"}},
             Code::kSuccess,
             "",
             Code::kUnschedulableAndUnresolvable},
        Case{"twoClaimsOneMismatch",
             {"claim-zone-a", "claim-region"},
             {{kZone, "us-west1-a"}, {kRegion, "us-east1"}},
             Code::kSuccess,
             "",
             Code::kUnschedulableAndUnresolvable},
        Case{"malformedLabelIgnored",
             {"claim-malformed"},
             {{kZone, "us-west1-b"}},
             Code::kSkip,
             "",
             Code::kSuccess},
        Case{"waitForFirstConsumerSkipped",
             {"claim-wffc"},
             {{kZone, "us-west1-a"}},
             Code::kSkip,
             "",
             Code::kSuccess},
        Case{"missingPVC",
             {"claim-nope"},
             {},
             Code::kUnschedulableAndUnresolvable,
             "persistentvolumeclaim \"claim-nope\" not found",
             Code::kSuccess},
        Case{"missingPV",
             {"claim-missing-pv"},
             {},
             Code::kUnschedulableAndUnresolvable,
             "persistentvolume \"pv-does-not-exist\" not found",
             Code::kSuccess},
        Case{"unboundWithoutClass",
             {"claim-no-class"},
             {},
             Code::kUnschedulableAndUnresolvable,
             "PersistentVolumeClaim had no pv name and storageClass name",
             Code::kSuccess},
        Case{"unboundImmediate",
             {"claim-immediate"},
             {},
             Code::kUnschedulableAndUnresolvable,
             "PersistentVolume had no name",
             Code::kSuccess},
        Case{"unboundUnknownClass",
             {"claim-unknown-class"},
             {},
             Code::kUnschedulableAndUnresolvable,
             "storageclass.storage.k8s.io \"nope\" not found",
             Code::kSuccess},
        Case{"emptyClaimName",
             {""},
             {},
             Code::kUnschedulableAndUnresolvable,
             "PersistentVolumeClaim had no name",
             Code::kSuccess}),
    [](const auto& info) { return info.param.name; });

TEST(VolumeZoneTest, FilterWithoutPreFilterIsError) {
  testutil::FakeHandle h;
  VolumeZone pl(h.listers());
  CycleState state;
  auto ni = testutil::makeNodeInfo(NodeWrapper());
  EXPECT_TRUE(pl.filter(state, PodWrapper().obj(), *ni).ok());
  Status s = pl.filter(state, podWithClaims({"c"}), *ni);
  EXPECT_EQ(s.code(), Code::kError);
  EXPECT_EQ(s.message(), "reading \"PreFilterVolumeZone\" from cycleState: not found");
}

TEST(VolumeZoneTest, Factory) {
  testutil::FakeHandle h;
  auto plugin = makePlugin(volumeZoneFactory(), nullptr, h);
  ASSERT_NE(plugin, nullptr);
  EXPECT_EQ(plugin->name(), "VolumeZone");
}

TEST(VolumeZoneTest, QueueingHints) {
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
  const ClusterEvent pvcAdd{EventResource::kPersistentVolumeClaim, kAdd, {}};
  const ClusterEvent pvcUpdate{EventResource::kPersistentVolumeClaim, kUpdateOther, {}};
  const ClusterEvent pvAdd{EventResource::kPersistentVolume, kAdd, {}};
  const ClusterEvent pvUpdate{EventResource::kPersistentVolume, kUpdateOther, {}};
  auto claimIn = [](std::string name, std::string ns) {
    api::PersistentVolumeClaim c = pvc(std::move(name), "");
    c.metadata.namespace_ = std::move(ns);
    return obj(std::move(c));
  };
  const EventObject node = obj(NodeWrapper("n").label(kZone, "us-west1-a").obj());

  const EventObject none;
  const std::vector<Case> cases = {
      {"WaitForFirstConsumer class added", scAdd, none,
       obj(storageClass("wffc", api::kVolumeBindingWaitForFirstConsumer)), kQueue},
      {"Immediate class added", scAdd, none, obj(storageClass("imm", api::kVolumeBindingImmediate)),
       kSkip},
      {"class update is not registered",
       testutil::event(EventResource::kStorageClass, kUpdateOther),
       obj(storageClass("wffc", api::kVolumeBindingWaitForFirstConsumer)),
       obj(storageClass("wffc", api::kVolumeBindingWaitForFirstConsumer)), std::nullopt},
      {"node added", events::kNodeAdd, none, node, kQueue},
      {"node label update", testutil::event(EventResource::kNode, kUpdateNodeLabel), node, node,
       kQueue},
      {"node taint update is not registered",
       testutil::event(EventResource::kNode, kUpdateNodeTaint), node, node, std::nullopt},
      {"the pod's claim added", pvcAdd, none, claimIn("c1", "default"), kQueue},
      {"the pod's claim updated", pvcUpdate, claimIn("c1", "default"), claimIn("c1", "default"),
       kQueue},
      {"another claim added", pvcAdd, none, claimIn("c3", "default"), kSkip},
      {"a claim of that name in another namespace", pvcAdd, none, claimIn("c1", "other"), kSkip},
      {"claim delete is not registered",
       testutil::event(EventResource::kPersistentVolumeClaim, kDelete), claimIn("c1", "default"),
       none, std::nullopt},
      {"PV added", pvAdd, none, obj(pv("pv", {})), kQueue},
      {"PV zone changed", pvUpdate, obj(pv("pv", {{kZone, "us-west1-a"}})),
       obj(pv("pv", {{kZone, "us-west1-b"}})), kQueue},
      {"PV zone set grew", pvUpdate, obj(pv("pv", {{kZone, "us-west1-a"}})),
       obj(pv("pv", {{kZone, "us-west1-a__us-west1-b"}})), kQueue},
      {"PV region label added", pvUpdate, obj(pv("pv", {{kZone, "us-west1-a"}})),
       obj(pv("pv", {{kZone, "us-west1-a"}, {kRegion, "us-west1"}})), kQueue},
      {"PV beta zone label replaced by the GA one", pvUpdate,
       obj(pv("pv", {{kBetaZone, "us-west1-a"}})), obj(pv("pv", {{kZone, "us-west1-a"}})), kQueue},
      {"PV unrelated label changed", pvUpdate, obj(pv("pv", {{kZone, "us-west1-a"}})),
       obj(pv("pv", {{kZone, "us-west1-a"}, {"disk", "ssd"}})), kSkip},
      {"PV malformed zone label changed", pvUpdate, obj(pv("pv", {{kZone, "us-west1-a____"}})),
       obj(pv("pv", {{kZone, "__"}})), kSkip},
      {"PV delete is not registered", testutil::event(EventResource::kPersistentVolume, kDelete),
       obj(pv("pv", {})), none, std::nullopt},
  };

  testutil::FakeHandle h;
  VolumeZone pl(h.listers());
  const api::Pod pod = podWithClaims({"c1", "c2"});
  for (const Case& c : cases) {
    EXPECT_EQ(testutil::hintName(testutil::hintFor(pl, c.event, pod, c.oldObj, c.newObj)),
              testutil::hintName(c.want))
        << c.name;
  }
}

// What the plugin says of its rejections (FilterExplainer), as explain shows them: the PV's
// zone and the node's.
TEST(VolumeZoneExplain, NamesThePVsZoneAndTheNodes) {
  testutil::SnapshotHandle h({},
                             {NodeWrapper("n1").label("topology.kubernetes.io/zone", "c").ptr()});
  api::PersistentVolumeClaim pvc;
  pvc.metadata.namespace_ = "default";
  pvc.metadata.name = "data";
  pvc.spec.volumeName = "pv-1";
  api::PersistentVolume pv;
  pv.metadata.name = "pv-1";
  pv.metadata.labels["topology.kubernetes.io/zone"] = "a";
  h.mutableListers().add(pvc);
  h.mutableListers().add(pv);
  auto pl = makePlugin(volumeZoneFactory(), nullptr, h);
  api::Pod pod = PodWrapper("p").uid("p").obj();
  api::Volume v;
  v.name = "data";
  v.persistentVolumeClaim.emplace().claimName = "data";
  pod.spec.volumes.push_back(std::move(v));
  EXPECT_EQ(testutil::explainAfterFilter(*pl, h.snapshot(), pod, "n1"),
            std::vector<std::string>{"volume data: PV pv-1 is in topology.kubernetes.io/zone=a, "
                                     "node has topology.kubernetes.io/zone=c"});
}

}  // namespace
}  // namespace ksched::plugins
