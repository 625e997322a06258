// VolumeZone (PreFilter, Filter).
//   PreFilter: for each persistentVolumeClaim volume of the pod, looks up the PVC and its bound
//              PV and collects the PV's zone/region labels (topology.kubernetes.io/zone|region
//              and the beta failure-domain.beta.kubernetes.io/zone|region; a value may be a
//              "__"-separated set). An unbound PVC whose StorageClass binds
//              WaitForFirstConsumer is skipped. UnschedulableAndUnresolvable:
//              `PersistentVolumeClaim had no name`, `PersistentVolumeClaim had no pv name and
//              storageClass name`, `PersistentVolume had no name` (unbound, Immediate class), and
//              the not-found messages `persistentvolumeclaim "<name>" not found`, `persistentvolume
//              "<name>" not found`, `storageclass.storage.k8s.io "<name>" not found`. Skip when no
//              label was collected.
//   Filter:    a node without any of the four labels fits; otherwise every collected label
//              must be on the node (a beta key also matches the GA key) with a value in the
//              PV's set, else UnschedulableAndUnresolvable `node(s) had no available volume
//              zone`.
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

class VolumeZone final : public PreFilterPlugin,
                         public FilterPlugin,
                         public FilterExplainer,
                         public EnqueueExtensions,
                         public SignPlugin {
 public:
  // Opportunistic batching: its answers on a node depend on the pod and that node only.
  [[nodiscard]] bool signPod(const api::Pod& /*pod*/) const override { return true; }
  static constexpr std::string_view kName = names::kVolumeZone;
  static constexpr std::string_view kPreFilterStateKey = "PreFilterVolumeZone";
  static constexpr std::string_view kErrReasonConflict = "node(s) had no available volume zone";

  // `listers` must outlive the plugin.
  explicit VolumeZone(const ClusterListers& listers) : listers_(listers) {}

  [[nodiscard]] std::string_view name() const override { return kName; }
  Status preFilter(CycleState& state, const api::Pod& pod, const NodeInfoLister& nodes,
                   PreFilterResult& result) override;
  // Reads the PreFilter data (Error when absent and the pod has volumes). Thread-safe.
  [[nodiscard]] Status filter(const CycleState& state, const api::Pod& pod,
                              const NodeInfo& nodeInfo) const override;
  // Each bound PV of the pod's claims whose zone or region the node is not in, with the node's
  // value of that label (looked up again in the listers: PreFilter keeps no volume names).
  [[nodiscard]] std::vector<std::string> explainRejection(const CycleState& state,
                                                          const api::Pod& pod,
                                                          const NodeInfo& nodeInfo) const override;
  // StorageClass added (storageClassAddedHint); node added or its labels updated; PVC added
  // or updated (pvcChangeHint); PV added or updated (pvChangeHint).
  [[nodiscard]] std::vector<ClusterEventWithHint> eventsToRegister() const override;

  // QueueingHints (upstream isSchedulableAfterStorageClassAdded,
  // isSchedulableAfterPersistentVolumeClaimChange, isSchedulableAfterPersistentVolumeChange):
  // a WaitForFirstConsumer class; a claim of the pod (persistentVolumeClaim volumes); any new
  // PV, or a PV whose zone/region labels changed.
  [[nodiscard]] static QueueingHint storageClassAddedHint(const api::Pod& pod,
                                                          const EventObject& oldObj,
                                                          const EventObject& newObj);
  [[nodiscard]] static QueueingHint pvcChangeHint(const api::Pod& pod, const EventObject& oldObj,
                                                  const EventObject& newObj);
  [[nodiscard]] static QueueingHint pvChangeHint(const api::Pod& pod, const EventObject& oldObj,
                                                 const EventObject& newObj);

 private:
  const ClusterListers& listers_;
};

// Takes no args (ignored).
PluginFactory volumeZoneFactory();

}  // namespace ksched::plugins
