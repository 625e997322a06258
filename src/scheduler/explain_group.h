// Explain for a pod of a PodGroup (GenericWorkload): the group besides the pod. What the
// scheduler knows of it (the PodGroup's policy, each member's state), and what its pod-group
// cycle would do now: the real cycle (pod_group_cycle.cc), run by `ksched explain` on a copy
// of the cluster in memory (the simulator's) with nothing bound, as it traced itself
// (pod_group_trace.h): the members it would place and where, how far the group is from
// minCount, each member's reason, and with topology constraints the placements it tried.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/pod_group_trace.h"

namespace ksched::scheduler {

struct GroupExplanation {
  std::string podGroup;     // "namespace/name"
  bool found = false;       // the scheduler's watch holds the PodGroup
  bool gang = false;        // schedulingPolicy.gang; else basic
  int32_t minCount = 1;     // gang.minCount (1 for basic)
  std::string topologyKey;  // schedulingConstraints.topology[0].key

  struct Member {
    std::string pod;     // "namespace/name"
    std::string state;   // "bound", "assumed" (its binding on the way), "queued", "gated"
    std::string node;    // bound or assumed: its node
    std::string detail;  // gated: what holds it (scheduling gates, a PreEnqueue plugin)
  };
  std::vector<Member> members;  // by name

  // The cycle it would have now (ksched explain; nullopt from /debug/explain).
  std::optional<PodGroupTrace> cycle;
  // Why no cycle would run now (its pods held at PreEnqueue, none pending), when asked.
  std::string noCycle;
};

// Members bound or assumed.
[[nodiscard]] int32_t placedMembers(const GroupExplanation& g);

[[nodiscard]] nlohmann::ordered_json toJson(const GroupExplanation& g);
// The group section of explain's table.
[[nodiscard]] std::string toTable(const GroupExplanation& g);

}  // namespace ksched::scheduler
