#include "queue/pod_update.h"

#include <string_view>

namespace ksched::queue {

bool isPodUpdated(const api::Pod& oldPod, const api::Pod& newPod) {
  return !api::samePod(oldPod, newPod, api::PodComparison::kUpdate);
}

bool podResizeStatusChanged(const api::Pod& oldPod, const api::Pod& newPod) {
  const api::PodStatus& a = oldPod.status;
  const api::PodStatus& b = newPod.status;
  auto resizeReason = [](const api::Pod& p) -> std::string_view {
    const api::PodCondition* c = p.condition(api::kPodConditionResizePending);
    return c != nullptr ? std::string_view(c->reason) : std::string_view();
  };
  return a.containerStatuses != b.containerStatuses ||
         a.initContainerStatuses != b.initContainerStatuses ||
         a.allocatedResources != b.allocatedResources || a.resources != b.resources ||
         resizeReason(oldPod) != resizeReason(newPod);
}

}  // namespace ksched::queue
