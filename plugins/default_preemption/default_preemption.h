// DefaultPreemption (PostFilter): when no node fits a pod, find a node where evicting
// lower-priority pods makes it fit, evict them, and nominate the node for the pod (upstream
// framework/plugins/defaultpreemption and framework/preemption).
//
//   1. Eligibility: preemptionPolicy Never never preempts; a pod nominated to a node that still
//      has a terminating lower-priority pod waits (its victims are leaving), and so does a pod
//      whose earlier preemption has not settled (<ksched/preemption_settling.h>: DRA's claims
//      still being deallocated).
//   2. Candidates: nodes whose Filter failure was Unschedulable (not UnschedulableAndUnresolvable).
//   3. Dry run, in parallel from a random offset, until max(nodes x pct, abs) candidates are
//      found: on copies of the NodeInfo and the CycleState, remove every lower-priority pod; if
//      the pod then fits, re-add (reprieve) as many as possible, PDB-violating pods first, each
//      group by importance (priority desc, then earlier start).
//   3a. Extenders with a preemptVerb see the candidates and may drop nodes or change victims
//       (upstream callExtenders).
//   4. Choose one candidate: fewest PDB violations; lowest highest-victim priority; smallest
//      sum of victim priorities; fewest victims; latest start among the highest-priority
//      victims; first. The settling participants see the chosen node's dry run.
//   5. Prepare, off the scheduling thread: delete the victims in parallel (uid precondition)
//      with a Preempted event each, clear nominatedNodeName of lower-priority pods nominated
//      there. The scheduler nominates the node for the pod (status.nominatedNodeName).
//      While this runs, the preemptor is gated at PreEnqueue (current upstream's asynchronous
//      preemption: `waiting for the preemption for this pod to be finished`); when it is done
//      the preemptor is activated. Until the scheduler's snapshot no longer holds its victims,
//      the preemptor does not preempt again.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <ksched/api/policy.h>
#include <ksched/handle.h>
#include <ksched/plugin.h>
#include <ksched/plugin_names.h>
#include <ksched/pod_group_plugin.h>
#include <ksched/preemption_settling.h>
#include <ksched/registry.h>

namespace ksched::plugins {

struct DefaultPreemptionArgs {
  int32_t minCandidateNodesPercentage = 10;
  int32_t minCandidateNodesAbsolute = 100;
};

// Strict decoding with upstream's defaults and validation (PluginArgsError).
[[nodiscard]] DefaultPreemptionArgs decodeDefaultPreemptionArgs(const nlohmann::json& args);

namespace preemption {

// A node where evicting `victims` makes the pod fit.
struct Candidate {
  std::string node;
  std::vector<PodInfoPtr> victims;  // most important first
  int64_t numPDBViolations = 0;
  // The dry run's state on this node, the victims removed (PreemptionSettling::chosen).
  std::shared_ptr<const CycleState> state;
};

// True if a pod is "more important": higher priority, then earlier start (upstream
// MoreImportantPod; a pod without a start time counts as started now).
[[nodiscard]] bool moreImportantPod(const api::Pod& a, const api::Pod& b);

// Splits `pods` (order kept) into those whose eviction would violate a PDB and the rest; each
// PDB's disruptionsAllowed is spent as pods match it (upstream filterPodsWithPDBViolation).
void filterPodsWithPDBViolation(
    const std::vector<PodInfoPtr>& pods,
    const std::vector<std::shared_ptr<const api::PodDisruptionBudget>>& pdbs,
    std::vector<PodInfoPtr>& violating, std::vector<PodInfoPtr>& nonViolating);

// The index of the candidate to preempt on, by upstream's criteria (see the file comment).
// Precondition: !candidates.empty().
[[nodiscard]] size_t pickOneCandidate(const std::vector<Candidate>& candidates);

// How many candidates the dry run looks for among `numNodes` potential nodes.
[[nodiscard]] int32_t numCandidates(const DefaultPreemptionArgs& args, int32_t numNodes);

// Empty when eligible, else why not (upstream PodEligibleToPreemptOthers messages).
[[nodiscard]] std::string ineligibleReason(const api::Pod& pod, const NodeInfoLister& nodes,
                                           const Status* nominatedNodeStatus);

}  // namespace preemption

class DefaultPreemption final : public PostFilterPlugin,
                                public PreEnqueuePlugin,
                                public PodGroupPostFilterPlugin {
 public:
  static constexpr std::string_view kName = names::kDefaultPreemption;
  static constexpr std::string_view kWaitingForPreemption =
      "waiting for the preemption for this pod to be finished";

  DefaultPreemption(DefaultPreemptionArgs args, Handle& handle);
  ~DefaultPreemption() override;

  [[nodiscard]] std::string_view name() const override { return kName; }
  std::pair<PostFilterResult, Status> postFilter(CycleState& state, const api::Pod& pod,
                                                 const NodeToStatus& filteredStatuses) override;
  // findCandidate, reported: the node and victims postFilter would act on, or its rejection.
  Status dryRunPostFilter(const CycleState& state, const api::Pod& pod,
                          const NodeToStatus& filteredStatuses, Proposal& proposal) override;
  // UnschedulableAndUnresolvable while the pod's victims are being deleted.
  Status preEnqueue(const api::Pod& pod) override;
  // Workload-aware preemption (group_preemption.cc): evicts for a whole PodGroup or not at all.
  std::pair<PodGroupPostFilterResult, Status> podGroupPostFilter(
      CycleState& state, const PodGroupInfo& group, const NodeInfoLister& nodes,
      const PodGroupScheduleFn& schedule) override;

  // Steps 1-4 without API writes: the chosen candidate, or a status saying why there is none
  // (Unschedulable with upstream's message, or Error); `noCandidates` is set when the dry run
  // found no node at all (as opposed to an ineligible pod). Exposed for tests.
  Status findCandidate(const CycleState& state, const api::Pod& pod,
                       const NodeToStatus& filteredStatuses, preemption::Candidate& chosen,
                       bool* noCandidates = nullptr);

  [[nodiscard]] uint64_t attempts() const { return attempts_.load(); }
  [[nodiscard]] uint64_t victimsTotal() const { return victims_.load(); }
  // Observer for scheduler_preemption_victims (number of victims per preemption).
  void setVictimsObserver(std::function<void(size_t)> fn) { onVictims_ = std::move(fn); }

  // Test hook: fixes the dry run's random offset.
  void setOffsetForTest(int32_t offset) { fixedOffset_ = offset; }

 private:
  // Step 3 on one node: fills victims and returns success, or the reason the node is no
  // candidate.
  Status selectVictimsOnNode(
      CycleState& state, const api::Pod& pod, NodeInfo& nodeInfo,
      const std::vector<std::shared_ptr<const api::PodDisruptionBudget>>& pdbs,
      std::vector<PodInfoPtr>& victims, int64_t& numViolating) const;
  void prepareCandidate(const api::Pod& pod, const preemption::Candidate& c);
  // Evicts one victim: DisruptionTarget condition, DELETE with a uid precondition, event.
  void evict(ClusterApi& api, const api::Pod& victim, const api::Pod& preemptor,
             const std::string& node);
  // The preemptor's earlier victims still in the snapshot: it must not preempt again yet.
  bool victimsStillPresent(const api::Pod& pod, const NodeInfoLister& snapshot);
  // Passes the candidates through every interested extender with a preemptVerb (upstream
  // callExtenders): nodes an extender drops are dropped, victims are the extender's.
  Status callExtenders(const api::Pod& pod, std::vector<preemption::Candidate>& candidates) const;
  std::vector<std::shared_ptr<const api::PodDisruptionBudget>> allPdbs(
      const std::vector<const NodeInfo*>& nodes) const;

  const DefaultPreemptionArgs args_;
  Handle& handle_;
  std::mutex rngMu_;
  std::mt19937 rng_;
  int32_t fixedOffset_ = -1;
  std::atomic<uint64_t> attempts_{0}, victims_{0};
  std::function<void(size_t)> onVictims_;
  // Guards inFlight_ and evicted_.
  mutable std::mutex inFlightMu_;
  // Preemptors whose victims are being deleted (uids): they wait at PreEnqueue.
  std::set<std::string, std::less<>> inFlight_;
  // Preemptor uid -> its last preemption, until the snapshot no longer holds any of the
  // victims (or, for preemptors that never come back, kEvictedTtl after it).
  struct Evicted {
    std::string node;
    std::vector<std::string> victimUids;
    std::chrono::steady_clock::time_point at;
  };
  static constexpr std::chrono::minutes kEvictedTtl{2};
  std::map<std::string, Evicted, std::less<>> evicted_;
  // Pod groups ("<namespace>/<name>") whose victims are leaving: their nominations, and the
  // victims' uids (scheduling thread only).
  struct GroupEvicted {
    std::map<std::string, std::string> nominations;
    std::vector<std::string> victimUids;
  };
  std::map<std::string, GroupEvicted, std::less<>> groupEvicted_;
  // The PodGroups, for the disruptionMode of victims in groups (GenericWorkload only).
  std::shared_ptr<const ObjectStore> podGroups_;
  // Plugins whose freed resources are reclaimed after the victims are gone (one per process).
  std::shared_ptr<PreemptionSettling> settling_;
  // Each preemption issues 2 requests per victim; a backlog here delays every preemptor.
};

PluginFactory defaultPreemptionFactory();

}  // namespace ksched::plugins
