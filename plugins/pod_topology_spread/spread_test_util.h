// Test-only builders for PodTopologySpread's tests and benchmark (upstream st.MakePod() /
// st.MakeNode() with the spreading fields). Header-only; nothing here is linked into
// ksched_core.
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

struct SpreadOptions {
  std::optional<int32_t> minDomains;
  std::optional<std::string> nodeAffinityPolicy;
  std::optional<std::string> nodeTaintsPolicy;
  std::vector<std::string> matchLabelKeys;
};

class Pod {
 public:
  explicit Pod(std::string name = "p") {
    pod_.metadata.name = std::move(name);
    pod_.metadata.namespace_ = "default";
    pod_.metadata.uid = pod_.metadata.name + "-uid";
  }
  Pod& ns(std::string n) {
    pod_.metadata.namespace_ = std::move(n);
    return *this;
  }
  Pod& label(std::string k, std::string v) {
    pod_.metadata.labels[std::move(k)] = std::move(v);
    return *this;
  }
  Pod& node(std::string n) {
    pod_.spec.nodeName = std::move(n);
    return *this;
  }
  Pod& terminating() {
    pod_.metadata.deletionTimestamp = "2024-01-01T00:00:00Z";
    return *this;
  }
  Pod& spreadConstraint(int32_t maxSkew, std::string key, std::string_view when,
                        std::optional<api::LabelSelector> selector, SpreadOptions opts = {}) {
    api::TopologySpreadConstraint c;
    c.maxSkew = maxSkew;
    c.topologyKey = std::move(key);
    c.whenUnsatisfiable = std::string(when);
    c.labelSelector = std::move(selector);
    c.minDomains = opts.minDomains;
    c.nodeAffinityPolicy = std::move(opts.nodeAffinityPolicy);
    c.nodeTaintsPolicy = std::move(opts.nodeTaintsPolicy);
    c.matchLabelKeys = std::move(opts.matchLabelKeys);
    pod_.spec.topologySpreadConstraints.push_back(std::move(c));
    return *this;
  }
  Pod& nodeSelector(api::Labels sel) {
    pod_.spec.nodeSelector = std::move(sel);
    return *this;
  }
  // A required node affinity term: `key` op `values` (In or NotIn).
  Pod& nodeAffinity(std::string key, api::SelectorOperator op, std::vector<std::string> values) {
    api::NodeSelectorTerm term;
    term.matchExpressions.push_back({std::move(key), op, std::move(values)});
    api::NodeSelector ns;
    ns.nodeSelectorTerms.push_back(std::move(term));
    api::NodeAffinity na;
    na.requiredDuringSchedulingIgnoredDuringExecution = std::move(ns);
    api::Affinity a;
    a.nodeAffinity = std::move(na);
    pod_.spec.affinity = std::move(a);
    return *this;
  }
  Pod& toleration(std::string key, std::string op, std::string value, std::string effect) {
    pod_.spec.tolerations.push_back(
        {std::move(key), std::move(op), std::move(value), std::move(effect), std::nullopt});
    return *this;
  }
  // A controller owner reference.
  Pod& owner(std::string apiVersion, std::string kind, std::string name) {
    api::OwnerReference ref;
    ref.apiVersion = std::move(apiVersion);
    ref.kind = std::move(kind);
    ref.name = std::move(name);
    ref.controller = true;
    pod_.metadata.ownerReferences.push_back(std::move(ref));
    return *this;
  }

  [[nodiscard]] const api::Pod& obj() const { return pod_; }
  [[nodiscard]] PodPtr ptr() const { return std::make_shared<const api::Pod>(pod_); }
  [[nodiscard]] PodInfoPtr info() const { return std::make_shared<const PodInfo>(ptr()); }

 private:
  api::Pod pod_;
};

class Node {
 public:
  explicit Node(std::string name) { node_.metadata.name = std::move(name); }
  Node& label(std::string k, std::string v) {
    node_.metadata.labels[std::move(k)] = std::move(v);
    return *this;
  }
  Node& taint(std::string key, std::string value, std::string effect) {
    node_.spec.taints.push_back(
        {std::move(key), std::move(value), std::move(effect), std::nullopt});
    return *this;
  }

  [[nodiscard]] const api::Node& obj() const { return node_; }
  [[nodiscard]] const std::string& name() const { return node_.metadata.name; }
  [[nodiscard]] NodePtr ptr() const { return std::make_shared<const api::Node>(node_); }

 private:
  api::Node node_;
};

// Pods with label foo="" on the given nodes: {pod name, node name}.
inline std::vector<Pod> fooPods(
    const std::vector<std::pair<std::string, std::string>>& nameToNode) {
  std::vector<Pod> out;
  for (const auto& [name, node] : nameToNode) out.push_back(Pod(name).node(node).label("foo", ""));
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
