// ksched advise's planner: which pods to move, from where to where, and why, each move checked
// by ksched's own scheduler (the Simulator, include/ksched/sim.h) over the cluster as the moves
// before it leave it. Nothing here talks to an apiserver (app/advise_apply.h carries a plan out).
//
// The goal implemented: free nodes (--free-nodes N, --scale-down). Nodes with nothing to move
// are cordoned first, so that no move merely fills an empty node. The nodes to free are chosen
// one at a time, the easiest first (fewest pods to move, then the lowest requests): a node whose
// pods cannot fit elsewhere by requests alone is passed over at once (room.h); otherwise it is
// taken when every pod it holds that may move (movable.h) is placed elsewhere by the scheduler
// with the nodes taken so far cordoned, and none of its pods may not move. The plan then
// cordons all the chosen nodes at once and places all their pods in one run of the scheduler,
// in the order the moves are listed (priority first, then the largest requests): what a live
// scheduler does with their replacements when the moves are carried out in that order. A node
// whose pods do not all fit in that run is given up and the run repeated without it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <ksched/registry.h>
#include <ksched/sim.h>

#include "advise/movable.h"

namespace ksched::advise {

struct Goal {
  // Nodes to free; -1: as many as possible (--scale-down).
  int freeNodes = -1;
  EvictionPolicy policy;
};

struct Move {
  std::string namespace_;
  std::string name;
  std::string from;
  std::string to;
  std::vector<std::string> tiedWith;  // nodes that scored as high as `to` (the first 16)
  std::string why;                    // "free node n3"
};

// A pod that keeps its node from being freed.
struct Kept {
  std::string pod;  // "namespace/name"
  std::string node;
  std::string reason;
};

// A node the plan could not free, and why.
struct NotFreed {
  std::string node;
  std::string reason;
};

// The cluster's figures, over the nodes that hold pods other than DaemonSet and static pods.
struct Figures {
  size_t nodes = 0;      // all nodes
  size_t nodesUsed = 0;  // nodes holding a pod other than DaemonSet and static pods
  // Requested / allocatable in percent, over all nodes and over the nodes used.
  std::map<std::string, double> requested;      // "cpu", "memory"
  std::map<std::string, double> requestedUsed;  // "cpu", "memory"
  // Requested / allocatable of each schedulable node in percent, per resource ("cpu",
  // "memory"): the mean weighted by allocatable (what a node has when all are even), the
  // lowest, the highest and the standard deviation. What --balance evens out.
  struct Spread {
    double mean = 0, min = 0, max = 0, stddev = 0;
  };
  std::map<std::string, Spread> perNode;
};

// --spread: one topology spread constraint of a group of pods, its skew before and after.
struct Skew {
  std::string group;  // "namespace/Kind/name" of the pods' controller
  std::string topologyKey;
  int32_t maxSkew = 1;
  std::string whenUnsatisfiable;
  int before = 0;
  int after = 0;
  std::string note;  // why it is still above maxSkew, when it is
  // The scheduler's default constraint (PodTopologySpread's defaultingType) for pods without
  // their own, over their default selector.
  bool defaulted = false;
};

struct Plan {
  std::string goal;                 // "--free-nodes 3", "--scale-down"
  std::vector<std::string> cordon;  // the nodes freed, cordoned before any move
  std::vector<Move> moves;          // in the order to carry them out
  std::vector<NotFreed> notFreed;   // nodes tried and given up
  std::vector<Kept> kept;           // pods that keep their node (the first per node)
  // Nodes with nothing to move (not counted among the freed): cordoned too, before any move, so
  // that no move lands on one (the scheduler's default scoring prefers the emptiest nodes).
  std::vector<std::string> alreadyFree;
  Figures before, after;
  // A lower bound on the nodes the cluster's pods need: their total requests over the largest
  // node's allocatable, per resource (the largest of cpu and memory).
  size_t lowerBoundNodes = 0;
  size_t pendingLeftOut = 0;  // pending pods of the cluster, not part of the plan
  // --defragment: the pod (or PodGroup) room is made for ("namespace/name"), where the
  // scheduler places it after the moves ("" when no plan was found, with the reason; a group's
  // nodes joined by ", "), and the nodes cordoned while the moves run so that no moved pod lands
  // where the room is made (uncordoned after the last move).
  std::string forPod;
  std::string forPodNode;
  std::string forPodReason;
  std::vector<std::string> uncordonAfter;
  // A PodGroup's pods and the node the scheduler places each on after the moves.
  std::vector<std::pair<std::string, std::string>> forPodMembers;
  std::vector<Skew> skews;  // --spread: every constraint looked at
  // --balance: the band, and the nodes above it before and after the moves.
  // What it measures: "requests", or "load" (metrics.k8s.io NodeMetrics and PodMetrics, where
  // the configuration enables load-aware scoring), and then the nodes' used shares before and
  // after ("cpu", "memory"; Figures::perNode has the requested ones).
  struct Balance {
    double deviation = 0;
    size_t overBefore = 0, overAfter = 0;
    std::string measure = "requests";
    std::map<std::string, Figures::Spread> usedBefore, usedAfter;
  };
  std::optional<Balance> balance;
  size_t schedulerRuns = 0;
  double seconds = 0;
};

// Plans `goal` over `cluster` (checked: sim::checkCluster). `options` configure the scheduler
// (configuration, gates, seed); preemption is always off: a plan never preempts.
[[nodiscard]] Plan planFreeNodes(const sim::Cluster& cluster, sim::Options options,
                                 const Goal& goal, const Registry& outOfTree = {});

// Where every goal starts: `cluster` without its pending pods (counted in plan.pendingLeftOut),
// its figures in plan.before, and `options` without preemption (a plan never preempts).
[[nodiscard]] sim::Cluster boundPodsOnly(const sim::Cluster& cluster, sim::Options& options,
                                         Plan& plan);
// The schedulerNames of `sim`'s profiles: the pods a plan may move.
[[nodiscard]] std::set<std::string> profilesOf(const sim::Simulator& sim);
// The first pod of `r` put back by an eviction (origin "drained") that found no node, or nullptr.
[[nodiscard]] const sim::PodResult* firstUnplaced(const sim::Result& r);

// The spread of per-node shares `shares` (percent) around `mean`: lowest, highest, standard
// deviation.
[[nodiscard]] Figures::Spread spreadOf(const std::vector<double>& shares, double mean);

// The figures of `cluster`, pods' requests as `gates` count them.
[[nodiscard]] Figures figuresOf(const sim::Cluster& cluster, const features::Gates& gates = {});

}  // namespace ksched::advise
