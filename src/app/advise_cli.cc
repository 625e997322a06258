// ksched advise: the planner (advise/plan.h) behind a command line, and --apply.
#include "app/advise_cli.h"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <fstream>
#include <set>

#include <ksched/api/features.h>

#include "advise/balance.h"
#include "advise/defragment.h"
#include "advise/plan.h"
#include "advise/render.h"
#include "advise/report.h"
#include "advise/spread.h"
#include "app/advise_apply.h"
#include "app/advise_watch.h"
#include "app/cluster_source.h"
#include "client/config.h"
#include "client/rest_client.h"
#include "sim/load.h"

namespace ksched::app {
// Named, not anonymous: the unity build compiles this file with simulate_cli.cc.
namespace advise_cli {

struct Flags {
  std::vector<std::string> files;
  std::string kubeconfig, config, output = "table", defragment, report;
  std::optional<int> freeNodes;
  bool scaleDown = false;
  bool spread = false;
  bool balance = false;
  double deviation = 10;
  bool deviationSet = false;
  bool apply = false;
  bool watch = false;
  WatchOptions watchOptions = [] {
    WatchOptions o;
    o.serving.securePort = 10258;
    return o;
  }();
  std::vector<std::string> watchOnly;  // the flags given that only --watch takes
  bool quiet = false;
  uint64_t seed = 1;
  advise::EvictionPolicy policy;
  ApplyOptions applyOptions;
  features::Gates gates;
  bool help = false;
  std::vector<std::string> errors, gateWarnings;
};

// "30s", "2m", "500ms", or plain seconds.
bool parseDuration(const std::string& s, std::chrono::milliseconds& out) {
  size_t digits = 0;
  while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits]))) ++digits;
  int64_t n = 0;
  if (digits == 0 || !parseInt(s.substr(0, digits), 0, 1000000000, n)) return false;
  const std::string unit = s.substr(digits);
  if (unit == "ms") {
    out = std::chrono::milliseconds(n);
  } else if (unit.empty() || unit == "s") {
    out = std::chrono::milliseconds(n * 1000);
  } else if (unit == "m") {
    out = std::chrono::milliseconds(n * 60000);
  } else {
    return false;
  }
  return true;
}

void applyFlag(Flags& f, const std::string& name, const std::string& value) {
  int64_t n = 0;
  std::chrono::milliseconds d{};
  if (name == "-f" || name == "--filename") {
    f.files.push_back(value);
  } else if (name == "--kubeconfig") {
    f.kubeconfig = value;
  } else if (name == "--config") {
    f.config = value;
  } else if (name == "--defragment") {
    f.defragment = value;
  } else if (name == "-o" || name == "--output") {
    f.output = value;
  } else if (name == "--report") {
    f.report = value;
  } else if (name == "--free-nodes") {
    if (!parseInt(value, 1, 1000000, n)) f.errors.push_back("--free-nodes: not a count: " + value);
    f.freeNodes = static_cast<int>(n);
  } else if (name == "--deviation") {
    if (!parseInt(value, 1, 100, n)) f.errors.push_back("--deviation: not in 1..100: " + value);
    f.deviation = static_cast<double>(n);
    f.deviationSet = true;
  } else if (name == "--seed") {
    if (!parseInt(value, 0, INT64_MAX, n)) f.errors.push_back("--seed: not a number: " + value);
    f.seed = static_cast<uint64_t>(n);
  } else if (name == "--grace-period") {
    if (!parseInt(value, 0, 86400, n))
      f.errors.push_back("--grace-period: not in 0..86400: " + value);
    f.applyOptions.gracePeriodSeconds = n;
  } else if (name == "--interval") {
    if (!parseDuration(value, d)) f.errors.push_back("--interval: not a duration: " + value);
    f.applyOptions.interval = d;
  } else if (name == "--timeout") {
    if (!parseDuration(value, d) || d < std::chrono::seconds(1)) {
      f.errors.push_back("--timeout: not a duration of 1s or more: " + value);
    }
    f.applyOptions.timeout = std::chrono::duration_cast<std::chrono::seconds>(d);
  }
  if (name == "--watch-interval" || name == "--drift-moves" || name == "--secure-port" ||
      name == "--bind-address") {
    f.watchOnly.push_back(name);
  }
  if (name == "--watch-interval") {
    if (!parseDuration(value, d) || d < std::chrono::seconds(1)) {
      f.errors.push_back("--watch-interval: not a duration of 1s or more: " + value);
    }
    f.watchOptions.every = d;
  } else if (name == "--drift-moves") {
    if (!parseInt(value, 1, 1000000, n)) f.errors.push_back("--drift-moves: not a count: " + value);
    f.watchOptions.driftMoves = static_cast<size_t>(n);
  } else if (name == "--secure-port") {
    if (!parseInt(value, 0, 65535, n)) {
      f.errors.push_back("--secure-port: not a port (0..65535): " + value);
    }
    f.watchOptions.serving.securePort = static_cast<int>(n);
  } else if (name == "--bind-address") {
    f.watchOptions.serving.bindAddress = value;
  } else if (name == "--feature-gates") {
    if (auto err = f.gates.set(value)) {
      f.errors.push_back("invalid argument \"" + value +
                         "\" for \"--feature-gates\" flag: " + *err);
    }
  }
}

Flags parseFlags(const std::vector<std::string>& args) {
  static const std::set<std::string> kWithValue = {"-f",
                                                   "--filename",
                                                   "--kubeconfig",
                                                   "--config",
                                                   "-o",
                                                   "--output",
                                                   "--free-nodes",
                                                   "--defragment",
                                                   "--seed",
                                                   "--grace-period",
                                                   "--interval",
                                                   "--timeout",
                                                   "--feature-gates",
                                                   "--deviation",
                                                   "--report",
                                                   "--watch-interval",
                                                   "--drift-moves",
                                                   "--secure-port",
                                                   "--bind-address"};
  static const std::map<std::string, bool Flags::*> kSwitches = {
      {"--scale-down", &Flags::scaleDown},
      {"--spread", &Flags::spread},
      {"--balance", &Flags::balance},
      {"--apply", &Flags::apply},
      {"--watch", &Flags::watch},
      {"-q", &Flags::quiet},
      {"--quiet", &Flags::quiet},
      {"-h", &Flags::help},
      {"--help", &Flags::help}};
  Flags f;
  readFlags(
      args, kWithValue,
      [&](const std::string& a, bool& stop) {
        if (auto s = kSwitches.find(a); s != kSwitches.end()) {
          f.*(s->second) = true;
          stop = f.help;
        } else if (a == "--evict-local-storage-pods") {
          f.policy.evictLocalStoragePods = true;
        } else if (a == "--evict-system-critical-pods") {
          f.policy.evictSystemCriticalPods = true;
        } else {
          return false;
        }
        return true;
      },
      [&](const std::string& name, const std::string& value) { applyFlag(f, name, value); },
      f.errors);
  if (f.help) return f;
  if (f.files.empty() == f.kubeconfig.empty()) {
    f.errors.emplace_back("the cluster: -f FILE or --kubeconfig FILE (one of them)");
  }
  if (int(f.freeNodes.has_value()) + int(f.scaleDown) + int(f.spread) + int(f.balance) +
          int(!f.defragment.empty()) !=
      1) {
    f.errors.emplace_back(
        "the goal: --free-nodes N, --scale-down, --spread, --balance or --defragment POD.yaml (one "
        "of them)");
  }
  if (f.deviationSet && !f.balance) {
    f.errors.emplace_back("--deviation: goes with --balance");
  }
  if (f.output != "table" && f.output != "json") {
    f.errors.push_back("--output: \"" + f.output + "\" is not table or json");
  }
  if (f.apply && f.kubeconfig.empty()) {
    f.errors.emplace_back(
        "--apply: needs --kubeconfig (a plan from files has no cluster to change)");
  }
  if (f.watch && f.kubeconfig.empty()) {
    f.errors.emplace_back("--watch: needs --kubeconfig (it plans over the live cluster)");
  }
  if (f.watch && f.apply)
    f.errors.emplace_back("--watch: goes without --apply (it changes nothing)");
  for (const auto& name : f.watchOnly) {
    if (!f.watch) f.errors.push_back(name + ": goes with --watch");
  }
  f.gates.check(f.errors, f.gateWarnings);
  return f;
}

sim::Options simulatorOptions(const Flags& f) {
  sim::Options options;
  options.seed = f.seed;
  options.features = f.gates;
  if (!f.config.empty()) {
    options.config = readAll(f.config);
    options.configName = f.config;
  }
  return options;
}

// --defragment FILE: one pod, or one PodGroup (any version of the Workload API read) and its
// pods (each naming it in spec.schedulingGroup.podGroupName).
advise::Plan defragment(const Flags& f, sim::Cluster cluster, const Registry& outOfTree) {
  sim::Cluster work;
  sim::loadFile(f.defragment, sim::LoadAs::kWork, work);
  std::vector<UnstructuredPtr> groups;
  for (const auto& [kind, objects] : work.others) {
    if (kind.starts_with("scheduling.k8s.io/") && kind.ends_with("/PodGroup")) {
      groups.insert(groups.end(), objects.begin(), objects.end());
      auto& into = cluster.others[kind];
      into.insert(into.end(), objects.begin(), objects.end());
    }
  }
  if (groups.empty()) {
    if (work.pods.size() != 1) {
      throw std::runtime_error(f.defragment +
                               ": --defragment needs exactly one pod, or a PodGroup and its "
                               "pods; found " +
                               std::to_string(work.pods.size()) + " pods and no PodGroup");
    }
    return advise::planDefragment(cluster, simulatorOptions(f), *work.pods[0], f.policy, outOfTree);
  }
  if (groups.size() != 1) {
    throw std::runtime_error(f.defragment + ": --defragment takes one PodGroup, found " +
                             std::to_string(groups.size()));
  }
  const api::ObjectMeta& g = groups[0]->metadata;
  const std::string ns = g.namespace_.empty() ? "default" : g.namespace_;
  for (const auto& p : work.pods) {
    const std::string* name = p->spec.podGroupName();
    if (!name || *name != g.name || p->metadata.namespace_ != ns) {
      throw std::runtime_error(f.defragment + ": pod " + p->metadata.key() +
                               " is not a pod of PodGroup " + ns + "/" + g.name +
                               " (spec.schedulingGroup.podGroupName)");
    }
  }
  return advise::planDefragmentGroup(cluster, simulatorOptions(f), ns + "/" + g.name, work.pods,
                                     f.policy, outOfTree);
}

advise::Plan plan(const Flags& f, const Registry& outOfTree) {
  sim::Cluster cluster = readCluster(f.kubeconfig, f.files, "ksched-advise");
  sim::checkCluster(cluster);
  if (!f.quiet) printSkipped(cluster.skipped);
  if (f.spread) return advise::planSpread(cluster, simulatorOptions(f), f.policy, outOfTree);
  if (f.balance) {
    return advise::planBalance(cluster, simulatorOptions(f), {f.deviation, f.policy}, outOfTree);
  }
  if (!f.defragment.empty()) return defragment(f, std::move(cluster), outOfTree);
  advise::Goal goal;
  goal.freeNodes = f.freeNodes.value_or(-1);
  goal.policy = f.policy;
  return advise::planFreeNodes(cluster, simulatorOptions(f), goal, outOfTree);
}

// The plan on stdout, and --report's page (first: a page that cannot be written is an error
// before anything is printed or carried out).
void writeReport(const Flags& f, const nlohmann::ordered_json& doc) {
  std::ofstream out(f.report, std::ios::binary | std::ios::trunc);
  out << advise::renderReport(doc);
  out.close();
  if (!out) throw std::runtime_error(f.report + ": cannot be written");
}

void print(const Flags& f, const advise::Plan& p) {
  nlohmann::ordered_json doc;
  if (!f.report.empty() || f.output == "json") doc = advise::planDocument(p);
  if (!f.report.empty()) writeReport(f, doc);
  if (f.output == "json") {
    std::printf("%s\n", doc.dump(2).c_str());
  } else {
    std::fputs(advise::planTable(p).c_str(), stdout);
  }
}

// --defragment found no room.
bool noRoom(const advise::Plan& p) { return !p.forPod.empty() && p.forPodNode.empty(); }

// --watch: plans every --watch-interval until stopped; --report rewritten each round.
int watchAll(const Flags& f, const Registry& outOfTree) {
  client::Config cfg = client::resolveConfig(f.kubeconfig, "");
  cfg.userAgent = "ksched-advise";
  client::RestClient rest(cfg);
  auto say = [](const std::string& line) { std::fprintf(stderr, "advise: %s\n", line.c_str()); };
  const auto once = [&] {
    advise::Plan p = plan(f, outOfTree);
    if (!f.report.empty()) writeReport(f, advise::planDocument(p));
    return p;
  };
  return watchPlans(rest, cfg, f.watchOptions, once, say);
}

// --apply: plans, carries out, and plans again when the cluster changed under the plan.
int applyAll(const Flags& f, const Registry& outOfTree) {
  client::Config cfg = client::resolveConfig(f.kubeconfig, "");
  cfg.userAgent = "ksched-advise";
  client::RestClient::Options ro;
  ro.maxRetries = 2;
  client::RestClient rest(cfg, ro);
  auto say = [](const std::string& line) { std::fprintf(stderr, "advise: %s\n", line.c_str()); };
  for (int round = 1; round <= 3; ++round) {
    const advise::Plan p = plan(f, outOfTree);
    print(f, p);
    if (p.moves.empty() && p.cordon.empty()) return noRoom(p) ? 2 : 0;
    const ApplyResult r = applyPlan(rest, p, f.applyOptions, say);
    size_t elsewhere = 0;
    for (const auto& m : r.done) elsewhere += m.landed != m.planned ? 1 : 0;
    std::fprintf(stderr, "advise: %zu of %zu moves done, %zu landed elsewhere than planned\n",
                 r.done.size(), p.moves.size(), elsewhere);
    if (r.stopped.empty()) return 0;
    std::fprintf(stderr, "advise: stopped: %s\n", r.stopped.c_str());
    if (!r.changed) return 1;
    say("planning again (round " + std::to_string(round + 1) + ")");
  }
  std::fputs("advise: the cluster kept changing; gave up after 3 plans\n", stderr);
  return 1;
}

}  // namespace advise_cli

std::string adviseUsage() {
  return R"(Usage: ksched advise (-f FILE... | --kubeconfig FILE) GOAL [flags]

Plans which pods to move to reach a goal, and where each would land: every move is placed by
ksched's own scheduler (its plugins, your --config) over a copy of the cluster as the moves
before it leave it. Pods that may not move (DaemonSet and static pods stay with their node;
system-critical, bare, node-local-storage pods, safe-to-evict=false, and pods whose
PodDisruptionBudget allows no disruption keep it) are listed with the reason. Nothing is changed
unless --apply is given.

The cluster:
  -f, --filename FILE        objects as `kubectl get nodes,pods,pdb,... -A -o yaml` prints them;
                             repeatable
      --kubeconfig FILE      read the cluster from an apiserver (LIST only, unless --apply)

The goal (one):
      --free-nodes N         empty N nodes (the easiest first) by moving their pods elsewhere
      --scale-down           empty as many nodes as possible
      --spread               bring every topology spread constraint of the pods back within
                             its maxSkew, moving pods off the fullest domains; pods without
                             constraints by the scheduler's default ones (PodTopologySpread's
                             defaultingType)
      --balance              even out the nodes' requested cpu and memory: move pods off the
                             nodes more than --deviation points above the cluster's share;
                             by their measured use (NodeMetrics, PodMetrics) where --config
                             enables a load-aware plugin and the cluster has NodeMetrics
      --deviation PCT        how far above the cluster's share a node may be
                             (percentage points, default 10; with --balance)
      --defragment POD.yaml  make room for a pod of this shape (e.g. one asking for 8 GPUs)
                             with the fewest moves off one node, then say where it lands; or
                             for a gang: a PodGroup (scheduling.k8s.io, with --feature-gates
                             GenericWorkload=true) and its pods in the file, room made for one
                             member at a time, then the group placed by its pod-group cycle

What may move:
      --evict-local-storage-pods      pods with emptyDir or hostPath volumes too
      --evict-system-critical-pods    pods of priority 2000000000 and above too
  Annotations: descheduler.alpha.kubernetes.io/evict or
  cluster-autoscaler.kubernetes.io/safe-to-evict=true lets a pod move; safe-to-evict=false keeps
  it; a node annotated cluster-autoscaler.kubernetes.io/scale-down-disabled=true is not freed.

Carrying it out:
      --apply                cordon the nodes to free (--defragment: the node to make room
                             on, uncordoned at the end), then evict the pods in the plan's order
                             through the Eviction API (PodDisruptionBudgets enforced by the
                             apiserver), each after the last one's replacement is bound; plans
                             again when the cluster changed under the plan
      --grace-period SECONDS the evicted pods' grace period (default: each pod's own)
      --interval DURATION    at least this long between two evictions (default 1s)
      --timeout DURATION     per move: refusals waited out, the pod gone, its replacement
                             bound (default 5m)

Watching (a long-running mode; changes nothing but Events):
      --watch                plan again every --watch-interval over the live cluster; serve
                             the last plan as metrics (ksched_advise_plan_moves{goal},
                             ksched_advise_plan_moves_off_node{goal,node}, ...) on HTTPS
                             /metrics; post a Warning Event (Drifted) on each node the plan
                             moves pods off once it has --drift-moves moves or more; until
                             SIGTERM or SIGINT
      --watch-interval DURATION  between two plans (default 1m)
      --drift-moves N        the moves from which the cluster has drifted (default 1)
      --secure-port PORT     where /metrics, /healthz and /readyz are served (default 10258;
                             0: none), authenticated and authorized through the apiserver as
                             the scheduler's endpoints are
      --bind-address IP      the address to serve on (default 0.0.0.0)

Output:
  -o, --output FORMAT        table (default) or json
      --report FILE.html     also write the plan as a page: the moves (filterable), requested
                             shares before and after, skews, what keeps nodes (with --apply:
                             the plan carried out, the last one when it planned again; with
                             --watch: rewritten every round)
      --config FILE          KubeSchedulerConfiguration (default: ksched's defaults)
      --feature-gates GATES  Name=true,Other=false, as the scheduler takes them
      --seed N               seeds the draws among equal nodes (default 1)
  -q, --quiet                no list of skipped objects on stderr
  -h, --help                 this help

Exit status: 0, or 1 for an error (bad flags, an unreadable cluster, a --report that cannot be
written, an --apply that stopped, a --watch that cannot serve), 2 when --defragment found no
room. --watch exits 0 when stopped.
)";
}

int runAdvise(const std::vector<std::string>& args, const Registry& outOfTree) {
  using namespace advise_cli;
  const Flags f = parseFlags(args);
  if (f.help) {
    std::fputs(adviseUsage().c_str(), stdout);
    return 0;
  }
  if (!f.errors.empty()) {
    for (const auto& e : f.errors) std::fprintf(stderr, "%s\n", e.c_str());
    std::fputs("Run 'ksched advise --help' for the flags.\n", stderr);
    return 1;
  }
  spdlog::set_level(spdlog::level::err);
  for (const auto& w : f.gateWarnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  try {
    if (f.apply) return applyAll(f, outOfTree);
    if (f.watch) return watchAll(f, outOfTree);
    const advise::Plan p = plan(f, outOfTree);
    print(f, p);
    if (f.output != "json") {
      std::puts("Dry run: nothing was changed (--apply carries the plan out).");
    }
    return noRoom(p) ? 2 : 0;
  } catch (const sim::ConfigError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "advise: %s\n", e.what());
    return 1;
  }
}

}  // namespace ksched::app
