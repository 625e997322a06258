// NodeVolumeLimits (PreFilter + AddPod, Filter): upstream's CSI volume limits.
//   PreFilter: Skip unless the pod has a persistentVolumeClaim or generic ephemeral volume.
//              Resolves the pod's claims to unique CSI volumes "<driver>/<volumeHandle>"
//              (PVC -> bound PV spec.csi; an unbound claim or one whose PV is missing counts as
//              "<driver = its StorageClass's provisioner>/<random prefix>-<ns>/<claim>"; claims
//              without a CSI driver are not counted). A missing claim of the pod is
//              UnschedulableAndUnresolvable `looking up PVC <ns>/<name>: persistentvolumeclaim
//              "<name>" not found`; an ephemeral claim the pod does not control is an Error.
//              When the pod has CSI volumes it also resolves, once per cycle, the claims of
//              every pod in the snapshot and each node's CSINode, so that Filter does no
//              lister look-up.
//   AddPod:    resolves the claims of a pod added to a node (nominated pods) not seen yet.
//   Filter:    per driver, the node's limit is its CSINode spec.drivers[].allocatable.count,
//              else node allocatable `attachable-volumes-csi-<driver>`; the unique volumes of
//              the pods on the node plus the pod's volumes not already attached there must not
//              exceed it, else Unschedulable `node(s) exceed max volume count`. A node
//              without limits fits.
//              With VolumeLimitScaling (beta and on in 1.37), first: a driver of the pod's
//              volumes whose CSIDriver sets preventPodSchedulingIfMissing must be listed in the
//              node's CSINode, else Unschedulable `<driver> CSI driver is not installed on the
//              node` (no CSIDriver object: not a CSI driver, allowed).
// Inline CSI volumes and in-tree volumes (CSI migration) are not counted.
#pragma once

#include <map>
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

class NodeVolumeLimits final : public PreFilterPlugin,
                               public FilterPlugin,
                               public FilterExplainer,
                               public PreFilterExtensions,
                               public EnqueueExtensions,
                               public SignPlugin {
 public:
  // Opportunistic batching: its answers on a node depend on the pod and that node only.
  [[nodiscard]] bool signPod(const api::Pod& /*pod*/) const override { return true; }
  static constexpr std::string_view kName = names::kNodeVolumeLimits;
  static constexpr std::string_view kPreFilterStateKey = "PreFilterNodeVolumeLimits";
  static constexpr std::string_view kErrReasonMaxVolumeCountExceeded =
      "node(s) exceed max volume count";

  // `listers` must outlive the plugin. `unboundVolumePrefix` prefixes the placeholder volume
  // handles of unbound claims (random when empty). `volumeLimitScaling`: the gate.
  explicit NodeVolumeLimits(const ClusterListers& listers, std::string unboundVolumePrefix = "",
                            bool volumeLimitScaling = false);

  [[nodiscard]] std::string_view name() const override { return kName; }
  Status preFilter(CycleState& state, const api::Pod& pod, const NodeInfoLister& nodes,
                   PreFilterResult& result) override;
  [[nodiscard]] const PreFilterExtensions* preFilterExtensions() const override { return this; }
  Status addPod(CycleState& state, const api::Pod& podToSchedule, const PodInfo& podToAdd,
                const NodeInfo& nodeInfo) const override;
  // Nothing to undo: Filter counts the pods of the NodeInfo it is given.
  Status removePod(CycleState& state, const api::Pod& podToSchedule, const PodInfo& podToRemove,
                   const NodeInfo& nodeInfo) const override;
  // Reads the PreFilter data (Error when absent). Thread-safe.
  [[nodiscard]] Status filter(const CycleState& state, const api::Pod& pod,
                              const NodeInfo& nodeInfo) const override;
  // Each driver whose limit the pod's volumes would exceed on the node: "2 volumes of driver
  // ebs.csi.aws.com attached, the pod adds 1, limit 2".
  [[nodiscard]] std::vector<std::string> explainRejection(const CycleState& state,
                                                          const api::Pod& pod,
                                                          const NodeInfo& nodeInfo) const override;
  // CSINode added, or updated (csiNodeUpdatedHint); pod deleted (podDeletedHint); PVC added
  // (pvcAddedHint).
  [[nodiscard]] std::vector<ClusterEventWithHint> eventsToRegister() const override;

  // QueueingHints (upstream isSchedulableAfterPodDeleted / isSchedulableAfterPVCAdded): a
  // deleted pod that was on a node and had a persistentVolumeClaim or generic ephemeral
  // volume; an added claim of the pod.
  [[nodiscard]] static QueueingHint podDeletedHint(const api::Pod& pod, const EventObject& oldObj,
                                                   const EventObject& newObj);
  [[nodiscard]] static QueueingHint pvcAddedHint(const api::Pod& pod, const EventObject& oldObj,
                                                 const EventObject& newObj);
  // Upstream isSchedulableAfterCSINodeUpdated: some driver's allocatable count grew (unset
  // counts as 0; MutableCSINodeAllocatableCount).
  [[nodiscard]] static QueueingHint csiNodeUpdatedHint(const api::Pod& pod,
                                                       const EventObject& oldObj,
                                                       const EventObject& newObj);

  // The node resource naming a driver's limit (upstream GetCSIAttachLimitKey):
  // "attachable-volumes-csi-<driver>", shortened with a SHA-1 suffix past 62 characters.
  [[nodiscard]] static std::string csiAttachLimitKey(std::string_view driver);

  // A claim resolved to the CSI volume it stands for; empty uniqueName: not counted.
  struct CSIVolume {
    std::string uniqueName;  // "<driver>/<volumeHandle>"
    std::string limitKey;    // csiAttachLimitKey(driver)
    std::string driver;
  };

 private:
  [[nodiscard]] CSIVolume resolveClaim(const api::PersistentVolumeClaim& pvc) const;

  const ClusterListers& listers_;
  const std::string unboundVolumePrefix_;
  const bool volumeLimitScaling_;
};

// Takes no args (ignored).
PluginFactory nodeVolumeLimitsFactory();

}  // namespace ksched::plugins
