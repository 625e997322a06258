#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <ksched/api/pod.h>
#include <ksched/api/pod_group.h>

#include "tests/support/api_test_util.h"

namespace ksched::api {
namespace {

using nlohmann::json;
using testing::decodeError;
using testing::decodeString;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// A gang of 8 as a 1.37 apiserver serves it (scheduling.k8s.io/v1beta1, every gate on),
// scheduled once.
constexpr const char* kV1beta1Group = R"({
  "apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
  "metadata": {"name": "train-0", "namespace": "ml", "uid": "6f0c0d52-1b8e-4d6c-9f0e-2f7a9a1c7b11",
               "resourceVersion": "4711", "generation": 2,
               "creationTimestamp": "2026-11-20T10:00:00Z",
               "ownerReferences": [{"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "Workload",
                                    "name": "train", "uid": "w-1", "controller": true}]},
  "spec": {
    "parentCompositePodGroupName": "train-root",
    "workloadRef": {"workloadName": "train", "templateName": "workers"},
    "schedulingPolicy": {"gang": {"minCount": 8}},
    "schedulingConstraints": {"topology": [{"key": "topology.kubernetes.io/rack"}]},
    "resourceClaims": [{"name": "fabric", "resourceClaimTemplateName": "fabric-template"},
                       {"name": "shared", "resourceClaimName": "shared-claim"}],
    "disruptionMode": {"all": {}},
    "priorityClassName": "training",
    "priority": 1000,
    "preemptionPolicy": "Never"
  },
  "status": {
    "conditions": [{"type": "PodGroupInitiallyScheduled", "status": "True",
                    "observedGeneration": 2, "lastTransitionTime": "2026-11-20T10:00:05Z",
                    "reason": "Scheduled", "message": "all pods placed"}],
    "resourceClaimStatuses": [{"name": "fabric", "resourceClaimName": "train-0-fabric-x7k2p"}]
  }
})";

// The same group as a 1.36 apiserver serves it (v1alpha2: podGroupTemplateRef, string
// disruptionMode, condition PodGroupScheduled; no parent, no preemptionPolicy in that
// version, kept here to show both shapes fill the same members).
constexpr const char* kV1alpha2Group = R"({
  "apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
  "metadata": {"name": "train-0", "namespace": "ml", "uid": "6f0c0d52-1b8e-4d6c-9f0e-2f7a9a1c7b11",
               "resourceVersion": "4711", "generation": 2,
               "creationTimestamp": "2026-11-20T10:00:00Z",
               "ownerReferences": [{"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "Workload",
                                    "name": "train", "uid": "w-1", "controller": true}]},
  "spec": {
    "parentCompositePodGroupName": "train-root",
    "podGroupTemplateRef": {"workload": {"workloadName": "train", "podGroupTemplateName": "workers"}},
    "schedulingPolicy": {"gang": {"minCount": 8}},
    "schedulingConstraints": {"topology": [{"key": "topology.kubernetes.io/rack"}]},
    "resourceClaims": [{"name": "fabric", "resourceClaimTemplateName": "fabric-template"},
                       {"name": "shared", "resourceClaimName": "shared-claim"}],
    "disruptionMode": "PodGroup",
    "priorityClassName": "training",
    "priority": 1000,
    "preemptionPolicy": "Never"
  },
  "status": {
    "conditions": [{"type": "PodGroupScheduled", "status": "True",
                    "observedGeneration": 2, "lastTransitionTime": "2026-11-20T10:00:05Z",
                    "reason": "Scheduled", "message": "all pods placed"}],
    "resourceClaimStatuses": [{"name": "fabric", "resourceClaimName": "train-0-fabric-x7k2p"}]
  }
})";

TEST(PodGroupTest, DecodesV1beta1) {
  const auto pg = decodeString<PodGroup>(kV1beta1Group);
  EXPECT_EQ(pg.apiVersion, "scheduling.k8s.io/v1beta1");
  EXPECT_EQ(pg.metadata.key(), "ml/train-0");
  EXPECT_EQ(pg.metadata.generation, 2);
  ASSERT_EQ(pg.metadata.ownerReferences.size(), 1u);
  EXPECT_EQ(pg.metadata.ownerReferences[0].kind, "Workload");
  EXPECT_EQ(pg.spec.parentCompositePodGroupName, "train-root");
  ASSERT_TRUE(pg.spec.workloadRef);
  EXPECT_EQ(*pg.spec.workloadRef, (WorkloadReference{"train", "workers"}));
  EXPECT_TRUE(pg.spec.schedulingPolicy.gang());
  EXPECT_EQ(pg.spec.schedulingPolicy.minCount(), 8);
  EXPECT_THAT(pg.spec.topologyKeys, ElementsAre("topology.kubernetes.io/rack"));
  ASSERT_EQ(pg.spec.resourceClaims.size(), 2u);
  EXPECT_EQ(pg.spec.resourceClaims[0],
            (PodGroupResourceClaim{"fabric", std::nullopt, "fabric-template"}));
  EXPECT_EQ(pg.spec.resourceClaims[1],
            (PodGroupResourceClaim{"shared", "shared-claim", std::nullopt}));
  EXPECT_EQ(pg.spec.disruptionMode, DisruptionMode::kAll);
  EXPECT_EQ(pg.spec.priorityClassName, "training");
  EXPECT_EQ(pg.spec.priority, 1000);
  EXPECT_EQ(pg.spec.preemptionPolicy, "Never");
  EXPECT_EQ(pg.initiallyScheduledType(), kPodGroupInitiallyScheduled);
  const Condition* c = pg.status.condition(pg.initiallyScheduledType());
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(*c, (Condition{"PodGroupInitiallyScheduled", "True", "Scheduled", "all pods placed",
                           "2026-11-20T10:00:05Z", 2}));
  EXPECT_EQ(pg.status.condition(kPodGroupDisruptionTarget), nullptr);
  ASSERT_EQ(pg.status.resourceClaimStatuses.size(), 1u);
  EXPECT_EQ(pg.status.resourceClaimStatuses[0],
            (PodGroupResourceClaimStatus{"fabric", "train-0-fabric-x7k2p"}));
}

TEST(PodGroupTest, V1alpha2DecodesToTheSameModel) {
  const auto beta = decodeString<PodGroup>(kV1beta1Group);
  const auto alpha = decodeString<PodGroup>(kV1alpha2Group);
  EXPECT_EQ(alpha.apiVersion, "scheduling.k8s.io/v1alpha2");
  EXPECT_EQ(alpha.metadata, beta.metadata);
  EXPECT_EQ(alpha.spec, beta.spec);
  EXPECT_EQ(alpha.initiallyScheduledType(), kPodGroupScheduledV1alpha2);
  const Condition* c = alpha.status.condition(alpha.initiallyScheduledType());
  ASSERT_NE(c, nullptr);
  Condition renamed = *c;
  renamed.type = std::string(kPodGroupInitiallyScheduled);
  EXPECT_EQ(renamed, beta.status.conditions[0]);
  EXPECT_EQ(alpha.status.resourceClaimStatuses, beta.status.resourceClaimStatuses);
}

TEST(PodGroupTest, DisruptionModeOfEveryShape) {
  auto mode = [](const std::string& version, const std::string& value) {
    const std::string body = value.empty() ? "" : R"(, "disruptionMode": )" + value;
    return decodeString<PodGroup>(R"({"apiVersion": "scheduling.k8s.io/)" + version +
                                  R"(", "spec": {"schedulingPolicy": {"basic": {}})" + body + "}}")
        .spec.disruptionMode;
  };
  EXPECT_EQ(mode("v1beta1", ""), DisruptionMode::kSingle);
  EXPECT_EQ(mode("v1beta1", R"({"single": {}})"), DisruptionMode::kSingle);
  EXPECT_EQ(mode("v1alpha3", R"({"all": {}})"), DisruptionMode::kAll);
  EXPECT_EQ(mode("v1alpha2", ""), DisruptionMode::kSingle);
  EXPECT_EQ(mode("v1alpha2", R"("Pod")"), DisruptionMode::kSingle);
  EXPECT_EQ(mode("v1alpha2", R"("PodGroup")"), DisruptionMode::kAll);
}

TEST(PodGroupTest, BasicPolicy) {
  const auto pg = decodeString<PodGroup>(R"({
    "apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
    "metadata": {"name": "web", "namespace": "default"},
    "spec": {"workloadRef": {"workloadName": "web", "templateName": "all"},
             "schedulingPolicy": {"basic": {}}, "disruptionMode": {"single": {}},
             "preemptionPolicy": "PreemptLowerPriority"}})");
  EXPECT_FALSE(pg.spec.schedulingPolicy.gang());
  EXPECT_EQ(pg.spec.schedulingPolicy.minCount(), 1);
  EXPECT_FALSE(pg.spec.parentCompositePodGroupName);
  EXPECT_TRUE(pg.spec.topologyKeys.empty());
  EXPECT_FALSE(pg.spec.priority);
  EXPECT_TRUE(pg.status.conditions.empty());
  EXPECT_EQ(pg.status.condition(pg.initiallyScheduledType()), nullptr);
}

TEST(PodGroupTest, ListItemsTakeTheListedVersion) {
  // A LIST of a built-in kind: the items carry no apiVersion.
  const json item = json::parse(R"({"metadata": {"name": "g"},
      "spec": {"podGroupTemplateRef": {"workload": {"workloadName": "w", "podGroupTemplateName": "t"}},
               "schedulingPolicy": {"gang": {"minCount": 2}}, "disruptionMode": "PodGroup"}})");
  const PodGroup pg = decodePodGroup(item, "scheduling.k8s.io/v1alpha2");
  EXPECT_EQ(pg.apiVersion, "scheduling.k8s.io/v1alpha2");
  EXPECT_EQ(pg.spec.workloadRef, (WorkloadReference{"w", "t"}));
  EXPECT_EQ(pg.spec.disruptionMode, DisruptionMode::kAll);
  // The object's own apiVersion wins over the listed one.
  json own = json::parse(kV1beta1Group);
  EXPECT_EQ(decodePodGroup(own, "scheduling.k8s.io/v1alpha2").apiVersion,
            "scheduling.k8s.io/v1beta1");
  EXPECT_THAT(decodeError<PodGroup>(item.dump()), StartsWith("apiVersion: missing"));
}

TEST(PodGroupTest, Errors) {
  auto pgError = [](const std::string& spec, const std::string& version = "v1beta1") {
    return decodeError<PodGroup>(R"({"apiVersion": "scheduling.k8s.io/)" + version +
                                 R"(", "metadata": {"name": "g"}, "spec": )" + spec + "}");
  };
  EXPECT_EQ(pgError(R"({"schedulingPolicy": {"basic": {}, "gang": {"minCount": 2}}})"),
            "spec.schedulingPolicy: exactly one of basic, gang must be set, got both");
  EXPECT_EQ(pgError(R"({"schedulingPolicy": {}})"),
            "spec.schedulingPolicy: exactly one of basic, gang must be set");
  EXPECT_EQ(pgError(R"({"workloadRef": {"workloadName": "w", "templateName": "t"}})"),
            "spec.schedulingPolicy: missing (exactly one of basic, gang)");
  EXPECT_THAT(decodeError<PodGroup>(
                  R"({"apiVersion": "scheduling.k8s.io/v1beta1", "metadata": {"name": "g"}})"),
              StartsWith("spec.schedulingPolicy: missing"));
  EXPECT_EQ(pgError(R"({"schedulingPolicy": {"gang": {"minCount": 0}}})"),
            "spec.schedulingPolicy.gang.minCount: must be at least 1, got 0");
  EXPECT_THAT(pgError(R"({"schedulingPolicy": {"gang": {}}})"),
              StartsWith("spec.schedulingPolicy.gang.minCount: missing"));
  EXPECT_THAT(pgError(R"({"schedulingPolicy": {"gang": {"minCount": "8"}}})"),
              StartsWith("spec.schedulingPolicy.gang.minCount: expected an integer"));
  EXPECT_THAT(pgError(R"({"schedulingPolicy": {"gang": {"minCount": 4294967297}}})"),
              StartsWith("spec.schedulingPolicy.gang.minCount: expected an integer in range"));
  EXPECT_EQ(pgError(R"({"schedulingPolicy": {"basic": true}})"),
            "spec.schedulingPolicy.basic: expected an object, got boolean");
  EXPECT_EQ(pgError(R"({"schedulingPolicy": "gang"})"),
            "spec.schedulingPolicy: expected an object, got string");
  EXPECT_EQ(pgError("[]"), "spec: expected an object, got array");
  EXPECT_THAT(pgError(R"({"schedulingPolicy": {"basic": {}}, "workloadRef": {"templateName": 3}})"),
              StartsWith("spec.workloadRef.templateName: "));
  EXPECT_THAT(pgError(R"({"schedulingPolicy": {"basic": {}}, "priority": "high"})"),
              StartsWith("spec.priority: expected an integer"));
  EXPECT_THAT(pgError(R"({"schedulingPolicy": {"basic": {}},
                          "schedulingConstraints": {"topology": [{"key": 1}]}})"),
              StartsWith("spec.schedulingConstraints.topology.key: "));
  EXPECT_THAT(pgError(R"({"schedulingPolicy": {"basic": {}}, "resourceClaims": {}})"),
              StartsWith("spec.resourceClaims: "));
  EXPECT_EQ(pgError(R"({"schedulingPolicy": {"basic": {}}, "disruptionMode": "All"})"),
            "spec.disruptionMode: expected an object, got string");
  EXPECT_EQ(pgError(R"({"schedulingPolicy": {"basic": {}}, "disruptionMode": {}})"),
            "spec.disruptionMode: exactly one of single, all must be set");
  EXPECT_EQ(pgError(R"({"schedulingPolicy": {"basic": {}}, "disruptionMode": "All"})", "v1alpha2"),
            "spec.disruptionMode: \"All\" is not Pod or PodGroup");
  EXPECT_THAT(
      pgError(R"({"schedulingPolicy": {"basic": {}}, "disruptionMode": {"all": {}}})", "v1alpha2"),
      StartsWith("spec.disruptionMode: "));
  EXPECT_THAT(decodeError<PodGroup>(R"({"apiVersion": "scheduling.k8s.io/v1beta1",
      "spec": {"schedulingPolicy": {"basic": {}}},
      "status": {"conditions": [{"type": "X", "observedGeneration": "2"}]}})"),
              StartsWith("status.conditions.observedGeneration: "));
  EXPECT_EQ(decodeError<PodGroup>(R"({"apiVersion": "scheduling.x-k8s.io/v1alpha1"})"),
            "apiVersion: \"scheduling.x-k8s.io/v1alpha1\" is not a version ksched reads "
            "(scheduling.k8s.io/v1beta1, v1alpha2 or v1alpha3)");
  EXPECT_THAT(decodeError<PodGroup>(R"({"apiVersion": 1})"), StartsWith("apiVersion: "));
  EXPECT_THAT(decodeError<PodGroup>("[]"), HasSubstr("expected an object"));
}

TEST(CompositePodGroupTest, DecodesV1alpha3) {
  const auto cpg = decodeString<CompositePodGroup>(R"({
    "apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "CompositePodGroup",
    "metadata": {"name": "train-root", "namespace": "ml"},
    "spec": {"workloadRef": {"workloadName": "train", "templateName": "root"},
             "schedulingPolicy": {"gang": {"minGroupCount": 2}},
             "schedulingConstraints": {"topology": [{"key": "topology.kubernetes.io/zone"}]},
             "disruptionMode": {"all": {}}, "priority": 1000, "priorityClassName": "training"},
    "status": {"conditions": [{"type": "CompositePodGroupInitiallyScheduled", "status": "False",
                               "reason": "Unschedulable", "message": "1 of 2 groups",
                               "lastTransitionTime": "2026-11-20T10:00:05Z"}]}})");
  EXPECT_EQ(cpg.metadata.key(), "ml/train-root");
  EXPECT_FALSE(cpg.spec.parentCompositePodGroupName);
  EXPECT_EQ(cpg.spec.workloadRef, (WorkloadReference{"train", "root"}));
  EXPECT_EQ(cpg.spec.schedulingPolicy.minCount(), 2);
  EXPECT_THAT(cpg.spec.topologyKeys, ElementsAre("topology.kubernetes.io/zone"));
  EXPECT_EQ(cpg.spec.disruptionMode, DisruptionMode::kAll);
  EXPECT_EQ(cpg.spec.priority, 1000);
  const Condition* c = cpg.status.condition(kCompositePodGroupInitiallyScheduled);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->reason, kPodGroupReasonUnschedulable);
  EXPECT_FALSE(c->observedGeneration);

  const auto basic = decodeString<CompositePodGroup>(
      R"({"apiVersion": "scheduling.k8s.io/v1alpha3", "spec": {"parentCompositePodGroupName": "up",
          "schedulingPolicy": {"basic": {}}}})");
  EXPECT_FALSE(basic.spec.schedulingPolicy.gang());
  EXPECT_EQ(basic.spec.parentCompositePodGroupName, "up");

  EXPECT_EQ(decodeError<CompositePodGroup>(
                R"({"apiVersion": "scheduling.k8s.io/v1alpha3",
                    "spec": {"schedulingPolicy": {"gang": {"minGroupCount": 0}}}})"),
            "spec.schedulingPolicy.gang.minGroupCount: must be at least 1, got 0");
  // minCount is a PodGroup's: a composite gang without minGroupCount is malformed.
  EXPECT_THAT(decodeError<CompositePodGroup>(
                  R"({"apiVersion": "scheduling.k8s.io/v1alpha3",
                      "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}}})"),
              StartsWith("spec.schedulingPolicy.gang.minGroupCount: missing"));
  EXPECT_EQ(decodeError<CompositePodGroup>(R"({"apiVersion": "scheduling.k8s.io/v1beta1"})"),
            "apiVersion: \"scheduling.k8s.io/v1beta1\" is not a version ksched reads "
            "(scheduling.k8s.io/v1alpha3)");
}

TEST(WorkloadTest, DecodesTemplateNames) {
  const auto w = decodeString<Workload>(R"({
    "apiVersion": "scheduling.k8s.io/v1beta1", "kind": "Workload",
    "metadata": {"name": "train", "namespace": "ml"},
    "spec": {"controllerRef": {"apiGroup": "batch", "kind": "Job", "name": "train"},
             "podGroupTemplates": [{"name": "workers", "schedulingPolicy": {"gang": {"minCount": 8}}},
                                   {"name": "driver", "schedulingPolicy": {"basic": {}}}]}})");
  EXPECT_EQ(w.metadata.key(), "ml/train");
  EXPECT_THAT(w.podGroupTemplateNames, ElementsAre("workers", "driver"));
  EXPECT_TRUE(w.compositePodGroupTemplateNames.empty());

  const auto composite = decodeString<Workload>(R"({
    "apiVersion": "scheduling.k8s.io/v1alpha3", "metadata": {"name": "tree"},
    "spec": {"podGroupTemplates": null,
             "compositePodGroupTemplates": [{"name": "root", "podGroupTemplates": [{"name": "leaf"}]}]}})");
  EXPECT_TRUE(composite.podGroupTemplateNames.empty());
  EXPECT_THAT(composite.compositePodGroupTemplateNames, ElementsAre("root"));

  EXPECT_EQ(decodeString<Workload>(R"({"apiVersion": "scheduling.k8s.io/v1alpha2",
                                       "spec": {"podGroupTemplates": [{"name": "a"}]}})")
                .podGroupTemplateNames,
            std::vector<std::string>{"a"});
  EXPECT_THAT(decodeError<Workload>(R"({"apiVersion": "scheduling.k8s.io/v1beta1",
                                        "spec": {"podGroupTemplates": [{"name": 1}]}})"),
              StartsWith("spec.podGroupTemplates.name: "));
  EXPECT_THAT(decodeError<Workload>(R"({"kind": "Workload"})"), StartsWith("apiVersion: missing"));
}

TEST(ConditionTest, RoundTrip) {
  const Condition c{
      "PodGroupInitiallyScheduled", "False", "Unschedulable", "0/4 nodes are available",
      "2026-11-20T10:00:05Z",       3};
  const json j = c;
  EXPECT_EQ(j, json::parse(R"({"type": "PodGroupInitiallyScheduled", "status": "False",
      "reason": "Unschedulable", "message": "0/4 nodes are available",
      "lastTransitionTime": "2026-11-20T10:00:05Z", "observedGeneration": 3})"));
  EXPECT_EQ(j.get<Condition>(), c);
  // The required fields are written even when empty; an unknown generation is left out.
  const json bare = Condition{"DisruptionTarget", "True", "", "", "2026-11-20T10:00:05Z", {}};
  EXPECT_EQ(bare, json::parse(R"({"type": "DisruptionTarget", "status": "True", "reason": "",
      "message": "", "lastTransitionTime": "2026-11-20T10:00:05Z"})"));
  EXPECT_EQ(bare.get<Condition>().observedGeneration, std::nullopt);
}

TEST(PodSchedulingGroupTest, Decodes) {
  const auto pod = decodeString<Pod>(R"({"metadata": {"name": "w-0", "namespace": "ml"},
      "spec": {"schedulingGroup": {"podGroupName": "train-0"}}})");
  ASSERT_TRUE(pod.spec.schedulingGroup);
  EXPECT_EQ(pod.spec.schedulingGroup->podGroupName, "train-0");
  ASSERT_NE(pod.spec.podGroupName(), nullptr);
  EXPECT_EQ(groupKey(pod.metadata.namespace_, *pod.spec.podGroupName()), "ml/train-0");

  const auto plain = decodeString<Pod>(R"({"metadata": {"name": "p"}, "spec": {}})");
  EXPECT_FALSE(plain.spec.schedulingGroup);
  EXPECT_EQ(plain.spec.podGroupName(), nullptr);
  EXPECT_THAT(decodeError<Pod>(R"({"spec": {"schedulingGroup": {"podGroupName": 7}}})"),
              StartsWith("spec.schedulingGroup.podGroupName: "));
  EXPECT_THAT(decodeError<Pod>(R"({"spec": {"schedulingGroup": "g"}})"),
              StartsWith("spec.schedulingGroup"));
}

}  // namespace
}  // namespace ksched::api
