#include "sim/explain_group.h"

#include <algorithm>

namespace ksched::sim {

void explainGroupCycle(Simulator& simulator, const std::string& ns, const std::string& group,
                       scheduler::GroupExplanation& g) {
  const auto r = simulator.canScheduleGroup(ns, group);
  if (!r) {
    const bool pending = std::any_of(g.members.begin(), g.members.end(), [](const auto& m) {
      return m.state == "queued" || m.state == "gated";
    });
    g.noCycle = pending ? "its pending members are held at PreEnqueue (HELD BY above)"
                        : "no member is pending";
    return;
  }
  scheduler::PodGroupTrace t{.ns = r->namespace_,
                             .name = r->name,
                             .gang = r->gang,
                             .minCount = r->minCount,
                             .topologyKey = r->topologyKey,
                             .members = {},
                             .placements = {},
                             .chosen = r->chosen,
                             .scheduled = r->scheduled,
                             .message = r->message};
  for (const auto& m : r->members) {
    t.members.push_back(
        {.pod = m.pod, .node = m.node, .placed = m.placed, .tried = m.tried, .reason = m.reason});
  }
  for (const auto& p : r->placements) {
    t.placements.push_back({.name = p.name,
                            .nodes = p.nodes,
                            .feasible = p.feasible,
                            .message = p.message,
                            .proposed = p.proposed,
                            .score = p.score});
  }
  g.cycle = std::move(t);
}

}  // namespace ksched::sim
