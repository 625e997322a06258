// Cache: the scheduler's view of nodes and of the pods placed on them, including pods the
// scheduler has assumed onto a node before the apiserver confirmed the binding.
//
// Pod states (upstream pkg/scheduler/internal/cache):
//
//    +-------------------------------------------+  +----+
//    |                            Add            |  |    |
//    |                                           |  |    | Update
//    +      Assume                Add            v  v    |
// Initial +--------> Assumed +------------+---> Added <--+
//    ^                +   +               |       +
//    |                |   |               |       |
//    |                |   |           Add |       | Remove
//    |                |   |               |       |
//    |                |   |               +       |
//    +----------------+   +-----------> Expired   +----> Deleted
//          Forget             Expire
//
//   - Assumed: assumePod() put the pod on its chosen node (spec.nodeName) right after the
//     scheduling cycle, so the next cycles see its resources in use.
//   - finishBinding() starts the assumed pod's TTL; cleanupExpiredAssumedPods() expires it
//     after the TTL (the Add event never came) and frees its resources. A pod whose binding is
//     not finished never expires.
//   - Added: the informer saw the pod bound (addPod). An assumed pod is confirmed (moved if the
//     apiserver's node differs from the assumed one); an expired pod is simply added again.
//   - Remove frees the pod in any state; Forget (binding failed) only applies to assumed pods.
//
// Nodes: a pod may name a node the cache has not seen (or one already deleted). Its NodeInfo
// then has node() == nullptr and still accounts the pods; it is dropped when its last pod
// goes. Such NodeInfos are counted by nodeCount() but never appear in snapshots.
//
// Images: the cache tracks image name -> nodes having it; snapshot copies of NodeInfos carry
// imageStates[name].numNodes as of the updateSnapshot call (see CacheOptions).
//
// Thread-safety: every public method is thread-safe (one mutex). Informer threads call the
// pod/node methods, the scheduling thread calls assume/forget/finishBinding/updateSnapshot.
// Returned PodInfoPtrs are immutable and shared.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include <ksched/api/features.h>
#include <ksched/node_info.h>
#include <ksched/status.h>

#include "cache/node_tree.h"
#include "cache/snapshot.h"

namespace ksched::cache {

struct CacheOptions {
  using Clock = std::chrono::steady_clock;
  // How long an assumed pod whose binding finished may wait for its Add event before it
  // expires. Zero: never expire.
  std::chrono::nanoseconds assumedPodTTL = std::chrono::minutes(15);
  // Time source for finishBinding() and cleanupExpiredAssumedPods(); steady_clock by default.
  // Called with the cache's lock held: it must not call back into the cache.
  std::function<Clock::time_point()> clock;
  // When an image's set of nodes changes, re-copy into the next snapshot every other node
  // having that image so its numNodes is current. Off: numNodes is as of each NodeInfo's last
  // copy (upstream behaviour; cheaper when nodes with common images come and go).
  bool refreshImageNumNodes = true;
  // The scheduler's feature gates: how each pod's requests count on its node (PodInfo).
  features::Gates features;
};

class Cache {
 public:
  using Clock = CacheOptions::Clock;

  explicit Cache(CacheOptions options = {});
  ~Cache();
  Cache(const Cache&) = delete;
  Cache& operator=(const Cache&) = delete;

  // ---- Pods ----
  // Puts the pod on pod->pod->spec.nodeName as Assumed. Error if the uid is already known or
  // the node name is empty.
  Status assumePod(PodInfoPtr pod);
  // The binding of an assumed pod finished: its TTL starts now. No-op for other pods (the Add
  // event may have confirmed it already).
  void finishBinding(std::string_view uid);
  // Undoes assumePod (binding failed). Error if the pod is unknown or not Assumed.
  Status forgetPod(std::string_view uid);
  // A bound pod seen by the informer. Confirms an assumed pod (moving it when the node differs
  // from the assumed one), re-adds an expired one, adds a new one. Error if already Added.
  Status addPod(PodPtr pod);
  // Replaces an Added pod (moving it if spec.nodeName changed). Error if unknown or Assumed.
  Status updatePod(const PodPtr& oldPod, PodPtr newPod);
  // Removes the pod (by uid) from the node the cache has it on, in any state. Error if unknown.
  Status removePod(const api::Pod& pod);
  [[nodiscard]] bool isAssumed(std::string_view uid) const;
  // The cached pod, or nullptr.
  [[nodiscard]] PodInfoPtr getPod(std::string_view uid) const;
  // A copy of the node's current NodeInfo (nullptr if unknown or only a placeholder for pods
  // of a deleted node). For QueueingHints, which must not read the cycle's snapshot.
  [[nodiscard]] std::shared_ptr<const NodeInfo> nodeInfo(std::string_view name) const;

  // ---- Nodes ----
  // Adds the node, or replaces it when known (then like updateNode).
  void addNode(NodePtr node);
  // Replaces the node (adds it when unknown). oldNode is not used: the cache's own copy of the
  // previous node is authoritative; the parameter mirrors informer update handlers.
  void updateNode(const NodePtr& oldNode, NodePtr newNode);
  // Removes the node; its NodeInfo stays (node() == nullptr) while pods remain on it.
  // Error if unknown.
  Status removeNode(const api::Node& node);

  // ---- Expiry ----
  // Expires assumed pods whose binding finished and whose deadline is before `now`. Returns
  // how many expired.
  size_t cleanupExpiredAssumedPods(Clock::time_point now);
  // Same with the configured clock.
  size_t cleanupExpiredAssumedPods();
  // Runs cleanupExpiredAssumedPods() every `period` on a background std::jthread until
  // stopCleanup() or destruction. Calling it again restarts the loop. start/stop are not
  // thread-safe against each other: call them from the cache's owner.
  void startCleanup(std::chrono::milliseconds period = std::chrono::seconds(1));
  void stopCleanup();

  // ---- Snapshot ----
  // Brings `snapshot` up to date: copies only NodeInfos changed since snapshot.generation(),
  // rebuilds the node list only when nodes were added, removed or changed zone, and the
  // affinity lists only when a node's having affinity pods changed. Returns the number of
  // NodeInfos copied. Call between cycles on the thread that owns the snapshot.
  size_t updateSnapshot(Snapshot& snapshot);

  // ---- Sizes (scheduler_cache_size{type="nodes"|"pods"|"assumed_pods"}) ----
  // NodeInfos, including those holding pods of unknown nodes.
  [[nodiscard]] size_t nodeCount() const;
  // Pods in any state (Assumed included).
  [[nodiscard]] size_t podCount() const;
  [[nodiscard]] size_t assumedPodCount() const;

 private:
  struct PodState {
    PodInfoPtr info;
    bool bindingFinished = false;
    std::optional<Clock::time_point> deadline;
  };
  struct ImageState {
    int64_t size = 0;
    std::set<std::string, std::less<>> nodes;
    int64_t changedAt = 0;  // key in imageChanges_
  };
  using NodeList = std::list<NodeInfo>;  // most recently changed first

  NodeInfo& nodeInfoFor(const std::string& name);  // creates a placeholder; moves to head
  void touch(NodeList::iterator it);
  void addPodLocked(PodInfoPtr pod, bool assumed);
  void upsertNodeLocked(NodePtr node);
  void removePodLocked(const PodInfo& pod);
  void dropIfEmpty(NodeList::iterator it);
  // Moves `nodeName` between image node sets for the images in oldNode and newNode.
  void updateImages(const std::string& nodeName, const api::Node* oldNode,
                    const api::Node* newNode);
  void imageChanged(const std::string& name, ImageState& state);
  [[nodiscard]] std::shared_ptr<const NodeInfo> copyForSnapshot(const NodeInfo& info) const;
  void cleanupLoop(const std::stop_token& stop, std::chrono::milliseconds period);

  CacheOptions options_;
  mutable std::mutex mu_;
  NodeList nodeList_;
  std::unordered_map<std::string, NodeList::iterator, StringHash, std::equal_to<>> nodes_;
  NodeTree tree_;
  int64_t treeGeneration_ = 0;  // stamped from nextGeneration() on every tree change
  mutable std::shared_ptr<const NodeInfo> lastCopy_;  // nodeInfo()'s last answer
  std::unordered_map<std::string, PodState, StringHash, std::equal_to<>> pods_;
  std::unordered_set<std::string, StringHash, std::equal_to<>> assumedPods_;
  std::map<std::string, ImageState, std::less<>> images_;
  std::map<int64_t, std::string> imageChanges_;  // changedAt -> image name

  std::mutex cleanupMu_;
  std::condition_variable_any cleanupCv_;
  std::jthread cleanupThread_;  // last: stopped and joined before the rest is destroyed
};

}  // namespace ksched::cache
