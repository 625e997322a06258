// The plugin API: one interface per extension point of the scheduling framework, mirroring
// upstream kube-scheduler. A plugin class implements `Plugin` plus the interfaces of the
// extension points it serves; the framework finds them with dynamic_cast once at start-up.
//
// Contracts:
//   - Plugins are built once from validated, typed args (see registry.h) and are immutable
//     afterwards; per-pod data lives in CycleState.
//   - filter(), score() and the PreFilter AddPod/RemovePod extensions run concurrently for
//     different nodes: they must be thread-safe and must not touch the apiserver.
//   - reserve()/unreserve() must be idempotent; unreserve() runs in reverse plugin order.
//   - permit() runs on the scheduling thread; a pod that waits holds no thread until its wait
//     is decided. PreBind, Bind and PostBind run on the binder pool, and only those may do
//     network I/O. PreEnqueue runs in the queue, on whichever thread adds or moves the pod.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <ksched/cluster_event.h>
#include <ksched/cycle_state.h>
#include <ksched/node_info.h>
#include <ksched/status.h>

namespace ksched {

inline constexpr int64_t kMaxNodeScore = 100;
inline constexpr int64_t kMinNodeScore = 0;

// A pod waiting in the scheduling queue.
struct QueuedPodInfo {
  PodInfoPtr podInfo;
  // When the pod was added to the queue or last failed an attempt: QueueSort tiebreak and the
  // base of its backoff.
  std::chrono::steady_clock::time_point timestamp{};
  // When the pod was first added; for the scheduling SLI.
  std::chrono::steady_clock::time_point initialAttemptTimestamp{};
  int attempts = 0;
  // Attempts that ended Unschedulable, and errors since the last one that did not: the backoff
  // counts the errors while there are some, else the unschedulable attempts.
  int unschedulableCount = 0;
  int consecutiveErrors = 0;
  // Plugins that rejected the pod in its last attempt: only their events move it back.
  std::set<std::string, std::less<>> unschedulablePlugins;
  // The PreEnqueue plugin that keeps the pod out of activeQ, if any.
  std::string gatingPlugin;
  // The PreEnqueue rejection reported in the pod's status (PodScheduled=False
  // NotReadyForScheduling), "" when none is: a rejection with the same message is not reported
  // again. Starts from the pod's own condition.
  std::string preEnqueueRejectionMessage;

  [[nodiscard]] const api::Pod& pod() const { return *podInfo->pod; }
};

class Plugin {
 public:
  virtual ~Plugin() = default;
  [[nodiscard]] virtual std::string_view name() const = 0;
  // Called once when the scheduler stops, after the scheduling loop ended and before the
  // binders drain, the queue closes and the Lease is released: stop and join the plugin's own
  // work (a pool, a timer), and end waits in PreBind/Permit early. Other extension points may
  // still run (a binder finishing) and must fail fast from then on.
  virtual void close() {}
  // Called once when this instance starts scheduling: informers have synced and, with leader
  // election, this instance leads. Start work that writes to the apiserver on its own (a status
  // writer) here, not in the factory: followers build plugins too.
  virtual void start() {}
  // With InPlacePodVerticalScalingSchedulerPreemption, a pod already on a node whose in-place
  // resize the kubelet deferred (api::isPodResizeDeferred) is scheduled again, to its own node
  // only, to make room by preemption (KEP 5836). Of the PreFilter and Filter plugins only those
  // that return true here run for such a pod (in-tree: NodeName, NodeResourcesFit and
  // DeferredPodScheduling); the framework skips every other one, as each of upstream's other
  // in-tree filters skips such a pod itself: the pod is already counted in the node it checks.
  [[nodiscard]] virtual bool filtersResizeDeferredPods() const noexcept { return false; }
};

class PreEnqueuePlugin : public virtual Plugin {
 public:
  // Success lets the pod into activeQ; anything else keeps it gated.
  virtual Status preEnqueue(const api::Pod& pod) = 0;
};

class QueueSortPlugin : public virtual Plugin {
 public:
  [[nodiscard]] virtual bool less(const QueuedPodInfo& a, const QueuedPodInfo& b) const = 0;
};

// Lets preemption and nominated-pod filtering update PreFilter state incrementally.
class PreFilterExtensions {
 public:
  virtual ~PreFilterExtensions() = default;
  virtual Status addPod(CycleState& state, const api::Pod& podToSchedule, const PodInfo& podToAdd,
                        const NodeInfo& nodeInfo) const = 0;
  virtual Status removePod(CycleState& state, const api::Pod& podToSchedule,
                           const PodInfo& podToRemove, const NodeInfo& nodeInfo) const = 0;
};

struct PreFilterResult {
  // When set, only these nodes can fit (e.g. NodeAffinity's matchFields metadata.name).
  std::optional<std::set<std::string, std::less<>>> nodeNames;
};

class PreFilterPlugin : public virtual Plugin {
 public:
  // May narrow `result.nodeNames`. Skip = nothing to do for this pod (its Filter is skipped).
  virtual Status preFilter(CycleState& state, const api::Pod& pod, const NodeInfoLister& nodes,
                           PreFilterResult& result) = 0;
  [[nodiscard]] virtual const PreFilterExtensions* preFilterExtensions() const { return nullptr; }
};

class FilterPlugin : public virtual Plugin {
 public:
  [[nodiscard]] virtual Status filter(const CycleState& state, const api::Pod& pod,
                                      const NodeInfo& nodeInfo) const = 0;
};

// Explain, the diagnosis annotation and `ksched simulate`: a Filter plugin may say what in the
// pod, the node or another pod made its Filter reject a node ("taint dedicated=gpu:NoSchedule not
// tolerated"), one sentence each, in a stable order; upstream's reasons name none of it. Called
// only after this plugin's Filter rejected `nodeInfo`, with the CycleState the cycle's PreFilter
// filled (a PreFilter that rejected the pod or skipped leaves its state out: fall back to the
// pod and the node), on the explaining or the scheduling thread; never on the scheduling path
// itself, so the Filter pays nothing for it. Return what the plugin can still find: empty when
// the cause is gone (the node changed, or a pod nominated to the node caused it). A Filter that
// knows the cause cheaply may attach it instead (Status::withDetails); details attached there win.
class FilterExplainer : public virtual Plugin {
 public:
  [[nodiscard]] virtual std::vector<std::string> explainRejection(
      const CycleState& state, const api::Pod& pod, const NodeInfo& nodeInfo) const = 0;
};

// node name -> the status that rejected it.
using NodeToStatus = std::unordered_map<std::string, Status>;

struct PostFilterResult {
  // nullopt: leave the pod's nomination alone; "": clear it; else nominate that node.
  std::optional<std::string> nominatedNodeName;
};

class PostFilterPlugin : public virtual Plugin {
 public:
  virtual std::pair<PostFilterResult, Status> postFilter(CycleState& state, const api::Pod& pod,
                                                         const NodeToStatus& filteredStatuses) = 0;

  // What postFilter would do, doing none of it (explain): the node it would nominate and the
  // pods ("namespace/name") it would evict.
  struct Proposal {
    std::string node;
    std::vector<std::string> victims;
  };
  // Success with `proposal` filled, the rejection postFilter would return, or Skip (the default:
  // the plugin cannot say without acting).
  virtual Status dryRunPostFilter(const CycleState& state, const api::Pod& pod,
                                  const NodeToStatus& filteredStatuses, Proposal& proposal) {
    (void)state;
    (void)pod;
    (void)filteredStatuses;
    (void)proposal;
    return Status::skip();
  }
};

class PreScorePlugin : public virtual Plugin {
 public:
  // `nodes` are the feasible nodes. Skip = its Score is skipped for this pod.
  virtual Status preScore(CycleState& state, const api::Pod& pod,
                          const std::vector<const NodeInfo*>& nodes) = 0;
};

struct NodeScore {
  std::string name;
  int64_t score = 0;
};

class ScorePlugin : public virtual Plugin {
 public:
  [[nodiscard]] virtual Status score(const CycleState& state, const api::Pod& pod,
                                     const NodeInfo& nodeInfo, int64_t& score) const = 0;
  // Whether normalizeScore must run after all nodes are scored.
  [[nodiscard]] virtual bool hasNormalizeScore() const { return false; }
  // Maps raw scores onto [kMinNodeScore, kMaxNodeScore].
  [[nodiscard]] virtual Status normalizeScore(const CycleState& /*state*/, const api::Pod& /*pod*/,
                                              std::vector<NodeScore>& /*scores*/) const {
    return {};
  }
  // Whether this cycle's normalizeScore reads the NodeScores' names (asked once per cycle, after
  // PreScore). False: the framework does not fill them in (they are empty or left from an
  // earlier cycle), which saves a copy of every scored node's name and, on large clusters, a
  // memory access per node. Override it to return false when normalizeScore reads only the
  // scores, or when `state` says this cycle's will not.
  [[nodiscard]] virtual bool normalizeScoreReadsNames(const CycleState& /*state*/) const {
    return hasNormalizeScore();
  }
};

class ReservePlugin : public virtual Plugin {
 public:
  virtual Status reserve(CycleState& state, const api::Pod& pod, const std::string& nodeName) = 0;
  virtual void unreserve(CycleState& state, const api::Pod& pod, const std::string& nodeName) = 0;
};

class PermitPlugin : public virtual Plugin {
 public:
  // Success, Unschedulable/Error (reject), or Wait with `timeout`.
  virtual Status permit(CycleState& state, const api::Pod& pod, const std::string& nodeName,
                        std::chrono::milliseconds& timeout) = 0;
};

class PreBindPlugin : public virtual Plugin {
 public:
  // Whether preBind has work for this pod on this node, asked at the start of the binding cycle
  // (upstream PreBindPreFlight; with the gate NominatedNodeNameForExpectation): Success = it has
  // (the scheduler then publishes the pod's expected node as status.nominatedNodeName before
  // PreBind runs), Skip = nothing to do, Error fails the binding cycle. Any other code counts as an
  // error. Must be cheap and do nothing itself. The default says Skip, so a plugin that does not
  // answer never makes the scheduler write the nomination; its preBind is still called (a plugin
  // that says Skip should have nothing to do there).
  virtual Status preBindPreFlight(const CycleState& state, const api::Pod& pod,
                                  const std::string& nodeName) {
    (void)state;
    (void)pod;
    (void)nodeName;
    return Status::skip();
  }
  // Success, a rejection or an error; or Status::wait() when the binding has to wait for the
  // cluster (a device being attached): the pod parks with its resources still assumed, the
  // binder thread moves on, and preBindResume() is called on a binder thread once one of
  // preBindWait()'s events happens, its deadline passes, or at once where nothing can happen
  // in between (`ksched simulate`). Plugins before this one are not run again.
  virtual Status preBind(CycleState& state, const api::Pod& pod, const std::string& nodeName) = 0;

  // What ends a wait preBind() asked for: cluster events (a hint, when given, is asked about the
  // parked pod and the changed object, as the queue asks it) and the deadline. Asked right
  // after preBind() or preBindResume() returned Wait.
  struct Wait {
    std::vector<ClusterEventWithHint> events;
    std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  };
  [[nodiscard]] virtual Wait preBindWait(const CycleState& state, const api::Pod& pod) const {
    (void)state;
    (void)pod;
    return {};
  }
  // Why a parked binding is resumed.
  enum class Resume {
    kEvent,     // one of the events happened
    kDeadline,  // the deadline passed: say Wait again and the binding fails as timed out
    kDecide,    // nothing can change any more (a simulated cluster): Wait fails the binding
  };
  // Success goes on with the binding cycle, Wait parks the pod again, anything else fails it
  // (Unreserve runs, the pod is retried). The default runs preBind() again.
  virtual Status preBindResume(CycleState& state, const api::Pod& pod, const std::string& nodeName,
                               Resume why) {
    (void)why;
    return preBind(state, pod, nodeName);
  }
};

class BindPlugin : public virtual Plugin {
 public:
  // Skip = this binder does not handle the pod; the next Bind plugin is tried.
  virtual Status bind(CycleState& state, const api::Pod& pod, const std::string& nodeName) = 0;
};

class PostBindPlugin : public virtual Plugin {
 public:
  virtual void postBind(CycleState& state, const api::Pod& pod, const std::string& nodeName) = 0;
};

// Opportunistic batching (KEP 5598, gate OpportunisticBatching): the scheduler reuses the
// filtering and scoring of a cycle for the next pod when both pods have the same scheduling
// inputs (api::sameSchedulingInputs) and every PreFilter, Filter, PreScore and Score plugin of
// the profile signs the pod. Signing promises that, for this pod, the plugin's answers on a
// node depend only on that pod's scheduling inputs, on the node's NodeInfo and on cluster
// objects that pods placed by the scheduler do not change; a node that received a pod is
// filtered and scored again. Say false when a pod's answers depend on pods elsewhere in a
// topology (spreading, inter-pod affinity) or on objects created per pod (claims). A plugin
// without this interface keeps the profile from batching.
class SignPlugin : public virtual Plugin {
 public:
  [[nodiscard]] virtual bool signPod(const api::Pod& pod) const = 0;
};

// Explain (`ksched explain`, /debug/explain): a Score plugin may say, per node, what its score
// was computed from ("cpu 72% (prometheus, 8s old)"); explain shows it beside the score. Called
// after the plugin's PreScore and Score for the pod, on the explaining thread.
class ScoreExplainer : public virtual Plugin {
 public:
  [[nodiscard]] virtual std::string explainScore(const CycleState& state, const api::Pod& pod,
                                                 const NodeInfo& nodeInfo) const = 0;
};

// Plugins that reject pods declare what can make those pods schedulable again. A rejecting
// plugin without this interface is treated as interested in every event.
class EnqueueExtensions : public virtual Plugin {
 public:
  [[nodiscard]] virtual std::vector<ClusterEventWithHint> eventsToRegister() const = 0;
};

}  // namespace ksched
