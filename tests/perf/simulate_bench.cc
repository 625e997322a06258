// The simulator's throughput: N empty nodes (32 cpu, 128Gi, 110 pods, 3 zones), P pending pods
// of one ReplicaSet (100m cpu, 128Mi: the default profile's default spreading applies), one
// process, the default profile. Prints the scheduling rate (the simulation alone, not building
// the cluster) and the process's peak memory.
//
//   ksched_simulate_bench [NODES=5000] [PODS=10000] [--standalone] [--existing K] [--progress]
//                        [--walk-spread] [--no-memo] [--preempt] [--mixed]
//
// --standalone: pods without an owner (no default spreading). --existing K: K pods of another
// app already bound on every node (default spreading then counts them all in every cycle, as
// upstream's PodTopologySpread does). --progress: the pods placed so far on stderr, every
// 10 s of scheduling. --walk-spread: PodTopologySpread's PreScore walks every node in every
// cycle instead of keeping its counts (PodTopologySpread::setCountCacheEnabledForTest), as
// before the counts were kept; the placements are the same. --no-memo: every plugin runs on
// every node in every cycle (framework::ResultMemo off), as before the node-local plugins'
// answers were kept; the placements are the same. --preempt: the K existing pods of
// every node (default 4) fill it (each 32/K cpu less a tenth, priority 0) and the PODS pods ask
// for three quarters of a node at priority 1000, so each preempts; the victims are put back as
// pending pods, and find no room. --mixed: nodes of four sizes (8, 16, 32 and 64 cpu, 4 GiB of
// memory per cpu, in turn) and pods of 16 request shapes in turn (cpu 100m, 250m, 500m or 1;
// memory 128Mi, 256Mi, 512Mi or 1Gi), so that consecutive pods differ and few cycles batch.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>

#include <ksched/api/quantity.h>
#include <ksched/sim.h>

#include "framework/result_memo.h"
#include "plugins/pod_topology_spread/pod_topology_spread.h"

namespace {

using ksched::api::Quantity;

ksched::NodePtr makeNode(int i, bool mixed) {
  // --mixed: 8, 16, 32 and 64 cpu in turn.
  const int cpus = mixed ? 8 << (i % 4) : 32;
  auto n = std::make_shared<ksched::api::Node>();
  n->metadata.name = "node-" + std::to_string(i);
  n->metadata.uid = "node-uid-" + std::to_string(i);
  n->metadata.labels = {{"kubernetes.io/hostname", n->metadata.name},
                        {"topology.kubernetes.io/zone", "zone-" + std::to_string(i % 3)}};
  for (auto* list : {&n->status.allocatable, &n->status.capacity}) {
    (*list)["cpu"] = Quantity::parse(std::to_string(cpus));
    (*list)["memory"] = Quantity::parse(std::to_string(cpus * 4) + "Gi");
    (*list)["pods"] = Quantity::parse("110");
  }
  return n;
}

std::shared_ptr<ksched::api::Pod> makePod(const std::string& name, const std::string& node,
                                          const std::string& app, const std::string& cpu = "100m",
                                          const std::string& memory = "128Mi") {
  auto p = std::make_shared<ksched::api::Pod>();
  p->metadata.name = name;
  p->metadata.namespace_ = "bench";
  p->metadata.uid = "uid-" + name;
  p->metadata.labels = {{"app", app}};
  p->spec.nodeName = node;
  p->spec.schedulerName = "default-scheduler";
  ksched::api::Container c;
  c.name = "c";
  c.resources.requests["cpu"] = Quantity::parse(cpu);
  c.resources.requests["memory"] = Quantity::parse(memory);
  p->spec.containers.push_back(std::move(c));
  return p;
}

double peakRssMiB() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;
}

}  // namespace

int main(int argc, char** argv) {
  int nodes = 5000, pods = 10000;
  bool standalone = false;
  bool progress = false;
  bool preempt = false;
  bool mixed = false;
  int existing = 0;
  int positional = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--standalone") {
      standalone = true;
    } else if (a == "--preempt") {
      preempt = true;
    } else if (a == "--mixed") {
      mixed = true;
    } else if (a == "--progress") {
      progress = true;
    } else if (a == "--walk-spread") {
      ksched::plugins::PodTopologySpread::setCountCacheEnabledForTest(false);
    } else if (a == "--no-memo") {
      ksched::framework::ResultMemo::setEnabled(false);
    } else if (a == "-h" || a == "--help" || (!a.empty() && a[0] == '-' && a != "--existing")) {
      std::fprintf(stderr,
                   "usage: ksched_simulate_bench [NODES=5000] [PODS=10000] [--standalone] "
                   "[--existing K] [--progress] [--walk-spread] [--no-memo] [--preempt] "
                   "[--mixed]\n");
      return a == "-h" || a == "--help" ? 0 : 2;
    } else if (a == "--existing" && i + 1 < argc) {
      existing = std::atoi(argv[++i]);
    } else if (positional == 0) {
      nodes = std::atoi(a.c_str());
      ++positional;
    } else {
      pods = std::atoi(a.c_str());
    }
  }
  if (preempt && existing == 0) existing = 4;
  // --preempt: 32 cpu less a tenth shared by the existing pods; the work takes 24 of 32.
  const std::string oldCpu =
      preempt ? std::to_string(32000 * 9 / 10 / existing) + "m" : std::string("100m");
  ksched::sim::Cluster cluster;
  ksched::api::ReplicaSet rs;
  rs.metadata.name = "web";
  rs.metadata.namespace_ = "bench";
  rs.metadata.uid = "rs-web";
  rs.spec.selector = ksched::api::LabelSelector{};
  rs.spec.selector->matchLabels = {{"app", "web"}};
  cluster.replicaSets.push_back(rs);
  for (int i = 0; i < nodes; ++i) {
    cluster.nodes.push_back(makeNode(i, mixed));
    for (int k = 0; k < existing; ++k) {
      cluster.pods.push_back(makePod("old-" + std::to_string(i) + "-" + std::to_string(k),
                                     cluster.nodes.back()->metadata.name, "old", oldCpu));
    }
  }
  std::vector<ksched::PodPtr> work;
  for (int i = 0; i < pods; ++i) {
    static const char* const kCpu[] = {"100m", "250m", "500m", "1"};
    static const char* const kMemory[] = {"128Mi", "256Mi", "512Mi", "1Gi"};
    auto p = mixed ? makePod("web-" + std::to_string(i), "", "web", kCpu[i % 4], kMemory[i / 4 % 4])
                   : makePod("web-" + std::to_string(i), "", "web", preempt ? "24" : "100m");
    if (preempt) p->spec.priority = 1000;
    if (!standalone) {
      p->metadata.ownerReferences.push_back({"apps/v1", "ReplicaSet", "web", "rs-web", true});
    }
    work.push_back(std::move(p));
  }
  const double built = peakRssMiB();
  ksched::sim::Options options;
  auto begun = std::make_shared<std::chrono::steady_clock::time_point>();
  if (progress) {
    auto next = std::make_shared<double>(10);
    options.progress = [begun, next](uint64_t /*attempts*/, uint64_t placed, uint64_t total) {
      const double s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - *begun).count();
      if (s < *next) return;
      *next += 10;
      std::fprintf(stderr, "%.0f s: %llu of %llu pods placed\n", s,
                   static_cast<unsigned long long>(placed), static_cast<unsigned long long>(total));
    };
  }
  ksched::sim::Simulator sim(std::move(cluster), options);
  const auto start = std::chrono::steady_clock::now();
  *begun = start;
  // Handed over: each pod is let go once the run holds its copy.
  ksched::sim::Result r = sim.schedule(std::move(work));
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "simulate: %d nodes (%d pods each), %d pods (%s): placed %llu, unschedulable %llu, "
      "preempted %zu in %.3f s of scheduling "
      "(%.0f pods/s; %.3f s with building the core and the result); peak RSS %.0f MiB (%.0f MiB "
      "after building the cluster)\n",
      nodes, existing, pods,
      mixed ? (standalone ? "16 shapes, standalone" : "16 shapes, one ReplicaSet")
            : (standalone ? "standalone" : "one ReplicaSet"),
      static_cast<unsigned long long>(r.scheduled),
      static_cast<unsigned long long>(r.unschedulable), r.victims.size(), r.seconds,
      r.seconds > 0 ? static_cast<double>(r.scheduled) / r.seconds : 0.0, wall, peakRssMiB(),
      built);
  // --preempt: the victims put back find no room.
  return r.unschedulable == (preempt ? r.victims.size() : 0) ? 0 : 1;
}
