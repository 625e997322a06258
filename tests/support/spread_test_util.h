// Test-only helpers for the spreading plugins' tests and benchmark: selectors and the clusters
// upstream's tests use, over the public builders (<ksched/testing/fakes.h>). Header-only.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <ksched/api/node.h>
#include <ksched/api/pod.h>
#include <ksched/api/selectors.h>
#include <ksched/node_info.h>
#include <ksched/testing/fakes.h>

namespace ksched::plugins::spread_test {

// A selector requiring the label key to exist (st.MakeLabelSelector().Exists(key)).
inline api::LabelSelector exists(std::string key) {
  api::LabelSelector s;
  s.matchExpressions.push_back({std::move(key), api::SelectorOperator::kExists, {}});
  return s;
}

inline api::LabelSelector matchLabels(api::Labels labels) {
  api::LabelSelector s;
  s.matchLabels = std::move(labels);
  return s;
}

using Pod = ksched::testing::PodWrapper;
using Node = ksched::testing::NodeWrapper;
using ksched::testing::SpreadOptions;

// Pods with label foo="" on the given nodes: {pod name, node name}.
inline std::vector<Pod> fooPods(
    const std::vector<std::pair<std::string, std::string>>& nameToNode) {
  std::vector<Pod> out;
  for (const auto& [name, node] : nameToNode)
    out.push_back(Pod(name).nodeName(node).label("foo", ""));
  return out;
}

// node-a, node-b in zone1 and node-x, node-y in zone2, each labeled node=<name>.
inline std::vector<Node> fourNodes() {
  return {Node("node-a").label("zone", "zone1").label("node", "node-a"),
          Node("node-b").label("zone", "zone1").label("node", "node-b"),
          Node("node-x").label("zone", "zone2").label("node", "node-x"),
          Node("node-y").label("zone", "zone2").label("node", "node-y")};
}

// One NodeInfo per node, in order, each holding the pods whose spec.nodeName names it.
inline std::vector<std::shared_ptr<NodeInfo>> makeNodeInfos(const std::vector<Node>& nodes,
                                                            const std::vector<Pod>& pods) {
  std::vector<std::shared_ptr<NodeInfo>> out;
  for (const Node& n : nodes) {
    auto ni = std::make_shared<NodeInfo>(n.ptr());
    for (const Pod& p : pods) {
      if (p.obj().spec.nodeName == n.name()) ni->addPod(p.info());
    }
    out.push_back(std::move(ni));
  }
  return out;
}

}  // namespace ksched::plugins::spread_test
