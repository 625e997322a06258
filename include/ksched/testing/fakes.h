// Test helpers for plugin authors' unit tests: object builders in the style of upstream's
// scheduler/testing wrappers (st.MakePod(), st.MakeNode()), NodeInfos, a fake snapshot and a
// fake Handle (no API client, no other plugins). Header-only; nothing here is in the libraries.
//
//   ksched::testing::FakeHandle handle(ksched::testing::FakeLister({
//       ksched::testing::makeNodeInfo(ksched::testing::NodeWrapper("n1").label("disk", "ssd"))}));
//   auto plugin = myplugin::New(args, handle);
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ksched/api/node.h>
#include <ksched/api/object_reference.h>
#include <ksched/api/pod.h>
#include <ksched/api/quantity.h>
#include <ksched/api/resources.h>
#include <ksched/api/selectors.h>
#include <ksched/api/taints.h>
#include <ksched/handle.h>
#include <ksched/node_info.h>

namespace ksched::testing {

using ResourcePairs = std::vector<std::pair<std::string, std::string>>;

inline api::ResourceList makeResourceList(const ResourcePairs& pairs) {
  api::ResourceList list;
  for (const auto& [name, q] : pairs) list[name] = api::Quantity::parse(q);
  return list;
}

// Optional fields of a topology spread constraint (PodWrapper::spreadConstraint).
struct SpreadOptions {
  std::optional<int32_t> minDomains;
  std::optional<std::string> nodeAffinityPolicy;
  std::optional<std::string> nodeTaintsPolicy;
  std::vector<std::string> matchLabelKeys;
};

class PodWrapper {
 public:
  explicit PodWrapper(std::string name = "pod") {
    pod_.metadata.name = std::move(name);
    pod_.metadata.namespace_ = "default";
    pod_.metadata.uid = pod_.metadata.name + "-uid";
  }
  PodWrapper& name(std::string n) {
    pod_.metadata.name = std::move(n);
    return *this;
  }
  PodWrapper& ns(std::string n) {
    pod_.metadata.namespace_ = std::move(n);
    return *this;
  }
  PodWrapper& uid(std::string u) {
    pod_.metadata.uid = std::move(u);
    return *this;
  }
  PodWrapper& priority(int32_t p) {
    pod_.spec.priority = p;
    return *this;
  }
  PodWrapper& nodeName(std::string n) {
    pod_.spec.nodeName = std::move(n);
    return *this;
  }
  PodWrapper& label(std::string key, std::string value) {
    pod_.metadata.labels[std::move(key)] = std::move(value);
    return *this;
  }
  // Adds an owner reference (a controller one when `controller`).
  PodWrapper& ownerReference(std::string kind, std::string name, std::string uid,
                             bool controller = true, std::string apiVersion = "v1") {
    pod_.metadata.ownerReferences.push_back(
        {std::move(apiVersion), std::move(kind), std::move(name), std::move(uid), controller});
    return *this;
  }
  // Adds a container with these requests.
  PodWrapper& req(const ResourcePairs& requests) {
    api::Container c;
    c.name = "c" + std::to_string(pod_.spec.containers.size());
    c.resources.requests = makeResourceList(requests);
    pod_.spec.containers.push_back(std::move(c));
    return *this;
  }
  // Adds an init container (a sidecar when `sidecar`).
  PodWrapper& initReq(const ResourcePairs& requests, bool sidecar = false) {
    api::Container c;
    c.name = "init" + std::to_string(pod_.spec.initContainers.size());
    c.resources.requests = makeResourceList(requests);
    if (sidecar) c.restartPolicy = std::string(api::kContainerRestartPolicyAlways);
    pod_.spec.initContainers.push_back(std::move(c));
    return *this;
  }
  // Pod-level requests (spec.resources.requests).
  PodWrapper& podReq(const ResourcePairs& requests) {
    pod_.spec.resources.emplace().requests = makeResourceList(requests);
    return *this;
  }
  // What the kubelet allocated to the last container added (in-place resize status).
  PodWrapper& allocated(const ResourcePairs& resources) {
    const std::string& name = pod_.spec.containers.back().name;
    auto& statuses = pod_.status.containerStatuses;
    auto it = std::find_if(statuses.begin(), statuses.end(),
                           [&](const api::ContainerStatus& s) { return s.name == name; });
    if (it == statuses.end()) it = statuses.insert(statuses.end(), api::ContainerStatus{name});
    it->allocatedResources = makeResourceList(resources);
    return *this;
  }
  PodWrapper& overhead(const ResourcePairs& o) {
    pod_.spec.overhead = makeResourceList(o);
    return *this;
  }
  PodWrapper& toleration(std::string key, std::string op, std::string value, std::string effect) {
    pod_.spec.tolerations.push_back(
        {std::move(key), std::move(op), std::move(value), std::move(effect), std::nullopt});
    return *this;
  }
  // A status condition, e.g. condition("PodResizePending", "True", "Deferred").
  PodWrapper& condition(std::string type, std::string status, std::string reason = "") {
    pod_.status.conditions.push_back(
        {std::move(type), std::move(status), std::move(reason), std::string(), std::string()});
    return *this;
  }
  PodWrapper& preemptionPolicy(std::string policy) {
    pod_.spec.preemptionPolicy = std::move(policy);
    return *this;
  }
  // spec.schedulingGroup.podGroupName.
  PodWrapper& podGroup(std::string name) {
    pod_.spec.schedulingGroup = api::PodSchedulingGroup{std::move(name)};
    return *this;
  }
  PodWrapper& schedulingGates(std::vector<std::string> gates) {
    pod_.spec.schedulingGates = std::move(gates);
    return *this;
  }
  // Being deleted (a deletionTimestamp).
  PodWrapper& terminating() {
    pod_.metadata.deletionTimestamp = "2024-01-01T00:00:00Z";
    return *this;
  }
  PodWrapper& nodeSelector(api::Labels selector) {
    pod_.spec.nodeSelector = std::move(selector);
    return *this;
  }
  // A required node affinity term: `key` `op` `values` (replaces the pod's affinity).
  PodWrapper& nodeAffinity(std::string key, api::SelectorOperator op,
                           std::vector<std::string> values) {
    api::NodeSelectorTerm term;
    term.matchExpressions.push_back({std::move(key), op, std::move(values)});
    api::NodeSelector required;
    required.nodeSelectorTerms.push_back(std::move(term));
    api::NodeAffinity na;
    na.requiredDuringSchedulingIgnoredDuringExecution = std::move(required);
    api::Affinity a;
    a.nodeAffinity = std::move(na);
    pod_.spec.affinity = std::move(a);
    return *this;
  }
  // Adds a topology spread constraint; `when` is DoNotSchedule or ScheduleAnyway.
  PodWrapper& spreadConstraint(int32_t maxSkew, std::string topologyKey, std::string_view when,
                               std::optional<api::LabelSelector> selector,
                               SpreadOptions opts = {}) {
    api::TopologySpreadConstraint c;
    c.maxSkew = maxSkew;
    c.topologyKey = std::move(topologyKey);
    c.whenUnsatisfiable = std::string(when);
    c.labelSelector = std::move(selector);
    c.minDomains = opts.minDomains;
    c.nodeAffinityPolicy = std::move(opts.nodeAffinityPolicy);
    c.nodeTaintsPolicy = std::move(opts.nodeTaintsPolicy);
    c.matchLabelKeys = std::move(opts.matchLabelKeys);
    pod_.spec.topologySpreadConstraints.push_back(std::move(c));
    return *this;
  }

  [[nodiscard]] const api::Pod& obj() const { return pod_; }
  [[nodiscard]] PodPtr ptr() const { return std::make_shared<const api::Pod>(pod_); }
  // Its requests counted as `gates` say (the defaults unless given).
  [[nodiscard]] PodInfoPtr info(const features::Gates& gates = {}) const {
    return std::make_shared<const PodInfo>(ptr(), gates);
  }

 private:
  api::Pod pod_;
};

class NodeWrapper {
 public:
  explicit NodeWrapper(std::string name = "node") { node_.metadata.name = std::move(name); }
  // Sets capacity and allocatable.
  NodeWrapper& capacity(const ResourcePairs& c) {
    node_.status.capacity = makeResourceList(c);
    node_.status.allocatable = node_.status.capacity;
    return *this;
  }
  NodeWrapper& taint(std::string key, std::string value, std::string effect) {
    node_.spec.taints.push_back(
        {std::move(key), std::move(value), std::move(effect), std::nullopt});
    return *this;
  }
  NodeWrapper& label(std::string key, std::string value) {
    node_.metadata.labels[std::move(key)] = std::move(value);
    return *this;
  }
  NodeWrapper& annotation(std::string key, std::string value) {
    node_.metadata.annotations[std::move(key)] = std::move(value);
    return *this;
  }
  NodeWrapper& unschedulable(bool u = true) {
    node_.spec.unschedulable = u;
    return *this;
  }
  // spec.podPreemptionPolicy.disableResizePreemption (KEP 5836).
  NodeWrapper& disableResizePreemption(std::vector<std::string> owners) {
    node_.spec.disableResizePreemption = std::move(owners);
    return *this;
  }

  [[nodiscard]] const api::Node& obj() const { return node_; }
  [[nodiscard]] const std::string& name() const { return node_.metadata.name; }
  [[nodiscard]] NodePtr ptr() const { return std::make_shared<const api::Node>(node_); }

 private:
  api::Node node_;
};

// A NodeInfo for `node` with `pods` on it.
inline std::shared_ptr<NodeInfo> makeNodeInfo(const NodeWrapper& node,
                                              const std::vector<PodWrapper>& pods = {}) {
  auto ni = std::make_shared<NodeInfo>();
  ni->setNode(node.ptr());
  for (const auto& p : pods) ni->addPod(p.info());
  return ni;
}

class FakeLister final : public NodeInfoLister {
 public:
  FakeLister() = default;
  explicit FakeLister(std::vector<std::shared_ptr<NodeInfo>> nodes) : owned_(std::move(nodes)) {
    for (const auto& n : owned_) list_.push_back(n.get());
  }
  [[nodiscard]] const std::vector<const NodeInfo*>& list() const override { return list_; }
  [[nodiscard]] const std::vector<const NodeInfo*>& havePodsWithAffinityList() const override {
    return empty_;
  }
  [[nodiscard]] const std::vector<const NodeInfo*>& havePodsWithRequiredAntiAffinityList()
      const override {
    return empty_;
  }
  [[nodiscard]] const NodeInfo* get(std::string_view nodeName) const override {
    for (const NodeInfo* n : list_) {
      if (n->name() == nodeName) return n;
    }
    return nullptr;
  }
  [[nodiscard]] bool isPVCUsedByPods(std::string_view key) const override {
    for (const NodeInfo* n : list_) {
      if (n->pvcRefCounts().contains(key)) return true;
    }
    return false;
  }

 private:
  std::vector<std::shared_ptr<NodeInfo>> owned_;
  std::vector<const NodeInfo*> list_;
  std::vector<const NodeInfo*> empty_;
};

// Records every event. Thread-safe.
class FakeEventRecorder final : public EventRecorder {
 public:
  struct Recorded {
    std::string kind;  // "Pod", or the kind eventFor() named
    std::string key;   // "<namespace>/<name>"
    std::string type, reason, message;
  };
  void event(const api::Pod& regarding, std::string_view type, std::string_view reason,
             std::string_view /*action*/, std::string message) override {
    std::lock_guard lock(mu_);
    events_.push_back({"Pod", regarding.metadata.namespace_ + "/" + regarding.metadata.name,
                       std::string(type), std::string(reason), std::move(message)});
  }
  void eventFor(const api::ObjectReference& regarding, std::string_view type,
                std::string_view reason, std::string_view /*action*/,
                std::string message) override {
    std::lock_guard lock(mu_);
    events_.push_back({regarding.kind, regarding.namespace_ + "/" + regarding.name,
                       std::string(type), std::string(reason), std::move(message)});
  }
  [[nodiscard]] std::vector<Recorded> events() const {
    std::lock_guard lock(mu_);
    return events_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<Recorded> events_;
};

// A pod held at Permit in a FakeHandle: records the verdicts it gets. Thread-safe.
class FakeWaitingPod final : public WaitingPod {
 public:
  explicit FakeWaitingPod(api::Pod pod) : pod_(std::move(pod)) {}
  [[nodiscard]] const api::Pod& pod() const override { return pod_; }
  void allow(std::string_view plugin) override {
    std::lock_guard lock(mu_);
    allowedBy_.emplace_back(plugin);
  }
  void reject(std::string_view plugin, std::string message) override {
    std::lock_guard lock(mu_);
    rejected_ = std::string(plugin) + ": " + message;
  }
  [[nodiscard]] std::vector<std::string> allowedBy() const {
    std::lock_guard lock(mu_);
    return allowedBy_;
  }
  // "<plugin>: <message>" of the last reject(), "" when none.
  [[nodiscard]] std::string rejected() const {
    std::lock_guard lock(mu_);
    return rejected_;
  }

 private:
  const api::Pod pod_;
  mutable std::mutex mu_;
  std::vector<std::string> allowedBy_;
  std::string rejected_;
};

class InlineParallelizer final : public Parallelizer {
 public:
  [[nodiscard]] int parallelism() const override { return 1; }
  void until(int n, const std::function<void(int)>& fn,
             const std::function<bool()>& stop) override {
    for (int i = 0; i < n && !(stop && stop()); ++i) fn(i);
  }
};

// A ClusterApi that records every call and answers success, or what failWith() set, or what the
// answerWith() function returns. Thread-safe.
class FakeClusterApi final : public ClusterApi {
 public:
  struct Call {
    std::string verb;     // "bind", "delete", "patchStatus", "get", "patch", "create", "remove"
    std::string target;   // "<namespace>/<pod>" or the path
    nlohmann::json body;  // the node name for bind, the patch for the patches, the object for
                          // create, the preconditions for remove
  };
  // The answer to every later call (nullopt: success).
  void failWith(ApiResult r) {
    std::lock_guard lock(mu_);
    answer_ = std::move(r);
  }
  // Every later call is answered by `fn` (called on the caller's thread, with no lock held, once
  // the call is recorded) instead of failWith()'s answer: a test picks errors per call (a
  // conflict on the first bind only, a 500 on status patches) or blocks a call until it lets it
  // go. Null: back to failWith()'s answer.
  using Answer = std::function<ApiResult(const Call&)>;
  void answerWith(Answer fn) {
    std::lock_guard lock(mu_);
    answerFn_ = std::make_shared<const Answer>(std::move(fn));
  }
  [[nodiscard]] std::vector<Call> calls() const {
    std::lock_guard lock(mu_);
    return calls_;
  }

  ApiResult bindPod(const api::Pod& pod, const std::string& nodeName) override {
    return record({"bind", key(pod), nodeName});
  }
  ApiResult deletePod(const api::Pod& pod) override { return record({"delete", key(pod), {}}); }
  ApiResult patchPodStatus(const api::Pod& pod, const nlohmann::json& patch,
                           std::string_view /*contentType*/) override {
    return record({"patchStatus", key(pod), patch});
  }
  // What a successful get() of `path` answers (otherwise nothing is written to `out`).
  void objectAt(const std::string& path, nlohmann::json object) {
    std::lock_guard lock(mu_);
    objects_[path] = std::move(object);
  }
  ApiResult get(const std::string& path, nlohmann::json* out) override {
    ApiResult r = record({"get", path, {}});
    if (!r && out != nullptr) {
      std::lock_guard lock(mu_);
      if (auto it = objects_.find(path); it != objects_.end()) *out = it->second;
    }
    return r;
  }
  ApiResult patch(const std::string& path, const nlohmann::json& patch, nlohmann::json* out,
                  std::string_view /*contentType*/) override {
    ApiResult r = record({"patch", path, patch});
    if (!r && out != nullptr) *out = patch;
    return r;
  }
  // Answers with the object (generateName kept as it is, no name made up).
  ApiResult create(const std::string& path, const nlohmann::json& object,
                   nlohmann::json* out) override {
    ApiResult r = record({"create", path, object});
    if (!r && out != nullptr) *out = object;
    return r;
  }
  ApiResult remove(const std::string& path, const nlohmann::json& preconditions) override {
    return record({"remove", path, preconditions});
  }

 private:
  static std::string key(const api::Pod& pod) {
    return pod.metadata.namespace_ + "/" + pod.metadata.name;
  }
  ApiResult record(Call c) {
    std::shared_ptr<const Answer> fn;
    {
      std::lock_guard lock(mu_);
      calls_.push_back(c);
      if (!answerFn_ || !*answerFn_) return answer_;
      fn = answerFn_;
    }
    return (*fn)(c);
  }
  mutable std::mutex mu_;
  std::vector<Call> calls_;
  ApiResult answer_;
  std::map<std::string, nlohmann::json> objects_;
  std::shared_ptr<const Answer> answerFn_;  // replaced, never changed: callers keep theirs
};

// A Handle without an API client for plugin tests and benchmarks: in-memory listers, waiting
// pods only from addWaitingPod(), activate() recorded, nominated pods only from nominate(), and
// plugin runners that succeed (no other plugins run).
// Subclasses provide the snapshot.
class HandleBase : public Handle {
 public:
  [[nodiscard]] const ClusterListers& listers() const override { return listers_; }
  // Add objects the plugin under test should see.
  [[nodiscard]] StaticClusterListers& mutableListers() { return listers_; }
  // nullptr unless setApi() gave one.
  [[nodiscard]] ClusterApi* api() override { return api_; }
  // Plugins reach `a` (not owned), e.g. a FakeClusterApi.
  void setApi(ClusterApi* a) { api_ = a; }
  [[nodiscard]] EventRecorder& eventRecorder() override { return recorder_; }
  [[nodiscard]] Parallelizer& parallelizer() override {
    return parallelizer_ != nullptr ? *parallelizer_ : inline_;
  }
  // Runs parallel work on `p` (not owned) instead of inline.
  void setParallelizer(Parallelizer* p) { parallelizer_ = p; }
  // The feature gates plugins see (Handle::features()); the defaults unless set.
  [[nodiscard]] const features::Gates& features() const override { return features_; }
  void setFeatures(const features::Gates& gates) { features_ = gates; }
  // Waiting pods are the ones addWaitingPod() added.
  std::shared_ptr<FakeWaitingPod> addWaitingPod(const api::Pod& pod) {
    std::lock_guard lock(mu_);
    return waiting_[pod.metadata.uid] = std::make_shared<FakeWaitingPod>(pod);
  }
  [[nodiscard]] std::shared_ptr<WaitingPod> getWaitingPod(std::string_view uid) override {
    std::lock_guard lock(mu_);
    auto it = waiting_.find(std::string(uid));
    return it == waiting_.end() ? nullptr : it->second;
  }
  void iterateWaitingPods(const std::function<void(WaitingPod&)>& fn) override {
    std::vector<std::shared_ptr<FakeWaitingPod>> all;
    {
      std::lock_guard lock(mu_);
      for (auto& [uid, wp] : waiting_) all.push_back(wp);
    }
    for (auto& wp : all) fn(*wp);
  }
  // activate() records the pods ("<namespace>/<name>"), in call order.
  void activate(const std::vector<PodPtr>& pods) override {
    std::lock_guard lock(mu_);
    for (const auto& p : pods)
      activated_.push_back(p->metadata.namespace_ + "/" + p->metadata.name);
  }
  [[nodiscard]] std::vector<std::string> activated() const {
    std::lock_guard lock(mu_);
    return activated_;
  }
  void clearActivated() {
    std::lock_guard lock(mu_);
    activated_.clear();
  }
  // Pod handlers and watches are recorded (the plugin's own handlers run nothing here).
  void addPodEventHandlers(PodEventHandlers handlers) override {
    std::lock_guard lock(mu_);
    podHandlers_.push_back(std::move(handlers));
  }
  [[nodiscard]] std::shared_ptr<const ObjectStore> watchObjects(
      const ObjectWatch& what, ObjectEventHandlers /*handlers*/) override {
    std::lock_guard lock(mu_);
    watched_.push_back(what.path);
    return std::make_shared<EmptyObjectStore>();
  }
  [[nodiscard]] size_t podHandlerCount() const {
    std::lock_guard lock(mu_);
    return podHandlers_.size();
  }
  [[nodiscard]] std::vector<std::string> watchedPaths() const {
    std::lock_guard lock(mu_);
    return watched_;
  }
  [[nodiscard]] FakeEventRecorder& fakeEvents() { return recorder_; }
  [[nodiscard]] std::vector<PodInfoPtr> nominatedPodsForNode(
      const std::string& nodeName) const override {
    std::lock_guard lock(mu_);
    auto it = nominated_.find(nodeName);
    return it == nominated_.end() ? std::vector<PodInfoPtr>{} : it->second;
  }
  // Nominates `pod` to `nodeName` (as preemption would).
  void nominate(const std::string& nodeName, PodInfoPtr pod) {
    std::lock_guard lock(mu_);
    nominated_[nodeName].push_back(std::move(pod));
  }
  // Tests have no cache apart from the snapshot: a copy of the snapshot's NodeInfo.
  [[nodiscard]] std::shared_ptr<const NodeInfo> currentNodeInfo(
      std::string_view nodeName) const override {
    const NodeInfo* ni = snapshot().get(nodeName);
    return ni != nullptr && ni->node() != nullptr ? std::make_shared<const NodeInfo>(*ni) : nullptr;
  }
  [[nodiscard]] Status runFilterPluginsWithNominatedPods(const CycleState& /*state*/,
                                                         const api::Pod& /*pod*/,
                                                         const NodeInfo& /*node*/) const override {
    return {};
  }
  Status runPreFilterExtensionAddPod(CycleState& /*state*/, const api::Pod& /*pod*/,
                                     const PodInfo& /*toAdd*/,
                                     const NodeInfo& /*node*/) const override {
    return {};
  }
  Status runPreFilterExtensionRemovePod(CycleState& /*state*/, const api::Pod& /*pod*/,
                                        const PodInfo& /*toRemove*/,
                                        const NodeInfo& /*node*/) const override {
    return {};
  }

 private:
  StaticClusterListers listers_;
  FakeEventRecorder recorder_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<FakeWaitingPod>> waiting_;         // guarded by mu_
  std::vector<std::string> activated_;                                     // guarded by mu_
  std::vector<PodEventHandlers> podHandlers_;                              // guarded by mu_
  std::vector<std::string> watched_;                                       // guarded by mu_
  std::map<std::string, std::vector<PodInfoPtr>, std::less<>> nominated_;  // guarded by mu_
  InlineParallelizer inline_;
  Parallelizer* parallelizer_ = nullptr;
  ClusterApi* api_ = nullptr;
  features::Gates features_;
};

// The snapshot is a FakeLister.
class FakeHandle final : public HandleBase {
 public:
  FakeHandle() = default;
  explicit FakeHandle(FakeLister lister) : lister_(std::move(lister)) {}
  [[nodiscard]] const NodeInfoLister& snapshot() const override { return lister_; }

 private:
  FakeLister lister_;
};

}  // namespace ksched::testing
