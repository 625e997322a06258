// Decoding the resource.k8s.io kinds, from upstream's own example objects: the documentation's
// DeviceClass, ResourceClaim and ResourceClaimTemplate (kubernetes/website
// content/en/examples/dra/ and the DRA concept page), the ResourceSlice dra-example-driver's
// README shows as the apiserver serves it, the partitionable-devices and consumable-capacity
// examples; each in v1 and, where the shape differs, v1beta1.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include <ksched/api/resource.h>

#include "config/yaml_json.h"
#include "tests/support/api_test_util.h"

namespace ksched::api {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

template <typename T>
T fromYaml(std::string_view yaml) {
  return decode<T>(config::yamlToJson(yaml));
}

template <typename T>
std::string yamlError(std::string_view yaml) {
  try {
    (void)fromYaml<T>(yaml);
  } catch (const DecodeError& e) {
    return e.what();
  }
  return "<no error>";
}

DeviceAttribute str(std::string s) { return {std::move(s)}; }
DeviceAttribute integer(int64_t i) { return {i}; }
DeviceAttribute version(std::string v) { return {DeviceAttribute::Version{std::move(v)}}; }

// kubectl get resourceslice -o yaml in dra-example-driver's README (two of its eight devices).
constexpr std::string_view kExampleDriverSliceV1 = R"(
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  creationTimestamp: "2024-12-09T16:17:09Z"
  generateName: dra-example-driver-cluster-worker-gpu.example.com-
  generation: 1
  name: dra-example-driver-cluster-worker-gpu.example.com-rf2f7
  ownerReferences:
  - apiVersion: v1
    controller: true
    kind: Node
    name: dra-example-driver-cluster-worker
    uid: 6633c2e1-d947-40c3-ba1f-78f3c9aad05c
  resourceVersion: "530"
  uid: d13fd8bd-0a71-43e1-ba79-ebd2fae4847a
spec:
  driver: gpu.example.com
  nodeName: dra-example-driver-cluster-worker
  pool:
    generation: 0
    name: dra-example-driver-cluster-worker
    resourceSliceCount: 1
  devices:
  - attributes:
      driverVersion:
        version: 1.0.0
      index:
        int: 0
      model:
        string: LATEST-GPU-MODEL
      uuid:
        string: gpu-18db0e85-99e9-c746-8531-ffeb86328b39
    capacity:
      memory:
        value: 80Gi
    name: gpu-0
  - attributes:
      driverVersion:
        version: 1.0.0
      index:
        int: 1
      model:
        string: LATEST-GPU-MODEL
      uuid:
        string: gpu-93d37703-997c-c46f-a531-755e3e0dc2ac
    capacity:
      memory:
        value: 80Gi
    name: gpu-1
)";

// The same slice as resource.k8s.io/v1beta1 serves it: each device's fields under "basic", and
// the plain allNodes false the v1beta1 type writes.
constexpr std::string_view kExampleDriverSliceV1beta1 = R"(
apiVersion: resource.k8s.io/v1beta1
kind: ResourceSlice
metadata:
  name: dra-example-driver-cluster-worker-gpu.example.com-rf2f7
spec:
  driver: gpu.example.com
  nodeName: dra-example-driver-cluster-worker
  allNodes: false
  pool:
    generation: 0
    name: dra-example-driver-cluster-worker
    resourceSliceCount: 1
  devices:
  - name: gpu-0
    basic:
      attributes:
        driverVersion:
          version: 1.0.0
        index:
          int: 0
        model:
          string: LATEST-GPU-MODEL
        uuid:
          string: gpu-18db0e85-99e9-c746-8531-ffeb86328b39
      capacity:
        memory:
          value: 80Gi
  - name: gpu-1
    basic:
      attributes:
        driverVersion:
          version: 1.0.0
        index:
          int: 1
        model:
          string: LATEST-GPU-MODEL
        uuid:
          string: gpu-93d37703-997c-c46f-a531-755e3e0dc2ac
      capacity:
        memory:
          value: 80Gi
)";

void expectExampleDriverSlice(const ResourceSlice& s) {
  EXPECT_EQ(s.metadata.name, "dra-example-driver-cluster-worker-gpu.example.com-rf2f7");
  EXPECT_EQ(s.spec.driver, "gpu.example.com");
  EXPECT_EQ(s.spec.nodeName, "dra-example-driver-cluster-worker");
  EXPECT_FALSE(s.spec.allNodes.has_value());
  EXPECT_FALSE(s.spec.nodeSelector.has_value());
  EXPECT_EQ(s.spec.pool, (ResourcePool{"dra-example-driver-cluster-worker", 0, 1}));
  ASSERT_EQ(s.spec.devices.size(), 2u);
  const Device& d = s.spec.devices[1];
  EXPECT_EQ(d.name, "gpu-1");
  EXPECT_EQ(d.attributes, (DeviceAttributes{
                              {"driverVersion", version("1.0.0")},
                              {"index", integer(1)},
                              {"model", str("LATEST-GPU-MODEL")},
                              {"uuid", str("gpu-93d37703-997c-c46f-a531-755e3e0dc2ac")},
                          }));
  ASSERT_EQ(d.capacity.size(), 1u);
  EXPECT_EQ(d.capacity.at("memory").value, Quantity::parse("80Gi"));
  EXPECT_FALSE(d.capacity.at("memory").requestPolicy.has_value());
  EXPECT_EQ(s.spec.devices[0].attributes.at("index"), integer(0));
}

TEST(ResourceSliceTest, DecodesTheExampleDriversSliceV1) {
  const auto s = fromYaml<ResourceSlice>(kExampleDriverSliceV1);
  expectExampleDriverSlice(s);
  EXPECT_EQ(s.metadata.uid, "d13fd8bd-0a71-43e1-ba79-ebd2fae4847a");
  EXPECT_EQ(s.metadata.resourceVersion, "530");
  ASSERT_EQ(s.metadata.ownerReferences.size(), 1u);
  EXPECT_EQ(s.metadata.ownerReferences[0].kind, "Node");
}

TEST(ResourceSliceTest, DecodesTheExampleDriversSliceV1beta1) {
  expectExampleDriverSlice(fromYaml<ResourceSlice>(kExampleDriverSliceV1beta1));
}

TEST(ResourceSliceTest, V1beta2HasTheShapeOfV1) {
  std::string yaml(kExampleDriverSliceV1);
  yaml.replace(yaml.find("resource.k8s.io/v1"), 18, "resource.k8s.io/v1beta2");
  expectExampleDriverSlice(fromYaml<ResourceSlice>(yaml));
}

TEST(ResourceSliceTest, TheShapeFollowsTheApiVersion) {
  // A v1 device read as v1beta1 has no "basic": nothing but its name.
  std::string yaml(kExampleDriverSliceV1);
  yaml.replace(yaml.find("resource.k8s.io/v1"), 18, "resource.k8s.io/v1beta1");
  const auto s = fromYaml<ResourceSlice>(yaml);
  ASSERT_EQ(s.spec.devices.size(), 2u);
  EXPECT_THAT(s.spec.devices[0].attributes, IsEmpty());
  EXPECT_THAT(s.spec.devices[0].capacity, IsEmpty());
}

TEST(ResourceSliceTest, WithoutApiVersionTheListVersionDecides) {
  auto j = config::yamlToJson(kExampleDriverSliceV1beta1);
  j.erase("apiVersion");
  ResourceSlice s;
  decodeResource(j, "resource.k8s.io/v1beta1", s);
  expectExampleDriverSlice(s);
  // Without a list version, v1: the devices' fields are not where v1 has them.
  decodeResource(j, "", s);
  EXPECT_THAT(s.spec.devices[1].attributes, IsEmpty());
  // An object's own apiVersion wins over the list's.
  decodeResource(config::yamlToJson(kExampleDriverSliceV1), "resource.k8s.io/v1beta1", s);
  expectExampleDriverSlice(s);
}

TEST(ResourceSliceTest, RefusesAVersionItDoesNotKnow) {
  EXPECT_EQ(testing::decodeError<ResourceSlice>(
                R"({"apiVersion": "resource.k8s.io/v1alpha3", "spec": {}})"),
            "apiVersion: \"resource.k8s.io/v1alpha3\" is not a version ksched reads "
            "(resource.k8s.io/v1, v1beta2 or v1beta1)");
  EXPECT_EQ(testing::decodeError<ResourceSlice>(R"({"apiVersion": 1})"),
            "apiVersion: expected a string, got number");
  EXPECT_EQ(testing::decodeError<ResourceSlice>("[]"), "expected an object, got array");
}

TEST(ResourceSliceTest, V1beta1EmptyNodeNameAndFalseAllNodesAreUnset) {
  const auto beta = testing::decodeString<ResourceSlice>(R"({
    "apiVersion": "resource.k8s.io/v1beta1",
    "spec": {"driver": "d", "nodeName": "", "allNodes": true}})");
  EXPECT_FALSE(beta.spec.nodeName.has_value());
  EXPECT_EQ(beta.spec.allNodes, true);
  // v1 keeps what it is given (pointers there).
  const auto v1 = testing::decodeString<ResourceSlice>(
      R"({"spec": {"driver": "d", "nodeName": "", "allNodes": false}})");
  EXPECT_EQ(v1.spec.nodeName, "");
  EXPECT_EQ(v1.spec.allNodes, false);
}

// The partitionable-devices example of the DRA documentation: one slice with the counter set,
// one with the devices consuming it.
TEST(ResourceSliceTest, DecodesThePartitionableDevicesExample) {
  const auto counters = fromYaml<ResourceSlice>(R"(
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: counter-slice
spec:
  driver: "resource-driver.example.com"
  nodeName: dra-example-driver
  pool:
    generation: 1
    name: "my-pool"
    resourceSliceCount: 2
  sharedCounters:
  - name: gpu-0-counter-set
    counters:
      memory:
        value: 40Gi
)");
  ASSERT_EQ(counters.spec.sharedCounters.size(), 1u);
  EXPECT_EQ(counters.spec.sharedCounters[0],
            (CounterSet{"gpu-0-counter-set", {{"memory", Quantity::parse("40Gi")}}}));
  EXPECT_THAT(counters.spec.devices, IsEmpty());
  EXPECT_EQ(counters.spec.pool.resourceSliceCount, 2);

  const auto devices = fromYaml<ResourceSlice>(R"(
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: device-slice
spec:
  driver: "resource-driver.example.com"
  pool:
    generation: 1
    name: "my-pool"
    resourceSliceCount: 2
  nodeName: "my-node"
  devices:
  - name: gpu-0
    capacity:
      memory:
        value: 40Gi
    consumesCounters:
    - counterSet: gpu-0-counter-set
      counters:
        memory:
          value: 40Gi
  - name: gpu-0-partition-0
    capacity:
      memory:
        value: 20Gi
    consumesCounters:
    - counterSet: gpu-0-counter-set
      counters:
        memory:
          value: 20Gi
)");
  ASSERT_EQ(devices.spec.devices.size(), 2u);
  EXPECT_THAT(devices.spec.devices[1].consumesCounters,
              ElementsAre(DeviceCounterConsumption{"gpu-0-counter-set",
                                                   {{"memory", Quantity::parse("20Gi")}}}));
}

// KEP 5075 (consumable capacity), its v1beta1 example, and the per-device fields of the
// partitionable and binding-conditions features.
TEST(ResourceSliceTest, DecodesEveryDeviceField) {
  const auto s = fromYaml<ResourceSlice>(R"(
apiVersion: resource.k8s.io/v1beta1
kind: ResourceSlice
spec:
  driver: guaranteed-cni.dra.networking.x-k8s.io
  perDeviceNodeSelection: true
  pool: {name: p, generation: 3, resourceSliceCount: 1}
  devices:
  - name: eth1
    basic:
      allowMultipleAllocations: true
      attributes:
        name:
          string: "eth1"
        sriov:
          bool: true
      capacity:
        bandwidth:
          requestPolicy:
            default: "1Mi"
            validRange:
              min: "1Mi"
              step: "8"
          value: "10Gi"
        slots:
          value: 16
          requestPolicy:
            default: 1
            validValues: [1, 2, 4]
      nodeSelector:
        nodeSelectorTerms:
        - matchExpressions:
          - {key: rack, operator: In, values: [r1]}
      taints:
      - {key: dra.example.com/unhealthy, value: "true", effect: NoExecute,
         timeAdded: "2025-05-01T10:00:00Z"}
      bindsToNode: true
      bindingConditions: [dra.example.com/attached]
      bindingFailureConditions: [dra.example.com/failed]
)");
  EXPECT_EQ(s.spec.perDeviceNodeSelection, true);
  ASSERT_EQ(s.spec.devices.size(), 1u);
  const Device& d = s.spec.devices[0];
  EXPECT_EQ(d.allowMultipleAllocations, true);
  EXPECT_EQ(d.attributes.at("sriov"), DeviceAttribute{true});
  const auto& bandwidth = d.capacity.at("bandwidth");
  EXPECT_EQ(bandwidth.value, Quantity::parse("10Gi"));
  ASSERT_TRUE(bandwidth.requestPolicy.has_value());
  EXPECT_EQ(bandwidth.requestPolicy->defaultValue, Quantity::parse("1Mi"));
  EXPECT_EQ(bandwidth.requestPolicy->validRangeMin, Quantity::parse("1Mi"));
  EXPECT_EQ(bandwidth.requestPolicy->validRangeStep, Quantity::parse("8"));
  EXPECT_FALSE(bandwidth.requestPolicy->validRangeMax.has_value());
  EXPECT_THAT(d.capacity.at("slots").requestPolicy->validValues,
              ElementsAre(Quantity::fromValue(1), Quantity::fromValue(2), Quantity::fromValue(4)));
  ASSERT_TRUE(d.nodeSelector.has_value());
  EXPECT_TRUE(d.nodeSelector->matches(Labels{{"rack", "r1"}}, "n1"));
  EXPECT_FALSE(d.nodeSelector->matches(Labels{{"rack", "r2"}}, "n1"));
  EXPECT_THAT(d.taints,
              ElementsAre(DeviceTaint{"dra.example.com/unhealthy", "true",
                                      std::string(kDeviceTaintNoExecute), "2025-05-01T10:00:00Z"}));
  EXPECT_EQ(d.bindsToNode, true);
  EXPECT_THAT(d.bindingConditions, ElementsAre("dra.example.com/attached"));
  EXPECT_THAT(d.bindingFailureConditions, ElementsAre("dra.example.com/failed"));
}

TEST(ResourceSliceTest, AnAttributeHasExactlyOneValue) {
  auto attr = [](const std::string& value) {
    return R"({"spec": {"devices": [{"name": "a"}, {"name": "b", "attributes": {"dra.example.com/model": )" +
           value + "}}]}}";
  };
  const std::string where = "spec.devices[1].attributes[dra.example.com/model]";
  const std::string exactlyOne =
      ": exactly one of int, bool, string, version, ints, bools, strings, versions must be set";
  EXPECT_EQ(testing::decodeError<ResourceSlice>(attr("{}")), where + exactlyOne);
  EXPECT_EQ(testing::decodeError<ResourceSlice>(attr(R"({"int": 1, "string": "x"})")),
            where + exactlyOne);
  // The list forms decode (DRAListTypeAttributes; resource_list_attributes_test.cc), and count
  // as one of the fields.
  EXPECT_EQ(testing::decodeError<ResourceSlice>(attr(R"({"string": "a", "strings": ["a"]})")),
            where + exactlyOne);
  EXPECT_EQ(testing::decodeError<ResourceSlice>(attr(R"({"int": 9223372036854775808})")),
            where + ".int: expected an integer in range, got 9223372036854775808");
  EXPECT_EQ(testing::decodeError<ResourceSlice>(attr(R"({"int": 1.5})")),
            where + ".int: expected an integer, got 1.5");
  EXPECT_EQ(testing::decodeError<ResourceSlice>(attr(R"({"bool": "true"})")),
            where + ".bool: expected a boolean, got string");
  EXPECT_EQ(testing::decodeError<ResourceSlice>(attr(R"("x")")),
            where + ": expected an object, got string");
  // A null value is an absent one.
  const auto s = testing::decodeString<ResourceSlice>(attr(R"({"int": null, "version": "1.2.3"})"));
  EXPECT_EQ(s.spec.devices[1].attributes.at("dra.example.com/model"), version("1.2.3"));
}

TEST(ResourceSliceTest, ErrorsNameTheField) {
  struct Case {
    std::string json;
    std::string error;
  };
  const Case cases[] = {
      {R"({"spec": {"pool": {"generation": "1"}}})",
       "spec.pool.generation: expected an integer, got string"},
      {R"({"spec": {"devices": {}}})", "spec.devices: expected an array, got object"},
      {R"({"spec": {"devices": [{"capacity": {"memory": {"value": "80Gx"}}}]}})",
       R"(spec.devices[0].capacity[memory].value: quantity "80Gx": unknown suffix "Gx")"},
      {R"({"spec": {"sharedCounters": [{"name": "s", "counters": {"c": {"value": true}}}]}})",
       "spec.sharedCounters[0].counters[c].value: quantity: expected a string or a number, got "
       "boolean"},
      {R"({"spec": {"nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [
           {"key": "k", "operator": "Near"}]}]}}})",
       "spec.nodeSelector.nodeSelectorTerms.matchExpressions.operator: unknown node selector "
       "operator \"Near\""},
      {R"({"metadata": {"name": 3}})",
       "metadata.name: [json.exception.type_error.302] type must be string, but is number"},
      {R"({"spec": {"devices": [{"taints": [{"key": 1}]}]}})",
       "spec.devices[0].taints[0].key: expected a string, got number"},
      {R"({"apiVersion": "resource.k8s.io/v1beta1", "spec": {"devices": [{"basic": {"nodeName": 1}}]}})",
       "spec.devices[0].basic.nodeName: expected a string, got number"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.json);
    EXPECT_THAT(testing::decodeError<ResourceSlice>(c.json), HasSubstr(c.error));
  }
}

TEST(DeviceClassTest, DecodesTheDocumentationsExamples) {
  // examples/dra/deviceclass.yaml (v1beta2) and examples/dra/driver-install/deviceclass.yaml.
  const auto c = fromYaml<DeviceClass>(R"(
apiVersion: resource.k8s.io/v1beta2
kind: DeviceClass
metadata:
  name: example-device-class
spec:
  selectors:
  - cel:
      expression: |-
        device.driver == "driver.example.com"
)");
  EXPECT_EQ(c.metadata.name, "example-device-class");
  EXPECT_THAT(c.spec.selectors,
              ElementsAre(DeviceSelector{"device.driver == \"driver.example.com\""}));
  EXPECT_FALSE(c.spec.extendedResourceName.has_value());

  const auto gpu = fromYaml<DeviceClass>(R"(
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: gpu.example.com
spec:
  selectors:
  - cel: 
      expression: "device.driver == 'gpu.example.com'"
)");
  EXPECT_THAT(gpu.spec.selectors,
              ElementsAre(DeviceSelector{"device.driver == 'gpu.example.com'"}));
}

TEST(DeviceClassTest, DecodesConfigAndExtendedResourceName) {
  const auto c = fromYaml<DeviceClass>(R"(
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: gpu.example.com
spec:
  extendedResourceName: example.com/gpu
  selectors:
  - cel:
      expression: device.driver == 'gpu.example.com'
  - {}
  config:
  - opaque:
      driver: gpu.example.com
      parameters:
        apiVersion: gpu.resource.example.com/v1alpha1
        kind: GpuConfig
        sharing: {strategy: TimeSlicing}
)");
  EXPECT_EQ(c.spec.extendedResourceName, "example.com/gpu");
  // A selector of a kind ksched does not know keeps an empty expression (it does not compile).
  ASSERT_EQ(c.spec.selectors.size(), 2u);
  EXPECT_EQ(c.spec.selectors[1].celExpression, "");
  ASSERT_EQ(c.spec.config.size(), 1u);
  EXPECT_EQ(c.spec.config[0].driver, "gpu.example.com");
  EXPECT_THAT(c.spec.config[0].requests, IsEmpty());
  EXPECT_EQ(nlohmann::json::parse(c.spec.config[0].opaque),
            nlohmann::json::parse(R"({"apiVersion": "gpu.resource.example.com/v1alpha1",
                                      "kind": "GpuConfig", "sharing": {"strategy": "TimeSlicing"}})"));
}

}  // namespace
}  // namespace ksched::api
