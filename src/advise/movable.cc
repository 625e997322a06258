#include "advise/movable.h"

#include <algorithm>

namespace ksched::advise {
namespace {

bool hasOwnerOfKind(const api::Pod& pod, std::string_view kind) {
  return std::ranges::any_of(pod.metadata.ownerReferences,
                             [&](const api::OwnerReference& o) { return o.kind == kind; });
}

const std::string* annotation(const api::Pod& pod, const char* key) {
  auto it = pod.metadata.annotations.find(key);
  return it == pod.metadata.annotations.end() ? nullptr : &it->second;
}

// A static pod of the kubelet (its mirror, or the pod read from a node's manifest).
bool isStaticOrMirror(const api::Pod& pod) {
  if (annotation(pod, "kubernetes.io/config.mirror") != nullptr) return true;
  const std::string* source = annotation(pod, "kubernetes.io/config.source");
  return source != nullptr && *source != "api";
}

// The first node-local volume: "emptyDir volume \"cache\"", or "".
std::string localVolume(const api::Pod& pod) {
  for (const auto& v : pod.spec.volumes) {
    if (v.emptyDir) return "emptyDir volume \"" + v.name + "\"";
    if (v.hostPath) return "hostPath volume \"" + v.name + "\"";
  }
  return "";
}

}  // namespace

Budgets::Budgets(const std::vector<api::PodDisruptionBudget>& pdbs) {
  entries_.reserve(pdbs.size());
  for (const auto& p : pdbs) entries_.push_back({p, api::Selector::compile(p.spec.selector)});
}

std::vector<const api::PodDisruptionBudget*> Budgets::covering(const api::Pod& pod) const {
  std::vector<const api::PodDisruptionBudget*> out;
  for (const auto& e : entries_) {
    if (e.pdb.metadata.namespace_ == pod.metadata.namespace_ &&
        e.selector.matches(pod.metadata.labels)) {
      out.push_back(&e.pdb);
    }
  }
  return out;
}

Verdict judge(const api::Pod& pod, const EvictionPolicy& policy, const Budgets& budgets) {
  if (isStaticOrMirror(pod)) return {Disposition::kStays, "static pod (kubelet-managed)"};
  if (hasOwnerOfKind(pod, "DaemonSet")) return {Disposition::kStays, "DaemonSet pod"};
  if (pod.metadata.deletionTimestamp) return {Disposition::kStays, "terminating"};
  const std::string* safe = annotation(pod, kSafeToEvictAnnotation);
  if (safe != nullptr && *safe == "false") {
    return {Disposition::kBlocks, std::string("annotation ") + kSafeToEvictAnnotation + "=false"};
  }
  const bool forced =
      annotation(pod, kEvictAnnotation) != nullptr || (safe != nullptr && *safe == "true");
  if (!forced) {
    if (const int32_t prio = api::podPriority(pod);
        !policy.evictSystemCriticalPods && prio >= kSystemCriticalPriority) {
      return {Disposition::kBlocks, "system-critical priority " + std::to_string(prio)};
    }
    if (pod.metadata.ownerReferences.empty()) {
      return {Disposition::kBlocks, "no controller would recreate it (no ownerReferences)"};
    }
    if (std::string local = localVolume(pod); !policy.evictLocalStoragePods && !local.empty()) {
      return {Disposition::kBlocks, "node-local storage (" + local + ")"};
    }
  }
  for (const auto* pdb : budgets.covering(pod)) {
    if (pdb->status.disruptionsAllowed < 1) {
      return {Disposition::kBlocks, "PodDisruptionBudget " + pdb->metadata.namespace_ + "/" +
                                        pdb->metadata.name + " allows no disruption now"};
    }
  }
  return {};
}

}  // namespace ksched::advise
