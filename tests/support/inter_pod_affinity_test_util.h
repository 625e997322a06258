// Test-only builders for the InterPodAffinity tests: pods and nodes from compact JSON, pod
// (anti-)affinity terms in the style of upstream's st.PodAffinityIn/Exists, and a Handle backed
// by a real cache::Snapshot (so that havePodsWithAffinityList() and
// havePodsWithRequiredAntiAffinityList() are what the scheduler would pass).
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include <ksched/api/node.h>
#include <ksched/api/pod.h>
#include <ksched/api/workloads.h>
#include <ksched/handle.h>
#include <ksched/listers.h>

#include "cache/snapshot.h"
#include "tests/support/plugin_test_util.h"

namespace ksched::plugins::ipatest {

using nlohmann::json;

inline json expr(const std::string& key, const std::string& op,
                 const std::vector<std::string>& values = {}) {
  json e = {{"key", key}, {"operator", op}};
  if (!values.empty()) e["values"] = values;
  return e;
}

// A term whose labelSelector ANDs `exprs`; `extra` fields (namespaces, namespaceSelector,
// matchLabelKeys, ...) are merged in.
inline json term(const std::vector<json>& exprs, const std::string& topologyKey,
                 const json& extra = json::object()) {
  json t = {{"labelSelector", {{"matchExpressions", exprs}}}, {"topologyKey", topologyKey}};
  for (const auto& [k, v] : extra.items()) t[k] = v;
  return t;
}
inline json in(const std::string& key, const std::vector<std::string>& values,
               const std::string& topologyKey, const json& extra = json::object()) {
  return term({expr(key, "In", values)}, topologyKey, extra);
}
inline json notIn(const std::string& key, const std::vector<std::string>& values,
                  const std::string& topologyKey) {
  return term({expr(key, "NotIn", values)}, topologyKey);
}
inline json exists(const std::string& key, const std::string& topologyKey,
                   const json& extra = json::object()) {
  return term({expr(key, "Exists")}, topologyKey, extra);
}
inline json weighted(int weight, const json& t) {
  return {{"weight", weight}, {"podAffinityTerm", t}};
}

struct Affinity {
  std::vector<json> required;
  std::vector<json> requiredAnti;
  std::vector<json> preferred;      // weighted()
  std::vector<json> preferredAnti;  // weighted()

  [[nodiscard]] bool empty() const {
    return required.empty() && requiredAnti.empty() && preferred.empty() && preferredAnti.empty();
  }
  [[nodiscard]] json toJson() const {
    json a = json::object();
    if (!required.empty() || !preferred.empty()) {
      a["podAffinity"] = json::object();
      if (!required.empty())
        a["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = required;
      if (!preferred.empty())
        a["podAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"] = preferred;
    }
    if (!requiredAnti.empty() || !preferredAnti.empty()) {
      a["podAntiAffinity"] = json::object();
      if (!requiredAnti.empty()) {
        a["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = requiredAnti;
      }
      if (!preferredAnti.empty()) {
        a["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"] = preferredAnti;
      }
    }
    return a;
  }
};

// A pod named `name` (uid "<name>-uid") in namespace `ns` with `labels`, bound to `node` when
// non-empty.
inline PodPtr makePod(const std::string& name, const std::string& ns, const json& labels,
                      const std::string& node = "", const Affinity& affinity = {}) {
  json j = {{"metadata", {{"name", name}, {"namespace", ns}, {"uid", name + "-uid"}}},
            {"spec", json::object()}};
  if (!labels.is_null() && !labels.empty()) j["metadata"]["labels"] = labels;
  if (!node.empty()) j["spec"]["nodeName"] = node;
  if (!affinity.empty()) j["spec"]["affinity"] = affinity.toJson();
  api::Pod p;
  api::from_json(j, p);
  return std::make_shared<const api::Pod>(std::move(p));
}

inline NodePtr makeNode(const std::string& name, const json& labels) {
  json j = {{"metadata", {{"name", name}}}};
  if (!labels.empty()) j["metadata"]["labels"] = labels;
  api::Node n;
  api::from_json(j, n);
  return std::make_shared<const api::Node>(std::move(n));
}

inline api::Namespace makeNamespace(const std::string& name, const api::Labels& labels = {}) {
  api::Namespace ns;
  ns.metadata.name = name;
  ns.metadata.labels = labels;
  return ns;
}

// The namespaces of upstream's scoring tests: subteam{1,2}.team{1,2}, labelled team=team{1,2}.
inline std::vector<api::Namespace> teamNamespaces() {
  return {makeNamespace("subteam1.team1", {{"team", "team1"}}),
          makeNamespace("subteam2.team1", {{"team", "team1"}}),
          makeNamespace("subteam1.team2", {{"team", "team2"}}),
          makeNamespace("subteam2.team2", {{"team", "team2"}})};
}

// A Handle whose snapshot holds `pods` on `nodes` (pods on unknown nodes are dropped), with
// the namespaces in its listers.
class SnapshotHandle final : public testutil::HandleBase {
 public:
  SnapshotHandle(std::vector<PodPtr> pods, std::vector<NodePtr> nodes,
                 const std::vector<api::Namespace>& namespaces = teamNamespaces())
      : snapshot_(cache::Snapshot::fromForTest(std::move(pods), std::move(nodes))) {
    for (const auto& ns : namespaces) mutableListers().add(ns);
  }

  [[nodiscard]] const NodeInfoLister& snapshot() const override { return snapshot_; }
  [[nodiscard]] const NodeInfo& nodeInfo(const std::string& name) const {
    return *snapshot_.get(name);
  }

 private:
  cache::Snapshot snapshot_;
};

}  // namespace ksched::plugins::ipatest
