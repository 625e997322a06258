#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <ksched/api/pod.h>

#include "tests/support/api_test_util.h"

namespace ksched::api {
namespace {

using testing::decodeError;
using testing::decodeString;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr const char* kFullPod = R"({
  "apiVersion": "v1", "kind": "Pod",
  "metadata": {"name": "web-0", "namespace": "prod", "uid": "u-1", "labels": {"app": "web"}},
  "spec": {
    "nodeName": "", "schedulerName": "my-scheduler", "priority": 1000,
    "priorityClassName": "high", "preemptionPolicy": "Never",
    "nodeSelector": {"disktype": "ssd"},
    "terminationGracePeriodSeconds": 30,
    "schedulingGates": [{"name": "example.com/quota"}, {"name": "example.com/approval"}],
    "tolerations": [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}],
    "overhead": {"cpu": "250m"},
    "affinity": {
      "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
          {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]}]},
        "preferredDuringSchedulingIgnoredDuringExecution": [
          {"weight": 20, "preference": {"matchExpressions": [{"key": "disk", "operator": "Exists"}]}}]},
      "podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [{
          "labelSelector": {"matchLabels": {"app": "cache"}},
          "namespaces": ["prod", "shared"], "topologyKey": "topology.kubernetes.io/zone",
          "namespaceSelector": {"matchLabels": {"team": "a"}},
          "matchLabelKeys": ["pod-template-hash"], "mismatchLabelKeys": ["tenant"]}]},
      "podAntiAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [{
          "weight": 100,
          "podAffinityTerm": {"labelSelector": {"matchExpressions": [
            {"key": "app", "operator": "In", "values": ["web"]}]},
            "topologyKey": "kubernetes.io/hostname"}}]}},
    "topologySpreadConstraints": [{
      "maxSkew": 2, "topologyKey": "topology.kubernetes.io/zone",
      "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "web"}},
      "minDomains": 3, "nodeAffinityPolicy": "Ignore", "nodeTaintsPolicy": "Honor",
      "matchLabelKeys": ["pod-template-hash"]}],
    "initContainers": [
      {"name": "setup", "image": "busybox", "resources": {"requests": {"cpu": "1"}}},
      {"name": "proxy", "image": "envoy", "restartPolicy": "Always",
       "resources": {"requests": {"memory": "64Mi"}, "limits": {"memory": "128Mi"}}}],
    "containers": [{
      "name": "app", "image": "nginx:1.27",
      "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"cpu": "2"}},
      "ports": [{"name": "http", "containerPort": 80, "hostPort": 8080, "hostIP": "10.0.0.1",
                 "protocol": "UDP"},
                {"containerPort": 9090}]}],
    "volumes": [
      {"name": "data", "persistentVolumeClaim": {"claimName": "data-web-0", "readOnly": true}},
      {"name": "pd", "gcePersistentDisk": {"pdName": "disk-1", "readOnly": true}},
      {"name": "ebs", "awsElasticBlockStore": {"volumeID": "vol-123"}},
      {"name": "ceph", "rbd": {"monitors": ["m1:6789", "m2:6789"], "image": "img"}},
      {"name": "ceph2", "rbd": {"monitors": ["m1"], "image": "img2", "pool": "fast", "readOnly": true}},
      {"name": "lun", "iscsi": {"targetPortal": "10.0.0.2:3260", "iqn": "iqn.2001-04.com.example:t", "lun": 3}},
      {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}},
      {"name": "secrets", "csi": {"driver": "secrets-store.csi.k8s.io", "readOnly": true}},
      {"name": "cfg", "configMap": {"name": "cfg"}}]},
  "status": {
    "phase": "Pending", "nominatedNodeName": "node-3", "startTime": "2026-01-01T00:00:00Z",
    "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                    "message": "0/3 nodes are available", "lastTransitionTime": "2026-01-01T00:00:01Z"}]}
})";

TEST(PodTest, DecodesSpec) {
  const auto p = decodeString<Pod>(kFullPod);
  const PodSpec& s = p.spec;
  EXPECT_EQ(p.metadata.key(), "prod/web-0");
  EXPECT_EQ(s.schedulerName, "my-scheduler");
  EXPECT_EQ(s.priority, 1000);
  EXPECT_EQ(podPriority(p), 1000);
  EXPECT_EQ(s.priorityClassName, "high");
  EXPECT_EQ(s.preemptionPolicy, "Never");
  EXPECT_EQ(s.nodeSelector, (Labels{{"disktype", "ssd"}}));
  EXPECT_EQ(s.terminationGracePeriodSeconds, 30);
  EXPECT_THAT(s.schedulingGates, ElementsAre("example.com/quota", "example.com/approval"));
  ASSERT_EQ(s.tolerations.size(), 1u);
  EXPECT_EQ(s.tolerations[0], (Toleration{"gpu", "Exists", "", "NoSchedule", {}}));
  EXPECT_EQ(s.overhead.at("cpu").milliValue(), 250);
}

TEST(PodTest, DecodesAffinity) {
  const auto p = decodeString<Pod>(kFullPod);
  ASSERT_TRUE(p.spec.affinity.has_value());
  const Affinity& a = *p.spec.affinity;

  ASSERT_TRUE(a.nodeAffinity.has_value());
  const auto& required = a.nodeAffinity->requiredDuringSchedulingIgnoredDuringExecution;
  ASSERT_TRUE(required.has_value());
  EXPECT_TRUE(required->matches({{"zone", "b"}}, "n1"));
  EXPECT_FALSE(required->matches({{"zone", "c"}}, "n1"));
  const auto& preferred = a.nodeAffinity->preferredDuringSchedulingIgnoredDuringExecution;
  ASSERT_EQ(preferred.size(), 1u);
  EXPECT_EQ(preferred[0].weight, 20);
  EXPECT_TRUE(preferred[0].preference.matches({{"disk", "x"}}, "n1"));

  ASSERT_TRUE(a.podAffinity.has_value());
  ASSERT_EQ(a.podAffinity->requiredDuringSchedulingIgnoredDuringExecution.size(), 1u);
  const PodAffinityTerm& t = a.podAffinity->requiredDuringSchedulingIgnoredDuringExecution[0];
  EXPECT_EQ(t.labelSelector, (LabelSelector{{{"app", "cache"}}, {}}));
  EXPECT_THAT(t.namespaces, ElementsAre("prod", "shared"));
  EXPECT_EQ(t.topologyKey, "topology.kubernetes.io/zone");
  EXPECT_EQ(t.namespaceSelector, (LabelSelector{{{"team", "a"}}, {}}));
  EXPECT_THAT(t.matchLabelKeys, ElementsAre("pod-template-hash"));
  EXPECT_THAT(t.mismatchLabelKeys, ElementsAre("tenant"));
  EXPECT_TRUE(a.podAffinity->preferredDuringSchedulingIgnoredDuringExecution.empty());

  ASSERT_TRUE(a.podAntiAffinity.has_value());
  EXPECT_TRUE(a.podAntiAffinity->requiredDuringSchedulingIgnoredDuringExecution.empty());
  ASSERT_EQ(a.podAntiAffinity->preferredDuringSchedulingIgnoredDuringExecution.size(), 1u);
  const auto& w = a.podAntiAffinity->preferredDuringSchedulingIgnoredDuringExecution[0];
  EXPECT_EQ(w.weight, 100);
  EXPECT_EQ(w.podAffinityTerm.topologyKey, "kubernetes.io/hostname");
  EXPECT_TRUE(Selector::compile(w.podAffinityTerm.labelSelector).matches({{"app", "web"}}));
  EXPECT_FALSE(w.podAffinityTerm.namespaceSelector.has_value());
}

TEST(PodTest, DecodesTopologySpread) {
  const auto p = decodeString<Pod>(kFullPod);
  ASSERT_EQ(p.spec.topologySpreadConstraints.size(), 1u);
  const auto& c = p.spec.topologySpreadConstraints[0];
  EXPECT_EQ(c.maxSkew, 2);
  EXPECT_EQ(c.topologyKey, "topology.kubernetes.io/zone");
  EXPECT_EQ(c.whenUnsatisfiable, kDoNotSchedule);
  EXPECT_EQ(c.labelSelector, (LabelSelector{{{"app", "web"}}, {}}));
  EXPECT_EQ(c.minDomains, 3);
  EXPECT_EQ(c.nodeAffinityPolicy, "Ignore");
  EXPECT_EQ(c.nodeTaintsPolicy, "Honor");
  EXPECT_THAT(c.matchLabelKeys, ElementsAre("pod-template-hash"));
}

TEST(PodTest, DecodesContainers) {
  const auto p = decodeString<Pod>(kFullPod);
  ASSERT_EQ(p.spec.containers.size(), 1u);
  const Container& app = p.spec.containers[0];
  EXPECT_EQ(app.name, "app");
  EXPECT_EQ(app.image, "nginx:1.27");
  EXPECT_EQ(app.resources.requests.at("cpu").milliValue(), 500);
  EXPECT_EQ(app.resources.requests.at("memory").value(), 1'073'741'824);
  EXPECT_EQ(app.resources.limits.at("cpu").value(), 2);
  EXPECT_FALSE(app.isRestartable());
  ASSERT_EQ(app.ports.size(), 2u);
  EXPECT_EQ(app.ports[0].name, "http");
  EXPECT_EQ(app.ports[0].containerPort, 80);
  EXPECT_EQ(app.ports[0].hostPort, 8080);
  EXPECT_EQ(app.ports[0].hostIP, "10.0.0.1");
  EXPECT_EQ(app.ports[0].protocol, "UDP");
  EXPECT_EQ(app.ports[1].containerPort, 9090);
  EXPECT_EQ(app.ports[1].hostPort, 0);
  EXPECT_EQ(app.ports[1].protocol, "TCP");

  ASSERT_EQ(p.spec.initContainers.size(), 2u);
  EXPECT_FALSE(p.spec.initContainers[0].isRestartable());
  EXPECT_FALSE(p.spec.initContainers[0].restartPolicy.has_value());
  EXPECT_TRUE(p.spec.initContainers[1].isRestartable());
  EXPECT_EQ(p.spec.initContainers[1].resources.limits.at("memory").value(), 134'217'728);
}

TEST(PodTest, DecodesVolumes) {
  const auto p = decodeString<Pod>(kFullPod);
  const auto& v = p.spec.volumes;
  ASSERT_EQ(v.size(), 9u);
  struct Case {
    size_t index;
    std::string name;
    int sources;  // how many source members are set
  };
  auto countSources = [](const Volume& vol) {
    return int(vol.persistentVolumeClaim.has_value()) + int(vol.gcePersistentDisk.has_value()) +
           int(vol.awsElasticBlockStore.has_value()) + int(vol.rbd.has_value()) +
           int(vol.iscsi.has_value()) + int(vol.ephemeral) + int(vol.csi.has_value());
  };
  const std::vector<Case> cases = {{0, "data", 1},    {1, "pd", 1},      {2, "ebs", 1},
                                   {3, "ceph", 1},    {4, "ceph2", 1},   {5, "lun", 1},
                                   {6, "scratch", 1}, {7, "secrets", 1}, {8, "cfg", 0}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(v[c.index].name, c.name);
    EXPECT_EQ(countSources(v[c.index]), c.sources);
  }
  EXPECT_EQ(v[0].persistentVolumeClaim->claimName, "data-web-0");
  EXPECT_TRUE(v[0].persistentVolumeClaim->readOnly);
  EXPECT_EQ(v[1].gcePersistentDisk->pdName, "disk-1");
  EXPECT_TRUE(v[1].gcePersistentDisk->readOnly);
  EXPECT_EQ(v[2].awsElasticBlockStore->volumeID, "vol-123");
  EXPECT_FALSE(v[2].awsElasticBlockStore->readOnly);
  EXPECT_THAT(v[3].rbd->monitors, ElementsAre("m1:6789", "m2:6789"));
  EXPECT_EQ(v[3].rbd->image, "img");
  EXPECT_EQ(v[3].rbd->pool, "rbd");
  EXPECT_EQ(v[4].rbd->pool, "fast");
  EXPECT_TRUE(v[4].rbd->readOnly);
  EXPECT_EQ(v[5].iscsi->targetPortal, "10.0.0.2:3260");
  EXPECT_EQ(v[5].iscsi->iqn, "iqn.2001-04.com.example:t");
  EXPECT_EQ(v[5].iscsi->lun, 3);
  EXPECT_TRUE(v[6].ephemeral);
  EXPECT_EQ(ephemeralVolumeClaimName(p, v[6]), "web-0-scratch");
  EXPECT_EQ(v[7].csi->driver, "secrets-store.csi.k8s.io");
  EXPECT_TRUE(v[7].csi->readOnly);
}

TEST(PodTest, DecodesAzureDiskAndCinderVolumes) {
  const auto p = decodeString<Pod>(R"({"spec": {"volumes": [
      {"name": "az", "azureDisk": {"diskName": "d1", "diskURI": "uri://d1"}},
      {"name": "os", "cinder": {"volumeID": "c1", "readOnly": true}}]}})");
  const auto& v = p.spec.volumes;
  ASSERT_EQ(v.size(), 2u);
  ASSERT_TRUE(v[0].azureDisk.has_value());
  EXPECT_EQ(v[0].azureDisk->diskName, "d1");
  EXPECT_EQ(v[0].azureDisk->diskURI, "uri://d1");
  EXPECT_FALSE(v[0].cinder.has_value());
  ASSERT_TRUE(v[1].cinder.has_value());
  EXPECT_EQ(v[1].cinder->volumeID, "c1");
  EXPECT_TRUE(v[1].cinder->readOnly);
}

TEST(PodTest, DecodesStatus) {
  const auto p = decodeString<Pod>(kFullPod);
  EXPECT_EQ(p.status.phase, kPodPending);
  EXPECT_EQ(p.status.nominatedNodeName, "node-3");
  EXPECT_EQ(p.status.startTime, "2026-01-01T00:00:00Z");
  const PodCondition* c = p.condition(kPodConditionScheduled);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, "False");
  EXPECT_EQ(c->reason, kPodReasonUnschedulable);
  EXPECT_EQ(c->message, "0/3 nodes are available");
  EXPECT_EQ(c->lastTransitionTime, "2026-01-01T00:00:01Z");
  EXPECT_EQ(p.condition("Ready"), nullptr);
}

TEST(PodTest, Defaults) {
  struct Case {
    std::string name;
    std::string json;
    std::string schedulerName;
  };
  const std::vector<Case> cases = {
      {"missingSpec", R"({"metadata": {"name": "p"}})", "default-scheduler"},
      {"missingSchedulerName", R"({"spec": {"containers": []}})", "default-scheduler"},
      {"emptySchedulerName", R"({"spec": {"schedulerName": ""}})", "default-scheduler"},
      {"nullSchedulerName", R"({"spec": {"schedulerName": null}})", "default-scheduler"},
      {"explicit", R"({"spec": {"schedulerName": "other"}})", "other"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const auto p = decodeString<Pod>(c.json);
    EXPECT_EQ(p.spec.schedulerName, c.schedulerName);
    EXPECT_FALSE(p.spec.priority.has_value());
    EXPECT_EQ(podPriority(p), 0);
    EXPECT_FALSE(p.spec.preemptionPolicy.has_value());
    EXPECT_FALSE(p.spec.affinity.has_value());
    EXPECT_FALSE(p.spec.terminationGracePeriodSeconds.has_value());
    EXPECT_FALSE(p.status.startTime.has_value());
  }
  const auto port = decodeString<ContainerPort>(R"({"containerPort": 53, "protocol": ""})");
  EXPECT_EQ(port.protocol, "TCP");
  const auto rbd = decodeString<RBDVolumeSource>(R"({"pool": ""})");
  EXPECT_EQ(rbd.pool, "rbd");
}

// The fields of a 1.37 apiserver's pod that NodeDeclaredFeatures and DynamicResources read.
TEST(PodTest, DecodesDeclaredFeatureAndResourceClaimFields) {
  const auto p = decodeString<Pod>(R"({
    "metadata": {"name": "trainer", "namespace": "ml"},
    "spec": {
      "hostNetwork": true, "hostUsers": false,
      "initContainers": [{"name": "init", "restartPolicyRules": [
        {"action": "Restart", "exitCodes": {"operator": "In", "values": [42]}}]}],
      "containers": [{"name": "main", "restartPolicy": "Never",
        "restartPolicyRules": [{"action": "RestartAllContainers",
                                "exitCodes": {"operator": "NotIn", "values": [0]}}],
        "volumeMounts": [{"name": "data", "mountPath": "/data",
                          "bindMountOptions": ["noexec", "nosuid"]},
                         {"name": "cfg", "mountPath": "/etc/cfg", "readOnly": true}]}],
      "ephemeralContainers": [{"name": "debug", "targetContainerName": "main",
        "volumeMounts": [{"name": "data", "mountPath": "/d", "bindMountOptions": ["nodev"]}]}],
      "resourceClaims": [{"name": "gpu", "resourceClaimName": "gpu-claim"},
                         {"name": "scratch", "resourceClaimTemplateName": "scratch-template"}]},
    "status": {"resourceClaimStatuses": [{"name": "scratch", "resourceClaimName": "trainer-scratch-x7k"},
                                         {"name": "gpu"}]}})");
  const PodSpec& s = p.spec;
  EXPECT_TRUE(s.hostNetwork);
  EXPECT_EQ(s.hostUsers, false);
  ASSERT_EQ(s.containers.size(), 1u);
  EXPECT_THAT(s.containers[0].restartPolicyRules,
              ElementsAre(ContainerRestartRule{"RestartAllContainers"}));
  EXPECT_THAT(s.initContainers[0].restartPolicyRules, ElementsAre(ContainerRestartRule{"Restart"}));
  EXPECT_THAT(s.containers[0].volumeMounts,
              ElementsAre(VolumeMount{"data", "/data", {"noexec", "nosuid"}},
                          VolumeMount{"cfg", "/etc/cfg", {}}));
  ASSERT_EQ(s.ephemeralContainers.size(), 1u);
  EXPECT_EQ(s.ephemeralContainers[0].name, "debug");
  EXPECT_THAT(s.ephemeralContainers[0].volumeMounts,
              ElementsAre(VolumeMount{"data", "/d", {"nodev"}}));
  EXPECT_THAT(
      s.resourceClaims,
      ElementsAre(PodResourceClaim{"gpu", std::string("gpu-claim"), std::nullopt},
                  PodResourceClaim{"scratch", std::nullopt, std::string("scratch-template")}));
  EXPECT_THAT(p.status.resourceClaimStatuses,
              ElementsAre(PodResourceClaimStatus{"scratch", std::string("trainer-scratch-x7k")},
                          PodResourceClaimStatus{"gpu", std::nullopt}));

  const auto bare = decodeString<Pod>(R"({"spec": {"containers": [{"name": "c"}]}})");
  EXPECT_FALSE(bare.spec.hostNetwork);
  EXPECT_FALSE(bare.spec.hostUsers.has_value());
  EXPECT_TRUE(bare.spec.containers[0].restartPolicyRules.empty());
  EXPECT_TRUE(bare.spec.containers[0].volumeMounts.empty());
  EXPECT_TRUE(bare.spec.ephemeralContainers.empty());
  EXPECT_TRUE(bare.spec.resourceClaims.empty());
  EXPECT_TRUE(bare.status.resourceClaimStatuses.empty());
}

// What else DynamicResources reads of a pod: which claims (and requests) a container uses, and
// the claim the scheduler made for extended resources backed by DRA (KEP 5004). The pod of the
// DRA concept page, with an init container and a status as the scheduler writes it.
TEST(PodTest, DecodesContainerClaimsAndTheExtendedResourceClaimStatus) {
  const auto p = decodeString<Pod>(R"({
    "metadata": {"name": "pod-with-cats"},
    "spec": {
      "initContainers": [{"name": "setup", "resources": {"claims": [{"name": "cat-0", "request": "req-0"}]}}],
      "containers": [
        {"name": "container0", "image": "ubuntu:20.04",
         "resources": {"requests": {"cpu": "1"}, "claims": [{"name": "cat-0"}]}},
        {"name": "container1", "image": "ubuntu:20.04",
         "resources": {"limits": {"example.com/gpu": "2"}, "claims": [{"name": "cat-1"}]}}],
      "resourceClaims": [{"name": "cat-0", "resourceClaimTemplateName": "large-black-cat-claim-template"},
                         {"name": "cat-1", "resourceClaimTemplateName": "large-black-cat-claim-template"}]},
    "status": {"extendedResourceClaimStatus": {
      "resourceClaimName": "pod-with-cats-extended-resources-x8z2k",
      "requestMappings": [{"containerName": "container1", "resourceName": "example.com/gpu",
                           "requestName": "container-1-request-0"}]}}})");
  EXPECT_THAT(p.spec.initContainers[0].resources.claims,
              ElementsAre(ContainerResourceClaim{"cat-0", "req-0"}));
  EXPECT_THAT(p.spec.containers[0].resources.claims,
              ElementsAre(ContainerResourceClaim{"cat-0", ""}));
  EXPECT_EQ(p.spec.containers[0].resources.requests.at("cpu"), Quantity::parse("1"));
  EXPECT_THAT(p.spec.containers[1].resources.claims,
              ElementsAre(ContainerResourceClaim{"cat-1", ""}));
  ASSERT_TRUE(p.status.extendedResourceClaimStatus.has_value());
  EXPECT_EQ(p.status.extendedResourceClaimStatus->resourceClaimName,
            "pod-with-cats-extended-resources-x8z2k");
  EXPECT_THAT(p.status.extendedResourceClaimStatus->requestMappings,
              ElementsAre(ContainerExtendedResourceRequest{"container1", "example.com/gpu",
                                                           "container-1-request-0"}));

  const auto bare = decodeString<Pod>(R"({"spec": {"containers": [{"name": "c"}]}})");
  EXPECT_TRUE(bare.spec.containers[0].resources.claims.empty());
  EXPECT_FALSE(bare.status.extendedResourceClaimStatus.has_value());
}

TEST(PodTest, MalformedInputNamesTheField) {
  struct Case {
    std::string name;
    std::string json;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"containersNotArray", R"({"spec": {"containers": {"name": "a"}}})", "spec.containers:"},
      {"badRequest", R"({"spec": {"containers": [{"resources": {"requests": {"cpu": "1x"}}}]}})",
       "spec.containers.resources.requests.cpu: quantity \"1x\": unknown suffix \"x\""},
      {"badInitLimit",
       R"({"spec": {"initContainers": [{"resources": {"limits": {"memory": "lots"}}}]}})",
       "spec.initContainers.resources.limits.memory: quantity \"lots\""},
      {"badOverhead", R"({"spec": {"overhead": {"cpu": [1]}}})", "spec.overhead.cpu: quantity"},
      {"portString", R"({"spec": {"containers": [{"ports": [{"containerPort": "80"}]}]}})",
       "spec.containers.ports.containerPort:"},
      {"tolerationOperatorNumber", R"({"spec": {"tolerations": [{"operator": 1}]}})",
       "spec.tolerations.operator:"},
      {"affinityBadOperator",
       R"({"spec": {"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
          {"labelSelector": {"matchExpressions": [{"key": "a", "operator": "Like"}]}}]}}}})",
       "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution.labelSelector."
       "matchExpressions.operator: unknown label selector operator \"Like\""},
      {"nodeAffinityBadOperator",
       R"({"spec": {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
          {"nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "Equal"}]}]}}}}})",
       "unknown node selector operator \"Equal\""},
      {"spreadSelectorValues",
       R"({"spec": {"topologySpreadConstraints": [{"labelSelector": {"matchExpressions": [
          {"key": "a", "operator": "In"}]}}]}})",
       "spec.topologySpreadConstraints.labelSelector.matchExpressions.values:"},
      {"maxSkewString", R"({"spec": {"topologySpreadConstraints": [{"maxSkew": "1"}]}})",
       "spec.topologySpreadConstraints.maxSkew:"},
      {"ephemeralString", R"({"spec": {"volumes": [{"name": "v", "ephemeral": "yes"}]}})",
       "spec.volumes.ephemeral: expected an object"},
      {"pvcClaimNameNumber",
       R"({"spec": {"volumes": [{"persistentVolumeClaim": {"claimName": 5}}]}})",
       "spec.volumes.persistentVolumeClaim.claimName:"},
      {"gateNameNumber", R"({"spec": {"schedulingGates": [{"name": 1}]}})",
       "spec.schedulingGates.name:"},
      {"priorityString", R"({"spec": {"priority": "high"}})", "spec.priority:"},
      {"priorityBool", R"({"spec": {"priority": true}})",
       "spec.priority: expected an integer in range, got boolean"},
      {"maxSkewFraction", R"({"spec": {"topologySpreadConstraints": [{"maxSkew": 1.5}]}})",
       "spec.topologySpreadConstraints.maxSkew: expected an integer in range, got 1.5"},
      {"hostPortOutOfRange", R"({"spec": {"containers": [{"ports": [{"hostPort": 4294967296}]}]}})",
       "spec.containers.ports.hostPort: expected an integer in range, got 4294967296"},
      {"unknownNestedFieldIgnored",
       R"({"spec": {"terminationGracePeriodSeconds": -1, "x": )"
       R"({"spec": {"priority": "p"}}}})",
       "<no error>"},
      {"nodeSelectorArray", R"({"spec": {"nodeSelector": ["a"]}})", "spec.nodeSelector:"},
      {"conditionsObject", R"({"status": {"conditions": {"type": "Ready"}}})",
       "status.conditions:"},
      {"restartPolicyBool", R"({"spec": {"initContainers": [{"restartPolicy": true}]}})",
       "spec.initContainers.restartPolicy:"},
      {"podLevelRequestsBadQuantity", R"({"spec": {"resources": {"requests": {"cpu": "x"}}}})",
       "spec.resources.requests.cpu: quantity"},
      {"podLevelResourcesArray", R"({"spec": {"resources": []}})",
       "spec.resources.expected an object"},
      {"containerStatusAllocatedBadQuantity",
       R"({"status": {"containerStatuses": [{"name": "c", "allocatedResources": {"memory": "1Q"}}]}})",
       "status.containerStatuses.allocatedResources.memory: quantity"},
      {"initContainerStatusResourcesBad",
       R"({"status": {"initContainerStatuses": [{"resources": {"requests": {"cpu": true}}}]}})",
       "status.initContainerStatuses.resources.requests.cpu:"},
      {"containerStatusNameNumber", R"({"status": {"containerStatuses": [{"name": 3}]}})",
       "status.containerStatuses.name:"},
      {"podAllocatedResourcesBad", R"({"status": {"allocatedResources": {"cpu": "-"}}})",
       "status.allocatedResources.cpu: quantity"},
      {"podStatusResourcesString", R"({"status": {"resources": "big"}})",
       "status.resources.expected an object"},
      {"resizeNumber", R"({"status": {"resize": 1}})", "status.resize:"},
      {"restartRuleActionNumber",
       R"({"spec": {"containers": [{"restartPolicyRules": [{"action": 1}]}]}})",
       "spec.containers.restartPolicyRules.action:"},
      {"restartRulesObject",
       R"({"spec": {"initContainers": [{"restartPolicyRules": {"action": "Restart"}}]}})",
       "spec.initContainers.restartPolicyRules:"},
      {"bindMountOptionsString",
       R"({"spec": {"containers": [{"volumeMounts": [{"bindMountOptions": "noexec"}]}]}})",
       "spec.containers.volumeMounts.bindMountOptions:"},
      {"ephemeralMountName",
       R"({"spec": {"ephemeralContainers": [{"volumeMounts": [{"name": 7}]}]}})",
       "spec.ephemeralContainers.volumeMounts.name:"},
      {"hostNetworkString", R"({"spec": {"hostNetwork": "true"}})", "spec.hostNetwork:"},
      {"hostUsersNumber", R"({"spec": {"hostUsers": 0}})", "spec.hostUsers:"},
      {"claimNameNumber", R"({"spec": {"resourceClaims": [{"name": 1}]}})",
       "spec.resourceClaims.name:"},
      {"claimTemplateObject",
       R"({"spec": {"resourceClaims": [{"name": "a", "resourceClaimTemplateName": {}}]}})",
       "spec.resourceClaims.resourceClaimTemplateName:"},
      {"claimStatusesObject", R"({"status": {"resourceClaimStatuses": {"name": "a"}}})",
       "status.resourceClaimStatuses:"},
      {"claimStatusClaimNumber",
       R"({"status": {"resourceClaimStatuses": [{"name": "a", "resourceClaimName": 5}]}})",
       "status.resourceClaimStatuses.resourceClaimName:"},
      {"containerClaimsObject",
       R"({"spec": {"containers": [{"resources": {"claims": {"name": "a"}}}]}})",
       "spec.containers.resources.claims:"},
      {"initContainerClaimRequestNumber",
       R"({"spec": {"initContainers": [{"resources": {"claims": [{"name": "a", "request": 1}]}}]}})",
       "spec.initContainers.resources.claims.request:"},
      {"extendedClaimStatusString", R"({"status": {"extendedResourceClaimStatus": "x"}})",
       "status.extendedResourceClaimStatus"},
      {"extendedClaimMappingName",
       R"({"status": {"extendedResourceClaimStatus": {"requestMappings": [{"containerName": 1}]}}})",
       "status.extendedResourceClaimStatus.requestMappings.containerName:"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_THAT(decodeError<Pod>(c.json), HasSubstr(c.message));
  }
}

TEST(PodTest, DecodesPodLevelResourcesAndResizeStatus) {
  const Pod p = decode<Pod>(nlohmann::json::parse(R"({
    "spec": {"resources": {"requests": {"cpu": "2", "memory": "1Gi"}, "limits": {"cpu": "4"}},
             "containers": [{"name": "app"}], "initContainers": [{"name": "init"}]},
    "status": {
      "conditions": [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}],
      "resize": "Infeasible",
      "containerStatuses": [{"name": "app", "allocatedResources": {"cpu": "1500m"},
                             "resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "2"}}}],
      "initContainerStatuses": [{"name": "init", "allocatedResources": {"memory": "64Mi"}}],
      "allocatedResources": {"cpu": "2500m"},
      "resources": {"requests": {"cpu": "2"}}}})"));
  ASSERT_TRUE(p.spec.resources);
  EXPECT_EQ(p.spec.resources->requests.at("memory"), Quantity::parse("1Gi"));
  EXPECT_EQ(p.spec.resources->limits.at("cpu"), Quantity::parse("4"));
  ASSERT_EQ(p.status.containerStatuses.size(), 1u);
  EXPECT_EQ(p.status.containerStatuses[0].allocatedResources.at("cpu"), Quantity::parse("1.5"));
  ASSERT_TRUE(p.status.containerStatuses[0].resources);
  EXPECT_EQ(p.status.containerStatuses[0].resources->limits.at("cpu"), Quantity::parse("2"));
  ASSERT_NE(p.containerStatus("init"), nullptr);
  EXPECT_FALSE(p.containerStatus("init")->resources);
  EXPECT_EQ(p.containerStatus("init")->allocatedResources.at("memory"), Quantity::parse("64Mi"));
  EXPECT_EQ(p.containerStatus("app"), &p.status.containerStatuses[0]);
  EXPECT_EQ(p.containerStatus("none"), nullptr);
  EXPECT_EQ(p.status.allocatedResources.at("cpu"), Quantity::parse("2.5"));
  ASSERT_TRUE(p.status.resources);
  EXPECT_EQ(p.status.resources->requests.at("cpu"), Quantity::parse("2"));
  EXPECT_EQ(p.status.resize, "Infeasible");
  ASSERT_NE(p.condition(kPodConditionResizePending), nullptr);
  EXPECT_EQ(p.condition(kPodConditionResizePending)->reason, kPodReasonInfeasible);

  const Pod bare = decode<Pod>(nlohmann::json::parse(R"({"spec": {}})"));
  EXPECT_FALSE(bare.spec.resources);
  EXPECT_FALSE(bare.status.resources);
}

TEST(PodTest, EncodesCondition) {
  const nlohmann::json full =
      PodCondition{"PodScheduled", "False", "Unschedulable", "no nodes", "2026-01-01T00:00:00Z"};
  EXPECT_EQ(full, nlohmann::json::parse(R"({"type": "PodScheduled", "status": "False",
      "reason": "Unschedulable", "message": "no nodes", "lastTransitionTime": "2026-01-01T00:00:00Z"})"));
  const nlohmann::json minimal = PodCondition{"Ready", "True", "", "", ""};
  EXPECT_EQ(minimal, nlohmann::json::parse(R"({"type": "Ready", "status": "True"})"));
  EXPECT_EQ(decode<PodCondition>(full).reason, "Unschedulable");
}

}  // namespace
}  // namespace ksched::api
