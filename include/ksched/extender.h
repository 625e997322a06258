// Extender: a scheduler extender as plugins see it (upstream framework.Extender). The scheduler
// builds one per entry of KubeSchedulerConfiguration's `extenders` (HTTP extenders) and hands
// them to plugins through Handle::extenders(); DefaultPreemption passes its candidates through
// the ones that support preemption.
//
// Extenders are immutable once built and may be called from several threads at once. Calls do
// network I/O: they are for PostFilter and the binding cycle, not for Filter or Score.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <ksched/api/pod.h>
#include <ksched/node_info.h>
#include <ksched/status.h>

namespace ksched {

// Node name -> why the extender rejected it (extender/v1 FailedNodesMap).
using FailedNodesMap = std::map<std::string, std::string, std::less<>>;

// One node's score from an extender's prioritize (extender/v1 HostPriority), 0..10.
struct HostPriority {
  std::string host;
  int64_t score = 0;
  friend bool operator==(const HostPriority&, const HostPriority&) = default;
};

// The pods preemption would evict on one node, and how many PodDisruptionBudgets that violates
// (extender/v1 Victims).
struct ExtenderVictims {
  std::vector<PodInfoPtr> pods;
  int64_t numPDBViolations = 0;
};

class Extender {
 public:
  virtual ~Extender() = default;

  // Upstream Name(): the extender's URL prefix.
  [[nodiscard]] virtual const std::string& name() const = 0;
  // An error of an ignorable extender is logged and the extender skipped.
  [[nodiscard]] virtual bool isIgnorable() const = 0;
  [[nodiscard]] virtual bool isBinder() const = 0;
  // What prioritize scores are multiplied by (with 10, the node score range over the
  // extender's) before they are added to the plugins' scores.
  [[nodiscard]] virtual int64_t weight() const = 0;
  [[nodiscard]] virtual bool supportsFilter() const = 0;
  [[nodiscard]] virtual bool supportsPrioritize() const = 0;
  [[nodiscard]] virtual bool supportsPreemption() const = 0;
  // Whether the extender wants to see this pod (managedResources).
  [[nodiscard]] virtual bool isInterested(const api::Pod& pod) const = 0;

  // Keeps in `nodes` those the extender accepts; fills the rejected ones' reasons.
  virtual Status filter(const api::Pod& pod, std::vector<const NodeInfo*>& nodes,
                        FailedNodesMap& failed, FailedNodesMap& failedAndUnresolvable) const = 0;
  // One score per node of `nodes`, in the extender's range 0..10.
  virtual Status prioritize(const api::Pod& pod, const std::vector<const NodeInfo*>& nodes,
                            std::vector<HostPriority>& scores) const = 0;
  virtual Status bind(const api::Pod& pod, const std::string& node) const = 0;
  // Replaces `victims` (node -> victims) with the extender's choice: nodes it drops are
  // removed; pods are resolved on the nodes of `snapshot`.
  virtual Status processPreemption(const api::Pod& pod,
                                   std::map<std::string, ExtenderVictims>& victims,
                                   const NodeInfoLister& snapshot) const = 0;
};

using ExtenderList = std::vector<std::shared_ptr<const Extender>>;

}  // namespace ksched
