#include "advise/spread.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <unordered_map>

#include <ksched/api/selectors.h>
#include <ksched/helper/default_selector.h>
#include <ksched/helper/node_affinity.h>
#include <ksched/listers.h>

#include "config/scheduler_config.h"
#include "plugins/pod_topology_spread/args.h"

namespace ksched::advise {
namespace {

// The controller of a pod: "namespace/Kind/name", "" for none.
std::string groupOf(const api::Pod& p) {
  for (const auto& o : p.metadata.ownerReferences) {
    if (o.controller) return p.metadata.namespace_ + "/" + o.kind + "/" + o.name;
  }
  return "";
}

// The constraint's selector for pods like `pod`: labelSelector, and matchLabelKeys with the
// pod's values.
api::Selector selectorOf(const api::TopologySpreadConstraint& t, const api::Pod& pod) {
  api::Selector s = api::Selector::compile(t.labelSelector);
  for (const auto& key : t.matchLabelKeys) {
    if (auto it = pod.metadata.labels.find(key); it != pod.metadata.labels.end()) {
      s.add(key, api::SelectorOperator::kIn, {it->second});
    }
  }
  return s;
}

// Per domain of `t` (over the nodes `pod` may run on): the pods `sel` selects in the pod's
// namespace, with the node of each.
struct Domains {
  std::map<std::string, int> count;                   // domain -> pods
  std::map<std::string, std::string> domainOf;        // node -> domain
  std::map<std::string, std::vector<PodPtr>> podsOn;  // node -> the selected pods
  [[nodiscard]] int skew() const {
    if (count.empty()) return 0;
    const auto [lo, hi] =
        std::minmax_element(count.begin(), count.end(),
                            [](const auto& a, const auto& b) { return a.second < b.second; });
    return hi->second - lo->second;
  }
};

// `sel` selects the pods counted: the constraint's own selector (selectorOf), or the default
// selector for a default constraint.
Domains domainsOf(const sim::Cluster& c, const api::TopologySpreadConstraint& t,
                  const api::Pod& pod, const api::Selector& sel) {
  Domains d;
  const bool honor = t.nodeAffinityPolicy.value_or("Honor") == "Honor";
  for (const auto& n : c.nodes) {
    auto it = n->metadata.labels.find(t.topologyKey);
    if (it == n->metadata.labels.end()) continue;
    if (honor && !plugins::helper::podMatchesNodeSelectorAndAffinityTerms(pod, *n)) continue;
    d.domainOf[n->metadata.name] = it->second;
    d.count.try_emplace(it->second, 0);
  }
  for (const auto& p : c.pods) {
    if (p->metadata.namespace_ != pod.metadata.namespace_ || !sel.matches(p->metadata.labels)) {
      continue;
    }
    auto it = d.domainOf.find(p->spec.nodeName);
    if (it == d.domainOf.end()) continue;
    ++d.count[it->second];
    d.podsOn[p->spec.nodeName].push_back(p);
  }
  return d;
}

// A pod of `group` that may move, in the fullest domain, on its node with the most selected
// pods; nullptr when there is none.
PodPtr pickFromFullest(const Domains& d, const std::string& group, const EvictionPolicy& policy,
                       const Budgets& budgets, const std::set<std::string>& profiles) {
  int most = -1;
  for (const auto& [dom, n] : d.count) most = std::max(most, n);
  PodPtr best;
  size_t bestOnNode = 0;
  for (const auto& [node, pods] : d.podsOn) {
    if (d.count.at(d.domainOf.at(node)) != most || pods.size() <= bestOnNode) continue;
    for (const auto& p : pods) {
      if (groupOf(*p) != group || !profiles.contains(p->spec.schedulerName)) continue;
      if (judge(*p, policy, budgets).disposition != Disposition::kMoves) continue;
      best = p;
      bestOnNode = pods.size();
      break;
    }
  }
  return best;
}

// The constraints PodTopologySpread gives pods without their own, per profile (its
// defaultingType): System's (hostname maxSkew 3, zone maxSkew 5, both ScheduleAnyway) or the
// configuration's defaultConstraints (List). Their labelSelector is set per pod.
std::map<std::string, std::vector<api::TopologySpreadConstraint>> defaultConstraints(
    const sim::Options& options) {
  config::SchedulerConfiguration cfg = config::defaultConfiguration();
  if (!options.config.empty()) {
    config::LoadResult r = config::decodeConfig(options.config, options.configName);
    if (!r.ok()) return {};  // the Simulator refused it already
    cfg = std::move(*r.config);
  }
  std::map<std::string, std::vector<api::TopologySpreadConstraint>> out;
  for (const auto& profile : cfg.profiles) {
    api::TopologySpreadConstraint host, zone;
    host.maxSkew = 3;
    host.topologyKey = "kubernetes.io/hostname";
    host.whenUnsatisfiable = "ScheduleAnyway";
    zone.maxSkew = 5;
    zone.topologyKey = "topology.kubernetes.io/zone";
    zone.whenUnsatisfiable = "ScheduleAnyway";
    std::vector<api::TopologySpreadConstraint> constraints{host, zone};
    for (const auto& pc : profile.pluginConfig) {
      if (pc.name != "PodTopologySpread") continue;
      try {
        const auto args = plugins::PodTopologySpreadArgs::fromJson(pc.args);
        if (args.defaultingType == plugins::kListDefaulting) constraints = args.defaultConstraints;
      } catch (const std::exception&) {
        // Refused by the Simulator already.
      }
    }
    out[profile.schedulerName] = std::move(constraints);
  }
  return out;
}

}  // namespace

Plan planSpread(const sim::Cluster& cluster, sim::Options options, const EvictionPolicy& policy,
                const Registry& outOfTree) {
  const auto start = std::chrono::steady_clock::now();
  Plan plan;
  plan.goal = "--spread";
  const sim::Cluster c = boundPodsOnly(cluster, options, plan);
  sim::Simulator sim(c, options, outOfTree);
  const std::set<std::string> profiles = profilesOf(sim);
  const Budgets budgets(c.podDisruptionBudgets);

  // One pod per controller, in the order read, with its constraints: its own, or those the
  // scheduler defaults (PodTopologySpread's defaultingType) over its default selector.
  const auto defaults = defaultConstraints(options);
  struct Group {
    std::string name;
    PodPtr first;
    std::vector<api::TopologySpreadConstraint> constraints;
    std::optional<api::Selector> defaultSelector;  // set for the scheduler's default constraints
  };
  // What the scheduler's listers hold: its default selector comes from them.
  StaticClusterListers listers;
  for (const auto& o : c.services) listers.add(o);
  for (const auto& o : c.replicaSets) listers.add(o);
  for (const auto& o : c.statefulSets) listers.add(o);
  for (const auto& o : c.replicationControllers) listers.add(o);
  std::vector<Group> groups;
  std::set<std::string> seen;
  for (const auto& p : c.pods) {
    const std::string g = groupOf(*p);
    if (g.empty() || !seen.insert(g).second) continue;
    if (!p->spec.topologySpreadConstraints.empty()) {
      groups.push_back({g, p, p->spec.topologySpreadConstraints, std::nullopt});
      continue;
    }
    if (!profiles.contains(p->spec.schedulerName)) continue;
    auto it = defaults.find(p->spec.schedulerName);
    if (it == defaults.end() || it->second.empty()) continue;
    api::Selector sel = plugins::helper::defaultSelector(*p, listers);
    if (sel.isEverything()) continue;  // nothing selects the pods: no default spreading
    groups.push_back({g, p, it->second, std::move(sel)});
  }
  for (const auto& [group, first, constraints, defaultSelector] : groups) {
    const bool defaulted = defaultSelector.has_value();
    for (const auto& t : constraints) {
      const api::Selector sel = defaulted ? *defaultSelector : selectorOf(t, *first);
      Skew s{group, t.topologyKey, t.maxSkew, t.whenUnsatisfiable, 0, 0, "", defaulted};
      Domains d = domainsOf(sim.cluster(), t, *first, sel);
      s.before = d.skew();
      for (int i = 0; i < kSpreadMovesPerConstraint && d.skew() > t.maxSkew; ++i) {
        const PodPtr pod = pickFromFullest(d, group, policy, budgets, profiles);
        if (!pod) {
          s.note = "no pod of the fullest domain may move";
          break;
        }
        const std::string from = pod->spec.nodeName;
        const std::string fromDomain = d.domainOf.at(from);
        sim.begin();
        const sim::Result r =
            sim.schedule({sim.evict(pod->metadata.namespace_, pod->metadata.name)}, "drained");
        ++plan.schedulerRuns;
        const sim::PodResult& placed = r.pods.back();
        Domains next = domainsOf(sim.cluster(), t, *first, sel);
        if (!placed.node) {
          s.note = "pod " + pod->metadata.key() + " fits on no other node: " + placed.reason;
        } else if (next.domainOf.contains(*placed.node) &&
                   next.domainOf.at(*placed.node) == fromDomain) {
          s.note = "the scheduler places " + pod->metadata.key() + " in " + t.topologyKey + "=" +
                   fromDomain + " again";
        } else if (next.skew() >= d.skew()) {
          s.note = "moving " + pod->metadata.key() + " does not lower the skew";
        } else {
          sim.commit();
          plan.moves.push_back({placed.namespace_, placed.name, from, *placed.node, placed.tiedWith,
                                "spread " + group + " over " + t.topologyKey + " (skew " +
                                    std::to_string(d.skew()) + " > maxSkew " +
                                    std::to_string(t.maxSkew) + ")"});
          d = std::move(next);
          continue;
        }
        sim.revert();
        break;
      }
      s.after = d.skew();
      if (s.after > t.maxSkew && s.note.empty()) {
        s.note = "stopped after " + std::to_string(kSpreadMovesPerConstraint) + " moves";
      }
      plan.skews.push_back(std::move(s));
    }
  }
  plan.after = figuresOf(sim.cluster(), options.features);
  plan.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return plan;
}

}  // namespace ksched::advise
