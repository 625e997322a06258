#include "advise/defragment.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include <ksched/api/pod_resources.h>
#include <ksched/api/resources.h>
#include <ksched/api/taints.h>
#include <ksched/helper/node_affinity.h>

namespace ksched::advise {
namespace {

// One resource amount by name ("cpu" in millis, "memory", "pods", extended resources).
using Amounts = std::map<std::string, int64_t, std::less<>>;

Amounts amounts(const api::Resource& r, int64_t pods) {
  Amounts out = {{"cpu", r.milliCPU},
                 {"memory", r.memory},
                 {"ephemeral-storage", r.ephemeralStorage},
                 {"pods", pods}};
  for (const auto& [name, v] : r.scalar) out[name] = v;
  return out;
}

// The fewest of `movable` whose requests cover `shortfall` (what the pod lacks on the node),
// the largest share of what is left first; nullopt when all of them do not.
std::optional<std::vector<PodPtr>> cover(Amounts shortfall, const Amounts& want,
                                         std::vector<std::pair<PodPtr, Amounts>> movable) {
  std::vector<PodPtr> out;
  const auto short_ = [&] {
    return std::any_of(shortfall.begin(), shortfall.end(),
                       [](const auto& s) { return s.second > 0; });
  };
  while (short_()) {
    double best = 0;
    size_t pick = movable.size();
    for (size_t i = 0; i < movable.size(); ++i) {
      double share = 0;
      for (const auto& [name, lack] : shortfall) {
        if (lack <= 0) continue;
        auto it = movable[i].second.find(name);
        const int64_t has = it == movable[i].second.end() ? 0 : it->second;
        const auto w = want.find(name);
        const int64_t scale = std::max<int64_t>(lack, w == want.end() ? 0 : w->second);
        share += static_cast<double>(std::min(has, lack)) / static_cast<double>(scale);
      }
      if (share > best) {
        best = share;
        pick = i;
      }
    }
    if (pick == movable.size()) return std::nullopt;
    for (auto& [name, lack] : shortfall) {
      auto it = movable[pick].second.find(name);
      if (it != movable[pick].second.end()) lack -= it->second;
    }
    out.push_back(movable[pick].first);
    movable.erase(movable.begin() + static_cast<ptrdiff_t>(pick));
  }
  return out;
}

// The pod's node selector, required node affinity and NoSchedule/NoExecute taints allow `node`.
bool allows(const api::Pod& pod, const api::Node& node, const features::Gates& gates) {
  if (node.spec.unschedulable ||
      !plugins::helper::podMatchesNodeSelectorAndAffinityTerms(pod, node)) {
    return false;
  }
  return api::findUntoleratedTaint(
             node.spec.taints, pod.spec.tolerations,
             gates.enabled(features::Feature::kTaintTolerationComparisonOperators),
             [](const api::Taint& t) { return api::isDoNotScheduleTaint(t); }) == nullptr;
}

}  // namespace

std::vector<Option> optionsFor(const sim::Cluster& c, const api::Pod& pod,
                               const std::set<std::string>& profiles, const features::Gates& gates,
                               const EvictionPolicy& policy) {
  const Budgets budgets(c.podDisruptionBudgets);
  const Amounts want = amounts(api::schedulingRequestsResource(pod, gates), 1);
  std::unordered_map<std::string, std::vector<PodPtr>> podsOn;
  for (const auto& p : c.pods) podsOn[p->spec.nodeName].push_back(p);
  std::vector<Option> out;
  for (const auto& node : c.nodes) {
    if (!allows(pod, *node, gates)) continue;
    const api::Resource allocatable = api::Resource::fromList(node->status.allocatable);
    Amounts free = amounts(allocatable, allocatable.allowedPodNumber);
    std::vector<std::pair<PodPtr, Amounts>> movable;
    for (const auto& p : podsOn[node->metadata.name]) {
      const Amounts has = amounts(api::nodePodRequests(*p, gates).requests, 1);
      for (const auto& [name, v] : has) free[name] -= v;
      const Verdict v = judge(*p, policy, budgets);
      if (v.disposition == Disposition::kMoves && profiles.contains(p->spec.schedulerName)) {
        movable.emplace_back(p, has);
      }
    }
    Amounts shortfall;
    for (const auto& [name, v] : want) {
      if (v <= 0) continue;
      auto it = free.find(name);
      const int64_t lack = v - (it == free.end() ? 0 : it->second);
      if (lack > 0) shortfall[name] = lack;
    }
    if (shortfall.empty()) continue;  // room enough: something else keeps the pod off it
    auto picked = cover(shortfall, want, std::move(movable));
    if (!picked) continue;
    // Moved in the order the scheduling queue takes them: higher priority first.
    std::stable_sort(picked->begin(), picked->end(), [](const PodPtr& a, const PodPtr& b) {
      return api::podPriority(*a) > api::podPriority(*b);
    });
    Option o{node->metadata.name, std::move(*picked), 0};
    for (const auto& p : o.evict) o.moved += api::nodePodRequests(*p, gates).requests.milliCPU;
    out.push_back(std::move(o));
  }
  std::sort(out.begin(), out.end(), [](const Option& a, const Option& b) {
    if (a.evict.size() != b.evict.size()) return a.evict.size() < b.evict.size();
    if (a.moved != b.moved) return a.moved < b.moved;
    return a.node < b.node;
  });
  return out;
}

sim::Result moveOff(sim::Simulator& sim, const Option& o) {
  sim.cordon(o.node);
  std::vector<PodPtr> evicted;
  for (const auto& p : o.evict)
    evicted.push_back(sim.evict(p->metadata.namespace_, p->metadata.name));
  return sim.schedule(evicted, "drained");
}

Plan planDefragment(const sim::Cluster& cluster, sim::Options options, const api::Pod& given,
                    const EvictionPolicy& policy, const Registry& outOfTree) {
  const auto start = std::chrono::steady_clock::now();
  api::Pod pod = given;
  if (pod.metadata.namespace_.empty()) pod.metadata.namespace_ = "default";
  if (pod.spec.schedulerName.empty()) pod.spec.schedulerName = "default-scheduler";
  pod.spec.nodeName.clear();
  Plan plan;
  plan.goal = "--defragment " + pod.metadata.namespace_ + "/" + pod.metadata.name;
  plan.forPod = pod.metadata.namespace_ + "/" + pod.metadata.name;
  const sim::Cluster c = boundPodsOnly(cluster, options, plan);
  sim::Simulator sim(c, options, outOfTree);
  const std::set<std::string> profiles = profilesOf(sim);
  if (!profiles.contains(pod.spec.schedulerName)) {
    throw std::invalid_argument("--defragment: the pod's schedulerName \"" +
                                pod.spec.schedulerName +
                                "\" is not a profile of the configuration");
  }
  const auto finish = [&](const sim::Cluster& after) {
    plan.after = figuresOf(after, options.features);
    plan.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return plan;
  };
  const sim::PodResult now = sim.canSchedule(pod);
  ++plan.schedulerRuns;
  if (now.node) {
    plan.forPodNode = *now.node;
    return finish(c);
  }
  plan.forPodReason = now.reason;
  const std::vector<Option> tries = optionsFor(c, pod, profiles, options.features, policy);
  for (size_t i = 0; i < tries.size() && i < kDefragmentTries; ++i) {
    const Option& o = tries[i];
    sim.begin();
    const sim::Result r = moveOff(sim, o);
    ++plan.schedulerRuns;
    if (const sim::PodResult* miss = firstUnplaced(r)) {
      plan.notFreed.push_back({o.node, "pod " + miss->namespace_ + "/" + miss->name +
                                           " fits on no other node: " + miss->reason});
      sim.revert();
      continue;
    }
    sim.cordon(o.node, false);
    const sim::PodResult placed = sim.canSchedule(pod);
    ++plan.schedulerRuns;
    if (!placed.node) {
      plan.notFreed.push_back({o.node, "after " + std::to_string(o.evict.size()) +
                                           " moves the pod still does not fit: " + placed.reason});
      sim.revert();
      continue;
    }
    for (const auto& p : r.pods) {
      if (p.origin != "drained") continue;
      plan.moves.push_back(
          {p.namespace_, p.name, o.node, *p.node, p.tiedWith, "make room for " + plan.forPod});
    }
    plan.forPodNode = *placed.node;
    plan.forPodReason.clear();
    plan.uncordonAfter = {o.node};
    Plan out = finish(sim.cluster());
    sim.revert();
    return out;
  }
  return finish(c);
}

}  // namespace ksched::advise
