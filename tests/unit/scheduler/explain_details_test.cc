// The cause each Filter rejection names (the plugin's FilterExplainer, asked through
// Framework::explainRejection), one case per kind, through the three outputs: explainPod's JSON
// and table over the real in-tree plugins (so the plugin did reject the node), and the diagnosis
// annotation built from the same rejection and the cycle's CycleState. Each plugin's own tests
// check its explanation alone.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>

#include <ksched/api/features.h>
#include <ksched/api/storage.h>
#include <ksched/testing/fakes.h>

#include "cache/snapshot.h"
#include "config/profile.h"
#include "framework/framework.h"
#include "framework/parallelizer.h"
#include "plugins/registry.h"
#include "scheduler/explain.h"
#include "tests/support/framework_test_plugins.h"

namespace ksched::scheduler {
namespace {

using ksched::testing::NodeWrapper;
using ksched::testing::PodWrapper;
using ::testing::HasSubstr;
using json = nlohmann::json;

struct Env {
  frameworktest::NullRecorder events;
  framework::ThreadPoolParallelizer parallelizer{2};
  StaticClusterListers listers;
  std::unique_ptr<framework::Framework> fwk;
  cache::Snapshot snapshot;

  Env(std::vector<PodPtr> pods, std::vector<NodePtr> nodes,
      const std::function<void(StaticClusterListers&)>& fill, const features::Gates& gates = {})
      : snapshot(cache::Snapshot::fromForTest(std::move(pods), std::move(nodes), gates)) {
    fill(listers);
    framework::Services s;
    s.events = &events;
    s.parallelizer = &parallelizer;
    s.listers = &listers;
    s.features = gates;
    fwk = std::make_unique<framework::Framework>(config::defaultProfile(gates),
                                                 plugins::inTreeRegistry(), s);
    fwk->setSnapshot(&snapshot);
  }
  ~Env() { fwk->setSnapshot(nullptr); }
};

NodeWrapper node(std::string name) {
  return std::move(NodeWrapper(name)
                       .capacity({{"cpu", "4"}, {"pods", "10"}})
                       .label("kubernetes.io/hostname", name));
}

api::PodAffinityTerm term(std::string key, std::string value, std::string topologyKey) {
  api::PodAffinityTerm t;
  t.labelSelector.emplace().matchLabels[std::move(key)] = std::move(value);
  t.topologyKey = std::move(topologyKey);
  return t;
}

api::Pod withTerm(api::Pod p, bool anti, api::PodAffinityTerm t) {
  if (!p.spec.affinity) p.spec.affinity.emplace();
  auto& a = anti ? p.spec.affinity->podAntiAffinity : p.spec.affinity->podAffinity;
  if (!a) a.emplace();
  a->requiredDuringSchedulingIgnoredDuringExecution.push_back(std::move(t));
  return p;
}

api::Pod withHostPort(api::Pod p, int32_t port) {
  api::Container c;
  c.name = "c";
  c.ports.push_back({"http", 80, port, "", "TCP"});
  p.spec.containers.push_back(std::move(c));
  return p;
}

api::Pod withVolume(api::Pod p, api::Volume v) {
  p.spec.volumes.push_back(std::move(v));
  return p;
}

api::Volume gcePD(std::string name, std::string pd) {
  api::Volume v;
  v.name = std::move(name);
  v.gcePersistentDisk.emplace().pdName = std::move(pd);
  return v;
}

api::Volume claim(std::string name, std::string claimName) {
  api::Volume v;
  v.name = std::move(name);
  v.persistentVolumeClaim.emplace().claimName = std::move(claimName);
  return v;
}

api::PersistentVolumeClaim pvc(std::string name, std::string volume, std::string mode) {
  api::PersistentVolumeClaim c;
  c.metadata.namespace_ = "default";
  c.metadata.name = std::move(name);
  c.spec.volumeName = std::move(volume);
  c.spec.accessModes = {std::move(mode)};
  c.status.phase = "Bound";
  c.metadata.annotations[std::string(api::kAnnBindCompleted)] = "yes";
  return c;
}

api::PersistentVolume pv(std::string name, std::string mode, api::Labels labels = {}) {
  api::PersistentVolume v;
  v.metadata.name = std::move(name);
  v.metadata.labels = std::move(labels);
  v.spec.accessModes = {std::move(mode)};
  v.spec.claimRef.emplace();
  v.spec.claimRef->namespace_ = "default";
  v.spec.claimRef->name = "data";
  return v;
}

PodPtr ptr(api::Pod p) { return std::make_shared<const api::Pod>(std::move(p)); }

struct Case {
  std::string name;
  std::function<std::vector<PodPtr>()> pods;
  std::vector<NodePtr> nodes;
  std::function<api::Pod()> pod;
  std::string node;    // the node asked about
  std::string plugin;  // that rejects it
  std::string detail;  // exactly
  std::function<void(StaticClusterListers&)> listers = [](StaticClusterListers&) {};
};

std::vector<Case> cases() {
  auto web = [](std::string name) { return PodWrapper(name).uid(name).label("app", "web"); };
  return {
      {"TaintToleration",
       [] { return std::vector<PodPtr>{}; },
       {node("n1").taint("dedicated", "gpu", "NoSchedule").ptr()},
       [] { return PodWrapper("p").uid("p").obj(); },
       "n1",
       "TaintToleration",
       "taint dedicated=gpu:NoSchedule not tolerated"},
      {"TaintTolerationComparisonGateOff",
       [] { return std::vector<PodPtr>{}; },
       {node("n1").taint("sla", "999", "NoSchedule").ptr()},
       [] { return PodWrapper("p").uid("p").toleration("sla", "Gt", "950", "").obj(); },
       "n1",
       "TaintToleration",
       "taint sla=999:NoSchedule not tolerated (toleration operator Gt needs the "
       "TaintTolerationComparisonOperators feature gate)"},
      {"NodeDeclaredFeaturesOlderKubelet",
       [] { return std::vector<PodPtr>{}; },
       {node("n1").ptr()},
       [] {
         api::Pod p = PodWrapper("p").uid("p").obj();
         api::Container c;
         c.name = "main";
         c.restartPolicyRules.push_back({"RestartAllContainers"});
         p.spec.containers.push_back(std::move(c));
         return p;
       },
       "n1",
       "NodeDeclaredFeatures",
       "node does not declare RestartAllContainersOnContainerExits (the pod has a "
       "restartPolicyRules action RestartAllContainers); the node declares no features (a "
       "kubelet older than 1.35?)"},
      {"NodeDeclaredFeaturesMissingOne",
       [] { return std::vector<PodPtr>{}; },
       {[] {
         api::Node n = node("n1").obj();
         n.status.declaredFeatures = {"RestartAllContainersOnContainerExits"};
         return std::make_shared<const api::Node>(n);
       }()},
       [] {
         api::Pod p = PodWrapper("p").uid("p").obj();
         p.spec.hostNetwork = true;
         p.spec.hostUsers = false;
         return p;
       },
       "n1",
       "NodeDeclaredFeatures",
       "node does not declare UserNamespacesHostNetworkSupport (the pod has hostNetwork with "
       "hostUsers false)"},
      {"NodeSelectorOtherValue",
       [] { return std::vector<PodPtr>{}; },
       {node("n1").label("disktype", "hdd").ptr()},
       [] {
         return PodWrapper("p").uid("p").nodeSelector({{"disktype", "ssd"}}).obj();
       },
       "n1",
       "NodeAffinity",
       "nodeSelector disktype=ssd: node has disktype=hdd"},
      {"NodeSelectorLabelMissing",
       [] { return std::vector<PodPtr>{}; },
       {node("n1").ptr()},
       [] {
         return PodWrapper("p").uid("p").nodeSelector({{"disktype", "ssd"}}).obj();
       },
       "n1",
       "NodeAffinity",
       "nodeSelector disktype=ssd: label disktype missing"},
      {"NodeAffinityTerm",
       [] { return std::vector<PodPtr>{}; },
       {node("n1").label("zone", "c").ptr()},
       [] {
         return PodWrapper("p")
             .uid("p")
             .nodeAffinity("zone", api::SelectorOperator::kIn, {"a", "b"})
             .obj();
       },
       "n1",
       "NodeAffinity",
       "requiredDuringScheduling term 0: zone In [a,b]: node has zone=c"},
      {"NodePorts",
       [] {
         return std::vector<PodPtr>{
             ptr(withHostPort(PodWrapper("web-1").uid("web-1").nodeName("n1").obj(), 8080))};
       },
       {node("n1").ptr()},
       [] { return withHostPort(PodWrapper("p").uid("p").obj(), 8080); },
       "n1",
       "NodePorts",
       "hostPort 8080/TCP on 0.0.0.0 is in use by pod default/web-1"},
      {"PodTopologySpreadSkew",
       [web] {
         return std::vector<PodPtr>{
             web("a-1").nodeName("a1").ptr(), web("a-2").nodeName("a1").ptr(),
             web("a-3").nodeName("a1").ptr(), web("b-1").nodeName("b1").ptr()};
       },
       {node("a1").label("zone", "a").ptr(), node("b1").label("zone", "b").ptr()},
       [web] {
         api::LabelSelector s;
         s.matchLabels["app"] = "web";
         return web("p").spreadConstraint(1, "zone", api::kDoNotSchedule, s).obj();
       },
       "a1",
       "PodTopologySpread",
       "topologyKey zone, maxSkew 1: placing here makes skew 3 (a has 3 matching pods, min 1)"},
      {"PodTopologySpreadMissingLabel",
       [] { return std::vector<PodPtr>{}; },
       {node("a1").label("zone", "a").ptr(), node("x1").ptr()},
       [web] {
         api::LabelSelector s;
         s.matchLabels["app"] = "web";
         return web("p").spreadConstraint(1, "zone", api::kDoNotSchedule, s).obj();
       },
       "x1",
       "PodTopologySpread",
       "topologyKey zone: node has no label zone"},
      {"InterPodAntiAffinityOfThePod",
       [web] { return std::vector<PodPtr>{web("web-2").nodeName("n1").ptr()}; },
       {node("n1").ptr()},
       [] {
         return withTerm(PodWrapper("p").uid("p").obj(), true,
                         term("app", "web", "kubernetes.io/hostname"));
       },
       "n1",
       "InterPodAffinity",
       "anti-affinity term app=web on kubernetes.io/hostname: pod default/web-2 is on this node"},
      {"InterPodAntiAffinityOfAnExistingPod",
       [] {
         return std::vector<PodPtr>{
             ptr(withTerm(PodWrapper("db-0").uid("db-0").nodeName("n2").obj(), true,
                          term("app", "web", "zone")))};
       },
       {node("n1").label("zone", "a").ptr(), node("n2").label("zone", "a").ptr()},
       [web] { return web("p").obj(); },
       "n1",
       "InterPodAffinity",
       "pod default/db-0 on node n2 (zone=a) has anti-affinity term app=web on zone that "
       "selects this pod"},
      {"InterPodAffinityNoMatchInDomain",
       [] {
         return std::vector<PodPtr>{
             PodWrapper("db-0").uid("db-0").label("app", "db").nodeName("n2").ptr()};
       },
       {node("n1").label("zone", "c").ptr(), node("n2").label("zone", "a").ptr()},
       [] { return withTerm(PodWrapper("p").uid("p").obj(), false, term("app", "db", "zone")); },
       "n1",
       "InterPodAffinity",
       "affinity term app=db on zone: no matching pod in zone=c"},
      {"VolumeRestrictionsDisk",
       [] {
         return std::vector<PodPtr>{ptr(withVolume(
             PodWrapper("db-0").uid("db-0").nodeName("n1").obj(), gcePD("disk", "pd-1")))};
       },
       {node("n1").ptr()},
       [] { return withVolume(PodWrapper("p").uid("p").obj(), gcePD("data", "pd-1")); },
       "n1",
       "VolumeRestrictions",
       "volume data (GCE PD pd-1) is in use by pod default/db-0"},
      {"VolumeRestrictionsReadWriteOncePod",
       [] {
         return std::vector<PodPtr>{ptr(withVolume(
             PodWrapper("db-0").uid("db-0").nodeName("n2").obj(), claim("data", "data")))};
       },
       {node("n1").ptr(), node("n2").ptr()},
       [] { return withVolume(PodWrapper("p").uid("p").obj(), claim("data", "data")); },
       "n1",
       "VolumeRestrictions",
       "PVC default/data (ReadWriteOncePod) is in use by pod default/db-0 on node n2",
       [](StaticClusterListers& l) {
         l.add(pvc("data", "pv-0", std::string(api::kReadWriteOncePod)));
         l.add(pv("pv-0", std::string(api::kReadWriteOncePod)));
       }},
      {"VolumeZone",
       [] { return std::vector<PodPtr>{}; },
       {node("n1").label("topology.kubernetes.io/zone", "c").ptr()},
       [] { return withVolume(PodWrapper("p").uid("p").obj(), claim("data", "data")); },
       "n1",
       "VolumeZone",
       "volume data: PV pv-1 is in topology.kubernetes.io/zone=a, node has "
       "topology.kubernetes.io/zone=c",
       [](StaticClusterListers& l) {
         l.add(pvc("data", "pv-1", "ReadWriteOnce"));
         l.add(pv("pv-1", "ReadWriteOnce", {{"topology.kubernetes.io/zone", "a"}}));
       }},
      {"NodeUnschedulable",
       [] { return std::vector<PodPtr>{}; },
       {node("n1").unschedulable().ptr()},
       [] { return PodWrapper("p").uid("p").obj(); },
       "n1",
       "NodeUnschedulable",
       "node is cordoned (spec.unschedulable)"},
      {"NodeName",
       [] { return std::vector<PodPtr>{}; },
       {node("n1").ptr()},
       [] { return PodWrapper("p").uid("p").nodeName("other").obj(); },
       "n1",
       "NodeName",
       "pod asks for node other"},
  };
}

class RejectionDetails : public ::testing::TestWithParam<Case> {};

TEST_P(RejectionDetails, NamedInTheJsonTheTableAndTheAnnotation) {
  const Case& c = GetParam();
  Env env(c.pods(), c.nodes, c.listers);
  const api::Pod pod = c.pod();
  const Explanation e = explainPod(*env.fwk, pod, env.snapshot, 0, c.node);

  // JSON: the plugin rejected the node, with the detail next to its reasons.
  const json j = json::parse(toJson(e).dump());
  ASSERT_EQ(j["filtered"].size(), 1u) << toTable(e);
  const json* rejection = nullptr;
  for (const auto& r : j["filtered"][0]["rejections"]) {
    if (r["plugin"] == c.plugin) rejection = &r;
  }
  ASSERT_NE(rejection, nullptr) << c.plugin << " did not reject " << c.node << ":\n" << toTable(e);
  EXPECT_FALSE((*rejection)["reasons"].empty()) << "upstream's reasons stay";
  EXPECT_EQ((*rejection)["details"], json::array({c.detail}));

  // Table: under the reason, for the node.
  EXPECT_THAT(toTable(e), HasSubstr("\n    " + c.node + ": " + c.detail + "\n"));

  // Annotation: the cycle's first rejection of the node, as a Diagnosis, with the CycleState the
  // cycle's PreFilter filled.
  CycleState state;
  PreFilterResult pre;
  (void)env.fwk->runPreFilterPlugins(state, pod, pre);
  framework::Diagnosis d;
  std::string reason;
  for (const auto& r : e.filtered[0].rejections) {
    if (r.plugin != c.plugin) continue;
    reason = r.reasons.front();
    d.nodeToStatus.emplace(c.node, Status::unresolvable(reason).withPlugin(r.plugin));
  }
  const json a = json::parse(diagnosisAnnotation(*env.fwk, state, d, 1, pod, env.snapshot));
  ASSERT_EQ(a["reasons"].size(), 1u);
  EXPECT_EQ(a["reasons"][0]["reason"], reason);
  EXPECT_EQ(a["reasons"][0]["details"], json({{c.node, c.detail}}));
}

INSTANTIATE_TEST_SUITE_P(Explain, RejectionDetails, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return info.param.name; });

// With the gate on, a Gt toleration against a taint whose value is not an integer.
TEST(ExplainComparisonOperators, NonIntegerTaintValueIsNamed) {
  features::Gates on;
  on.force(features::Feature::kTaintTolerationComparisonOperators, true);
  Env env(
      {}, {node("n1").taint("sla", "high", "NoSchedule").ptr()}, [](StaticClusterListers&) {}, on);
  const api::Pod pod = PodWrapper("p").uid("p").toleration("sla", "Gt", "950", "").obj();
  const Explanation e = explainPod(*env.fwk, pod, env.snapshot, 0, "n1");
  EXPECT_THAT(toTable(e), HasSubstr("n1: taint sla=high:NoSchedule not tolerated (toleration sla "
                                    "Gt 950 compares integers; the taint's value is not one)"));
  // A value that is an integer and above the threshold is tolerated.
  Env ok(
      {}, {node("n1").taint("sla", "999", "NoSchedule").ptr()}, [](StaticClusterListers&) {}, on);
  const Explanation fits = explainPod(*ok.fwk, pod, ok.snapshot, 0, "n1");
  EXPECT_TRUE(fits.filtered.empty()) << toTable(fits);
  ASSERT_EQ(fits.feasible.size(), 1u) << toTable(fits);
  EXPECT_EQ(fits.feasible[0].node, "n1");
}

TEST(ExplainDiagnosis, DetailsGoBeforeTheLastExampleAndAreCut) {
  std::vector<NodePtr> nodes;
  framework::Diagnosis d;
  for (int i = 0; i < 6; ++i) {
    const std::string name = "n" + std::to_string(i);
    nodes.push_back(node(name).taint(std::string(400, 'k'), "v", "NoSchedule").ptr());
    d.nodeToStatus.emplace(
        name,
        Status::unresolvable("node(s) had untolerated taint(s)").withPlugin("TaintToleration"));
  }
  Env env({}, std::move(nodes), [](StaticClusterListers&) {});
  const cache::Snapshot& snap = env.snapshot;
  const CycleState state;
  auto pod = PodWrapper("p").obj();

  const json full = json::parse(diagnosisAnnotation(*env.fwk, state, d, 6, pod, snap));
  const json& details = full["reasons"][0]["details"];
  ASSERT_EQ(details.size(), 5u) << "the five examples only";
  const std::string cut = details["n0"];
  EXPECT_EQ(cut.size(), 320u);
  EXPECT_EQ(cut.substr(0, 10), "taint kkkk");
  EXPECT_EQ(cut.substr(317), "...");

  const std::string small = diagnosisAnnotation(*env.fwk, state, d, 6, pod, snap, 520);
  EXPECT_LE(small.size(), 520u);
  const json k = json::parse(small);
  EXPECT_EQ(k["reasons"][0]["examples"], json({"n0"}));
  EXPECT_EQ(k["reasons"][0]["details"].size(), 1u) << "the kept example keeps its detail";

  const std::string tiny = diagnosisAnnotation(*env.fwk, state, d, 6, pod, snap, 150);
  const json t = json::parse(tiny);
  EXPECT_FALSE(t["reasons"][0].contains("details"));
  EXPECT_EQ(t["reasons"][0]["count"], 6);
}

}  // namespace
}  // namespace ksched::scheduler
