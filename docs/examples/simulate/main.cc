// simulate-example: ksched's scheduler over a cluster built in code. Asks where one pod would
// go, places a batch inside a transaction, reverts it, and counts how many more pods fit.
#include <spdlog/spdlog.h>

#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include <ksched/sim.h>

namespace {

// A node with `cpu` cpus, 2Gi of memory per cpu and room for 110 pods.
ksched::NodePtr makeNode(const std::string& name, int cpu) {
  auto node = std::make_shared<ksched::api::Node>();
  node->metadata.name = name;
  node->status.allocatable = {
      {"cpu", ksched::api::Quantity::parse(std::to_string(cpu))},
      {"memory", ksched::api::Quantity::parse(std::to_string(2 * cpu) + "Gi")},
      {"pods", ksched::api::Quantity::parse("110")},
  };
  node->status.capacity = node->status.allocatable;
  return node;
}

// A pod of one container asking for `cpu` cpus and 2Gi of memory per cpu; bound when `nodeName`
// is given.
ksched::PodPtr makePod(const std::string& name, int cpu, const std::string& nodeName = "") {
  auto pod = std::make_shared<ksched::api::Pod>();
  pod->metadata.name = name;
  pod->metadata.namespace_ = "default";
  pod->metadata.uid = "uid-" + name;
  ksched::api::Container c;
  c.name = "main";
  c.resources.requests = {
      {"cpu", ksched::api::Quantity::parse(std::to_string(cpu))},
      {"memory", ksched::api::Quantity::parse(std::to_string(2 * cpu) + "Gi")},
  };
  pod->spec.containers.push_back(std::move(c));
  pod->spec.nodeName = nodeName;
  return pod;
}

void print(const ksched::sim::PodResult& p) {
  if (p.node) {
    std::printf("placed %s on %s\n", p.name.c_str(), p.node->c_str());
  } else {
    std::printf("unschedulable %s: %s\n", p.name.c_str(), p.reason.c_str());
  }
}

int boundPods(const ksched::sim::Simulator& sim) {
  int n = 0;
  for (const auto& p : sim.cluster().pods) n += p->spec.nodeName.empty() ? 0 : 1;
  return n;
}

}  // namespace

int main() try {
  // The scheduler logs each failed attempt at info level; this program prints its own summary.
  spdlog::set_level(spdlog::level::warn);

  // node-b already runs a database of 3 cpus.
  ksched::sim::Cluster cluster;
  cluster.nodes = {makeNode("node-a", 4), makeNode("node-b", 4), makeNode("node-c", 6)};
  cluster.pods = {makePod("db", 3, "node-b")};

  ksched::sim::Options options;
  options.seed = 7;  // decides among nodes that tie
  ksched::sim::Simulator sim(cluster, options);

  const ksched::sim::PodResult one = sim.canSchedule(*makePod("batch", 4));
  std::printf("canSchedule batch: %s\n", one.node ? one.node->c_str() : one.reason.c_str());

  sim.begin();
  const ksched::sim::Result r = sim.schedule(
      {makePod("web-0", 1), makePod("web-1", 1), makePod("web-2", 1), makePod("huge", 16)});
  for (const auto& p : r.pods) print(p);
  std::printf("in the transaction: %d pods bound\n", boundPods(sim));
  sim.revert();
  std::printf("after revert: %d pods bound\n", boundPods(sim));

  const auto cap = sim.capacity(*makePod("web", 1));
  std::printf("capacity for web: %d more\n", cap.fits);
  if (cap.next) std::printf("the next one: %s\n", cap.next->reason.c_str());
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "simulate-example: %s\n", e.what());
  return 1;
}
