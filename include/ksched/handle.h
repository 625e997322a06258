// Handle: what the framework offers plugins, given to their factories' create.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <ksched/api/features.h>
#include <ksched/cluster_api.h>
#include <ksched/cluster_event.h>
#include <ksched/cycle_state.h>
#include <ksched/extender.h>
#include <ksched/listers.h>
#include <ksched/node_info.h>
#include <ksched/object_watch.h>
#include <ksched/plugin_metrics.h>
#include <ksched/status.h>

namespace ksched::api {
struct ObjectReference;
}

namespace ksched {

// Records Kubernetes Events. Asynchronous and rate-limited: never blocks the caller; repeats
// of the same (object, type, reason, message) are aggregated into one Event with a count.
class EventRecorder {
 public:
  virtual ~EventRecorder() = default;
  // type: "Normal" or "Warning"; reason: e.g. "Scheduled", "FailedScheduling", "Preempted";
  // action: e.g. "Binding", "Scheduling", "Preempting".
  virtual void event(const api::Pod& regarding, std::string_view type, std::string_view reason,
                     std::string_view action, std::string message) = 0;
  // The same about another object (a PodGroup): `regarding` needs apiVersion, kind, namespace,
  // name and uid. Recorders that only know pods ignore it.
  virtual void eventFor(const api::ObjectReference& /*regarding*/, std::string_view /*type*/,
                        std::string_view /*reason*/, std::string_view /*action*/,
                        std::string /*message*/) {}
};

// Pod events as the scheduler's pod informer delivers them: every pod of the cluster, bound or
// not, whatever its scheduler, before the scheduler's cache and queue see the event (a plugin
// knows a pod before the pod can be scheduled). On the informer's thread, in order: quick, no
// apiserver calls, and never call Handle::activate() while holding a lock that the plugin's
// QueueSort less() takes.
struct PodEventHandlers {
  std::function<void(const PodPtr&)> onAdd;
  std::function<void(const PodPtr& oldPod, const PodPtr& newPod)> onUpdate;
  std::function<void(const PodPtr&)> onDelete;
};

// A pod held at Permit. Thread-safe.
class WaitingPod {
 public:
  virtual ~WaitingPod() = default;
  [[nodiscard]] virtual const api::Pod& pod() const = 0;
  // Lifts `plugin`'s wait; the pod proceeds once no plugin still waits.
  virtual void allow(std::string_view plugin) = 0;
  virtual void reject(std::string_view plugin, std::string message) = 0;
};

// Runs work over indices on a fixed pool of `parallelism` threads.
class Parallelizer {
 public:
  virtual ~Parallelizer() = default;
  [[nodiscard]] virtual int parallelism() const = 0;
  // Calls fn(i) for every i in [0, n) over the pool (short jobs: the calling thread alone); returns
  // when all are done or, once `stop()` returned true, as soon as the running calls finish.
  virtual void until(int n, const std::function<void(int)>& fn,
                     const std::function<bool()>& stop = nullptr) = 0;
};

class Handle {
 public:
  virtual ~Handle() = default;
  // The current cycle's snapshot (valid during a cycle, on the scheduling thread).
  [[nodiscard]] virtual const NodeInfoLister& snapshot() const = 0;
  // Namespaces, workloads, PDBs and storage objects (informer-backed).
  [[nodiscard]] virtual const ClusterListers& listers() const = 0;
  // The apiserver, typed (cluster_api.h): binder threads and a plugin's own threads only.
  // nullptr without one (unit tests, explain).
  [[nodiscard]] virtual ClusterApi* api() = 0;
  [[nodiscard]] virtual EventRecorder& eventRecorder() = 0;
  [[nodiscard]] virtual Parallelizer& parallelizer() = 0;
  // The scheduler metrics a plugin records itself (plugin_metrics.h); without a metrics registry,
  // one that records nothing.
  [[nodiscard]] virtual PluginMetrics& metrics() {
    static PluginMetrics none;
    return none;
  }
  // The profile's feature gates (the scheduler's --feature-gates). A plugin reads what it needs
  // at construction; they do not change afterwards. A Handle that does not say has the defaults.
  [[nodiscard]] virtual const features::Gates& features() const {
    static const features::Gates kDefaults;
    return kDefaults;
  }
  // nullptr when no pod with that uid waits at Permit.
  [[nodiscard]] virtual std::shared_ptr<WaitingPod> getWaitingPod(std::string_view uid) = 0;
  virtual void iterateWaitingPods(const std::function<void(WaitingPod&)>& fn) = 0;

  // Moves these pods (by uid) from the backoff or unschedulable queue to activeQ through the
  // PreEnqueue plugins (upstream Handle.Activate); pods not queued are ignored. Thread-safe;
  // must not be called from a PreEnqueue plugin.
  virtual void activate(const std::vector<PodPtr>& /*pods*/) {}

  // The scheduler cache's current state of one node (not a cycle's snapshot): its pods bound or
  // assumed. A copy, made under the cache's lock: thread-safe, meant for QueueingHints (call it
  // once per hint). nullptr for an unknown node, or without a cache (unit tests, validation).
  [[nodiscard]] virtual std::shared_ptr<const NodeInfo> currentNodeInfo(
      std::string_view /*nodeName*/) const {
    return nullptr;
  }

  // Registers pod event handlers. Call it from the plugin factory's create: handlers registered
  // later are not called. Where no informer runs (explain, unit tests) the handlers are never
  // called.
  virtual void addPodEventHandlers(PodEventHandlers /*handlers*/) {}

  // Lists and watches `what` for the plugin (object_watch.h); `handlers` may be empty. Call it
  // from the factory's create: the scheduler waits for the watch to sync before it schedules, so a
  // collection the apiserver does not serve (a CRD not installed) keeps the scheduler from
  // starting, with the reason in the log. Where nothing runs (explain, unit tests)
  // the store is empty and synced, and the handlers are never called.
  [[nodiscard]] virtual std::shared_ptr<const ObjectStore> watchObjects(
      const ObjectWatch& /*what*/, ObjectEventHandlers /*handlers*/) {
    return std::make_shared<EmptyObjectStore>();
  }

  // Tells the queue that objects the plugin watches (watchObjects) changed: pending pods whose
  // rejecting plugins registered `event` are moved as their hints say, as for the kinds the
  // scheduler watches itself. Call it from the watch's handlers. Where nothing runs it is ignored.
  virtual void clusterEvent(const ClusterEvent& /*event*/, const EventObject& /*oldObj*/,
                            const EventObject& /*newObj*/) {}

  // One object shared by the plugins of every profile of this scheduler (state that must be
  // one per process, such as the devices DRA has handed out): the first call with `key`
  // creates it with `make`, later calls return that one. Thread-safe. Without a scheduler
  // (unit tests) every call makes a new one.
  template <typename T>
  [[nodiscard]] std::shared_ptr<T> shared(std::string_view key,
                                          const std::function<std::shared_ptr<T>()>& make) {
    return std::static_pointer_cast<T>(
        sharedObject(key, [&] { return std::static_pointer_cast<void>(make()); }));
  }
  [[nodiscard]] virtual std::shared_ptr<void> sharedObject(
      std::string_view /*key*/, const std::function<std::shared_ptr<void>()>& make) {
    return make();
  }

  // Pods nominated to `nodeName` (waiting for preemption victims to leave), any priority.
  [[nodiscard]] virtual std::vector<PodInfoPtr> nominatedPodsForNode(
      const std::string& nodeName) const = 0;
  // Plugin runners for PostFilter plugins that simulate (upstream PluginsRunner): the
  // profile's Filter plugins with nominated pods of priority >= the pod's counted first, and the
  // PreFilter extensions.
  [[nodiscard]] virtual Status runFilterPluginsWithNominatedPods(const CycleState& state,
                                                                 const api::Pod& pod,
                                                                 const NodeInfo& node) const = 0;
  virtual Status runPreFilterExtensionAddPod(CycleState& state, const api::Pod& pod,
                                             const PodInfo& toAdd, const NodeInfo& node) const = 0;
  virtual Status runPreFilterExtensionRemovePod(CycleState& state, const api::Pod& pod,
                                                const PodInfo& toRemove,
                                                const NodeInfo& node) const = 0;

  // Runs `task` off the scheduling thread: a plugin's own work that must not hold the cycle
  // (preemption deleting its victims). The scheduler runs it on a pool it drains at shutdown
  // before Plugin::close(); `ksched simulate` runs it on its one thread, after the cycle that
  // handed it on. False (the task dropped) when shutting down. This default runs it at once.
  virtual bool runAsync(std::function<void()> task) {
    task();
    return true;
  }

  // A seed for a plugin's own random draws (preemption's first candidate node): random, or the
  // one `ksched simulate --seed` sets so that its runs repeat.
  [[nodiscard]] virtual uint64_t randomSeed() { return std::random_device{}(); }

  // True where the scheduler runs its cycles on the caller's thread over a cluster that changes
  // only as they change it (`ksched simulate`, `ksched advise`): a plugin starts no thread of
  // its own there, and reads what it would refresh in the background on the cycle's thread.
  [[nodiscard]] virtual bool synchronous() const { return false; }

  // The configured extenders (<ksched/extender.h>), shared by every profile, in configuration
  // order; empty when none are configured.
  [[nodiscard]] virtual const ExtenderList& extenders() const {
    static const ExtenderList kNone;
    return kNone;
  }
};

}  // namespace ksched
