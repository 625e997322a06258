#include <algorithm>
#include <chrono>
#include <set>
#include <stdexcept>

#include "advise/defragment.h"

namespace ksched::advise {
namespace group_detail {

bool allPlaced(const sim::Result& r, const std::set<std::string>& names) {
  size_t placed = 0;
  for (const auto& p : r.pods) {
    if (names.contains(p.namespace_ + "/" + p.name) && p.node) ++placed;
  }
  return placed == names.size();
}

// Why the group did not fit in `r`: its pod-group cycle's message, else its first pod's reason.
std::string whyNot(const sim::Result& r, const std::set<std::string>& names) {
  for (const auto& g : r.podGroups) {
    if (!g.scheduled && !g.message.empty()) return g.message;
  }
  for (const auto& p : r.pods) {
    if (names.contains(p.namespace_ + "/" + p.name) && !p.node) return p.reason;
  }
  return "the group was not placed";
}

// `member` as a pod of no group, named apart from the group's own: it holds the room one member
// needs while the next members' room is made.
PodPtr standIn(const api::Pod& member) {
  auto p = std::make_shared<api::Pod>(member);
  p->spec.schedulingGroup.reset();
  p->spec.nodeName.clear();
  p->metadata.name = "advise-room-for-" + member.metadata.name;
  p->metadata.uid = "advise-room-for-" + member.metadata.uid;
  return p;
}

}  // namespace group_detail

Plan planDefragmentGroup(const sim::Cluster& cluster, sim::Options options,
                         const std::string& group, const std::vector<PodPtr>& members,
                         const EvictionPolicy& policy, const Registry& outOfTree) {
  using namespace group_detail;
  const auto start = std::chrono::steady_clock::now();
  if (!options.features.enabled(features::Feature::kGenericWorkload)) {
    throw std::invalid_argument("--defragment: PodGroup " + group +
                                " needs --feature-gates GenericWorkload=true");
  }
  if (members.empty())
    throw std::invalid_argument("--defragment: PodGroup " + group + " has no pods");
  Plan plan;
  plan.goal = "--defragment " + group + " (" + std::to_string(members.size()) + " pods)";
  plan.forPod = group;
  const sim::Cluster c = boundPodsOnly(cluster, options, plan);
  sim::Simulator sim(c, options, outOfTree);
  const std::set<std::string> profiles = profilesOf(sim);
  std::set<std::string> names;
  for (const auto& m : members) {
    if (!profiles.contains(m->spec.schedulerName)) {
      throw std::invalid_argument("--defragment: the schedulerName \"" + m->spec.schedulerName +
                                  "\" of " + m->metadata.key() +
                                  " is not a profile of the configuration");
    }
    names.insert(m->metadata.key());
  }
  // The whole group, placed by its pod-group cycle over `s` as it is; changes nothing.
  const auto tryGroup = [&](const sim::Simulator& s) {
    sim::Simulator f = s.fork();
    ++plan.schedulerRuns;
    return f.schedule(members);
  };
  const auto finish = [&](const sim::Cluster& after) {
    plan.after = figuresOf(after, options.features);
    plan.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return plan;
  };
  const auto placedAt = [&](const sim::Result& r) {
    std::set<std::string> nodes;
    for (const auto& p : r.pods) {
      if (!names.contains(p.namespace_ + "/" + p.name) || !p.node) continue;
      plan.forPodMembers.emplace_back(p.namespace_ + "/" + p.name, *p.node);
      nodes.insert(*p.node);
    }
    std::string out;
    for (const auto& n : nodes) out += (out.empty() ? "" : ", ") + n;
    return out;
  };
  const sim::Result now = tryGroup(sim);
  if (allPlaced(now, names)) {
    plan.forPodNode = placedAt(now);
    return finish(c);
  }
  plan.forPodReason = whyNot(now, names);

  // Room for one member at a time. Each member's stand-in is placed by the scheduler, where it
  // fits now or after the fewest moves off one node (as for one pod); the nodes holding
  // stand-ins stay cordoned while the next members' pods move, so no moved pod takes their room.
  std::set<std::string> held;
  std::vector<PodPtr> standIns;
  std::vector<Move> moves;
  const auto cordonHeld = [&](bool on) {
    for (const auto& n : held) sim.cordon(n, on);
  };
  for (const auto& member : members) {
    const PodPtr stand = standIn(*member);
    cordonHeld(false);
    // canSchedule first: a stand-in schedule() does not place would stay pending.
    const sim::PodResult fits = sim.canSchedule(*stand);
    ++plan.schedulerRuns;
    if (fits.node) {
      const sim::Result r = sim.schedule({stand});
      ++plan.schedulerRuns;
      if (!r.pods.empty() && r.pods.back().node) {
        held.insert(*r.pods.back().node);
        standIns.push_back(stand);
        cordonHeld(true);
        continue;
      }
    }
    bool found = false;
    const std::vector<Option> tries =
        optionsFor(sim.cluster(), *stand, profiles, options.features, policy);
    for (size_t i = 0; i < tries.size() && i < kDefragmentTries && !found; ++i) {
      const Option& o = tries[i];
      sim.begin();
      cordonHeld(true);
      const sim::Result r = moveOff(sim, o);
      ++plan.schedulerRuns;
      const bool moved = firstUnplaced(r) == nullptr;
      sim.cordon(o.node, false);
      cordonHeld(false);
      const sim::Result one = moved ? sim.schedule({stand}) : sim::Result{};
      if (moved) ++plan.schedulerRuns;
      if (!moved || one.pods.empty() || !one.pods.back().node) {
        sim.revert();
        continue;
      }
      sim.commit();
      for (const auto& p : r.pods) {
        if (p.origin != "drained") continue;
        moves.push_back({p.namespace_, p.name, o.node, *p.node, p.tiedWith,
                         "make room for " + group + " (pod " + std::to_string(standIns.size() + 1) +
                             " of " + std::to_string(members.size()) + ")"});
      }
      held.insert(*one.pods.back().node);
      standIns.push_back(stand);
      found = true;
    }
    if (!found) {
      plan.forPodReason = "no room found for " + member->metadata.key() + " (member " +
                          std::to_string(standIns.size() + 1) + " of " +
                          std::to_string(members.size()) + ") with the fewest moves off one node";
      return finish(c);
    }
    cordonHeld(true);
  }

  // The group itself, by its pod-group cycle, once the stand-ins are gone.
  cordonHeld(false);
  for (const auto& s : standIns) (void)sim.evict(s->metadata.namespace_, s->metadata.name);
  const sim::Result last = tryGroup(sim);
  if (!allPlaced(last, names)) {
    plan.forPodReason = "after " + std::to_string(moves.size()) +
                        " moves the group still does not fit: " + whyNot(last, names);
    return finish(c);
  }
  plan.moves = std::move(moves);
  plan.forPodNode = placedAt(last);
  plan.forPodReason.clear();
  plan.uncordonAfter.assign(held.begin(), held.end());
  return finish(sim.cluster());
}

}  // namespace ksched::advise
