// NodeName (Filter): a pod with spec.nodeName set fits only the node of that name.
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

class NodeName final : public FilterPlugin,
                       public FilterExplainer,
                       public EnqueueExtensions,
                       public SignPlugin {
 public:
  // Opportunistic batching: its answers on a node depend on the pod and that node only.
  [[nodiscard]] bool signPod(const api::Pod& /*pod*/) const override { return true; }
  static constexpr std::string_view kName = names::kNodeName;
  static constexpr std::string_view kErrReason = "node(s) didn't match the requested node name";

  [[nodiscard]] std::string_view name() const override { return kName; }
  // A pod whose resize waits is checked against its own node, as any pod with spec.nodeName.
  [[nodiscard]] bool filtersResizeDeferredPods() const noexcept override { return true; }
  // Stateless: thread-safe.
  [[nodiscard]] Status filter(const CycleState& state, const api::Pod& pod,
                              const NodeInfo& nodeInfo) const override;
  // "pod asks for node <spec.nodeName>".
  [[nodiscard]] std::vector<std::string> explainRejection(const CycleState& state,
                                                          const api::Pod& pod,
                                                          const NodeInfo& nodeInfo) const override;
  // Node added (no hint: any new node is worth a retry).
  [[nodiscard]] std::vector<ClusterEventWithHint> eventsToRegister() const override;

  // True when the pod names no node or names this one (upstream nodename.Fits).
  [[nodiscard]] static bool fits(const api::Pod& pod, const NodeInfo& nodeInfo);
};

// Takes no args (ignored).
PluginFactory nodeNameFactory();

}  // namespace ksched::plugins
