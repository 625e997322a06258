// VolumeBinding's account of a rejection (FilterExplainer): the Filter's decision per node,
// claim by claim, naming the claim, its PV or its class.
#include <ksched/api/storage.h>

#include "plugins/volume_binding/volume_binding.h"

namespace ksched::plugins {
namespace {

using volume_binding::PVCPtr;
using volume_binding::PVPtr;

std::string claimText(const api::PersistentVolumeClaim& c) {
  return "claim " + c.metadata.namespace_ + "/" + c.metadata.name;
}

}  // namespace

std::vector<std::string> VolumeBinding::explainRejection(const CycleState& state,
                                                         const api::Pod& /*pod*/,
                                                         const NodeInfo& nodeInfo) const {
  std::vector<std::string> out;
  const api::Node* node = nodeInfo.node();
  const volume_binding::State* st = state.read(volume_binding::kStateKey);
  if (node == nullptr || st == nullptr || st->data().skip) return out;
  const volume_binding::State::Data& s = st->data();
  const api::Labels& labels = node->metadata.labels;

  for (const PVCPtr& claim : s.boundClaims) {
    PVPtr pv = cache_.getPV(handle_.listers(), claim->spec.volumeName);
    if (!pv) {
      out.push_back(claimText(*claim) + " is bound to PV " + claim->spec.volumeName +
                    ", which does not exist");
    } else if (!volume_binding::pvNodeAffinityMatches(*pv, labels)) {
      out.push_back(claimText(*claim) + ": the node affinity of its PV " + pv->metadata.name +
                    " does not match the node");
    }
  }
  if (!out.empty()) return out;

  // Claims of delayed binding: a PV that fits, else a class that provisions on the node.
  std::map<std::string, PVPtr, std::less<>> chosen;
  static const std::vector<PVPtr> kNone;
  for (const PVCPtr& claim : s.claimsToBind) {
    auto selected = claim->metadata.annotations.find(api::kAnnSelectedNode);
    if (selected != claim->metadata.annotations.end() && selected->second != node->metadata.name) {
      out.push_back(claimText(*claim) + " is being provisioned for node " + selected->second);
      continue;
    }
    const std::string cls = api::persistentVolumeClaimClass(*claim);
    if (selected == claim->metadata.annotations.end()) {
      auto it = s.unboundVolumesByClass.find(cls);
      const std::vector<PVPtr>& pvs = it == s.unboundVolumesByClass.end() ? kNone : it->second;
      if (PVPtr pv = volume_binding::findMatchingVolume(*claim, pvs, labels, chosen)) {
        chosen.emplace(pv->metadata.name, pv);
        continue;
      }
    }
    const std::string none = selected == claim->metadata.annotations.end()
                                 ? ": no available PV of class \"" + cls + "\" matches it here"
                                 : "";
    auto sc = cls.empty() ? nullptr : handle_.listers().getStorageClass(cls);
    if (sc == nullptr) {
      out.push_back(claimText(*claim) + none + (none.empty() ? ": " : ", and ") + "its class \"" +
                    cls + "\" is not found");
    } else if (sc->provisioner.empty() ||
               sc->provisioner == volume_binding::kNotSupportedProvisioner) {
      out.push_back(claimText(*claim) + none + (none.empty() ? ": " : ", and ") + "class \"" + cls +
                    "\" does not provision volumes");
    } else if (!api::matchTopologySelectorTerms(sc->allowedTopologies, labels)) {
      out.push_back(claimText(*claim) + none + (none.empty() ? ": " : ", and ") + "class \"" + cls +
                    "\" does not provision on this node (allowedTopologies)");
    } else if (bool enough = true; !findCapacity(s, *claim, *node, enough) && !enough) {
      out.push_back(claimText(*claim) + none + (none.empty() ? ": " : ", and ") + "driver " +
                    sc->provisioner + " reports no CSIStorageCapacity of class \"" + cls +
                    "\" on this node with room for " +
                    volume_binding::requestedStorage(*claim).toString());
    }
  }
  return out;
}

}  // namespace ksched::plugins
