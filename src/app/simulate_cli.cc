// ksched simulate: the Simulator (include/ksched/sim.h) behind a command line.
#include "app/simulate_cli.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <set>

#include <ksched/api/features.h>
#include <ksched/api/selectors.h>

#include "app/cluster_source.h"
#include "app/simulate_capacity.h"
#include "sim/load.h"
#include "sim/report.h"
#include "sim/summary.h"

namespace ksched::app {
namespace {

struct Flags {
  std::vector<std::string> files, podFiles, addNodes, drain;
  std::string kubeconfig, selector, pod, config, compareConfig, capacity, output = "table", report;
  std::string compareGates;  // --compare-feature-gates, applied over --feature-gates
  int replicas = 1;
  uint64_t seed = 1;
  int maxAttempts = 20;
  bool preemption = true;
  bool quiet = false;
  features::Gates gates;
};

// "a=b,c!=d,e,!f": the label selector forms kubectl's -l takes, but set-based ones.
std::optional<std::vector<std::function<bool(const api::Labels&)>>> parseSelector(
    const std::string& text) {
  std::vector<std::function<bool(const api::Labels&)>> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    std::string term = text.substr(start, end - start);
    start = end + 1;
    if (term.empty()) return std::nullopt;
    if (term.find('(') != std::string::npos || term.find(' ') != std::string::npos) {
      return std::nullopt;
    }
    if (auto ne = term.find("!="); ne != std::string::npos) {
      std::string k = term.substr(0, ne), v = term.substr(ne + 2);
      out.push_back([k, v](const api::Labels& l) {
        auto it = l.find(k);
        return it == l.end() || it->second != v;
      });
    } else if (auto eq = term.find('='); eq != std::string::npos) {
      std::string k = term.substr(0, eq);
      std::string v = term.substr(term[eq + 1] == '=' ? eq + 2 : eq + 1);
      out.push_back([k, v](const api::Labels& l) {
        auto it = l.find(k);
        return it != l.end() && it->second == v;
      });
    } else if (term[0] == '!') {
      std::string k = term.substr(1);
      out.push_back([k](const api::Labels& l) { return !l.contains(k); });
    } else {
      out.push_back([term](const api::Labels& l) { return l.contains(term); });
    }
    if (end == text.size()) break;
  }
  return out;
}

}  // namespace

std::string simulateUsage() {
  return R"(Usage: ksched simulate (-f FILE... | --kubeconfig FILE) [flags]

Runs ksched's own scheduler -- its queue, Filter and Score plugins, preemption, Reserve and
Permit (gangs), with the configuration you give it -- over a copy of a cluster in memory, and
says where every pending pod would go, or why it would not. Nothing is written to any cluster.
The same seed gives the same placements.

The cluster:
  -f, --filename FILE        objects as `kubectl get nodes,pods,... -A -o yaml` prints them
                             (YAML or JSON; a List or several documents; - for stdin);
                             repeatable. Objects that cannot be used are listed and skipped.
      --kubeconfig FILE      read the cluster from an apiserver instead (LIST only)

What to schedule (besides the cluster's pending pods of the configuration's profiles):
      --pods FILE            pods, and Deployments, ReplicaSets, StatefulSets, Jobs and
                             ReplicationControllers expanded into their pods; repeatable
      --pod FILE             one pod, --replicas times (named NAME-1, NAME-2, ...)
      --replicas N           copies of --pod (default 1)

What if:
      --add-nodes FILE:N     N more copies of each node in FILE (named NAME-1 ...); repeatable
      --drain NODE           cordon NODE and reschedule its pods (DaemonSet pods stay);
                             repeatable
  -l, --selector SELECTOR    drain every node matching the label selector (a=b,c!=d,e,!f)
      --config FILE          KubeSchedulerConfiguration (default: ksched's defaults)
      --compare-config FILE  run again with this configuration, and show what differs
      --compare-feature-gates GATES
                             run again with these gates set over --feature-gates (e.g.
                             OpportunisticBatching=false), and show what differs
      --no-preemption        pods that do not fit do not preempt
      --capacity FILE        how many more copies of the pod in FILE fit (nothing else is
                             scheduled), and why the next one does not; FILE with a PodGroup
                             and its pods: how many more such gangs fit, each a new PodGroup
                             placed whole, and why the next gang does not

Output:
  -o, --output FORMAT        table (default) or json (every pod: its node or why not)
      --report FILE.html     also write a page with plots
      --seed N               seeds the draws among equal nodes and preemption (default 1)
      --max-attempts N       attempts per pod before it is given up (default 20)
      --feature-gates GATES  Name=true,Other=false, as the scheduler takes them (ksched --help
                             lists them)
  -q, --quiet                no progress on stderr
  -h, --help                 this help
)";
}

namespace {

using Selector = std::vector<std::function<bool(const api::Labels&)>>;

// The command line, checked.
struct ParsedFlags {
  Flags flags;
  bool help = false;
  std::optional<Selector> selector;  // -l
  std::vector<std::string> errors;
  std::vector<std::string> gateWarnings;
  std::optional<features::Gates> compareGates;  // --feature-gates, then --compare-feature-gates
};

// Applies the flag `name` (one that takes a value) with `value` to `f`; errors go to `errors`.
void applyFlag(Flags& f, const std::string& name, const std::string& value,
               std::vector<std::string>& errors) {
  int64_t n = 0;
  if (name == "-f" || name == "--filename")
    f.files.push_back(value);
  else if (name == "--kubeconfig")
    f.kubeconfig = value;
  else if (name == "--pods")
    f.podFiles.push_back(value);
  else if (name == "--pod")
    f.pod = value;
  else if (name == "--add-nodes")
    f.addNodes.push_back(value);
  else if (name == "--drain")
    f.drain.push_back(value);
  else if (name == "-l" || name == "--selector")
    f.selector = value;
  else if (name == "--config")
    f.config = value;
  else if (name == "--compare-config")
    f.compareConfig = value;
  else if (name == "--compare-feature-gates")
    f.compareGates = value;
  else if (name == "--capacity")
    f.capacity = value;
  else if (name == "-o" || name == "--output")
    f.output = value;
  else if (name == "--report")
    f.report = value;
  else if (name == "--feature-gates") {
    if (auto err = f.gates.set(value)) {
      errors.push_back("invalid argument \"" + value + "\" for \"--feature-gates\" flag: " + *err);
    }
  } else if (name == "--replicas") {
    if (!parseInt(value, 0, 1000000, n)) errors.push_back("--replicas: not a count: " + value);
    f.replicas = static_cast<int>(n);
  } else if (name == "--seed") {
    if (!parseInt(value, 0, INT64_MAX, n)) errors.push_back("--seed: not a number: " + value);
    f.seed = static_cast<uint64_t>(n);
  } else if (name == "--max-attempts") {
    if (!parseInt(value, 1, 1000, n)) errors.push_back("--max-attempts: not in 1..1000: " + value);
    f.maxAttempts = static_cast<int>(n);
  }
}

// What the flags say together that none says alone.
void checkFlags(ParsedFlags& p) {
  const Flags& f = p.flags;
  auto& errors = p.errors;
  if (f.files.empty() && f.kubeconfig.empty()) {
    errors.emplace_back("the cluster is missing: -f FILE or --kubeconfig FILE");
  }
  if (!f.files.empty() && !f.kubeconfig.empty()) {
    errors.emplace_back("-f and --kubeconfig: read the cluster from one of them");
  }
  if (f.output != "table" && f.output != "json") {
    errors.push_back("--output: \"" + f.output + "\" is not table or json");
  }
  if (!f.selector.empty()) {
    p.selector = parseSelector(f.selector);
    if (!p.selector) errors.push_back("--selector: not a selector ksched reads: " + f.selector);
  }
  if (!f.capacity.empty() && (!f.pod.empty() || !f.podFiles.empty() || !f.compareConfig.empty() ||
                              !f.compareGates.empty())) {
    errors.emplace_back(
        "--capacity: alone (not with --pod, --pods, --compare-config or --compare-feature-gates)");
  }
  f.gates.check(errors, p.gateWarnings);
  if (!f.compareGates.empty()) {
    if (!f.compareConfig.empty()) {
      errors.emplace_back(
          "--compare-feature-gates: one comparison at a time (not with --compare-config)");
    }
    features::Gates other = f.gates;
    if (auto err = other.set(f.compareGates)) {
      errors.push_back("invalid argument \"" + f.compareGates +
                       "\" for \"--compare-feature-gates\" flag: " + *err);
    } else {
      std::vector<std::string> warnings;
      other.check(errors, warnings);
      for (auto& w : warnings) {
        if (std::find(p.gateWarnings.begin(), p.gateWarnings.end(), w) == p.gateWarnings.end()) {
          p.gateWarnings.push_back(std::move(w));
        }
      }
      p.compareGates = other;
    }
  }
}

ParsedFlags parseFlags(const std::vector<std::string>& args) {
  static const std::set<std::string> kWithValue = {"-f",
                                                   "--filename",
                                                   "--kubeconfig",
                                                   "--pods",
                                                   "--pod",
                                                   "--replicas",
                                                   "--add-nodes",
                                                   "--drain",
                                                   "-l",
                                                   "--selector",
                                                   "--config",
                                                   "--compare-config",
                                                   "--compare-feature-gates",
                                                   "--capacity",
                                                   "-o",
                                                   "--output",
                                                   "--report",
                                                   "--seed",
                                                   "--max-attempts",
                                                   "--feature-gates"};
  ParsedFlags p;
  Flags& f = p.flags;
  readFlags(
      args, kWithValue,
      [&](const std::string& a, bool& stop) {
        if (a == "-h" || a == "--help") {
          p.help = stop = true;
        } else if (a == "--no-preemption") {
          f.preemption = false;
        } else if (a == "-q" || a == "--quiet") {
          f.quiet = true;
        } else {
          return false;
        }
        return true;
      },
      [&](const std::string& name, const std::string& value) {
        applyFlag(f, name, value, p.errors);
      },
      p.errors);
  if (p.help) return p;
  checkFlags(p);
  return p;
}

// `--add-nodes FILE:N`: N copies of each node of FILE, named NAME-1 ..., appended to `cluster`.
void addNodes(const std::string& spec, sim::Cluster& cluster) {
  const auto colon = spec.rfind(':');
  int64_t n = 0;
  if (colon == std::string::npos || !parseInt(spec.substr(colon + 1), 1, 1000000, n)) {
    throw std::runtime_error("--add-nodes: \"" + spec + "\" is not FILE:N");
  }
  sim::Cluster tmpl;
  sim::loadFile(spec.substr(0, colon), sim::LoadAs::kCluster, tmpl);
  if (tmpl.nodes.empty()) throw std::runtime_error("--add-nodes: no node in " + spec);
  for (const auto& node : tmpl.nodes) {
    for (int64_t i = 1; i <= n; ++i) {
      auto copy = std::make_shared<api::Node>(*node);
      copy->metadata.name += "-" + std::to_string(i);
      copy->metadata.uid = "sim-node-" + copy->metadata.name;
      if (copy->metadata.labels.contains("kubernetes.io/hostname")) {
        copy->metadata.labels["kubernetes.io/hostname"] = copy->metadata.name;
      }
      cluster.nodes.push_back(std::move(copy));
    }
  }
}

// The pods of `path` (exactly one), as `flag` reads it.
sim::Cluster loadOnePod(const std::string& path, const std::string& flag) {
  sim::Cluster one;
  sim::loadFile(path, sim::LoadAs::kWork, one);
  if (one.pods.size() != 1) {
    throw std::runtime_error(path + ": " + flag + " needs exactly one pod, found " +
                             std::to_string(one.pods.size()));
  }
  return one;
}

// The work: --pods, and --pod --replicas times.
sim::Cluster loadWork(const Flags& f) {
  sim::Cluster work;
  for (const auto& file : f.podFiles) sim::loadFile(file, sim::LoadAs::kWork, work);
  if (!f.pod.empty()) {
    const sim::Cluster one = loadOnePod(f.pod, "--pod");
    for (int i = 1; i <= f.replicas; ++i) {
      auto p = std::make_shared<api::Pod>(*one.pods[0]);
      p->metadata.name += "-" + std::to_string(i);
      p->metadata.uid.clear();
      work.pods.push_back(std::move(p));
    }
    work.skipped.insert(work.skipped.end(), one.skipped.begin(), one.skipped.end());
  }
  return work;
}

// What the work brought for the listers, into the cluster: the ReplicaSets, StatefulSets and
// claims of the controllers expanded (default spreading and volume plugins read them).
void addWorkObjects(const sim::Cluster& work, sim::Cluster& cluster) {
  auto append = [](auto& to, const auto& from) { to.insert(to.end(), from.begin(), from.end()); };
  append(cluster.namespaces, work.namespaces);
  append(cluster.services, work.services);
  append(cluster.replicaSets, work.replicaSets);
  append(cluster.statefulSets, work.statefulSets);
  append(cluster.replicationControllers, work.replicationControllers);
  append(cluster.podDisruptionBudgets, work.podDisruptionBudgets);
  append(cluster.persistentVolumeClaims, work.persistentVolumeClaims);
  append(cluster.persistentVolumes, work.persistentVolumes);
  append(cluster.storageClasses, work.storageClasses);
  append(cluster.csiNodes, work.csiNodes);
  append(cluster.csiDrivers, work.csiDrivers);
  append(cluster.csiStorageCapacities, work.csiStorageCapacities);
  append(cluster.nodes, work.nodes);
  for (const auto& [kind, objects] : work.others) append(cluster.others[kind], objects);
  append(cluster.skipped, work.skipped);
}

sim::Options simulatorOptions(const Flags& f) {
  sim::Options options;
  options.seed = f.seed;
  options.preemption = f.preemption;
  options.maxAttempts = f.maxAttempts;
  options.features = f.gates;
  if (!f.config.empty()) {
    options.config = readAll(f.config);
    options.configName = f.config;
  }
  if (!f.quiet) {
    options.progress = [](uint64_t attempts, uint64_t placed, uint64_t total) {
      std::fprintf(stderr, "simulate: %llu attempts, %llu of %llu pods placed\n",
                   static_cast<unsigned long long>(attempts),
                   static_cast<unsigned long long>(placed), static_cast<unsigned long long>(total));
    };
  }
  return options;
}

// --drain, and the nodes the selector matches.
std::vector<std::string> nodesToDrain(const Flags& f, const std::optional<Selector>& selector,
                                      const sim::Cluster& cluster) {
  std::vector<std::string> out = f.drain;
  if (!selector) return out;
  for (const auto& n : cluster.nodes) {
    if (std::all_of(selector->begin(), selector->end(),
                    [&](const auto& m) { return m(n->metadata.labels); })) {
      out.push_back(n->metadata.name);
    }
  }
  if (out.empty()) throw std::runtime_error("--selector: no node matches " + f.selector);
  return out;
}

// The cluster and what to do with it, as the flags gave them.
struct Setup {
  sim::Cluster cluster;
  sim::Cluster work;
  std::vector<std::string> drain;  // applied to the cluster before any scheduling
};

// --capacity: how many more copies of its pod, or gangs of its PodGroup, fit; the exit code.
int runCapacity(const Flags& f, const Setup& s, const sim::Options& options,
                const Registry& outOfTree) {
  sim::Simulator simulator(s.cluster, options, outOfTree);
  for (const auto& node : s.drain) (void)simulator.drain(node);
  return printCapacity(f.capacity, f.output, simulator);
}

// One simulation of the drains and the work with `options`: the result document.
nlohmann::ordered_json simulateOnce(const Flags& f, const Setup& s, sim::Options options,
                                    const Registry& outOfTree) {
  sim::Simulator simulator(s.cluster, std::move(options), outOfTree);
  std::vector<sim::Simulator::Pending> pending;
  for (const auto& node : s.drain) {
    for (auto& p : simulator.drain(node)) pending.push_back({std::move(p), "drained"});
  }
  const sim::Cluster before = simulator.cluster();
  for (const auto& p : s.work.pods) pending.push_back({p, "work"});
  sim::Result r = simulator.schedule(pending);
  sim::SummaryInput in;
  in.before = &before;
  in.after = &simulator.cluster();
  in.result = &r;
  for (const auto& name : simulator.profiles()) {
    in.profile += (in.profile.empty() ? "" : ", ") + name;
  }
  in.seed = f.seed;
  in.features = simulator.options().features;
  return sim::resultDocument(in);
}

// The simulation (and its comparison with --compare-config or --compare-feature-gates), as a
// table or JSON, and the report; the exit code.
int runScheduling(const Flags& f, const Setup& s, const sim::Options& options,
                  const std::optional<features::Gates>& compareGates, const Registry& outOfTree) {
  nlohmann::ordered_json doc = simulateOnce(f, s, options, outOfTree);
  if (!f.compareConfig.empty()) {
    sim::Options other = options;
    other.config = readAll(f.compareConfig);
    other.configName = f.compareConfig;
    sim::addComparison(doc, f.compareConfig, simulateOnce(f, s, std::move(other), outOfTree));
  }
  if (compareGates) {
    // The same run in the same process with the other gate set: the gates are a value each
    // simulator carries, so the two never see each other's.
    sim::Options other = options;
    other.features = *compareGates;
    sim::addComparison(doc, "--feature-gates " + f.compareGates,
                       simulateOnce(f, s, std::move(other), outOfTree));
  }
  if (!f.report.empty()) {
    std::ofstream out(f.report, std::ios::binary | std::ios::trunc);
    out << sim::renderReport(doc);
    if (!out) throw std::runtime_error(f.report + ": cannot be written");
  }
  if (f.output == "json") {
    std::printf("%s\n", doc.dump(2).c_str());
  } else {
    std::fputs(sim::resultTable(doc).c_str(), stdout);
  }
  return 0;
}

}  // namespace

int runSimulate(const std::vector<std::string>& args, const Registry& outOfTree) {
  const ParsedFlags parsed = parseFlags(args);
  if (parsed.help) {
    std::fputs(simulateUsage().c_str(), stdout);
    return 0;
  }
  if (!parsed.errors.empty()) {
    for (const auto& e : parsed.errors) std::fprintf(stderr, "%s\n", e.c_str());
    std::fputs("Run 'ksched simulate --help' for the flags.\n", stderr);
    return 1;
  }
  const Flags& f = parsed.flags;
  // The command's own messages go to stderr; the scheduler's logs are not for its user.
  spdlog::set_level(spdlog::level::err);
  for (const auto& w : parsed.gateWarnings) std::fprintf(stderr, "warning: %s\n", w.c_str());

  try {
    Setup s;
    s.cluster = readCluster(f.kubeconfig, f.files, "ksched-simulate");
    s.work = loadWork(f);
    for (const auto& spec : f.addNodes) addNodes(spec, s.cluster);
    addWorkObjects(s.work, s.cluster);
    sim::checkCluster(s.cluster);
    if (!f.quiet) printSkipped(s.cluster.skipped, 0);
    const sim::Options options = simulatorOptions(f);
    s.drain = nodesToDrain(f, parsed.selector, s.cluster);
    if (!f.capacity.empty()) return runCapacity(f, s, options, outOfTree);
    return runScheduling(f, s, options, parsed.compareGates, outOfTree);
  } catch (const sim::ConfigError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "simulate: %s\n", e.what());
    return 1;
  }
}

}  // namespace ksched::app
