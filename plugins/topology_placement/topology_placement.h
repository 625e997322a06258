// Topology-aware placement of pod groups (TopologyAwareWorkloadScheduling, KEP-5732), upstream's
// two plugins for the pod-group cycle's placement points (pod_group_plugin.h):
//
//   TopologyPlacementGenerator (PlacementGenerate): for a PodGroup with
//     schedulingConstraints.topology[0].key, one placement per value of that node label (nodes
//     without it are in none), sorted by value; once members are bound or assumed, only their
//     domain (members in two domains: an error, "more than 1 domain found for pod group: ...").
//     Without a constraint, one placement of every node.
//   PodGroupPodsCount (PlacementScore): the group's pods a placement holds (members already
//     there plus the ones proposed), normalized to 100 for the best.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include <ksched/handle.h>
#include <ksched/plugin_names.h>
#include <ksched/pod_group_plugin.h>
#include <ksched/registry.h>

namespace ksched::plugins {

class TopologyPlacementGenerator final : public PlacementGeneratePlugin {
 public:
  static constexpr std::string_view kName = names::kTopologyPlacementGenerator;
  [[nodiscard]] std::string_view name() const override { return kName; }
  Status generatePlacements(CycleState& state, const PodGroupInfo& group,
                            const NodeInfoLister& nodes,
                            std::vector<Placement>& placements) override;
};

class PodGroupPodsCount final : public PlacementScorePlugin {
 public:
  static constexpr std::string_view kName = names::kPodGroupPodsCount;
  [[nodiscard]] std::string_view name() const override { return kName; }
  Status scorePlacement(CycleState& state, const PodGroupInfo& group, const NodeInfoLister& nodes,
                        const PodGroupAssignments& assignments, int64_t& score) override;
  Status normalizePlacementScores(CycleState& state, const PodGroupInfo& group,
                                  std::vector<int64_t>& scores) override;
};

// Take no args (ignored).
PluginFactory topologyPlacementGeneratorFactory();
PluginFactory podGroupPodsCountFactory();

}  // namespace ksched::plugins
