// api::decodePodFast, decodeNodeFast and their watch-event and LIST-page forms against the
// JSON-tree path they stand in for: the same object for every text they take, and a refusal
// (false) wherever decode<T> throws.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <ksched/api/decode.h>
#include <ksched/api/fast_decode.h>

#include "client/object_json.h"
#include "client/watch_body.h"
#include "tests/support/node_equal.h"
#include "tests/support/source_dir.h"

namespace ksched::api {
namespace {

// A fuzz corpus file's bytes.
std::string fileText(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// decode<T> as the informers reach it from text; nullopt where it refuses the text.
template <typename T = Pod>
std::optional<T> treeDecode(std::string_view text) {
  const nlohmann::json j = client::parseObjectJson(text);
  if (j.is_discarded()) return std::nullopt;
  try {
    return decode<T>(j);
  } catch (const DecodeError&) {
    return std::nullopt;
  }
}

// Pod has no operator== of its own; its three parts do.
void expectSame(const Pod& fast, const Pod& tree) {
  EXPECT_TRUE(fast.metadata == tree.metadata);
  EXPECT_TRUE(fast.spec == tree.spec);
  EXPECT_TRUE(fast.status == tree.status);
}

constexpr const char* kFullPod = R"({
  "kind": "Pod", "apiVersion": "v1",
  "metadata": {
    "name": "web-0", "namespace": "prod", "uid": "u-1", "resourceVersion": "42", "generation": 3,
    "labels": {"app": "web", "tier": "front"}, "annotations": {"note": "\u00e9t\u00e9"},
    "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-1",
                         "uid": "rs-1", "controller": true, "blockOwnerDeletion": true}],
    "creationTimestamp": "2026-11-24T23:40:01Z", "deletionTimestamp": "2026-11-25T00:00:00Z",
    "deletionGracePeriodSeconds": 30,
    "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}]
  },
  "spec": {
    "nodeName": "n1", "priority": 1000, "priorityClassName": "high",
    "preemptionPolicy": "Never", "nodeSelector": {"disktype": "ssd"},
    "terminationGracePeriodSeconds": 30, "hostNetwork": true, "hostUsers": false,
    "schedulingGates": [{"name": "example.com/quota"}],
    "tolerations": [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"},
                    {"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                     "effect": "NoExecute", "tolerationSeconds": 300}],
    "overhead": {"cpu": "250m"},
    "affinity": {
      "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]}]}},
      "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 10,
        "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "web"}},
                            "topologyKey": "kubernetes.io/hostname"}}]}},
    "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone",
      "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "web"}},
      "minDomains": 2, "matchLabelKeys": ["pod-template-hash"]}],
    "containers": [{"name": "app", "image": "nginx",
      "resources": {"requests": {"cpu": "100m", "memory": 134217728, "example.com/gpu": "1"},
                    "limits": {"cpu": 1, "memory": "256Mi"},
                    "claims": [{"name": "gpu", "request": "r0"}]},
      "ports": [{"containerPort": 80, "hostPort": 8080}, {"name": "dns", "containerPort": 53,
                 "protocol": "UDP", "hostIP": "10.0.0.1"}],
      "volumeMounts": [{"name": "data", "mountPath": "/data"}],
      "restartPolicyRules": [{"action": "Restart"}]}],
    "initContainers": [{"name": "sidecar", "image": "envoy", "restartPolicy": "Always",
      "resources": {"requests": {"cpu": "50m"}}}],
    "ephemeralContainers": [{"name": "debug", "image": "busybox"}],
    "volumes": [
      {"name": "data", "persistentVolumeClaim": {"claimName": "data-0", "readOnly": true}},
      {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}},
      {"name": "inline", "csi": {"driver": "csi.example.com"}},
      {"name": "legacy", "rbd": {"monitors": ["m1"], "image": "img"}},
      {"name": "disk", "gcePersistentDisk": {"pdName": "pd-1"}},
      {"name": "config", "configMap": {"name": "cm"}},
      {"name": "cache", "emptyDir": {"medium": "Memory"}},
      {"name": "logs", "hostPath": {"path": "/var/log"}},
      {"name": "kube-api-access", "projected": {"sources": [{"serviceAccountToken": {}}]}}],
    "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu-template"}],
    "schedulingGroup": {"podGroupName": "training"}
  },
  "status": {
    "phase": "Running", "nominatedNodeName": "n2", "startTime": "2026-11-24T23:40:02Z",
    "conditions": [{"type": "PodScheduled", "status": "True", "lastProbeTime": null,
                    "lastTransitionTime": "2026-11-24T23:40:01Z"},
                   {"type": "PodResizePending", "status": "True", "reason": "Deferred",
                    "message": "no room"}],
    "containerStatuses": [{"name": "app", "ready": true, "allocatedResources": {"cpu": "100m"},
                           "resources": {"requests": {"cpu": "100m"}}}],
    "initContainerStatuses": [{"name": "sidecar"}],
    "allocatedResources": {"cpu": "150m"}, "resize": "InProgress",
    "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "web-0-gpu"}],
    "extendedResourceClaimStatus": {"resourceClaimName": "web-0-ext", "requestMappings": [
      {"containerName": "app", "resourceName": "example.com/gpu", "requestName": "r0"}]}
  }
})";

TEST(FastDecode, FullPodEqualsTheTreeDecode) {
  const std::optional<Pod> tree = treeDecode(kFullPod);
  ASSERT_TRUE(tree.has_value());
  Pod fast;
  ASSERT_TRUE(decodePodFast(kFullPod, fast));
  expectSame(fast, *tree);
  // Spot checks of what the comparison covers, so that a field both paths dropped shows.
  EXPECT_EQ(fast.metadata.ownerReferences.at(0).controller, true);
  EXPECT_EQ(fast.metadata.annotations.at("note"), "\xc3\xa9t\xc3\xa9");
  EXPECT_EQ(fast.spec.schedulerName, kDefaultSchedulerName);
  EXPECT_EQ(fast.spec.containers.at(0).ports.at(0).protocol, "TCP");
  EXPECT_EQ(fast.spec.containers.at(0).resources.requests.at("memory").value(), 134217728);
  EXPECT_EQ(fast.spec.volumes.at(3).rbd->pool, "rbd");
  EXPECT_TRUE(fast.spec.volumes.at(1).ephemeral);
  EXPECT_TRUE(fast.spec.volumes.at(6).emptyDir);
  EXPECT_TRUE(fast.spec.volumes.at(7).hostPath);
  EXPECT_FALSE(fast.spec.volumes.at(5).emptyDir || fast.spec.volumes.at(5).hostPath);
  EXPECT_TRUE(fast.spec.affinity->podAntiAffinity.has_value());
  EXPECT_EQ(fast.spec.topologySpreadConstraints.at(0).minDomains, 2);
  EXPECT_EQ(fast.spec.schedulingGates, std::vector<std::string>{"example.com/quota"});
  EXPECT_EQ(fast.status.extendedResourceClaimStatus->requestMappings.at(0).requestName, "r0");
}

// Texts both paths take: the fast one must give the tree's Pod.
TEST(FastDecode, SameAsTheTreeDecode) {
  const std::vector<std::string> cases = {
      R"({"metadata": {"name": "p"}})",
      R"({})",
      // null leaves a fresh pod's value, defaults included
      R"({"metadata": null, "spec": {"schedulerName": null, "containers": null, "affinity": null,
          "priority": null, "volumes": [{"name": "v", "ephemeral": null}]}, "status": null})",
      // a repeated key: the last one counts, as in a tree
      R"({"spec": {"schedulerName": "mine", "schedulerName": null}})",
      R"({"metadata": {"labels": {"a": "1"}}, "metadata": {"name": "x"}})",
      R"({"metadata": {"labels": {"a": "1", "a": "2"}}})",
      R"({"spec": {"containers": [{"name": "a", "ports": [{"containerPort": 1,
          "protocol": "UDP", "protocol": null}]}]}})",
      // quantities as strings and as integers, negative and past int64
      R"({"spec": {"overhead": {"cpu": "1.5", "memory": 0, "a": -3, "b": 18446744073709551615,
          "c": "1e3", "d": "2Ki"}}})",
      R"({"spec": {"priority": -2147483648, "terminationGracePeriodSeconds": 9223372036854775807}})",
      // escaped keys and unknown fields of every type
      R"({"metadata": {"na\u006de": "p", "x": [1, 2.5, true, null, {"y": "z"}]}})",
  };
  for (const auto& text : cases) {
    SCOPED_TRACE(text);
    const std::optional<Pod> tree = treeDecode(text);
    ASSERT_TRUE(tree.has_value());
    Pod fast;
    ASSERT_TRUE(decodePodFast(text, fast));
    expectSame(fast, *tree);
  }
}

// Texts the fast path declines: the tree decode then refuses them, or reads them (a fraction as
// a quantity) through the decoders the fast path does not mirror.
TEST(FastDecode, DeclinesWhatItDoesNotVouchFor) {
  struct Case {
    std::string text;
    bool treeDecodes;
  };
  const std::vector<Case> cases = {
      {R"({"spec": {"priority": "5"}})", false},
      {R"({"spec": {"priority": 3000000000}})", false},
      {R"({"metadata": {"generation": 1.0}})", false},
      {R"({"spec": {"hostNetwork": 1}})", false},
      {R"({"spec": {"overhead": {"cpu": "abc"}}})", false},
      {R"({"spec": {"overhead": {"cpu": null}}})", false},
      {R"({"spec": {"containers": [null]}})", false},
      {R"({"spec": {"containers": {"name": "a"}}})", false},
      {R"({"metadata": "x"})", false},
      {R"({"metadata": {"labels": {"a": 1}}})", false},
      {R"({"spec": {"affinity": {"nodeAffinity": 3}}})", false},
      {R"({"spec": {"volumes": [{"name": "v", "ephemeral": "yes"}]}})", false},
      {R"({"spec": {"volumes": [{"name": "v", "emptyDir": []}]}})", false},
      {R"({"spec": {"volumes": [{"name": "v", "hostPath": "/x"}]}})", false},
      {R"({"metadata": )", false},
      {R"({} x)", false},
      {R"([])", false},
      {"{\"metadata\": {\"name\": \"\xff\"}}", false},
      {R"({"spec": {"overhead": {"cpu": 0.5}}})", true},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    EXPECT_EQ(treeDecode(c.text).has_value(), c.treeDecodes);
    Pod fast;
    EXPECT_FALSE(decodePodFast(c.text, fast));
  }
}

TEST(FastDecode, WatchEventGivesTypeAndPod) {
  const std::string line = std::string(R"({"type":"MODIFIED","object":)") + kFullPod + "}";
  std::string type;
  Pod pod;
  ASSERT_TRUE(decodePodWatchEventFast(line, type, pod));
  EXPECT_EQ(type, "MODIFIED");
  expectSame(pod, *treeDecode(kFullPod));

  // Any order of the event's keys, the last of a repeated one.
  ASSERT_TRUE(decodePodWatchEventFast(
      R"({"object": {"metadata": {"name": "p"}}, "type": "ADDED", "type": "DELETED"})", type, pod));
  EXPECT_EQ(type, "DELETED");
  EXPECT_EQ(pod.metadata.name, "p");
}

TEST(FastDecode, WatchEventDeclinesWhatTheWatchRefusesOrDecodesOtherwise) {
  const std::vector<std::string> lines = {
      R"({"type":"ERROR","object":{"kind":"Status","status":"Failure","code":410}})",
      R"({"type":"ADDED","object":{"spec":{}}})",
      R"({"type":"ADDED","object":{"metadata":{"name":"p"},"metadata":null}})",
      R"({"type":"ADDED","object":null})",
      R"({"type":5,"object":{"metadata":{}}})",
      R"({"object":{"metadata":{}}})",
      R"({"type":"ADDED","object":{"metadata":{"name":"p"}}})"
      "x",
      R"({"type":"ADDED","object":{"metadata":{"name":"p"},"spec":{"priority":"high"}}})",
  };
  for (const auto& line : lines) {
    SCOPED_TRACE(line);
    std::string type;
    Pod pod;
    EXPECT_FALSE(decodePodWatchEventFast(line, type, pod));
  }
}

TEST(FastDecode, ListPageGivesItemsAndPaging) {
  const std::string page = std::string(R"({"kind": "PodList", "apiVersion": "v1",
      "metadata": {"resourceVersion": "77", "continue": "tok", "remainingItemCount": 3},
      "items": [)") + kFullPod +
                           R"(, {"metadata": {"name": "b"}}]})";
  std::vector<Pod> items;
  std::string cont = "stale";
  std::string rv = "stale";
  ASSERT_TRUE(decodePodListFast(page, items, cont, rv));
  EXPECT_EQ(cont, "tok");
  EXPECT_EQ(rv, "77");
  ASSERT_EQ(items.size(), 2u);
  expectSame(items[0], *treeDecode(kFullPod));
  EXPECT_EQ(items[1].metadata.name, "b");

  // The last page: no continue; items null or missing is an empty page.
  for (const char* text : {R"({"metadata": {"resourceVersion": "78"}, "items": null})",
                           R"({"metadata": {"resourceVersion": "78"}})"}) {
    SCOPED_TRACE(text);
    ASSERT_TRUE(decodePodListFast(text, items, cont, rv));
    EXPECT_TRUE(items.empty());
    EXPECT_EQ(cont, "");
    EXPECT_EQ(rv, "78");
  }
}

// What client::isListPage refuses, and pages with an item the fast path does not vouch for.
TEST(FastDecode, ListPageDeclines) {
  for (const char* text : {
           R"({"metadata": {"continue": null}, "items": []})",
           R"({"metadata": {"resourceVersion": 5}, "items": []})",
           R"({"metadata": "x", "items": []})",
           R"({"items": {}})",
           R"([])",
           R"({"items": [{"metadata": {"name": "a"}}, {"spec": {"priority": "x"}}]})",
           R"({"items": [null]})",
           R"({"items": []} {})",
       }) {
    SCOPED_TRACE(text);
    std::vector<Pod> items;
    std::string cont;
    std::string rv;
    EXPECT_FALSE(decodePodListFast(text, items, cont, rv));
  }
}

// Every pod of the fuzz corpora (the api_object target's, less its selector byte, and each line
// of the watch target's): the fast path takes each one the tree decodes, with the same result.
TEST(FastDecode, CorpusPodsDecodeAlike) {
  namespace fs = std::filesystem;
  const fs::path corpus = ksched::testing::repoRoot() / "tests/fuzz/corpus";
  int pods = 0;
  for (const auto& entry : fs::directory_iterator(corpus / "api_object")) {
    if (entry.path().filename().string().rfind("pod", 0) != 0 ||
        entry.path().filename().string().rfind("podgroup", 0) == 0) {
      continue;
    }
    SCOPED_TRACE(entry.path().string());
    const std::string text = fileText(entry.path()).substr(1);
    const std::optional<Pod> tree = treeDecode(text);
    ASSERT_TRUE(tree.has_value());
    Pod fast;
    ASSERT_TRUE(decodePodFast(text, fast));
    expectSame(fast, *tree);
    ++pods;
  }
  EXPECT_GE(pods, 5);
  int events = 0;
  std::istringstream lines(fileText(corpus / "watch/events").substr(1));
  for (std::string line; std::getline(lines, line);) {
    SCOPED_TRACE(line);
    std::string why;
    const std::optional<client::WatchEvent> ev = client::parseWatchEvent(line, &why);
    std::string type;
    Pod fast;
    if (!decodePodWatchEventFast(line, type, fast)) continue;
    ASSERT_TRUE(ev.has_value()) << why;
    expectSame(fast, decode<Pod>(ev->object));
    ++events;
  }
  EXPECT_GE(events, 3);
}

// --- Nodes -------------------------------------------------------------------------------------

void expectSame(const Node& fast, const Node& tree) {
  EXPECT_TRUE(ksched::testing::sameNode(fast, tree));
}

constexpr const char* kFullNode = R"({
  "kind": "Node", "apiVersion": "v1",
  "metadata": {"name": "n1", "uid": "u-n1", "resourceVersion": "12",
               "labels": {"kubernetes.io/hostname": "n1", "topology.kubernetes.io/zone": "a"},
               "annotations": {"node.alpha.kubernetes.io/ttl": "0"},
               "managedFields": [{"manager": "kubelet", "fieldsV1": {"f:status": {}}}]},
  "spec": {"podCIDR": "10.0.0.0/24", "unschedulable": true,
           "taints": [{"key": "dedicated", "value": "web", "effect": "NoSchedule"},
                      {"key": "node.kubernetes.io/not-ready", "effect": "NoExecute",
                       "timeAdded": "2026-11-24T23:40:01Z"}],
           "podPreemptionPolicy": {"disableResizePreemption": ["example.com/batch"]}},
  "status": {"capacity": {"cpu": "4", "memory": "16Gi", "pods": 110, "hugepages-2Mi": "0"},
             "allocatable": {"cpu": "3800m", "memory": "15Gi", "pods": "110",
                             "example.com/gpu": "2"},
             "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                             "lastHeartbeatTime": "2026-11-24T23:40:01Z"}],
             "images": [{"names": ["nginx:1.25", "docker.io/library/nginx@sha256:abc"],
                         "sizeBytes": 70000000}],
             "declaredFeatures": ["InPlacePodVerticalScaling"],
             "nodeInfo": {"kubeletVersion": "v1.37.0"}}
})";

TEST(FastDecodeNode, FullNodeEqualsTheTreeDecode) {
  const std::optional<Node> tree = treeDecode<Node>(kFullNode);
  ASSERT_TRUE(tree.has_value());
  Node fast;
  ASSERT_TRUE(decodeNodeFast(kFullNode, fast));
  expectSame(fast, *tree);
  EXPECT_TRUE(fast.spec.unschedulable);
  ASSERT_EQ(fast.spec.taints.size(), 2u);
  EXPECT_EQ(fast.spec.taints[1].timeAdded, "2026-11-24T23:40:01Z");
  EXPECT_EQ(fast.spec.disableResizePreemption, std::vector<std::string>{"example.com/batch"});
  EXPECT_EQ(fast.status.capacity.at("pods").value(), 110);
  EXPECT_EQ(fast.status.images.at(0).sizeBytes, 70000000);
  EXPECT_EQ(fast.status.conditions.at(0).status, "True");
  EXPECT_EQ(fast.status.declaredFeatures.at(0), "InPlacePodVerticalScaling");
}

TEST(FastDecodeNode, SameAsTheTreeDecode) {
  const std::vector<std::string> cases = {
      R"({})",
      R"({"metadata": null, "spec": null, "status": null})",
      R"({"spec": {"taints": null, "unschedulable": null, "podPreemptionPolicy": null}})",
      // a policy that is not an object is ignored, as node.cc ignores it; the last one counts
      R"({"spec": {"podPreemptionPolicy": "x"}})",
      R"({"spec": {"podPreemptionPolicy": {"disableResizePreemption": ["a"]},
                   "podPreemptionPolicy": 3}})",
      R"({"spec": {"podPreemptionPolicy": {"disableResizePreemption": ["a"],
                                           "disableResizePreemption": null}}})",
      R"({"spec": {"podPreemptionPolicy": {"other": 1}}})",
      R"({"status": {"images": [{"names": null, "sizeBytes": null}, {}], "conditions": [{}]}})",
      R"({"status": {"capacity": {"cpu": 2, "memory": 18446744073709551615}}})",
      R"({"spec": {"taints": [{"key": "k", "effect": "NoSchedule", "effect": null}]}})",
  };
  for (const auto& text : cases) {
    SCOPED_TRACE(text);
    const std::optional<Node> tree = treeDecode<Node>(text);
    ASSERT_TRUE(tree.has_value());
    Node fast;
    ASSERT_TRUE(decodeNodeFast(text, fast));
    expectSame(fast, *tree);
  }
}

TEST(FastDecodeNode, DeclinesWhatItDoesNotVouchFor) {
  for (const char* text : {
           R"({"spec": {"unschedulable": "yes"}})",
           R"({"spec": {"taints": {"key": "k"}}})",
           R"({"spec": {"taints": [{"key": 1}]}})",
           R"({"spec": {"podPreemptionPolicy": {"disableResizePreemption": "a"}}})",
           R"({"status": {"images": [{"sizeBytes": "1"}]}})",
           R"({"status": {"images": [{"sizeBytes": 1.5}]}})",
           R"({"status": {"capacity": {"cpu": "x"}}})",
           R"({"status": {"conditions": [{"type": 1}]}})",
           R"({"status": {"declaredFeatures": "a"}})",
           R"({"metadata": {"name": 5}})",
           R"({"metadata": )",
       }) {
    SCOPED_TRACE(text);
    EXPECT_FALSE(treeDecode<Node>(text).has_value());
    Node fast;
    EXPECT_FALSE(decodeNodeFast(text, fast));
  }
}

TEST(FastDecodeNode, WatchEventAndListPage) {
  const std::string line = std::string(R"({"type":"MODIFIED","object":)") + kFullNode + "}";
  std::string type;
  Node node;
  ASSERT_TRUE(decodeNodeWatchEventFast(line, type, node));
  EXPECT_EQ(type, "MODIFIED");
  expectSame(node, *treeDecode<Node>(kFullNode));
  EXPECT_FALSE(decodeNodeWatchEventFast(R"({"type":"ADDED","object":{"spec":{}}})", type, node));
  EXPECT_FALSE(decodeNodeWatchEventFast(
      R"({"type":"ADDED","object":{"metadata":{"name":"n"},"spec":{"taints":5}}})", type, node));

  const std::string page = std::string(R"({"kind": "NodeList", "apiVersion": "v1",
      "metadata": {"resourceVersion": "77", "continue": "tok"}, "items": [)") +
                           kFullNode + R"(, {"metadata": {"name": "n2"}}]})";
  std::vector<Node> items;
  std::string cont;
  std::string rv;
  ASSERT_TRUE(decodeNodeListFast(page, items, cont, rv));
  EXPECT_EQ(cont, "tok");
  EXPECT_EQ(rv, "77");
  ASSERT_EQ(items.size(), 2u);
  expectSame(items[0], *treeDecode<Node>(kFullNode));
  EXPECT_EQ(items[1].metadata.name, "n2");
  EXPECT_FALSE(
      decodeNodeListFast(R"({"items": [{"spec": {"unschedulable": 1}}]})", items, cont, rv));
}

// The nodes of the api_object corpus decode alike both ways.
TEST(FastDecodeNode, CorpusNodesDecodeAlike) {
  namespace fs = std::filesystem;
  const fs::path corpus = ksched::testing::repoRoot() / "tests/fuzz/corpus/api_object";
  int nodes = 0;
  for (const auto& entry : fs::directory_iterator(corpus)) {
    if (entry.path().filename().string().rfind("node", 0) != 0) continue;
    SCOPED_TRACE(entry.path().string());
    const std::string text = fileText(entry.path()).substr(1);
    const std::optional<Node> tree = treeDecode<Node>(text);
    ASSERT_TRUE(tree.has_value());
    Node fast;
    ASSERT_TRUE(decodeNodeFast(text, fast));
    expectSame(fast, *tree);
    ++nodes;
  }
  EXPECT_GE(nodes, 2);
}

}  // namespace
}  // namespace ksched::api
