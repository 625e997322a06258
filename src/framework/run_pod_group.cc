// The pod-group extension points (pod_group_plugin.h): PlacementGenerate, PlacementScore and
// PlacementFeasible, run by the pod-group cycle on the scheduling thread.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "framework/framework.h"
#include "framework/plugin_status.h"

namespace ksched::framework {

Status Framework::runPlacementFeasiblePlugins(CycleState& state, const PodGroupInfo& group,
                                              const PlacementProgress& progress) {
  return timed(ExtensionPoint::kPlacementFeasible, [&]() -> Status {
    Status result;
    for (auto* p : plugins<ExtensionPoint::kPlacementFeasible>()) {
      Status s = timedPlugin(p, ExtensionPoint::kPlacementFeasible,
                             [&] { return p->placementFeasible(state, group, progress); });
      if (s.ok()) continue;
      if (s.isWait()) {
        if (result.ok()) result = withPlugin(std::move(s), p->name());
        continue;
      }
      if (s.isRejected()) return withPlugin(std::move(s), p->name());
      return Status::error("running PlacementFeasible plugin \"" + std::string(p->name()) +
                           "\": " + s.message())
          .withPlugin(p->name());
    }
    return result;
  });
}

Status Framework::runPlacementGeneratePlugins(CycleState& state, const PodGroupInfo& group,
                                              const NodeInfoLister& nodes,
                                              std::vector<Placement>& placements) {
  return timed(ExtensionPoint::kPlacementGenerate, [&]() -> Status {
    bool first = true;
    for (auto* p : plugins<ExtensionPoint::kPlacementGenerate>()) {
      std::vector<Placement> mine;
      Status s = timedPlugin(p, ExtensionPoint::kPlacementGenerate,
                             [&] { return p->generatePlacements(state, group, nodes, mine); });
      if (s.isError()) {
        return Status::error("running PlacementGenerate plugin \"" + std::string(p->name()) +
                             "\": " + s.message())
            .withPlugin(p->name());
      }
      if (!s.ok()) return withPlugin(std::move(s), p->name());
      if (first) {
        placements = std::move(mine);
        first = false;
        continue;
      }
      // Every non-empty intersection of a placement so far with one of this generator's.
      std::vector<Placement> out;
      for (const Placement& a : placements) {
        const std::set<std::string> in(a.nodes.begin(), a.nodes.end());
        for (const Placement& b : mine) {
          Placement both{a.name, {}};
          for (const std::string& n : b.nodes) {
            if (in.contains(n)) both.nodes.push_back(n);
          }
          if (!both.nodes.empty()) out.push_back(std::move(both));
        }
      }
      placements = std::move(out);
    }
    return {};
  });
}

Status Framework::runPlacementScorePlugins(CycleState& state, const PodGroupInfo& group,
                                           const NodeInfoLister& nodes,
                                           const std::vector<PodGroupAssignments>& assignments,
                                           std::vector<int64_t>& totals) {
  totals.assign(assignments.size(), 0);
  return timed(ExtensionPoint::kPlacementScore, [&]() -> Status {
    for (auto* p : plugins<ExtensionPoint::kPlacementScore>()) {
      std::vector<int64_t> scores(assignments.size(), 0);
      Status s = timedPlugin(p, ExtensionPoint::kPlacementScore, [&]() -> Status {
        for (size_t i = 0; i < assignments.size(); ++i) {
          if (Status e = p->scorePlacement(state, group, nodes, assignments[i], scores[i]);
              !e.ok()) {
            return e;
          }
        }
        return p->normalizePlacementScores(state, group, scores);
      });
      if (!s.ok()) {
        return Status::error("running PlacementScore plugins: plugin \"" + std::string(p->name()) +
                             "\" failed with: " + s.message())
            .withPlugin(p->name());
      }
      for (size_t i = 0; i < scores.size(); ++i) totals[i] += scores[i];
    }
    return {};
  });
}

std::pair<PodGroupPostFilterResult, Status> Framework::runPodGroupPostFilterPlugins(
    CycleState& state, const PodGroupInfo& group, const NodeInfoLister& nodes,
    const PodGroupScheduleFn& schedule) {
  std::pair<PodGroupPostFilterResult, Status> out{{}, Status::unschedulable("")};
  (void)timed(ExtensionPoint::kPodGroupPostFilter, [&]() -> Status {
    for (auto* p : plugins<ExtensionPoint::kPodGroupPostFilter>()) {
      std::pair<PodGroupPostFilterResult, Status> r;
      (void)timedPlugin(p, ExtensionPoint::kPodGroupPostFilter, [&] {
        r = p->podGroupPostFilter(state, group, nodes, schedule);
        return r.second;
      });
      if (r.first.message.empty()) r.first.message = r.second.message();
      if (!r.first.message.empty()) r.first.message = "pod group preemption: " + r.first.message;
      if (r.second.isError()) r.second = Status::error(r.first.message);
      out.first = std::move(r.first);
      out.second = withPlugin(std::move(r.second), p->name());
      if (out.second.ok() || out.second.isError()) break;
    }
    return out.second;
  });
  return out;
}

}  // namespace ksched::framework
