// Pods of an app and the ReplicaSets that own them, for the simulator tests that schedule a
// workload twice and compare (spread_counts_exact_test.cc, result_memo_exact_test.cc).
#pragma once

#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include <ksched/api/quantity.h>
#include <ksched/sim.h>

namespace ksched::sim::fixtures {

// A ReplicaSet "<app>" in "default" per app, selecting app=<app> (default spreading then
// applies to its pods).
inline void addReplicaSets(Cluster& cluster, std::initializer_list<const char*> apps) {
  for (const char* app : apps) {
    api::ReplicaSet rs;
    rs.metadata.name = app;
    rs.metadata.namespace_ = "default";
    rs.metadata.uid = std::string("rs-") + app;
    rs.spec.selector = api::LabelSelector{};
    rs.spec.selector->matchLabels = {{"app", app}};
    cluster.replicaSets.push_back(rs);
  }
}

// A pending pod labelled app=<app>, one container "c" requesting `cpu` and `memory`.
inline std::shared_ptr<api::Pod> appPod(const std::string& name, const std::string& app,
                                        const std::string& cpu, const std::string& memory,
                                        const std::string& ns = "default") {
  auto p = std::make_shared<api::Pod>();
  p->metadata.name = name;
  p->metadata.namespace_ = ns;
  p->metadata.uid = "uid-" + ns + "-" + name;
  p->metadata.labels = {{"app", app}};
  p->spec.schedulerName = "default-scheduler";
  api::Container c;
  c.name = "c";
  c.resources.requests["cpu"] = api::Quantity::parse(cpu);
  c.resources.requests["memory"] = api::Quantity::parse(memory);
  p->spec.containers.push_back(std::move(c));
  return p;
}

// `work` scheduled over `cluster` with the default profile, seed `seed` and
// percentageOfNodesToScore `percentage`.
inline Result scheduleWith(Cluster cluster, const std::vector<PodPtr>& work, uint64_t seed,
                           int percentage) {
  Options options;
  options.seed = seed;
  options.config =
      "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
      "percentageOfNodesToScore: " +
      std::to_string(percentage) + "\n";
  Simulator sim(std::move(cluster), options);
  return sim.schedule(work);
}

// Owned by the ReplicaSet `rs` of addReplicaSets.
inline void ownedBy(api::Pod& p, const std::string& rs) {
  p.metadata.ownerReferences.push_back({"apps/v1", "ReplicaSet", rs, "rs-" + rs, true});
}

}  // namespace ksched::sim::fixtures
