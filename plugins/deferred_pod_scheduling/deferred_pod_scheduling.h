// DeferredPodScheduling (PreFilter, Filter, Permit; KEP 5836, gate
// InPlacePodVerticalScalingSchedulerPreemption): scheduler preemption for in-place resize.
//
// A pod already on a node whose in-place resize the kubelet deferred (its PodResizePending
// condition has reason Deferred) goes back to the scheduling queue. Its cycle looks at its own
// node only (this PreFilter narrows to spec.nodeName, and the framework skips the filters that
// do not take such pods, Plugin::filtersResizeDeferredPods): when NodeResourcesFit finds the
// node over-allocated with the pod at its new size, DefaultPreemption evicts lower-priority pods
// there; when it fits, Permit parks the pod ("pod resize fits, waiting for Kubelet actuation")
// and the kubelet actuates the resize. The pod is never assumed or bound, gets no nomination,
// no FailedScheduling event and no PodScheduled change.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include <ksched/handle.h>
#include <ksched/plugin.h>
#include <ksched/plugin_names.h>
#include <ksched/registry.h>

namespace ksched::plugins {

class DeferredPodScheduling final : public PreFilterPlugin,
                                    public FilterPlugin,
                                    public PermitPlugin,
                                    public EnqueueExtensions,
                                    public SignPlugin {
 public:
  // Opportunistic batching: it takes no part in a pending pod's cycle; a pod whose resize waits
  // is never batched.
  [[nodiscard]] bool signPod(const api::Pod& pod) const override { return !deferred(pod); }
  static constexpr std::string_view kName = names::kDeferredPodScheduling;
  // Upstream's reasons.
  static constexpr std::string_view kErrReasonDifferentNode = "pod assigned to different node";
  static constexpr std::string_view kErrReasonNodeDisablesResizePreemption =
      "node had resize preemption disabled";
  static constexpr std::string_view kReasonWaitingForKubelet =
      "pod resize fits, waiting for Kubelet actuation";

  // `enabled`: InPlacePodVerticalScalingSchedulerPreemption.
  explicit DeferredPodScheduling(bool enabled) : enabled_(enabled) {}

  [[nodiscard]] std::string_view name() const override { return kName; }
  [[nodiscard]] bool filtersResizeDeferredPods() const noexcept override { return true; }

  // With the gate on and the pod's resize deferred: only its node (spec.nodeName); else Skip.
  Status preFilter(CycleState& state, const api::Pod& pod, const NodeInfoLister& nodes,
                   PreFilterResult& result) override;
  // UnschedulableAndUnresolvable on another node than the pod's, or on a node whose
  // spec.podPreemptionPolicy.disableResizePreemption names an owner. Thread-safe.
  [[nodiscard]] Status filter(const CycleState& state, const api::Pod& pod,
                              const NodeInfo& nodeInfo) const override;
  // The resize fits: UnschedulableAndUnresolvable, the pod waits for the kubelet.
  Status permit(CycleState& state, const api::Pod& pod, const std::string& nodeName,
                std::chrono::milliseconds& timeout) override;
  // Its node added with resize preemption allowed; its node's policy going from disabled to
  // allowed (UpdateNodePreemptionPolicy).
  [[nodiscard]] std::vector<ClusterEventWithHint> eventsToRegister() const override;

  // The pod is on a node and its resize is deferred (the gate aside).
  [[nodiscard]] static bool deferred(const api::Pod& pod);

 private:
  const bool enabled_;
};

// Takes no args (ignored).
PluginFactory deferredPodSchedulingFactory();

}  // namespace ksched::plugins
