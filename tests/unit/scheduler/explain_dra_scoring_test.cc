// explainPod with DynamicResources' device scoring on (deviceScoring.topologyAttribute), over the
// objects of docs/examples/dra/device-scoring.yaml served to the plugin's watches: both nodes fit,
// node-2 scores higher, and "Scores from:" says why per node. Without the arguments, the table
// has no such line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <ksched/testing/fakes.h>

#include "cache/snapshot.h"
#include "config/profile.h"
#include "framework/framework.h"
#include "framework/parallelizer.h"
#include "plugins/registry.h"
#include "scheduler/explain.h"
#include "tests/support/dra_plugin_json.h"
#include "tests/support/framework_test_plugins.h"

namespace ksched::scheduler {
namespace {

using ksched::testing::NodeWrapper;
using nlohmann::json;
using plugins::dra::testjson::meta;
using ::testing::HasSubstr;

json gpuSlice(const std::string& node) {
  json devices = json::array();
  for (int i = 0; i < 8; ++i) {
    devices.push_back({{"name", "gpu-" + std::to_string(i)},
                       {"attributes",
                        {{"resource.kubernetes.io/pcieRoot",
                          {{"string", i % 2 == 0 ? "pci0000:00" : "pci0000:40"}}}}}});
  }
  return plugins::dra::testjson::nodeSlice(node, std::move(devices));
}

json fourGpus(const std::string& name) {
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceClaim"},
          {"metadata", meta(name, "ml")},
          {"spec",
           {{"devices",
             {{"requests",
               json::array(
                   {{{"name", "gpus"},
                     {"exactly", {{"deviceClassName", "gpu.example.com"}, {"count", 4}}}}})}}}}}};
}

// The example's objects: node-1 with gpu-0..gpu-3 (two of each root) held by `busy`.
std::vector<json> exampleObjects() {
  json busy = fourGpus("busy-gpus");
  json results = json::array();
  for (int i = 0; i < 4; ++i) {
    results.push_back({{"request", "gpus"},
                       {"driver", "gpu.example.com"},
                       {"pool", "node-1"},
                       {"device", "gpu-" + std::to_string(i)}});
  }
  busy["status"] = {
      {"allocation",
       {{"devices", {{"results", results}}},
        {"nodeSelector",
         {{"nodeSelectorTerms",
           json::array({{{"matchFields", json::array({{{"key", "metadata.name"},
                                                       {"operator", "In"},
                                                       {"values", {"node-1"}}}})}}})}}}}},
      {"reservedFor",
       json::array({{{"resource", "pods"}, {"name", "busy"}, {"uid", "busy-uid"}}})}};
  return {
      gpuSlice("node-1"),
      gpuSlice("node-2"),
      {{"apiVersion", "resource.k8s.io/v1"},
       {"kind", "DeviceClass"},
       {"metadata", meta("gpu.example.com")},
       {"spec",
        {{"selectors",
          json::array({{{"cel", {{"expression", "device.driver == \"gpu.example.com\""}}}}})}}}},
      busy,
      fourGpus("trainer-gpus")};
}

struct Env {
  frameworktest::NullRecorder events;
  framework::ThreadPoolParallelizer parallelizer{2};
  std::vector<json> objects = exampleObjects();
  framework::Framework fwk;
  cache::Snapshot snapshot;

  explicit Env(const json& args)
      : fwk(profile(args), plugins::inTreeRegistry(), services()),
        snapshot(cache::Snapshot::fromForTest(
            {}, {NodeWrapper("node-1").capacity({{"cpu", "8"}, {"pods", "110"}}).ptr(),
                 NodeWrapper("node-2").capacity({{"cpu", "8"}, {"pods", "110"}}).ptr()})) {
    fwk.setSnapshot(&snapshot);
  }
  ~Env() { fwk.setSnapshot(nullptr); }

  static config::Profile profile(const json& args) {
    config::Profile p = config::defaultProfile(features::Gates{});
    p.pluginConfig.push_back({"DynamicResources", args});
    return p;
  }
  // The plugin's watches get the example's objects of their kind.
  framework::Services services() {
    framework::Services s;
    s.events = &events;
    s.parallelizer = &parallelizer;
    s.watchObjects = [this](const ObjectWatch& w, ObjectEventHandlers h) {
      for (const auto& o : objects) {
        if (o.at("kind") != w.kind) continue;
        auto u = std::make_shared<UnstructuredObject>();
        u->metadata.name = o.at("metadata").at("name");
        u->metadata.namespace_ = o.at("metadata").value("namespace", "");
        u->object = o;
        h.onAdd(u);
      }
      return std::make_shared<const EmptyObjectStore>();
    };
    return s;
  }
};

api::Pod trainer() {
  api::Pod p = ksched::testing::PodWrapper("trainer").uid("trainer-uid").req({{"cpu", "1"}}).obj();
  p.metadata.namespace_ = "ml";
  p.spec.resourceClaims = {{"gpus", std::string("trainer-gpus"), std::nullopt}};
  return p;
}

TEST(ExplainDraScoring, ScoresFromSaysWhereTheGpusWouldBe) {
  Env env(json{{"deviceScoring", {{"topologyAttribute", "resource.kubernetes.io/pcieRoot"}}}});
  const Explanation e = explainPod(env.fwk, trainer(), env.snapshot, 0);
  ASSERT_EQ(e.feasible.size(), 2u) << toTable(e);
  EXPECT_EQ(e.selected, std::vector<std::string>{"node-2"}) << toTable(e);
  const std::string table = toTable(e);
  EXPECT_THAT(table, HasSubstr("Scores from:\n"
                               "  node-2 DynamicResources: device score 100: 4 devices in pcieRoot "
                               "pci0000:00\n"
                               "  node-1 DynamicResources: device score 50: 4 devices split over 2 "
                               "pcieRoot values, 2 in pci0000:00\n"))
      << table;
}

TEST(ExplainDraScoring, OffThereIsNothingToSay) {
  Env env(nullptr);
  const Explanation e = explainPod(env.fwk, trainer(), env.snapshot, 0);
  ASSERT_EQ(e.feasible.size(), 2u) << toTable(e);
  EXPECT_THAT(toTable(e), ::testing::Not(HasSubstr("DynamicResources: device score")));
}

}  // namespace
}  // namespace ksched::scheduler
