// Why a Filter plugin rejected a node, in words a person can act on: the untolerated taint (and
// why a Gt/Lt toleration did not tolerate it), the node declared feature the pod needs, the
// node-selector key or affinity term that does not match, the host port and the pod holding it,
// the spread constraint and its skew, the (anti-)affinity term and the pod behind it, the
// volume in conflict. Upstream's reasons name none of these; explain (toTable, toJson) and the
// diagnosis annotation show these details next to them.
//
// The details are recomputed here, after the fact, from the pod, the node's NodeInfo, the
// snapshot and the cluster's listers, with the SDK's helpers the plugins decide with
// (<ksched/api/taints.h>, <ksched/api/selectors.h>, <ksched/helper/node_affinity.h>,
// <ksched/helper/node_declared_features.h>, <ksched/helper/volume_conflict.h>): no Filter
// computes them, so scheduling pays nothing. What they do not see: pods nominated to the node (a
// cycle counts them in Filter), the profile's plugin args other than defaults (NodeAffinity's
// addedAffinity is named, not shown; PodTopologySpread's default constraints get no detail), and
// without `listers` namespaceSelectors with requirements (no namespace is selected) and PVC/PV
// lookups.
//
// Thread-safe: reads only. Cost: per call O(pods on the node) for most plugins; O(pods in the
// snapshot) for PodTopologySpread, InterPodAffinity and a ReadWriteOncePod conflict.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <ksched/api/features.h>
#include <ksched/api/pod.h>
#include <ksched/listers.h>
#include <ksched/node_info.h>

namespace ksched::scheduler {

// The details of `plugin`'s rejection of `node` for `pod`, one sentence each, in a stable order;
// empty for a plugin it knows nothing about (NodeResourcesFit has its shortfalls instead), or
// when the cause is not found again (the node changed, or a nominated pod caused it).
[[nodiscard]] std::vector<std::string> rejectionDetails(std::string_view plugin,
                                                        const api::Pod& pod, const NodeInfo& node,
                                                        const NodeInfoLister& snapshot,
                                                        const ClusterListers* listers = nullptr,
                                                        const features::Gates& gates = {});

}  // namespace ksched::scheduler
