// Device scoring (DynamicResourcesArgs.deviceScoring, a ksched extension) through `ksched
// simulate -f --config`, over docs/dra.md's example (docs/examples/dra/device-scoring*.yaml): two
// nodes of eight GPUs whose PCIe roots alternate, node-1 with two GPUs of each root in use; a pod
// asking for four lands on node-2 with four GPUs of one root. Without the configuration, the
// first fit splits them over both roots on either node.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "simulate_dir.h"

namespace ksched::testing {
namespace {

using nlohmann::json;

const std::string kExample = std::string(KSCHED_SOURCE_DIR) + "/docs/examples/dra/device-scoring";

const json* podNamed(const json& doc, const std::string& name) {
  for (const auto& p : doc.at("pods")) {
    if (p.at("name") == name) return &p;
  }
  return nullptr;
}

std::set<std::string> devicesOf(const json& pod) {
  std::set<std::string> out;
  if (pod.contains("devices")) {
    for (const auto& d : pod.at("devices")) out.insert(d.get<std::string>());
  }
  return out;
}

std::set<std::string> gpus(const std::string& node, const std::vector<int>& indices) {
  std::set<std::string> out;
  for (int i : indices) out.insert("gpus: gpu.example.com/" + node + "/gpu-" + std::to_string(i));
  return out;
}

class SimulateDraScoring : public SimulateDir {};

TEST_F(SimulateDraScoring, FourGpusLandInOneRootOfTheNodeThatHasOne) {
  for (const std::string seed : {"1", "2", "3"}) {
    SCOPED_TRACE("seed " + seed);
    const json doc =
        simulateJson(kExample + ".yaml", {"--config", kExample + "-config.yaml", "--seed", seed});
    ASSERT_TRUE(doc.is_object());
    const json* trainer = podNamed(doc, "trainer");
    ASSERT_NE(trainer, nullptr) << doc.dump(2);
    EXPECT_EQ(trainer->at("node"), "node-2") << trainer->dump(2);
    EXPECT_EQ(devicesOf(*trainer), gpus("node-2", {0, 2, 4, 6})) << trainer->dump(2);
  }

  // Without it, the first fit: two GPUs of each root, whichever node the pod lands on.
  for (const std::string seed : {"1", "2"}) {
    SCOPED_TRACE("without scoring, seed " + seed);
    const json plain = simulateJson(kExample + ".yaml", {"--seed", seed});
    ASSERT_TRUE(plain.is_object());
    const json* trainer = podNamed(plain, "trainer");
    ASSERT_NE(trainer, nullptr);
    const std::string node = trainer->at("node").get<std::string>();
    EXPECT_EQ(devicesOf(*trainer),
              node == "node-1" ? gpus("node-1", {4, 5, 6, 7}) : gpus("node-2", {0, 1, 2, 3}))
        << trainer->dump(2);
  }

  // A misspelt attribute is refused with its field path.
  const std::string bad = file("bad.yaml",
                               "apiVersion: kubescheduler.config.k8s.io/v1\n"
                               "kind: KubeSchedulerConfiguration\n"
                               "profiles:\n"
                               "- pluginConfig:\n"
                               "  - name: DynamicResources\n"
                               "    args:\n"
                               "      deviceScoring:\n"
                               "        topologyAttribute: pcieRoot\n");
  const auto refused = simulate({"-f", kExample + ".yaml", "--config", bad, "-q"});
  EXPECT_EQ(refused.exitCode, 1);
  EXPECT_THAT(refused.err,
              ::testing::HasSubstr("deviceScoring.topologyAttribute: Invalid value: \"pcieRoot\""))
      << refused.err;
}

}  // namespace
}  // namespace ksched::testing
