// NodePorts (PreFilter, Filter).
//   PreFilter: collects the host ports the pod asks for (containers and sidecars with
//              hostPort > 0, upstream util.GetHostPorts); Skip when there are none.
//   Filter:    Unschedulable when any wanted (hostIP, protocol, hostPort) conflicts with a port
//              in use on the node (HostPortInfo::conflicts: 0.0.0.0 conflicts with every IP).
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

class NodePorts final : public PreFilterPlugin,
                        public FilterPlugin,
                        public FilterExplainer,
                        public EnqueueExtensions,
                        public SignPlugin {
 public:
  // Opportunistic batching: its answers on a node depend on the pod and that node only.
  [[nodiscard]] bool signPod(const api::Pod& /*pod*/) const override { return true; }
  static constexpr std::string_view kName = names::kNodePorts;
  // CycleState key of the PreFilter data.
  static constexpr std::string_view kPreFilterStateKey = "PreFilterNodePorts";
  static constexpr std::string_view kErrReason =
      "node(s) didn't have free ports for the requested pod ports";

  [[nodiscard]] std::string_view name() const override { return kName; }
  // Skip when the pod wants no host port.
  Status preFilter(CycleState& state, const api::Pod& pod, const NodeInfoLister& nodes,
                   PreFilterResult& result) override;
  // Reads the PreFilter data (Error when absent). Thread-safe.
  [[nodiscard]] Status filter(const CycleState& state, const api::Pod& pod,
                              const NodeInfo& nodeInfo) const override;
  // Each wanted port (PreFilter's list) in use on the node, and the first pod there holding it.
  [[nodiscard]] std::vector<std::string> explainRejection(const CycleState& state,
                                                          const api::Pod& pod,
                                                          const NodeInfo& nodeInfo) const override;
  // Pod deleted (isSchedulableAfterPodDeleted); node added (no hint). Host ports cannot change
  // in a pod update.
  [[nodiscard]] std::vector<ClusterEventWithHint> eventsToRegister() const override;

  // The pod's container ports with hostPort > 0: sidecar init containers first, then
  // containers (upstream GetHostPorts).
  [[nodiscard]] static std::vector<api::ContainerPort> hostPorts(const api::Pod& pod);
  // No wanted port conflicts with the node's used ports.
  [[nodiscard]] static bool fitsPorts(const std::vector<api::ContainerPort>& want,
                                      const NodeInfo& nodeInfo);
  // No wanted port conflicts with `used`.
  [[nodiscard]] static bool fitsPorts(const std::vector<api::ContainerPort>& want,
                                      const HostPortInfo& used);

 private:
  // Queueing hint: kQueue if the deleted pod was on a node (or nominated to one) and held a host
  // port that conflicts with one `pod` wants.
  [[nodiscard]] static QueueingHint isSchedulableAfterPodDeleted(const api::Pod& pod,
                                                                 const EventObject& oldObj,
                                                                 const EventObject& newObj);
};

// Takes no args (ignored).
PluginFactory nodePortsFactory();

}  // namespace ksched::plugins
