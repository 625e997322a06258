// PodTopologySpread's account of a rejection (FilterExplainer), read from the counts its
// PreFilter made: the same numbers the Filter compared, default constraints included.
#include "plugins/pod_topology_spread/pod_topology_spread.h"

namespace ksched::plugins {

std::vector<std::string> PodTopologySpread::explainRejection(const CycleState& state,
                                                             const api::Pod& /*pod*/,
                                                             const NodeInfo& nodeInfo) const {
  std::vector<std::string> out;
  const api::Node* node = nodeInfo.node();
  const spread::PreFilterState* s =
      state.read(StateKey<spread::PreFilterState>{kPreFilterStateKey});
  if (node == nullptr || s == nullptr) return out;
  const std::vector<spread::Constraint>& constraints = *s->constraints;
  const api::Labels& labels = node->metadata.labels;
  for (const auto& c : constraints) {
    if (!labels.contains(c.topologyKey)) {
      out.push_back("topologyKey " + c.topologyKey + ": node has no label " + c.topologyKey);
    }
  }
  if (!out.empty()) return out;
  for (size_t i = 0; i < constraints.size(); ++i) {
    const spread::Constraint& c = constraints[i];
    const std::string& value = labels.at(c.topologyKey);
    const spread::ValueCounts& counts = s->tpValueToMatchNum[i];
    auto it = counts.find(std::string_view(value));
    const int64_t here = it == counts.end() ? 0 : it->second;
    const int64_t min = s->minMatchNum(i);
    const int64_t skew = here + s->selfMatchNum[i] - min;
    if (skew <= c.maxSkew) continue;
    std::string text = "topologyKey " + c.topologyKey + ", maxSkew " + std::to_string(c.maxSkew) +
                       ": placing here makes skew " + std::to_string(skew) + " (" + value +
                       " has " + std::to_string(here) + " matching pods, min " +
                       std::to_string(min);
    if (static_cast<int64_t>(counts.size()) < c.minDomains) {
      text += ": " + std::to_string(counts.size()) + " domains, fewer than minDomains " +
              std::to_string(c.minDomains);
    }
    out.push_back(text + ")");
  }
  return out;
}

}  // namespace ksched::plugins
