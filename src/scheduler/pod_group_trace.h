// What one pod-group cycle did (GenericWorkload), as the cycle itself saw it: the placements it
// tried (topology), the one it chose, where each member went or would have gone, and the
// group's verdict. Filled only when Options::onPodGroupCycle is set (simulate and explain run a
// copy of the cluster with it); the cycle is the same with or without it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ksched::scheduler {

struct PodGroupTrace {
  std::string ns;
  std::string name;
  bool gang = false;        // schedulingPolicy.gang; else basic
  int32_t minCount = 1;     // gang.minCount (1 for basic)
  std::string topologyKey;  // schedulingConstraints.topology[0].key, "" for none

  struct Member {
    std::string pod;      // "namespace/name"
    std::string node;     // where it was placed; with `placed` false, where it would have gone
                          // had the group not been taken back ("" when it found no node)
    bool placed = false;  // placed for good (on its way to binding)
    bool tried = false;   // the cycle ran PreFilter, Filter and Score for it (it may stop first)
    std::string reason;   // not placed: its message (its own fit error, or the group's)
  };
  std::vector<Member> members;  // the pods this cycle placed, in the cycle's order

  struct PlacementTried {
    std::string name;
    size_t nodes = 0;
    bool feasible = false;
    std::string message;                                        // why not, when not feasible
    std::vector<std::pair<std::string, std::string>> proposed;  // "namespace/name" -> node
    std::optional<int64_t> score;  // PlacementScore's total, when several were feasible
  };
  std::vector<PlacementTried> placements;  // topology: in the order tried
  std::string chosen;                      // the placement the group went to ("" for none)

  bool scheduled = false;  // the group's verdict: Success
  std::string message;     // not scheduled: the group's message
};

}  // namespace ksched::scheduler
