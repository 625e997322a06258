// The room the nodes have left by requests (cpu and memory): a necessary condition for a node's
// pods to fit elsewhere, checked before a scheduler run is spent on it. Once the cluster fills
// up, most nodes a plan would try fail here at no cost.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>

#include <ksched/api/features.h>
#include <ksched/sim.h>

namespace ksched::advise {

class Room {
 public:
  explicit Room(features::Gates gates) : gates_(std::move(gates)) {}

  // Reads what each node holds and has left in `cluster` (the pods that would move off a node:
  // all but DaemonSet, static and terminating ones).
  void update(const sim::Cluster& cluster);

  // "" when the pods that would move off `node` could fit, by requests, on the schedulable
  // nodes other than `node` and `excluded`; else why they cannot.
  [[nodiscard]] std::string cannotTake(const std::string& node,
                                       const std::set<std::string>& excluded) const;

 private:
  struct NodeRoom {
    int64_t freeCpu = 0, freeMemory = 0;        // allocatable less every pod's requests
    int64_t movingCpu = 0, movingMemory = 0;    // the requests of the pods that would move
    int64_t largestCpu = 0, largestMemory = 0;  // of one pod that would move
    bool schedulable = true;
  };
  // A pod's (cpu, memory) requests, by uid (computed once per pod).
  std::pair<int64_t, int64_t> requests(const api::Pod& pod);

  features::Gates gates_;
  std::unordered_map<std::string, NodeRoom> nodes_;
  std::unordered_map<std::string, std::pair<int64_t, int64_t>> requests_;
};

}  // namespace ksched::advise
