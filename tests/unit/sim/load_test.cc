#include "sim/load.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include <ksched/api/decode.h>
#include <ksched/api/pod_group.h>

#include "sim/memory_cluster.h"
#include "tests/support/source_dir.h"

namespace ksched::sim {
namespace {

// Skipped entries as one string each, so a failure shows them whole.
std::string str(const Skipped& s) {
  return "{" + s.source + " | " + s.object + " | " + s.field + " | " + s.message + "}";
}

std::vector<std::string> strs(const std::vector<Skipped>& list) {
  std::vector<std::string> out;
  for (const Skipped& s : list) out.push_back(str(s));
  return out;
}

std::string testdata(const std::string& name) {
  return (ksched::testing::repoRoot() / "tests/unit/sim/testdata" / name).string();
}

Cluster load(std::string_view text, LoadAs as = LoadAs::kCluster) {
  Cluster c;
  loadText(text, "f.yaml", as, c);
  return c;
}

std::vector<std::string> podNames(const Cluster& c) {
  std::vector<std::string> out;
  for (const PodPtr& p : c.pods) out.push_back(p->metadata.name);
  return out;
}

constexpr std::string_view kListYaml = R"(apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: n1
  status:
    allocatable:
      cpu: 4
      memory: 1Gi
- apiVersion: v1
  kind: Pod
  metadata:
    name: p1
    namespace: ns
  spec:
    nodeName: n1
    containers:
    - name: c
      resources:
        requests:
          cpu: 0.5
          memory: 100Mi
)";

TEST(LoadTest, YamlList) {
  const Cluster c = load(kListYaml);
  EXPECT_TRUE(c.skipped.empty());
  ASSERT_EQ(c.nodes.size(), 1u);
  EXPECT_EQ(c.nodes[0]->metadata.name, "n1");
  EXPECT_EQ(c.nodes[0]->status.allocatable.at("cpu").milliValue(), 4000);
  EXPECT_EQ(c.nodes[0]->status.allocatable.at("memory").value(), int64_t{1} << 30);
  ASSERT_EQ(c.pods.size(), 1u);
  const api::Pod& p = *c.pods[0];
  EXPECT_EQ(p.metadata.key(), "ns/p1");
  EXPECT_EQ(p.metadata.uid, "sim-ns-p1");
  EXPECT_EQ(p.spec.nodeName, "n1");
  EXPECT_EQ(p.spec.containers[0].resources.requests.at("cpu").milliValue(), 500);
}

TEST(LoadTest, MultiDocumentYaml) {
  const Cluster c = load(R"(---
# nodes
apiVersion: v1
kind: Node
metadata: {name: n1}
---
apiVersion: v1
kind: Pod
metadata: {name: p1}
---
---
apiVersion: v1
kind: Namespace
metadata: {name: team}
...
)");
  EXPECT_TRUE(c.skipped.empty());
  ASSERT_EQ(c.nodes.size(), 1u);
  ASSERT_EQ(c.pods.size(), 1u);
  EXPECT_EQ(c.pods[0]->metadata.key(), "default/p1");  // namespace defaulted
  ASSERT_EQ(c.namespaces.size(), 1u);
}

TEST(LoadTest, JsonList) {
  const Cluster c = load(R"({"apiVersion": "v1", "kind": "NodeList", "items": [
    {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a",
      "managedFields": [{"manager": "kubelet"}]}},
    {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "b"}}]})");
  EXPECT_TRUE(c.skipped.empty());
  ASSERT_EQ(c.nodes.size(), 2u);
  EXPECT_EQ(c.nodes[1]->metadata.name, "b");
}

TEST(LoadTest, JsonSingleObject) {
  const Cluster c = load(R"({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}})");
  ASSERT_EQ(c.pods.size(), 1u);
}

TEST(LoadTest, EveryKindDispatched) {
  const Cluster c = load(R"(apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: n}}
- {apiVersion: v1, kind: Pod, metadata: {name: p, namespace: a}}
- {apiVersion: v1, kind: Namespace, metadata: {name: a}}
- {apiVersion: v1, kind: Service, metadata: {name: s, namespace: a}, spec: {selector: {x: y}}}
- {apiVersion: v1, kind: ReplicationController, metadata: {name: rc, namespace: a}}
- {apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: pvc, namespace: a}}
- {apiVersion: v1, kind: PersistentVolume, metadata: {name: pv}}
- {apiVersion: apps/v1, kind: ReplicaSet, metadata: {name: rs, namespace: a}}
- {apiVersion: apps/v1, kind: StatefulSet, metadata: {name: sts, namespace: a}}
- {apiVersion: apps/v1, kind: Deployment, metadata: {name: d, namespace: a}}
- {apiVersion: batch/v1, kind: Job, metadata: {name: j, namespace: a}}
- {apiVersion: policy/v1, kind: PodDisruptionBudget, metadata: {name: pdb1, namespace: a}}
- {apiVersion: policy/v1beta1, kind: PodDisruptionBudget, metadata: {name: pdb2, namespace: a}}
- {apiVersion: storage.k8s.io/v1, kind: StorageClass, metadata: {name: sc}}
- {apiVersion: storage.k8s.io/v1, kind: CSINode, metadata: {name: n}}
- {apiVersion: scheduling.x-k8s.io/v1alpha1, kind: PodGroup, metadata: {name: pg, namespace: a}}
- {apiVersion: v2, kind: Pod, metadata: {name: other}}
)");
  EXPECT_TRUE(c.skipped.empty());
  EXPECT_EQ(c.nodes.size(), 1u);
  EXPECT_EQ(c.pods.size(), 1u);
  EXPECT_EQ(c.namespaces.size(), 1u);
  ASSERT_EQ(c.services.size(), 1u);
  EXPECT_EQ(c.services[0].spec.selector->at("x"), "y");
  EXPECT_EQ(c.replicationControllers.size(), 1u);
  EXPECT_EQ(c.persistentVolumeClaims.size(), 1u);
  EXPECT_EQ(c.persistentVolumes.size(), 1u);
  EXPECT_EQ(c.replicaSets.size(), 1u);
  EXPECT_EQ(c.statefulSets.size(), 1u);
  EXPECT_EQ(c.podDisruptionBudgets.size(), 2u);
  EXPECT_EQ(c.storageClasses.size(), 1u);
  EXPECT_EQ(c.csiNodes.size(), 1u);
  ASSERT_EQ(c.others.size(), 4u);
  EXPECT_EQ(c.others.at("apps/v1/Deployment").size(), 1u);
  EXPECT_EQ(c.others.at("batch/v1/Job").size(), 1u);
  ASSERT_EQ(c.others.at("scheduling.x-k8s.io/v1alpha1/PodGroup").size(), 1u);
  const auto& pg = *c.others.at("scheduling.x-k8s.io/v1alpha1/PodGroup")[0];
  EXPECT_EQ(pg.metadata.key(), "a/pg");
  EXPECT_EQ(pg.object.at("kind"), "PodGroup");
  EXPECT_EQ(c.others.at("v2/Pod").size(), 1u);
  // Cluster-scoped kinds keep no namespace; a missing uid is made up, deterministically.
  EXPECT_EQ(c.persistentVolumes[0].metadata.key(), "pv");
  EXPECT_EQ(c.replicaSets[0].metadata.uid, "sim-ReplicaSet-a-rs");
}

TEST(LoadTest, WorkPodsArePending) {
  const Cluster c = load(R"(apiVersion: v1
kind: Pod
metadata: {name: p, namespace: a, uid: given}
spec: {nodeName: n1, containers: [{name: c}]}
status: {phase: Running, nominatedNodeName: n2}
)",
                         LoadAs::kWork);
  ASSERT_EQ(c.pods.size(), 1u);
  EXPECT_EQ(c.pods[0]->spec.nodeName, "");
  EXPECT_EQ(c.pods[0]->status.nominatedNodeName, "");
  EXPECT_EQ(c.pods[0]->status.phase, "Pending");
  EXPECT_EQ(c.pods[0]->metadata.uid, "given");
}

TEST(LoadTest, DeploymentExpands) {
  const Cluster c = load(R"(apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop, uid: d-uid}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata:
      labels: {app: web}
      annotations: {note: x}
    spec:
      containers: [{name: c, resources: {requests: {cpu: 100m}}}]
)",
                         LoadAs::kWork);
  EXPECT_TRUE(c.skipped.empty());
  EXPECT_EQ(podNames(c), (std::vector<std::string>{"web-sim-0", "web-sim-1", "web-sim-2"}));
  const api::Pod& p = *c.pods[1];
  EXPECT_EQ(p.metadata.namespace_, "shop");
  EXPECT_EQ(p.metadata.uid, "sim-shop-web-sim-1");
  EXPECT_EQ(p.metadata.labels, (api::Labels{{"app", "web"}, {"pod-template-hash", "sim"}}));
  EXPECT_EQ(p.metadata.annotations.at("note"), "x");
  EXPECT_EQ(p.spec.containers[0].resources.requests.at("cpu").milliValue(), 100);
  ASSERT_EQ(p.metadata.ownerReferences.size(), 1u);
  const api::OwnerReference& owner = p.metadata.ownerReferences[0];
  EXPECT_EQ(owner.kind, "ReplicaSet");
  EXPECT_EQ(owner.apiVersion, "apps/v1");
  EXPECT_EQ(owner.name, "web-sim");
  EXPECT_TRUE(owner.controller);

  ASSERT_EQ(c.replicaSets.size(), 1u);
  const api::ReplicaSet& rs = c.replicaSets[0];
  EXPECT_EQ(rs.metadata.key(), "shop/web-sim");
  EXPECT_EQ(rs.metadata.uid, owner.uid);
  EXPECT_EQ(rs.spec.replicas, 3);
  EXPECT_EQ(rs.spec.selector->matchLabels,
            (api::Labels{{"app", "web"}, {"pod-template-hash", "sim"}}));
  ASSERT_EQ(rs.metadata.ownerReferences.size(), 1u);
  EXPECT_EQ(rs.metadata.ownerReferences[0].kind, "Deployment");
  EXPECT_EQ(rs.metadata.ownerReferences[0].uid, "d-uid");
}

TEST(LoadTest, DeploymentDefaultsToOneReplica) {
  const Cluster c = load(R"(apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec: {selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}}}
)",
                         LoadAs::kWork);
  EXPECT_EQ(podNames(c), std::vector<std::string>{"d-sim-0"});
  EXPECT_EQ(c.pods[0]->metadata.namespace_, "default");
}

TEST(LoadTest, StatefulSetExpands) {
  const Cluster c = load(R"(apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: data}
spec:
  replicas: 2
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: c}]}
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      storageClassName: fast
      resources: {requests: {storage: 10Gi}}
)",
                         LoadAs::kWork);
  EXPECT_TRUE(c.skipped.empty());
  EXPECT_EQ(podNames(c), (std::vector<std::string>{"db-0", "db-1"}));
  const api::Pod& p = *c.pods[1];
  EXPECT_EQ(p.metadata.labels.at("statefulset.kubernetes.io/pod-name"), "db-1");
  EXPECT_EQ(p.metadata.labels.at("apps.kubernetes.io/pod-index"), "1");
  EXPECT_EQ(p.metadata.labels.at("app"), "db");
  EXPECT_EQ(p.metadata.ownerReferences.at(0).kind, "StatefulSet");
  EXPECT_EQ(p.metadata.ownerReferences.at(0).uid, "sim-StatefulSet-data-db");
  ASSERT_EQ(p.spec.volumes.size(), 1u);
  EXPECT_EQ(p.spec.volumes[0].persistentVolumeClaim->claimName, "data-db-1");
  ASSERT_EQ(c.persistentVolumeClaims.size(), 2u);
  EXPECT_EQ(c.persistentVolumeClaims[1].metadata.key(), "data/data-db-1");
  EXPECT_EQ(c.persistentVolumeClaims[1].spec.storageClassName, "fast");
  EXPECT_EQ(c.persistentVolumeClaims[1].status.phase, "Pending");
  ASSERT_EQ(c.statefulSets.size(), 1u);
  EXPECT_EQ(c.statefulSets[0].metadata.key(), "data/db");
}

TEST(LoadTest, JobExpandsParallelismCappedByCompletions) {
  const Cluster c = load(R"(apiVersion: batch/v1
kind: Job
metadata: {name: train, uid: j1}
spec:
  parallelism: 4
  completions: 2
  completionMode: Indexed
  template: {spec: {containers: [{name: c}]}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: once}
spec: {template: {spec: {containers: [{name: c}]}}}
)",
                         LoadAs::kWork);
  EXPECT_TRUE(c.skipped.empty());
  EXPECT_EQ(podNames(c), (std::vector<std::string>{"train-0", "train-1", "once-0"}));
  const api::Pod& p = *c.pods[1];
  EXPECT_EQ(p.metadata.labels.at("batch.kubernetes.io/job-name"), "train");
  EXPECT_EQ(p.metadata.labels.at("batch.kubernetes.io/controller-uid"), "j1");
  EXPECT_EQ(p.metadata.labels.at("batch.kubernetes.io/job-completion-index"), "1");
  EXPECT_EQ(p.metadata.ownerReferences.at(0).kind, "Job");
  EXPECT_EQ(p.metadata.ownerReferences.at(0).apiVersion, "batch/v1");
}

TEST(LoadTest, ReplicaSetAndReplicationControllerExpand) {
  const Cluster c = load(R"(apiVersion: v1
kind: List
items:
- apiVersion: apps/v1
  kind: ReplicaSet
  metadata: {name: rs}
  spec: {replicas: 2, selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}}}
- apiVersion: v1
  kind: ReplicationController
  metadata: {name: rc}
  spec: {replicas: 0, template: {metadata: {labels: {x: y}}}}
)",
                         LoadAs::kWork);
  EXPECT_TRUE(c.skipped.empty());
  EXPECT_EQ(podNames(c), (std::vector<std::string>{"rs-0", "rs-1"}));
  ASSERT_EQ(c.replicaSets.size(), 1u);
  ASSERT_EQ(c.replicationControllers.size(), 1u);
  EXPECT_EQ(c.replicationControllers[0].spec.selector, (api::Labels{{"x", "y"}}));
}

TEST(LoadTest, BadQuantityNamesObjectAndField) {
  const Cluster c = load(R"(apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata: {name: web-1}
  spec:
    containers:
    - name: a
      resources: {requests: {cpu: 1}}
    - name: b
      resources: {requests: {cpu: lots}}
- apiVersion: v1
  kind: Pod
  metadata: {name: web-2}
)");
  ASSERT_EQ(c.skipped.size(), 1u);
  EXPECT_EQ(str(c.skipped[0]),
            str(Skipped{"f.yaml: items[0]", "Pod default/web-1",
                        "spec.containers[1].resources.requests.cpu",
                        "quantity \"lots\": expected an optionally signed decimal number"}));
  EXPECT_EQ(podNames(c), std::vector<std::string>{"web-2"});
}

TEST(LoadTest, BadTemplateNamesTheControllerField) {
  const Cluster c = load(R"(apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  template:
    spec:
      containers: [{name: a, resources: {limits: {memory: 1x}}}]
)",
                         LoadAs::kWork);
  ASSERT_EQ(c.skipped.size(), 1u);
  EXPECT_EQ(str(c.skipped[0]),
            str(Skipped{"f.yaml", "Deployment default/web",
                        "spec.template.spec.containers[0].resources.limits.memory",
                        "quantity \"1x\": unknown suffix \"x\""}));
  EXPECT_TRUE(c.pods.empty());
  EXPECT_TRUE(c.replicaSets.empty());
}

TEST(LoadTest, WrongTypeAndCountErrors) {
  const Cluster c = load(R"(apiVersion: v1
kind: Pod
metadata: {name: p}
spec: {priority: high}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec: {replicas: -1}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: big}
spec: {replicas: 2000000000}
)",
                         LoadAs::kWork);
  ASSERT_EQ(c.skipped.size(), 3u);
  EXPECT_EQ(str(c.skipped[0]), str(Skipped{"f.yaml: document 1", "Pod default/p", "spec.priority",
                                           "expected an integer in range, got string"}));
  EXPECT_EQ(str(c.skipped[1]), str(Skipped{"f.yaml: document 2", "Deployment default/d",
                                           "spec.replicas", "-1: must be 0 or more"}));
  EXPECT_EQ(str(c.skipped[2]),
            str(Skipped{"f.yaml: document 3", "Deployment default/big", "spec.replicas",
                        "2000000000 pods: more than simulate expands from one object (100000)"}));
}

TEST(LoadTest, NotYaml) {
  const Cluster c = load("apiVersion: v1\nkind: Node\nmetadata: {name: n}\n---\nkey: [unclosed\n");
  ASSERT_EQ(c.skipped.size(), 1u);
  EXPECT_EQ(c.skipped[0].source, "f.yaml: document 2");
  EXPECT_EQ(c.skipped[0].object, "");
  EXPECT_EQ(c.skipped[0].field, "");
  // The line is the file's, not the document's.
  EXPECT_TRUE(c.skipped[0].message.starts_with("invalid YAML at line 6")) << c.skipped[0].message;
  EXPECT_EQ(c.nodes.size(), 1u);
}

TEST(LoadTest, ScalarDocumentIsNotAnObject) {
  const Cluster c = load("just some words\n");
  ASSERT_EQ(c.skipped.size(), 1u);
  EXPECT_EQ(str(c.skipped[0]),
            str(Skipped{"f.yaml", "", "", "not a Kubernetes object: the document is a string"}));
}

TEST(LoadTest, TruncatedJson) {
  const Cluster c = load(R"({"apiVersion": "v1", "kind": "List", "items": [
    {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a"}},
    {"apiVersion": "v1", "kind": "No)");
  ASSERT_EQ(c.skipped.size(), 1u);
  EXPECT_EQ(c.skipped[0].source, "f.yaml");
  EXPECT_TRUE(c.skipped[0].message.starts_with(
      "invalid JSON: parse error at line 3, column 37: syntax error"))
      << c.skipped[0].message;
  EXPECT_TRUE(c.nodes.empty());
}

TEST(LoadTest, TruncatedYaml) {
  const Cluster c = load(
      "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n"
      "  metadata:\n    name: a\n- apiVersion: v1\n  kind: \"Nod");
  ASSERT_EQ(c.skipped.size(), 1u);
  EXPECT_EQ(c.skipped[0].source, "f.yaml");
  EXPECT_TRUE(c.skipped[0].message.starts_with("invalid YAML at line 9")) << c.skipped[0].message;
}

TEST(LoadTest, MissingKindApiVersionOrName) {
  const Cluster c = load(R"(apiVersion: v1
kind: List
items:
- {kind: Pod, metadata: {name: a}}
- {apiVersion: v1, metadata: {name: a}}
- {apiVersion: v1, kind: Pod, metadata: {namespace: x}}
- {apiVersion: v1, kind: Pod}
- {apiVersion: v1, kind: 5, metadata: {name: a}}
- 42
)");
  const std::vector<Skipped> want = {
      {"f.yaml: items[0]", "", "apiVersion", "missing"},
      {"f.yaml: items[1]", "", "kind", "missing"},
      {"f.yaml: items[2]", "", "metadata.name", "missing: a Pod needs a name"},
      {"f.yaml: items[3]", "", "metadata", "missing: a Pod needs metadata.name"},
      {"f.yaml: items[4]", "", "kind", "expected a string, got number"},
      {"f.yaml: items[5]", "", "", "not a Kubernetes object: the document is a number"},
  };
  EXPECT_EQ(strs(c.skipped), strs(want));
}

TEST(LoadTest, UnknownKindGoesToOthers) {
  const Cluster c = load(R"(apiVersion: example.com/v1
kind: Widget
metadata: {name: w, namespace: a, labels: {k: v}}
spec: {size: 3}
)");
  EXPECT_TRUE(c.skipped.empty());
  const auto& w = *c.others.at("example.com/v1/Widget").at(0);
  EXPECT_EQ(w.metadata.labels.at("k"), "v");
  EXPECT_EQ(w.object.at("spec").at("size"), 3);
}

TEST(LoadTest, CheckClusterPodOnUnknownNodeAndDuplicates) {
  Cluster c = load(R"(apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: n1}}
- {apiVersion: v1, kind: Pod, metadata: {name: x}, spec: {nodeName: n9}}
- {apiVersion: v1, kind: Pod, metadata: {name: dup, labels: {v: "1"}}}
- {apiVersion: v1, kind: Pod, metadata: {name: ok}, spec: {nodeName: n1}}
- {apiVersion: v1, kind: Pod, metadata: {name: dup, labels: {v: "2"}}}
- {apiVersion: v1, kind: Pod, metadata: {name: done}, spec: {nodeName: n1}, status: {phase: Failed}}
)");
  checkCluster(c);
  const std::vector<Skipped> want = {
      {"", "Pod default/dup", "", "read 2 times: the last one read is kept"},
      {"", "Pod default/x", "spec.nodeName", "node \"n9\" is not in the cluster"},
  };
  EXPECT_EQ(strs(c.skipped), strs(want));
  EXPECT_EQ(podNames(c), (std::vector<std::string>{"ok", "dup"}));
  EXPECT_EQ(c.pods[1]->metadata.labels.at("v"), "2");
}

TEST(LoadTest, KubectlDump) {
  Cluster c;
  loadFile(testdata("kubectl-get-all.yaml"), LoadAs::kCluster, c);
  checkCluster(c);
  EXPECT_TRUE(c.skipped.empty()) << c.skipped[0].message;
  ASSERT_EQ(c.nodes.size(), 1u);
  const api::Node& n = *c.nodes[0];
  EXPECT_EQ(n.metadata.labels.at("topology.kubernetes.io/zone"), "zone-a");
  EXPECT_EQ(n.status.allocatable.at("memory").value(), 16302080LL * 1024);
  EXPECT_EQ(n.status.capacity.at("cpu").milliValue(), 8000);
  ASSERT_EQ(n.spec.taints.size(), 1u);
  EXPECT_EQ(n.spec.taints[0].key, "dedicated");
  // The Succeeded pod is dropped; the bound one keeps its node, the pending one has none.
  ASSERT_EQ(podNames(c), (std::vector<std::string>{"web-5d8c7b9f6d-x7k2p", "pending-1"}));
  EXPECT_EQ(c.pods[0]->spec.nodeName, "kind-worker");
  EXPECT_EQ(c.pods[0]->metadata.uid, "1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f");
  EXPECT_EQ(c.pods[0]->spec.containers[0].resources.requests.at("cpu").milliValue(), 250);
  EXPECT_EQ(c.pods[1]->spec.nodeName, "");
  EXPECT_EQ(c.pods[1]->spec.containers[0].resources.requests.at("nvidia.com/gpu").value(), 1);
  EXPECT_EQ(c.pods[1]->metadata.uid, "sim-shop-pending-1");
  EXPECT_EQ(c.replicaSets.size(), 1u);
  EXPECT_EQ(c.podDisruptionBudgets.size(), 1u);
  EXPECT_EQ(c.namespaces.size(), 1u);
  EXPECT_EQ(c.services.size(), 1u);
  EXPECT_EQ(c.storageClasses.size(), 1u);
  EXPECT_EQ(c.others.at("apps/v1/Deployment").size(), 1u);
  EXPECT_EQ(c.others.at("scheduling.x-k8s.io/v1alpha1/PodGroup").size(), 1u);
}

// The Workload API's kinds: checked by their decoders, kept in their namespace (defaulted as
// for typed kinds) and served to the watches of their collections, every version watched.
TEST(LoadTest, WorkloadApiKindsAreCheckedAndServedToTheirWatches) {
  const Cluster c = load(R"(apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: train}
spec:
  workloadRef: {workloadName: train, templateName: workers}
  schedulingPolicy: {gang: {minCount: 8}}
  schedulingConstraints: {topology: [{key: topology.kubernetes.io/rack}]}
  disruptionMode: {all: {}}
---
apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {name: web, namespace: a, uid: u-web}
spec: {schedulingPolicy: {basic: {}}, disruptionMode: PodGroup}
---
apiVersion: scheduling.k8s.io/v1alpha3
kind: CompositePodGroup
metadata: {name: root}
spec: {schedulingPolicy: {gang: {minGroupCount: 2}}}
---
apiVersion: scheduling.k8s.io/v1beta1
kind: Workload
metadata: {name: train}
spec: {podGroupTemplates: [{name: workers, schedulingPolicy: {gang: {minCount: 8}}}]}
---
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: bad}
spec: {schedulingPolicy: {basic: {}, gang: {minCount: 2}}}
---
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: zero}
spec: {schedulingPolicy: {gang: {minCount: 0}}}
)");
  const std::vector<Skipped> want = {
      {"f.yaml: document 5", "PodGroup default/bad", "spec.schedulingPolicy",
       "exactly one of basic, gang must be set, got both"},
      {"f.yaml: document 6", "PodGroup default/zero", "spec.schedulingPolicy.gang.minCount",
       "must be at least 1, got 0"},
  };
  EXPECT_EQ(strs(c.skipped), strs(want));
  ASSERT_EQ(c.others.at("scheduling.k8s.io/v1beta1/PodGroup").size(), 1u);
  const UnstructuredObject& train = *c.others.at("scheduling.k8s.io/v1beta1/PodGroup")[0];
  EXPECT_EQ(train.metadata.key(), "default/train");
  EXPECT_EQ(train.metadata.uid, "sim-PodGroup-default-train");
  // The object as a plugin decodes it says the same.
  const auto pg = api::decode<api::PodGroup>(train.object);
  EXPECT_EQ(pg.metadata.key(), "default/train");
  EXPECT_EQ(pg.spec.schedulingPolicy.minCount(), 8);
  EXPECT_EQ(pg.spec.disruptionMode, api::DisruptionMode::kAll);
  EXPECT_EQ(c.others.at("scheduling.k8s.io/v1alpha2/PodGroup").at(0)->metadata.uid, "u-web");

  uint64_t recreated = 0;
  StaticClusterListers listers;
  MemoryCluster cluster(c, false, recreated, {}, listers);
  auto listed = [&](std::string path, std::vector<std::string> alternatives) {
    std::vector<std::string> keys;
    auto store = cluster.watch(ObjectWatch{"X", std::move(path), "", std::move(alternatives)}, {});
    for (const auto& o : store->list()) keys.push_back(o->metadata.key());
    return keys;
  };
  EXPECT_EQ(listed(std::string(api::kPodGroupsV1beta1), {std::string(api::kPodGroupsV1alpha2)}),
            (std::vector<std::string>{"default/train", "a/web"}));
  EXPECT_EQ(listed("/apis/scheduling.k8s.io/v1alpha2/namespaces/a/podgroups", {}),
            std::vector<std::string>{"a/web"});
  EXPECT_EQ(listed(std::string(api::kCompositePodGroupsV1alpha3), {}),
            std::vector<std::string>{"default/root"});
  EXPECT_EQ(listed(std::string(api::kWorkloadsV1beta1), {}),
            std::vector<std::string>{"default/train"});
}

TEST(LoadTest, MissingFileThrows) {
  Cluster c;
  EXPECT_THROW(loadFile("/nonexistent/x.yaml", LoadAs::kCluster, c), std::runtime_error);
}

}  // namespace
}  // namespace ksched::sim
