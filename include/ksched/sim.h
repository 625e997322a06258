// Simulate: ksched's own scheduler -- its queue, framework, plugins (out-of-tree ones too) and
// configuration -- over an in-memory cluster, on the caller's thread, deterministic for a seed.
// `ksched simulate` is this API behind a command line (docs/simulate.md).
//
//   ksched::sim::Cluster cluster = ...;            // nodes, pods, the kinds plugins read
//   ksched::sim::Options options;
//   options.seed = 7;
//   ksched::sim::Simulator sim(cluster, options);
//   auto r = sim.schedule({pod1, pod2});          // placed, or why not; committed
//   sim.begin();                                   // a transaction
//   auto one = sim.canSchedule(*pod3);             // changes nothing
//   sim.schedule({pod3}); sim.revert();            // as if never scheduled
//
// A Simulator is not thread-safe; each has its own cluster. Nothing in it talks to an
// apiserver: bindings, deletions (preemption's victims) and status writes land in the
// in-memory cluster, events in the result. The scheduler's own log lines go through spdlog's
// default logger, as in the daemon: lower its level (spdlog::set_level) to quiet them.
// An attempt that fails with an error (not "unschedulable") is not retried within a run.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <ksched/api/node.h>
#include <ksched/api/pod.h>
#include <ksched/api/policy.h>
#include <ksched/api/storage.h>
#include <ksched/api/workloads.h>
#include <ksched/node_info.h>
#include <ksched/object_watch.h>
#include <ksched/registry.h>

namespace ksched::sim {

// An object that could not be used, and why. Listed in simulate's output; never fatal.
struct Skipped {
  std::string source;   // "nodes.yaml: document 3", "nodes.yaml: items[12]", "LIST /api/v1/pods"
  std::string object;   // "Pod default/web-1"; "" when the object has no usable kind or name
  std::string field;    // "spec.containers[0].resources.requests.cpu"; "" for the whole object
  std::string message;  // what is wrong: "quantities must match the regular expression ..."
};

struct Cluster {
  std::vector<NodePtr> nodes;
  // Every pod: bound (spec.nodeName set) and pending, in the order read.
  std::vector<PodPtr> pods;

  // What plugins list (ClusterListers).
  std::vector<api::Namespace> namespaces;
  std::vector<api::Service> services;
  std::vector<api::ReplicaSet> replicaSets;
  std::vector<api::StatefulSet> statefulSets;
  std::vector<api::ReplicationController> replicationControllers;
  std::vector<api::PodDisruptionBudget> podDisruptionBudgets;
  std::vector<api::PersistentVolumeClaim> persistentVolumeClaims;
  std::vector<api::PersistentVolume> persistentVolumes;
  std::vector<api::StorageClass> storageClasses;
  std::vector<api::CSINode> csiNodes;
  std::vector<api::CSIDriver> csiDrivers;
  std::vector<api::CSIStorageCapacity> csiStorageCapacities;

  // Objects of every other kind (custom resources such as scheduling.x-k8s.io PodGroups, which
  // plugins watch through Handle::watchObjects), by "<apiVersion>/<kind>", e.g.
  // "scheduling.x-k8s.io/v1alpha1/PodGroup". Kinds no plugin reads stay here unused.
  std::map<std::string, std::vector<UnstructuredPtr>> others;

  // Objects read but not usable.
  std::vector<Skipped> skipped;
};

// The configuration is invalid: what() lists the errors, each with its field path.
class ConfigError : public std::runtime_error {
 public:
  explicit ConfigError(const std::string& what) : std::runtime_error(what) {}
};

struct Options {
  // A KubeSchedulerConfiguration (any version ksched reads), as YAML text; "" for the defaults.
  // Its profiles, percentageOfNodesToScore and backoff settings are used; extenders are not
  // called (they are HTTP servers of a live cluster) and are dropped with a warning.
  std::string config;
  std::string configName = "--config";  // names the configuration in errors
  // The feature gates the simulated scheduler runs with (--feature-gates): its default plugins,
  // the plugins' args and behaviour follow them. Two simulators with different gates run side
  // by side in one process.
  features::Gates features;
  // Seeds every random draw (the node among equal top scores, preemption's first candidate).
  uint64_t seed = 1;
  // PostFilter (preemption) runs; off, pods that do not fit stay unschedulable.
  bool preemption = true;
  // A preempted pod comes back as a pending copy (same name, new uid), as its controller would
  // recreate it; off, it is only deleted.
  bool victimsBecomePending = true;
  // A pod attempted this many times without being placed is given up (its last reason kept).
  int maxAttempts = 20;
  // Called on the calling thread about once a second while pods are scheduled: attempts so
  // far, pods placed, pods to place in total.
  std::function<void(uint64_t attempts, uint64_t placed, uint64_t total)> progress;
};

// What became of one pod the simulation was asked to place.
struct PodResult {
  std::string namespace_;
  std::string name;
  std::string uid;
  std::optional<std::string> node;  // nullopt: not placed
  int ties = 0;  // how many other nodes had the same top score (the node was drawn among them)
  std::vector<std::string> tiedWith;  // the first 16 of them
  std::string reason;     // not placed: the FailedScheduling message ("0/3 nodes are ...")
  std::string diagnosis;  // not placed: the diagnosis as JSON text (explain's annotation form)
  int attempts = 0;
  // Placed: the devices Dynamic Resource Allocation gave its claims, "<claim>: <driver>/<pool>/
  // <device>" each (empty without claims).
  std::vector<std::string> devices;
  // "pending" (in the cluster), "work" (given to schedule()), "preempted" (a victim back as a
  // pending copy), "drained" (put back by a what-if drain).
  std::string origin = "work";
  // The PodGroup the pod belongs to (spec.schedulingGroup.podGroupName), "" for none.
  std::string podGroup;
};

// What became of one PodGroup (GenericWorkload) in a simulation: its last pod-group cycle, as
// the cycle saw it.
struct PodGroupResult {
  std::string namespace_;
  std::string name;
  bool gang = false;        // schedulingPolicy.gang; else basic
  int32_t minCount = 1;     // gang.minCount (1 for basic)
  std::string topologyKey;  // schedulingConstraints.topology[0].key, "" for none
  bool scheduled = false;   // the cycle's verdict
  std::string message;      // not scheduled: the group's message
  struct Member {
    std::string pod;   // "namespace/name"
    std::string node;  // placed there; not placed: where it would have gone ("" for nowhere)
    bool placed = false;
    bool tried = false;  // the cycle tried it (a cycle that cannot reach minCount stops early)
    std::string reason;  // not placed: its message (its own fit error, or the group's)
  };
  std::vector<Member> members;  // the pods of that cycle, in the order it placed them
  struct Placement {
    std::string name;  // the topology domain
    size_t nodes = 0;
    bool feasible = false;
    std::string message;                                        // not feasible: why
    std::vector<std::pair<std::string, std::string>> proposed;  // pod -> node
    std::optional<int64_t> score;  // PlacementScore's total, when several were feasible
  };
  std::vector<Placement> placements;  // topology constraints: the placements tried
  std::string chosen;                 // the placement the group went to
  int cycles = 0;                     // pod-group cycles the group had
};

struct Victim {
  std::string namespace_;
  std::string name;
  std::string node;
  std::string preemptor;  // "namespace/name"
};

struct Result {
  std::vector<PodResult> pods;  // in the order they were given (cluster pending pods first)
  std::vector<Victim> victims;
  uint64_t scheduled = 0;
  uint64_t unschedulable = 0;
  uint64_t attempts = 0;
  double seconds = 0;  // the scheduling alone: from the first cycle to the last
  // Kinds of Cluster::others no plugin of the configuration reads ("<apiVersion>/<kind>"), with
  // how many objects of each were left unused.
  std::vector<std::pair<std::string, size_t>> unreadKinds;
  // The PodGroups whose pods had a pod-group cycle, in the order of their first cycle.
  std::vector<PodGroupResult> podGroups;
};

class Simulator {
 public:
  // The in-tree plugins plus `outOfTree` (a name in both is a ConfigError). Throws ConfigError
  // for an invalid Options::config.
  explicit Simulator(Cluster cluster, Options options = {}, const Registry& outOfTree = {});
  ~Simulator();
  Simulator(const Simulator&);
  Simulator& operator=(const Simulator&);

  // The cluster as the placements so far left it (pods bound, victims gone).
  [[nodiscard]] const Cluster& cluster() const;
  [[nodiscard]] const Options& options() const;
  // The schedulerNames of the configuration's profiles: the pending pods it schedules.
  [[nodiscard]] std::vector<std::string> profiles() const;

  // Schedules the cluster's pending pods that a profile of the configuration schedules, then
  // `pods` (pending: their spec.nodeName is ignored), in the queue's order, until no pod is
  // left that could be placed; places and evicts in the cluster. `origin` tags `pods` in the
  // result.
  Result schedule(const std::vector<PodPtr>& pods = {}, const std::string& origin = "work");
  // The same, taking the pods: each is let go as soon as the run holds its own copy, so that
  // a large batch handed over is not kept alive to the end beside the placed copies.
  Result schedule(std::vector<PodPtr>&& pods, const std::string& origin = "work");
  // The same with an origin per pod.
  struct Pending {
    PodPtr pod;
    std::string origin = "work";
  };
  Result schedule(const std::vector<Pending>& pods);

  // kubectl drain, in the cluster: cordons `node` (spec.unschedulable) and removes its pods but
  // DaemonSet pods and mirror pods; returns them as pending copies (same name and uid, no node),
  // to hand to schedule() with the origin "drained". Unknown node: std::invalid_argument.
  // Like evict(), it takes the pods' metrics off the node's (NodeMetrics, PodMetrics).
  std::vector<PodPtr> drain(const std::string& node);
  // An eviction, in the cluster: removes pod `ns`/`name` from its node and returns it as a
  // pending copy (same name and uid, no node), to hand to schedule() with the origin "drained".
  // Its PodMetrics go, and its usage comes off its node's NodeMetrics, as metrics-server's next
  // reading would show. Unknown or pending pod: std::invalid_argument.
  PodPtr evict(const std::string& ns, const std::string& name);
  // kubectl cordon (`unschedulable` true) or uncordon (false) in the cluster; its pods stay.
  // Unknown node: std::invalid_argument.
  void cordon(const std::string& node, bool unschedulable = true);
  // Where `pod` would go now, or why it would not: one attempt without preemption, changing
  // nothing. The cluster's pending pods are left out (as for capacity()).
  [[nodiscard]] PodResult canSchedule(const api::Pod& pod);
  // Schedules `pod` with preemption on (whatever Options::preemption says): its node, and the
  // pods evicted in Result::victims. Committed. Like schedule(), it first places the cluster's
  // pending pods (with preemption on for them too).
  Result preempt(const api::Pod& pod);

  // How many more copies of `pod` fit, placed one after the other (no preemption), up to
  // `limit`; `next` is the first copy that did not fit, with its reason. Changes nothing.
  struct Capacity {
    int fits = 0;
    std::optional<PodResult> next;  // nullopt: the limit was reached
  };
  [[nodiscard]] Capacity capacity(const api::Pod& pod, int limit = 100000);

  // The pod-group cycle PodGroup `ns`/`name` would have now (no preemption): the cluster's
  // pending pods of that group only (the other pending pods are left out, as for capacity()).
  // nullopt when no cycle ran (the group's pods are held at PreEnqueue, or none is pending).
  // Changes nothing.
  [[nodiscard]] std::optional<PodGroupResult> canScheduleGroup(const std::string& ns,
                                                               const std::string& name);
  // How many more gangs shaped as `podGroup` (the PodGroup object as read) and its `pods` fit,
  // one group after the other, each placed whole by its pod-group cycle (no preemption), up to
  // `limit`. Copy k is the PodGroup named "<name>-k" with each pod named "<pod>-k"; `next` is
  // the first copy that did not fit, with its cycle. Changes nothing.
  struct GroupCapacity {
    int fits = 0;
    std::optional<PodGroupResult> next;  // nullopt: the limit was reached
    std::vector<PodResult> nextPods;     // the pods of `next`, what became of each
  };
  [[nodiscard]] GroupCapacity groupCapacity(const UnstructuredObject& podGroup,
                                            const std::vector<PodPtr>& pods, int limit = 10000);

  // Transactions: begin() saves the cluster; commit() keeps what happened since, revert() goes
  // back to the save. They nest. commit()/revert() without begin() throw std::logic_error.
  void begin();
  void commit();
  void revert();
  // A copy to try something on, leaving this one alone.
  [[nodiscard]] Simulator fork() const { return *this; }

  struct State;  // the implementation's

 private:
  std::unique_ptr<State> state_;
};

}  // namespace ksched::sim
