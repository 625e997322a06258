// NodeUnschedulable (Filter): rejects nodes with spec.unschedulable unless the pod tolerates the
// node.kubernetes.io/unschedulable:NoSchedule taint.
#pragma once

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string_view>
#include <vector>

#include <ksched/handle.h>
#include <ksched/plugin.h>

namespace ksched::plugins {

class NodeUnschedulable final : public FilterPlugin, public EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "NodeUnschedulable";
  static constexpr std::string_view kErrReasonUnknownCondition = "node(s) had unknown conditions";
  static constexpr std::string_view kErrReasonUnschedulable = "node(s) were unschedulable";
  // The taint the node lifecycle controller puts on cordoned nodes.
  static constexpr std::string_view kTaintNodeUnschedulable = "node.kubernetes.io/unschedulable";

  [[nodiscard]] std::string_view name() const override { return kName; }
  // Stateless: thread-safe.
  [[nodiscard]] Status filter(const CycleState& state, const api::Pod& pod,
                              const NodeInfo& nodeInfo) const override;
  // Node Add, taint/label updates and other updates (spec.unschedulable flips are UpdateOther);
  // a pod's toleration update.
  [[nodiscard]] std::vector<ClusterEventWithHint> eventsToRegister() const override;
};

// Takes no args (ignored).
std::unique_ptr<Plugin> newNodeUnschedulable(const nlohmann::json& args, Handle& handle);

}  // namespace ksched::plugins
