// Micro benchmark of api::sameSchedulingInputs, which opportunistic batching asks of every pod
// and the result memo of every pod it serves: two pods of one ReplicaSet as a real cluster's
// admission leaves them, once with the same spec (the e2e benchmark's pods) and once with the
// token volume and mount that ServiceAccount admission names per pod (kube-api-access-<random>).
// Also the PodInfo that the queue and the cache build for every pod they take in (its requests
// as the node counts them and the scoring amounts), of the same pod. Figures are printed, never
// asserted (docs/performance.md).
#include <benchmark/benchmark.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include <ksched/api/decode.h>
#include <ksched/api/features.h>
#include <ksched/api/pod.h>
#include <ksched/node_info.h>

namespace ksched {
namespace {

// A pod of the ReplicaSet web-7d4b9c8f6 named `name`, its token volume (and mount) `token`.
nlohmann::json replicaSetPod(const std::string& name, const std::string& token) {
  nlohmann::json pod = nlohmann::json::parse(R"({
    "metadata": {
      "namespace": "shop", "resourceVersion": "1", "creationTimestamp": "2026-11-24T23:40:01Z",
      "labels": {"app": "web", "pod-template-hash": "7d4b9c8f6"},
      "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d4b9c8f6",
                           "uid": "rs-uid", "controller": true, "blockOwnerDeletion": true}]
    },
    "spec": {
      "volumes": [{"projected": {"defaultMode": 420, "sources": [
        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt",
                       "items": [{"key": "ca.crt", "path": "ca.crt"}]}}]}}],
      "containers": [{
        "name": "web", "image": "registry.example/web:1.4.2",
        "ports": [{"containerPort": 8080, "protocol": "TCP"}],
        "env": [{"name": "MODE", "value": "production"}],
        "resources": {"requests": {"cpu": "250m", "memory": "512Mi"},
                      "limits": {"memory": "1Gi"}},
        "volumeMounts": [{"readOnly": true,
                          "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}],
        "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
        "imagePullPolicy": "IfNotPresent"
      }],
      "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
      "serviceAccountName": "default", "serviceAccount": "default",
      "securityContext": {}, "schedulerName": "default-scheduler",
      "tolerations": [
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
         "tolerationSeconds": 300},
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
         "tolerationSeconds": 300}],
      "priority": 0, "enableServiceLinks": true, "preemptionPolicy": "PreemptLowerPriority"
    },
    "status": {"phase": "Pending", "qosClass": "Burstable"}
  })");
  pod["metadata"]["name"] = name;
  pod["metadata"]["uid"] = name + "-uid";
  pod["spec"]["volumes"][0]["name"] = token;
  pod["spec"]["containers"][0]["volumeMounts"][0]["name"] = token;
  return pod;
}

// Arg 0: the same token volume name (the spec equal as it is); 1: a name of each pod's own.
void BM_SameSchedulingInputs(benchmark::State& state) {
  const api::Pod a =
      api::decode<api::Pod>(replicaSetPod("web-7d4b9c8f6-abcde", "kube-api-access-q7x2v"));
  const api::Pod b = api::decode<api::Pod>(
      replicaSetPod("web-7d4b9c8f6-fghij",
                    state.range(0) == 0 ? "kube-api-access-q7x2v" : "kube-api-access-m3k9p"));
  if (!api::sameSchedulingInputs(a, b)) state.SkipWithError("the pods should compare equal");
  for (auto _ : state) benchmark::DoNotOptimize(api::sameSchedulingInputs(a, b));
}
BENCHMARK(BM_SameSchedulingInputs)->Arg(0)->Arg(1)->Unit(benchmark::kNanosecond);

void BM_PodInfo(benchmark::State& state) {
  const auto pod = std::make_shared<const api::Pod>(
      api::decode<api::Pod>(replicaSetPod("web-7d4b9c8f6-abcde", "kube-api-access-q7x2v")));
  const features::Gates gates;
  if (PodInfo(pod, gates).requests.milliCPU != 250) state.SkipWithError("250m expected");
  for (auto _ : state) benchmark::DoNotOptimize(std::make_shared<const PodInfo>(pod, gates));
}
BENCHMARK(BM_PodInfo)->Unit(benchmark::kNanosecond);

}  // namespace
}  // namespace ksched
