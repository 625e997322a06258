// One run of the scheduler core over a Simulator's cluster (simulation.cc): the driver. It
// builds a SchedulerCore in synchronous mode over a MemoryCluster (its ClusterApi) and a
// RecordingSink (its EventSink), feeds it the cluster, runs cycles until no pod is left to try,
// and reports what became of the pods it tracks.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <ksched/listers.h>
#include <ksched/registry.h>
#include <ksched/sim.h>

#include "config/scheduler_config.h"
#include "scheduler/scheduler_core.h"
#include "sim/memory_cluster.h"
#include "sim/recording_sink.h"

namespace ksched::sim {

// What a Simulator keeps between runs.
struct Simulator::State {
  Cluster cluster;
  Options options;
  Registry registry;
  config::SchedulerConfiguration config;
  std::vector<Cluster> saved;  // begin() stack
  uint64_t recreated = 0;      // victims recreated so far (their uids)
};

// The core's options for a simulation of `config`: scheduler::optionsFromConfig, with what a
// simulation changes. `preemption` off disables every PostFilter plugin.
[[nodiscard]] scheduler::Options coreOptions(const config::SchedulerConfiguration& config,
                                             const Options& options, bool preemption);

class Run {
 public:
  // Builds the core over `st`'s cluster and feeds it every node and pod; `st` must outlive the
  // run, whose changes reach it only through commit().
  Run(Simulator::State& st, bool preemption);
  ~Run();
  Run(const Run&) = delete;
  Run& operator=(const Run&) = delete;

  // A pod to place; a missing uid is made up. Returns its uid.
  std::string add(const PodPtr& given, const std::string& origin);
  // Runs cycles until no pod is left to try.
  void drive();
  // The outcome so far of the pods tracked, in the order they came.
  [[nodiscard]] Result result() const;
  // What became of the last pod add() took.
  [[nodiscard]] PodResult lastAdded() const;
  // Writes the cluster as it is now into the state.
  void commit();
  // Creates an object of a kind plugins watch (a PodGroup), as an apiserver POST to
  // `collection` would, and delivers it to the watches. Throws std::runtime_error when refused.
  void createObject(const std::string& collection, const nlohmann::json& object);
  // The last pod-group cycle of PodGroup "<namespace>/<name>", or nullopt.
  [[nodiscard]] std::optional<PodGroupResult> podGroup(const std::string& key) const;
  // What became of the pod of uid `uid` (origin "work").
  [[nodiscard]] PodResult outcomeOf(const std::string& uid) const { return outcome(uid, "work"); }

 private:
  // Reports on `uid` in result(); origin as in PodResult::origin.
  void track(const std::string& uid, const std::string& origin);
  [[nodiscard]] std::vector<std::pair<std::string, std::string>> tracked() const;
  [[nodiscard]] size_t trackedCount() const;
  // Tracked pods bound so far.
  [[nodiscard]] size_t placed() const;
  [[nodiscard]] PodResult outcome(const std::string& uid, const std::string& origin) const;
  // Options::onPodGroupCycle: keeps the cycle's trace as the group's result.
  void recordGroupCycle(const scheduler::PodGroupTrace& t);
  // Feeds the core the state's nodes, then its bound pods, then its pending ones.
  void feedCluster();

  Simulator::State& st_;
  StaticClusterListers listers_;
  std::set<std::string> profiles_;  // schedulerNames whose pending pods are tracked
  MemoryCluster cluster_;
  RecordingSink sink_;
  std::unique_ptr<scheduler::SchedulerCore> core_;

  // The pod-group cycles' traces, the last per group, in the order of each group's first.
  std::vector<PodGroupResult> podGroups_;

  mutable std::mutex trackedMu_;
  std::vector<std::pair<std::string, std::string>> tracked_;  // (uid, origin); guarded
  double seconds_ = 0;
};

}  // namespace ksched::sim
