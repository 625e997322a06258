// EBSLimits, GCEPDLimits, AzureDiskLimits, CinderLimits (Filter): kube-scheduler v1.20's in-tree
// volume limits (nodevolumelimits/non_csi.go), kept for v1beta1 and Policy profiles. One class,
// parameterized by the volume type.
//   Filter: the pod's volumes of the type are its inline volumes of that source (keyed by
//           volume ID / PD name / disk name) and its persistentVolumeClaim volumes whose bound
//           PV has that source. A claim that is not bound, or whose PV is missing, counts as
//           "<random prefix>-<pod namespace>/<claim>" when spec.storageClassName names a
//           StorageClass whose provisioner is the type's in-tree plugin
//           ("kubernetes.io/aws-ebs", "kubernetes.io/gce-pd", "kubernetes.io/azure-disk",
//           "kubernetes.io/cinder"); a missing claim is not counted; a claim volume without a
//           claim name is an Error `PersistentVolumeClaim had no name`. Generic ephemeral and
//           CSI volumes are not counted (as v1.20 with its default feature gates).
//           When the pod has such volumes, the unique volumes of the node's pods plus the
//           pod's volumes not already there must not exceed the node's limit, else
//           Unschedulable `node(s) exceed max volume count`. The limit is the node's
//           allocatable `attachable-volumes-aws-ebs` / `-gce-pd` / `-azure-disk` / `-cinder`;
//           without it, KUBE_MAX_PD_VOLS (read once when the plugin is built; ignored unless a
//           positive integer), else 39 for EBS (25 for a Nitro instance type: label
//           node.kubernetes.io/instance-type, else beta.kubernetes.io/instance-type, matching
//           `^[cmr]5.*|t3|z1d`), 16 for GCE PD and Azure Disk, 256 for Cinder.
// CSI migration is ignored: v1.20 only skipped these filters for migrated nodes behind feature
// gates that were off by default for these drivers.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <ksched/handle.h>
#include <ksched/plugin.h>
#include <ksched/plugin_names.h>
#include <ksched/registry.h>

namespace ksched::plugins {

enum class InTreeVolumeType : uint8_t { kAWSEBS, kGCEPD, kAzureDisk, kCinder };

class NonCSIVolumeLimits final : public FilterPlugin,
                                 public FilterExplainer,
                                 public EnqueueExtensions,
                                 public SignPlugin {
 public:
  // Opportunistic batching: its answers on a node depend on the pod and that node only.
  [[nodiscard]] bool signPod(const api::Pod& /*pod*/) const override { return true; }
  static constexpr std::string_view kEBSName = names::kEBSLimits;
  static constexpr std::string_view kGCEPDName = names::kGCEPDLimits;
  static constexpr std::string_view kAzureDiskName = names::kAzureDiskLimits;
  static constexpr std::string_view kCinderName = names::kCinderLimits;
  static constexpr std::string_view kErrReasonMaxVolumeCountExceeded =
      "node(s) exceed max volume count";
  // Environment variable overriding the default limits (not the node's allocatable).
  static constexpr std::string_view kMaxPDVolsEnv = "KUBE_MAX_PD_VOLS";

  static constexpr int64_t kDefaultMaxEBSVolumes = 39;
  static constexpr int64_t kDefaultMaxEBSNitroVolumes = 25;
  static constexpr int64_t kDefaultMaxGCEPDVolumes = 16;
  static constexpr int64_t kDefaultMaxAzureDiskVolumes = 16;
  static constexpr int64_t kDefaultMaxCinderVolumes = 256;

  // `listers` must outlive the plugin. `maxVolumesOverride` replaces the type's default limit
  // (maxVolumesFromEnv() in the factories). `unboundVolumePrefix` prefixes the IDs of claims
  // counted without a PV (random when empty).
  NonCSIVolumeLimits(InTreeVolumeType type, const ClusterListers& listers,
                     std::optional<int64_t> maxVolumesOverride = std::nullopt,
                     std::string unboundVolumePrefix = "");

  [[nodiscard]] std::string_view name() const override;
  // Thread-safe; reads the listers.
  [[nodiscard]] Status filter(const CycleState& state, const api::Pod& pod,
                              const NodeInfo& nodeInfo) const override;
  // The count against the limit and where the limit comes from: "3 volumes of driver
  // kubernetes.io/aws-ebs attached, the pod adds 1, limit 3 (node allocatable
  // attachable-volumes-aws-ebs)".
  [[nodiscard]] std::vector<std::string> explainRejection(const CycleState& state,
                                                          const api::Pod& pod,
                                                          const NodeInfo& nodeInfo) const override;
  // Node added or its allocatable/labels changed; pod deleted (podDeletedHint); PVC added or
  // updated (queueIfClaimOfPod).
  [[nodiscard]] std::vector<ClusterEventWithHint> eventsToRegister() const override;

  // The node allocatable naming the limit: "attachable-volumes-aws-ebs", ...
  [[nodiscard]] static std::string_view limitKey(InTreeVolumeType type) noexcept;
  // The in-tree provisioner: "kubernetes.io/aws-ebs", ...
  [[nodiscard]] static std::string_view provisioner(InTreeVolumeType type) noexcept;
  // The limit without allocatable and override (EBS: by instance type).
  [[nodiscard]] static int64_t defaultMaxVolumes(InTreeVolumeType type, const api::Node& node);
  // v1.20's KUBE_MAX_PD_VOLS parsing: a positive decimal integer (optional sign, as Go's
  // strconv.Atoi), else nullopt. nullptr (unset) and "" give nullopt.
  [[nodiscard]] static std::optional<int64_t> parseMaxVolumes(const char* raw);
  // parseMaxVolumes(getenv(KUBE_MAX_PD_VOLS)).
  [[nodiscard]] static std::optional<int64_t> maxVolumesFromEnv();

  // QueueingHint of a pod deletion: kQueue if the deleted pod was on a node and had a volume
  // that may be of the type (inline of the type, or a claim).
  [[nodiscard]] QueueingHint podDeletedHint(const api::Pod& pod, const EventObject& oldObj,
                                            const EventObject& newObj) const;

 private:
  // The unique volumes of the type on the node, those of the pod not there yet, and the limit.
  struct Usage {
    int64_t attached = 0;
    int64_t added = 0;
    int64_t limit = 0;
    std::string limitFrom;  // "node allocatable <key>", "KUBE_MAX_PD_VOLS" or "default"
  };
  // Skip when the pod has no volume of the type; Error as Filter's.
  [[nodiscard]] Status usage(const api::Pod& pod, const NodeInfo& nodeInfo, Usage& out) const;
  // Adds the IDs of `volumes` of the type to `ids`; Error for a claim without a name.
  [[nodiscard]] Status collectVolumes(const std::vector<api::Volume>& volumes,
                                      const std::string& ns, std::set<std::string>& ids) const;
  // The ID of an inline volume or PV source of the type, or nullptr.
  [[nodiscard]] const std::string* inlineID(const api::Volume& v) const noexcept;
  [[nodiscard]] const std::string* persistentVolumeID(
      const api::PersistentVolume& pv) const noexcept;
  [[nodiscard]] bool matchesProvisioner(const api::PersistentVolumeClaim& pvc) const;

  // Constant after construction.
  const InTreeVolumeType type_;
  const ClusterListers& listers_;
  const std::optional<int64_t> maxVolumesOverride_;
  const std::string unboundVolumePrefix_;
};

// Take no args (ignored); read KUBE_MAX_PD_VOLS once.
PluginFactory ebsLimitsFactory();
PluginFactory gcePdLimitsFactory();
PluginFactory azureDiskLimitsFactory();
PluginFactory cinderLimitsFactory();

}  // namespace ksched::plugins
