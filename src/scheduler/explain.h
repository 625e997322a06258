// Explain: why a pod is pending, or where it would land and why, computed by the framework's
// own extension points over a snapshot, the way a scheduling cycle computes it, but without
// shortcuts and without side effects:
//   - PreFilter, then Filter on every node (no percentageOfNodesToScore cut-off; pods nominated
//     to a node count as in a cycle), every rejecting Filter plugin kept, not only the first;
//   - PreScore, Score and NormalizeScore on every feasible node, each plugin's raw, normalized
//     and weighted score kept;
//   - the nodes a cycle would pick from (the top total; a cycle picks one of them at random),
//     and how many feasible nodes a real cycle stops at;
//   - upstream's FailedScheduling text for the same rejections.
//   - when no node fits, what PostFilter (preemption) would do: the node and the victims, from
//     the plugins' dry run (PostFilterPlugin::dryRunPostFilter).
// Nothing is assumed, reserved, nominated, evicted, bound or written: Reserve and later points
// do not run, and extenders are not called.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <ksched/api/pod.h>
#include <ksched/plugin.h>

#include "framework/fit_error.h"
#include "framework/framework.h"
#include "scheduler/explain_group.h"

namespace ksched::scheduler {

struct Explanation {
  struct Rejection {
    std::string plugin;
    std::string code;  // Unschedulable, UnschedulableAndUnresolvable
    std::vector<std::string> reasons;
    // For "Insufficient <resource>" reasons: what the pod asks and what the node has left.
    struct Shortfall {
      std::string resource;
      int64_t requested = 0;    // by the pod (milli-units for cpu)
      int64_t allocatable = 0;  // on the node
      int64_t inUse = 0;        // by the pods already there
    };
    std::vector<Shortfall> shortfalls;
    // What in the pod, the node or another pod caused it, one sentence each, as the plugin says
    // it (Framework::explainRejection: its Status details or its FilterExplainer):
    // "taint dedicated=gpu:NoSchedule not tolerated". Empty when there are shortfalls.
    std::vector<std::string> details;
  };
  struct FilteredNode {
    std::string node;
    std::vector<Rejection> rejections;  // in Filter order; the first is what a cycle reports
  };
  struct PluginScore {
    std::string plugin;
    int64_t raw = 0;
    int64_t normalized = 0;
    int64_t weight = 0;
    std::string detail;  // ScoreExplainer's account of the score ("" when the plugin has none)
  };
  struct ScoredNode {
    std::string node;
    int64_t total = 0;
    std::vector<PluginScore> scores;
  };

  std::string pod;      // namespace/name
  std::string profile;  // schedulerName
  std::string boundTo;  // where the pod is bound (or assumed, its binding on the way)
  int numNodes = 0;
  // Feasible nodes a cycle looks for before it stops (percentageOfNodesToScore).
  int cycleStopsAfterFeasible = 0;
  // PreFilter: the plugin and message that rejected every node, or the nodes it kept.
  std::string preFilterRejection;
  std::optional<std::vector<std::string>> preFilterNodes;
  std::vector<FilteredNode> filtered;  // by node name
  std::vector<ScoredNode> feasible;    // best total first, then by name
  std::vector<std::string> selected;   // the nodes with the top total (none with onlyNode)
  // When no node fits: what the PostFilter plugins (preemption) would do, done by none of them.
  struct Preemption {
    std::string plugin;
    std::string node;                  // the node it would nominate ("" when it would not)
    std::vector<std::string> victims;  // the pods it would evict, "namespace/name"
    std::string message;               // why it would not help
  };
  std::optional<Preemption> preemption;
  std::string fitError;  // upstream's "0/N nodes are available: ..." when none fit
  // A pod of a PodGroup (GenericWorkload on): the group (explain_group.h).
  std::optional<GroupExplanation> group;
};

class ExplainError : public std::runtime_error {
 public:
  ExplainError(int httpCode, const std::string& what)
      : std::runtime_error(what), httpCode_(httpCode) {}
  [[nodiscard]] int httpCode() const { return httpCode_; }

 private:
  int httpCode_;
};

// Evaluates `pod` with `fwk` (whose snapshot must be `snapshot`) as described above. `onlyNode`
// restricts the evaluation to one node (ExplainError 404 if it is not in the snapshot).
// `percentage` is the configuration's percentageOfNodesToScore. Throws ExplainError(500) when a
// plugin fails with an error.
[[nodiscard]] Explanation explainPod(framework::Framework& fwk, const api::Pod& pod,
                                     const NodeInfoLister& snapshot, int32_t percentage,
                                     const std::string& onlyNode = "");

// `base` as if `pod` were not on `node` (explaining a pod that is bound already: where it would
// land now, without its own requests counted against its node). Lives no longer than `base`.
class SnapshotWithoutPod final : public NodeInfoLister {
 public:
  SnapshotWithoutPod(const NodeInfoLister& base, const std::string& node, const std::string& uid);
  [[nodiscard]] const std::vector<const NodeInfo*>& list() const override { return list_; }
  [[nodiscard]] const std::vector<const NodeInfo*>& havePodsWithAffinityList() const override {
    return affinity_;
  }
  [[nodiscard]] const std::vector<const NodeInfo*>& havePodsWithRequiredAntiAffinityList()
      const override {
    return antiAffinity_;
  }
  [[nodiscard]] const NodeInfo* get(std::string_view nodeName) const override;
  [[nodiscard]] bool isPVCUsedByPods(std::string_view key) const override {
    return base_.isPVCUsedByPods(key);
  }

 private:
  const NodeInfoLister& base_;
  std::shared_ptr<NodeInfo> replaced_;
  const NodeInfo* original_ = nullptr;
  std::vector<const NodeInfo*> list_, affinity_, antiAffinity_;
};

[[nodiscard]] nlohmann::ordered_json toJson(const Explanation& e);

// For a person: the FailedScheduling line, the reasons with counts and example nodes, the
// closest nodes (one rejection) with what is missing, the best feasible nodes with a column per
// Score plugin.
[[nodiscard]] std::string toTable(const Explanation& e, size_t maxRows = 10);

// The annotation a failed attempt leaves on the pod with --diagnosis-annotation.
inline constexpr std::string_view kDiagnosisAnnotation = "ksched.io/diagnosis";

// A compact diagnosis of a failed attempt, from what the cycle found (the first rejection per
// node), with the cycle's framework (its snapshot must be `snapshot`) and CycleState:
//   {"nodes":N,"preFilter":"...",
//    "reasons":[{"plugin","reason","count","examples":[<= 5 nodes],
//                "details":{"<example node>":"<detail>; <detail>"}}],
//    "closest":[{"node","shortfall"}...]}
// "details" holds, for the example nodes that have any, what the rejecting plugin says of them
// (Framework::explainRejection; the details joined, at most 320 bytes); the closest nodes are
// those rejected for "Insufficient <resource>", least missing first (at most 5). At most
// `maxBytes`: the closest nodes, then all examples but one, then the details, then the examples
// are dropped to fit.
[[nodiscard]] std::string diagnosisAnnotation(
    const framework::Framework& fwk, const CycleState& state, const framework::Diagnosis& diagnosis,
    int numAllNodes, const api::Pod& pod, const NodeInfoLister& snapshot, size_t maxBytes = 4096);

// "2" for 2000 milli-cpu, "1.5" for 1500; bytes as Ki/Mi/Gi when exact, else plain.
[[nodiscard]] std::string formatQuantity(const std::string& resource, int64_t value);

}  // namespace ksched::scheduler
