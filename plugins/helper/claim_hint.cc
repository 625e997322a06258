#include "plugins/helper/claim_hint.h"

#include <algorithm>

namespace ksched::plugins {

QueueingHint queueIfClaimOfPod(const api::Pod& pod, const EventObject& newObj) {
  const api::PersistentVolumeClaim* pvc = as<api::PersistentVolumeClaim>(newObj);
  if (pvc == nullptr) return QueueingHint::kQueue;
  if (pvc->metadata.namespace_ != pod.metadata.namespace_) return QueueingHint::kSkip;
  const bool used =
      std::any_of(pod.spec.volumes.begin(), pod.spec.volumes.end(), [&](const auto& v) {
        return v.persistentVolumeClaim && v.persistentVolumeClaim->claimName == pvc->metadata.name;
      });
  return used ? QueueingHint::kQueue : QueueingHint::kSkip;
}

}  // namespace ksched::plugins
