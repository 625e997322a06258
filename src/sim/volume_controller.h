// What the PV controller and a dynamic provisioner do with the writes of VolumeBinding's
// PreBind, played in memory for `ksched simulate`, so that pods with WaitForFirstConsumer claims
// are placed as on a live cluster:
//
//   PATCH persistentvolumes/<pv> (claimRef set, a static binding): the PV is Bound to the claim
//     and the claim to the PV (volumeName, pv.kubernetes.io/bind-completed).
//   PATCH persistentvolumeclaims/<claim> (volume.kubernetes.io/selected-node set): the class's
//     provisioner creates PV "pvc-<claim uid>" of the claim's request (its node affinity the
//     matched CSIStorageCapacity's nodeTopology labels; spec.csi when the provisioner is a CSI
//     driver) and the claim is bound to it. When the driver reports capacity, the matched
//     CSIStorageCapacity shrinks by the request, as the driver's next report would say.
//
// Every change goes into the listers the plugins read, with a newer resourceVersion, and is
// reported through `emit` as the informers would report it.
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include <ksched/api/storage.h>
#include <ksched/cluster_api.h>
#include <ksched/cluster_event.h>
#include <ksched/listers.h>
#include <ksched/sim.h>

namespace ksched::sim {

class VolumeController {
 public:
  // A node's labels by name (nullptr: unknown node).
  using NodeLabels = std::function<const api::Labels*(std::string_view node)>;
  using Emit = std::function<void(const ClusterEvent&, const EventObject& oldObj,
                                  const EventObject& newObj)>;

  VolumeController(StaticClusterListers& listers, NodeLabels nodeLabels)
      : listers_(listers), nodeLabels_(std::move(nodeLabels)) {}

  // A PersistentVolume or PersistentVolumeClaim path.
  [[nodiscard]] static bool handles(std::string_view path);
  // PATCH of such a path: `out` gets the object's name and new resourceVersion.
  ApiResult patch(const std::string& path, const nlohmann::json& patch, nlohmann::json* out,
                  const Emit& emit);

  // The PVs provisioned so far, by name.
  [[nodiscard]] const std::map<std::string, api::PersistentVolume>& provisioned() const {
    return provisioned_;
  }
  // Puts every PV, claim and CSIStorageCapacity changed so far, as the listers hold it now, into
  // `out` (replacing the object of that namespace and name), so that the Simulator's next call
  // starts from the storage as this one left it.
  void writeBack(Cluster& out) const;

 private:
  ApiResult patchVolume(const std::string& name, const nlohmann::json& patch, nlohmann::json* out,
                        const Emit& emit);
  ApiResult patchClaim(const std::string& ns, const std::string& name, const nlohmann::json& patch,
                       nlohmann::json* out, const Emit& emit);
  // Binds `claim` to `pv` (both already stored), as the PV controller's syncClaim would.
  void bind(const api::PersistentVolumeClaim& claim, const std::string& pv, const Emit& emit);
  // The provisioner's answer to a claim with a selected node; false when the class cannot
  // provision (the claim stays pending, as on a cluster without that provisioner).
  bool provision(const api::PersistentVolumeClaim& claim, const std::string& node,
                 const Emit& emit);

  StaticClusterListers& listers_;
  NodeLabels nodeLabels_;
  std::map<std::string, api::PersistentVolume> provisioned_;
  // What changed, by (namespace, name).
  std::set<std::pair<std::string, std::string>> volumes_, claims_, capacities_;
};

}  // namespace ksched::sim
