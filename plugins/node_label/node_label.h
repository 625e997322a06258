// NodeLabel (Filter, Score): filters and scores nodes by the presence of label keys, whatever
// their values (v1.20 nodelabel, kept for v1beta1 and Policy profiles).
//
//   Filter: a node missing one of presentLabels or having one of absentLabels is
//           UnschedulableAndUnresolvable (kErrReason).
//   Score:  100 for each presentLabelsPreference label the node has and each
//           absentLabelsPreference label it lacks, divided (integer division) by the number of
//           preference labels, so at most 100; 0 when there are none.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ksched/api/node.h>
#include <ksched/handle.h>
#include <ksched/helper/field_error.h>
#include <ksched/plugin.h>
#include <ksched/plugin_names.h>
#include <ksched/registry.h>

namespace ksched::plugins {

// NodeLabelArgs (kubescheduler.config.k8s.io/v1beta1): no defaults (empty lists).
struct NodeLabelArgs {
  std::vector<std::string> presentLabels;            // JSON "presentLabels"
  std::vector<std::string> absentLabels;             // JSON "absentLabels"
  std::vector<std::string> presentLabelsPreference;  // JSON "presentLabelsPreference"
  std::vector<std::string> absentLabelsPreference;   // JSON "absentLabelsPreference"

  // Decodes strictly (null: defaults). Throws PluginArgsError on unknown fields and wrong types.
  [[nodiscard]] static NodeLabelArgs fromJson(const nlohmann::json& j);
  // v1.20 ValidateNodeLabelArgs: a label both in presentLabels and absentLabels (field
  // "absentLabels"), or in both preference lists (field "absentLabelsPreference"), worded as
  // v1.20: detecting at least one label (e.g., "l") that exist in both the present([l]) and
  // absent([l]) label list. At most one error, the first list pair first.
  [[nodiscard]] std::vector<helper::FieldError> validationErrors() const;
  // Throws PluginArgsError with the first validation error.
  void validate() const;
};

class NodeLabel final : public FilterPlugin,
                        public ScorePlugin,
                        public EnqueueExtensions,
                        public SignPlugin {
 public:
  // Opportunistic batching: its answers on a node depend on the pod and that node only.
  [[nodiscard]] bool signPod(const api::Pod& /*pod*/) const override { return true; }
  static constexpr std::string_view kName = names::kNodeLabel;
  static constexpr std::string_view kErrReason = "node(s) didn't have the requested labels";

  // `args` must be valid.
  explicit NodeLabel(NodeLabelArgs args) : args_(std::move(args)) {}

  [[nodiscard]] std::string_view name() const override { return kName; }
  // Thread-safe. Error when the NodeInfo has no node.
  [[nodiscard]] Status filter(const CycleState& state, const api::Pod& pod,
                              const NodeInfo& nodeInfo) const override;
  // Thread-safe. Error when the NodeInfo has no node.
  [[nodiscard]] Status score(const CycleState& state, const api::Pod& pod, const NodeInfo& nodeInfo,
                             int64_t& score) const override;

  // Node added or its labels changed (nodeChangeHint).
  [[nodiscard]] std::vector<ClusterEventWithHint> eventsToRegister() const override;
  // kQueue when the added node, or the updated node that did not before, passes Filter (or no
  // node is given), else kSkip.
  [[nodiscard]] QueueingHint nodeChangeHint(const api::Pod& pod, const EventObject& oldObj,
                                            const EventObject& newObj) const;

 private:
  [[nodiscard]] bool fits(const api::Node& node) const;

  // Constant after construction.
  const NodeLabelArgs args_;
};

// Decodes and validates NodeLabelArgs (throws PluginArgsError).
PluginFactory nodeLabelFactory();

}  // namespace ksched::plugins
