// The resource.k8s.io/v1 kinds through ksched's client and decoders against the real apiserver,
// which serves them from the CRDs of tests/integration/crds (dra.h): upstream's example objects
// created, LISTed and WATCHed and decoded; a claim's allocation written through the status
// subresource as the scheduler writes it (toJson), read back, and refused when stale.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include <ksched/api/decode.h>
#include <ksched/api/resource.h>

#include "client/errors.h"
#include "client/rest_client.h"
#include "cluster.h"
#include "config/yaml_json.h"
#include "dra.h"
#include "scheduling.h"

namespace ksched::testing {
namespace {

using client::ApiError;
using nlohmann::json;
using ::testing::ElementsAre;

constexpr const char* kNs = "dra-api";

// examples/dra/driver-install/deviceclass.yaml of the Kubernetes documentation.
constexpr const char* kDeviceClass = R"(
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: gpu.example.com
spec:
  selectors:
  - cel:
      expression: "device.driver == 'gpu.example.com'"
)";

// The slice dra-example-driver's README shows, with two of its devices.
constexpr const char* kResourceSlice = R"(
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: dra-example-driver-cluster-worker-gpu.example.com-rf2f7
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

// examples/dra/driver-install/example/resourceclaim.yaml, with a toleration.
constexpr const char* kResourceClaim = R"(
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: some-gpu
  namespace: dra-api
spec:
  devices:
    requests:
    - name: some-gpu
      exactly:
        deviceClassName: gpu.example.com
        selectors:
        - cel:
            expression: "device.capacity['gpu.example.com'].memory.compareTo(quantity('10Gi')) >= 0"
        tolerations:
        - key: gpu.example.com/unhealthy
          effect: NoSchedule
)";

class DraApi : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    installResourceCrds(TestCluster::get().admin());
    ensureNamespace(TestCluster::get().admin(), kNs);
  }

  // Deletes what an earlier run left (the test cluster may be kept between runs).
  static void remove(const std::string& path) {
    try {
      TestCluster::get().admin().del(path);
    } catch (const ApiError& e) {
      if (!e.isNotFound()) throw;
    }
  }
};

api::AllocationResult allocation() {
  api::AllocationResult a;
  a.devices = {{.request = "some-gpu",
                .driver = "gpu.example.com",
                .pool = "dra-example-driver-cluster-worker",
                .device = "gpu-1",
                .tolerations = {{"gpu.example.com/unhealthy", "Equal", "", "NoSchedule"}}}};
  a.config = {{std::string(api::kAllocationConfigFromClaim),
               {{"some-gpu"}, "gpu.example.com", R"({"sharing":{"strategy":"TimeSlicing"}})"}}};
  a.nodeSelector = api::NodeSelector{{api::NodeSelectorTerm{
      .matchFields = {
          {"metadata.name", api::SelectorOperator::kIn, {"dra-example-driver-cluster-worker"}}}}}};
  a.allocationTimestamp = "2025-06-01T12:00:00Z";
  return a;
}

// A WATCH from a resourceVersion in its own thread, keeping every event but bookmarks.
class Watch {
 public:
  Watch(client::RestClient& c, const std::string& path, const std::string& resourceVersion)
      : thread_([this, &c, path, resourceVersion](std::stop_token stop) {
          try {
            c.watch(
                path, {.resourceVersion = resourceVersion, .timeoutSeconds = 60},
                [this](client::WatchEvent&& e) {
                  if (e.type == client::WatchEventType::kBookmark) return true;
                  std::lock_guard lock(mu_);
                  events_.push_back(std::move(e));
                  return true;
                },
                stop);
          } catch (const std::exception& e) {
            std::lock_guard lock(mu_);
            error_ = e.what();
          }
        }) {}

  // The events so far, once there are at least `n` (or what came within 20 s).
  std::vector<client::WatchEvent> waitFor(size_t n) {
    eventually([&] {
      std::lock_guard lock(mu_);
      return events_.size() >= n || !error_.empty();
    });
    std::lock_guard lock(mu_);
    EXPECT_EQ(error_, "");
    return events_;
  }

 private:
  std::mutex mu_;
  std::vector<client::WatchEvent> events_;  // guarded by mu_
  std::string error_;                       // guarded by mu_
  std::jthread thread_;                     // last: stopped and joined first
};

void expectExampleClass(const api::DeviceClass& c) {
  EXPECT_EQ(c.metadata.name, "gpu.example.com");
  EXPECT_FALSE(c.metadata.uid.empty());
  EXPECT_THAT(c.spec.selectors,
              ElementsAre(api::DeviceSelector{"device.driver == 'gpu.example.com'"}));
}

void expectExampleSlice(const api::ResourceSlice& s) {
  EXPECT_FALSE(s.metadata.uid.empty());
  EXPECT_EQ(s.spec.driver, "gpu.example.com");
  EXPECT_EQ(s.spec.nodeName, "dra-example-driver-cluster-worker");
  EXPECT_EQ(s.spec.pool, (api::ResourcePool{"dra-example-driver-cluster-worker", 0, 1}));
  ASSERT_EQ(s.spec.devices.size(), 2u);
  EXPECT_EQ(s.spec.devices[1].name, "gpu-1");
  EXPECT_EQ(s.spec.devices[1].attributes.at("index"), api::DeviceAttribute{int64_t{1}});
  EXPECT_EQ(s.spec.devices[1].attributes.at("model"),
            api::DeviceAttribute{std::string("LATEST-GPU-MODEL")});
  EXPECT_EQ(s.spec.devices[1].attributes.at("driverVersion"),
            api::DeviceAttribute{api::DeviceAttribute::Version{"1.0.0"}});
  EXPECT_EQ(s.spec.devices[1].capacity.at("memory").value, api::Quantity::parse("80Gi"));
}

void expectExampleClaim(const api::ResourceClaim& c) {
  EXPECT_EQ(c.metadata.name, "some-gpu");
  EXPECT_EQ(c.metadata.namespace_, kNs);
  ASSERT_EQ(c.spec.requests.size(), 1u);
  ASSERT_TRUE(c.spec.requests[0].exactly.has_value());
  const api::ExactDeviceRequest& r = *c.spec.requests[0].exactly;
  EXPECT_EQ(r.deviceClassName, "gpu.example.com");
  EXPECT_EQ(r.allocationMode, api::kAllocationModeExactCount);
  EXPECT_EQ(r.count, 1);
  ASSERT_EQ(r.selectors.size(), 1u);
  EXPECT_EQ(r.selectors[0].celExpression,
            "device.capacity['gpu.example.com'].memory.compareTo(quantity('10Gi')) >= 0");
  // The CRD defaults the toleration's operator as upstream's +default does.
  EXPECT_THAT(r.tolerations, ElementsAre(api::DeviceToleration{"gpu.example.com/unhealthy", "Equal",
                                                               "", "NoSchedule"}));
}

TEST_F(DraApi, CreatesListsWatchesAndWritesTheAllocation) {
  auto& admin = TestCluster::get().admin();
  const std::string classes = std::string(kResourceApi) + "/deviceclasses";
  const std::string slices = std::string(kResourceApi) + "/resourceslices";
  const std::string claims = std::string(kResourceApi) + "/namespaces/" + kNs + "/resourceclaims";
  remove(classes + "/gpu.example.com");
  remove(slices + "/dra-example-driver-cluster-worker-gpu.example.com-rf2f7");
  remove(claims + "/some-gpu");

  // WATCH each kind from its LIST's resourceVersion, as an informer starts; create the objects.
  Watch classWatch(admin, classes, admin.list(classes).resourceVersion);
  Watch sliceWatch(admin, slices, admin.list(slices).resourceVersion);
  Watch claimWatch(admin, claims, admin.list(claims).resourceVersion);
  admin.post(classes, config::yamlToJson(kDeviceClass));
  admin.post(slices, config::yamlToJson(kResourceSlice));
  const auto created = admin.post(claims, config::yamlToJson(kResourceClaim));
  EXPECT_EQ(created["spec"]["devices"]["requests"][0]["exactly"]["tolerations"][0]["operator"],
            "Equal");

  // Every event and every LIST item decodes.
  auto added = classWatch.waitFor(1);
  ASSERT_EQ(added.size(), 1u);
  EXPECT_EQ(added[0].type, client::WatchEventType::kAdded);
  expectExampleClass(api::decode<api::DeviceClass>(added[0].object));
  added = sliceWatch.waitFor(1);
  ASSERT_EQ(added.size(), 1u);
  EXPECT_EQ(added[0].type, client::WatchEventType::kAdded);
  expectExampleSlice(api::decode<api::ResourceSlice>(added[0].object));
  added = claimWatch.waitFor(1);
  ASSERT_EQ(added.size(), 1u);
  EXPECT_EQ(added[0].type, client::WatchEventType::kAdded);
  expectExampleClaim(api::decode<api::ResourceClaim>(added[0].object));
  EXPECT_FALSE(api::decode<api::ResourceClaim>(added[0].object).status.allocation.has_value());

  const auto classList = admin.list(classes);
  ASSERT_EQ(classList.items.size(), 1u);
  expectExampleClass(api::decode<api::DeviceClass>(classList.items[0]));
  const auto sliceList = admin.list(slices);
  ASSERT_EQ(sliceList.items.size(), 1u);
  expectExampleSlice(api::decode<api::ResourceSlice>(sliceList.items[0]));
  const auto claimList = admin.list(claims);
  ASSERT_EQ(claimList.items.size(), 1u);
  expectExampleClaim(api::decode<api::ResourceClaim>(claimList.items[0]));

  // The scheduler's write: allocation and reservedFor through the status subresource.
  const api::AllocationResult want = allocation();
  const api::ResourceClaimConsumerReference pod{"", "pods", "pod-0",
                                                "3b9a7f6e-0000-4000-8000-000000000001"};
  json update = created;
  update["status"] = {{"allocation", api::toJson(want)}, {"reservedFor", {api::toJson(pod)}}};
  const auto written = admin.put(claims + "/some-gpu/status", update);
  EXPECT_NE(written["metadata"]["resourceVersion"], created["metadata"]["resourceVersion"]);

  const auto stored = api::decode<api::ResourceClaim>(admin.get(claims + "/some-gpu"));
  ASSERT_TRUE(stored.status.allocation.has_value());
  EXPECT_EQ(*stored.status.allocation, want);
  EXPECT_THAT(stored.status.reservedFor, ElementsAre(pod));
  expectExampleClaim(stored);

  const auto modified = claimWatch.waitFor(2);
  ASSERT_EQ(modified.size(), 2u);
  EXPECT_EQ(modified[1].type, client::WatchEventType::kModified);
  EXPECT_EQ(api::decode<api::ResourceClaim>(modified[1].object).status.allocation, want);

  // A write from the resourceVersion before it: 409 Conflict, and the stored status stands.
  json stale = created;
  stale["status"] = {{"reservedFor", json::array()}};
  try {
    admin.put(claims + "/some-gpu/status", stale);
    ADD_FAILURE() << "an update with a stale resourceVersion must conflict";
  } catch (const ApiError& e) {
    EXPECT_TRUE(e.isConflict()) << e.what();
  }
  const auto after = api::decode<api::ResourceClaim>(admin.get(claims + "/some-gpu"));
  EXPECT_THAT(after.status.reservedFor, ElementsAre(pod));
  EXPECT_EQ(after.status.allocation, want);
}

TEST_F(DraApi, TheSchemaRefusesWhatUpstreamRefuses) {
  auto& admin = TestCluster::get().admin();
  const std::string claims = std::string(kResourceApi) + "/namespaces/" + kNs + "/resourceclaims";
  auto expectInvalid = [&](const std::string& path, json object, const std::string& field) {
    try {
      admin.post(path, object);
      ADD_FAILURE() << "created: " << object.dump();
    } catch (const ApiError& e) {
      EXPECT_EQ(e.code(), 422) << e.what();
      EXPECT_THAT(e.message(), ::testing::HasSubstr(field)) << e.what();
    }
  };
  auto claim = config::yamlToJson(kResourceClaim);
  claim["metadata"]["name"] = "bad-mode";
  claim["spec"]["devices"]["requests"][0]["exactly"]["allocationMode"] = "Some";
  expectInvalid(claims, claim, "allocationMode");

  auto slice = config::yamlToJson(kResourceSlice);
  slice["metadata"]["name"] = "no-driver";
  slice["spec"].erase("driver");
  expectInvalid(std::string(kResourceApi) + "/resourceslices", slice, "spec.driver");

  slice = config::yamlToJson(kResourceSlice);
  slice["metadata"]["name"] = "bad-quantity";
  slice["spec"]["devices"][0]["capacity"]["memory"]["value"] = "80Gx";
  expectInvalid(std::string(kResourceApi) + "/resourceslices", slice, "value");
}

// The list forms of an attribute (DRAListTypeAttributes): stored as a 1.36 apiserver with the
// gate stores them, and a slice holding them decodes from LIST and WATCH alike.
TEST_F(DraApi, ListAttributesAreStoredAndRead) {
  auto& admin = TestCluster::get().admin();
  const std::string slices = std::string(kResourceApi) + "/resourceslices";
  remove(slices + "/cpus");
  Watch sliceWatch(admin, slices, admin.list(slices).resourceVersion);
  admin.post(slices, json::parse(R"({
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "cpus"},
    "spec": {"driver": "cpu.example.com", "nodeName": "worker",
             "pool": {"name": "worker", "generation": 1, "resourceSliceCount": 1},
             "devices": [{"name": "cpu-0", "attributes": {
               "resource.kubernetes.io/numaNode": {"ints": [0, 1]},
               "resource.kubernetes.io/pcieRoot": {"strings": ["pci0000:00", "pci0000:01"]},
               "smt": {"bools": [true]},
               "firmware": {"versions": ["1.2.0", "2.0.0"]},
               "socket": {"int": 0}}}]}})"));
  using A = api::DeviceAttribute;
  auto expectCpus = [](const api::ResourceSlice& s) {
    ASSERT_EQ(s.spec.devices.size(), 1u);
    const api::DeviceAttributes& a = s.spec.devices[0].attributes;
    EXPECT_EQ(a.at("resource.kubernetes.io/numaNode"), (A{A::Ints{0, 1}}));
    EXPECT_EQ(a.at("resource.kubernetes.io/pcieRoot"), (A{A::Strings{"pci0000:00", "pci0000:01"}}));
    EXPECT_EQ(a.at("smt"), (A{A::Bools{true}}));
    EXPECT_EQ(a.at("firmware"), (A{A::Versions{A::Version{"1.2.0"}, A::Version{"2.0.0"}}}));
    EXPECT_EQ(a.at("socket"), A{int64_t{0}});
  };
  const auto added = sliceWatch.waitFor(1);
  ASSERT_EQ(added.size(), 1u);
  expectCpus(api::decode<api::ResourceSlice>(added[0].object));
  bool listed = false;
  for (const auto& item : admin.list(slices).items) {
    if (item["metadata"]["name"] != "cpus") continue;
    listed = true;
    expectCpus(api::decode<api::ResourceSlice>(item));
  }
  EXPECT_TRUE(listed);
  // The other tests count the slices.
  remove(slices + "/cpus");

  // As upstream's validation, a list is never empty.
  try {
    admin.post(slices, json::parse(R"({
      "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "empty"},
      "spec": {"driver": "cpu.example.com", "nodeName": "worker",
               "pool": {"name": "worker", "generation": 1, "resourceSliceCount": 1},
               "devices": [{"name": "cpu-0", "attributes": {"numa": {"ints": []}}}]}})"));
    ADD_FAILURE() << "an empty list was stored";
    remove(slices + "/empty");
  } catch (const ApiError& e) {
    EXPECT_EQ(e.code(), 422) << e.what();
    EXPECT_THAT(e.message(), ::testing::HasSubstr("ints")) << e.what();
  }
}

}  // namespace
}  // namespace ksched::testing
