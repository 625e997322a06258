#include "advise/balance.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <unordered_map>

#include <ksched/api/pod_resources.h>
#include <ksched/api/resources.h>
#include <ksched/plugin_names.h>

#include "config/scheduler_config.h"
#include "sim/metrics_usage.h"

namespace ksched::advise {
namespace balance_detail {

// One schedulable node's requests and allocatable (cpu, memory).
struct Load {
  int64_t cpu = 0, memory = 0;
  int64_t allocCpu = 0, allocMemory = 0;
  [[nodiscard]] double cpuShare() const {
    return allocCpu <= 0 ? 0.0 : 100.0 * static_cast<double>(cpu) / static_cast<double>(allocCpu);
  }
  [[nodiscard]] double memoryShare() const {
    return allocMemory <= 0
               ? 0.0
               : 100.0 * static_cast<double>(memory) / static_cast<double>(allocMemory);
  }
};

// What the nodes' shares are measured by (BalanceGoal's header): requests, or their use as
// metrics-server reports it, a moved pod's use following it.
struct Model {
  bool load = false;
  std::unordered_map<std::string, sim::MetricsUsage> nodes;  // NodeMetrics, by node
  std::unordered_map<std::string, sim::MetricsUsage> pods;   // PodMetrics, by "namespace/name"
  std::unordered_map<std::string, std::string> home;  // "namespace/name" -> node at the start
};

struct Shares {
  std::unordered_map<std::string, Load> nodes;  // the schedulable nodes
  double cpuMean = 0, memoryMean = 0;

  // Percentage points above the mean (the larger of cpu and memory).
  [[nodiscard]] double excess(const Load& l) const {
    return std::max(l.cpuShare() - cpuMean, l.memoryShare() - memoryMean);
  }
  // The sum over the nodes of the squared distances of their shares to the means.
  [[nodiscard]] double imbalance() const {
    double sum = 0;
    for (const auto& [name, l] : nodes) {
      const double c = l.cpuShare() - cpuMean, m = l.memoryShare() - memoryMean;
      sum += c * c + m * m;
    }
    return sum;
  }
  // The nodes' shares as the plan's figures.
  [[nodiscard]] std::map<std::string, Figures::Spread> spread() const {
    std::vector<double> cpu, memory;
    for (const auto& [name, l] : nodes) {
      cpu.push_back(l.cpuShare());
      memory.push_back(l.memoryShare());
    }
    return {{"cpu", spreadOf(cpu, cpuMean)}, {"memory", spreadOf(memory, memoryMean)}};
  }
};

// Whether a profile of the configuration enables a load-aware plugin.
bool loadAwareConfigured(const sim::Options& options) {
  if (options.config.empty()) return false;
  const config::LoadResult r = config::decodeConfig(options.config, options.configName);
  if (!r.ok()) return false;  // the Simulator refuses it
  const auto loadAware = [](const config::PluginSet& set) {
    return std::any_of(set.enabled.begin(), set.enabled.end(), [](const config::PluginRef& p) {
      return p.name == names::kTargetLoadPacking || p.name == names::kLoadAwareFilter ||
             p.name == names::kLoadVariationRiskBalancing;
    });
  };
  for (const auto& profile : r.config->profiles) {
    if (loadAware(profile.plugins.multiPoint)) return true;
    for (const auto& point : config::kExtensionPoints) {
      if (loadAware(profile.plugins.*point.set)) return true;
    }
  }
  return false;
}

// By load when the configuration scores by it and the cluster has a node's reading.
Model modelOf(const sim::Cluster& c, const sim::Options& options) {
  Model m;
  if (!loadAwareConfigured(options)) return m;
  m.nodes = sim::nodeUsages(c);
  if (m.nodes.empty()) return m;
  m.load = true;
  m.pods = sim::podUsages(c);
  for (const auto& p : c.pods) m.home[sim::usageKey(p->metadata)] = p->spec.nodeName;
  return m;
}

Shares sharesOf(const sim::Cluster& c, const features::Gates& gates, const Model& model) {
  Shares s;
  for (const auto& n : c.nodes) {
    if (n->spec.unschedulable) continue;
    const api::Resource a = api::Resource::fromList(n->status.allocatable);
    Load l{0, 0, a.milliCPU, a.memory};
    if (auto u = model.nodes.find(n->metadata.name); u != model.nodes.end()) {
      l.cpu = u->second.milliCPU;
      l.memory = u->second.memory;
    }
    s.nodes[n->metadata.name] = l;
  }
  for (const auto& p : c.pods) {
    auto it = s.nodes.find(p->spec.nodeName);
    const api::Resource r = api::nodePodRequests(*p, gates).requests;
    if (!model.load) {
      if (it == s.nodes.end()) continue;
      it->second.cpu += r.milliCPU;
      it->second.memory += r.memory;
      continue;
    }
    // A node with a reading has its pods in it: a pod moved off it comes off (its PodMetrics,
    // else its requests), and goes on where it lands. A node without one counts requests.
    const std::string key = sim::usageKey(p->metadata);
    const auto home = model.home.find(key);
    const bool moved = home != model.home.end() && home->second != p->spec.nodeName;
    const auto used = model.pods.find(key);
    const sim::MetricsUsage u =
        used != model.pods.end() ? used->second : sim::MetricsUsage{r.milliCPU, r.memory};
    if (moved && model.nodes.contains(home->second)) {
      if (auto from = s.nodes.find(home->second); from != s.nodes.end()) {
        from->second.cpu = std::max<int64_t>(0, from->second.cpu - u.milliCPU);
        from->second.memory = std::max<int64_t>(0, from->second.memory - u.memory);
      }
    }
    if (it == s.nodes.end()) continue;
    if (!model.nodes.contains(p->spec.nodeName)) {
      it->second.cpu += r.milliCPU;
      it->second.memory += r.memory;
    } else if (moved) {
      it->second.cpu += u.milliCPU;
      it->second.memory += u.memory;
    }
  }
  int64_t cpu = 0, memory = 0, allocCpu = 0, allocMemory = 0;
  for (const auto& [name, l] : s.nodes) {
    cpu += l.cpu;
    memory += l.memory;
    allocCpu += l.allocCpu;
    allocMemory += l.allocMemory;
  }
  s.cpuMean = Load{cpu, memory, allocCpu, allocMemory}.cpuShare();
  s.memoryMean = Load{cpu, memory, allocCpu, allocMemory}.memoryShare();
  return s;
}

std::string fixed(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

// "cpu 85% requested, 35 points above the cluster's 50%" (the resource further above; "used"
// by load).
std::string overWhy(const Shares& s, const Load& l, bool load) {
  const bool cpu = l.cpuShare() - s.cpuMean >= l.memoryShare() - s.memoryMean;
  const double share = cpu ? l.cpuShare() : l.memoryShare();
  const double mean = cpu ? s.cpuMean : s.memoryMean;
  return std::string(cpu ? "cpu " : "memory ") + fixed(share) +
         (load ? "% used, " : "% requested, ") + fixed(share - mean) +
         " points above the cluster's " + fixed(mean) + "%";
}

// The pods of `node` to try, in order: those that may move, the lowest priority first, then
// those whose requests (by load: use) best cover the node's excess (share of the node, larger of
// cpu and memory), then by name. Pods already moved once are left where they are.
std::vector<PodPtr> podsToTry(const sim::Cluster& c, const std::string& node, const Load& load,
                              double excess, const EvictionPolicy& policy, const Budgets& budgets,
                              const std::set<std::string>& profiles,
                              const std::set<std::string>& moved, const features::Gates& gates,
                              const Model& model) {
  struct Entry {
    PodPtr pod;
    int32_t priority;
    double fit;  // distance between the pod's share and the excess
    bool preferNot;
  };
  std::vector<Entry> entries;
  for (const auto& p : c.pods) {
    if (p->spec.nodeName != node || moved.contains(p->metadata.key())) continue;
    if (!profiles.contains(p->spec.schedulerName)) continue;
    if (judge(*p, policy, budgets).disposition != Disposition::kMoves) continue;
    const api::Resource r = api::nodePodRequests(*p, gates).requests;
    sim::MetricsUsage u{r.milliCPU, r.memory};
    if (auto used = model.pods.find(sim::usageKey(p->metadata));
        model.load && used != model.pods.end()) {
      u = used->second;
    }
    const double share = std::max(Load{u.milliCPU, 0, load.allocCpu, 1}.cpuShare(),
                                  Load{0, u.memory, 1, load.allocMemory}.memoryShare());
    entries.push_back({p, api::podPriority(*p), std::abs(share - excess),
                       p->metadata.annotations.contains(kPreferNoEvictionAnnotation)});
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    if (a.preferNot != b.preferNot) return !a.preferNot;
    if (a.priority != b.priority) return a.priority < b.priority;
    if (a.fit != b.fit) return a.fit < b.fit;
    return a.pod->metadata.key() < b.pod->metadata.key();
  });
  std::vector<PodPtr> out;
  for (auto& e : entries) out.push_back(std::move(e.pod));
  return out;
}

}  // namespace balance_detail

Plan planBalance(const sim::Cluster& cluster, sim::Options options, const BalanceGoal& goal,
                 const Registry& outOfTree) {
  using namespace balance_detail;
  const auto start = std::chrono::steady_clock::now();
  Plan plan;
  plan.goal = "--balance";
  const sim::Cluster c = boundPodsOnly(cluster, options, plan);
  const features::Gates gates = options.features;
  sim::Simulator sim(c, options, outOfTree);
  const std::set<std::string> profiles = profilesOf(sim);
  const Budgets budgets(c.podDisruptionBudgets);

  const Model model = modelOf(c, options);
  Shares shares = sharesOf(c, gates, model);
  const auto over = [&](const Shares& s) {
    return static_cast<size_t>(std::count_if(s.nodes.begin(), s.nodes.end(), [&](const auto& n) {
      return s.excess(n.second) > goal.deviation;
    }));
  };
  plan.balance = Plan::Balance{goal.deviation, over(shares), 0};
  if (model.load) {
    plan.balance->measure = "load";
    plan.balance->usedBefore = shares.spread();
  }
  std::set<std::string> moved;  // pods moved once
  std::set<std::string> left;   // over nodes given up
  while (plan.moves.size() < static_cast<size_t>(kBalanceMovesMax)) {
    // The node furthest over, by name among equals.
    const std::string* node = nullptr;
    double most = goal.deviation;
    for (const auto& [name, l] : shares.nodes) {
      const double e = shares.excess(l);
      if (left.contains(name) || e <= goal.deviation) continue;
      if (e > most || (e == most && node && name < *node)) {
        most = e;
        node = &name;
      }
    }
    if (!node) break;
    const std::string from = *node;
    const Load load = shares.nodes.at(from);
    const std::vector<PodPtr> pods = podsToTry(sim.cluster(), from, load, most, goal.policy,
                                               budgets, profiles, moved, gates, model);
    if (pods.empty()) {
      plan.notFreed.push_back(
          {from, overWhy(shares, load, model.load) + "; no pod on it may move"});
      left.insert(from);
      continue;
    }
    std::string lastWhy;
    bool done = false;
    for (size_t i = 0; i < pods.size() && i < static_cast<size_t>(kBalanceTriesPerNode); ++i) {
      const PodPtr& pod = pods[i];
      sim.begin();
      const sim::Result r =
          sim.schedule({sim.evict(pod->metadata.namespace_, pod->metadata.name)}, "drained");
      ++plan.schedulerRuns;
      const sim::PodResult& placed = r.pods.back();
      if (!placed.node) {
        lastWhy = "pod " + pod->metadata.key() + " fits on no other node: " + placed.reason;
        sim.revert();
        continue;
      }
      Shares next = sharesOf(sim.cluster(), gates, model);
      const auto to = next.nodes.find(*placed.node);
      if (*placed.node == from) {
        lastWhy = "the scheduler places " + pod->metadata.key() + " on " + from + " again";
      } else if (to != next.nodes.end() && next.excess(to->second) > goal.deviation) {
        lastWhy = "the scheduler places " + pod->metadata.key() + " on " + *placed.node +
                  ", which it would put over (" + overWhy(next, to->second, model.load) + ")";
      } else if (next.imbalance() >= shares.imbalance()) {
        lastWhy = "moving " + pod->metadata.key() + " to " + *placed.node +
                  " does not bring the nodes closer together";
      } else {
        sim.commit();
        moved.insert(pod->metadata.key());
        plan.moves.push_back({placed.namespace_, placed.name, from, *placed.node, placed.tiedWith,
                              "balance: " + from + " " + overWhy(shares, load, model.load)});
        shares = std::move(next);
        done = true;
        break;
      }
      sim.revert();
    }
    if (!done) {
      plan.notFreed.push_back({from, overWhy(shares, load, model.load) + "; " + lastWhy});
      left.insert(from);
    }
  }
  plan.balance->overAfter = over(shares);
  if (model.load) plan.balance->usedAfter = shares.spread();
  plan.after = figuresOf(sim.cluster(), gates);
  plan.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return plan;
}

}  // namespace ksched::advise
