// Micro benchmarks of decoding what the apiserver sends: one Pod as a watch event carries it
// (JSON, with the managedFields the apiserver adds), parsed by nlohmann's parser, by the
// JSON-tree path (client::parseObjectJson, then api::decode<Pod>) and by the path the informers
// take for watched pods (api::decodePodWatchEventFast, straight from the text); LIST pages of
// pods and of kubelet-reported nodes both ways. Figures are printed, never asserted
// (docs/performance.md).
#include <benchmark/benchmark.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <ksched/api/decode.h>
#include <ksched/api/fast_decode.h>
#include <ksched/api/node.h>
#include <ksched/api/pod.h>

#include "client/object_json.h"
#include "client/watch_body.h"

namespace ksched {
namespace {

// A benchmark pod (tests/perf/e2e_load.cc) after its binding, as kube-apiserver v1.20.2 returns
// it: defaulted fields, managedFields of the creating client and the scheduler, the
// PodScheduled condition.
const char* const kBoundPod = R"({
  "kind": "Pod", "apiVersion": "v1",
  "metadata": {
    "name": "m-1234", "namespace": "perf", "uid": "6f1a2c3e-8d6b-4a9e-9b1f-2f4b5c6d7e8f",
    "resourceVersion": "123456", "creationTimestamp": "2026-11-24T23:40:01Z",
    "labels": {"app": "perf", "name": "m-1234"},
    "managedFields": [
      {"manager": "ksched_e2e_load", "operation": "Update", "apiVersion": "v1",
       "time": "2026-11-24T23:40:01Z", "fieldsType": "FieldsV1",
       "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}, "f:name": {}}},
                    "f:spec": {"f:containers": {"k:{\"name\":\"pause\"}": {
                      ".": {}, "f:image": {}, "f:imagePullPolicy": {}, "f:name": {},
                      "f:resources": {".": {}, "f:requests": {".": {}, "f:cpu": {},
                                                              "f:memory": {}}},
                      "f:terminationMessagePath": {}, "f:terminationMessagePolicy": {}}},
                      "f:dnsPolicy": {}, "f:enableServiceLinks": {}, "f:restartPolicy": {},
                      "f:schedulerName": {}, "f:securityContext": {},
                      "f:terminationGracePeriodSeconds": {}}}},
      {"manager": "ksched", "operation": "Update", "apiVersion": "v1",
       "time": "2026-11-24T23:40:02Z", "fieldsType": "FieldsV1",
       "fieldsV1": {"f:status": {"f:conditions": {".": {}, "k:{\"type\":\"PodScheduled\"}": {
         ".": {}, "f:lastProbeTime": {}, "f:lastTransitionTime": {}, "f:status": {},
         "f:type": {}}}}}}
    ]
  },
  "spec": {
    "volumes": [],
    "containers": [{
      "name": "pause", "image": "registry.k8s.io/pause:3.9",
      "resources": {"requests": {"cpu": "100m", "memory": "500Mi"}},
      "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
      "imagePullPolicy": "IfNotPresent"
    }],
    "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
    "nodeName": "perf-node-321", "securityContext": {}, "schedulerName": "default-scheduler",
    "tolerations": [
      {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
       "tolerationSeconds": 300},
      {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
       "tolerationSeconds": 300}
    ],
    "priority": 0, "enableServiceLinks": true, "preemptionPolicy": "PreemptLowerPriority"
  },
  "status": {
    "phase": "Pending",
    "conditions": [{"type": "PodScheduled", "status": "True", "lastProbeTime": null,
                    "lastTransitionTime": "2026-11-24T23:40:02Z"}],
    "qosClass": "Burstable"
  }
})";

// Parse alone: the JSON text into nlohmann's tree.
void BM_ParsePodJson(benchmark::State& state) {
  const std::string body = kBoundPod;
  for (auto _ : state) {
    auto j = nlohmann::json::parse(body);
    benchmark::DoNotOptimize(j);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * body.size()));
}
BENCHMARK(BM_ParsePodJson)->Unit(benchmark::kMicrosecond);

// What the informer does for every Pod it receives: parse (without managedFields), then read
// into api::Pod.
void BM_DecodePodJson(benchmark::State& state) {
  const std::string body = kBoundPod;
  for (auto _ : state) {
    auto pod = api::decode<api::Pod>(client::parseObjectJson(body));
    benchmark::DoNotOptimize(pod);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * body.size()));
}
BENCHMARK(BM_DecodePodJson)->Unit(benchmark::kMicrosecond);

// The informers' parse: the same tree without metadata.managedFields, skipped while parsing.
void BM_ParsePodObjectJson(benchmark::State& state) {
  const std::string body = kBoundPod;
  for (auto _ : state) {
    auto j = client::parseObjectJson(body);
    benchmark::DoNotOptimize(j);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * body.size()));
}
BENCHMARK(BM_ParsePodObjectJson)->Unit(benchmark::kMicrosecond);

// The informers' path for a watched pod: the event's line read straight into api::Pod.
void BM_DecodePodWatchEventFast(benchmark::State& state) {
  const std::string line = std::string(R"({"type":"MODIFIED","object":)") + kBoundPod + "}";
  for (auto _ : state) {
    std::string type;
    api::Pod pod;
    if (!api::decodePodWatchEventFast(line, type, pod)) state.SkipWithError("declined");
    benchmark::DoNotOptimize(pod);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * line.size()));
}
BENCHMARK(BM_DecodePodWatchEventFast)->Unit(benchmark::kMicrosecond);

// The same event through the JSON tree, as before the fast path (and for what it declines).
void BM_DecodePodWatchEventTree(benchmark::State& state) {
  const std::string line = std::string(R"({"type":"MODIFIED","object":)") + kBoundPod + "}";
  for (auto _ : state) {
    auto ev = client::parseWatchEvent(line);
    auto pod = api::decode<api::Pod>(ev->object);
    benchmark::DoNotOptimize(pod);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * line.size()));
}
BENCHMARK(BM_DecodePodWatchEventTree)->Unit(benchmark::kMicrosecond);

// A LIST page of 500 such pods, per pod: straight from the text, and through the tree as
// RestClient::listPaged and the informer read it.
std::string podListPage() {
  std::string page = R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"9",)"
                     R"("continue":"next"},"items":[)";
  for (int i = 0; i < 500; ++i) page += (i > 0 ? "," : "") + std::string(kBoundPod);
  return page + "]}";
}

void BM_DecodePodListPageFast(benchmark::State& state) {
  const std::string page = podListPage();
  for (auto _ : state) {
    std::vector<api::Pod> pods;
    std::string cont;
    std::string rv;
    if (!api::decodePodListFast(page, pods, cont, rv)) state.SkipWithError("declined");
    benchmark::DoNotOptimize(pods);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * 500));
}
BENCHMARK(BM_DecodePodListPageFast)->Unit(benchmark::kMillisecond);

void BM_DecodePodListPageTree(benchmark::State& state) {
  const std::string page = podListPage();
  for (auto _ : state) {
    nlohmann::json j = client::parseObjectJson(page);
    std::vector<api::Pod> pods;
    for (const auto& item : j["items"]) pods.push_back(api::decode<api::Pod>(item));
    benchmark::DoNotOptimize(pods);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * 500));
}
BENCHMARK(BM_DecodePodListPageTree)->Unit(benchmark::kMillisecond);

// A node as a kubelet reports it (labels, conditions with their texts, addresses, nodeInfo, ten
// images, managedFields): most of it is what api::Node does not hold.
std::string kubeletNode(int i) {
  const std::string name = "node-" + std::to_string(i);
  std::string images;
  for (int k = 0; k < 10; ++k) {
    images += (k > 0 ? "," : "") + std::string(R"({"names":["registry.example/team/app-)") +
              std::to_string(k) +
              R"(@sha256:0123456789abcdef0123456789abcdef","registry.example/team/app-)" +
              std::to_string(k) + R"(:v1.2.3"],"sizeBytes":)" + std::to_string(50000000 + k) + "}";
  }
  std::string conditions;
  for (const char* type : {"MemoryPressure", "DiskPressure", "PIDPressure", "Ready"}) {
    conditions +=
        (conditions.empty() ? "" : ",") + std::string(R"({"type":")") + type + R"(","status":")" +
        (std::string(type) == "Ready" ? "True" : "False") +
        R"(","lastHeartbeatTime":"2026-11-30T10:00:00Z","lastTransitionTime":"2026-11-29T10:00:00Z","reason":"KubeletHasSufficientMemory","message":"kubelet has sufficient memory available"})";
  }
  return R"({"kind":"Node","apiVersion":"v1","metadata":{"name":")" + name +
         R"(","uid":"6b1f7c2e-)" + name +
         R"(","resourceVersion":"123456","creationTimestamp":"2026-11-29T10:00:00Z",)"
         R"("labels":{"beta.kubernetes.io/arch":"amd64","beta.kubernetes.io/os":"linux","kubernetes.io/arch":"amd64",)"
         R"("kubernetes.io/hostname":")" +
         name +
         R"(","kubernetes.io/os":"linux","node.kubernetes.io/instance-type":"m5.xlarge",)"
         R"("topology.kubernetes.io/region":"eu-west-1","topology.kubernetes.io/zone":"eu-west-1a"},)"
         R"("annotations":{"node.alpha.kubernetes.io/ttl":"0","volumes.kubernetes.io/controller-managed-attach-detach":"true"},)"
         R"("managedFields":[{"manager":"kubelet","operation":"Update","apiVersion":"v1","time":"2026-11-30T10:00:00Z",)"
         R"("fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:kubernetes.io/hostname":{}}},)"
         R"("f:status":{"f:conditions":{".":{},"k:{\"type\":\"Ready\"}":{"f:lastHeartbeatTime":{},"f:status":{}}},"f:images":{}}}}]},)"
         R"("spec":{"podCIDR":"10.0.)" +
         std::to_string(i % 256) +
         R"(.0/24","podCIDRs":["10.0.0.0/24"],"providerID":"aws:///eu-west-1a/i-0123456789"},)"
         R"("status":{"capacity":{"cpu":"4","ephemeral-storage":"104845292Ki","hugepages-1Gi":"0","hugepages-2Mi":"0",)"
         R"("memory":"16116152Ki","pods":"110"},"allocatable":{"cpu":"3920m","ephemeral-storage":"95551679124",)"
         R"("hugepages-1Gi":"0","hugepages-2Mi":"0","memory":"15416760Ki","pods":"110"},"conditions":[)" +
         conditions +
         R"(],"addresses":[{"type":"InternalIP","address":"10.1.2.3"},{"type":"Hostname","address":")" +
         name +
         R"("}],"daemonEndpoints":{"kubeletEndpoint":{"Port":10250}},"nodeInfo":{"machineID":"ec2a","systemUUID":"ec2a",)"
         R"("bootID":"b","kernelVersion":"6.1.0","osImage":"Debian GNU/Linux 12","containerRuntimeVersion":"containerd://1.7.2",)"
         R"("kubeletVersion":"v1.37.0","kubeProxyVersion":"v1.37.0","operatingSystem":"linux","architecture":"amd64"},)"
         R"("images":[)" +
         images + "]}}";
}

std::string nodeListPage() {
  std::string page = R"({"kind":"NodeList","apiVersion":"v1","metadata":{"resourceVersion":"9",)"
                     R"("continue":"next"},"items":[)";
  for (int i = 0; i < 500; ++i) page += (i > 0 ? "," : "") + kubeletNode(i);
  return page + "]}";
}

// A LIST page of 500 such nodes, per node: straight from the text, and through the tree.
void BM_DecodeNodeListPageFast(benchmark::State& state) {
  const std::string page = nodeListPage();
  for (auto _ : state) {
    std::vector<api::Node> nodes;
    std::string cont;
    std::string rv;
    if (!api::decodeNodeListFast(page, nodes, cont, rv)) state.SkipWithError("declined");
    benchmark::DoNotOptimize(nodes);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * 500));
}
BENCHMARK(BM_DecodeNodeListPageFast)->Unit(benchmark::kMillisecond);

void BM_DecodeNodeListPageTree(benchmark::State& state) {
  const std::string page = nodeListPage();
  for (auto _ : state) {
    nlohmann::json j = client::parseObjectJson(page);
    std::vector<api::Node> nodes;
    for (const auto& item : j["items"]) nodes.push_back(api::decode<api::Node>(item));
    benchmark::DoNotOptimize(nodes);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * 500));
}
BENCHMARK(BM_DecodeNodeListPageTree)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace ksched
