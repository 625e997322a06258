// Dynamic Resource Allocation through `ksched simulate -f`, over objects shaped as a 1.34+
// apiserver serves them (pods with spec.resourceClaims, which the v1.20 apiserver of the other
// suites cannot store): ResourceSlices, DeviceClasses, ResourceClaims and templates. The whole
// path: the file decoder, the default profile's DynamicResources (PreEnqueue, PreFilter, the
// allocator in Filter, Reserve, PreBind writing the claims), the simulated cluster applying
// those writes and generating template claims as the resourceclaim controller does, and the
// result's devices, reasons and diagnosis.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "simulate_dir.h"

namespace ksched::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

constexpr char kDriver[] = "gpu.example.com";

std::string node(const std::string& name, const std::string& cpu = "8") {
  return "apiVersion: v1\nkind: Node\nmetadata:\n  name: " + name +
         "\n  labels:\n    kubernetes.io/hostname: " + name +
         "\nstatus:\n  allocatable:\n    cpu: \"" + cpu +
         "\"\n    memory: 32Gi\n    pods: \"110\"\n  capacity:\n    cpu: \"" + cpu +
         "\"\n    memory: 32Gi\n    pods: \"110\"\n"
         "  conditions:\n  - type: Ready\n    status: \"True\"\n";
}

// The slice a driver publishes for `nodeName`: `models` gives each device's model
// ("a100", "t4"), named gpu-0, gpu-1, ...
std::string slice(const std::string& nodeName, const std::vector<std::string>& models) {
  std::string s =
      "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata:\n  name: " + nodeName +
      "-gpus\nspec:\n  driver: " + kDriver + "\n  nodeName: " + nodeName +
      "\n  pool:\n    name: " + nodeName +
      "\n    generation: 1\n    resourceSliceCount: 1\n  devices:\n";
  for (size_t i = 0; i < models.size(); ++i) {
    s += "  - name: gpu-" + std::to_string(i) +
         "\n    attributes:\n      model:\n        string: " + models[i] +
         "\n      index:\n        int: " + std::to_string(i) +
         "\n    capacity:\n      memory:\n        value: " +
         (models[i] == "a100" ? "80Gi" : "16Gi") + "\n";
  }
  return s;
}

// A DeviceClass of the driver's devices, narrowed by `selector` (a CEL expression) if given.
std::string deviceClass(const std::string& name, const std::string& selector = "") {
  std::string s = "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata:\n  name: " + name +
                  "\nspec:\n  selectors:\n  - cel:\n      expression: device.driver == \"" +
                  kDriver + "\"\n";
  if (!selector.empty()) s += "  - cel:\n      expression: '" + selector + "'\n";
  return s;
}

// A claim whose spec.devices is `devices` (YAML indented by four spaces).
std::string claim(const std::string& name, const std::string& devices,
                  const std::string& status = "") {
  return "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata:\n  name: " + name +
         "\n  namespace: ml\n  uid: " + name +
         "-uid\n  resourceVersion: \"10\"\nspec:\n"
         "  devices:\n" +
         devices + status;
}

std::string oneGpu(const std::string& className = "gpu") {
  return "    requests:\n    - name: gpu\n      exactly:\n        deviceClassName: " + className +
         "\n";
}

// `devices` as claim() takes it, nested two levels deeper (spec.spec.devices).
std::string claimTemplate(const std::string& name, const std::string& devices) {
  std::string nested;
  for (size_t at = 0; at < devices.size();) {
    const size_t eol = devices.find('\n', at);
    nested += "  " + devices.substr(at, eol - at + 1);
    at = eol + 1;
  }
  return "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata:\n  name: " + name +
         "\n  namespace: ml\nspec:\n  spec:\n    devices:\n" + nested;
}

// A pending pod with one container of 1 cpu and these spec.resourceClaims lines (name ->
// "resourceClaimName: x" or "resourceClaimTemplateName: t").
std::string pod(const std::string& name,
                const std::vector<std::pair<std::string, std::string>>& claims) {
  std::string s = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
                  "\n  namespace: ml\n  uid: " + name + "-uid\nspec:\n";
  if (!claims.empty()) {
    s += "  resourceClaims:\n";
    for (const auto& [n, source] : claims) s += "  - name: " + n + "\n    " + source + "\n";
  }
  s += "  containers:\n  - name: main\n    image: registry.example/train:1\n    resources:\n"
       "      requests:\n        cpu: \"1\"\n";
  if (!claims.empty()) {
    s += "      claims:\n";
    for (const auto& [n, source] : claims) s += "      - name: " + n + "\n";
  }
  return s + "status:\n  phase: Pending\n";
}

std::string docs(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "---\n") + p;
  return out;
}

std::map<std::string, json> byName(const json& doc) {
  std::map<std::string, json> out;
  for (const auto& p : doc.at("pods")) out[p.at("name")] = p;
  return out;
}

std::vector<std::string> devices(const json& pod) {
  std::vector<std::string> out;
  if (pod.contains("devices")) {
    for (const auto& d : pod.at("devices")) out.push_back(d);
  }
  return out;
}

// Every detail the diagnosis gives under `plugin`, for any node.
std::string details(const json& pod, const std::string& plugin) {
  std::string out;
  const json& d = pod.at("diagnosis");
  if (!d.is_object()) return out;
  for (const auto& r : d.at("reasons")) {
    if (r.at("plugin") != plugin || !r.contains("details")) continue;
    for (const auto& [node, text] : r.at("details").items())
      out += node + ": " + text.get<std::string>() + "\n";
  }
  return out;
}

class SimulateDra : public SimulateDir {};

// Two pods, one device: one gets it, the other waits and says why, never both.
TEST_F(SimulateDra, TwoPodsOneDeviceNeverBoth) {
  const std::string cluster =
      file("cluster.yaml",
           docs({node("n1"), slice("n1", {"a100"}), deviceClass("gpu"), claim("claim-a", oneGpu()),
                 claim("claim-b", oneGpu()), pod("a", {{"gpu", "resourceClaimName: claim-a"}}),
                 pod("b", {{"gpu", "resourceClaimName: claim-b"}})}));
  const json doc = simulateJson(cluster);
  ASSERT_TRUE(doc.is_object());
  const auto pods = byName(doc);
  const json& a = pods.at("a");
  const json& b = pods.at("b");
  ASSERT_EQ(a.at("node").is_null() + b.at("node").is_null(), 1) << doc.at("pods").dump(2);
  const json& placed = a.at("node").is_null() ? b : a;
  const json& waiting = a.at("node").is_null() ? a : b;
  EXPECT_EQ(devices(placed), std::vector<std::string>{"gpu: gpu.example.com/n1/gpu-0"});
  EXPECT_EQ(waiting.at("reason"),
            "0/1 nodes are available: 1 cannot allocate all claims. still not schedulable, "
            "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.")
      << waiting.dump(2);
  EXPECT_THAT(details(waiting, "DynamicResources"), HasSubstr("in use")) << waiting.dump(2);
}

// allocationMode All takes every matching device of the node it lands on: 8 of them; a pod
// asking for one more device of that node has none left.
TEST_F(SimulateDra, AllocationModeAllTakesEveryDeviceOfTheNode) {
  const std::vector<std::string> eight(8, "t4");
  const std::string cluster =
      file("cluster.yaml",
           docs({node("n1"), slice("n1", eight), deviceClass("gpu"),
                 claim("every",
                       "    requests:\n    - name: gpu\n      exactly:\n"
                       "        deviceClassName: gpu\n        allocationMode: All\n"),
                 claim("one-more", oneGpu()), pod("all", {{"gpu", "resourceClaimName: every"}})}));
  const json doc = simulateJson(cluster);
  ASSERT_TRUE(doc.is_object());
  const auto pods = byName(doc);
  EXPECT_EQ(pods.at("all").at("node"), "n1") << doc.dump(2);
  std::set<std::string> got;
  for (const auto& d : devices(pods.at("all"))) got.insert(d);
  EXPECT_EQ(got.size(), 8u) << pods.at("all").dump(2);
  EXPECT_TRUE(got.contains("gpu: gpu.example.com/n1/gpu-7"));

  const std::string more =
      file("more.yaml",
           docs({node("n1"), slice("n1", eight), deviceClass("gpu"),
                 claim("every",
                       "    requests:\n    - name: gpu\n      exactly:\n"
                       "        deviceClassName: gpu\n        allocationMode: All\n"),
                 claim("one-more", oneGpu()), pod("all", {{"gpu", "resourceClaimName: every"}}),
                 pod("late", {{"gpu", "resourceClaimName: one-more"}})}));
  const json doc2 = simulateJson(more);
  ASSERT_TRUE(doc2.is_object());
  const auto pods2 = byName(doc2);
  EXPECT_EQ(pods2.at("all").at("node").is_null() + pods2.at("late").at("node").is_null(), 1)
      << doc2.at("pods").dump(2);
}

// firstAvailable: the first subrequest no node can satisfy (an a100), the second (a t4) is
// allocated; the result names the subrequest.
TEST_F(SimulateDra, PrioritizedListFallsBackToTheNextSubrequest) {
  const std::string cluster =
      file("cluster.yaml",
           docs({node("n1"), slice("n1", {"t4"}),
                 deviceClass("a100", "device.attributes[\"gpu.example.com\"].model == \"a100\""),
                 deviceClass("t4", "device.attributes[\"gpu.example.com\"].model == \"t4\""),
                 claim("either",
                       "    requests:\n    - name: gpu\n      firstAvailable:\n"
                       "      - name: big\n        deviceClassName: a100\n"
                       "      - name: small\n        deviceClassName: t4\n"),
                 pod("p", {{"gpu", "resourceClaimName: either"}})}));
  const json doc = simulateJson(cluster);
  ASSERT_TRUE(doc.is_object());
  const auto pods = byName(doc);
  EXPECT_EQ(pods.at("p").at("node"), "n1") << doc.dump(2);
  EXPECT_EQ(devices(pods.at("p")), std::vector<std::string>{"gpu: gpu.example.com/n1/gpu-0"});
}

// A claim two pods share is allocated once; both pods run where its device is.
TEST_F(SimulateDra, ASharedClaimServesBothPodsOnItsNode) {
  const std::string cluster =
      file("cluster.yaml",
           docs({node("n1"), node("n2"), slice("n2", {"a100"}), deviceClass("gpu"),
                 claim("shared", oneGpu()), pod("p1", {{"gpu", "resourceClaimName: shared"}}),
                 pod("p2", {{"gpu", "resourceClaimName: shared"}})}));
  const json doc = simulateJson(cluster);
  ASSERT_TRUE(doc.is_object());
  const auto pods = byName(doc);
  EXPECT_EQ(pods.at("p1").at("node"), "n2") << doc.dump(2);
  EXPECT_EQ(pods.at("p2").at("node"), "n2") << doc.dump(2);
  EXPECT_EQ(devices(pods.at("p1")), std::vector<std::string>{"gpu: gpu.example.com/n2/gpu-0"});
  EXPECT_EQ(devices(pods.at("p2")), std::vector<std::string>{"gpu: gpu.example.com/n2/gpu-0"});
}

// Claims from templates: one per pod, generated as the resourceclaim controller does; four
// devices on two nodes serve four pods, each its own device; the fifth waits.
TEST_F(SimulateDra, TemplateClaimsGetADeviceEachUntilNoneIsLeft) {
  std::vector<std::string> parts = {node("n1"),
                                    node("n2"),
                                    slice("n1", {"t4", "t4"}),
                                    slice("n2", {"t4", "t4"}),
                                    deviceClass("gpu"),
                                    claimTemplate("one-gpu", oneGpu())};
  for (int i = 0; i < 5; ++i) {
    parts.push_back(pod("w" + std::to_string(i), {{"gpu", "resourceClaimTemplateName: one-gpu"}}));
  }
  const json doc = simulateJson(file("cluster.yaml", docs(parts)));
  ASSERT_TRUE(doc.is_object());
  std::set<std::string> used;
  int waiting = 0;
  for (const auto& p : doc.at("pods")) {
    if (p.at("node").is_null()) {
      ++waiting;
      EXPECT_THAT(p.at("reason").get<std::string>(), HasSubstr("cannot allocate all claims"));
      continue;
    }
    const auto d = devices(p);
    ASSERT_EQ(d.size(), 1u) << p.dump(2);
    EXPECT_THAT(d[0], HasSubstr("/" + p.at("node").get<std::string>() + "/")) << p.dump(2);
    EXPECT_TRUE(used.insert(d[0]).second) << "device given twice: " << d[0];
  }
  EXPECT_EQ(used.size(), 4u) << doc.at("pods").dump(2);
  EXPECT_EQ(waiting, 1);
  // The templates were read (to generate the claims): not among the kinds left unused.
  for (const auto& s : doc.at("skipped")) {
    EXPECT_EQ(s.at("object").get<std::string>().find("ResourceClaimTemplate"), std::string::npos)
        << s.dump();
  }
}

// Pods of one template batch (OpportunisticBatching): they land where full cycles put them,
// one device each, whatever the gate.
TEST_F(SimulateDra, PodsOfOneTemplateBatchAndLandAsFullCyclesPlaceThem) {
  std::vector<std::string> parts = {node("n1", "16"),          node("n2", "8"),
                                    node("n3", "4"),           slice("n1", {"t4", "t4", "t4"}),
                                    slice("n2", {"t4", "t4"}), slice("n3", {"t4", "t4"}),
                                    deviceClass("gpu"),        claimTemplate("one-gpu", oneGpu())};
  for (int i = 0; i < 8; ++i) {
    parts.push_back(pod("b" + std::to_string(i), {{"gpu", "resourceClaimTemplateName: one-gpu"}}));
  }
  const std::string cluster = file("cluster.yaml", docs(parts));
  auto placements = [&](const json& doc) {
    std::map<std::string, std::vector<std::string>> out;
    for (const auto& p : doc.at("pods")) {
      out[p.at("name")] = p.at("node").is_null() ? std::vector<std::string>{} : devices(p);
    }
    return out;
  };
  const json batched = simulateJson(cluster);
  const json full = simulateJson(cluster, {"--feature-gates", "OpportunisticBatching=false"});
  ASSERT_TRUE(batched.is_object() && full.is_object());
  EXPECT_EQ(placements(batched), placements(full)) << batched.dump(2) << full.dump(2);
  std::set<std::string> used;
  int placed = 0;
  for (const auto& [name, d] : placements(batched)) {
    if (d.empty()) continue;
    ++placed;
    EXPECT_TRUE(used.insert(d[0]).second) << "device given twice: " << d[0];
  }
  EXPECT_EQ(placed, 7);
}

// A claim allocated already (by an earlier scheduling) binds the pod to the nodes of its
// allocation: n1 is refused with upstream's reason though it is emptier.
TEST_F(SimulateDra, AnAllocatedClaimKeepsThePodOnItsNode) {
  const std::string allocated =
      "status:\n  allocation:\n    devices:\n      results:\n      - request: gpu\n"
      "        driver: gpu.example.com\n        pool: n2\n        device: gpu-0\n"
      "    nodeSelector:\n      nodeSelectorTerms:\n      - matchFields:\n"
      "        - key: metadata.name\n          operator: In\n          values: [n2]\n";
  const std::string cluster =
      file("cluster.yaml",
           docs({node("n1"), node("n2", "2"), slice("n1", {"a100"}), slice("n2", {"a100"}),
                 deviceClass("gpu"), claim("mine", oneGpu(), allocated),
                 pod("p", {{"gpu", "resourceClaimName: mine"}})}));
  const json doc = simulateJson(cluster);
  ASSERT_TRUE(doc.is_object());
  const auto pods = byName(doc);
  EXPECT_EQ(pods.at("p").at("node"), "n2") << doc.dump(2);
  EXPECT_EQ(devices(pods.at("p")), std::vector<std::string>{"gpu: gpu.example.com/n2/gpu-0"});
}

// What keeps a pod from being tried at all, in upstream's words: a template claim not created
// yet, a claim that does not exist; a missing device class fails PreFilter.
TEST_F(SimulateDra, MissingClaimsAndClassesAreSaidInUpstreamsWords) {
  const std::string cluster = file(
      "cluster.yaml", docs({node("n1"), slice("n1", {"a100"}), claim("no-class", oneGpu("missing")),
                            pod("templated", {{"gpu", "resourceClaimTemplateName: nowhere"}}),
                            pod("dangling", {{"gpu", "resourceClaimName: gone"}}),
                            pod("classless", {{"gpu", "resourceClaimName: no-class"}})}));
  const json doc = simulateJson(cluster);
  ASSERT_TRUE(doc.is_object());
  const auto pods = byName(doc);
  EXPECT_EQ(pods.at("templated").at("reason"),
            "not attempted: held at PreEnqueue by DynamicResources: pod \"ml/templated\": "
            "ResourceClaim not created yet")
      << doc.dump(2);
  EXPECT_EQ(pods.at("dangling").at("reason"),
            "not attempted: held at PreEnqueue by DynamicResources: could not find ResourceClaim "
            "\"ml/gone\"");
  EXPECT_THAT(pods.at("classless").at("reason").get<std::string>(),
              HasSubstr("request gpu: device class missing does not exist"));
}

// The example of docs/dra.md: two A100s on node-1 and a T4 on node-2 for three pods that want an
// A100: two go to node-1 with a device each, the third waits, and the details say why per node.
TEST_F(SimulateDra, TheDocumentedExampleGivesWhatTheDocsShow) {
  const json doc = simulateJson(std::string(KSCHED_SOURCE_DIR) + "/docs/examples/dra/cluster.yaml");
  ASSERT_TRUE(doc.is_object());
  const auto pods = byName(doc);
  EXPECT_EQ(devices(pods.at("trainer-0")),
            std::vector<std::string>{"gpu: gpu.example.com/node-1/gpu-0"});
  EXPECT_EQ(devices(pods.at("trainer-1")),
            std::vector<std::string>{"gpu: gpu.example.com/node-1/gpu-1"});
  const json& left = pods.at("trainer-2");
  EXPECT_TRUE(left.at("node").is_null());
  const std::string why = details(left, "DynamicResources");
  EXPECT_THAT(why, HasSubstr("node-1: claim trainer-2-gpu-00003, request gpu: all 2 matching "
                             "devices of class \"gpu.example.com\" are in use on this node"));
  EXPECT_THAT(why, HasSubstr("node-2: claim trainer-2-gpu-00003, request gpu: no device of class "
                             "\"gpu.example.com\" matches selector "
                             "device.attributes[\"gpu.example.com\"].model == \"a100\""));
}

// docs/dra.md's second example: extended resources from devices, a device plugin's GPU, and a
// DeviceTaintRule keeping the last device of gpu-node from the fourth pod.
TEST_F(SimulateDra, TheExtendedResourcesExampleGivesWhatTheDocsShow) {
  const json doc =
      simulateJson(std::string(KSCHED_SOURCE_DIR) + "/docs/examples/dra/extended-resources.yaml");
  ASSERT_TRUE(doc.is_object());
  const auto pods = byName(doc);
  EXPECT_EQ(devices(pods.at("trainer")),
            (std::vector<std::string>{"example.com/gpu: gpu.example.com/gpu-node/gpu-0",
                                      "example.com/gpu: gpu.example.com/gpu-node/gpu-1"}));
  EXPECT_EQ(pods.at("notebook").at("node"), "plugin-node");
  EXPECT_EQ(devices(pods.at("inference")),
            std::vector<std::string>{"example.com/gpu: gpu.example.com/gpu-node/gpu-2"});
  const json& left = pods.at("batch");
  EXPECT_TRUE(left.at("node").is_null());
  EXPECT_THAT(details(left, "DynamicResources"),
              HasSubstr("1 with untolerated taint example.com/maintenance=true"));
}

// KEP 5004: `example.com/gpu` in a container, served by the DeviceClass that names it. On a
// node whose allocatable lists the resource, its device plugin serves it (no devices); on one
// without, the scheduler creates the pod's claim and allocates devices for it; a pod for which
// no node has enough waits with both plugins' reasons. The implicit
// deviceclass.resource.kubernetes.io/<class> works the same way.
TEST_F(SimulateDra, ExtendedResourcesComeFromDevicesWhereNoDevicePluginServesThem) {
  auto gpuPod = [](const std::string& name, const std::string& resource, int count) {
    return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
           "\n  namespace: ml\n  uid: " + name +
           "-uid\nspec:\n  containers:\n  - name: main\n    image: x\n    resources:\n"
           "      requests:\n        " +
           resource + ": \"" + std::to_string(count) + "\"\n      limits:\n        " + resource +
           ": \"" + std::to_string(count) + "\"\nstatus:\n  phase: Pending\n";
  };
  std::string pluginNode = node("plugin-node");
  pluginNode.replace(pluginNode.find("    pods: \"110\"\n"), 0, "    example.com/gpu: \"1\"\n");
  const std::string cls = deviceClass("gpu") + "  extendedResourceName: example.com/gpu\n";
  const std::string cluster =
      file("cluster.yaml",
           docs({node("dra-node"), pluginNode, slice("dra-node", {"t4", "t4", "t4"}), cls,
                 gpuPod("two", "example.com/gpu", 2), gpuPod("one", "example.com/gpu", 1),
                 gpuPod("implicit", "deviceclass.resource.kubernetes.io/gpu", 1),
                 gpuPod("too-many", "example.com/gpu", 1)}));
  const json doc = simulateJson(cluster);
  ASSERT_TRUE(doc.is_object());
  const auto pods = byName(doc);
  EXPECT_EQ(pods.at("two").at("node"), "dra-node") << doc.at("pods").dump(2);
  EXPECT_EQ(devices(pods.at("two")),
            (std::vector<std::string>{"example.com/gpu: gpu.example.com/dra-node/gpu-0",
                                      "example.com/gpu: gpu.example.com/dra-node/gpu-1"}));
  // The device plugin's one GPU: no devices of the driver.
  EXPECT_EQ(pods.at("one").at("node"), "plugin-node") << doc.at("pods").dump(2);
  EXPECT_TRUE(devices(pods.at("one")).empty());
  // The implicit name of class gpu: the plugin node's allocatable does not list it.
  EXPECT_EQ(pods.at("implicit").at("node"), "dra-node") << doc.at("pods").dump(2);
  EXPECT_EQ(devices(pods.at("implicit")),
            std::vector<std::string>{
                "deviceclass.resource.kubernetes.io/gpu: gpu.example.com/dra-node/gpu-2"});
  const json& waiting = pods.at("too-many");
  EXPECT_TRUE(waiting.at("node").is_null());
  EXPECT_THAT(waiting.at("reason").get<std::string>(),
              HasSubstr("1 Insufficient example.com/gpu, 1 cannot allocate all claims"));
  EXPECT_THAT(details(waiting, "DynamicResources"),
              HasSubstr("dra-node: claim <extended-resources>, request container-0-request-0"));
}

// List attributes (DRAListTypeAttributes): a CPU on NUMA nodes 0 and 1 matches the GPU on node 1
// with the gate; without it the list fails the constraint and the pod waits.
TEST_F(SimulateDra, ListAttributesMatchASharedNumaNodeWithTheGate) {
  const std::string slice =
      "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata:\n  name: n1-devices\n"
      "spec:\n  driver: gpu.example.com\n  nodeName: n1\n  pool:\n    name: n1\n"
      "    generation: 1\n    resourceSliceCount: 1\n  devices:\n"
      "  - name: cpu-0\n    attributes:\n      kind: {string: cpu}\n"
      "      resource.kubernetes.io/numaNode: {ints: [0, 1]}\n"
      "  - name: gpu-0\n    attributes:\n      kind: {string: gpu}\n"
      "      resource.kubernetes.io/numaNode: {int: 3}\n"
      "  - name: gpu-1\n    attributes:\n      kind: {string: gpu}\n"
      "      resource.kubernetes.io/numaNode: {int: 1}\n";
  const std::string spec =
      "    requests:\n"
      "    - name: cpu\n      exactly:\n        deviceClassName: cpu\n"
      "    - name: gpu\n      exactly:\n        deviceClassName: gpu\n"
      "    constraints:\n    - matchAttribute: resource.kubernetes.io/numaNode\n";
  const std::string cluster =
      file("cluster.yaml",
           docs({node("n1"), slice,
                 deviceClass("cpu", R"(device.attributes["gpu.example.com"].kind == "cpu")"),
                 deviceClass("gpu", R"(device.attributes["gpu.example.com"].kind == "gpu")"),
                 claim("aligned", spec), pod("a", {{"aligned", "resourceClaimName: aligned"}})}));

  const json on = simulateJson(cluster, {"--feature-gates", "DRAListTypeAttributes=true"});
  ASSERT_TRUE(on.is_object());
  const json placed = byName(on).at("a");
  EXPECT_EQ(placed.at("node"), "n1") << placed.dump(2);
  EXPECT_EQ(devices(placed), (std::vector<std::string>{"aligned: gpu.example.com/n1/cpu-0",
                                                       "aligned: gpu.example.com/n1/gpu-1"}));

  const json off = simulateJson(cluster);
  ASSERT_TRUE(off.is_object());
  const json waiting = byName(off).at("a");
  EXPECT_TRUE(waiting.at("node").is_null()) << waiting.dump(2);
  EXPECT_THAT(details(waiting, "DynamicResources"),
              HasSubstr("constraint matchAttribute resource.kubernetes.io/numaNode"))
      << waiting.dump(2);
}

}  // namespace
}  // namespace ksched::testing

namespace ksched::testing {
namespace {

// A slice whose one device the driver must attach before a pod may use it.
std::string attachedSlice(const std::string& nodeName) {
  return "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata:\n  name: " + nodeName +
         "-gpus\nspec:\n  driver: gpu.example.com\n  nodeName: " + nodeName +
         "\n  pool:\n    name: " + nodeName +
         "\n    generation: 1\n    resourceSliceCount: 1\n  devices:\n  - name: gpu-0\n"
         "    bindsToNode: true\n    bindingConditions: [gpu.example.com/attached]\n"
         "    bindingFailureConditions: [gpu.example.com/failed]\n";
}

// Binding conditions from files: a device no file reports on counts as attached (nothing
// reports device status in a simulated cluster); a claim whose file says its binding failed, or
// whose allocation is older than bindingTimeout, is given up and its pod gets another device.
TEST_F(SimulateDra, BindingConditionsAreDecidedAsTheFilesSay) {
  const std::string allocatedOnN2 =
      "status:\n  allocation:\n    allocationTimestamp: \"2026-01-01T00:00:00Z\"\n"
      "    devices:\n      results:\n      - request: gpu\n"
      "        driver: gpu.example.com\n        pool: n2\n        device: gpu-0\n"
      "        bindingConditions: [gpu.example.com/attached]\n"
      "        bindingFailureConditions: [gpu.example.com/failed]\n"
      "    nodeSelector:\n      nodeSelectorTerms:\n      - matchFields:\n"
      "        - key: metadata.name\n          operator: In\n          values: [n2]\n";
  const std::string failed =
      allocatedOnN2 +
      "  devices:\n  - driver: gpu.example.com\n    pool: n2\n    device: gpu-0\n"
      "    conditions:\n    - type: gpu.example.com/failed\n      status: \"True\"\n"
      "      reason: FabricDown\n      message: no path\n"
      "      lastTransitionTime: \"2026-01-01T00:01:00Z\"\n";
  for (const auto& [name, status] : std::vector<std::pair<std::string, std::string>>{
           {"failed", failed}, {"timed out", allocatedOnN2}}) {
    SCOPED_TRACE(name);
    const std::string cluster = file(
        "cluster.yaml",
        docs({node("n1"), node("n2"), attachedSlice("n1"), attachedSlice("n2"), deviceClass("gpu"),
              claim("mine", oneGpu(), status), pod("p", {{"gpu", "resourceClaimName: mine"}})}));
    const json doc = simulateJson(cluster);
    ASSERT_TRUE(doc.is_object());
    const auto pods = byName(doc);
    const json& p = pods.at("p");
    EXPECT_EQ(p.at("node"), "n1") << doc.dump(2);
    EXPECT_EQ(devices(p), std::vector<std::string>{"gpu: gpu.example.com/n1/gpu-0"});
  }
  // A fresh claim on such a device: placed, the device taken as attached.
  const std::string cluster =
      file("fresh.yaml",
           docs({node("n1"), attachedSlice("n1"), deviceClass("gpu"), claim("fresh", oneGpu()),
                 pod("q", {{"gpu", "resourceClaimName: fresh"}})}));
  const json doc = simulateJson(cluster);
  ASSERT_TRUE(doc.is_object());
  EXPECT_EQ(byName(doc).at("q").at("node"), "n1") << doc.dump(2);
}

// Preemption for devices (DRAPreemption): docs/examples/dra/preemption.yaml. With the gate the
// inference pod preempts the batch pod that started last and takes its GPU once its claim is
// gone (the simulated resourceclaim controller deletes it); the victim, back as a pending copy,
// gets nothing.
// Without the gate no node is worth a preemption.
TEST_F(SimulateDra, AHighPriorityPodPreemptsADeviceHolderWithTheGate) {
  const std::string example = std::string(KSCHED_SOURCE_DIR) + "/docs/examples/dra/preemption.yaml";
  const json doc = simulateJson(example, {"--feature-gates", "DRAPreemption=true"});
  ASSERT_TRUE(doc.is_object());
  const auto pods = byName(doc);
  EXPECT_EQ(pods.at("inference").at("node"), "node-1") << doc.dump(2);
  EXPECT_EQ(devices(pods.at("inference")),
            std::vector<std::string>{"gpu: gpu.example.com/node-1/gpu-1"});
  ASSERT_EQ(doc.at("victims").size(), 1U) << doc.at("victims").dump();
  EXPECT_EQ(doc.at("victims")[0].at("name"), "batch-1");
  EXPECT_EQ(doc.at("victims")[0].at("preemptor"), "ml/inference");
  // The victim, back as a pending copy with a claim of its own, finds no free GPU.
  ASSERT_TRUE(pods.contains("batch-1"));
  EXPECT_TRUE(pods.at("batch-1").at("node").is_null());
  EXPECT_THAT(details(pods.at("batch-1"), "DynamicResources"),
              HasSubstr("all 2 matching devices of class \"gpu.example.com\" are in use"));

  const json off = simulateJson(example);
  ASSERT_TRUE(off.is_object());
  const auto offPods = byName(off);
  EXPECT_TRUE(offPods.at("inference").at("node").is_null()) << off.dump(2);
  EXPECT_TRUE(off.at("victims").empty());
  EXPECT_THAT(offPods.at("inference").dump(),
              HasSubstr("Preemption is not helpful for scheduling"));
}

}  // namespace
}  // namespace ksched::testing
