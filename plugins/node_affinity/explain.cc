// NodeAffinity's account of a rejection (FilterExplainer).
#include <ksched/api/node.h>
#include <ksched/helper/explain_text.h>
#include <ksched/helper/node_affinity.h>

#include "plugins/node_affinity/node_affinity.h"

namespace ksched::plugins {
namespace {

// "node has zone=c" or "label zone missing".
std::string nodeHas(const api::Labels& labels, const std::string& key) {
  auto it = labels.find(key);
  return it == labels.end() ? "label " + key + " missing" : "node has " + key + "=" + it->second;
}

// Why `required` does not match `node`: per term, the first requirement of its expressions and
// of its fields the node fails, each judged by the SDK's matcher.
void explainTerms(const std::string& prefix, const api::NodeSelector& required,
                  const api::Node& node, std::vector<std::string>& out) {
  if (required.nodeSelectorTerms.empty()) out.push_back(prefix + "has no terms: no node matches");
  const auto& terms = required.nodeSelectorTerms;
  for (size_t i = 0; i < terms.size(); ++i) {
    const std::string term = prefix + "term " + std::to_string(i);
    if (terms[i].empty()) {
      out.push_back(term + " is empty: no node matches");
      continue;
    }
    for (const auto& r : terms[i].matchExpressions) {
      api::NodeSelectorTerm one;
      one.matchExpressions.push_back(r);
      if (one.matches(node)) continue;
      out.push_back(term + ": " + helper::requirementText(r.key, r.operator_, r.values) + ": " +
                    nodeHas(node.metadata.labels, r.key));
      break;
    }
    for (const auto& r : terms[i].matchFields) {
      api::NodeSelectorTerm one;
      one.matchFields.push_back(r);
      if (one.matches(node)) continue;
      out.push_back(term + ": " + helper::requirementText(r.key, r.operator_, r.values) +
                    ": node is " + node.metadata.name);
      break;
    }
  }
}

}  // namespace

std::vector<std::string> NodeAffinity::explainRejection(const CycleState& /*state*/,
                                                        const api::Pod& pod,
                                                        const NodeInfo& nodeInfo) const {
  std::vector<std::string> out;
  const api::Node* node = nodeInfo.node();
  if (node == nullptr) return out;
  const api::Labels& labels = node->metadata.labels;
  for (const auto& [k, v] : pod.spec.nodeSelector) {
    auto it = labels.find(k);
    if (it == labels.end() || it->second != v) {
      out.push_back("nodeSelector " + k + "=" + v + ": " + nodeHas(labels, k));
    }
  }
  const api::NodeSelector* required = helper::requiredNodeAffinity(pod);
  if (required != nullptr && !required->matches(*node)) {
    explainTerms("requiredDuringScheduling ", *required, *node, out);
  }
  if (addedNodeSelector_ && !addedNodeSelector_->matches(*node)) {
    explainTerms("the profile's addedAffinity ", *addedNodeSelector_, *node, out);
  }
  if (out.empty()) {
    out.push_back("node does not match the profile's addedAffinity (NodeAffinity args)");
  }
  return out;
}

}  // namespace ksched::plugins
