// A QueueingHint shared by the volume plugins: a claim added or updated helps a pod only if the
// pod names it in a persistentVolumeClaim volume.
#pragma once

#include <ksched/cluster_event.h>

namespace ksched::plugins {

[[nodiscard]] QueueingHint queueIfClaimOfPod(const api::Pod& pod, const EventObject& newObj);

}  // namespace ksched::plugins
