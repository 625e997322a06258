#include "plugins/topology_placement/topology_placement.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace ksched::plugins {
namespace {

// The PodGroups whose pods are the group's: itself, or a CompositePodGroup's leaves.
void leafGroups(const PodGroupInfo& group, std::set<std::string_view>& out) {
  if (!group.composite) out.insert(group.name);
  for (const PodGroupInfo& c : group.children) leafGroups(c, out);
}

// The group's pods bound or assumed before this cycle, with their nodes.
std::vector<std::pair<const api::Pod*, const NodeInfo*>> placedMembers(
    const PodGroupInfo& group, const NodeInfoLister& nodes) {
  std::set<std::string_view> cycle;
  for (const PodPtr& p : group.pods) cycle.insert(p->metadata.uid);
  std::set<std::string_view> leaves;
  leafGroups(group, leaves);
  std::vector<std::pair<const api::Pod*, const NodeInfo*>> out;
  for (const NodeInfo* n : nodes.list()) {
    for (const PodInfoPtr& pi : n->pods()) {
      const api::Pod& p = *pi->pod;
      const std::string* g = p.spec.podGroupName();
      if (g != nullptr && leaves.contains(*g) && p.metadata.namespace_ == group.ns &&
          !cycle.contains(p.metadata.uid)) {
        out.emplace_back(&p, n);
      }
    }
  }
  return out;
}

}  // namespace

Status TopologyPlacementGenerator::generatePlacements(CycleState& /*state*/,
                                                      const PodGroupInfo& group,
                                                      const NodeInfoLister& nodes,
                                                      std::vector<Placement>& placements) {
  const std::vector<std::string>* keys = group.composite  ? &group.composite->spec.topologyKeys
                                         : group.podGroup ? &group.podGroup->spec.topologyKeys
                                                          : nullptr;
  if (keys == nullptr || keys->empty()) {
    Placement all{"", {}};
    for (const NodeInfo* n : nodes.list()) all.nodes.push_back(n->name());
    placements.push_back(std::move(all));
    return {};
  }
  const std::string& key = keys->front();
  auto valueOf = [&key](const NodeInfo& n) -> const std::string* {
    if (n.node() == nullptr) return nullptr;
    auto it = n.node()->metadata.labels.find(key);
    return it == n.node()->metadata.labels.end() ? nullptr : &it->second;
  };
  // Members placed already fix the domain.
  std::set<std::string> fixed;
  for (const auto& [pod, node] : placedMembers(group, nodes)) {
    const std::string* v = valueOf(*node);
    if (v == nullptr) {
      return Status::error("no topology domain found for pod " + pod->metadata.namespace_ + "/" +
                           pod->metadata.name);
    }
    fixed.insert(*v);
  }
  if (fixed.size() > 1) {
    std::string domains;
    for (const auto& d : fixed) domains += (domains.empty() ? "" : " ") + d;
    return Status::error("more than 1 domain found for pod group: [" + domains + "]");
  }
  std::map<std::string, std::vector<std::string>> byValue;
  for (const NodeInfo* n : nodes.list()) {
    const std::string* v = valueOf(*n);
    if (v == nullptr || (!fixed.empty() && !fixed.contains(*v))) continue;
    byValue[*v].push_back(n->name());
  }
  for (auto& [value, names] : byValue) placements.push_back({value, std::move(names)});
  return {};
}

Status PodGroupPodsCount::scorePlacement(CycleState& /*state*/, const PodGroupInfo& group,
                                         const NodeInfoLister& nodes,
                                         const PodGroupAssignments& assignments, int64_t& score) {
  const std::set<std::string_view> in(assignments.placement->nodes.begin(),
                                      assignments.placement->nodes.end());
  int64_t count = 0;
  for (const auto& [pod, node] : placedMembers(group, nodes)) {
    if (in.contains(node->name())) ++count;
  }
  score = count + static_cast<int64_t>(assignments.proposed.size());
  return {};
}

Status PodGroupPodsCount::normalizePlacementScores(CycleState& /*state*/,
                                                   const PodGroupInfo& /*group*/,
                                                   std::vector<int64_t>& scores) {
  const int64_t max = scores.empty() ? 0 : *std::ranges::max_element(scores);
  if (max == 0) {
    return Status::error("no pods from pod group are assigned to any of the candidate placements");
  }
  for (int64_t& s : scores) s = s * kMaxNodeScore / max;
  return {};
}

PluginFactory topologyPlacementGeneratorFactory() {
  return makePluginFactory<TopologyPlacementGenerator>(
      [](Handle&) { return std::make_unique<TopologyPlacementGenerator>(); });
}

PluginFactory podGroupPodsCountFactory() {
  return makePluginFactory<PodGroupPodsCount>(
      [](Handle&) { return std::make_unique<PodGroupPodsCount>(); });
}

}  // namespace ksched::plugins
