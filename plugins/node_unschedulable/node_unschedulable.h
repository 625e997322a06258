// NodeUnschedulable (Filter): rejects nodes with spec.unschedulable unless the pod tolerates the
// node.kubernetes.io/unschedulable:NoSchedule taint.
#pragma once

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include <ksched/handle.h>
#include <ksched/plugin.h>
#include <ksched/plugin_names.h>
#include <ksched/registry.h>

namespace ksched::plugins {

class NodeUnschedulable final : public FilterPlugin,
                                public FilterExplainer,
                                public EnqueueExtensions,
                                public SignPlugin {
 public:
  // Opportunistic batching: its answers on a node depend on the pod and that node only.
  [[nodiscard]] bool signPod(const api::Pod& /*pod*/) const override { return true; }
  static constexpr std::string_view kName = names::kNodeUnschedulable;
  static constexpr std::string_view kErrReasonUnknownCondition = "node(s) had unknown conditions";
  static constexpr std::string_view kErrReasonUnschedulable = "node(s) were unschedulable";
  // The taint the node lifecycle controller puts on cordoned nodes.
  static constexpr std::string_view kTaintNodeUnschedulable = "node.kubernetes.io/unschedulable";

  [[nodiscard]] std::string_view name() const override { return kName; }
  // Stateless: thread-safe.
  [[nodiscard]] Status filter(const CycleState& state, const api::Pod& pod,
                              const NodeInfo& nodeInfo) const override;
  // "node is cordoned (spec.unschedulable)".
  [[nodiscard]] std::vector<std::string> explainRejection(const CycleState& state,
                                                          const api::Pod& pod,
                                                          const NodeInfo& nodeInfo) const override;
  // Node added or its taints changed, which includes spec.unschedulable turning false
  // (isSchedulableAfterNodeChange); a pod's tolerations changed
  // (isSchedulableAfterPodTolerationChange).
  [[nodiscard]] std::vector<ClusterEventWithHint> eventsToRegister() const override;

 private:
  // Queueing hints. kQueue if the node was added schedulable or turned schedulable.
  [[nodiscard]] static QueueingHint isSchedulableAfterNodeChange(const api::Pod& pod,
                                                                 const EventObject& oldObj,
                                                                 const EventObject& newObj);
  // kQueue if the changed pod is `pod` itself and now tolerates the unschedulable taint.
  [[nodiscard]] static QueueingHint isSchedulableAfterPodTolerationChange(
      const api::Pod& pod, const EventObject& oldObj, const EventObject& newObj);
};

// Takes no args (ignored).
PluginFactory nodeUnschedulableFactory();

}  // namespace ksched::plugins
