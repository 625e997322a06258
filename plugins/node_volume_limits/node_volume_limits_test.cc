#include "plugins/node_volume_limits/node_volume_limits.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <ksched/api/quantity.h>
#include <ksched/api/storage.h>

#include "tests/support/hint_test_util.h"
#include "tests/support/plugin_test_util.h"

namespace ksched::plugins {
namespace {

using testutil::FakeLister;
using testutil::NodeWrapper;
using testutil::PodWrapper;

constexpr char kDriver[] = "ebs.csi.aws.com";
constexpr char kOtherDriver[] = "pd.csi.storage.gke.io";
constexpr char kExceeded[] = "node(s) exceed max volume count";

// A pod with one volume per entry: "pvc:<claim>" or "eph:<volume name>".
api::Pod podWith(const std::vector<std::string>& volumes, std::string name = "pod") {
  api::Pod p = PodWrapper(name).obj();
  for (const auto& spec : volumes) {
    api::Volume v;
    if (spec.starts_with("pvc:")) {
      v.name = "v" + std::to_string(p.spec.volumes.size());
      v.persistentVolumeClaim = api::PersistentVolumeClaimVolumeSource{spec.substr(4), false};
    } else if (spec.starts_with("eph:")) {
      v.name = spec.substr(4);
      v.ephemeral = true;
    } else {
      v.name = spec;
      v.csi = api::CSIVolumeSource{kDriver, false};
    }
    p.spec.volumes.push_back(std::move(v));
  }
  return p;
}

PodInfoPtr infoOf(api::Pod p) {
  return std::make_shared<const PodInfo>(std::make_shared<const api::Pod>(std::move(p)),
                                         features::Gates{});
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

api::PersistentVolume csiPV(std::string name, std::string driver, std::string handle) {
  api::PersistentVolume v;
  v.metadata.name = std::move(name);
  v.spec.csi = api::CSIPersistentVolumeSource{std::move(driver), std::move(handle), false};
  return v;
}

api::CSINode csiNode(std::string node, std::vector<std::pair<std::string, int32_t>> limits) {
  api::CSINode n;
  n.metadata.name = std::move(node);
  for (auto& [driver, count] : limits) {
    api::CSINodeDriver d;
    d.name = driver;
    d.allocatable = api::VolumeNodeResources{count};
    n.spec.drivers.push_back(std::move(d));
  }
  return n;
}

// Claims csi-0..csi-3 bound to PVs of kDriver (handles vol-0..vol-3), gce-0 of kOtherDriver,
// "shared" bound to vol-0 as well, a non-CSI PV, an unbound claim with a CSI class, an
// unbound claim without class, and the claim of ephemeral volume "scratch" of pod "pod".
void addObjects(StaticClusterListers& l) {
  for (int i = 0; i < 4; ++i) {
    const std::string n = std::to_string(i);
    l.add(csiPV("pv-" + n, kDriver, "vol-" + n));
    l.add(pvc("csi-" + n, "pv-" + n));
  }
  l.add(csiPV("pv-gce", kOtherDriver, "gce-vol"));
  l.add(pvc("gce-0", "pv-gce"));
  l.add(pvc("shared", "pv-0"));
  api::PersistentVolume plain;
  plain.metadata.name = "pv-plain";
  plain.spec.gcePersistentDisk = api::GCEPersistentDiskVolumeSource{"disk", 0, false};
  l.add(plain);
  l.add(pvc("plain", "pv-plain"));
  api::StorageClass sc;
  sc.metadata.name = "csi-class";
  sc.provisioner = kDriver;
  l.add(sc);
  l.add(pvc("unbound", "", "csi-class"));
  l.add(pvc("unbound-2", "", "csi-class"));
  l.add(pvc("unbound-no-class", ""));
  l.add(pvc("dangling", "pv-gone", "csi-class"));
  api::PersistentVolumeClaim eph = pvc("pod-scratch", "pv-3");
  eph.metadata.ownerReferences.push_back({"v1", "Pod", "pod", "pod-uid", true});
  l.add(eph);
  api::PersistentVolumeClaim stray = pvc("pod-stray", "pv-3");
  l.add(stray);
}

struct Case {
  std::string name;
  std::vector<std::string> podVolumes;
  std::vector<std::vector<std::string>> existingPods;  // on the node
  std::optional<int32_t> csiNodeLimit;                 // kDriver's count on the CSINode
  std::optional<int32_t> allocatableLimit;  // node allocatable attachable-volumes-csi-<kDriver>
  Code wantPreFilter;
  std::string wantPreFilterReason;
  Code wantFilter;
};

class NodeVolumeLimitsTest : public ::testing::TestWithParam<Case> {};

TEST_P(NodeVolumeLimitsTest, PreFilterAndFilter) {
  const Case& c = GetParam();
  testutil::FakeHandle h;
  addObjects(h.mutableListers());
  if (c.csiNodeLimit) {
    h.mutableListers().add(csiNode("node", {{kDriver, *c.csiNodeLimit}, {kOtherDriver, 10}}));
  }
  NodeVolumeLimits pl(h.listers(), "prefix");
  NodeWrapper node("node");
  if (c.allocatableLimit) {
    node.capacity(
        {{"cpu", "4"},
         {"attachable-volumes-csi-" + std::string(kDriver), std::to_string(*c.allocatableLimit)}});
  }
  auto ni = testutil::makeNodeInfo(node);
  for (size_t i = 0; i < c.existingPods.size(); ++i) {
    ni->addPod(infoOf(podWith(c.existingPods[i], "existing" + std::to_string(i))));
  }
  FakeLister lister({ni});
  const api::Pod pod = podWith(c.podVolumes);
  CycleState state;
  PreFilterResult result;
  Status pre = pl.preFilter(state, pod, lister, result);
  ASSERT_EQ(pre.code(), c.wantPreFilter) << pre.message();
  if (!c.wantPreFilterReason.empty()) {
    EXPECT_EQ(pre.message(), c.wantPreFilterReason);
  }
  if (!pre.ok()) return;
  Status s = pl.filter(state, pod, *ni);
  EXPECT_EQ(s.code(), c.wantFilter) << s.message();
  if (c.wantFilter == Code::kUnschedulable) {
    EXPECT_EQ(s.reasons(), std::vector<std::string>{kExceeded});
  }
}

const Case kCases[] = {
    {"noVolumes", {}, {}, 1, std::nullopt, Code::kSkip, "", Code::kSuccess},
    {"inlineCSIIsNotCounted",
     {"inline"},
     {{"pvc:csi-1"}},
     1,
     std::nullopt,
     Code::kSkip,
     "",
     Code::kSuccess},
    {"underLimit",
     {"pvc:csi-0"},
     {{"pvc:csi-1"}},
     2,
     std::nullopt,
     Code::kSuccess,
     "",
     Code::kSuccess},
    {"overLimit",
     {"pvc:csi-0"},
     {{"pvc:csi-1"}, {"pvc:csi-2"}},
     2,
     std::nullopt,
     Code::kSuccess,
     "",
     Code::kUnschedulable},
    {"twoNewVolumesOverLimit",
     {"pvc:csi-0", "pvc:csi-1"},
     {{"pvc:csi-2"}},
     2,
     std::nullopt,
     Code::kSuccess,
     "",
     Code::kUnschedulable},
    {"sameVolumeTwiceInPodCountsOnce",
     {"pvc:csi-0", "pvc:shared"},
     {{"pvc:csi-1"}},
     2,
     std::nullopt,
     Code::kSuccess,
     "",
     Code::kSuccess},
    {"alreadyAttachedNotCountedTwice",
     {"pvc:csi-0"},
     {{"pvc:shared"}, {"pvc:csi-1"}},
     2,
     std::nullopt,
     Code::kSuccess,
     "",
     Code::kSuccess},
    {"existingPodsShareAVolume",
     {"pvc:csi-2"},
     {{"pvc:csi-0"}, {"pvc:shared"}},
     2,
     std::nullopt,
     Code::kSuccess,
     "",
     Code::kSuccess},
    {"otherDriverDoesNotCount",
     {"pvc:csi-0"},
     {{"pvc:gce-0"}},
     1,
     std::nullopt,
     Code::kSuccess,
     "",
     Code::kSuccess},
    {"noLimitsFits",
     {"pvc:csi-0"},
     {{"pvc:csi-1"}, {"pvc:csi-2"}},
     std::nullopt,
     std::nullopt,
     Code::kSuccess,
     "",
     Code::kSuccess},
    {"allocatableLimit",
     {"pvc:csi-0"},
     {{"pvc:csi-1"}},
     std::nullopt,
     1,
     Code::kSuccess,
     "",
     Code::kUnschedulable},
    {"csiNodeOverridesAllocatable",
     {"pvc:csi-0"},
     {{"pvc:csi-1"}},
     2,
     1,
     Code::kSuccess,
     "",
     Code::kSuccess},
    {"nonCSIVolumeNotCounted",
     {"pvc:plain"},
     {{"pvc:csi-1"}},
     1,
     std::nullopt,
     Code::kSuccess,
     "",
     Code::kSuccess},
    {"unboundCountsByProvisioner",
     {"pvc:unbound"},
     {{"pvc:csi-1"}},
     1,
     std::nullopt,
     Code::kSuccess,
     "",
     Code::kUnschedulable},
    {"unboundTwoClaimsAreTwoVolumes",
     {"pvc:unbound"},
     {{"pvc:unbound-2"}},
     2,
     std::nullopt,
     Code::kSuccess,
     "",
     Code::kSuccess},
    {"unboundWithoutClassNotCounted",
     {"pvc:unbound-no-class"},
     {{"pvc:csi-1"}},
     1,
     std::nullopt,
     Code::kSuccess,
     "",
     Code::kSuccess},
    {"missingPVFallsBackToClass",
     {"pvc:dangling"},
     {{"pvc:csi-1"}},
     1,
     std::nullopt,
     Code::kSuccess,
     "",
     Code::kUnschedulable},
    {"ephemeralVolumeCounts",
     {"eph:scratch"},
     {{"pvc:csi-1"}},
     1,
     std::nullopt,
     Code::kSuccess,
     "",
     Code::kUnschedulable},
    {"ephemeralAlreadyAttached",
     {"eph:scratch"},
     {{"pvc:csi-3"}},
     1,
     std::nullopt,
     Code::kSuccess,
     "",
     Code::kSuccess},
    {"ephemeralNotOwned",
     {"eph:stray"},
     {},
     1,
     std::nullopt,
     Code::kError,
     "PVC default/pod-stray was not created for pod default/pod (pod is not owner)",
     Code::kSuccess},
    {"missingPVC",
     {"pvc:nope"},
     {},
     1,
     std::nullopt,
     Code::kUnschedulableAndUnresolvable,
     "looking up PVC default/nope: persistentvolumeclaim \"nope\" not found",
     Code::kSuccess},
    {"missingPVCOfExistingPodIsIgnored",
     {"pvc:csi-0"},
     {{"pvc:nope"}, {"pvc:csi-1"}},
     2,
     std::nullopt,
     Code::kSuccess,
     "",
     Code::kSuccess},
};

INSTANTIATE_TEST_SUITE_P(Table, NodeVolumeLimitsTest, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return info.param.name; });

// Nominated pods and preemption: Filter counts the pods of the NodeInfo it is given, and AddPod
// resolves the claims of pods the snapshot did not have.
TEST(NodeVolumeLimitsTest, AddedAndRemovedPods) {
  testutil::FakeHandle h;
  addObjects(h.mutableListers());
  h.mutableListers().add(csiNode("node", {{kDriver, 2}}));
  NodeVolumeLimits pl(h.listers(), "prefix");
  auto ni = testutil::makeNodeInfo(NodeWrapper("node"));
  const auto victim = infoOf(podWith({"pvc:csi-1"}, "victim"));
  ni->addPod(victim);
  FakeLister lister({ni});
  const api::Pod pod = podWith({"pvc:csi-0"});
  CycleState state;
  PreFilterResult result;
  ASSERT_TRUE(pl.preFilter(state, pod, lister, result).ok());
  EXPECT_TRUE(pl.filter(state, pod, *ni).ok());

  CycleState withNominated = state.clone();
  auto nodeWith = ni->clone();
  const auto nominated = infoOf(podWith({"pvc:csi-2"}, "nominated"));
  nodeWith->addPod(nominated);
  ASSERT_TRUE(pl.addPod(withNominated, pod, *nominated, *nodeWith).ok());
  Status s = pl.filter(withNominated, pod, *nodeWith);
  EXPECT_EQ(s.code(), Code::kUnschedulable);
  EXPECT_EQ(s.reasons(), std::vector<std::string>{kExceeded});

  ASSERT_TRUE(nodeWith->removePod(victim->pod->metadata.uid));
  ASSERT_TRUE(pl.removePod(withNominated, pod, *victim, *nodeWith).ok());
  EXPECT_TRUE(pl.filter(withNominated, pod, *nodeWith).ok());
}

TEST(NodeVolumeLimitsTest, CSIAttachLimitKey) {
  EXPECT_EQ(NodeVolumeLimits::csiAttachLimitKey("ebs.csi.aws.com"),
            "attachable-volumes-csi-ebs.csi.aws.com");
  // 23 + 47 characters: shortened to the first 23 characters of the driver and 16 hex digits of
  // the SHA-1 of the driver name.
  const std::string longName = "a-very-long-csi-driver-name.storage.example.com";
  const std::string key = NodeVolumeLimits::csiAttachLimitKey(longName);
  EXPECT_EQ(key.size(), 23u + 23u + 16u);
  EXPECT_EQ(key, "attachable-volumes-csi-a-very-long-csi-driver-86bf5f46bc6f1680");
}

TEST(NodeVolumeLimitsTest, FilterWithoutPreFilterIsError) {
  testutil::FakeHandle h;
  NodeVolumeLimits pl(h.listers());
  CycleState state;
  auto ni = testutil::makeNodeInfo(NodeWrapper());
  EXPECT_TRUE(pl.filter(state, PodWrapper().obj(), *ni).ok());
  Status s = pl.filter(state, podWith({"pvc:x"}), *ni);
  EXPECT_EQ(s.code(), Code::kError);
  EXPECT_EQ(s.message(), "reading \"PreFilterNodeVolumeLimits\" from cycleState: not found");
}

TEST(NodeVolumeLimitsTest, Factory) {
  testutil::FakeHandle h;
  auto plugin = makePlugin(nodeVolumeLimitsFactory(), nullptr, h);
  ASSERT_NE(plugin, nullptr);
  EXPECT_EQ(plugin->name(), "NodeVolumeLimits");
}

TEST(NodeVolumeLimitsTest, QueueingHints) {
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
  const ClusterEvent podDelete{EventResource::kAssignedPod, kDelete, {}};
  const ClusterEvent pvcAdd{EventResource::kPersistentVolumeClaim, kAdd, {}};
  auto bound = [](const std::vector<std::string>& volumes) {
    api::Pod p = podWith(volumes, "existing");
    p.spec.nodeName = "node";
    return obj(std::move(p));
  };
  auto claimIn = [](std::string name, std::string ns) {
    api::PersistentVolumeClaim c = pvc(std::move(name), "");
    c.metadata.namespace_ = std::move(ns);
    return obj(std::move(c));
  };

  const EventObject none;
  const std::vector<Case> cases = {
      {"CSINode added", testutil::event(EventResource::kCSINode, kAdd), none,
       obj(csiNode("node", {})), kQueue},
      // Upstream isSchedulableAfterCSINodeUpdated (an unset count is 0).
      {"CSINode: a driver's count grew", testutil::event(EventResource::kCSINode, kUpdateOther),
       obj(csiNode("node", {{kDriver, 1}})), obj(csiNode("node", {{kDriver, 2}})), kQueue},
      {"CSINode: a driver registered with a count",
       testutil::event(EventResource::kCSINode, kUpdateOther), obj(csiNode("node", {})),
       obj(csiNode("node", {{kDriver, 1}})), kQueue},
      {"CSINode: counts unchanged", testutil::event(EventResource::kCSINode, kUpdateOther),
       obj(csiNode("node", {{kDriver, 2}})), obj(csiNode("node", {{kDriver, 2}})), kSkip},
      {"CSINode: a count went down", testutil::event(EventResource::kCSINode, kUpdateOther),
       obj(csiNode("node", {{kDriver, 2}})), obj(csiNode("node", {{kDriver, 1}})), kSkip},
      {"CSINode: a driver registered without a count",
       testutil::event(EventResource::kCSINode, kUpdateOther), obj(csiNode("node", {})),
       obj(csiNode("node", {{kDriver, 0}})), kSkip},
      {"deleted pod had a claim", podDelete, bound({"pvc:csi-0"}), none, kQueue},
      {"deleted pod had an ephemeral volume", podDelete, bound({"eph:scratch"}), none, kQueue},
      {"deleted pod had an inline CSI volume only", podDelete, bound({"inline"}), none, kSkip},
      {"deleted pod had no volumes", podDelete, bound({}), none, kSkip},
      {"deleted unscheduled pod had a claim",
       testutil::event(EventResource::kUnscheduledPod, kDelete),
       obj(podWith({"pvc:csi-0"}, "existing")), none, kSkip},
      {"pod add is not registered", testutil::event(EventResource::kAssignedPod, kAdd), none,
       bound({"pvc:csi-0"}), std::nullopt},
      {"the pod's claim added", pvcAdd, none, claimIn("csi-1", "default"), kQueue},
      {"the pod's ephemeral claim added", pvcAdd, none, claimIn("pod-scratch", "default"), kQueue},
      {"another claim added", pvcAdd, none, claimIn("csi-2", "default"), kSkip},
      {"a claim of that name in another namespace", pvcAdd, none, claimIn("csi-1", "other"), kSkip},
      {"claim update is not registered",
       testutil::event(EventResource::kPersistentVolumeClaim, kUpdateOther),
       claimIn("csi-1", "default"), claimIn("csi-1", "default"), std::nullopt},
  };

  testutil::FakeHandle h;
  NodeVolumeLimits pl(h.listers());
  const api::Pod pod = podWith({"pvc:csi-1", "eph:scratch", "inline"});
  for (const Case& c : cases) {
    EXPECT_EQ(testutil::hintName(testutil::hintFor(pl, c.event, pod, c.oldObj, c.newObj)),
              testutil::hintName(c.want))
        << c.name;
  }
}

// What the plugin says of its rejections (FilterExplainer): the driver whose limit the pod's
// volumes would exceed, the volumes attached, those the pod adds, and the limit.
TEST(NodeVolumeLimitsExplain, NamesTheDriverItsCountAndItsLimit) {
  testutil::FakeHandle h;
  addObjects(h.mutableListers());
  h.mutableListers().add(csiNode("node", {{kDriver, 2}, {kOtherDriver, 10}}));
  NodeVolumeLimits pl(h.listers(), "prefix");
  auto ni = testutil::makeNodeInfo(NodeWrapper("node"));
  ni->addPod(infoOf(podWith({"pvc:csi-1"}, "existing0")));
  ni->addPod(infoOf(podWith({"pvc:csi-2", "pvc:gce-0"}, "existing1")));
  FakeLister lister({ni});
  EXPECT_EQ(testutil::explainAfterFilter(pl, lister, podWith({"pvc:csi-0", "pvc:csi-3"}), "node"),
            std::vector<std::string>{
                "2 volumes of driver ebs.csi.aws.com attached, the pod adds 2, limit 2"});
  // A volume of the pod already attached there (shared is bound to csi-0's PV) is not added.
  ni->addPod(infoOf(podWith({"pvc:csi-0"}, "existing2")));
  FakeLister full({ni});
  EXPECT_EQ(testutil::explainAfterFilter(pl, full, podWith({"pvc:shared", "pvc:csi-3"}), "node"),
            std::vector<std::string>{
                "3 volumes of driver ebs.csi.aws.com attached, the pod adds 1, limit 2"});
}

// VolumeLimitScaling (KEP-5030): a CSIDriver with preventPodSchedulingIfMissing keeps pods with
// its volumes off nodes whose CSINode does not list it (upstream csi.go's checkCSIDriverOnNode).
TEST(NodeVolumeLimitsScaling, ADriverThatOptsInMustBeOnTheNode) {
  const std::string notInstalled =
      std::string(kDriver) + " CSI driver is not installed on the node";
  struct ScalingCase {
    std::string name;
    std::vector<std::string> podVolumes = {"pvc:csi-0"};
    std::optional<bool> prevent = true;  // nullopt: no CSIDriver object
    // The node's CSINode drivers and counts; nullopt: no CSINode.
    std::optional<std::vector<std::pair<std::string, int32_t>>> csiNode;
    bool gate = true;
    Code want = Code::kSuccess;
    std::string wantReason;
  };
  const std::vector<ScalingCase> cases = {
      {.name = "no CSIDriver object: allowed", .prevent = std::nullopt},
      {.name = "the driver does not opt in", .prevent = false},
      {.name = "no CSINode", .want = Code::kUnschedulable, .wantReason = notInstalled},
      {.name = "CSINode without the driver",
       .csiNode = std::vector<std::pair<std::string, int32_t>>{{kOtherDriver, 10}},
       .want = Code::kUnschedulable,
       .wantReason = notInstalled},
      {.name = "CSINode lists the driver",
       .csiNode = std::vector<std::pair<std::string, int32_t>>{{kDriver, 5}}},
      {.name = "installed, and its limit still applies",
       .csiNode = std::vector<std::pair<std::string, int32_t>>{{kDriver, 0}},
       .want = Code::kUnschedulable,
       .wantReason = kExceeded},
      {.name = "an unbound claim names the driver through its class",
       .podVolumes = {"pvc:unbound"},
       .want = Code::kUnschedulable,
       .wantReason = notInstalled},
      {.name = "gate off", .gate = false},
      {.name = "no CSI volume", .podVolumes = {"pvc:plain"}},
  };
  for (const ScalingCase& c : cases) {
    SCOPED_TRACE(c.name);
    testutil::FakeHandle h;
    addObjects(h.mutableListers());
    if (c.prevent) {
      api::CSIDriver d;
      d.metadata.name = kDriver;
      d.spec.preventPodSchedulingIfMissing = *c.prevent;
      h.mutableListers().add(d);
    }
    if (c.csiNode) h.mutableListers().add(csiNode("node", *c.csiNode));
    NodeVolumeLimits pl(h.listers(), "prefix", c.gate);
    auto ni = testutil::makeNodeInfo(NodeWrapper("node"));
    FakeLister lister({ni});
    const api::Pod pod = podWith(c.podVolumes);
    CycleState state;
    PreFilterResult result;
    Status pre = pl.preFilter(state, pod, lister, result);
    ASSERT_TRUE(pre.ok() || pre.code() == Code::kSkip) << pre.message();
    if (pre.code() == Code::kSkip) {
      EXPECT_EQ(c.want, Code::kSuccess);
      continue;
    }
    Status st = pl.filter(state, pod, *ni);
    EXPECT_EQ(st.code(), c.want) << st.message();
    if (!c.wantReason.empty()) {
      EXPECT_EQ(st.reasons(), std::vector<std::string>{c.wantReason});
    }
  }
  // explain names the CSIDriver and its field.
  testutil::FakeHandle h;
  addObjects(h.mutableListers());
  api::CSIDriver d;
  d.metadata.name = kDriver;
  d.spec.preventPodSchedulingIfMissing = true;
  h.mutableListers().add(d);
  NodeVolumeLimits pl(h.listers(), "prefix", true);
  FakeLister lister({testutil::makeNodeInfo(NodeWrapper("node"))});
  EXPECT_EQ(testutil::explainAfterFilter(pl, lister, podWith({"pvc:csi-0"}), "node"),
            std::vector<std::string>{"the CSIDriver ebs.csi.aws.com sets "
                                     "preventPodSchedulingIfMissing and the node's CSINode does "
                                     "not list it"});
}

}  // namespace
}  // namespace ksched::plugins
