#include <algorithm>

#include <ksched/helper/node_affinity.h>

namespace ksched::plugins::helper {
namespace {

// Every label of `set` is in `labels` with the same value.
bool labelsMatchSet(const api::Labels& set, const api::Labels& labels) {
  return std::all_of(set.begin(), set.end(), [&labels](const auto& kv) {
    auto it = labels.find(kv.first);
    return it != labels.end() && it->second == kv.second;
  });
}

}  // namespace

const api::NodeSelector* requiredNodeAffinity(const api::Pod& pod) {
  const auto& a = pod.spec.affinity;
  if (!a || !a->nodeAffinity || !a->nodeAffinity->requiredDuringSchedulingIgnoredDuringExecution) {
    return nullptr;
  }
  return &*a->nodeAffinity->requiredDuringSchedulingIgnoredDuringExecution;
}

bool podMatchesNodeSelectorAndAffinityTerms(const api::Pod& pod, const api::Node& node) {
  if (!labelsMatchSet(pod.spec.nodeSelector, node.metadata.labels)) return false;
  const api::NodeSelector* required = requiredNodeAffinity(pod);
  return required == nullptr || required->matches(node);
}

}  // namespace ksched::plugins::helper
