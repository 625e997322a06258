// Framework: the plugins of one profile, wired per extension point, and the code that runs
// each extension point (upstream frameworkruntime.frameworkImpl).
//
// Built once at start-up from a validated profile; construction throws FrameworkError with
// every wiring problem as "<field path>: <what is wrong>". Afterwards the plugin lists are
// constant. Run* methods for PreEnqueue..Permit are called from the scheduling thread (Filter
// and Score fan out over the parallelizer); WaitOnPermit, PreBind, Bind and PostBind from
// binder threads. Unreserve may be called from either.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include <ksched/handle.h>
#include <ksched/plugin.h>
#include <ksched/registry.h>

#include "config/profile.h"
#include "config/scheduler_config.h"
#include "metrics/metrics.h"

namespace ksched::framework {

class FrameworkError : public std::runtime_error {
 public:
  explicit FrameworkError(const std::string& what) : std::runtime_error(what) {}
};

// Services the scheduler provides to every framework (shared by all profiles).
struct Services {
  // The cluster, for plugins (Handle::api()); null means none. Not owned; must outlive the
  // framework.
  ClusterApi* api = nullptr;
  EventRecorder* events = nullptr;
  Parallelizer* parallelizer = nullptr;
  // Informer-backed listers; null means none (an empty StaticClusterListers).
  const ClusterListers* listers = nullptr;
  // Pods nominated to a node (from the queue's nominator); may be null.
  std::function<std::vector<PodInfoPtr>(const std::string& nodeName)> nominatedPodsForNode;
  // The queue's activate(); may be null.
  std::function<void(const std::vector<PodPtr>&)> activate;
  // The cache's current NodeInfo of a node (Handle::currentNodeInfo); may be null.
  std::function<std::shared_ptr<const NodeInfo>(std::string_view)> currentNodeInfo;
  // scheduler_framework_extension_point_duration_seconds; null: not recorded.
  metrics::SchedulerMetrics* metrics = nullptr;
  // Registers plugins' pod event handlers with the pod informer; null: none are called.
  std::function<void(PodEventHandlers)> addPodEventHandlers;
  // Starts a watch for a plugin (Handle::watchObjects); null: an empty, synced store.
  std::function<std::shared_ptr<const ObjectStore>(const ObjectWatch&, ObjectEventHandlers)>
      watchObjects;
  // The configured HTTP extenders; null means none. Must outlive the framework.
  const ExtenderList* extenders = nullptr;
};

class Framework final : public Handle {
 public:
  // `fieldPrefix` is the config path of the profile, e.g. "profiles[0]".
  Framework(const config::Profile& profile, const Registry& registry, Services services,
            const std::string& fieldPrefix = "profiles[0]");
  ~Framework() override;

  // Gives a framework built without services (by configuration validation: wiringCheck with a
  // Prebuilt) the scheduler's, so that its plugins are built once: the pod event handlers and
  // watches its plugins asked for while they were built are registered now, and the listers
  // they were given read the scheduler's. Once, before the framework is used; not thread-safe.
  void attach(Services services);
  // Closes every plugin (Plugin::close()), once the scheduling loop has ended: their own work
  // stops and is joined, waits in PreBind end. Idempotent.
  void close();
  // Starts every plugin (Plugin::start()) when this instance begins scheduling. Once.
  void start();

  [[nodiscard]] const std::string& profileName() const { return profileName_; }
  [[nodiscard]] const QueueSortPlugin& queueSort() const { return *queueSort_; }
  [[nodiscard]] bool hasPostFilterPlugins() const { return !postFilter_.empty(); }
  [[nodiscard]] bool hasScorePlugins() const { return !score_.empty(); }
  // Plugin name -> events it registered (EnqueueExtensions), for every Filter/PreFilter/
  // Reserve/Permit/PreEnqueue plugin; plugins without EnqueueExtensions get a wildcard.
  [[nodiscard]] std::map<std::string, std::vector<ClusterEventWithHint>> enqueueEvents() const;
  // Names per extension point, for /configz and tests.
  [[nodiscard]] std::map<std::string, std::vector<std::string>> pluginsPerExtensionPoint() const;
  [[nodiscard]] std::optional<int32_t> percentageOfNodesToScore() const { return percentage_; }

  // The snapshot of the running cycle (scheduling thread).
  void setSnapshot(const NodeInfoLister* snapshot) { snapshot_ = snapshot; }

  Status runPreEnqueuePlugins(const api::Pod& pod);
  // `pluginsWithNodes` (optional) gets the plugins whose PreFilterResult restricted the nodes.
  // An empty intersection is UnschedulableAndUnresolvable: "node(s) didn't satisfy plugin X" or
  // "node(s) didn't satisfy plugin(s) [X Y] simultaneously", as upstream.
  Status runPreFilterPlugins(CycleState& state, const api::Pod& pod, PreFilterResult& result,
                             std::set<std::string, std::less<>>* pluginsWithNodes = nullptr);
  Status runPreFilterExtensionAddPod(CycleState& state, const api::Pod& pod, const PodInfo& toAdd,
                                     const NodeInfo& node) const override;
  Status runPreFilterExtensionRemovePod(CycleState& state, const api::Pod& pod,
                                        const PodInfo& toRemove,
                                        const NodeInfo& node) const override;
  // First failing Filter plugin's status (with plugin()), or success. With `all`, every Filter
  // plugin runs and each rejection is appended there (explain); an error still ends the run.
  Status runFilterPlugins(const CycleState& state, const api::Pod& pod, const NodeInfo& node,
                          std::vector<Status>* all = nullptr) const;
  // Filter with the pods nominated to the node that have priority >= the pod's added first
  // (upstream RunFilterPluginsWithNominatedPods): the node must pass with and without them.
  [[nodiscard]] Status runFilterPluginsWithNominatedPods(const CycleState& state,
                                                         const api::Pod& pod,
                                                         const NodeInfo& node) const override;
  // The same, collecting every Filter rejection in `all` (explain).
  [[nodiscard]] Status runAllFilterPluginsWithNominatedPods(const CycleState& state,
                                                            const api::Pod& pod,
                                                            const NodeInfo& node,
                                                            std::vector<Status>& all) const;
  [[nodiscard]] std::vector<PodInfoPtr> nominatedPodsForNode(
      const std::string& nodeName) const override;
  void activate(const std::vector<PodPtr>& pods) override;
  [[nodiscard]] std::shared_ptr<const NodeInfo> currentNodeInfo(
      std::string_view nodeName) const override;
  std::pair<PostFilterResult, Status> runPostFilterPlugins(CycleState& state, const api::Pod& pod,
                                                           const NodeToStatus& statuses);
  // Each PostFilter plugin's dryRunPostFilter in order (explain): the first proposal (its plugin
  // in `plugin`), else the last rejection, else Skip when no plugin could say.
  Status dryRunPostFilterPlugins(const CycleState& state, const api::Pod& pod,
                                 const NodeToStatus& statuses, std::string& plugin,
                                 PostFilterPlugin::Proposal& proposal);
  Status runPreScorePlugins(CycleState& state, const api::Pod& pod,
                            const std::vector<const NodeInfo*>& nodes);
  // Each Score plugin's part in the totals (explain): raw[k][i] and normalized[k][i] are
  // plugins[k]'s scores of nodes[i] before and after NormalizeScore; totals add
  // normalized * weight.
  struct ScoreBreakdown {
    std::vector<std::string> plugins;
    std::vector<int64_t> weights;
    std::vector<std::vector<int64_t>> raw;
    std::vector<std::vector<int64_t>> normalized;
  };
  // Fills totals[i] with the weighted sum of normalized scores of nodes[i].
  Status runScorePlugins(const CycleState& state, const api::Pod& pod,
                         const std::vector<const NodeInfo*>& nodes, std::vector<int64_t>& totals,
                         ScoreBreakdown* breakdown = nullptr);
  Status runReservePluginsReserve(CycleState& state, const api::Pod& pod, const std::string& node);
  void runReservePluginsUnreserve(CycleState& state, const api::Pod& pod, const std::string& node);
  // Success, a rejection, or Wait (the pod is registered as waiting; see onPermitDecided and
  // waitOnPermit).
  Status runPermitPlugins(CycleState& state, const api::Pod& pod, const std::string& node);
  // Calls `fn` once the pod `uid` waiting at Permit is allowed, rejected or timed out: on the
  // thread that decided it, or the framework's permit timer (started here, on first use), so
  // that nobody blocks while the pod waits; at once when it is decided already or does not
  // wait. `fn` must not call back into the framework's waiting pods.
  void onPermitDecided(const std::string& uid, std::function<void()> fn);
  // The waiting pod's verdict: at once when it is decided, else blocks until it is. Success
  // for a pod that does not wait. `waited`, when given, receives how long the pod waited
  // (0 s when it did not).
  Status waitOnPermit(const api::Pod& pod, std::chrono::duration<double>* waited = nullptr);
  Status runPreBindPlugins(CycleState& state, const api::Pod& pod, const std::string& node);
  Status runBindPlugins(CycleState& state, const api::Pod& pod, const std::string& node);
  void runPostBindPlugins(CycleState& state, const api::Pod& pod, const std::string& node);

  // Handle
  [[nodiscard]] const NodeInfoLister& snapshot() const override;
  [[nodiscard]] const ClusterListers& listers() const override;
  [[nodiscard]] ClusterApi* api() override { return services_.api; }
  [[nodiscard]] EventRecorder& eventRecorder() override { return *services_.events; }
  [[nodiscard]] Parallelizer& parallelizer() override { return *services_.parallelizer; }
  [[nodiscard]] const ExtenderList& extenders() const override {
    return services_.extenders != nullptr ? *services_.extenders : Handle::extenders();
  }
  // Without services (a framework built by configuration validation), handlers and watches are
  // kept until attach(); the store returned is then empty and synced until attach().
  void addPodEventHandlers(PodEventHandlers handlers) override;
  [[nodiscard]] std::shared_ptr<const ObjectStore> watchObjects(
      const ObjectWatch& what, ObjectEventHandlers handlers) override;
  [[nodiscard]] std::shared_ptr<WaitingPod> getWaitingPod(std::string_view uid) override;
  void iterateWaitingPods(const std::function<void(WaitingPod&)>& fn) override;
  // Rejects every waiting pod (shutdown).
  void rejectAllWaitingPods(const std::string& message);
  // Whether this scheduling cycle records scheduler_plugin_execution_duration_seconds for the
  // plugins of PreFilter, Filter, PreScore, Score, Reserve and Permit (the scheduler samples 10%
  // of cycles, as upstream). Scheduling thread only, between cycles.
  void setRecordPluginMetrics(bool on) {
    recordPluginMetrics_.store(on && services_.metrics != nullptr, std::memory_order_relaxed);
  }

 private:
  class WaitingPodImpl;
  template <typename T>
  struct Weighted {
    T* plugin;
    int64_t weight;
  };

  void build(const config::Profile& profile, const Registry& registry, const std::string& prefix);
  void completeCompanionPoints(const std::map<std::string_view, std::set<std::string>>& disabledAt);
  Status filterWithNominatedPods(const CycleState& state, const api::Pod& pod, const NodeInfo& node,
                                 std::vector<Status>* all) const;

  // Extension points timed as a whole (upstream frameworkExtensionPointDuration).
  enum ExtensionPoint {
    kEpPreFilter,
    kEpPostFilter,
    kEpPreScore,
    kEpScore,
    kEpReserve,
    kEpUnreserve,
    kEpPermit,
    kEpPreBind,
    kEpBind,
    kEpPostBind,
    kNumExtensionPoints
  };
  static constexpr size_t kNumCodes = 6;
  // Runs `fn` (returning Status) and records its duration under `ep` and the status code.
  template <typename F>
  Status timed(ExtensionPoint ep, F&& fn) const {
    if (services_.metrics == nullptr) return fn();
    const auto start = std::chrono::steady_clock::now();
    Status s = fn();
    observeExtensionPoint(ep, s.code(), start);
    return s;
  }
  void observeExtensionPoint(ExtensionPoint ep, Code code,
                             std::chrono::steady_clock::time_point start) const;
  // Runs one plugin's `fn`, timed when this cycle records plugin metrics.
  template <typename F>
  Status timedPlugin(const Plugin* p, std::string_view ep, F&& fn) const {
    if (!recordPluginMetrics_.load(std::memory_order_relaxed)) return fn();
    const auto start = std::chrono::steady_clock::now();
    Status s = fn();
    observePlugin(p, ep, s.code(), start);
    return s;
  }
  void observePlugin(const Plugin* p, std::string_view ep, Code code,
                     std::chrono::steady_clock::time_point start) const;

  // Constant after construction.
  std::string profileName_;
  std::optional<int32_t> percentage_;
  class ForwardingListers;
  class DeferredObjectStore;
  struct PendingWatch;
  Services services_;
  // What listers() hands out: services_.listers when set, else nothing (read at each call, so
  // that attach() reaches plugins that keep the reference).
  std::unique_ptr<const ForwardingListers> listers_;
  // Asked for before attach(): handed to the services then.
  std::vector<PodEventHandlers> pendingPodHandlers_;
  std::vector<PendingWatch> pendingWatches_;
  std::vector<std::unique_ptr<Plugin>> owned_;
  std::vector<PreEnqueuePlugin*> preEnqueue_;
  QueueSortPlugin* queueSort_ = nullptr;
  std::vector<PreFilterPlugin*> preFilter_;
  std::vector<FilterPlugin*> filter_;
  std::vector<PostFilterPlugin*> postFilter_;
  std::vector<PreScorePlugin*> preScore_;
  std::vector<Weighted<ScorePlugin>> score_;
  std::vector<ReservePlugin*> reserve_;
  std::vector<PermitPlugin*> permit_;
  std::vector<PreBindPlugin*> preBind_;
  std::vector<BindPlugin*> bind_;
  std::vector<PostBindPlugin*> postBind_;
  std::vector<Plugin*> enqueueCandidates_;

  const NodeInfoLister* snapshot_ = nullptr;  // scheduling thread only

  // Histogram children by extension point and code, created on first use.
  mutable std::array<std::array<std::atomic<prometheus::Histogram*>, kNumCodes>,
                     kNumExtensionPoints>
      epChildren_{};
  std::atomic<bool> recordPluginMetrics_{false};
  // plugin_execution_duration_seconds children by plugin (position in owned_), timed point
  // (kTimedPoints) and code, created on first use: the sampled cycles time every plugin on every
  // node, and the registry's own lookup takes a lock.
  static constexpr std::array<std::string_view, 6> kTimedPoints = {
      "PreFilter", "Filter", "PreScore", "Score", "Reserve", "Permit"};
  using PluginChildren =
      std::array<std::array<std::atomic<prometheus::Histogram*>, kNumCodes>, kTimedPoints.size()>;
  std::unique_ptr<PluginChildren[]> pluginChildren_;  // owned_.size() entries, set by build()

  // Ends waits whose deadline passed (started by the first onPermitDecided()).
  void runPermitTimer(std::stop_token st);
  void stopPermitTimer();

  std::mutex waitingMu_;
  std::condition_variable_any timerCv_;
  bool timerKick_ = false;    // guarded by waitingMu_: a new deadline to look at
  std::jthread permitTimer_;  // guarded by waitingMu_ (started lazily)
  std::unordered_map<std::string, std::shared_ptr<WaitingPodImpl>>
      waiting_;  // guarded by waitingMu_
};

// Frameworks built by configuration validation, by profile path ("profiles[0]"), for the
// scheduler to attach() rather than build again (scheduler::Options::prebuilt).
struct Prebuilt {
  std::map<std::string, std::unique_ptr<Framework>, std::less<>> byPath;
  // The framework built for `path` when its profile has `schedulerName`, taken out; else null.
  [[nodiscard]] std::unique_ptr<Framework> take(std::string_view path,
                                                std::string_view schedulerName);
};

// The config layer's WiringCheck for `registry`: builds the profile's framework (without
// services: no thread, no client) and reports its FrameworkError lines, or its QueueSort.
// With `keep`, the frameworks that wire are kept there (they must not outlive `keep`'s user's
// services). Holds a copy of `registry`.
[[nodiscard]] config::WiringCheck wiringCheck(const Registry& registry,
                                              std::shared_ptr<Prebuilt> keep = nullptr);

}  // namespace ksched::framework
