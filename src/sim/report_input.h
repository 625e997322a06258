// The part of a SimulationResult document (`ksched simulate -o json`) that the report draws,
// read into plain values. The document may be hand-edited: reading never throws; a value of the
// wrong type is treated as absent, and an array item that is not usable (not an object, no
// name) is skipped. Whatever could not be read is left at its "absent" value below, so the
// page can say "not in the result" instead of guessing.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ksched::sim::report {

// Before and after the run, as a fraction of allocatable (0.5 = 50 %); may exceed 1.
struct BeforeAfter {
  double before = 0;
  double after = 0;
};

// The numbers of the header, and of one column of the comparison.
struct Headline {
  std::string profile;
  std::optional<std::int64_t> seed;
  std::optional<std::int64_t> scheduled;  // from stats; else counted over pods
  std::optional<std::int64_t> unschedulable;
  std::optional<std::int64_t> preempted;  // from stats; else the victims listed
  std::optional<std::int64_t> attempts;
  std::optional<double> seconds;
  std::optional<double> podsPerSecond;
  std::optional<std::int64_t> nodesUsedBefore;
  std::optional<std::int64_t> nodesUsedAfter;
  std::optional<std::int64_t> pods;  // the pods array's length
  // By resource, in the document's `resources` order, then any other resource `utilization`
  // names. When `utilization` lacks a resource, it is summed over `nodes`.
  std::vector<std::pair<std::string, BeforeAfter>> utilization;
};

struct DiagnosisReason {
  std::string plugin;
  std::string reason;
  std::int64_t count = 0;
};

struct UnschedulablePod {
  std::string namespace_;
  std::string name;
  std::string reason;
  std::string origin;
  std::optional<std::int64_t> attempts;
  std::vector<DiagnosisReason> diagnosis;
  std::vector<std::pair<std::string, std::string>> closest;  // node, shortfall
};

struct ReasonCount {
  std::string plugin;
  std::string reason;
  std::int64_t pods = 0;
};

struct NodeRow {
  std::string name;
  std::string zone;
  std::optional<std::int64_t> placed;
  // Per resource, only where allocatable is > 0 and both requested values are numbers.
  std::map<std::string, BeforeAfter, std::less<>> utilization;
};

struct ZoneRow {
  std::string zone;  // "" for nodes without the zone label
  std::int64_t podsBefore = 0;
  std::int64_t podsAfter = 0;
  std::optional<std::int64_t> placed;
};

struct Victim {
  std::string namespace_;
  std::string name;
  std::string node;
  std::string preemptor;
};

struct SkippedObject {
  std::string source;
  std::string object;
  std::string field;
  std::string message;
};

struct MovedPod {
  std::string namespace_;
  std::string name;
  std::string node;       // "" when unschedulable in this run
  std::string otherNode;  // "" when unschedulable in the other
};

struct Comparison {
  std::string config;
  Headline other;
  std::vector<MovedPod> moved;
};

struct ReportInput {
  Headline headline;
  std::vector<UnschedulablePod> unschedulable;
  std::vector<ReasonCount> reasons;
  std::vector<NodeRow> nodes;
  std::vector<ZoneRow> zones;
  std::vector<Victim> victims;
  std::vector<SkippedObject> skipped;
  std::optional<Comparison> comparison;
};

[[nodiscard]] ReportInput readReportInput(const nlohmann::json& result);

}  // namespace ksched::sim::report
