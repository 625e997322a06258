#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <ksched/api/pod.h>

#include "queue/pod_update.h"

namespace ksched::api {
namespace {

// A pending pod with a container that uses a DRA claim, a volume of each kind the two
// comparisons treat apart (a PVC, a projected token without a source the decoder keeps) and a
// condition written by the scheduler.
Pod base() {
  Pod p;
  p.metadata.name = "p";
  p.metadata.namespace_ = "ns";
  p.metadata.uid = "u";
  p.metadata.resourceVersion = "1";
  p.metadata.labels["app"] = "web";
  p.spec.resourceClaims.push_back({.name = "gpu", .resourceClaimName = "gpu-claim"});
  Container c;
  c.name = "c";
  c.resources.requests["cpu"] = Quantity::parse("1");
  c.resources.claims.push_back({.name = "gpu", .request = ""});
  c.volumeMounts.push_back({.name = "kube-api-access-x", .mountPath = "/var/run/secrets"});
  c.volumeMounts.push_back({.name = "data", .mountPath = "/data"});
  p.spec.containers.push_back(c);
  Volume pvc;
  pvc.name = "data";
  pvc.persistentVolumeClaim = PersistentVolumeClaimVolumeSource{"data-claim", false};
  p.spec.volumes.push_back(pvc);
  p.spec.volumes.push_back({.name = "kube-api-access-x"});
  p.status.phase = "Pending";
  p.status.conditions.push_back(
      {.type = "PodScheduled", .status = "False", .reason = "Unschedulable", .message = "0/3"});
  return p;
}

// The bug this comparison exists to prevent: a change of a container's resources.claims was
// missed by the queue's own field list. Both callers see it now.
TEST(PodCompareTest, ContainerResourceClaimsAreSeenByBoth) {
  const Pod a = base();
  Pod b = base();
  b.spec.containers[0].resources.claims[0].request = "big";
  EXPECT_FALSE(samePod(a, b, PodComparison::kUpdate));
  EXPECT_FALSE(samePod(a, b, PodComparison::kSchedulingInputs));
  EXPECT_TRUE(queue::isPodUpdated(a, b));
  EXPECT_FALSE(sameSchedulingInputs(a, b));
  Pod dropped = base();
  dropped.spec.containers[0].resources.claims.clear();
  EXPECT_TRUE(queue::isPodUpdated(a, dropped));
  EXPECT_FALSE(sameSchedulingInputs(a, dropped));
}

struct ExceptionCase {
  std::string name;
  void (*mutate)(Pod&);
};

// What both comparisons leave out.
TEST(PodCompareTest, BothIgnoreResourceVersionAndGeneration) {
  const std::vector<ExceptionCase> cases = {
      {"resourceVersion", [](Pod& p) { p.metadata.resourceVersion = "2"; }},
      {"generation", [](Pod& p) { p.metadata.generation = 7; }},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Pod changed = base();
    c.mutate(changed);
    EXPECT_TRUE(samePod(base(), changed, PodComparison::kUpdate));
    EXPECT_TRUE(samePod(base(), changed, PodComparison::kSchedulingInputs));
  }
}

// The queue's exception: the status, which the scheduler writes itself.
TEST(PodCompareTest, UpdateIgnoresTheStatus) {
  Pod changed = base();
  changed.status.nominatedNodeName = "n1";
  changed.status.conditions[0].message = "0/4";
  changed.status.containerStatuses.push_back(
      {.name = "c", .allocatedResources = {}, .resources = {}});
  changed.status.resourceClaimStatuses.push_back({.name = "gpu", .resourceClaimName = "g-1"});
  EXPECT_TRUE(samePod(base(), changed, PodComparison::kUpdate));
  EXPECT_FALSE(queue::isPodUpdated(base(), changed));
  // What batching reads of the status (the nomination) is a difference to it.
  EXPECT_FALSE(sameSchedulingInputs(base(), changed));
}

// Batching's exceptions: each is a difference to the queue (it is in the pod's metadata or
// spec), none is one to batching.
TEST(PodCompareTest, SchedulingInputsIgnoreIdentityAndUnreadFields) {
  const std::vector<ExceptionCase> metadataOrSpec = {
      {"name", [](Pod& p) { p.metadata.name = "q"; }},
      {"uid", [](Pod& p) { p.metadata.uid = "v"; }},
      {"annotations", [](Pod& p) { p.metadata.annotations["note"] = "x"; }},
      {"owners",
       [](Pod& p) {
         p.metadata.ownerReferences.push_back({.apiVersion = "apps/v1",
                                               .kind = "ReplicaSet",
                                               .name = "rs",
                                               .uid = "r",
                                               .controller = true});
       }},
      {"creationTimestamp", [](Pod& p) { p.metadata.creationTimestamp = "2026-01-01T00:00:00Z"; }},
      {"deletionTimestamp", [](Pod& p) { p.metadata.deletionTimestamp = "2026-01-01T00:00:00Z"; }},
      {"deletionGracePeriodSeconds", [](Pod& p) { p.metadata.deletionGracePeriodSeconds = 30; }},
      {"terminationGracePeriodSeconds", [](Pod& p) { p.spec.terminationGracePeriodSeconds = 5; }},
      {"volume without a source", [](Pod& p) { p.spec.volumes.push_back({.name = "cache"}); }},
      {"name of a volume without a source",
       [](Pod& p) { p.spec.volumes[1].name = "kube-api-access-y"; }},
      {"name of a volume with a source", [](Pod& p) { p.spec.volumes[0].name = "other"; }},
      {"name of a mount", [](Pod& p) { p.spec.containers[0].volumeMounts[0].name = "token"; }},
  };
  for (const auto& c : metadataOrSpec) {
    SCOPED_TRACE(c.name);
    Pod changed = base();
    c.mutate(changed);
    EXPECT_TRUE(sameSchedulingInputs(base(), changed));
    EXPECT_TRUE(queue::isPodUpdated(base(), changed));
  }
  const std::vector<ExceptionCase> status = {
      {"phase", [](Pod& p) { p.status.phase = "Running"; }},
      {"startTime", [](Pod& p) { p.status.startTime = "2026-01-01T00:00:00Z"; }},
      {"resize", [](Pod& p) { p.status.resize = "InProgress"; }},
      {"condition reason", [](Pod& p) { p.status.conditions[0].reason = "SchedulerError"; }},
      {"condition message", [](Pod& p) { p.status.conditions[0].message = "0/4"; }},
      {"condition time",
       [](Pod& p) { p.status.conditions[0].lastTransitionTime = "2026-01-01T00:00:00Z"; }},
  };
  for (const auto& c : status) {
    SCOPED_TRACE(c.name);
    Pod changed = base();
    c.mutate(changed);
    EXPECT_TRUE(sameSchedulingInputs(base(), changed));
    EXPECT_FALSE(queue::isPodUpdated(base(), changed));
  }
  // What is not an exception still counts: a condition's status, the namespace, a label.
  Pod condition = base();
  condition.status.conditions[0].status = "True";
  EXPECT_FALSE(sameSchedulingInputs(base(), condition));
  Pod label = base();
  label.metadata.labels["tier"] = "x";
  EXPECT_FALSE(sameSchedulingInputs(base(), label));
  // A generic ephemeral volume: its claim is the pod's own, so the pod is like no other.
  Pod ephemeral = base();
  ephemeral.spec.volumes.push_back({.name = "scratch", .ephemeral = true});
  EXPECT_FALSE(sameSchedulingInputs(ephemeral, ephemeral));
  EXPECT_TRUE(samePod(ephemeral, ephemeral, PodComparison::kUpdate));
}

// The comparison answers before copying the pods when they differ in a field it keeps as it is
// (namespace, labels, containers' images and resources) or when they are equal as they are;
// every other pair takes the copies. Each way gives the answer the copies give.
TEST(PodCompareTest, SchedulingInputsAnswerAlikeBeforeAndAfterCopying) {
  EXPECT_TRUE(sameSchedulingInputs(base(), base()));  // equal as they are
  const std::vector<ExceptionCase> different = {
      {"namespace", [](Pod& p) { p.metadata.namespace_ = "other"; }},
      {"image", [](Pod& p) { p.spec.containers[0].image = "nginx"; }},
      {"requests",
       [](Pod& p) { p.spec.containers[0].resources.requests["cpu"] = Quantity::parse("2"); }},
      {"init container", [](Pod& p) { p.spec.initContainers.push_back(p.spec.containers[0]); }},
      {"node selector", [](Pod& p) { p.spec.nodeSelector["zone"] = "a"; }},
      {"mount path", [](Pod& p) { p.spec.containers[0].volumeMounts[1].mountPath = "/other"; }},
      {"nominated node", [](Pod& p) { p.status.nominatedNodeName = "n1"; }},
  };
  for (const auto& c : different) {
    SCOPED_TRACE(c.name);
    Pod changed = base();
    c.mutate(changed);
    EXPECT_FALSE(sameSchedulingInputs(base(), changed));
    EXPECT_FALSE(sameSchedulingInputs(changed, base()));
    EXPECT_TRUE(sameSchedulingInputs(changed, changed));
  }
  // Equal once copied, not as they are: a mount's name and an unread field together.
  Pod renamed = base();
  renamed.spec.containers[0].volumeMounts[0].name = "token";
  renamed.status.phase = "Running";
  EXPECT_TRUE(sameSchedulingInputs(base(), renamed));
  EXPECT_TRUE(sameSchedulingInputs(renamed, base()));
}

// The copies are assigned over two scratch pods that each thread keeps from one call to the
// next: an answer never depends on the pods compared before it (each pair's answer on a new
// thread is the reference; the pairs are then asked in turn, forwards and backwards).
TEST(PodCompareTest, SchedulingInputsAnswerTheSameWhateverWasComparedBefore) {
  const Pod original = base();
  Pod renamed = base();
  renamed.spec.containers[0].volumeMounts[0].name = "token";
  Pod selector = renamed;
  selector.spec.nodeSelector["zone"] = "a";
  Pod bare;
  bare.metadata.namespace_ = "default";
  bare.spec.containers.push_back({.name = "c", .image = "pause"});
  bare.spec.containers[0].volumeMounts.push_back({.name = "kube-api-access-1", .mountPath = "/t"});
  bare.spec.volumes.push_back({.name = "kube-api-access-1"});
  Pod bareRenamed = bare;
  bareRenamed.spec.containers[0].volumeMounts[0].name = "kube-api-access-2";
  bareRenamed.spec.volumes[0].name = "kube-api-access-2";
  Pod bareWithCondition = bareRenamed;
  bareWithCondition.status.conditions.push_back({.type = "PodScheduled", .status = "False"});
  const std::vector<std::pair<const Pod*, const Pod*>> pairs = {{&original, &renamed},
                                                                {&original, &selector},
                                                                {&bare, &bareRenamed},
                                                                {&selector, &renamed},
                                                                {&bareRenamed, &bareWithCondition},
                                                                {&renamed, &bare}};
  std::vector<bool> want;
  for (const auto& [a, b] : pairs) {
    bool answer = false;
    std::thread([&, a = a, b = b] { answer = sameSchedulingInputs(*a, *b); }).join();
    want.push_back(answer);
  }
  EXPECT_EQ(want, (std::vector<bool>{true, false, true, false, false, false}));
  for (int round = 0; round < 2; ++round) {
    for (size_t k = 0; k < pairs.size(); ++k) {
      const size_t i = round == 0 ? k : pairs.size() - 1 - k;
      EXPECT_EQ(sameSchedulingInputs(*pairs[i].first, *pairs[i].second), want[i]) << i;
    }
  }
}

}  // namespace
}  // namespace ksched::api
