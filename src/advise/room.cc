#include "advise/room.h"

#include <algorithm>
#include <cstdio>

#include <ksched/api/pod_resources.h>
#include <ksched/api/resources.h>

#include "advise/movable.h"

namespace ksched::advise {
namespace {

std::string cpuText(int64_t milli) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", static_cast<double>(milli) / 1000.0);
  return buf;
}

std::string memoryText(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1fGi", static_cast<double>(bytes) / (1024.0 * 1024 * 1024));
  return buf;
}

}  // namespace

std::pair<int64_t, int64_t> Room::requests(const api::Pod& pod) {
  auto [it, fresh] = requests_.try_emplace(pod.metadata.uid);
  if (fresh || pod.metadata.uid.empty()) {
    const api::Resource r = api::nodePodRequests(pod, gates_).requests;
    it->second = {r.milliCPU, r.memory};
  }
  return it->second;
}

void Room::update(const sim::Cluster& cluster) {
  nodes_.clear();
  for (const auto& n : cluster.nodes) {
    const api::Resource a = api::Resource::fromList(n->status.allocatable);
    NodeRoom& r = nodes_[n->metadata.name];
    r.freeCpu = a.milliCPU;
    r.freeMemory = a.memory;
    r.schedulable = !n->spec.unschedulable;
  }
  const Budgets none({});
  for (const auto& p : cluster.pods) {
    auto it = nodes_.find(p->spec.nodeName);
    if (it == nodes_.end()) continue;
    const auto [cpu, memory] = requests(*p);
    NodeRoom& r = it->second;
    r.freeCpu -= cpu;
    r.freeMemory -= memory;
    if (judge(*p, {}, none).disposition == Disposition::kStays) continue;
    r.movingCpu += cpu;
    r.movingMemory += memory;
    r.largestCpu = std::max(r.largestCpu, cpu);
    r.largestMemory = std::max(r.largestMemory, memory);
  }
}

std::string Room::cannotTake(const std::string& node, const std::set<std::string>& excluded) const {
  auto self = nodes_.find(node);
  if (self == nodes_.end()) return "";
  int64_t cpu = 0, memory = 0, widestCpu = 0, widestMemory = 0;
  for (const auto& [name, r] : nodes_) {
    if (name == node || !r.schedulable || excluded.contains(name)) continue;
    cpu += std::max<int64_t>(r.freeCpu, 0);
    memory += std::max<int64_t>(r.freeMemory, 0);
    widestCpu = std::max(widestCpu, r.freeCpu);
    widestMemory = std::max(widestMemory, r.freeMemory);
  }
  const NodeRoom& s = self->second;
  if (s.movingCpu > cpu || s.movingMemory > memory) {
    return "its pods ask for " + cpuText(s.movingCpu) + " cpu and " + memoryText(s.movingMemory) +
           " of memory; the other schedulable nodes have " + cpuText(cpu) + " cpu and " +
           memoryText(memory) + " free";
  }
  if (s.largestCpu > widestCpu || s.largestMemory > widestMemory) {
    return "one of its pods asks for more than any other schedulable node has free (" +
           cpuText(widestCpu) + " cpu, " + memoryText(widestMemory) + " at most)";
  }
  return "";
}

}  // namespace ksched::advise
