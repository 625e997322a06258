// The cluster one simulation run schedules into, in memory: the scheduler core's ClusterApi.
// Bindings, deletions (preemption's victims, recreated as pending copies as their controller
// would), status patches and plugins' writes to the objects they watch (WatchedObjects) land
// here, and what changed is fed back to the core as an informer would: queued while the core
// is in a call, delivered by deliverFeed() once it has returned.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <ksched/cluster_api.h>
#include <ksched/sim.h>

#include "scheduler/scheduler_core.h"
#include "sim/volume_controller.h"
#include "sim/watched_objects.h"

namespace ksched::sim {

// "<namespace>/<name>".
[[nodiscard]] std::string keyOf(const api::Pod& pod);

class MemoryCluster final : public ClusterApi {
 public:
  // Over `cluster` (its pods are not taken in: insert() them), which must outlive this object.
  // With `victimsBecomePending`, a deleted pod comes back as a pending copy whose uid is its own
  // with "-r<n>", n counted in `recreated` (kept by the caller across runs, so uids stay
  // unique); `onRecreated` then gets the copy's uid.
  // `listers` (the storage objects plugins read) get what the PV controller and the
  // provisioners would do with VolumeBinding's writes (VolumeController).
  MemoryCluster(const Cluster& cluster, bool victimsBecomePending, uint64_t& recreated,
                std::function<void(const std::string& uid)> onRecreated,
                StaticClusterListers& listers);

  // The core the changes are fed to; set once it is built, before anything changes.
  void feedTo(scheduler::SchedulerCore& core) { core_ = &core; }
  // Runs the changes queued so far (and those they queue) on this thread.
  void deliverFeed();

  // Environment::watchObjects: a watch of the objects of Cluster::others under `w`'s paths.
  std::shared_ptr<const ObjectStore> watch(const ObjectWatch& w, ObjectEventHandlers handlers);
  // Gives every watch its initial objects (WatchedObjects::replayAdds).
  void replayAdds() { watched_.replayAdds(); }

  // Takes in `pod` (its claims from templates generated first); returns the version stored, to
  // feed to the core.
  PodPtr insert(const PodPtr& pod);
  // A uid no pod of the cluster has: "sim-<namespace>-<name>[-<n>]".
  [[nodiscard]] std::string freeUid(const api::Pod& pod) const;
  [[nodiscard]] bool contains(const std::string& uid) const;

  // The latest version of a pod (a deleted one: the last seen); nullptr for an unknown uid.
  [[nodiscard]] PodPtr latest(const std::string& uid) const;
  // The pod was deleted (a victim).
  [[nodiscard]] bool gone(const std::string& uid) const;
  // Bound to a node now.
  [[nodiscard]] bool placed(const std::string& uid) const;
  // "<namespace>/<name>" of a pod ever held, or "".
  [[nodiscard]] std::string key(const std::string& uid) const;
  // The devices Dynamic Resource Allocation gave `pod`'s claims (WatchedObjects::devicesOf).
  [[nodiscard]] std::vector<std::string> devicesOf(const api::Pod& pod) const;
  // The pods deleted, in order, by uid (Victim::preemptor left empty).
  [[nodiscard]] std::vector<std::pair<std::string, Victim>> victims() const;
  // Kinds of Cluster::others no watch read, with how many objects each.
  [[nodiscard]] std::vector<std::pair<std::string, size_t>> unreadKinds() const;

  // Writes the pods, in the order they came, and the watched objects into `out`.
  void writeBack(Cluster& out) const;

  // ---- ClusterApi ----
  ApiResult bindPod(const api::Pod& pod, const std::string& nodeName) override;
  ApiResult deletePod(const api::Pod& pod) override;
  ApiResult patchPodStatus(const api::Pod& pod, const nlohmann::json& patch,
                           std::string_view contentType) override;
  // A pod's path ("/api/v1/namespaces/<ns>/pods/<name>", VolumeBinding's PreBind asks), else
  // the watched objects.
  ApiResult get(const std::string& path, nlohmann::json* out) override;
  // PersistentVolumes and claims go to the VolumeController, the rest to the watched objects.
  ApiResult patch(const std::string& path, const nlohmann::json& patch, nlohmann::json* out,
                  std::string_view contentType) override;
  ApiResult create(const std::string& path, const nlohmann::json& object,
                   nlohmann::json* out) override;
  ApiResult remove(const std::string& path, const nlohmann::json& preconditions) override;

 private:
  // Queues a change for deliverFeed(); mu_ held.
  void enqueue(std::function<void()> change) { feed_.push_back(std::move(change)); }
  // WatchedObjects' way to queue a change.
  [[nodiscard]] std::function<void(std::function<void()>)> deliverer();

  const Cluster& cluster_;
  const bool victimsBecomePending_;
  uint64_t& recreated_;
  const std::function<void(const std::string&)> onRecreated_;
  scheduler::SchedulerCore* core_ = nullptr;

  mutable std::mutex mu_;
  std::set<std::string> watchedKinds_;  // keys of Cluster::others a plugin watches
  WatchedObjects watched_;              // what plugins watch, and their writes to it
  VolumeController volumes_;            // PV controller and provisioners
  std::unordered_map<std::string, std::string> uidByKey_;                // namespace/name -> uid
  std::unordered_map<std::string_view, const api::Labels*> nodeLabels_;  // filled on first use
  std::unordered_map<std::string, PodPtr> pods_;         // the cluster's pods by uid
  std::unordered_map<std::string, PodPtr> lastSeen_;     // deleted pods
  std::vector<std::string> order_;                       // uids in the order the pods came
  std::unordered_set<std::string> gone_;                 // uids deleted
  std::unordered_map<std::string, std::string> keys_;    // uid -> namespace/name
  std::vector<std::pair<std::string, Victim>> victims_;  // (victim uid, victim)
  std::vector<std::function<void()>> feed_;
};

}  // namespace ksched::sim
