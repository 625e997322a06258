// ServiceAffinity (PreFilter + AddPod/RemovePod, Filter, Score, NormalizeScore): keeps the pods
// of a Service on nodes with the same values of some labels, and scores nodes by spreading a
// Service's pods over the values of other labels (v1.20 serviceaffinity, kept for v1beta1 and
// Policy profiles).
//
//   PreFilter: Skip when affinityLabels is empty. Otherwise stores the Services selecting the
//              pod and the pods of the snapshot in the pod's namespace whose labels the pod's
//              own labels select (all of them when the pod has no labels).
//   Filter:    the pod's nodeSelector values of the affinityLabels form a selector; when some
//              affinity label is missing there and a Service selects the pod, the missing values
//              are taken from the node of the first stored pod (pods stored for this node but
//              no longer in its NodeInfo are left out, as preemption removes them). A node whose
//              labels do not match is Unschedulable (kErrReason).
//   Score:     the number of pods on the node, in the pod's namespace and not being deleted,
//              that the selector of the first Service selecting the pod matches (0 without one).
//   NormalizeScore: for each antiAffinityLabelsPreference label, a node with that label gets
//              100 * (total - count of its label value) / total (100 when total is 0) divided by
//              the number of labels; nodes without the label get nothing for it. The sum is
//              truncated to an integer; with no such labels every node scores 0.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ksched/api/workloads.h>
#include <ksched/handle.h>
#include <ksched/listers.h>
#include <ksched/plugin.h>
#include <ksched/plugin_names.h>
#include <ksched/registry.h>

namespace ksched::plugins {

namespace service_affinity {

// Written by PreFilter, updated by AddPod/RemovePod, read by Filter. clone() copies the lists
// (the pods and Services themselves are shared, immutable).
struct PreFilterState final : StateData {
  // Pods of the snapshot in the pod's namespace whose labels include all of the pod's labels.
  std::vector<PodPtr> matchingPods;
  // The Services selecting the pod.
  ObjectList<api::Service> matchingServices;

  [[nodiscard]] std::unique_ptr<StateData> clone() const override {
    return std::make_unique<PreFilterState>(*this);
  }
};

}  // namespace service_affinity

// ServiceAffinityArgs (kubescheduler.config.k8s.io/v1beta1): no defaults, no validation.
struct ServiceAffinityArgs {
  // JSON "affinityLabels": label keys whose values must be equal on the nodes of a Service's
  // pods (Filter).
  std::vector<std::string> affinityLabels;
  // JSON "antiAffinityLabelsPreference": label keys over whose values a Service's pods are
  // spread (Score).
  std::vector<std::string> antiAffinityLabelsPreference;

  // Decodes strictly (null: defaults). Throws PluginArgsError on unknown fields and wrong types.
  [[nodiscard]] static ServiceAffinityArgs fromJson(const nlohmann::json& j);
};

class ServiceAffinity final : public PreFilterPlugin,
                              public PreFilterExtensions,
                              public FilterPlugin,
                              public ScorePlugin,
                              public EnqueueExtensions {
 public:
  static constexpr std::string_view kName = names::kServiceAffinity;
  static constexpr std::string_view kPreFilterStateKey = "PreFilterServiceAffinity";
  static constexpr std::string_view kErrReason = "node(s) didn't match service affinity";

  // `handle` must outlive the plugin: its listers give the Services, its snapshot the nodes.
  ServiceAffinity(ServiceAffinityArgs args, Handle& handle)
      : args_(std::move(args)), handle_(&handle) {}

  [[nodiscard]] std::string_view name() const override { return kName; }

  Status preFilter(CycleState& state, const api::Pod& pod, const NodeInfoLister& nodes,
                   PreFilterResult& result) override;
  // nullptr when affinityLabels is empty (there is no PreFilter state to update).
  [[nodiscard]] const PreFilterExtensions* preFilterExtensions() const override {
    return args_.affinityLabels.empty() ? nullptr : this;
  }
  // Thread-safe for distinct CycleStates. Error when the PreFilter state is missing.
  Status addPod(CycleState& state, const api::Pod& podToSchedule, const PodInfo& podToAdd,
                const NodeInfo& nodeInfo) const override;
  Status removePod(CycleState& state, const api::Pod& podToSchedule, const PodInfo& podToRemove,
                   const NodeInfo& nodeInfo) const override;
  // Thread-safe. Error when the PreFilter state is missing.
  [[nodiscard]] Status filter(const CycleState& state, const api::Pod& pod,
                              const NodeInfo& nodeInfo) const override;

  // Thread-safe; lists the pod's Services on every call.
  [[nodiscard]] Status score(const CycleState& state, const api::Pod& pod, const NodeInfo& nodeInfo,
                             int64_t& score) const override;
  [[nodiscard]] bool hasNormalizeScore() const override { return true; }
  // Error when a scored node is not in the snapshot.
  [[nodiscard]] Status normalizeScore(const CycleState& state, const api::Pod& pod,
                                      std::vector<NodeScore>& scores) const override;

  // Assigned pod add, delete and label change and Service add, update and delete, of the pod's
  // namespace (sameNamespaceHint); node add and label change.
  [[nodiscard]] std::vector<ClusterEventWithHint> eventsToRegister() const override;

  // kSkip for a pod or Service (old or new) of another namespace than `pod`'s, else kQueue.
  [[nodiscard]] static QueueingHint sameNamespaceHint(const api::Pod& pod,
                                                      const EventObject& oldObj,
                                                      const EventObject& newObj);

 private:
  // Constant after construction.
  const ServiceAffinityArgs args_;
  Handle* const handle_;
};

// Decodes ServiceAffinityArgs (throws PluginArgsError).
PluginFactory serviceAffinityFactory();

}  // namespace ksched::plugins
