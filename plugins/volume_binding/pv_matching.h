// The volume-matching rules VolumeBinding applies per node (upstream
// component-helpers/storage/volume pv_helpers.go and the scheduler binder's helpers). Pure
// functions over immutable objects: thread-safe.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <ksched/api/meta.h>
#include <ksched/api/storage.h>

namespace ksched::plugins::volume_binding {

using PVCPtr = std::shared_ptr<const api::PersistentVolumeClaim>;
using PVPtr = std::shared_ptr<const api::PersistentVolume>;

// Provisioner name of classes that cannot provision (local volumes).
inline constexpr std::string_view kNotSupportedProvisioner = "kubernetes.io/no-provisioner";
// Set on a PV whose claimRef the scheduler (or the PV controller) wrote.
inline constexpr std::string_view kAnnBoundByController = "pv.kubernetes.io/bound-by-controller";

// Upstream CheckNodeAffinity: a PV without required node affinity fits every node; otherwise
// one of its terms must match the node's labels. Like upstream, only labels are consulted, so
// a term with matchFields never matches.
[[nodiscard]] bool pvNodeAffinityMatches(const api::PersistentVolume& pv,
                                         const api::Labels& nodeLabels);

// claimRef names the claim (namespace, name) and, when it carries a uid, the claim's uid.
[[nodiscard]] bool isVolumeBoundToClaim(const api::PersistentVolume& pv,
                                        const api::PersistentVolumeClaim& claim);

// Every access mode the claim asks for is offered by the PV.
[[nodiscard]] bool accessModesMatch(const api::PersistentVolumeClaim& claim,
                                    const api::PersistentVolume& pv);

// A claim is fully bound once spec.volumeName is set and the PV controller marked the binding
// complete (annotation pv.kubernetes.io/bind-completed).
[[nodiscard]] bool isClaimFullyBound(const api::PersistentVolumeClaim& claim);

// The claim's storage request (zero when absent).
[[nodiscard]] api::Quantity requestedStorage(const api::PersistentVolumeClaim& claim);

// Upstream FindMatchingVolume on the scheduler path: among `volumes` (the PVs of the claim's
// class), the PV pre-bound to the claim if any (nullptr when that PV does not fit the node),
// else the smallest PV that is Available, not being deleted, not claimed by another claim, not
// in `excluded` (PV names), of the claim's class, with capacity >= request, the same volume
// mode, labels matching the claim's selector, node affinity matching `nodeLabels`, and every
// requested access mode.
[[nodiscard]] PVPtr findMatchingVolume(const api::PersistentVolumeClaim& claim,
                                       const std::vector<PVPtr>& volumes,
                                       const api::Labels& nodeLabels,
                                       const std::map<std::string, PVPtr, std::less<>>& excluded);

// Upstream GetBindVolumeToClaim: the PV with claimRef set to the claim (kind, apiVersion,
// namespace, name, uid, resourceVersion) and the bound-by-controller annotation when the PV was
// not already bound to it; `dirty` says whether anything changed.
[[nodiscard]] PVPtr bindVolumeToClaim(const PVPtr& pv, const api::PersistentVolumeClaim& claim,
                                      bool& dirty);

// Numeric comparison of two resourceVersions (<0, 0, >0); unparsable versions compare equal.
[[nodiscard]] int compareResourceVersion(std::string_view a, std::string_view b);

}  // namespace ksched::plugins::volume_binding
