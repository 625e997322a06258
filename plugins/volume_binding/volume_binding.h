// VolumeBinding (PreFilter, Filter, PreScore, Score, Reserve/Unreserve, PreBind): places pods whose
// PersistentVolumeClaims are unbound on nodes where matching PVs exist or can be provisioned,
// and binds the claims before the pod is bound (upstream framework/plugins/volumebinding and
// controller/volume/scheduling).
//
//   PreFilter: Skip for pods without claims. Every claim must exist and not be being deleted
//              (UnschedulableAndUnresolvable). Claims are split into bound ones, unbound ones of
//              a WaitForFirstConsumer class (delayed binding) and unbound Immediate (or
//              pre-bound) ones; the last make the pod UnschedulableAndUnresolvable until the PV
//              controller binds them.
//   Filter:    bound claims: their PV's node affinity must match the node; delayed claims: the
//              smallest matching available PV, or dynamic provisioning when the class has a
//              provisioner and its allowedTopologies match the node. The decision per node is
//              kept in the CycleState for Reserve.
//              A claim to provision whose class's provisioner is a CSIDriver with
//              storageCapacity: true needs a CSIStorageCapacity of that class whose
//              nodeTopology selects the node and whose maximumVolumeSize (else capacity) holds
//              the claim's request, else `node(s) did not have enough free storage`.
//   PreScore/Score (StorageCapacityScoring, beta and on in 1.37): a node's score is the
//              average over storage classes of shape(utilization), utilization = requested /
//              capacity in percent: of the chosen PVs when the node has static bindings, else
//              of the matched CSIStorageCapacity's capacity for the claims to provision. The
//              default shape (0 -> 10, 100 -> 0) prefers the node with the most free storage.
//   Reserve:   assumes the chosen PVs (claimRef set) and claims (selected-node annotation) in
//              the plugin's AssumeCache; Unreserve restores them.
//   PreBind:   writes the PVs' claimRef and the claims' selected-node annotation, then polls
//              (every second, at most bindTimeoutSeconds) until the PV controller has bound
//              every claim.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <ksched/handle.h>
#include <ksched/helper/resource_allocation.h>
#include <ksched/helper/shape_score.h>
#include <ksched/plugin.h>
#include <ksched/plugin_names.h>
#include <ksched/registry.h>

#include "plugins/volume_binding/assume_cache.h"
#include "plugins/volume_binding/pv_matching.h"

namespace ksched::plugins {

struct VolumeBindingArgs {
  int64_t bindTimeoutSeconds = 600;
  // StorageCapacityScoring's function of utilization; defaulted to {0, 10}, {100, 0} when the
  // gate is on and no shape is given.
  std::vector<helper::UtilizationShapePoint> shape;
};

// Strict decoding with upstream's defaults and validation (PluginArgsError, e.g.
// "bindTimeoutSeconds: Invalid value: -1: invalid BindTimeoutSeconds, should not be a negative
// value"). `shape` is validated as NodeResourcesFit's when StorageCapacityScoring is on, and
// refused when it is off.
[[nodiscard]] VolumeBindingArgs decodeVolumeBindingArgs(const nlohmann::json& args,
                                                        const features::Gates& gates);

namespace volume_binding {

// What binding the pod's claims on one node takes (upstream PodVolumes).
struct PodVolumes {
  struct StaticBinding {
    PVPtr pv;  // after Reserve: the assumed PV with claimRef set
    PVCPtr pvc;
  };
  std::vector<StaticBinding> staticBindings;
  // Claims to provision; after Reserve: the assumed claims with the selected-node annotation.
  std::vector<PVCPtr> dynamicProvisions;
  // For each of dynamicProvisions (same index): the CSIStorageCapacity that showed room for it
  // on the node, nullptr when its driver does not report capacity (StorageCapacityScoring).
  std::vector<std::shared_ptr<const api::CSIStorageCapacity>> provisionCapacities;
  // The node's labels at Filter time (PreBind re-checks PV node affinity against them).
  api::Labels nodeLabels;
};

// The CycleState of one pod. Copies share the data (upstream returns the same pointer from
// Clone): Filter runs on copies during preemption and its per-node decisions are kept.
class State final : public StateData {
 public:
  struct Data {
    bool skip = false;  // the pod has no claims
    std::vector<PVCPtr> boundClaims;
    std::vector<PVCPtr> claimsToBind;  // unbound, delayed binding
    // Class name -> the PVs of that class (assumed versions), for claimsToBind.
    std::map<std::string, std::vector<PVPtr>, std::less<>> unboundVolumesByClass;
    // For each of claimsToBind whose class's driver reports storage capacity: the
    // CSIStorageCapacity objects of the class with room for the claim, by namespace and name
    // (Filter checks only their nodeTopology per node). Absent: no capacity check.
    std::map<const api::PersistentVolumeClaim*,
             std::vector<std::shared_ptr<const api::CSIStorageCapacity>>>
        capacityCandidates;
    bool allBound = false;  // set by Reserve

    std::mutex mu;
    // Guarded by mu: node name -> decision (written by the concurrent Filter calls).
    std::map<std::string, std::shared_ptr<PodVolumes>, std::less<>> podVolumesByNode;
  };

  explicit State(std::shared_ptr<Data> data) : data_(std::move(data)) {}
  [[nodiscard]] std::unique_ptr<StateData> clone() const override {
    return std::make_unique<State>(data_);
  }
  [[nodiscard]] Data& data() const { return *data_; }

 private:
  std::shared_ptr<Data> data_;
};

// Upstream keys the state by the plugin name.
inline constexpr StateKey<State> kStateKey{names::kVolumeBinding};

}  // namespace volume_binding

class VolumeBinding final : public PreFilterPlugin,
                            public FilterPlugin,
                            public FilterExplainer,
                            public PreScorePlugin,
                            public ScorePlugin,
                            public ReservePlugin,
                            public PreBindPlugin,
                            public EnqueueExtensions,
                            public SignPlugin {
 public:
  // Signs pods without PersistentVolumeClaims and generic ephemeral volumes (their binding
  // is decided per pod).
  [[nodiscard]] bool signPod(const api::Pod& pod) const override;
  static constexpr std::string_view kName = names::kVolumeBinding;

  static constexpr std::string_view kErrReasonBindConflict =
      "node(s) didn't find available persistent volumes to bind";
  static constexpr std::string_view kErrReasonNodeConflict =
      "node(s) didn't match PersistentVolume's node affinity";
  static constexpr std::string_view kErrReasonNotEnoughSpace =
      "node(s) did not have enough free storage";
  static constexpr std::string_view kErrReasonPVNotExist =
      "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)";
  static constexpr std::string_view kErrReasonUnboundImmediate =
      "pod has unbound immediate PersistentVolumeClaims";

  VolumeBinding(VolumeBindingArgs args, Handle& handle);

  [[nodiscard]] std::string_view name() const override { return kName; }
  // Ends PreBind waits for the PV controller at once ("scheduler is shutting down").
  void close() override;

  Status preFilter(CycleState& state, const api::Pod& pod, const NodeInfoLister& nodes,
                   PreFilterResult& result) override;
  // Thread-safe; records the node's decision in the (shared) state.
  [[nodiscard]] Status filter(const CycleState& state, const api::Pod& pod,
                              const NodeInfo& nodeInfo) const override;
  // From PreFilter's claims, each one that keeps the pod off the node: a bound claim whose PV
  // is missing or whose node affinity does not match the node, a claim provisioned for another
  // node, a claim that no available PV matches on the node and whose class cannot provision
  // there.
  [[nodiscard]] std::vector<std::string> explainRejection(const CycleState& state,
                                                          const api::Pod& pod,
                                                          const NodeInfo& nodeInfo) const override;
  // Skip when StorageCapacityScoring is off or the pod has no claims.
  Status preScore(CycleState& state, const api::Pod& pod,
                  const std::vector<const NodeInfo*>& nodes) override;
  // 0..100, no normalization (upstream has none).
  [[nodiscard]] Status score(const CycleState& state, const api::Pod& pod, const NodeInfo& nodeInfo,
                             int64_t& score) const override;
  Status reserve(CycleState& state, const api::Pod& pod, const std::string& nodeName) override;
  void unreserve(CycleState& state, const api::Pod& pod, const std::string& nodeName) override;
  // Skip when the pod's claims are all bound already (or it has none), else Success.
  Status preBindPreFlight(const CycleState& state, const api::Pod& pod,
                          const std::string& nodeName) override;
  // API writes and the wait for the PV controller (binder threads).
  Status preBind(CycleState& state, const api::Pod& pod, const std::string& nodeName) override;
  // StorageClass add or update (storageClassChangeHint), PVC add or update (pvcChangeHint), PV
  // add or update, node add or label change, CSINode add or update (csiNodeChangeHint),
  // CSIDriver update (csiDriverChangeHint), CSIStorageCapacity add or update
  // (capacityChangeHint).
  [[nodiscard]] std::vector<ClusterEventWithHint> eventsToRegister() const override;

  // QueueingHints (upstream isSchedulableAfterStorageClassChange,
  // isSchedulableAfterPersistentVolumeClaimChange, isSchedulableAfterCSINodeChange): any new
  // class, or a change of its allowedTopologies; a claim of the pod (persistentVolumeClaim or
  // generic ephemeral volume); any new CSINode, or a change of its migrated-plugins
  // annotation.
  [[nodiscard]] static QueueingHint storageClassChangeHint(const api::Pod& pod,
                                                           const EventObject& oldObj,
                                                           const EventObject& newObj);
  [[nodiscard]] static QueueingHint pvcChangeHint(const api::Pod& pod, const EventObject& oldObj,
                                                  const EventObject& newObj);
  [[nodiscard]] static QueueingHint csiNodeChangeHint(const api::Pod& pod,
                                                      const EventObject& oldObj,
                                                      const EventObject& newObj);
  // Upstream isSchedulableAfterCSIDriverChange: an inline CSI volume of the pod whose driver
  // stopped reporting storage capacity.
  [[nodiscard]] static QueueingHint csiDriverChangeHint(const api::Pod& pod,
                                                        const EventObject& oldObj,
                                                        const EventObject& newObj);
  // Upstream isSchedulableAfterCSIStorageCapacityChange: a new object, or a larger limit
  // (maximumVolumeSize, else capacity).
  [[nodiscard]] static QueueingHint capacityChangeHint(const api::Pod& pod,
                                                       const EventObject& oldObj,
                                                       const EventObject& newObj);

  [[nodiscard]] const volume_binding::AssumeCache& assumeCacheForTest() const { return cache_; }
  // Test hook: the poll interval of PreBind's wait (default one second).
  void setPollIntervalForTest(std::chrono::milliseconds d) { pollInterval_ = d; }

 private:
  // Upstream FindPodVolumes for one node: fills `out` and returns the rejection reasons
  // (empty = fits), or an Error status.
  Status findPodVolumes(const volume_binding::State::Data& s, const api::Node& node,
                        volume_binding::PodVolumes& out, std::vector<std::string>& reasons) const;
  // Upstream checkVolumeProvisions: `satisfied` false when some claim's class cannot provision
  // on the node, `sufficient` false when its driver reports no room there; `capacities` gets
  // the matched CSIStorageCapacity per claim.
  Status checkVolumeProvisions(
      const volume_binding::State::Data& s, const std::vector<volume_binding::PVCPtr>& claims,
      const api::Node& node, bool& satisfied, bool& sufficient,
      std::vector<std::shared_ptr<const api::CSIStorageCapacity>>& capacities) const;
  // Upstream checkBindings: true once every claim is bound; Error when binding went wrong.
  Status checkBindings(const api::Pod& pod, const std::string& nodeName,
                       const volume_binding::PodVolumes& pv, bool& done) const;
  // The capacity candidates of each claim to bind (State::Data::capacityCandidates), at
  // PreFilter: upstream hasEnoughCapacity's class, driver and size checks, done once per pod.
  void findCapacityCandidates(volume_binding::State::Data& s) const;
  // Upstream hasEnoughCapacity on one node: the first candidate whose nodeTopology selects the
  // node (nullptr and `sufficient` true when the claim has no capacity check).
  [[nodiscard]] static std::shared_ptr<const api::CSIStorageCapacity> findCapacity(
      const volume_binding::State::Data& s, const api::PersistentVolumeClaim& claim,
      const api::Node& node, bool& sufficient);
  // Whether every claim of the pod is fully bound (assume cache view).
  [[nodiscard]] bool podVolumesBound(const api::Pod& pod) const;
  void revert(const volume_binding::PodVolumes& pv);

  // Constant after construction.
  const VolumeBindingArgs args_;
  // StorageCapacityScoring on: the shape with scores scaled to node scores.
  std::optional<helper::BrokenLinearFunction> scorer_;
  Handle& handle_;
  std::chrono::milliseconds pollInterval_{1000};
  volume_binding::AssumeCache cache_;  // thread-safe

  std::mutex closeMu_;
  std::condition_variable closeCv_;
  bool closed_ = false;  // guarded by closeMu_
};

PluginFactory volumeBindingFactory();

}  // namespace ksched::plugins
