// Decoding ResourceClaim and ResourceClaimTemplate from the DRA documentation's examples (v1,
// and v1beta1 where requests carry their fields directly), defaults as the apiserver applies
// them, and a claim's status.
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
using ::testing::IsEmpty;

template <typename T>
T fromYaml(std::string_view yaml) {
  return decode<T>(config::yamlToJson(yaml));
}

constexpr std::string_view kBlackCat =
    "device.attributes[\"resource-driver.example.com\"].color == \"black\" &&\n"
    "device.attributes[\"resource-driver.example.com\"].size == \"large\"";

TEST(ResourceClaimTest, DecodesTheDocumentationsClaim) {
  // examples/dra/resourceclaim.yaml; the file indents `expression` level with `cel`, which
  // makes it a sibling of a null cel. Indented as the API means it here.
  const auto c = fromYaml<ResourceClaim>(R"(
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: example-resource-claim
spec:
  devices:
    requests:
    - name: single-gpu-claim
      exactly:
        deviceClassName: example-device-class
        allocationMode: All
        selectors:
        - cel:
            expression: |-
              device.attributes["driver.example.com"].type == "gpu" &&
              device.capacity["driver.example.com"].memory == quantity("64Gi")
)");
  EXPECT_EQ(c.metadata.name, "example-resource-claim");
  ASSERT_EQ(c.spec.requests.size(), 1u);
  const DeviceRequest& r = c.spec.requests[0];
  EXPECT_EQ(r.name, "single-gpu-claim");
  EXPECT_THAT(r.firstAvailable, IsEmpty());
  ASSERT_TRUE(r.exactly.has_value());
  EXPECT_EQ(r.exactly->deviceClassName, "example-device-class");
  EXPECT_EQ(r.exactly->allocationMode, kAllocationModeAll);
  EXPECT_EQ(r.exactly->count, 0);  // count belongs to ExactCount
  EXPECT_THAT(r.exactly->selectors,
              ElementsAre(DeviceSelector{
                  "device.attributes[\"driver.example.com\"].type == \"gpu\" &&\n"
                  "device.capacity[\"driver.example.com\"].memory == quantity(\"64Gi\")"}));
  EXPECT_FALSE(r.exactly->adminAccess.has_value());
  EXPECT_FALSE(c.status.allocation.has_value());
  EXPECT_THAT(c.status.reservedFor, IsEmpty());
}

TEST(ResourceClaimTest, DefaultsAnExactRequestToOneDevice) {
  // examples/dra/driver-install/example/resourceclaim.yaml.
  const auto c = fromYaml<ResourceClaim>(R"(
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
 name: some-gpu
 namespace: dra-tutorial
spec:
   devices:
     requests:
     - name: some-gpu
       exactly:
         deviceClassName: gpu.example.com
         selectors:
         - cel:
             expression: "device.capacity['gpu.example.com'].memory.compareTo(quantity('10Gi')) >= 0"
)");
  EXPECT_EQ(c.metadata.namespace_, "dra-tutorial");
  ASSERT_EQ(c.spec.requests.size(), 1u);
  ASSERT_TRUE(c.spec.requests[0].exactly.has_value());
  EXPECT_EQ(c.spec.requests[0].exactly->allocationMode, kAllocationModeExactCount);
  EXPECT_EQ(c.spec.requests[0].exactly->count, 1);
}

TEST(ResourceClaimTemplateTest, DecodesTheDocumentationsTemplate) {
  // examples/dra/resourceclaimtemplate.yaml.
  const auto t = fromYaml<ResourceClaimTemplate>(R"(
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: example-resource-claim-template
spec:
  spec:
    devices:
      requests:
      - name: gpu-claim
        exactly:
          deviceClassName: example-device-class
          selectors:
            - cel:
                expression: |-
                  device.attributes["driver.example.com"].type == "gpu" &&
                  device.capacity["driver.example.com"].memory == quantity("64Gi")
)");
  EXPECT_EQ(t.metadata.name, "example-resource-claim-template");
  ASSERT_EQ(t.spec.requests.size(), 1u);
  EXPECT_EQ(t.spec.requests[0].name, "gpu-claim");
  ASSERT_TRUE(t.spec.requests[0].exactly.has_value());
  EXPECT_EQ(t.spec.requests[0].exactly->deviceClassName, "example-device-class");
  EXPECT_EQ(t.spec.requests[0].exactly->count, 1);
  EXPECT_EQ(t.spec.requests[0].exactly->selectors.size(), 1u);
}

TEST(ResourceClaimTemplateTest, DecodesThePrioritizedListExampleV1AndV1beta1) {
  // The DRA concept page's prioritized list: v1 and, as v1.33 documented it, v1beta1 (the same
  // text there: firstAvailable sits on the request in both).
  for (const char* version : {"resource.k8s.io/v1", "resource.k8s.io/v1beta1"}) {
    SCOPED_TRACE(version);
    const auto t = fromYaml<ResourceClaimTemplate>(std::string("apiVersion: ") + version + R"(
kind: ResourceClaimTemplate
metadata:
  name: prioritized-list-claim-template
spec:
  metadata:
    labels: {team: cats}
  spec:
    devices:
      requests:
      - name: req-0
        firstAvailable:
        - name: large-black
          deviceClassName: resource.example.com
          selectors:
          - cel:
              expression: |-
                device.attributes["resource-driver.example.com"].color == "black" &&
                device.attributes["resource-driver.example.com"].size == "large"
        - name: small-white
          deviceClassName: resource.example.com
          selectors:
          - cel:
              expression: |-
                device.attributes["resource-driver.example.com"].color == "white" &&
                device.attributes["resource-driver.example.com"].size == "small"
          count: 2
)");
    EXPECT_EQ(t.claimMetadata.labels, (Labels{{"team", "cats"}}));
    ASSERT_EQ(t.spec.requests.size(), 1u);
    const DeviceRequest& r = t.spec.requests[0];
    EXPECT_FALSE(r.exactly.has_value());
    ASSERT_EQ(r.firstAvailable.size(), 2u);
    EXPECT_EQ(r.firstAvailable[0].name, "large-black");
    EXPECT_EQ(r.firstAvailable[0].request.deviceClassName, "resource.example.com");
    EXPECT_EQ(r.firstAvailable[0].request.allocationMode, kAllocationModeExactCount);
    EXPECT_EQ(r.firstAvailable[0].request.count, 1);
    EXPECT_THAT(r.firstAvailable[0].request.selectors,
                ElementsAre(DeviceSelector{std::string(kBlackCat)}));
    EXPECT_EQ(r.firstAvailable[1].name, "small-white");
    EXPECT_EQ(r.firstAvailable[1].request.count, 2);
  }
}

TEST(ResourceClaimTemplateTest, DecodesV1beta1RequestsWithTheirFieldsOnTheRequest) {
  // The v1beta1 template of the DRA concept page (Kubernetes 1.32).
  const auto t = fromYaml<ResourceClaimTemplate>(R"(
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaimTemplate
metadata:
  name: large-black-cat-claim-template
spec:
  spec:
    devices:
      requests:
      - name: req-0
        deviceClassName: resource.example.com
        selectors:
        - cel:
           expression: |-
              device.attributes["resource-driver.example.com"].color == "black" &&
              device.attributes["resource-driver.example.com"].size == "large"
)");
  ASSERT_EQ(t.spec.requests.size(), 1u);
  const DeviceRequest& r = t.spec.requests[0];
  ASSERT_TRUE(r.exactly.has_value());
  EXPECT_EQ(r.exactly->deviceClassName, "resource.example.com");
  EXPECT_EQ(r.exactly->allocationMode, kAllocationModeExactCount);
  EXPECT_EQ(r.exactly->count, 1);
  EXPECT_THAT(r.exactly->selectors, ElementsAre(DeviceSelector{std::string(kBlackCat)}));
  EXPECT_THAT(r.firstAvailable, IsEmpty());
}

TEST(ResourceClaimTest, V1beta1MakesAnExactRequestWhenAnyOfItsFieldsIsSet) {
  // Upstream's conversion: deviceClassName, selectors, allocationMode, count, adminAccess,
  // tolerations or capacity set (an empty string or zero count is not set).
  struct Case {
    std::string fields;
    bool exact;
  };
  const Case cases[] = {
      {R"("firstAvailable": [{"name": "a", "deviceClassName": "c"}])", false},
      {R"("deviceClassName": "", "count": 0, "allocationMode": "", "selectors": null)", false},
      {R"("deviceClassName": "c")", true},
      {R"("selectors": [])", true},
      {R"("allocationMode": "All")", true},
      {R"("count": 2)", true},
      {R"("adminAccess": false)", true},
      {R"("tolerations": [])", true},
      {R"("capacity": {})", true},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.fields);
    const auto claim = testing::decodeString<ResourceClaim>(
        R"({"apiVersion": "resource.k8s.io/v1beta1", "spec": {"devices": {"requests": [{"name": "r", )" +
        c.fields + "}]}}}");
    ASSERT_EQ(claim.spec.requests.size(), 1u);
    EXPECT_EQ(claim.spec.requests[0].exactly.has_value(), c.exact);
  }
}

TEST(ResourceClaimTest, DecodesAdminAccessTolerationsCapacityConstraintsAndConfig) {
  // The DRA concept page's admin access and device taint examples, a consumable-capacity
  // request (KEP 5075) and the constraints and config of a claim.
  const auto c = fromYaml<ResourceClaim>(R"(
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: c
  namespace: ns
spec:
  devices:
    requests:
    - name: req-0
      exactly:
        deviceClassName: resource.example.com
        allocationMode: All
        adminAccess: true
    - name: req-1
      exactly:
        deviceClassName: resource.example.com
        tolerations:
        - key: dra.example.com/unhealthy
          operator: Exists
          effect: NoExecute
        - key: dra.example.com/slow
          value: "yes"
          tolerationSeconds: 60
    - name: nic
      exactly:
        deviceClassName: qos-aware-shared.device.x-k8s.io
        count: 2
        capacity:
          requests:
            bandwidth: 5Gi
    constraints:
    - requests: [req-1, nic]
      matchAttribute: dra.example.com/numa
    - distinctAttribute: dra.example.com/nic
    config:
    - requests: [nic]
      opaque:
        driver: guaranteed-cni.dra.networking.x-k8s.io
        parameters: {mtu: 9000}
)");
  ASSERT_EQ(c.spec.requests.size(), 3u);
  EXPECT_EQ(c.spec.requests[0].exactly->adminAccess, true);
  EXPECT_EQ(c.spec.requests[0].exactly->count, 0);
  EXPECT_THAT(c.spec.requests[1].exactly->tolerations,
              ElementsAre(DeviceToleration{"dra.example.com/unhealthy", "Exists", "",
                                           std::string(kDeviceTaintNoExecute), std::nullopt},
                          DeviceToleration{"dra.example.com/slow", "Equal", "yes", "", 60}));
  EXPECT_EQ(c.spec.requests[2].exactly->count, 2);
  EXPECT_EQ(c.spec.requests[2].exactly->capacity,
            (CapacityRequirements{{"bandwidth", Quantity::parse("5Gi")}}));
  EXPECT_THAT(c.spec.constraints,
              ElementsAre(DeviceConstraint{{"req-1", "nic"}, "dra.example.com/numa", std::nullopt},
                          DeviceConstraint{{}, std::nullopt, "dra.example.com/nic"}));
  ASSERT_EQ(c.spec.config.size(), 1u);
  EXPECT_EQ(
      c.spec.config[0],
      (DeviceConfiguration{{"nic"}, "guaranteed-cni.dra.networking.x-k8s.io", R"({"mtu":9000})"}));
}

TEST(ResourceClaimTest, DecodesTheStatus) {
  // An allocated, reserved claim: the consumable-capacity status of KEP 5075 and the fields
  // the scheduler writes.
  const auto c = fromYaml<ResourceClaim>(R"(
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c, namespace: ns}
spec:
  devices:
    requests:
    - name: nic
      exactly: {deviceClassName: qos-aware-shared.device.x-k8s.io}
status:
  allocation:
    devices:
      results:
      - consumedCapacity:
          bandwidth: 1Mi
        device: eth1
        shareID: 1cd3bd4b-ffd9-4a09-8a09-fb3bd35a5a2c
        driver: guaranteed-cni.dra.networking.x-k8s.io
        pool: kind-worker
        request: nic
        tolerations: [{key: k, operator: Exists}]
        bindingConditions: [attached]
        bindingFailureConditions: [failed]
        adminAccess: false
      config:
      - source: FromClass
        opaque:
          driver: guaranteed-cni.dra.networking.x-k8s.io
          parameters: {mtu: 1500}
      - source: FromClaim
        requests: [nic]
        opaque:
          driver: guaranteed-cni.dra.networking.x-k8s.io
          parameters: "raw"
    nodeSelector:
      nodeSelectorTerms:
      - matchFields:
        - {key: metadata.name, operator: In, values: [kind-worker]}
    allocationTimestamp: "2025-06-01T12:00:00Z"
  reservedFor:
  - resource: pods
    name: pod-0
    uid: 3b9a7f6e-0000-4000-8000-000000000001
)");
  ASSERT_TRUE(c.status.allocation.has_value());
  const AllocationResult& a = *c.status.allocation;
  ASSERT_EQ(a.devices.size(), 1u);
  const DeviceRequestAllocationResult& r = a.devices[0];
  EXPECT_EQ(r.request, "nic");
  EXPECT_EQ(r.driver, "guaranteed-cni.dra.networking.x-k8s.io");
  EXPECT_EQ(r.pool, "kind-worker");
  EXPECT_EQ(r.device, "eth1");
  EXPECT_EQ(r.shareID, "1cd3bd4b-ffd9-4a09-8a09-fb3bd35a5a2c");
  EXPECT_EQ(r.adminAccess, false);
  EXPECT_EQ(r.consumedCapacity.at("bandwidth"), Quantity::parse("1Mi"));
  EXPECT_THAT(r.tolerations, ElementsAre(DeviceToleration{"k", "Exists", "", "", std::nullopt}));
  EXPECT_THAT(r.bindingConditions, ElementsAre("attached"));
  EXPECT_THAT(r.bindingFailureConditions, ElementsAre("failed"));
  ASSERT_EQ(a.config.size(), 2u);
  EXPECT_EQ(a.config[0].source, kAllocationConfigFromClass);
  EXPECT_EQ(a.config[0].config.opaque, R"({"mtu":1500})");
  EXPECT_EQ(a.config[1].source, kAllocationConfigFromClaim);
  EXPECT_THAT(a.config[1].config.requests, ElementsAre("nic"));
  EXPECT_EQ(a.config[1].config.opaque, R"("raw")");
  ASSERT_TRUE(a.nodeSelector.has_value());
  EXPECT_TRUE(a.nodeSelector->matches(Labels{}, "kind-worker"));
  EXPECT_FALSE(a.nodeSelector->matches(Labels{}, "kind-worker2"));
  EXPECT_EQ(a.allocationTimestamp, "2025-06-01T12:00:00Z");
  EXPECT_THAT(c.status.reservedFor,
              ElementsAre(ResourceClaimConsumerReference{"", "pods", "pod-0",
                                                         "3b9a7f6e-0000-4000-8000-000000000001"}));
}

TEST(ResourceClaimTest, ErrorsNameTheField) {
  struct Case {
    std::string json;
    std::string error;
  };
  const Case cases[] = {
      {R"({"spec": {"devices": {"requests": [{"name": "a"}, {"exactly": {"count": "2"}}]}}})",
       "spec.devices.requests[1].exactly.count: expected an integer, got string"},
      {R"({"spec": {"devices": {"requests": [{"firstAvailable": [{"name": "x"}, {"tolerations": [{"tolerationSeconds": true}]}]}]}}})",
       "spec.devices.requests[0].firstAvailable[1].tolerations[0].tolerationSeconds: expected an "
       "integer, got boolean"},
      {R"({"apiVersion": "resource.k8s.io/v1beta1", "spec": {"devices": {"requests": [{"count": "2"}]}}})",
       "spec.devices.requests[0].count: expected an integer, got string"},
      {R"({"spec": {"devices": {"requests": [{"exactly": {"capacity": {"requests": {"bw": "x"}}}}]}}})",
       "spec.devices.requests[0].exactly.capacity.requests[bw]: quantity \"x\": "},
      {R"({"spec": {"devices": {"config": [{"opaque": []}]}}})",
       "spec.devices.config[0].opaque: expected an object, got array"},
      {R"({"spec": {"devices": {"constraints": [{"requests": [1]}]}}})",
       "spec.devices.constraints[0].requests[0]: expected a string, got number"},
      {R"({"status": {"allocation": {"devices": {"results": [{"consumedCapacity": {"bw": []}}]}}}})",
       "status.allocation.devices.results[0].consumedCapacity[bw]: quantity: expected a string or "
       "a number, got array"},
      {R"({"status": {"reservedFor": [{"uid": 7}]}})",
       "status.reservedFor[0].uid: expected a string, got number"},
      {R"({"spec": {"devices": []}})", "spec.devices: expected an object, got array"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.json);
    EXPECT_THAT(testing::decodeError<ResourceClaim>(c.json), ::testing::StartsWith(c.error));
  }
  EXPECT_EQ(testing::decodeError<ResourceClaimTemplate>(
                R"({"spec": {"spec": {"devices": {"requests": {}}}}})"),
            "spec.spec.devices.requests: expected an array, got object");
  EXPECT_EQ(
      testing::decodeError<DeviceClass>(R"({"spec": {"selectors": [{"cel": {"expression": 1}}]}})"),
      "spec.selectors[0].cel.expression: expected a string, got number");
}

}  // namespace
}  // namespace ksched::api
