// GangScheduling tables, re-derived from kube-scheduler's gangscheduling_test.go (the queueing
// hints, PreEnqueue with and without CompositePodGroup trees, PlacementFeasible), each row run
// with the CompositePodGroup gate as upstream runs it; plus the watches, the events reported to
// the queue, and the members counted from pod events and Reserve.
#include "plugins/gang_scheduling/gang_scheduling.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include <ksched/registry.h>

#include "plugins/registry.h"
#include "tests/support/hint_test_util.h"
#include "tests/support/plugin_test_util.h"

namespace ksched::plugins {
namespace {

using testutil::PodWrapper;

// Records the watches (with their handlers) and the events reported to the queue.
class RecordingHandle final : public testing::HandleBase {
 public:
  struct Reported {
    std::string label;
    EventObject oldObj;
    EventObject newObj;
  };
  [[nodiscard]] const NodeInfoLister& snapshot() const override { return lister_; }
  [[nodiscard]] std::shared_ptr<const ObjectStore> watchObjects(
      const ObjectWatch& what, ObjectEventHandlers handlers) override {
    watches.push_back(what);
    handlers_.push_back(std::move(handlers));
    return std::make_shared<EmptyObjectStore>();
  }
  void clusterEvent(const ClusterEvent& event, const EventObject& oldObj,
                    const EventObject& newObj) override {
    reported.push_back({event.label(), oldObj, newObj});
  }
  [[nodiscard]] const ObjectEventHandlers& handlers(size_t i) const { return handlers_.at(i); }

  std::vector<ObjectWatch> watches;
  std::vector<Reported> reported;

 private:
  testing::FakeLister lister_;
  std::vector<ObjectEventHandlers> handlers_;
};

std::shared_ptr<const api::PodGroup> podGroup(const std::string& ns, const std::string& name,
                                              std::optional<int32_t> minCount,
                                              std::optional<std::string> parent = {}) {
  api::PodGroup pg;
  pg.apiVersion = "scheduling.k8s.io/v1beta1";
  pg.metadata.namespace_ = ns;
  pg.metadata.name = name;
  pg.spec.schedulingPolicy.gangMinCount = minCount;
  pg.spec.parentCompositePodGroupName = std::move(parent);
  return std::make_shared<const api::PodGroup>(std::move(pg));
}

std::shared_ptr<const api::CompositePodGroup> composite(const std::string& ns,
                                                        const std::string& name,
                                                        std::optional<int32_t> minGroupCount,
                                                        std::optional<std::string> parent = {}) {
  api::CompositePodGroup cpg;
  cpg.apiVersion = "scheduling.k8s.io/v1alpha3";
  cpg.metadata.namespace_ = ns;
  cpg.metadata.name = name;
  cpg.spec.schedulingPolicy.gangMinCount = minGroupCount;
  cpg.spec.parentCompositePodGroupName = std::move(parent);
  return std::make_shared<const api::CompositePodGroup>(std::move(cpg));
}

// A pod of `group` (none when empty) in `ns`, bound to `node` when given.
PodPtr member(const std::string& ns, const std::string& name, const std::string& group,
              const std::string& node = "") {
  api::Pod p = PodWrapper(name).ns(ns).uid(name).obj();
  if (!group.empty()) p.spec.schedulingGroup = api::PodSchedulingGroup{group};
  p.spec.nodeName = node;
  return std::make_shared<const api::Pod>(std::move(p));
}

struct Fixture {
  explicit Fixture(bool compositeEnabled) {
    features::Gates gates;
    gates.force(features::Feature::kCompositePodGroup, compositeEnabled);
    handle.setFeatures(gates);
    plugin = std::make_unique<GangScheduling>(handle);
  }
  void add(const std::vector<std::shared_ptr<const api::PodGroup>>& pgs,
           const std::vector<std::shared_ptr<const api::CompositePodGroup>>& cpgs = {},
           const std::vector<PodPtr>& pods = {}) {
    for (const auto& pg : pgs) plugin->applyPodGroup(pg);
    for (const auto& cpg : cpgs) plugin->applyCompositePodGroup(cpg);
    for (const auto& p : pods) plugin->onPod(nullptr, p);
  }
  RecordingHandle handle;
  std::unique_ptr<GangScheduling> plugin;
};

std::string hintName(QueueingHint h) { return h == QueueingHint::kQueue ? "Queue" : "QueueSkip"; }

using Gates = std::vector<bool>;  // the CompositePodGroup gate values a row runs with
const Gates kBoth{true, false};

TEST(GangSchedulingHintTest, PodAdded) {
  struct Row {
    std::string name;
    Gates gates;
    PodPtr pod;
    PodPtr added;
    std::vector<std::shared_ptr<const api::PodGroup>> pgs;
    std::vector<std::shared_ptr<const api::CompositePodGroup>> cpgs;
    QueueingHint want;
  };
  const std::vector<Row> rows = {
      {"matches the pod's scheduling group",
       kBoth,
       member("default", "p", "pg"),
       member("default", "q", "pg"),
       {},
       {},
       QueueingHint::kQueue},
      {"bound pod of the pod's scheduling group",
       kBoth,
       member("default", "p", "pg"),
       member("default", "q", "pg", "node1"),
       {},
       {},
       QueueingHint::kQueue},
      {"other namespace",
       kBoth,
       member("default", "p", "pg"),
       member("foo", "q", "pg"),
       {podGroup("default", "pg", 1), podGroup("foo", "pg", 1)},
       {},
       QueueingHint::kSkip},
      {"other pod group",
       kBoth,
       member("default", "p", "pg1"),
       member("default", "q", "pg2"),
       {podGroup("default", "pg1", 1), podGroup("default", "pg2", 1)},
       {},
       QueueingHint::kSkip},
      {"other group, same root",
       {true},
       member("default", "p1", "pg1"),
       member("default", "p2", "pg2"),
       {podGroup("default", "pg1", 1, "cpg-root"), podGroup("default", "pg2", 1, "cpg-root")},
       {composite("default", "cpg-root", 1)},
       QueueingHint::kQueue},
      {"other group, same root, gate off",
       {false},
       member("default", "p1", "pg1"),
       member("default", "p2", "pg2"),
       {podGroup("default", "pg1", 1, "cpg-root"), podGroup("default", "pg2", 1, "cpg-root")},
       {composite("default", "cpg-root", 1)},
       QueueingHint::kSkip},
      {"other group, other root",
       kBoth,
       member("default", "p1", "pg1"),
       member("default", "p2", "pg2"),
       {podGroup("default", "pg1", 1, "cpg-root1"), podGroup("default", "pg2", 1, "cpg-root2")},
       {composite("default", "cpg-root1", 1), composite("default", "cpg-root2", 1)},
       QueueingHint::kSkip},
      {"added pod of no group",
       kBoth,
       member("default", "p", "pg"),
       member("default", "q", ""),
       {},
       {},
       QueueingHint::kSkip},
      {"pod of no group",
       kBoth,
       member("default", "p", ""),
       member("default", "q", "pg"),
       {},
       {},
       QueueingHint::kSkip},
  };
  for (const auto& r : rows) {
    for (bool gate : r.gates) {
      Fixture f(gate);
      f.add(r.pgs, r.cpgs);
      EXPECT_EQ(hintName(f.plugin->podAddedHint(*r.pod, {}, testutil::obj(*r.added))),
                hintName(r.want))
          << r.name << " (CPG enabled: " << gate << ")";
    }
  }
}

TEST(GangSchedulingHintTest, PodGroupAdded) {
  struct Row {
    std::string name;
    Gates gates;
    PodPtr pod;
    std::shared_ptr<const api::PodGroup> added;
    std::vector<std::shared_ptr<const api::PodGroup>> pgs;
    std::vector<std::shared_ptr<const api::CompositePodGroup>> cpgs;
    QueueingHint want;
  };
  const std::vector<Row> rows = {
      {"matches the pod's pod group",
       kBoth,
       member("default", "p", "pg"),
       podGroup("default", "pg", 1),
       {},
       {},
       QueueingHint::kQueue},
      {"other name",
       kBoth,
       member("default", "p", "pg1"),
       podGroup("default", "pg2", 1),
       {podGroup("default", "pg1", 1)},
       {},
       QueueingHint::kSkip},
      {"other namespace",
       kBoth,
       member("ns1", "p", "pg"),
       podGroup("ns2", "pg", 1),
       {podGroup("ns1", "pg", 1)},
       {},
       QueueingHint::kSkip},
      {"other group, same root",
       {true},
       member("default", "p", "pg1"),
       podGroup("default", "pg2", 1, "cpg-root"),
       {podGroup("default", "pg1", 1, "cpg-root")},
       {composite("default", "cpg-root", 1)},
       QueueingHint::kQueue},
      {"other group, same root, gate off",
       {false},
       member("default", "p", "pg1"),
       podGroup("default", "pg2", 1, "cpg-root"),
       {podGroup("default", "pg1", 1, "cpg-root")},
       {composite("default", "cpg-root", 1)},
       QueueingHint::kSkip},
      {"other group, other root",
       kBoth,
       member("default", "p", "pg1"),
       podGroup("default", "pg2", 1, "cpg-root2"),
       {podGroup("default", "pg1", 1, "cpg-root1")},
       {composite("default", "cpg-root1", 1), composite("default", "cpg-root2", 1)},
       QueueingHint::kSkip},
      {"pod of no group",
       kBoth,
       member("default", "p", ""),
       podGroup("default", "pg", 1),
       {},
       {},
       QueueingHint::kSkip},
  };
  for (const auto& r : rows) {
    for (bool gate : r.gates) {
      Fixture f(gate);
      f.add(r.pgs, r.cpgs);
      f.plugin->applyPodGroup(r.added);  // the watch knows it before the queue asks
      EXPECT_EQ(hintName(f.plugin->podGroupAddedHint(*r.pod, {}, r.added)), hintName(r.want))
          << r.name << " (CPG enabled: " << gate << ")";
    }
  }
}

TEST(GangSchedulingHintTest, PodGroupUpdated) {
  struct Row {
    std::string name;
    PodPtr pod;
    std::shared_ptr<const api::PodGroup> before;
    std::shared_ptr<const api::PodGroup> after;
    QueueingHint want;
  };
  const std::vector<Row> rows = {
      {"minCount decreased", member("ns1", "p", "pg"), podGroup("ns1", "pg", 4),
       podGroup("ns1", "pg", 3), QueueingHint::kQueue},
      {"basic policy updated", member("ns1", "p", "pg"), podGroup("ns1", "pg", std::nullopt),
       podGroup("ns1", "pg", std::nullopt), QueueingHint::kSkip},
      {"minCount increased", member("ns1", "p", "pg"), podGroup("ns1", "pg", 3),
       podGroup("ns1", "pg", 4), QueueingHint::kSkip},
      {"minCount unchanged", member("ns1", "p", "pg"), podGroup("ns1", "pg", 3),
       podGroup("ns1", "pg", 3), QueueingHint::kSkip},
      {"decreased, other pod group", member("ns1", "p", "pg-other"), podGroup("ns1", "pg", 4),
       podGroup("ns1", "pg", 3), QueueingHint::kSkip},
      {"decreased, other namespace", member("ns-other", "p", "pg"), podGroup("ns1", "pg", 4),
       podGroup("ns1", "pg", 3), QueueingHint::kSkip},
      {"pod of no group", member("ns1", "p", ""), podGroup("ns1", "pg", 4),
       podGroup("ns1", "pg", 3), QueueingHint::kSkip},
  };
  for (const auto& r : rows) {
    for (bool gate : kBoth) {
      Fixture f(gate);
      f.plugin->applyPodGroup(r.before);
      f.plugin->applyPodGroup(r.after);
      EXPECT_EQ(hintName(f.plugin->podGroupUpdatedHint(*r.pod, r.before, r.after)),
                hintName(r.want))
          << r.name << " (CPG enabled: " << gate << ")";
    }
  }
}

TEST(GangSchedulingHintTest, CompositePodGroupAdded) {
  struct Row {
    std::string name;
    Gates gates;
    std::vector<std::shared_ptr<const api::PodGroup>> pgs;
    std::vector<std::shared_ptr<const api::CompositePodGroup>> cpgs;
    std::shared_ptr<const api::CompositePodGroup> added;
    QueueingHint want;
  };
  const std::vector<Row> rows = {
      {"the pod's root",
       {true},
       {podGroup("default", "pg", 1, "cpg-root")},
       {},
       composite("default", "cpg-root", 1),
       QueueingHint::kQueue},
      {"the pod's root, gate off",
       {false},
       {podGroup("default", "pg", 1, "cpg-root")},
       {},
       composite("default", "cpg-root", 1),
       QueueingHint::kSkip},
      {"the pod's intermediate group, same root",
       {true},
       {podGroup("default", "pg", 1, "cpg-sub")},
       {composite("default", "cpg-root", 1)},
       composite("default", "cpg-sub", 1, "cpg-root"),
       QueueingHint::kQueue},
      {"the pod's intermediate group, gate off",
       {false},
       {podGroup("default", "pg", 1, "cpg-sub")},
       {composite("default", "cpg-root", 1)},
       composite("default", "cpg-sub", 1, "cpg-root"),
       QueueingHint::kSkip},
      {"another tree",
       kBoth,
       {podGroup("default", "pg", 1, "cpg-1")},
       {composite("default", "cpg-1", 1), composite("default", "cpg-2", 1)},
       composite("default", "cpg-2", 1),
       QueueingHint::kSkip},
  };
  const PodPtr pod = member("default", "p", "pg");
  for (const auto& r : rows) {
    for (bool gate : r.gates) {
      Fixture f(gate);
      f.add(r.pgs, r.cpgs);
      f.plugin->applyCompositePodGroup(r.added);
      EXPECT_EQ(hintName(f.plugin->compositePodGroupAddedHint(*pod, {}, r.added)), hintName(r.want))
          << r.name << " (CPG enabled: " << gate << ")";
    }
  }
}

// What the queue does with the registrations: the events upstream registers, and nothing else.
TEST(GangSchedulingHintTest, Registrations) {
  for (bool gate : kBoth) {
    Fixture f(gate);
    const PodPtr pod = member("default", "p", "pg");
    f.plugin->applyPodGroup(podGroup("default", "pg", 3));
    auto judge = [&](EventResource r, uint32_t a, const EventObject& o, const EventObject& n) {
      return testutil::hintName(testutil::hintFor(*f.plugin, testutil::event(r, a), *pod, o, n));
    };
    const auto sibling = testutil::obj(*member("default", "q", "pg"));
    EXPECT_EQ(judge(EventResource::kUnscheduledPod, kAdd, {}, sibling), "Queue");
    EXPECT_EQ(judge(EventResource::kAssignedPod, kAdd, {}, sibling), "Queue");
    EXPECT_EQ(judge(EventResource::kUnscheduledPod, kUpdateOther, sibling, sibling),
              "not registered");
    EXPECT_EQ(judge(EventResource::kAssignedPod, kDelete, sibling, {}), "not registered");
    EXPECT_EQ(judge(EventResource::kPodGroup, kAdd, {}, podGroup("default", "pg", 3)), "Queue");
    EXPECT_EQ(judge(EventResource::kPodGroup, kUpdateOther, podGroup("default", "pg", 3),
                    podGroup("default", "pg", 2)),
              "Queue");
    EXPECT_EQ(judge(EventResource::kPodGroup, kDelete, podGroup("default", "pg", 3), {}),
              "not registered");
    EXPECT_EQ(judge(EventResource::kCompositePodGroup, kAdd, {}, composite("default", "c", 1)),
              gate ? "QueueSkip" : "not registered");
    // Objects of the wrong kind: the pod is retried rather than stuck.
    EXPECT_EQ(hintName(f.plugin->podGroupAddedHint(*pod, {}, sibling)), "Queue");
  }
}

TEST(GangSchedulingPreEnqueueTest, Table) {
  const auto pg1 = podGroup("ns1", "pg1", 3);
  const auto pg2 = podGroup("ns1", "pg2", 4);
  const auto pg3 = podGroup("ns1", "pg3", std::nullopt);
  const auto p1 = member("ns1", "p1", "pg1");
  const auto p2 = member("ns1", "p2", "pg1");
  const auto p3 = member("ns1", "p3", "pg1");
  const auto p4 = member("ns1", "p4", "pg2");
  const auto p5 = member("ns1", "p5", "pg2");
  const auto basicPod = member("ns1", "basic-pod", "pg3");
  const auto nonGang = member("ns1", "non-gang", "");

  const std::vector<std::shared_ptr<const api::CompositePodGroup>> tree = {
      composite("ns1", "cpg-root", 2), composite("ns1", "cpg-sub1", 2, "cpg-root"),
      composite("ns1", "cpg-sub2", std::nullopt, "cpg-root"),
      composite("ns1", "cpg-sub3", 2, "cpg-root")};
  const std::vector<std::shared_ptr<const api::PodGroup>> treeGroups = {
      podGroup("ns1", "pg1-cpg", 1, "cpg-sub1"),
      podGroup("ns1", "pg2-cpg", 1, "cpg-sub1"),
      podGroup("ns1", "pg3-cpg", 1, "cpg-sub1"),
      podGroup("ns1", "pg4-cpg", std::nullopt, "cpg-sub2"),
      podGroup("ns1", "pg5-cpg", 1, "cpg-sub2"),
      podGroup("ns1", "pg6-cpg", 1, "cpg-sub3"),
      podGroup("ns1", "pg7-cpg", 1, "cpg-sub3")};
  const auto p1c = member("ns1", "p1-cpg", "pg1-cpg");
  const auto p2c = member("ns1", "p2-cpg", "pg2-cpg");
  const auto p4c = member("ns1", "p4-cpg", "pg4-cpg");
  const auto p6c = member("ns1", "p6-cpg", "pg6-cpg");

  const std::vector<std::shared_ptr<const api::CompositePodGroup>> basicRoot = {
      composite("ns1", "cpg-basic-root", std::nullopt)};
  const std::vector<std::shared_ptr<const api::PodGroup>> basicRootGroups = {
      podGroup("ns1", "pg-basic-1", 2, "cpg-basic-root"),
      podGroup("ns1", "pg-basic-2", 2, "cpg-basic-root")};
  const auto p11 = member("ns1", "p1_1", "pg-basic-1");
  const auto p12 = member("ns1", "p1_2", "pg-basic-1");
  const auto p21 = member("ns1", "p2_1", "pg-basic-2");

  const std::string notCreated =
      R"(waiting for pod's pod group "pg1" to appear in scheduling queue)";
  const std::string quorum = "waiting for minCount pods from a gang to appear in scheduling queue";
  const std::string treeQuorum =
      R"(waiting for composite pod group "cpg-root" tree to meet quorum)";
  struct Row {
    std::string name;
    Gates gates;
    PodPtr pod;
    std::vector<PodPtr> pods;
    std::vector<std::shared_ptr<const api::PodGroup>> pgs;
    std::vector<std::shared_ptr<const api::CompositePodGroup>> cpgs;
    std::string want;  // "" for Success, else the UnschedulableAndUnresolvable message
  };
  const std::vector<Row> rows = {
      {"non-gang pod", kBoth, nonGang, {}, {pg1, pg2, pg3}, {}, ""},
      {"basic policy pod", kBoth, basicPod, {}, {pg1, pg2, pg3}, {}, ""},
      {"pod group not created", kBoth, p1, {p2, p3, p4, p5}, {}, {}, notCreated},
      {"quorum not met", kBoth, p1, {p2, p4, p5}, {pg1, pg2}, {}, quorum},
      {"quorum met", kBoth, p1, {p2, p3, p4, p5}, {pg1, pg2}, {}, ""},
      {"tree stage 1: no pods", {true}, p1c, {}, treeGroups, tree, treeQuorum},
      {"tree stage 1: no pods, gate off", {false}, p1c, {}, treeGroups, tree, ""},
      {"tree stage 2: sub1 ready, root needs 2",
       {true},
       p6c,
       {p1c, p2c},
       treeGroups,
       tree,
       treeQuorum},
      {"tree stage 2: gate off", {false}, p6c, {p1c, p2c}, treeGroups, tree, ""},
      {"tree stage 3: sub1 and sub2 ready", {true}, p4c, {p1c, p2c, p6c}, treeGroups, tree, ""},
      {"tree stage 3: gate off", {false}, p4c, {p1c, p2c, p6c}, treeGroups, tree, ""},
      {"basic root: one ready child is enough",
       {true},
       p21,
       {p11, p12},
       basicRootGroups,
       basicRoot,
       ""},
      {"basic root: gate off, own gang short",
       {false},
       p21,
       {p11, p12},
       basicRootGroups,
       basicRoot,
       quorum},
  };
  for (const auto& r : rows) {
    for (bool gate : r.gates) {
      Fixture f(gate);
      f.add(r.pgs, r.cpgs, r.pods);
      f.plugin->onPod(nullptr, r.pod);  // the pod's own add reaches the plugin first
      const Status s = f.plugin->preEnqueue(*r.pod);
      const std::string where = r.name + " (CPG enabled: " + std::to_string(gate) + ")";
      if (r.want.empty()) {
        EXPECT_TRUE(s.ok()) << where << ": " << s.message();
      } else {
        EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable) << where;
        EXPECT_EQ(s.message(), r.want) << where;
      }
    }
  }
}

TEST(GangSchedulingPreEnqueueTest, WhichPodsCount) {
  Fixture f(false);
  f.add({podGroup("ns1", "pg", 3)});
  const auto p1 = member("ns1", "p1", "pg");
  // The pod asking counts before its own add arrives; a bound member counts.
  f.plugin->onPod(nullptr, member("ns1", "p2", "pg", "node1"));
  EXPECT_FALSE(f.plugin->preEnqueue(*p1).ok());
  f.plugin->onPod(nullptr, member("ns1", "p3", "pg"));
  EXPECT_TRUE(f.plugin->preEnqueue(*p1).ok());
  // A finished member does not count, nor does a deleted one.
  api::Pod done = *member("ns1", "p3", "pg", "node1");
  done.status.phase = "Succeeded";
  f.plugin->onPod(member("ns1", "p3", "pg"), std::make_shared<const api::Pod>(done));
  EXPECT_FALSE(f.plugin->preEnqueue(*p1).ok());
  f.plugin->onPod(nullptr, member("ns1", "p4", "pg"));
  EXPECT_TRUE(f.plugin->preEnqueue(*p1).ok());
  f.plugin->onPod(member("ns1", "p4", "pg"), nullptr);
  EXPECT_FALSE(f.plugin->preEnqueue(*p1).ok());
  // A pod of the same name in another namespace is another group's.
  f.plugin->onPod(nullptr, member("ns2", "p5", "pg"));
  EXPECT_FALSE(f.plugin->preEnqueue(*p1).ok());
  // The PodGroup deleted: the pod waits for it again.
  f.plugin->removePodGroup("ns1", "pg");
  EXPECT_EQ(f.plugin->preEnqueue(*p1).message(),
            R"(waiting for pod's pod group "pg" to appear in scheduling queue)");
}

TEST(GangSchedulingPreEnqueueTest, UnknownOrCyclicTree) {
  Fixture f(true);
  // The parent CompositePodGroup is not known yet: it names the tree.
  f.add({podGroup("ns1", "pg", 1, "cpg-mid")}, {composite("ns1", "cpg-mid", 1, "cpg-top")});
  const auto p = member("ns1", "p", "pg");
  EXPECT_EQ(f.plugin->preEnqueue(*p).message(),
            R"(waiting for composite pod group "cpg-top" tree to meet quorum)");
  f.plugin->applyCompositePodGroup(composite("ns1", "cpg-top", 1));
  EXPECT_TRUE(f.plugin->preEnqueue(*p).ok());
  // A cycle of parents never meets quorum.
  f.plugin->applyCompositePodGroup(composite("ns1", "cpg-top", 1, "cpg-mid"));
  EXPECT_EQ(f.plugin->preEnqueue(*p).message(),
            R"(waiting for composite pod group "cpg-mid" tree to meet quorum)");
}

TEST(GangSchedulingPlacementFeasibleTest, Table) {
  struct Row {
    std::string name;
    std::optional<int32_t> minCount;  // nullopt: basic
    int children;                     // pods the cycle places
    std::vector<Code> podStatuses;
    std::vector<Code> want;
    int initiallyScheduled;  // members bound or reserved before the cycle
  };
  using enum Code;
  const std::vector<Row> rows = {
      {"all pods succeed, minCount met at the end",
       2,
       2,
       {kSuccess, kSuccess},
       {kWait, kSuccess},
       0},
      {"first pod fails, minCount out of reach", 3, 3, {kUnschedulable}, {kUnschedulable}, 0},
      {"second pod fails", 2, 2, {kSuccess, kUnschedulable}, {kWait, kUnschedulable}, 0},
      {"basic, nothing scheduled", std::nullopt, 1, {kUnschedulable}, {kUnschedulable}, 0},
      {"basic, one pod scheduled", std::nullopt, 1, {kSuccess}, {kSuccess}, 0},
      {"basic, one scheduled before", std::nullopt, 1, {kUnschedulable}, {kSuccess}, 1},
      {"more pods than minCount, all succeed",
       2,
       3,
       {kSuccess, kSuccess, kSuccess},
       {kWait, kSuccess, kSuccess},
       0},
      {"more pods than minCount, first fails",
       2,
       3,
       {kUnschedulable, kSuccess, kSuccess},
       {kWait, kWait, kSuccess},
       0},
      {"more pods than minCount, out of reach",
       2,
       3,
       {kUnschedulable, kUnschedulable},
       {kWait, kUnschedulable},
       0},
      {"one before, two succeed, minCount 3", 3, 2, {kSuccess, kSuccess}, {kWait, kSuccess}, 1},
      {"minCount met before the cycle", 2, 1, {kUnschedulable}, {kSuccess}, 2},
      {"one before, minCount 3, first fails", 3, 2, {kUnschedulable}, {kUnschedulable}, 1},
      {"one before, minCount 4, too few pods", 4, 2, {kSuccess}, {kUnschedulable}, 1},
  };
  for (const auto& r : rows) {
    for (bool gate : kBoth) {
      Fixture f(gate);
      const auto pg = podGroup("default", "test-pg", r.minCount);
      f.add({pg});
      PodGroupInfo group{"default", "test-pg", pg, {}};
      for (int i = 0; i < r.children; ++i) {
        group.pods.push_back(member("default", "c" + std::to_string(i), "test-pg"));
        f.plugin->onPod(nullptr, group.pods.back());
      }
      // Members placed before: bound ones seen by the pod handlers, assumed ones by Reserve.
      CycleState state;
      for (int i = 0; i < r.initiallyScheduled; ++i) {
        const std::string name = "before" + std::to_string(i);
        if (i % 2 == 0) {
          f.plugin->onPod(nullptr, member("default", name, "test-pg", "node1"));
        } else {
          ASSERT_TRUE(f.plugin->reserve(state, *member("default", name, "test-pg"), "n").ok());
        }
      }
      int32_t scheduled = 0;
      for (size_t i = 0; i < r.podStatuses.size(); ++i) {
        if (r.podStatuses[i] == kSuccess) {
          ++scheduled;
          // The cycle reserves each pod it places: not counted twice.
          ASSERT_TRUE(f.plugin->reserve(state, *group.pods[i], "n").ok());
        }
        const PlacementProgress progress{scheduled, r.children - static_cast<int32_t>(i + 1)};
        const Status s = f.plugin->placementFeasible(state, group, progress);
        EXPECT_EQ(s.code(), r.want[i])
            << r.name << " step " << i << " (CPG enabled: " << gate << "): " << s.message();
      }
    }
  }
}

TEST(GangSchedulingPlacementFeasibleTest, MessagesAndUnreserve) {
  Fixture f(false);
  const auto pg = podGroup("default", "pg", 3);
  f.add({pg});
  const auto p0 = member("default", "p0", "pg");
  const auto p1 = member("default", "p1", "pg");
  PodGroupInfo group{"default", "pg", pg, {p0, p1}};
  CycleState state;
  // Each question in a cycle of its own: the plugin counts the members outside a cycle once, at
  // the cycle's first question.
  auto ask = [&](PlacementProgress progress) {
    CycleState cycle;
    return f.plugin->placementFeasible(cycle, group, progress);
  };
  Status s = ask({0, 2});
  EXPECT_EQ(s.code(), Code::kUnschedulable);
  EXPECT_EQ(s.message(), "minCount (3) cannot be satisfied: 0 scheduled, 2 remaining");

  // A member assumed outside the cycle (Reserve twice: counted once).
  const auto early = member("default", "early", "pg");
  ASSERT_TRUE(f.plugin->reserve(state, *early, "n").ok());
  ASSERT_TRUE(f.plugin->reserve(state, *early, "n").ok());
  s = ask({0, 2});
  EXPECT_EQ(s.code(), Code::kWait);
  EXPECT_EQ(s.message(), "minCount (3) is not yet satisfied: 1 scheduled, 2 remaining");
  EXPECT_TRUE(ask({2, 0}).ok());
  // Bound now, and still reserved: one member.
  f.plugin->onPod(nullptr, member("default", "early", "pg", "node1"));
  EXPECT_EQ(ask({1, 1}).message(), "minCount (3) is not yet satisfied: 2 scheduled, 1 remaining");
  // Unreserved (twice) but bound: still counted; deleted: gone.
  f.plugin->unreserve(state, *early, "n");
  f.plugin->unreserve(state, *early, "n");
  EXPECT_EQ(ask({1, 1}).code(), Code::kWait);
  f.plugin->onPod(member("default", "early", "pg", "node1"), nullptr);
  EXPECT_EQ(ask({1, 1}).message(), "minCount (3) cannot be satisfied: 1 scheduled, 1 remaining");
  // Another group's pods and pods of no group change nothing.
  ASSERT_TRUE(f.plugin->reserve(state, *member("default", "x", "other"), "n").ok());
  ASSERT_TRUE(f.plugin->reserve(state, *member("default", "y", ""), "n").ok());
  f.plugin->onPod(nullptr, member("other-ns", "z", "pg", "node1"));
  EXPECT_EQ(ask({1, 1}).code(), Code::kUnschedulable);
  // Without the PodGroup in the info, the watched one is read.
  group.podGroup = nullptr;
  EXPECT_EQ(ask({0, 2}).message(), "minCount (3) cannot be satisfied: 0 scheduled, 2 remaining");
}

nlohmann::json podGroupJson(const std::string& name, nlohmann::json minCount) {
  return {{"apiVersion", "scheduling.k8s.io/v1beta1"},
          {"kind", "PodGroup"},
          {"metadata", {{"name", name}, {"namespace", "default"}, {"uid", name + "-uid"}}},
          {"spec", {{"schedulingPolicy", {{"gang", {{"minCount", minCount}}}}}}}};
}

UnstructuredPtr unstructured(const nlohmann::json& j) {
  auto o = std::make_shared<UnstructuredObject>();
  o->metadata.name = j["metadata"]["name"];
  o->metadata.namespace_ = j["metadata"]["namespace"];
  o->object = j;
  return o;
}

TEST(GangSchedulingWatchTest, WatchesAndReportsPodGroups) {
  Fixture f(false);
  ASSERT_EQ(f.handle.watches.size(), 1u);
  const ObjectWatch& w = f.handle.watches[0];
  EXPECT_EQ(w.kind, "PodGroup");
  EXPECT_EQ(w.path, "/apis/scheduling.k8s.io/v1beta1/podgroups");
  EXPECT_EQ(w.alternatives, std::vector<std::string>{"/apis/scheduling.k8s.io/v1alpha2/podgroups"});
  EXPECT_TRUE(w.optional);
  EXPECT_EQ(f.handle.podHandlerCount(), 1u);

  const auto& h = f.handle.handlers(0);
  const auto v1 = unstructured(podGroupJson("pg", 3));
  h.onAdd(v1);
  ASSERT_EQ(f.handle.reported.size(), 1u);
  EXPECT_EQ(f.handle.reported[0].label, "scheduling.k8s.io/PodGroupAdd");
  const auto* added = as<api::PodGroup>(f.handle.reported[0].newObj);
  ASSERT_NE(added, nullptr);
  EXPECT_EQ(added->metadata.name, "pg");
  EXPECT_EQ(added->spec.schedulingPolicy.gangMinCount, 3);

  // A malformed version is skipped (reported to no one); the last good one stays.
  const auto bad = unstructured(podGroupJson("pg", "three"));
  h.onUpdate(v1, bad);
  h.onUpdate(v1, bad);
  EXPECT_EQ(f.handle.reported.size(), 1u);
  EXPECT_FALSE(f.plugin->preEnqueue(*member("default", "p", "pg")).ok());

  const auto v2 = unstructured(podGroupJson("pg", 1));
  h.onUpdate(bad, v2);
  ASSERT_EQ(f.handle.reported.size(), 2u);
  EXPECT_EQ(f.handle.reported[1].label, "scheduling.k8s.io/PodGroupUpdate");
  EXPECT_EQ(as<api::PodGroup>(f.handle.reported[1].oldObj)->spec.schedulingPolicy.gangMinCount, 3);
  EXPECT_EQ(as<api::PodGroup>(f.handle.reported[1].newObj)->spec.schedulingPolicy.gangMinCount, 1);
  EXPECT_TRUE(f.plugin->preEnqueue(*member("default", "p", "pg")).ok());

  h.onDelete(v2);
  ASSERT_EQ(f.handle.reported.size(), 3u);
  EXPECT_EQ(f.handle.reported[2].label, "scheduling.k8s.io/PodGroupDelete");
  EXPECT_NE(as<api::PodGroup>(f.handle.reported[2].oldObj), nullptr);
  EXPECT_FALSE(f.plugin->preEnqueue(*member("default", "p", "pg")).ok());
  // A malformed object that was never known: its delete reports nothing.
  h.onAdd(unstructured(podGroupJson("broken", "x")));
  h.onDelete(unstructured(podGroupJson("broken", "x")));
  EXPECT_EQ(f.handle.reported.size(), 3u);
}

TEST(GangSchedulingWatchTest, CompositePodGroupsOnlyWithTheGate) {
  Fixture f(true);
  ASSERT_EQ(f.handle.watches.size(), 2u);
  EXPECT_EQ(f.handle.watches[1].kind, "CompositePodGroup");
  EXPECT_EQ(f.handle.watches[1].path, "/apis/scheduling.k8s.io/v1alpha3/compositepodgroups");
  EXPECT_TRUE(f.handle.watches[1].optional);
  const nlohmann::json j = {{"apiVersion", "scheduling.k8s.io/v1alpha3"},
                            {"kind", "CompositePodGroup"},
                            {"metadata", {{"name", "root"}, {"namespace", "default"}}},
                            {"spec",
                             {{"workloadRef", {{"workloadName", "w"}, {"templateName", "t"}}},
                              {"schedulingPolicy", {{"gang", {{"minGroupCount", 2}}}}}}}};
  f.handle.handlers(1).onAdd(unstructured(j));
  ASSERT_EQ(f.handle.reported.size(), 1u);
  EXPECT_EQ(f.handle.reported[0].label, "scheduling.k8s.io/CompositePodGroupAdd");
  const auto* cpg = as<api::CompositePodGroup>(f.handle.reported[0].newObj);
  ASSERT_NE(cpg, nullptr);
  EXPECT_EQ(cpg->spec.schedulingPolicy.gangMinCount, 2);
  f.handle.handlers(1).onDelete(unstructured(j));
  ASSERT_EQ(f.handle.reported.size(), 2u);
  EXPECT_EQ(f.handle.reported[1].label, "scheduling.k8s.io/CompositePodGroupDelete");

  Fixture off(false);
  EXPECT_EQ(off.handle.watches.size(), 1u);
}

TEST(GangSchedulingFactoryTest, RegisteredWithoutArgs) {
  const Registry registry = inTreeRegistry();
  const PluginFactory* factory = registry.find("GangScheduling");
  ASSERT_NE(factory, nullptr);
  testing::FakeHandle h;
  for (const nlohmann::json& args : {nlohmann::json(nullptr), nlohmann::json::object()}) {
    auto p = makePlugin(*factory, args, h);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->name(), "GangScheduling");
    EXPECT_NE(dynamic_cast<PlacementFeasiblePlugin*>(p.get()), nullptr);
    EXPECT_TRUE(factory->points.has(ExtensionPoint::kPreEnqueue));
    EXPECT_TRUE(factory->points.has(ExtensionPoint::kReserve));
  }
}

}  // namespace
}  // namespace ksched::plugins
