// Which pods a plan may move, by the conventions eviction tools share: the descheduler's
// DefaultEvictor (mirror, static and DaemonSet pods, system-critical priority, node-local
// storage, pods no controller recreates, its evict annotation) and cluster-autoscaler's
// safe-to-evict annotation; a PodDisruptionBudget that allows no disruption now keeps its pods
// too. docs/advise.md lists them side by side with the descheduler's.
#pragma once

#include <string>
#include <vector>

#include <ksched/api/pod.h>
#include <ksched/api/policy.h>

namespace ksched::advise {

inline constexpr const char* kEvictAnnotation = "descheduler.alpha.kubernetes.io/evict";
inline constexpr const char* kPreferNoEvictionAnnotation =
    "descheduler.alpha.kubernetes.io/prefer-no-eviction";
inline constexpr const char* kSafeToEvictAnnotation =
    "cluster-autoscaler.kubernetes.io/safe-to-evict";
inline constexpr const char* kScaleDownDisabledAnnotation =
    "cluster-autoscaler.kubernetes.io/scale-down-disabled";
// Priorities from here up are the system's (system-cluster-critical is 2000000000).
inline constexpr int32_t kSystemCriticalPriority = 2000000000;

// What the descheduler's DefaultEvictor lets a user relax, with its defaults.
struct EvictionPolicy {
  bool evictLocalStoragePods = false;    // pods with emptyDir or hostPath volumes
  bool evictSystemCriticalPods = false;  // priority >= 2000000000
};

enum class Disposition {
  kMoves,   // may be evicted and placed elsewhere
  kStays,   // goes with its node and does not keep it: DaemonSet, mirror/static, terminating
  kBlocks,  // may not be evicted: its node cannot be emptied
};

struct Verdict {
  Disposition disposition = Disposition::kMoves;
  std::string reason;  // kStays/kBlocks: why, e.g. "DaemonSet pod", "no controller recreates it"
};

// The PodDisruptionBudgets that cover pods, by namespace.
class Budgets {
 public:
  explicit Budgets(const std::vector<api::PodDisruptionBudget>& pdbs);
  // The budgets selecting `pod`, held by this object (policy/v1: a nil selector selects nothing, an
  // empty one every pod of the namespace).
  [[nodiscard]] std::vector<const api::PodDisruptionBudget*> covering(const api::Pod& pod) const;

 private:
  struct Entry {
    api::PodDisruptionBudget pdb;
    api::Selector selector;
  };
  std::vector<Entry> entries_;
};

// What a plan may do with `pod` (bound to a node). The order of the checks: what goes with the
// node (mirror/static, DaemonSet, terminating), then safe-to-evict=false, then the evict and
// safe-to-evict=true annotations (which waive the next three), system-critical priority,
// no controller, node-local storage; last the budgets, which no annotation waives.
[[nodiscard]] Verdict judge(const api::Pod& pod, const EvictionPolicy& policy,
                            const Budgets& budgets);

}  // namespace ksched::advise
