// Whether a pod update can change the outcome of scheduling it (upstream isPodUpdated in
// scheduling_queue.go): anything but metadata.resourceVersion, metadata.generation and status
// changed. A scheduler's own status writes (PodScheduled condition, nominatedNodeName) must not
// count, otherwise every rejected pod would be retried right after its failure is reported.
//
// The comparison is the object model's (api::samePod with PodComparison::kUpdate), which reads
// every field ksched decodes but the exceptions it lists.
#pragma once

#include <ksched/api/pod.h>

namespace ksched::queue {

[[nodiscard]] bool isPodUpdated(const api::Pod& oldPod, const api::Pod& newPod);

// The status fields the effective requests of a pod on a node read changed (in-place resize:
// containers' and the pod's allocated and actual resources, the PodResizePending reason).
[[nodiscard]] bool podResizeStatusChanged(const api::Pod& oldPod, const api::Pod& newPod);

}  // namespace ksched::queue
