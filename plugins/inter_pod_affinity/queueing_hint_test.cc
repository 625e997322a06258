#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "plugins/inter_pod_affinity/inter_pod_affinity.h"
#include "tests/support/hint_test_util.h"
#include "tests/support/inter_pod_affinity_test_util.h"

namespace ksched::plugins {
namespace {

using ipatest::Affinity;
using ipatest::exists;
using ipatest::in;
using ipatest::json;
using ipatest::makeNamespace;
using ipatest::makeNode;
using ipatest::makePod;
using testutil::hintFor;
using testutil::hintName;

constexpr auto kQueue = QueueingHint::kQueue;
constexpr auto kSkip = QueueingHint::kSkip;

const ClusterEvent kPodAdd{EventResource::kAssignedPod, kAdd, {}};
const ClusterEvent kPodLabel{EventResource::kAssignedPod, kUpdatePodLabel, {}};
const ClusterEvent kPodDelete{EventResource::kAssignedPod, kDelete, {}};
const ClusterEvent kOwnLabel{EventResource::kUnscheduledPod, kUpdatePodLabel, {}};
const ClusterEvent kNodeAdd{EventResource::kNode, kAdd, {}};
const ClusterEvent kNodeLabel{EventResource::kNode, kUpdateNodeLabel, {}};

struct HintCase {
  std::string name;
  ClusterEvent event;
  PodPtr pod;
  EventObject oldObj;
  EventObject newObj;
  std::optional<QueueingHint> want;
};

// A pod bound to node1 with `labels`.
PodPtr bound(const std::string& name, const json& labels, const Affinity& a = {},
             const std::string& ns = "default") {
  return makePod(name, ns, labels, "node1", a);
}

TEST(InterPodAffinityHints, Table) {
  const json scan = {{"service", "securityscan"}};
  const json scanAndA = {{"service", "securityscan"}, {"aaa", "a"}};
  const json other = {{"service", "other"}};
  const Affinity affinity{.required = {in("service", {"securityscan"}, "zone")}};
  const Affinity twoAffinity{
      .required = {in("service", {"securityscan"}, "zone"), exists("aaa", "zone")}};
  const Affinity anti{.requiredAnti = {in("service", {"securityscan"}, "zone")}};
  const Affinity twoAnti{
      .requiredAnti = {in("service", {"securityscan"}, "zone"), exists("aaa", "zone")}};
  const Affinity teamAffinity{
      .required = {in("service", {"securityscan"}, "zone",
                      {{"namespaceSelector", {{"matchLabels", {{"team", "team1"}}}}}})}};
  const PodPtr affPod = makePod("p", "default", json::object(), "", affinity);
  const PodPtr antiPod = makePod("p", "default", json::object(), "", anti);
  const PodPtr web = makePod("p", "default", {{"app", "web"}});
  const Affinity repelsWeb{.requiredAnti = {in("app", {"web"}, "zone")}};
  const Affinity repelsDb{.requiredAnti = {in("app", {"db"}, "zone")}};

  const EventObject none;
  const std::vector<HintCase> cases = {
      // Pod events.
      {"added pod matches the affinity", kPodAdd, affPod, none, bound("e", scan), kQueue},
      {"added pod does not match the affinity", kPodAdd, affPod, none, bound("e", other), kSkip},
      {"added pod in another namespace", kPodAdd, affPod, none, bound("e", scan, {}, "ns2"), kSkip},
      {"added pod matches one of two affinity terms", kPodAdd,
       makePod("p", "default", json::object(), "", twoAffinity), none, bound("e", scan), kSkip},
      {"added pod matches both affinity terms", kPodAdd,
       makePod("p", "default", json::object(), "", twoAffinity), none, bound("e", scanAndA),
       kQueue},
      {"added pod matches the anti-affinity only", kPodAdd, antiPod, none, bound("e", scan), kSkip},
      {"added pod in a namespace the namespaceSelector selects", kPodAdd,
       makePod("p", "default", json::object(), "", teamAffinity), none,
       bound("e", scan, {}, "subteam1.team1"), kQueue},
      {"added pod in a namespace the namespaceSelector does not select", kPodAdd,
       makePod("p", "default", json::object(), "", teamAffinity), none,
       bound("e", scan, {}, "subteam1.team2"), kSkip},
      {"label update makes a pod match the affinity", kPodLabel, affPod, bound("e", other),
       bound("e", scan), kQueue},
      {"label update of a pod that already matched the affinity", kPodLabel, affPod,
       bound("e", scan), bound("e", scanAndA), kSkip},
      {"label update ends an anti-affinity match", kPodLabel, antiPod, bound("e", scan),
       bound("e", other), kQueue},
      {"label update keeps the anti-affinity match", kPodLabel, antiPod, bound("e", scan),
       bound("e", scanAndA), kSkip},
      {"label update ends the match of one of two anti-affinity terms", kPodLabel,
       makePod("p", "default", json::object(), "", twoAnti), bound("e", scanAndA),
       bound("e", {{"aaa", "a"}}), kQueue},
      {"label update of an unscheduled pod", kOwnLabel, affPod, makePod("e", "default", other),
       makePod("e", "default", scan), kSkip},
      {"deleted pod matched the anti-affinity", kPodDelete, antiPod, bound("e", scan), none,
       kQueue},
      {"deleted pod matched one of two anti-affinity terms", kPodDelete,
       makePod("p", "default", json::object(), "", twoAnti), bound("e", {{"aaa", "a"}}), none,
       kQueue},
      {"deleted pod did not match the anti-affinity", kPodDelete, antiPod, bound("e", other), none,
       kSkip},
      {"deleted pod matched the affinity", kPodDelete, affPod, bound("e", scan), none, kSkip},
      {"deleted pod matched the affinity of a pod that matches it too", kPodDelete,
       makePod("p", "default", scan, "", affinity), bound("e", scan), none, kQueue},
      {"deleted pod's anti-affinity selected the pod", kPodDelete, web,
       bound("e", json::object(), repelsWeb), none, kQueue},
      {"deleted pod's anti-affinity selected other pods", kPodDelete, web,
       bound("e", json::object(), repelsDb), none, kSkip},
      {"deleted unscheduled pod", testutil::event(EventResource::kUnscheduledPod, kDelete), antiPod,
       makePod("e", "default", scan), none, kSkip},
      {"the pod's own label update", kOwnLabel, makePod("p", "default", scan, "", affinity),
       makePod("p", "default", json::object(), "", affinity),
       makePod("p", "default", scan, "", affinity), kQueue},
      {"the pod's own other update is not registered",
       testutil::event(EventResource::kUnscheduledPod, kUpdateOther), affPod, affPod, affPod,
       std::nullopt},
      {"pod scale-down is not registered",
       testutil::event(EventResource::kAssignedPod, kUpdatePodScaleDown), antiPod, bound("e", scan),
       bound("e", scan), std::nullopt},
      // Node events.
      {"node added with the affinity's topology key", kNodeAdd, affPod, none,
       makeNode("n", {{"zone", "z1"}}), kQueue},
      {"node added without the affinity's topology key", kNodeAdd, affPod, none,
       makeNode("n", {{"region", "r1"}}), kSkip},
      {"node gains the affinity's topology key", kNodeLabel, affPod, makeNode("n", {}),
       makeNode("n", {{"zone", "z1"}}), kQueue},
      {"node moves to another affinity domain", kNodeLabel, affPod, makeNode("n", {{"zone", "z1"}}),
       makeNode("n", {{"zone", "z2"}}), kQueue},
      {"node loses the affinity's topology key", kNodeLabel, affPod,
       makeNode("n", {{"zone", "z1"}}), makeNode("n", {}), kSkip},
      {"unrelated node label change", kNodeLabel, affPod, makeNode("n", {{"zone", "z1"}}),
       makeNode("n", {{"zone", "z1"}, {"disk", "ssd"}}), kSkip},
      {"node added, anti-affinity", kNodeAdd, antiPod, none, makeNode("n", {}), kQueue},
      {"node loses the anti-affinity's topology key", kNodeLabel, antiPod,
       makeNode("n", {{"zone", "z1"}}), makeNode("n", {}), kQueue},
      {"node moves to another anti-affinity domain", kNodeLabel, antiPod,
       makeNode("n", {{"zone", "z1"}}), makeNode("n", {{"zone", "z2"}}), kQueue},
      {"node gains the anti-affinity's topology key", kNodeLabel, antiPod, makeNode("n", {}),
       makeNode("n", {{"zone", "z1"}}), kSkip},
      {"node added, pod without terms", kNodeAdd, web, none, makeNode("n", {{"zone", "z1"}}),
       kSkip},
      {"node taint update is not registered",
       testutil::event(EventResource::kNode, kUpdateNodeTaint), affPod,
       makeNode("n", {{"zone", "z1"}}), makeNode("n", {{"zone", "z1"}}), std::nullopt},
      {"namespace update is not registered", testutil::event(EventResource::kNamespace, kUpdate),
       affPod, none, none, std::nullopt},
  };

  testutil::FakeHandle h;
  for (const auto& ns : ipatest::teamNamespaces()) h.mutableListers().add(ns);
  h.mutableListers().add(makeNamespace("default"));
  auto plugin = makePlugin(interPodAffinityFactory(), nullptr, h);
  const auto& ext = dynamic_cast<const InterPodAffinity&>(*plugin);
  for (const HintCase& c : cases) {
    EXPECT_EQ(hintName(hintFor(ext, c.event, *c.pod, c.oldObj, c.newObj)), hintName(c.want))
        << c.name;
  }
}

}  // namespace
}  // namespace ksched::plugins
