#include "plugins/volume_binding/pv_matching.h"

#include <algorithm>
#include <charconv>
#include <cstdint>

#include <ksched/api/selectors.h>

namespace ksched::plugins::volume_binding {

bool pvNodeAffinityMatches(const api::PersistentVolume& pv, const api::Labels& nodeLabels) {
  if (!pv.spec.nodeAffinity || !pv.spec.nodeAffinity->required) return true;
  for (const api::NodeSelectorTerm& term : pv.spec.nodeAffinity->required->nodeSelectorTerms) {
    if (term.empty() || !term.matchFields.empty()) continue;
    if (term.matches(nodeLabels, "")) return true;
  }
  return false;
}

bool isVolumeBoundToClaim(const api::PersistentVolume& pv,
                          const api::PersistentVolumeClaim& claim) {
  if (!pv.spec.claimRef) return false;
  const api::ObjectReference& ref = *pv.spec.claimRef;
  if (ref.name != claim.metadata.name || ref.namespace_ != claim.metadata.namespace_) {
    return false;
  }
  return ref.uid.empty() || ref.uid == claim.metadata.uid;
}

bool accessModesMatch(const api::PersistentVolumeClaim& claim, const api::PersistentVolume& pv) {
  return std::ranges::all_of(claim.spec.accessModes, [&](const std::string& mode) {
    return std::ranges::find(pv.spec.accessModes, mode) != pv.spec.accessModes.end();
  });
}

bool isClaimFullyBound(const api::PersistentVolumeClaim& claim) {
  return !claim.spec.volumeName.empty() &&
         claim.metadata.annotations.contains(api::kAnnBindCompleted);
}

api::Quantity requestedStorage(const api::PersistentVolumeClaim& claim) {
  auto it = claim.spec.resources.requests.find(api::kResourceStorage);
  return it == claim.spec.resources.requests.end() ? api::Quantity() : it->second;
}

namespace {

api::Quantity capacity(const api::PersistentVolume& pv) {
  auto it = pv.spec.capacity.find(api::kResourceStorage);
  return it == pv.spec.capacity.end() ? api::Quantity() : it->second;
}

}  // namespace

PVPtr findMatchingVolume(const api::PersistentVolumeClaim& claim, const std::vector<PVPtr>& volumes,
                         const api::Labels& nodeLabels,
                         const std::map<std::string, PVPtr, std::less<>>& excluded) {
  const api::Quantity requested = requestedStorage(claim);
  const std::string requestedClass = api::persistentVolumeClaimClass(claim);
  std::optional<api::Selector> selector;
  if (claim.spec.selector) selector = api::Selector::compile(*claim.spec.selector);

  PVPtr smallest;
  api::Quantity smallestQty;
  for (const PVPtr& pv : volumes) {
    if (excluded.contains(pv->metadata.name)) continue;
    const bool boundToClaim = isVolumeBoundToClaim(*pv, claim);
    if (pv->spec.claimRef && !boundToClaim) continue;
    const api::Quantity qty = capacity(*pv);
    if (qty < requested) continue;
    if (claim.spec.volumeMode != pv->spec.volumeMode) continue;
    // VolumeAttributesClass (locked on): the claim's class, or none for none; before the
    // pre-bound check, as upstream, so a PV pre-bound to the claim with another class is no match.
    if (claim.spec.volumeAttributesClassName != pv->spec.volumeAttributesClassName) continue;
    if (pv->metadata.deletionTimestamp) continue;
    const bool affinityOk = pvNodeAffinityMatches(*pv, nodeLabels);
    if (boundToClaim) return affinityOk ? pv : nullptr;
    if (pv->status.phase != api::kVolumeAvailable) continue;
    if (selector && !selector->matches(pv->metadata.labels)) continue;
    if (api::persistentVolumeClass(*pv) != requestedClass) continue;
    if (!affinityOk) continue;
    if (!accessModesMatch(claim, *pv)) continue;
    if (!smallest || smallestQty > qty) {
      smallest = pv;
      smallestQty = qty;
    }
  }
  return smallest;
}

PVPtr bindVolumeToClaim(const PVPtr& pv, const api::PersistentVolumeClaim& claim, bool& dirty) {
  dirty = false;
  const bool alreadyBound = isVolumeBoundToClaim(*pv, claim);
  auto clone = std::make_shared<api::PersistentVolume>(*pv);
  if (!pv->spec.claimRef || pv->spec.claimRef->uid != claim.metadata.uid || !alreadyBound) {
    clone->spec.claimRef = api::objectReferenceTo("v1", "PersistentVolumeClaim", claim.metadata);
    dirty = true;
  }
  if (!alreadyBound && !clone->metadata.annotations.contains(kAnnBoundByController)) {
    clone->metadata.annotations[std::string(kAnnBoundByController)] = "yes";
    dirty = true;
  }
  return clone;
}

int compareResourceVersion(std::string_view a, std::string_view b) {
  uint64_t x = 0;
  uint64_t y = 0;
  auto [pa, ea] = std::from_chars(a.data(), a.data() + a.size(), x);
  auto [pb, eb] = std::from_chars(b.data(), b.data() + b.size(), y);
  if (ea != std::errc() || eb != std::errc() || pa != a.data() + a.size() ||
      pb != b.data() + b.size()) {
    return 0;
  }
  return x < y ? -1 : (x > y ? 1 : 0);
}

}  // namespace ksched::plugins::volume_binding
