// What `ksched simulate` prints: the result document (-o json, the input of --report) and the
// table for a person, from the cluster before, the cluster after and the Simulator's Result.
//
// The document (docs/simulate.md shows a real one):
//   {"kind": "SimulationResult", "profile", "seed",
//    "pods": [{"namespace", "name", "node" (null: not placed), "tiedWith" (at most 16),
//              "ties" (how many other nodes had the same top score), "reason",
//              "attempts", "origin", "podGroup" (only for a pod of a PodGroup), "diagnosis"
//              (null, or explain's diagnosis object)}],
//    "victims": [{"namespace", "name", "node", "preemptor"}],
//    "stats": {"scheduled", "unschedulable", "preempted", "attempts", "seconds",
//              "podsPerSecond"},
//    "podGroups": [{"podGroup", "pods", "placed", "policy" ("gang" | "basic"), "minCount"
//                   (gang), "nodes" (where its pods went), "topologyKey", "placement" (the
//                   domain chosen; both with topology constraints), "reason" (pods left out:
//                   the group's message)}],   // only when some pod is in a PodGroup; "policy"
//                   // and what follows only for a group that had a pod-group cycle
//    "unschedulableByReason": [{"plugin", "reason", "pods"}],
//    "resources": ["cpu", "memory", "pods"],
//    "nodes": [{"name", "zone", "placed", "allocatable", "requestedBefore",
//               "requestedAfter"}],              // cpu in millicores, memory in bytes
//    "utilization": {"<resource>": {"before", "after"}},  // requested / allocatable, 0..1
//    "zones": [{"zone", "podsBefore", "podsAfter", "placed"}],
//    "nodesUsed": {"before", "after"},
//    "skipped": [{"source", "object", "field", "message"}],
//    "comparison": {"config", "result": <the same document>, "moved": [{"namespace",
//                   "name", "node", "otherNode"}]}}   // with --compare-config only
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include <ksched/sim.h>

namespace ksched::sim {

struct SummaryInput {
  const Cluster* before = nullptr;
  const Cluster* after = nullptr;
  const Result* result = nullptr;
  std::string profile;
  uint64_t seed = 0;
  // The gates the simulation ran with: how the pods' requests count.
  features::Gates features;
};

[[nodiscard]] nlohmann::ordered_json resultDocument(const SummaryInput& in);

// Adds "comparison" to `doc`: the other run's document and the pods placed differently.
void addComparison(nlohmann::ordered_json& doc, const std::string& configName,
                   nlohmann::ordered_json other);

// The document for a person: the headline, unschedulable pods by reason, utilization before
// and after, nodes used, pods per zone, the first unschedulable pods with their reason, the
// victims, what was skipped, and the comparison's difference.
// A diagnosis (explain's annotation form) for a person: a line per reason with its nodes and
// details, then the closest nodes with what they lack; each line starts with `indent`.
[[nodiscard]] std::string diagnosisText(const nlohmann::ordered_json& diagnosis,
                                        const std::string& indent);

[[nodiscard]] std::string resultTable(const nlohmann::ordered_json& doc, size_t maxPods = 20);

}  // namespace ksched::sim
