// The selector of the pods "of the same workload" as a pod, derived from the Services and
// controllers that select it (upstream framework/plugins/helper/spread.go). Shared by
// PodTopologySpread's default constraints, SelectorSpread and ServiceAffinity.
//
// Functions here only read `listers` (thread-safe); each call lists the pod's namespace again.
#pragma once

#include <ksched/api/pod.h>
#include <ksched/api/selectors.h>
#include <ksched/listers.h>

namespace ksched::plugins::helper {

// Upstream GetPodServices: the Services of the pod's namespace whose selector matches the pod's
// labels. A Service without a selector selects nothing; an empty selector selects every pod.
[[nodiscard]] ObjectList<api::Service> podServices(const api::Pod& pod,
                                                   const ClusterListers& listers);

// Upstream DefaultSelector (current): the union of the selectors of the Services that select the
// pod, ANDed with the selector of its controller (ReplicationController, ReplicaSet or
// StatefulSet, found by name through its controller owner reference). Everything when nothing
// selects the pod.
[[nodiscard]] api::Selector defaultSelector(const api::Pod& pod, const ClusterListers& listers);

// v1.20's DefaultSelector (SelectorSpread): the union of the selectors of the Services and of
// the ReplicationControllers that select the pod, ANDed with the selectors of every ReplicaSet
// and StatefulSet that selects it. Controllers are found by their selector matching the pod's
// labels, not by owner reference (v1.20's GetPodControllers / GetPodReplicaSets /
// GetPodStatefulSets): a pod without labels has none, a controller with an empty selector
// selects nothing, and one ReplicaSet (StatefulSet) with an invalid selector in the namespace
// drops all ReplicaSets (StatefulSets). Everything when nothing selects the pod.
[[nodiscard]] api::Selector legacyDefaultSelector(const api::Pod& pod,
                                                  const ClusterListers& listers);

}  // namespace ksched::plugins::helper
