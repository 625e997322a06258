// NodeDeclaredFeatures (PreFilter, Filter; KEP 5328), as upstream's plugin of the same name.
//   PreFilter: the features the pod needs (helper::requiredFeatures: a RestartAllContainers
//              restart rule, hostNetwork with hostUsers false, bindMountOptions); Skip when
//              it needs none, so most pods never reach the Filter.
//   Filter:    UnschedulableAndUnresolvable "node(s) didn't match Pod's required features" when
//              the node does not declare one of them (NodeInfo::declaredFeatures, computed once
//              per node update; one AND per node). A node that declares nothing (a kubelet older
//              than 1.35, or with the gate off) fits only pods that need nothing.
//   Events:    a node added or its declared features changed; the pod's own update when it
//              changes what the pod needs.
// With the NodeDeclaredFeatures gate off (it is locked on since 1.37) the plugin does nothing:
// PreFilter skips, Filter passes, no events.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <ksched/handle.h>
#include <ksched/plugin.h>
#include <ksched/plugin_names.h>
#include <ksched/registry.h>

namespace ksched::plugins {

class NodeDeclaredFeatures final : public PreFilterPlugin,
                                   public FilterPlugin,
                                   public FilterExplainer,
                                   public EnqueueExtensions,
                                   public SignPlugin {
 public:
  // Opportunistic batching: its answers on a node depend on the pod and that node only.
  [[nodiscard]] bool signPod(const api::Pod& /*pod*/) const override { return true; }
  static constexpr std::string_view kName = names::kNodeDeclaredFeatures;
  // CycleState key of the PreFilter data.
  static constexpr std::string_view kPreFilterStateKey = "PreFilterNodeDeclaredFeatures";
  static constexpr std::string_view kErrReason = "node(s) didn't match Pod's required features";

  // `enabled`: the NodeDeclaredFeatures gate when the plugin is built.
  explicit NodeDeclaredFeatures(bool enabled) : enabled_(enabled) {}

  [[nodiscard]] std::string_view name() const override { return kName; }
  // Skip when disabled or when the pod needs no feature.
  Status preFilter(CycleState& state, const api::Pod& pod, const NodeInfoLister& nodes,
                   PreFilterResult& result) override;
  // Reads the PreFilter data (Error when absent). Thread-safe.
  [[nodiscard]] Status filter(const CycleState& state, const api::Pod& pod,
                              const NodeInfo& nodeInfo) const override;
  // Each feature the pod needs (PreFilter's set) that the node does not declare, with what in
  // the pod needs it.
  [[nodiscard]] std::vector<std::string> explainRejection(const CycleState& state,
                                                          const api::Pod& pod,
                                                          const NodeInfo& nodeInfo) const override;
  // Node added or its declared features changed (isSchedulableAfterNodeChange); the pod itself
  // updated (isSchedulableAfterPodUpdate). None when disabled.
  [[nodiscard]] std::vector<ClusterEventWithHint> eventsToRegister() const override;

 private:
  // Queueing hints. kQueue for a new node or one whose status.declaredFeatures changed.
  [[nodiscard]] static QueueingHint isSchedulableAfterNodeChange(const api::Pod& pod,
                                                                 const EventObject& oldObj,
                                                                 const EventObject& newObj);
  // kQueue when the updated pod is `pod` and what it needs changed.
  [[nodiscard]] static QueueingHint isSchedulableAfterPodUpdate(const api::Pod& pod,
                                                                const EventObject& oldObj,
                                                                const EventObject& newObj);

  const bool enabled_;
};

// Takes no args (ignored). Reads the NodeDeclaredFeatures gate.
PluginFactory nodeDeclaredFeaturesFactory();

}  // namespace ksched::plugins
