// NodeInfo: a node and the aggregates the scheduler needs about it, kept up to date on every
// pod add/remove so that no cycle recomputes them.
//
// Ownership: the scheduler cache owns the live NodeInfos; a Snapshot holds immutable copies
// for one cycle (copied only when `generation()` changed). Plugins see `const NodeInfo&`.
// Not thread-safe for writes; concurrent const reads are fine.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <ksched/api/features.h>
#include <ksched/api/node.h>
#include <ksched/api/pod.h>
#include <ksched/api/resources.h>
#include <ksched/helper/node_declared_features.h>

namespace ksched {

using PodPtr = std::shared_ptr<const api::Pod>;
using NodePtr = std::shared_ptr<const api::Node>;

// The next value of the one process-wide generation counter (atomic, thread-safe). Every
// NodeInfo change takes a fresh value, so generations increase across all NodeInfos.
[[nodiscard]] int64_t nextGeneration() noexcept;

// A pod with what the scheduler precomputes about it once (not per node, not per cycle).
// hasAffinity: spec.affinity.podAffinity or podAntiAffinity has at least one required or
// preferred term. hasRequiredAntiAffinity: podAntiAffinity has a required term.
struct PodInfo {
  // `gates`: the scheduler's feature gates, which say how the requests are counted.
  PodInfo(PodPtr p, const features::Gates& gates);

  PodPtr pod;
  // As the node counts the pod (api::nodePodRequests): the effective requests, pod-level
  // requests and in-place resize status included, and cpu / memory with the 100m / 200Mi
  // defaults for scoring.
  api::Resource requests;
  int64_t nonZeroMilliCPU = 0;
  int64_t nonZeroMemory = 0;
  bool hasAffinity = false;              // any pod affinity or anti-affinity term
  bool hasRequiredAntiAffinity = false;  // required anti-affinity terms
};
using PodInfoPtr = std::shared_ptr<const PodInfo>;

// Host ports in use: ip -> {(protocol, port)}. "0.0.0.0" conflicts with every IP.
// An empty ip means "0.0.0.0", an empty protocol means "TCP"; ports <= 0 are ignored by add,
// remove and conflicts. size() counts distinct (ip, protocol, port) entries.
class HostPortInfo {
 public:
  void add(std::string_view ip, std::string_view protocol, int32_t port);
  void remove(std::string_view ip, std::string_view protocol, int32_t port);
  // True if (ip, protocol, port) conflicts with a port in use (upstream CheckConflict).
  [[nodiscard]] bool conflicts(std::string_view ip, std::string_view protocol, int32_t port) const;
  [[nodiscard]] size_t size() const;

 private:
  // (protocol, port) -> count, per ip; counts so two pods using the same port both need removal.
  std::map<std::string, std::map<std::pair<std::string, int32_t>, int>, std::less<>> ports_;
};

struct ImageStateSummary {
  int64_t size = 0;      // bytes
  int32_t numNodes = 0;  // nodes in the cluster that have this image
};

class NodeInfo {
 public:
  NodeInfo() = default;
  explicit NodeInfo(NodePtr node) { setNode(std::move(node)); }
  // A NodeInfo for pods bound to `nodeName` before the node itself is known (node() == nullptr).
  explicit NodeInfo(std::string nodeName) : name_(std::move(nodeName)) {}

  // nullptr when only pods referencing this node name are known (node not seen yet or deleted).
  [[nodiscard]] const api::Node* node() const noexcept { return node_.get(); }
  [[nodiscard]] const NodePtr& nodePtr() const noexcept { return node_; }
  [[nodiscard]] const std::string& name() const noexcept { return name_; }

  [[nodiscard]] const std::vector<PodInfoPtr>& pods() const noexcept { return pods_; }
  [[nodiscard]] const std::vector<PodInfoPtr>& podsWithAffinity() const noexcept {
    return podsWithAffinity_;
  }
  [[nodiscard]] const std::vector<PodInfoPtr>& podsWithRequiredAntiAffinity() const noexcept {
    return podsWithRequiredAntiAffinity_;
  }
  // Sum of the pods' effective requests.
  [[nodiscard]] const api::Resource& requested() const noexcept { return requested_; }
  // Same with the 100m / 200Mi defaults for pods that request nothing (used by scoring);
  // cpu and memory only, the other fields stay zero (upstream NonZeroRequested).
  [[nodiscard]] const api::Resource& nonZeroRequested() const noexcept { return nonZeroRequested_; }
  [[nodiscard]] const api::Resource& allocatable() const noexcept { return allocatable_; }
  // status.capacity's cpu (millicores) and memory (bytes), 0 where the node does not say:
  // scheduling uses allocatable; load-aware scoring reads utilization as a share of capacity.
  [[nodiscard]] int64_t capacityMilliCPU() const noexcept { return capacityMilliCPU_; }
  [[nodiscard]] int64_t capacityMemory() const noexcept { return capacityMemory_; }
  [[nodiscard]] const HostPortInfo& usedPorts() const noexcept { return usedPorts_; }
  // Images on this node: every name of each image -> summary (numNodes filled by the cache).
  [[nodiscard]] const std::map<std::string, ImageStateSummary, std::less<>>& imageStates()
      const noexcept {
    return imageStates_;
  }
  // PVCs referenced by the pods on this node: "<namespace>/<claimName>" -> number of pods
  // referencing it (persistentVolumeClaim volumes and the claims of generic ephemeral
  // volumes; upstream PVCRefCounts). Entries are removed when their count reaches zero.
  [[nodiscard]] const std::map<std::string, int, std::less<>>& pvcRefCounts() const noexcept {
    return pvcRefCounts_;
  }
  // The node's status.declaredFeatures known to the registry (helper/node_declared_features.h),
  // computed once per node update; empty without a node.
  [[nodiscard]] plugins::helper::FeatureSet declaredFeatures() const noexcept {
    return declaredFeatures_;
  }
  // Bumped on every change; the snapshot copies a NodeInfo only when this moved.
  [[nodiscard]] int64_t generation() const noexcept { return generation_; }

  // Sets name, allocatable, declaredFeatures and imageStates (every name of every image -> its
  // size; numNodes kept for names already present, else 0). nullptr is removeNode().
  void setNode(NodePtr node);
  // Keeps the name and the pods (they stay accounted until deleted); clears allocatable,
  // declaredFeatures and imageStates.
  void removeNode();
  // Accounts the pod: requests, non-zero requests, host ports of its containers and sidecars,
  // affinity lists, PVC references. The caller ensures a uid is added at most once.
  void addPod(PodInfoPtr pod);
  // Removes by uid, undoing exactly what addPod accounted; false when not found.
  bool removePod(std::string_view uid);
  // Replaces imageStates (bumps the generation).
  void setImageStates(std::map<std::string, ImageStateSummary, std::less<>> states);
  // Sets numNodes of one image if present. Does NOT bump the generation: numNodes is
  // cluster-wide bookkeeping the cache writes into clones it hands to a snapshot.
  void setImageNumNodes(std::string_view image, int32_t numNodes);
  // The pod with that uid, or nullptr.
  [[nodiscard]] const PodInfo* findPod(std::string_view uid) const noexcept;

  [[nodiscard]] std::shared_ptr<NodeInfo> clone() const {
    return std::make_shared<NodeInfo>(*this);
  }

  // Test hook: sets the generation.
  void setGenerationForTest(int64_t g) { generation_ = g; }

 private:
  void bump();

  NodePtr node_;
  std::string name_;
  std::vector<PodInfoPtr> pods_;
  std::vector<PodInfoPtr> podsWithAffinity_;
  std::vector<PodInfoPtr> podsWithRequiredAntiAffinity_;
  api::Resource requested_;
  api::Resource nonZeroRequested_;
  api::Resource allocatable_;
  int64_t capacityMilliCPU_ = 0;
  int64_t capacityMemory_ = 0;
  plugins::helper::FeatureSet declaredFeatures_;
  HostPortInfo usedPorts_;
  std::map<std::string, ImageStateSummary, std::less<>> imageStates_;
  std::map<std::string, int, std::less<>> pvcRefCounts_;
  int64_t generation_ = 0;
};

// The node-list view plugins get from the cycle's snapshot.
class NodeInfoLister {
 public:
  virtual ~NodeInfoLister() = default;
  // All nodes in the snapshot's order (zones interleaved).
  [[nodiscard]] virtual const std::vector<const NodeInfo*>& list() const = 0;
  [[nodiscard]] virtual const std::vector<const NodeInfo*>& havePodsWithAffinityList() const = 0;
  [[nodiscard]] virtual const std::vector<const NodeInfo*>& havePodsWithRequiredAntiAffinityList()
      const = 0;
  // nullptr when unknown.
  [[nodiscard]] virtual const NodeInfo* get(std::string_view nodeName) const = 0;
  // True when at least one pod on a node of this snapshot references the PVC
  // "<namespace>/<claimName>" (upstream StorageInfoLister.IsPVCUsedByPods). O(1).
  [[nodiscard]] virtual bool isPVCUsedByPods(std::string_view key) const = 0;

  // Incremental reading, for plugins that keep per-node results from one cycle to the next
  // (PodTopologySpread's PreScore). listVersion() names the contents of list() (which NodeInfo
  // in which slot), unique in the process; 0 when this lister does not track its changes.
  [[nodiscard]] virtual int64_t listVersion() const { return 0; }
  // Appends to `slots` the slots of list() whose NodeInfo was replaced since listVersion()
  // returned `since` (a slot may be named more than once). False when it cannot tell: an
  // unknown or too old version, or list() was rebuilt since (nodes added, removed or
  // reordered); any slot may then hold another NodeInfo.
  [[nodiscard]] virtual bool changedSlotsSince(int64_t /*since*/,
                                               std::vector<size_t>& /*slots*/) const {
    return false;
  }
};

}  // namespace ksched
