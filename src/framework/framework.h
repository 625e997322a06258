// Framework: the plugins of one profile, wired per extension point, and the code that runs
// each extension point (upstream frameworkruntime.frameworkImpl).
//
// Built once at start-up from a validated profile (config::wire, config/wiring.h, says which
// plugin runs where; the framework creates each plugin once with its services in place and
// files it in the typed lists of plugin_lists.h); construction throws FrameworkError with
// every wiring problem as "<field path>: <what is wrong>". Afterwards the plugin lists are
// constant. The code is split by concern: framework.cc builds and serves the Handle, run.cc
// runs the extension points, waiting_pods.h holds pods at Permit, instrumentation.h times them.
// Run* methods for PreEnqueue..Permit are called from the scheduling thread (Filter and Score fan
// out over the parallelizer); WaitOnPermit, PreBind, Bind and PostBind from binder threads.
// Unreserve may be called from either.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <ksched/handle.h>
#include <ksched/plugin.h>
#include <ksched/registry.h>

#include "config/profile.h"
#include "config/wiring.h"
#include "framework/instrumentation.h"
#include "framework/plugin_lists.h"
#include "framework/waiting_pods.h"
#include "metrics/metrics.h"
#include "util/task_pool.h"

namespace ksched::framework {

class ResultMemo;

class FrameworkError : public std::runtime_error {
 public:
  explicit FrameworkError(const std::string& what) : std::runtime_error(what) {}
};

// The objects plugins share across profiles (Handle::sharedObject), by key. Thread-safe.
class SharedObjects {
 public:
  std::shared_ptr<void> get(std::string_view key,
                            const std::function<std::shared_ptr<void>()>& make);

 private:
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<void>, std::less<>> objects_;
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
  // Whether any pod is nominated (may be null: then any may be).
  std::function<bool()> hasNominatedPods;
  // The queue's activate(); may be null.
  std::function<void(const std::vector<PodPtr>&)> activate;
  // The cache's current NodeInfo of a node (Handle::currentNodeInfo); may be null.
  std::function<std::shared_ptr<const NodeInfo>(std::string_view)> currentNodeInfo;
  // scheduler_framework_extension_point_duration_seconds and what plugins record through
  // Handle::metrics(); null: not recorded.
  metrics::SchedulerMetrics* metrics = nullptr;
  // Registers plugins' pod event handlers with the pod informer; null: none are called.
  std::function<void(PodEventHandlers)> addPodEventHandlers;
  // Starts a watch for a plugin (Handle::watchObjects); null: an empty, synced store.
  std::function<std::shared_ptr<const ObjectStore>(const ObjectWatch&, ObjectEventHandlers)>
      watchObjects;
  // The configured HTTP extenders; null means none. Must outlive the framework.
  const ExtenderList* extenders = nullptr;
  // Handle::runAsync(); null: the framework's own pool ("plugin-work").
  std::function<bool(std::function<void()>)> runAsync;
  // Handle::randomSeed(); nullopt: random.
  std::optional<uint64_t> seed;
  // Handle::synchronous().
  bool synchronous = false;
  // Handle::clusterEvent(): the queue's; null: ignored.
  std::function<void(const ClusterEvent&, const EventObject&, const EventObject&)> clusterEvent;
  // Handle::sharedObject(): one store for every profile; null: nothing is shared.
  std::shared_ptr<SharedObjects> shared;
  // The feature gates: plugins' args are decoded with them and plugins read them through
  // Handle::features(); opportunistic batching follows OpportunisticBatching.
  features::Gates features;
};

class Framework final : public Handle {
 public:
  // `fieldPrefix` is the config path of the profile, e.g. "profiles[0]".
  Framework(const config::Profile& profile, const Registry& registry, Services services,
            const std::string& fieldPrefix = "profiles[0]");
  ~Framework() override;

  // Once the scheduling loop has ended: runs what plugins handed to runAsync(), then closes
  // every plugin (Plugin::close()): their own work stops and is joined, waits in PreBind end.
  // Idempotent.
  void close();
  // Starts every plugin (Plugin::start()) when this instance begins scheduling. Once.
  void start();

  [[nodiscard]] const std::string& profileName() const { return profileName_; }
  // What build() found questionable but not wrong (each also logged as a warning): a plugin
  // enabled at some extension points but not at Reserve, which it implements.
  [[nodiscard]] const std::vector<std::string>& warnings() const { return warnings_; }
  [[nodiscard]] const QueueSortPlugin& queueSort() const {
    return *lists_.at<ExtensionPoint::kQueueSort>().front();
  }
  [[nodiscard]] bool hasPostFilterPlugins() const {
    return !lists_.at<ExtensionPoint::kPostFilter>().empty();
  }
  [[nodiscard]] bool hasPlacementFeasiblePlugins() const {
    return !lists_.at<ExtensionPoint::kPlacementFeasible>().empty();
  }
  [[nodiscard]] bool hasScorePlugins() const {
    return !lists_.at<ExtensionPoint::kScore>().empty();
  }
  // Plugin name -> events it registered (EnqueueExtensions), for every Filter/PreFilter/
  // Reserve/Permit/PreEnqueue/PlacementFeasible plugin; plugins without EnqueueExtensions get a
  // wildcard.
  [[nodiscard]] std::map<std::string, std::vector<ClusterEventWithHint>> enqueueEvents() const;
  // Names per extension point, for /configz and tests.
  [[nodiscard]] std::map<std::string, std::vector<std::string>> pluginsPerExtensionPoint() const;
  [[nodiscard]] std::optional<int32_t> percentageOfNodesToScore() const { return percentage_; }
  [[nodiscard]] std::optional<int32_t> percentageOfPlacementsToScore() const {
    return placementPercentage_;
  }

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
  // The Filter plugins whose bit is set in `run` (bit i: the i-th of the profile), in order,
  // whatever PreFilter skipped: the first rejection, or success (ResultMemo).
  [[nodiscard]] Status runFilterPluginsMasked(const CycleState& state, const api::Pod& pod,
                                              const NodeInfo& node, uint64_t run) const;
  // The Filter plugins PreFilter skipped, as bits (bit i: the i-th of the profile; the first
  // 64).
  [[nodiscard]] uint64_t skippedFilterMask(const CycleState& state) const;
  // Whether a pod other than `pod`, of priority >= its, is nominated to `node` (Filter then
  // runs with it added first).
  [[nodiscard]] bool hasNominatedPodsFor(const api::Pod& pod, const NodeInfo& node) const;
  // False when no pod is nominated to any node (the scheduler's queue says so).
  [[nodiscard]] bool mayHaveNominatedPods() const {
    return services_.nominatedPodsForNode &&
           (!services_.hasNominatedPods || services_.hasNominatedPods());
  }
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
  // Fills totals[i] with the weighted sum of normalized scores of nodes[i]. With `memo` (its
  // begin() returned true for this pod), slots[i] is nodes[i]'s slot in the snapshot's list()
  // and the kept plugins' raw scores come from the memo where it has them.
  Status runScorePlugins(const CycleState& state, const api::Pod& pod,
                         const std::vector<const NodeInfo*>& nodes, std::vector<int64_t>& totals,
                         ScoreBreakdown* breakdown = nullptr, ResultMemo* memo = nullptr,
                         const std::vector<uint32_t>* slots = nullptr);
  // Opportunistic batching (KEP 5598, gate OpportunisticBatching): whether every PreFilter,
  // Filter, PreScore and Score plugin signs `pod` (SignPlugin) and no extender is configured.
  [[nodiscard]] bool signPod(const api::Pod& pod) const;
  // The Score plugin of that name, or nullptr.
  [[nodiscard]] const ScorePlugin* scorePlugin(std::string_view name) const;
  // What made `rejection` (a PreFilter or Filter status; rejection.plugin() names the plugin)
  // reject `node` for `pod`, one sentence each: the details the plugin attached
  // (Status::withDetails), else what its FilterExplainer finds over `state` (the CycleState the
  // cycle's PreFilter filled), else none. For explain, the diagnosis annotation and the
  // simulator: never called on the scheduling path of a pod that fits.
  [[nodiscard]] std::vector<std::string> explainRejection(const CycleState& state,
                                                          const Status& rejection,
                                                          const api::Pod& pod,
                                                          const NodeInfo& node) const;
  Status runReservePluginsReserve(CycleState& state, const api::Pod& pod, const std::string& node);
  void runReservePluginsUnreserve(CycleState& state, const api::Pod& pod, const std::string& node);
  // run_pod_group.cc: the pod-group points (pod_group_plugin.h).
  // The first rejection or error of the plugins in order, else Wait when one says Wait, else
  // Success (also with no plugin).
  Status runPlacementFeasiblePlugins(CycleState& state, const PodGroupInfo& group,
                                     const PlacementProgress& progress);
  [[nodiscard]] bool hasPodGroupPostFilterPlugins() const {
    return !lists_.at<ExtensionPoint::kPodGroupPostFilter>().empty();
  }
  // The plugins in order until one succeeds; its result, or the last rejection. Messages get
  // upstream's prefix "pod group preemption: ".
  std::pair<PodGroupPostFilterResult, Status> runPodGroupPostFilterPlugins(
      CycleState& state, const PodGroupInfo& group, const NodeInfoLister& nodes,
      const PodGroupScheduleFn& schedule);
  [[nodiscard]] bool hasPlacementGeneratePlugins() const {
    return !lists_.at<ExtensionPoint::kPlacementGenerate>().empty();
  }
  // The placements of every generator, intersected (node sets; the name of the first), in the
  // first generator's order; an error or rejection of a generator is returned as it is.
  Status runPlacementGeneratePlugins(CycleState& state, const PodGroupInfo& group,
                                     const NodeInfoLister& nodes,
                                     std::vector<Placement>& placements);
  // The total score of each feasible placement (`assignments`, in order): every PlacementScore
  // plugin's score, normalized by the plugin, summed.
  Status runPlacementScorePlugins(CycleState& state, const PodGroupInfo& group,
                                  const NodeInfoLister& nodes,
                                  const std::vector<PodGroupAssignments>& assignments,
                                  std::vector<int64_t>& totals);
  // Success, a rejection, or Wait (the pod is registered as waiting; see onPermitDecided and
  // waitOnPermit).
  Status runPermitPlugins(CycleState& state, const api::Pod& pod, const std::string& node);
  // Calls `fn` once the pod `uid` waiting at Permit is allowed, rejected or timed out: on the
  // thread that decided it, or the framework's permit timer (started here, on first use), so
  // that nobody blocks while the pod waits; at once when it is decided already or does not
  // wait. `fn` must not call back into the framework's waiting pods.
  void onPermitDecided(const std::string& uid, std::function<void()> fn) {
    waiting_.onDecided(uid, std::move(fn));
  }
  // The waiting pod's verdict: at once when it is decided, else blocks until it is. Success
  // for a pod that does not wait. `waited`, when given, receives how long the pod waited
  // (0 s when it did not).
  Status waitOnPermit(const api::Pod& pod, std::chrono::duration<double>* waited = nullptr) {
    return waiting_.wait(pod, waited);
  }
  // Each PreBind plugin's preBindPreFlight (upstream RunPreBindPreFlights): Success when one or
  // more say they have work, Skip when none does (or there are no PreBind plugins), Error when
  // one fails or answers anything but Success, Skip or Error.
  Status runPreBindPreFlights(const CycleState& state, const api::Pod& pod,
                              const std::string& node);
  // The PreBind plugins from index `*from` on (all with `from` null). `resume` set: the plugin at
  // `*from` waited and is resumed for that reason. A plugin that says Wait stops the run: the
  // result is Wait and `*from` its index (with `from` null, Wait is an error).
  Status runPreBindPlugins(CycleState& state, const api::Pod& pod, const std::string& node,
                           size_t* from = nullptr,
                           std::optional<PreBindPlugin::Resume> resume = std::nullopt);
  // What the PreBind plugin at `index`, which said Wait, waits for.
  [[nodiscard]] PreBindPlugin::Wait preBindWait(size_t index, const CycleState& state,
                                                const api::Pod& pod) const;
  Status runBindPlugins(CycleState& state, const api::Pod& pod, const std::string& node);
  void runPostBindPlugins(CycleState& state, const api::Pod& pod, const std::string& node);

  // Handle
  [[nodiscard]] const NodeInfoLister& snapshot() const override;
  [[nodiscard]] const ClusterListers& listers() const override;
  [[nodiscard]] ClusterApi* api() override { return services_.api; }
  void clusterEvent(const ClusterEvent& event, const EventObject& oldObj,
                    const EventObject& newObj) override {
    if (services_.clusterEvent) services_.clusterEvent(event, oldObj, newObj);
  }
  [[nodiscard]] std::shared_ptr<void> sharedObject(
      std::string_view key, const std::function<std::shared_ptr<void>()>& make) override {
    return services_.shared ? services_.shared->get(key, make) : make();
  }
  bool runAsync(std::function<void()> task) override {
    return services_.runAsync ? services_.runAsync(std::move(task))
                              : asyncWork_.submit(std::move(task));
  }
  [[nodiscard]] uint64_t randomSeed() override {
    return services_.seed ? *services_.seed : Handle::randomSeed();
  }
  [[nodiscard]] bool synchronous() const override { return services_.synchronous; }
  [[nodiscard]] EventRecorder& eventRecorder() override { return *services_.events; }
  [[nodiscard]] Parallelizer& parallelizer() override { return *services_.parallelizer; }
  [[nodiscard]] PluginMetrics& metrics() override {
    return services_.metrics != nullptr ? *services_.metrics : Handle::metrics();
  }
  [[nodiscard]] const ExtenderList& extenders() const override {
    return services_.extenders != nullptr ? *services_.extenders : Handle::extenders();
  }
  [[nodiscard]] const features::Gates& features() const override { return services_.features; }
  // Without services (explain, unit tests), handlers are never called and the store returned is
  // empty and synced.
  void addPodEventHandlers(PodEventHandlers handlers) override;
  [[nodiscard]] std::shared_ptr<const ObjectStore> watchObjects(
      const ObjectWatch& what, ObjectEventHandlers handlers) override;
  [[nodiscard]] std::shared_ptr<WaitingPod> getWaitingPod(std::string_view uid) override {
    return waiting_.get(uid);
  }
  void iterateWaitingPods(const std::function<void(WaitingPod&)>& fn) override {
    waiting_.iterate(fn);
  }
  // Rejects every waiting pod (shutdown).
  void rejectAllWaitingPods(const std::string& message) { waiting_.rejectAll(message); }
  // Whether this scheduling cycle records scheduler_plugin_execution_duration_seconds for the
  // plugins of PreFilter, Filter, PreScore, Score, Reserve and Permit (the scheduler samples 10%
  // of cycles, as upstream). Scheduling thread only, between cycles.
  void setRecordPluginMetrics(bool on) { instrumentation_->setRecordPlugins(on); }

 private:
  friend class ResultMemo;  // reads the plugin lists
  // Handle::runAsync's pool when Services::runAsync is not set (threads start on first use).
  util::TaskPool asyncWork_{"plugin-work", 16};

  void build(const config::Profile& profile, const Registry& registry, const std::string& prefix);
  Status filterWithNominatedPods(const CycleState& state, const api::Pod& pod, const NodeInfo& node,
                                 std::vector<Status>* all) const;
  // The pods nominated to `node` that Filter adds for `pod`: not `pod` itself, of priority >=
  // its.
  [[nodiscard]] std::vector<PodInfoPtr> nominatedPodsThatCount(const api::Pod& pod,
                                                               const NodeInfo& node) const;
  template <ExtensionPoint P>
  [[nodiscard]] const auto& plugins() const {
    return lists_.at<P>();
  }
  template <typename F>
  Status timed(TimedPoint point, F&& fn) const {
    return instrumentation_->timed(point, std::forward<F>(fn));
  }
  template <typename F>
  Status timedPlugin(const Plugin* p, ExtensionPoint point, F&& fn) const {
    return instrumentation_->timedPlugin(p, point, std::forward<F>(fn));
  }

  // Constant after construction.
  std::string profileName_;
  std::vector<std::string> warnings_;
  std::optional<int32_t> percentage_;
  std::optional<int32_t> placementPercentage_;
  Services services_;
  std::vector<std::unique_ptr<Plugin>> owned_;
  PluginLists lists_;
  // Plugins whose events can make a rejected pod schedulable (PreEnqueue, PreFilter, Filter,
  // Reserve, Permit), for enqueueEvents().
  std::vector<Plugin*> enqueueCandidates_;
  std::unique_ptr<Instrumentation> instrumentation_;

  // The gate is on and every plugin that filters or scores implements SignPlugin.
  bool batching_ = false;
  std::vector<const SignPlugin*> signers_;

  const NodeInfoLister* snapshot_ = nullptr;  // scheduling thread only
  WaitingPods waiting_;
};

}  // namespace ksched::framework
