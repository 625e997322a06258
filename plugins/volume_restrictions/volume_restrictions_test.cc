#include "plugins/volume_restrictions/volume_restrictions.h"

#include <gtest/gtest.h>

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

constexpr char kDisk[] = "node(s) had no available disk";
constexpr char kRWOP[] =
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already "
    "in-use by another pod";

api::Volume gce(std::string pd, bool readOnly) {
  api::Volume v;
  v.name = "gce";
  v.gcePersistentDisk = api::GCEPersistentDiskVolumeSource{std::move(pd), 0, readOnly};
  return v;
}
api::Volume ebs(std::string id) {
  api::Volume v;
  v.name = "ebs";
  v.awsElasticBlockStore = api::AWSElasticBlockStoreVolumeSource{std::move(id), 0, false};
  return v;
}
api::Volume rbd(std::vector<std::string> monitors, std::string pool, std::string image,
                bool readOnly) {
  api::Volume v;
  v.name = "rbd";
  v.rbd = api::RBDVolumeSource{std::move(monitors), std::move(image), std::move(pool), readOnly};
  return v;
}
api::Volume iscsi(std::string iqn, bool readOnly) {
  api::Volume v;
  v.name = "iscsi";
  v.iscsi = api::ISCSIVolumeSource{"127.0.0.1:3260", std::move(iqn), 0, readOnly};
  return v;
}
api::Volume claim(std::string name) {
  api::Volume v;
  v.name = "pvc-" + name;
  v.persistentVolumeClaim = api::PersistentVolumeClaimVolumeSource{std::move(name), false};
  return v;
}

api::Pod podWith(std::vector<api::Volume> volumes, std::string name = "pod") {
  api::Pod p = PodWrapper(std::move(name)).obj();
  p.spec.volumes = std::move(volumes);
  return p;
}

PodInfoPtr infoOf(api::Pod p) {
  return std::make_shared<const PodInfo>(std::make_shared<const api::Pod>(std::move(p)), features::Gates{});
}

api::PersistentVolumeClaim pvc(std::string name, std::vector<std::string> modes) {
  api::PersistentVolumeClaim c;
  c.metadata.name = std::move(name);
  c.metadata.namespace_ = "default";
  c.spec.accessModes = std::move(modes);
  return c;
}

struct DiskCase {
  std::string name;
  std::vector<api::Volume> podVolumes;
  std::vector<api::Volume> existingVolumes;
  bool conflict;
};

class VolumeRestrictionsDiskTest : public ::testing::TestWithParam<DiskCase> {};

TEST_P(VolumeRestrictionsDiskTest, Filter) {
  const DiskCase& c = GetParam();
  testutil::FakeHandle h;
  VolumeRestrictions pl(h.listers());
  const api::Pod pod = podWith(c.podVolumes);
  auto ni = testutil::makeNodeInfo(NodeWrapper("node"));
  ni->addPod(infoOf(podWith(c.existingVolumes, "existing")));
  FakeLister lister({ni});
  CycleState state;
  PreFilterResult result;
  Status pre = pl.preFilter(state, pod, lister, result);
  if (c.podVolumes.empty()) {
    EXPECT_TRUE(pre.isSkip());
    return;
  }
  ASSERT_TRUE(pre.ok()) << pre.message();
  Status s = pl.filter(state, pod, *ni);
  if (c.conflict) {
    EXPECT_EQ(s.code(), Code::kUnschedulable);
    EXPECT_EQ(s.reasons(), std::vector<std::string>{kDisk});
  } else {
    EXPECT_TRUE(s.ok()) << s.message();
  }
}

// Mirrors upstream's TestGCEDiskConflicts, TestAWSDiskConflicts, TestRBDDiskConflicts and
// TestISCSIDiskConflicts.
INSTANTIATE_TEST_SUITE_P(
    Table, VolumeRestrictionsDiskTest,
    ::testing::Values(
        DiskCase{"noVolumes", {}, {gce("foo", false)}, false},
        DiskCase{"gceOtherDisk", {gce("foo", false)}, {gce("bar", false)}, false},
        DiskCase{"gceSameDisk", {gce("foo", false)}, {gce("foo", false)}, true},
        DiskCase{"gceSameDiskOneReadOnly", {gce("foo", true)}, {gce("foo", false)}, true},
        DiskCase{"gceSameDiskBothReadOnly", {gce("foo", true)}, {gce("foo", true)}, false},
        DiskCase{"gceSecondOfTwoExisting",
                 {gce("foo", false)},
                 {gce("bar", false), gce("foo", false)},
                 true},
        DiskCase{"ebsOtherVolume", {ebs("foo")}, {ebs("bar")}, false},
        DiskCase{"ebsSameVolume", {ebs("foo")}, {ebs("foo")}, true},
        DiskCase{"rbdSameImage",
                 {rbd({"a", "b"}, "pool", "img", false)},
                 {rbd({"b", "c"}, "pool", "img", false)},
                 true},
        DiskCase{"rbdNoCommonMonitor",
                 {rbd({"a", "b"}, "pool", "img", false)},
                 {rbd({"c", "d"}, "pool", "img", false)},
                 false},
        DiskCase{"rbdOtherPool",
                 {rbd({"a"}, "pool", "img", false)},
                 {rbd({"a"}, "pool2", "img", false)},
                 false},
        DiskCase{"rbdOtherImage",
                 {rbd({"a"}, "pool", "img", false)},
                 {rbd({"a"}, "pool", "img2", false)},
                 false},
        DiskCase{"rbdBothReadOnly",
                 {rbd({"a"}, "pool", "img", true)},
                 {rbd({"a"}, "pool", "img", true)},
                 false},
        DiskCase{"rbdOneReadOnly",
                 {rbd({"a"}, "pool", "img", true)},
                 {rbd({"a"}, "pool", "img", false)},
                 true},
        DiskCase{"iscsiOtherIQN",
                 {iscsi("iqn.2016-12.server:a", false)},
                 {iscsi("iqn.2016-12.server:b", false)},
                 false},
        DiskCase{"iscsiSameIQN",
                 {iscsi("iqn.2016-12.server:a", false)},
                 {iscsi("iqn.2016-12.server:a", false)},
                 true},
        DiskCase{"iscsiBothReadOnly",
                 {iscsi("iqn.2016-12.server:a", true)},
                 {iscsi("iqn.2016-12.server:a", true)},
                 false},
        DiskCase{"differentKindsNeverConflict", {gce("foo", false)}, {ebs("foo")}, false}),
    [](const auto& info) { return info.param.name; });

struct RWOPCase {
  std::string name;
  std::vector<api::PersistentVolumeClaim> pvcs;
  std::vector<api::Volume> podVolumes;
  // Pods already on some node (the RWOP check is cluster-wide: they are on another node).
  std::vector<std::vector<api::Volume>> existing;
  Code wantPreFilter;
  std::string wantPreFilterReason;
  Code wantFilter;
  std::string wantFilterReason;
};

class VolumeRestrictionsRWOPTest : public ::testing::TestWithParam<RWOPCase> {};

TEST_P(VolumeRestrictionsRWOPTest, PreFilterAndFilter) {
  const RWOPCase& c = GetParam();
  testutil::FakeHandle h;
  for (const auto& p : c.pvcs) h.mutableListers().add(p);
  VolumeRestrictions pl(h.listers());
  auto target = testutil::makeNodeInfo(NodeWrapper("target"));
  auto other = testutil::makeNodeInfo(NodeWrapper("other"));
  for (size_t i = 0; i < c.existing.size(); ++i) {
    other->addPod(infoOf(podWith(c.existing[i], "existing" + std::to_string(i))));
  }
  FakeLister lister({target, other});
  const api::Pod pod = podWith(c.podVolumes);
  CycleState state;
  PreFilterResult result;
  Status pre = pl.preFilter(state, pod, lister, result);
  EXPECT_EQ(pre.code(), c.wantPreFilter) << pre.message();
  if (!c.wantPreFilterReason.empty()) {
    EXPECT_EQ(pre.reasons(), std::vector<std::string>{c.wantPreFilterReason});
  }
  if (!pre.ok()) return;
  Status s = pl.filter(state, pod, *target);
  EXPECT_EQ(s.code(), c.wantFilter) << s.message();
  if (!c.wantFilterReason.empty()) {
    EXPECT_EQ(s.reasons(), std::vector<std::string>{c.wantFilterReason});
  }
}

INSTANTIATE_TEST_SUITE_P(Table, VolumeRestrictionsRWOPTest,
                         ::testing::Values(RWOPCase{"missingPVC",
                                                    {},
                                                    {claim("data")},
                                                    {},
                                                    Code::kUnschedulableAndUnresolvable,
                                                    "persistentvolumeclaim \"data\" not found",
                                                    Code::kSuccess,
                                                    ""},
                                           RWOPCase{"rwopUnused",
                                                    {pvc("data", {"ReadWriteOncePod"})},
                                                    {claim("data")},
                                                    {{claim("other")}},
                                                    Code::kSkip,
                                                    "",
                                                    Code::kSuccess,
                                                    ""},
                                           RWOPCase{"rwopUsedElsewhere",
                                                    {pvc("data", {"ReadWriteOncePod"})},
                                                    {claim("data")},
                                                    {{claim("data")}},
                                                    Code::kSuccess,
                                                    "",
                                                    Code::kUnschedulable,
                                                    kRWOP},
                                           RWOPCase{"rwoUsedElsewhereIsFine",
                                                    {pvc("data", {"ReadWriteOnce"})},
                                                    {claim("data")},
                                                    {{claim("data")}},
                                                    Code::kSkip,
                                                    "",
                                                    Code::kSuccess,
                                                    ""},
                                           RWOPCase{"rwopUnusedWithDiskChecks",
                                                    {pvc("data", {"ReadWriteOncePod"})},
                                                    {claim("data"), gce("foo", false)},
                                                    {},
                                                    Code::kSuccess,
                                                    "",
                                                    Code::kSuccess,
                                                    ""},
                                           RWOPCase{
                                               "rwopUsedElsewhereWithDiskVolume",
                                               {pvc("data", {"ReadWriteOncePod", "ReadWriteOnce"})},
                                               {claim("data"), ebs("vol")},
                                               {{claim("data")}},
                                               Code::kSuccess,
                                               "",
                                               Code::kUnschedulable,
                                               kRWOP}),
                         [](const auto& info) { return info.param.name; });

TEST(VolumeRestrictionsTest, DiskConflictBeatsReadWriteOncePodConflict) {
  testutil::FakeHandle h;
  h.mutableListers().add(pvc("data", {"ReadWriteOncePod"}));
  VolumeRestrictions pl(h.listers());
  auto ni = testutil::makeNodeInfo(NodeWrapper("node"));
  ni->addPod(infoOf(podWith({claim("data"), ebs("vol")}, "holder")));
  FakeLister lister({ni});
  const api::Pod pod = podWith({claim("data"), ebs("vol")});
  CycleState state;
  PreFilterResult result;
  ASSERT_TRUE(pl.preFilter(state, pod, lister, result).ok());
  Status s = pl.filter(state, pod, *ni);
  EXPECT_EQ(s.code(), Code::kUnschedulable);
  EXPECT_EQ(s.reasons(), std::vector<std::string>{kDisk});
}

// Preemption: removing the pod that holds the ReadWriteOncePod claim clears the conflict, adding
// it back restores it; pods not using the claim change nothing.
TEST(VolumeRestrictionsTest, AddRemovePodAdjustTheConflictCount) {
  testutil::FakeHandle h;
  h.mutableListers().add(pvc("data", {"ReadWriteOncePod"}));
  VolumeRestrictions pl(h.listers());
  const auto holder = infoOf(podWith({claim("data")}, "holder"));
  const auto bystander = infoOf(podWith({claim("other")}, "bystander"));
  auto ni = testutil::makeNodeInfo(NodeWrapper("node"));
  ni->addPod(holder);
  ni->addPod(bystander);
  FakeLister lister({ni});
  const api::Pod pod = podWith({claim("data")});
  CycleState state;
  PreFilterResult result;
  ASSERT_TRUE(pl.preFilter(state, pod, lister, result).ok());
  EXPECT_EQ(pl.filter(state, pod, *ni).code(), Code::kUnschedulable);

  CycleState sim = state.clone();
  ASSERT_TRUE(pl.removePod(sim, pod, *bystander, *ni).ok());
  EXPECT_EQ(pl.filter(sim, pod, *ni).code(), Code::kUnschedulable);
  ASSERT_TRUE(pl.removePod(sim, pod, *holder, *ni).ok());
  EXPECT_TRUE(pl.filter(sim, pod, *ni).ok());
  ASSERT_TRUE(pl.addPod(sim, pod, *holder, *ni).ok());
  EXPECT_EQ(pl.filter(sim, pod, *ni).code(), Code::kUnschedulable);
  // The original state is untouched by the clone's changes.
  EXPECT_EQ(pl.filter(state, pod, *ni).code(), Code::kUnschedulable);
}

TEST(VolumeRestrictionsTest, UsesTheSnapshotsPVCSet) {
  testutil::FakeHandle h;
  h.mutableListers().add(pvc("data", {"ReadWriteOncePod"}));
  VolumeRestrictions pl(h.listers());
  api::Pod holder = podWith({claim("data")}, "holder");
  holder.spec.nodeName = "n1";
  const auto s = cache::Snapshot::fromForTest({std::make_shared<const api::Pod>(holder)},
                                              {NodeWrapper("n1").ptr(), NodeWrapper("n2").ptr()});
  const api::Pod pod = podWith({claim("data")});
  CycleState state;
  PreFilterResult result;
  ASSERT_TRUE(pl.preFilter(state, pod, s, result).ok());
  Status st = pl.filter(state, pod, *s.get("n2"));
  EXPECT_EQ(st.code(), Code::kUnschedulable);
  EXPECT_EQ(st.reasons(), std::vector<std::string>{kRWOP});
}

TEST(VolumeRestrictionsTest, FilterWithoutPreFilterIsError) {
  testutil::FakeHandle h;
  VolumeRestrictions pl(h.listers());
  CycleState state;
  auto ni = testutil::makeNodeInfo(NodeWrapper());
  Status s = pl.filter(state, podWith({gce("foo", false)}), *ni);
  EXPECT_EQ(s.code(), Code::kError);
  EXPECT_EQ(s.message(), "cannot read \"PreFilterVolumeRestrictions\" from cycleState");
}

TEST(VolumeRestrictionsTest, Factory) {
  testutil::FakeHandle h;
  auto plugin = makePlugin(volumeRestrictionsFactory(), nullptr, h);
  ASSERT_NE(plugin, nullptr);
  EXPECT_EQ(plugin->name(), "VolumeRestrictions");
}

TEST(VolumeRestrictionsTest, QueueingHints) {
  struct Case {
    std::string name;
    ClusterEvent event;
    api::Pod pod;
    EventObject oldObj;
    EventObject newObj;
    std::optional<QueueingHint> want;
  };
  using testutil::obj;
  constexpr auto kQueue = QueueingHint::kQueue;
  constexpr auto kSkip = QueueingHint::kSkip;
  const ClusterEvent podDelete{EventResource::kAssignedPod, kDelete, {}};
  const ClusterEvent pvcAdd{EventResource::kPersistentVolumeClaim, kAdd, {}};
  auto bound = [](std::vector<api::Volume> volumes, std::string ns = "default") {
    api::Pod p = podWith(std::move(volumes), "existing");
    p.metadata.namespace_ = std::move(ns);
    p.spec.nodeName = "node";
    return obj(std::move(p));
  };
  auto pvcIn = [](std::string name, std::string ns) {
    api::PersistentVolumeClaim c = pvc(std::move(name), {std::string(api::kReadWriteOncePod)});
    c.metadata.namespace_ = std::move(ns);
    return obj(std::move(c));
  };
  const api::Pod withGce = podWith({gce("pd", false)});
  const api::Pod withEbs = podWith({ebs("vol-1")});
  const api::Pod withClaim = podWith({claim("c1")});

  const EventObject none;
  const std::vector<Case> cases = {
      {"deleted pod had the same GCE PD", podDelete, withGce, bound({gce("pd", false)}), none,
       kQueue},
      {"deleted pod had the same read-only GCE PD", podDelete, podWith({gce("pd", true)}),
       bound({gce("pd", true)}), none, kSkip},
      {"deleted pod had the same EBS volume", podDelete, withEbs, bound({ebs("vol-1")}), none,
       kQueue},
      {"deleted pod had another EBS volume", podDelete, withEbs, bound({ebs("vol-2")}), none,
       kSkip},
      {"deleted pod in another namespace", podDelete, withEbs, bound({ebs("vol-1")}, "other"), none,
       kSkip},
      {"deleted pod used the same claim", podDelete, withClaim, bound({claim("c1")}), none, kQueue},
      {"deleted pod used another claim", podDelete, withClaim, bound({claim("c2")}), none, kSkip},
      {"deleted pod had no volumes", podDelete, withClaim, bound({}), none, kSkip},
      {"deleted unscheduled pod used the same claim",
       testutil::event(EventResource::kUnscheduledPod, kDelete), withClaim,
       obj(podWith({claim("c1")}, "e")), none, kQueue},
      {"pod add is not registered", testutil::event(EventResource::kAssignedPod, kAdd), withClaim,
       none, bound({claim("c1")}), std::nullopt},
      {"node added", events::kNodeAdd, withGce, none, obj(NodeWrapper().obj()), kQueue},
      {"node label update is not registered",
       testutil::event(EventResource::kNode, kUpdateNodeLabel), withGce, obj(NodeWrapper().obj()),
       obj(NodeWrapper().label("a", "b").obj()), std::nullopt},
      {"the pod's claim added", pvcAdd, withClaim, none, pvcIn("c1", "default"), kQueue},
      {"another claim added", pvcAdd, withClaim, none, pvcIn("c2", "default"), kSkip},
      {"a claim of that name added in another namespace", pvcAdd, withClaim, none,
       pvcIn("c1", "other"), kSkip},
      {"claim update is not registered",
       testutil::event(EventResource::kPersistentVolumeClaim, kUpdateOther), withClaim,
       pvcIn("c1", "default"), pvcIn("c1", "default"), std::nullopt},
  };

  testutil::FakeHandle h;
  VolumeRestrictions pl(h.listers());
  for (const Case& c : cases) {
    EXPECT_EQ(testutil::hintName(testutil::hintFor(pl, c.event, c.pod, c.oldObj, c.newObj)),
              testutil::hintName(c.want))
        << c.name;
  }
}

// What the plugin says of its rejections (FilterExplainer), as explain shows them: the disk and
// the pod using it, the ReadWriteOncePod claim and the pod holding it.
TEST(VolumeRestrictionsExplain, NamesTheVolumeAndThePodUsingIt) {
  auto withVolume = [](api::Pod p, api::Volume v) {
    p.spec.volumes.push_back(std::move(v));
    return p;
  };
  api::Volume disk;
  disk.name = "disk";
  disk.gcePersistentDisk.emplace().pdName = "pd-1";
  api::Volume data = disk;
  data.name = "data";
  {
    testutil::SnapshotHandle h({std::make_shared<const api::Pod>(withVolume(
                                   PodWrapper("db-0").uid("db-0").nodeName("n1").obj(), disk))},
                               {NodeWrapper("n1").ptr()});
    auto pl = makePlugin(volumeRestrictionsFactory(), nullptr, h);
    EXPECT_EQ(testutil::explainAfterFilter(*pl, h.snapshot(),
                                           withVolume(PodWrapper("p").uid("p").obj(), data), "n1"),
              std::vector<std::string>{"volume data (GCE PD pd-1) is in use by pod default/db-0"});
  }
  api::Volume claim;
  claim.name = "data";
  claim.persistentVolumeClaim.emplace().claimName = "data";
  testutil::SnapshotHandle h({std::make_shared<const api::Pod>(withVolume(
                                 PodWrapper("db-0").uid("db-0").nodeName("n2").obj(), claim))},
                             {NodeWrapper("n1").ptr(), NodeWrapper("n2").ptr()});
  api::PersistentVolumeClaim pvc;
  pvc.metadata.namespace_ = "default";
  pvc.metadata.name = "data";
  pvc.spec.volumeName = "pv-0";
  pvc.spec.accessModes = {std::string(api::kReadWriteOncePod)};
  h.mutableListers().add(pvc);
  auto pl = makePlugin(volumeRestrictionsFactory(), nullptr, h);
  EXPECT_EQ(testutil::explainAfterFilter(*pl, h.snapshot(),
                                         withVolume(PodWrapper("p").uid("p").obj(), claim), "n1"),
            std::vector<std::string>{
                "PVC default/data (ReadWriteOncePod) is in use by pod default/db-0 on node n2"});
}

}  // namespace
}  // namespace ksched::plugins
