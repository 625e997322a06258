// VolumeRestrictions (PreFilter + AddPod/RemovePod, Filter).
//   PreFilter: looks up the pod's PVCs (a missing one is UnschedulableAndUnresolvable
//              `persistentvolumeclaim "<name>" not found`), keeps those with access mode
//              ReadWriteOncePod and counts how many of them a pod anywhere in the cluster
//              already uses (NodeInfoLister::isPVCUsedByPods). Skip when the pod has no
//              GCE PD / AWS EBS / RBD / ISCSI volume and no such conflict.
//   AddPod/RemovePod: adjust that count by the pod's references to those PVCs (preemption:
//              removing the victim that holds the claim clears the conflict).
//   Filter:    Unschedulable `node(s) had no available disk` when a volume conflicts with a
//              volume of a pod on the node (same GCE PD unless both read-only; same EBS volume
//              ID; RBD with an overlapping monitor, same pool and image unless both read-only;
//              same ISCSI IQN unless both read-only); else Unschedulable with
//              kErrReasonReadWriteOncePodConflict while the conflict count is above zero.
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

class VolumeRestrictions final : public PreFilterPlugin,
                                 public FilterPlugin,
                                 public FilterExplainer,
                                 public PreFilterExtensions,
                                 public EnqueueExtensions,
                                 public SignPlugin {
 public:
  // Signs pods without PersistentVolumeClaims (ReadWriteOncePod claims conflict cluster-wide).
  [[nodiscard]] bool signPod(const api::Pod& pod) const override;
  static constexpr std::string_view kName = names::kVolumeRestrictions;
  static constexpr std::string_view kPreFilterStateKey = "PreFilterVolumeRestrictions";
  static constexpr std::string_view kErrReasonDiskConflict = "node(s) had no available disk";
  static constexpr std::string_view kErrReasonReadWriteOncePodConflict =
      "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode "
      "already in-use by another pod";

  // `listers` must outlive the plugin; so must `handle` (may be null: no ReadWriteOncePod
  // details then), whose snapshot explainRejection searches for the pod holding a claim.
  explicit VolumeRestrictions(const ClusterListers& listers, const Handle* handle = nullptr)
      : listers_(listers), handle_(handle) {}

  [[nodiscard]] std::string_view name() const override { return kName; }
  Status preFilter(CycleState& state, const api::Pod& pod, const NodeInfoLister& nodes,
                   PreFilterResult& result) override;
  [[nodiscard]] const PreFilterExtensions* preFilterExtensions() const override { return this; }
  Status addPod(CycleState& state, const api::Pod& podToSchedule, const PodInfo& podToAdd,
                const NodeInfo& nodeInfo) const override;
  Status removePod(CycleState& state, const api::Pod& podToSchedule, const PodInfo& podToRemove,
                   const NodeInfo& nodeInfo) const override;
  // Reads the PreFilter data (Error when absent). Thread-safe.
  [[nodiscard]] Status filter(const CycleState& state, const api::Pod& pod,
                              const NodeInfo& nodeInfo) const override;
  // Each disk volume of the pod that a pod on the node uses, and each ReadWriteOncePod claim of
  // the pod (PreFilter's set) that a pod uses, with that pod and its node.
  [[nodiscard]] std::vector<std::string> explainRejection(const CycleState& state,
                                                          const api::Pod& pod,
                                                          const NodeInfo& nodeInfo) const override;
  // Pod deleted (podDeletedHint); node added; PVC added (pvcAddedHint).
  [[nodiscard]] std::vector<ClusterEventWithHint> eventsToRegister() const override;

  // QueueingHints (upstream isSchedulableAfterPodDeleted /
  // isSchedulableAfterPersistentVolumeClaimAdded): a deleted pod of the pod's namespace with a
  // volume that conflicts with one of the pod's, or using one of its claims (the access mode
  // is not looked up); an added claim of the pod.
  [[nodiscard]] static QueueingHint podDeletedHint(const api::Pod& pod, const EventObject& oldObj,
                                                   const EventObject& newObj);
  [[nodiscard]] static QueueingHint pvcAddedHint(const api::Pod& pod, const EventObject& oldObj,
                                                 const EventObject& newObj);

  // True when `volume` conflicts with one of `existing`'s volumes (upstream isVolumeConflict).
  [[nodiscard]] static bool isVolumeConflict(const api::Volume& volume, const api::Pod& existing);

 private:
  const ClusterListers& listers_;
  const Handle* const handle_;
};

// Takes no args (ignored).
PluginFactory volumeRestrictionsFactory();

}  // namespace ksched::plugins
