#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <ksched/api/decode.h>
#include <ksched/api/node.h>
#include <ksched/api/pod.h>

#include "extender/encode.h"
#include "extender/extenders.h"
#include "extender/http_extender.h"

namespace ksched::extender {
namespace {

using nlohmann::json;

const json kPodJson = json::parse(R"({
  "metadata": {"name": "web-1", "namespace": "shop", "uid": "u-1", "resourceVersion": "42",
               "labels": {"app": "web"}, "annotations": {"note": "x"},
               "creationTimestamp": "2024-01-02T03:04:05Z",
               "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                    "name": "web", "uid": "rs-1", "controller": true}]},
  "spec": {
    "schedulerName": "my-scheduler",
    "priority": 7,
    "priorityClassName": "high",
    "nodeSelector": {"disk": "ssd"},
    "tolerations": [{"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"}],
    "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
      "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In",
                                                   "values": ["a", "b"]}]}]}},
                 "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                   {"labelSelector": {"matchLabels": {"app": "web"}},
                    "topologyKey": "kubernetes.io/hostname"}]}},
    "containers": [{"name": "app", "image": "nginx",
                    "resources": {"requests": {"cpu": "250m", "memory": "64Mi",
                                               "example.com/gpu": "1"},
                                  "limits": {"cpu": "1"}},
                    "ports": [{"containerPort": 80, "hostPort": 8080}]}],
    "initContainers": [{"name": "init", "resources": {"limits": {"example.com/fpga": "2"}}}],
    "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data-web-1"}}],
    "resources": {"requests": {"cpu": "2"}, "limits": {"memory": "1Gi"}}
  },
  "status": {"phase": "Pending", "nominatedNodeName": "n9",
             "conditions": [{"type": "PodScheduled", "status": "False",
                             "reason": "Unschedulable", "message": "m"}],
             "containerStatuses": [{"name": "app", "allocatedResources": {"cpu": "500m"},
                                    "resources": {"requests": {"cpu": "300m"}}}],
             "allocatedResources": {"cpu": "2"},
             "resources": {"requests": {"cpu": "1500m"}}}
})");

const json kNodeJson = json::parse(R"({
  "metadata": {"name": "n1", "uid": "nu-1", "labels": {"zone": "a"}},
  "spec": {"unschedulable": true,
           "taints": [{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]},
  "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
             "allocatable": {"cpu": "3800m", "memory": "7Gi", "pods": "110"},
             "conditions": [{"type": "Ready", "status": "True"}]}
})");

api::Pod pod() { return api::decode<api::Pod>(kPodJson); }

std::shared_ptr<const api::Node> node(const std::string& name) {
  json j = kNodeJson;
  j["metadata"]["name"] = name;
  return std::make_shared<const api::Node>(api::decode<api::Node>(j));
}

TEST(ExtenderEncode, PodCarriesMetadataSpecAndStatus) {
  const json j = encodePod(pod());
  EXPECT_EQ(j["apiVersion"], "v1");
  EXPECT_EQ(j["kind"], "Pod");
  EXPECT_EQ(j["metadata"]["name"], "web-1");
  EXPECT_EQ(j["metadata"]["namespace"], "shop");
  EXPECT_EQ(j["metadata"]["uid"], "u-1");
  EXPECT_EQ(j["metadata"]["labels"], json({{"app", "web"}}));
  EXPECT_EQ(j["metadata"]["annotations"], json({{"note", "x"}}));
  EXPECT_EQ(j["metadata"]["ownerReferences"][0]["kind"], "ReplicaSet");
  const json& spec = j["spec"];
  EXPECT_EQ(spec["schedulerName"], "my-scheduler");
  EXPECT_EQ(spec["priority"], 7);
  EXPECT_EQ(spec["nodeSelector"], json({{"disk", "ssd"}}));
  EXPECT_EQ(spec["containers"][0]["resources"]["requests"]["cpu"], "250m");
  EXPECT_EQ(spec["containers"][0]["resources"]["requests"]["example.com/gpu"], "1");
  EXPECT_EQ(spec["containers"][0]["resources"]["limits"]["cpu"], "1");
  EXPECT_EQ(spec["containers"][0]["ports"][0],
            json({{"containerPort", 80}, {"hostPort", 8080}, {"protocol", "TCP"}}));
  EXPECT_EQ(spec["tolerations"][0],
            json({{"key", "k"}, {"operator", "Equal"}, {"value", "v"}, {"effect", "NoSchedule"}}));
  EXPECT_EQ(spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
                ["nodeSelectorTerms"][0]["matchExpressions"][0],
            json({{"key", "zone"}, {"operator", "In"}, {"values", {"a", "b"}}}));
  EXPECT_EQ(spec["volumes"][0]["persistentVolumeClaim"]["claimName"], "data-web-1");
  EXPECT_EQ(j["status"]["phase"], "Pending");
  EXPECT_EQ(j["status"]["nominatedNodeName"], "n9");
  EXPECT_EQ(j["status"]["conditions"][0]["reason"], "Unschedulable");
}

TEST(ExtenderEncode, PodRoundTripsThroughTheDecoder) {
  const api::Pod original = pod();
  const api::Pod again = api::decode<api::Pod>(encodePod(original));
  EXPECT_EQ(again.metadata.name, original.metadata.name);
  EXPECT_EQ(again.metadata.uid, original.metadata.uid);
  EXPECT_EQ(again.metadata.labels, original.metadata.labels);
  EXPECT_EQ(again.spec.schedulerName, original.spec.schedulerName);
  EXPECT_EQ(again.spec.priority, original.spec.priority);
  EXPECT_EQ(again.spec.tolerations, original.spec.tolerations);
  EXPECT_EQ(again.spec.nodeSelector, original.spec.nodeSelector);
  ASSERT_TRUE(again.spec.affinity && again.spec.affinity->nodeAffinity);
  EXPECT_EQ(again.spec.affinity->nodeAffinity->requiredDuringSchedulingIgnoredDuringExecution,
            original.spec.affinity->nodeAffinity->requiredDuringSchedulingIgnoredDuringExecution);
  ASSERT_TRUE(again.spec.affinity->podAntiAffinity);
  EXPECT_EQ(
      again.spec.affinity->podAntiAffinity->requiredDuringSchedulingIgnoredDuringExecution[0]
          .labelSelector,
      original.spec.affinity->podAntiAffinity->requiredDuringSchedulingIgnoredDuringExecution[0]
          .labelSelector);
  ASSERT_EQ(again.spec.containers.size(), 1u);
  EXPECT_EQ(again.spec.containers[0].resources.requests,
            original.spec.containers[0].resources.requests);
  EXPECT_EQ(again.spec.initContainers[0].resources.limits,
            original.spec.initContainers[0].resources.limits);
  EXPECT_EQ(again.status.nominatedNodeName, "n9");
  ASSERT_TRUE(again.spec.resources);
  EXPECT_EQ(again.spec.resources->requests, original.spec.resources->requests);
  EXPECT_EQ(again.spec.resources->limits, original.spec.resources->limits);
  ASSERT_EQ(again.status.containerStatuses.size(), 1u);
  EXPECT_EQ(again.status.containerStatuses[0].allocatedResources,
            original.status.containerStatuses[0].allocatedResources);
  ASSERT_TRUE(again.status.containerStatuses[0].resources);
  EXPECT_EQ(again.status.containerStatuses[0].resources->requests,
            original.status.containerStatuses[0].resources->requests);
  EXPECT_EQ(again.status.allocatedResources, original.status.allocatedResources);
  ASSERT_TRUE(again.status.resources);
  EXPECT_EQ(again.status.resources->requests, original.status.resources->requests);
}

TEST(ExtenderEncode, NodeCarriesTaintsAndResources) {
  const json j = encodeNode(*node("n1"));
  EXPECT_EQ(j["kind"], "Node");
  EXPECT_EQ(j["metadata"]["name"], "n1");
  EXPECT_EQ(j["metadata"]["labels"], json({{"zone", "a"}}));
  EXPECT_EQ(j["spec"]["unschedulable"], true);
  EXPECT_EQ(j["spec"]["taints"][0],
            json({{"key", "dedicated"}, {"value", "db"}, {"effect", "NoSchedule"}}));
  EXPECT_EQ(j["status"]["capacity"]["cpu"], "4");
  EXPECT_EQ(j["status"]["allocatable"]["cpu"], "3800m");
  EXPECT_EQ(j["status"]["allocatable"]["memory"], "7Gi");
  const api::Node again = api::decode<api::Node>(j);
  EXPECT_EQ(again.spec.taints, node("n1")->spec.taints);
  EXPECT_EQ(again.status.allocatable, node("n1")->status.allocatable);
}

TEST(ExtenderProtocol, ArgsCarryNodesOrNodeNames) {
  NodeInfo a(node("a")), b(node("b"));
  const std::vector<const NodeInfo*> nodes{&a, &b};
  const json full = encodeArgs(pod(), nodes, false);
  EXPECT_EQ(full["pod"]["metadata"]["uid"], "u-1");
  EXPECT_FALSE(full.contains("nodenames"));
  ASSERT_EQ(full["nodes"]["items"].size(), 2u);
  EXPECT_EQ(full["nodes"]["items"][1]["metadata"]["name"], "b");
  EXPECT_EQ(full["nodes"]["items"][0]["status"]["allocatable"]["cpu"], "3800m");
  const json names = encodeArgs(pod(), nodes, true);
  EXPECT_FALSE(names.contains("nodes"));
  EXPECT_EQ(names["nodenames"], json({"a", "b"}));
}

TEST(ExtenderProtocol, DecodesFilterResult) {
  const FilterResult r = decodeFilterResult(json::parse(R"({
    "nodenames": ["b"], "nodes": {"items": [{"metadata": {"name": "c"}}]},
    "failedNodes": {"a": "node a is busy"},
    "failedAndUnresolvableNodes": {"d": "no gpu on d"}, "error": ""})"));
  EXPECT_EQ(r.nodeNames, (std::vector<std::string>{"b"}));
  EXPECT_EQ(r.nodes, (std::vector<std::string>{"c"}));
  EXPECT_EQ(r.failedNodes, (FailedNodesMap{{"a", "node a is busy"}}));
  EXPECT_EQ(r.failedAndUnresolvableNodes, (FailedNodesMap{{"d", "no gpu on d"}}));
  EXPECT_EQ(r.error, "");
  // Extenders built on the untagged v1.20 types answer with Go field names.
  const FilterResult old = decodeFilterResult(
      json::parse(R"({"NodeNames": null, "Nodes": {"Items": [{"metadata": {"name": "x"}}]},
                      "FailedNodes": {"y": "full"}, "Error": "boom"})"));
  EXPECT_FALSE(old.nodeNames.has_value());
  EXPECT_EQ(old.nodes, (std::vector<std::string>{"x"}));
  EXPECT_EQ(old.failedNodes, (FailedNodesMap{{"y", "full"}}));
  EXPECT_EQ(old.error, "boom");
  EXPECT_FALSE(decodeFilterResult(json::object()).nodes.has_value());
  EXPECT_THROW((void)decodeFilterResult(json::parse(R"({"failedNodes": {"a": 1}})")),
               std::runtime_error);
  EXPECT_THROW((void)decodeFilterResult(json::array()), std::runtime_error);
}

TEST(ExtenderProtocol, DecodesHostPriorityList) {
  EXPECT_EQ(decodeHostPriorityList(json::parse(R"([{"host": "a", "score": 10},
                                                    {"Host": "b", "Score": 3}, {"host": "c"}])")),
            (std::vector<HostPriority>{{"a", 10}, {"b", 3}, {"c", 0}}));
  EXPECT_TRUE(decodeHostPriorityList(json()).empty());
  EXPECT_THROW((void)decodeHostPriorityList(json::parse(R"([{"host": "a", "score": "x"}])")),
               std::runtime_error);
}

TEST(ExtenderProtocol, BindingArgsAndResult) {
  EXPECT_EQ(
      encodeBindingArgs(pod(), "n3"),
      json({{"podName", "web-1"}, {"podNamespace", "shop"}, {"podUID", "u-1"}, {"node", "n3"}}));
  EXPECT_EQ(decodeBindingResult(json::parse(R"({"error": "no room"})")), "no room");
  EXPECT_EQ(decodeBindingResult(json::parse(R"({})")), "");
  EXPECT_EQ(decodeBindingResult(json()), "");
}

TEST(ExtenderProtocol, PreemptionArgsAndResult) {
  auto victim = std::make_shared<const PodInfo>(std::make_shared<const api::Pod>(pod()), features::Gates{});
  std::map<std::string, Victims> victims{{"n1", Victims{{victim}, 2}}};
  const json meta = encodePreemptionArgs(pod(), victims, true);
  EXPECT_FALSE(meta.contains("nodeNameToVictims"));
  EXPECT_EQ(meta["nodeNameToMetaVictims"],
            json::parse(R"({"n1": {"pods": [{"uid": "u-1"}], "numPDBViolations": 2}})"));
  const json full = encodePreemptionArgs(pod(), victims, false);
  EXPECT_FALSE(full.contains("nodeNameToMetaVictims"));
  EXPECT_EQ(full["nodeNameToVictims"]["n1"]["pods"][0]["metadata"]["name"], "web-1");
  EXPECT_EQ(full["nodeNameToVictims"]["n1"]["numPDBViolations"], 2);
  EXPECT_EQ(full["pod"]["metadata"]["uid"], "u-1");

  const auto r = decodePreemptionResult(json::parse(
      R"({"nodeNameToMetaVictims": {"n1": {"pods": [{"uid": "a"}, {"uid": "b"}],
                                           "numPDBViolations": 1}, "n2": null}})"));
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r.at("n1"), (MetaVictims{{"a", "b"}, 1}));
  EXPECT_TRUE(r.at("n2").podUIDs.empty());
  EXPECT_TRUE(decodePreemptionResult(json::object()).empty());
}

config::Extender managing(std::vector<std::string> resources) {
  config::Extender c;
  c.urlPrefix = "http://127.0.0.1:1/x";
  for (auto& r : resources) c.managedResources.push_back({std::move(r), false});
  return c;
}

TEST(ExtenderInterest, ManagedResources) {
  const api::Pod p = pod();
  EXPECT_TRUE(HttpExtender(managing({})).isInterested(p));
  EXPECT_TRUE(HttpExtender(managing({"example.com/gpu"})).isInterested(p));   // a request
  EXPECT_TRUE(HttpExtender(managing({"example.com/fpga"})).isInterested(p));  // an init limit
  EXPECT_FALSE(HttpExtender(managing({"example.com/other"})).isInterested(p));
  api::Pod limitOnly = p;
  limitOnly.spec.containers[0].resources.requests.clear();
  limitOnly.spec.containers[0].resources.limits["example.com/gpu"] = api::Quantity::parse("1");
  limitOnly.spec.initContainers.clear();
  EXPECT_TRUE(HttpExtender(managing({"example.com/gpu"})).isInterested(limitOnly));
  EXPECT_FALSE(HttpExtender(managing({"example.com/fpga"})).isInterested(limitOnly));
}

TEST(ExtenderScore, CombinedScoreScalesToTheNodeScoreRange) {
  EXPECT_EQ(combinedScore(10, 1), 100);
  EXPECT_EQ(combinedScore(10, 5), 500);
  EXPECT_EQ(combinedScore(3, 2), 60);
  EXPECT_EQ(combinedScore(0, 100), 0);
  // An extender may answer any integer: the products saturate instead of overflowing.
  EXPECT_EQ(combinedScore(INT64_MAX, 2), INT64_MAX);
  EXPECT_EQ(combinedScore(INT64_MAX / 5, 1), INT64_MAX);
  EXPECT_EQ(combinedScore(INT64_MIN, 1), INT64_MIN);
  EXPECT_EQ(combinedScore(-(INT64_MAX / 5), 1), INT64_MIN);
  EXPECT_EQ(saturatingAdd(INT64_MAX, 1), INT64_MAX);
  EXPECT_EQ(saturatingAdd(INT64_MIN, -1), INT64_MIN);
  EXPECT_EQ(saturatingAdd(40, 2), 42);
}

TEST(ExtenderConfig, TimeoutUrlAndTls) {
  config::Extender c = managing({});
  EXPECT_EQ(HttpExtender(c).timeout(), std::chrono::seconds(5));
  c.httpTimeout = std::chrono::milliseconds(1500);
  EXPECT_EQ(HttpExtender(c).timeout(), std::chrono::milliseconds(1500));
  c.urlPrefix = "http://127.0.0.1:99999/x";
  EXPECT_THROW(HttpExtender{c}, ExtenderError);
  c.urlPrefix = "http:///x";
  EXPECT_THROW(HttpExtender{c}, ExtenderError);
  c.urlPrefix = "https://e.example/x";
  c.tlsConfig = config::ExtenderTLSConfig{};
  c.tlsConfig->caFile = "/nonexistent/ca.crt";
  EXPECT_THROW(HttpExtender{c}, ExtenderError);
  c.tlsConfig->caFile.clear();
  c.tlsConfig->caData = "not a certificate";
  EXPECT_THROW(HttpExtender{c}, ExtenderError);
  try {
    (void)buildExtenders({managing({}), c});
    FAIL() << "expected ExtenderError";
  } catch (const ExtenderError& e) {
    EXPECT_EQ(std::string(e.what()), "extenders[1].tlsConfig: the CA holds no PEM certificate");
  }
  // A URL without a supported scheme fails every call the way Go's client does.
  c = managing({});
  c.urlPrefix = "ftp://e/x";
  c.filterVerb = "filter";
  json out;
  Status s = HttpExtender(c).send("filter", json::object(), out);
  EXPECT_EQ(s.code(), Code::kError);
  EXPECT_EQ(s.message(), "Post \"ftp://e/x/filter\": unsupported protocol scheme \"ftp\"");
}

}  // namespace
}  // namespace ksched::extender
