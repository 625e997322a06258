// VolumeBinding and CSIStorageCapacity: the capacity check of dynamic provisioning (upstream
// binder_test.go's TestCapacity), StorageCapacityScoring (volume_binding_test.go's capacity
// scoring cases) and the CSIDriver / CSIStorageCapacity queueing hints.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <ksched/api/quantity.h>
#include <ksched/api/storage.h>

#include "plugins/volume_binding/volume_binding.h"
#include "tests/support/hint_test_util.h"
#include "tests/support/plugin_test_util.h"
#include "tests/support/volume_test_objects.h"

namespace ksched::plugins {
namespace {

using namespace testutil::volumes;  // NOLINT(google-build-using-namespace)

constexpr std::string_view kCapClass = "wait-sc-with-storage-capacity";
constexpr std::string_view kCapDriver = "driver-with-storage-capacity";
const std::string kNotEnoughSpace(VolumeBinding::kErrReasonNotEnoughSpace);

struct CapacitySpec {
  std::string name;
  std::string cls{kCapClass};
  // The node whose hostname nodeTopology selects; "" selects every node; nullopt: no
  // nodeTopology (no node has access).
  std::optional<std::string> node = "";
  std::string capacity;  // "" unset
  std::string maximumVolumeSize;
};

api::CSIStorageCapacity makeCapacity(const CapacitySpec& s) {
  api::CSIStorageCapacity c;
  c.metadata.name = s.name;
  c.metadata.namespace_ = "kube-system";
  c.storageClassName = s.cls;
  if (s.node) {
    api::LabelSelector sel;
    if (!s.node->empty()) sel.matchLabels[std::string(api::kLabelHostname)] = *s.node;
    c.nodeTopology = sel;
  }
  c.topology = api::Selector::compile(c.nodeTopology);
  if (!s.capacity.empty()) c.capacity = api::Quantity::parse(s.capacity);
  if (!s.maximumVolumeSize.empty()) c.maximumVolumeSize = api::Quantity::parse(s.maximumVolumeSize);
  return c;
}

api::CSIDriver csiDriver(std::string_view name, bool storageCapacity) {
  api::CSIDriver d;
  d.metadata.name = name;
  d.spec.storageCapacity = storageCapacity;
  return d;
}

// A plugin over in-memory listers with the capacity class and its driver.
class CapacityFixture {
 public:
  explicit CapacityFixture(const nlohmann::json& args = nullptr, bool scoring = true,
                           std::optional<bool> driverCapacity = true) {
    if (!scoring) {
      features::Gates g;
      EXPECT_EQ(g.set("StorageCapacityScoring=false"), std::nullopt);
      handle_.setFeatures(g);
    }
    auto& l = handle_.mutableListers();
    l.add(storageClass(kCapClass, api::kVolumeBindingWaitForFirstConsumer, kCapDriver));
    l.add(storageClass(kWaitClass, api::kVolumeBindingWaitForFirstConsumer, ""));
    if (driverCapacity) l.add(csiDriver(kCapDriver, *driverCapacity));
    plugin_ =
        std::make_unique<VolumeBinding>(decodeVolumeBindingArgs(args, handle_.features()), handle_);
  }
  StaticClusterListers& listers() { return handle_.mutableListers(); }
  VolumeBinding& plugin() { return *plugin_; }

 private:
  testutil::FakeHandle handle_;
  std::unique_ptr<VolumeBinding> plugin_;
};

struct CapacityCase {
  std::string name;
  std::vector<CapacitySpec> capacities;
  std::optional<bool> driverCapacity = true;  // nullopt: no CSIDriver object
  std::vector<std::string> wantReasons;       // empty: fits
  std::string wantCapacity;                   // the object chosen, "" none
};

// Upstream TestCapacity: a 1Gi claim of the capacity class on node-a.
TEST(VolumeBindingCapacity, FilterChecksTheDriversCapacity) {
  const std::vector<CapacityCase> cases = {
      {.name = "network-attached",
       .capacities = {{.name = "net", .capacity = "1Gi"}},
       .wantCapacity = "net"},
      {.name = "local-storage",
       .capacities = {{.name = "local", .node = "node-a", .capacity = "1Gi"}},
       .wantCapacity = "local"},
      {.name = "multiple: the first by name that fits",
       .capacities = {{.name = "c-other-node", .node = "node-b", .capacity = "10Gi"},
                      {.name = "b-local", .node = "node-a", .capacity = "1Gi"},
                      {.name = "a-too-small", .capacity = "1Mi"}},
       .wantCapacity = "b-local"},
      {.name = "no-storage", .wantReasons = {kNotEnoughSpace}},
      {.name = "wrong-node",
       .capacities = {{.name = "c", .node = "node-b", .capacity = "1Gi"}},
       .wantReasons = {kNotEnoughSpace}},
      {.name = "wrong-storage-class",
       .capacities = {{.name = "c", .cls = "wait", .node = "node-a", .capacity = "1Gi"}},
       .wantReasons = {kNotEnoughSpace}},
      {.name = "insufficient-storage",
       .capacities = {{.name = "c", .node = "node-a", .capacity = "1Mi"}},
       .wantReasons = {kNotEnoughSpace}},
      {.name = "insufficient-volume-size: maximumVolumeSize wins",
       .capacities = {{.name = "c", .capacity = "1Gi", .maximumVolumeSize = "1Mi"}},
       .wantReasons = {kNotEnoughSpace}},
      {.name = "zero-storage",
       .capacities = {{.name = "c", .capacity = "0Mi"}},
       .wantReasons = {kNotEnoughSpace}},
      {.name = "zero-volume-size",
       .capacities = {{.name = "c", .maximumVolumeSize = "0Mi"}},
       .wantReasons = {kNotEnoughSpace}},
      {.name = "nil-storage", .capacities = {{.name = "c"}}, .wantReasons = {kNotEnoughSpace}},
      {.name = "no nodeTopology: no node has access",
       .capacities = {{.name = "c", .node = std::nullopt, .capacity = "1Gi"}},
       .wantReasons = {kNotEnoughSpace}},
      {.name = "the driver does not report capacity", .driverCapacity = false},
      {.name = "no CSIDriver object", .driverCapacity = std::nullopt},
  };
  for (const CapacityCase& c : cases) {
    SCOPED_TRACE(c.name);
    CapacityFixture f(nullptr, true, c.driverCapacity);
    f.listers().add(makePVC({.name = "pvc", .size = "1Gi", .cls = std::string(kCapClass)}));
    for (const CapacitySpec& cap : c.capacities) f.listers().add(makeCapacity(cap));
    const api::Pod pod = podWithClaims({"pvc"});
    CycleState state;
    PreFilterResult result;
    testutil::FakeLister nodes;
    ASSERT_TRUE(f.plugin().preFilter(state, pod, nodes, result).ok());
    Status st = f.plugin().filter(state, pod, *nodeInfo("node-a"));
    if (c.wantReasons.empty()) {
      ASSERT_TRUE(st.ok()) << st.message();
      auto& data = state.read(volume_binding::kStateKey)->data();
      std::lock_guard lock(data.mu);
      const auto& decision = *data.podVolumesByNode.at("node-a");
      ASSERT_EQ(decision.dynamicProvisions.size(), 1u);
      ASSERT_EQ(decision.provisionCapacities.size(), 1u);
      EXPECT_EQ(decision.provisionCapacities[0] ? decision.provisionCapacities[0]->metadata.name
                                                : std::string(),
                c.wantCapacity);
    } else {
      EXPECT_EQ(st.code(), Code::kUnschedulableAndUnresolvable);
      EXPECT_EQ(st.reasons(), c.wantReasons);
    }
  }
}

// explain names the claim, the driver and the size it found no room for.
TEST(VolumeBindingCapacity, ExplainNamesTheDriverAndTheSize) {
  CapacityFixture f;
  f.listers().add(makePVC({.name = "pvc", .size = "30Gi", .cls = std::string(kCapClass)}));
  f.listers().add(makeCapacity({.name = "c", .node = "node-a", .capacity = "10Gi"}));
  testutil::FakeLister lister({nodeInfo("node-a")});
  EXPECT_EQ(testutil::explainAfterFilter(f.plugin(), lister, podWithClaims({"pvc"}), "node-a"),
            std::vector<std::string>{
                "claim default/pvc: no available PV of class \"wait-sc-with-storage-capacity\" "
                "matches it here, and driver driver-with-storage-capacity reports no "
                "CSIStorageCapacity of class \"wait-sc-with-storage-capacity\" on this node with "
                "room for 30Gi"});
}

struct ScoreCase {
  std::string name;
  nlohmann::json args;  // VolumeBindingArgs
  std::vector<PVCSpec> claims;
  std::vector<PVSpec> pvs;
  std::vector<CapacitySpec> capacities;
  std::vector<std::string> nodes = {"node-a", "node-b", "node-c"};
  std::vector<int64_t> wantScores;
};

// Upstream TestVolumeBinding's StorageCapacityScoring cases.
TEST(VolumeBindingCapacity, ScorePrefersTheNodeWithTheMostFreeStorage) {
  const std::string cls(kCapClass);
  auto perNode = [](std::vector<std::pair<std::string, std::string>> sizes) {
    std::vector<CapacitySpec> out;
    for (auto& [node, size] : sizes) out.push_back({.name = node, .node = node, .capacity = size});
    return out;
  };
  const std::vector<ScoreCase> cases = {
      {.name = "storage capacity score",
       .claims = {{.name = "pvc-dynamic", .size = "10Gi", .cls = cls}},
       .capacities = perNode({{"node-a", "100Gi"}, {"node-b", "50Gi"}, {"node-c", "10Gi"}}),
       .wantScores = {90, 80, 0}},
      {.name = "storage capacity score with static binds",
       .claims = {{.name = "pvc-dynamic", .size = "10Gi", .cls = cls},
                  {.name = "pvc-static", .size = "50Gi"}},
       .pvs = {{.name = "pv-static-a", .size = "100Gi", .hostname = "node-a"},
               {.name = "pv-static-b", .size = "100Gi", .hostname = "node-b"},
               {.name = "pv-static-c", .size = "100Gi", .hostname = "node-c"}},
       .capacities = perNode({{"node-a", "100Gi"}, {"node-b", "50Gi"}, {"node-c", "10Gi"}}),
       .wantScores = {50, 50, 50}},
      {.name = "dynamic provisioning with multiple PVCs of the same StorageClass",
       .claims = {{.name = "pvc-dynamic-0", .size = "50Gi", .cls = cls},
                  {.name = "pvc-dynamic-1", .size = "50Gi", .cls = cls}},
       .capacities = perNode({{"node-a", "100Gi"}}),
       .nodes = {"node-a"},
       .wantScores = {0}},
      {.name = "prefer node with least allocatable",
       .args = {{"shape",
                 {{{"utilization", 0}, {"score", 0}}, {{"utilization", 100}, {"score", 10}}}}},
       .claims = {{.name = "pvc-dynamic", .size = "10Gi", .cls = cls}},
       .capacities = perNode({{"node-a", "100Gi"}, {"node-b", "20Gi"}, {"node-c", "10Gi"}}),
       .wantScores = {10, 50, 100}},
      {.name = "prefer node with maximum allocatable",
       .claims = {{.name = "pvc-dynamic", .size = "10Gi", .cls = cls}},
       .capacities = perNode({{"node-a", "100Gi"}, {"node-b", "20Gi"}, {"node-c", "10Gi"}}),
       .wantScores = {90, 50, 0}},
      {.name = "local volumes with close capacity are preferred",
       .claims = {{.name = "pvc-a", .size = "50Gi"}},
       .pvs = {{.name = "pv-a-0", .size = "200Gi", .hostname = "node-a"},
               {.name = "pv-a-1", .size = "200Gi", .hostname = "node-a"},
               {.name = "pv-b-0", .size = "100Gi", .hostname = "node-b"},
               {.name = "pv-b-1", .size = "100Gi", .hostname = "node-b"}},
       .nodes = {"node-a", "node-b"},
       .wantScores = {75, 50}},
  };
  for (const ScoreCase& c : cases) {
    SCOPED_TRACE(c.name);
    CapacityFixture f(c.args);
    std::vector<std::string> names;
    for (const PVCSpec& pvc : c.claims) {
      f.listers().add(makePVC(pvc));
      names.push_back(pvc.name);
    }
    for (const PVSpec& pv : c.pvs) f.listers().add(makePV(pv));
    for (const CapacitySpec& cap : c.capacities) f.listers().add(makeCapacity(cap));
    const api::Pod pod = podWithClaims(names);
    CycleState state;
    PreFilterResult result;
    testutil::FakeLister lister;
    ASSERT_TRUE(f.plugin().preFilter(state, pod, lister, result).ok());
    std::vector<std::shared_ptr<NodeInfo>> infos;
    std::vector<const NodeInfo*> feasible;
    for (const std::string& n : c.nodes) {
      infos.push_back(nodeInfo(n));
      Status st = f.plugin().filter(state, pod, *infos.back());
      ASSERT_TRUE(st.ok()) << n << ": " << st.message();
      feasible.push_back(infos.back().get());
    }
    ASSERT_TRUE(f.plugin().preScore(state, pod, feasible).ok());
    std::vector<int64_t> scores;
    for (const NodeInfo* ni : feasible) {
      int64_t score = -1;
      ASSERT_TRUE(f.plugin().score(state, pod, *ni, score).ok());
      scores.push_back(score);
    }
    EXPECT_EQ(scores, c.wantScores);
  }
}

TEST(VolumeBindingCapacity, WithoutTheGateNothingIsScored) {
  CapacityFixture f(nullptr, false);
  f.listers().add(makePVC({.name = "pvc", .size = "10Gi", .cls = std::string(kCapClass)}));
  f.listers().add(makeCapacity({.name = "c", .capacity = "100Gi"}));
  const api::Pod pod = podWithClaims({"pvc"});
  CycleState state;
  PreFilterResult result;
  testutil::FakeLister lister;
  ASSERT_TRUE(f.plugin().preFilter(state, pod, lister, result).ok());
  auto ni = nodeInfo("node-a");
  ASSERT_TRUE(f.plugin().filter(state, pod, *ni).ok());
  EXPECT_EQ(f.plugin().preScore(state, pod, {ni.get()}).code(), Code::kSkip);
  // A pod without claims skips PreScore with the gate on too.
  CapacityFixture on;
  CycleState other;
  const api::Pod plain = podWithClaims({});
  (void)on.plugin().preFilter(other, plain, lister, result);
  EXPECT_EQ(on.plugin().preScore(other, plain, {ni.get()}).code(), Code::kSkip);
}

TEST(VolumeBindingCapacity, QueueingHints) {
  using testutil::obj;
  constexpr auto kQueue = QueueingHint::kQueue;
  constexpr auto kSkip = QueueingHint::kSkip;
  const ClusterEvent capAdd{EventResource::kCSIStorageCapacity, kAdd, {}};
  const ClusterEvent capUpdate{EventResource::kCSIStorageCapacity, kUpdateOther, {}};
  const ClusterEvent driverUpdate{EventResource::kCSIDriver, kUpdateOther, {}};
  auto cap = [](std::string capacity, std::string max = "") {
    return obj(makeCapacity(
        {.name = "c", .capacity = std::move(capacity), .maximumVolumeSize = std::move(max)}));
  };
  auto driver = [](std::string_view name, std::optional<bool> capacity) {
    api::CSIDriver d = csiDriver(name, capacity.value_or(false));
    return obj(std::move(d));
  };
  struct Case {
    std::string name;
    ClusterEvent event;
    EventObject oldObj;
    EventObject newObj;
    std::optional<QueueingHint> want;
  };
  const EventObject none;
  // Upstream TestIsSchedulableAfterCSIStorageCapacityChange and ...CSIDriverChange.
  const std::vector<Case> cases = {
      {"capacity created", capAdd, none, cap("100"), kQueue},
      {"capacity set", capUpdate, cap(""), cap("100"), kQueue},
      {"maximumVolumeSize set", capUpdate, cap(""), cap("", "100"), kQueue},
      {"capacity grew", capUpdate, cap("50"), cap("100"), kQueue},
      {"maximumVolumeSize dropped, capacity larger", capUpdate, cap("100", "50"), cap("100"),
       kQueue},
      {"maximumVolumeSize grew", capUpdate, cap("100", "50"), cap("100", "60"), kQueue},
      {"no change", capUpdate, cap("100"), cap("100"), kSkip},
      {"limit unchanged", capUpdate, cap("100", "50"), cap("50"), kSkip},
      {"capacity shrank", capUpdate, cap("100"), cap("90"), kSkip},
      {"maximumVolumeSize shrank", capUpdate, cap("", "100"), cap("", "90"), kSkip},
      {"capacity delete is not registered",
       ClusterEvent{EventResource::kCSIStorageCapacity, kDelete, {}}, cap("100"), none,
       std::nullopt},
      {"driver stopped reporting capacity", driverUpdate, driver("inline-driver", true),
       driver("inline-driver", false), kQueue},
      {"driver still reports capacity", driverUpdate, driver("inline-driver", true),
       driver("inline-driver", true), kSkip},
      {"another driver", driverUpdate, driver("other", true), driver("other", false), kSkip},
      {"driver add is not registered", ClusterEvent{EventResource::kCSIDriver, kAdd, {}}, none,
       driver("inline-driver", true), std::nullopt},
  };
  CapacityFixture f;
  api::Pod pod = podWithClaims({"pvc"});
  api::Volume inlineVolume;
  inlineVolume.name = "inline";
  inlineVolume.csi = api::CSIVolumeSource{"inline-driver", false};
  pod.spec.volumes.push_back(inlineVolume);
  for (const Case& c : cases) {
    EXPECT_EQ(testutil::hintName(testutil::hintFor(f.plugin(), c.event, pod, c.oldObj, c.newObj)),
              testutil::hintName(c.want))
        << c.name;
  }
}

}  // namespace
}  // namespace ksched::plugins
