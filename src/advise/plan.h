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
  // --defragment: the pod room is made for ("namespace/name"), where the scheduler places it
  // after the moves ("" when no plan was found, with the reason), and the node cordoned while
  // its pods move (uncordoned after the last move).
  std::string forPod;
  std::string forPodNode;
  std::string forPodReason;
  std::string uncordonAfter;
  std::vector<Skew> skews;  // --spread: every constraint looked at
  size_t schedulerRuns = 0;
  double seconds = 0;
};

// Plans `goal` over `cluster` (checked: sim::checkCluster). `options` configure the scheduler
// (configuration, gates, seed); preemption is always off: a plan never preempts.
[[nodiscard]] Plan planFreeNodes(const sim::Cluster& cluster, sim::Options options,
                                 const Goal& goal, const Registry& outOfTree = {});

// The figures of `cluster`.
[[nodiscard]] Figures figuresOf(const sim::Cluster& cluster);

}  // namespace ksched::advise
