// The Simulator (include/ksched/sim.h): its state between runs, its transactions, and the
// questions it answers, each one Run (run.h) of the scheduler core over the cluster.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <stdexcept>

#include <ksched/api/decode.h>
#include <ksched/api/pod_group.h>
#include <ksched/sim.h>

#include "config/scheduler_config.h"
#include "config/wiring.h"
#include "plugins/registry.h"
#include "sim/metrics_usage.h"
#include "sim/run.h"

namespace ksched::sim {

Simulator::Simulator(Cluster cluster, Options options, const Registry& outOfTree)
    : state_(std::make_unique<State>()) {
  state_->cluster = std::move(cluster);
  state_->options = std::move(options);
  state_->registry = plugins::inTreeRegistry();
  try {
    state_->registry.merge(outOfTree);
  } catch (const std::exception& e) {
    throw ConfigError(e.what());
  }
  if (state_->options.config.empty()) {
    state_->config = config::defaultConfiguration();
    state_->config.featureGates = state_->options.features;
  } else {
    auto loaded =
        config::loadConfig(state_->options.config, state_->options.configName,
                           config::wiringCheck(state_->registry), state_->options.features);
    if (!loaded.ok()) {
      std::string msg = "invalid configuration in " + state_->options.configName + ":";
      for (const auto& e : loaded.errors) msg += "\n  " + e;
      throw ConfigError(msg);
    }
    state_->config = std::move(*loaded.config);
  }
  if (!state_->config.extenders.empty()) {
    spdlog::warn("{}: extenders are not called in a simulation ({} dropped)",
                 state_->options.configName, state_->config.extenders.size());
    state_->config.extenders.clear();
  }
}

Simulator::~Simulator() = default;
Simulator::Simulator(const Simulator& other) : state_(std::make_unique<State>(*other.state_)) {}
Simulator& Simulator::operator=(const Simulator& other) {
  if (this != &other) state_ = std::make_unique<State>(*other.state_);
  return *this;
}

const Cluster& Simulator::cluster() const { return state_->cluster; }
const Options& Simulator::options() const { return state_->options; }
std::vector<std::string> Simulator::profiles() const {
  std::vector<std::string> out;
  for (const auto& p : state_->config.profiles) out.push_back(p.schedulerName);
  return out;
}

namespace {

// Schedules what `run` was given, keeps the outcome in the cluster, and reports it.
Result driveAndCommit(Run& run) {
  run.drive();
  Result r = run.result();
  run.commit();
  return r;
}

}  // namespace

Result Simulator::schedule(const std::vector<PodPtr>& pods, const std::string& origin) {
  return schedule(std::vector<PodPtr>(pods), origin);
}

Result Simulator::schedule(std::vector<PodPtr>&& pods, const std::string& origin) {
  Run run(*state_, state_->options.preemption);
  for (PodPtr& p : pods) {
    run.add(p, origin);
    p.reset();
  }
  pods.clear();
  return driveAndCommit(run);
}

Result Simulator::schedule(const std::vector<Pending>& pods) {
  Run run(*state_, state_->options.preemption);
  for (const auto& p : pods) run.add(p.pod, p.origin);
  return driveAndCommit(run);
}

void Simulator::cordon(const std::string& node, bool unschedulable) {
  Cluster& c = state_->cluster;
  auto n = std::find_if(c.nodes.begin(), c.nodes.end(),
                        [&](const NodePtr& x) { return x->metadata.name == node; });
  if (n == c.nodes.end())
    throw std::invalid_argument("node \"" + node + "\" is not in the cluster");
  if ((*n)->spec.unschedulable == unschedulable) return;
  auto changed = std::make_shared<api::Node>(**n);
  changed->spec.unschedulable = unschedulable;
  *n = std::move(changed);
}

namespace {

// `p` as a pending copy: no node, a fresh status.
PodPtr pendingCopy(const api::Pod& p) {
  auto again = std::make_shared<api::Pod>(p);
  again->spec.nodeName.clear();
  again->status = api::PodStatus{};
  again->status.phase = "Pending";
  return again;
}

}  // namespace

PodPtr Simulator::evict(const std::string& ns, const std::string& name) {
  auto& pods = state_->cluster.pods;
  auto it = std::find_if(pods.begin(), pods.end(), [&](const PodPtr& p) {
    return p->metadata.namespace_ == ns && p->metadata.name == name && !p->spec.nodeName.empty();
  });
  if (it == pods.end()) {
    throw std::invalid_argument("pod \"" + ns + "/" + name + "\" is not on a node of the cluster");
  }
  PodPtr out = pendingCopy(**it);
  releaseUsage(state_->cluster, {*it});
  pods.erase(it);
  return out;
}

std::vector<PodPtr> Simulator::drain(const std::string& node) {
  cordon(node);
  Cluster& c = state_->cluster;
  std::vector<PodPtr> out;
  std::vector<PodPtr> kept;
  std::vector<PodPtr> evicted;
  for (const auto& p : c.pods) {
    const bool daemon =
        std::any_of(p->metadata.ownerReferences.begin(), p->metadata.ownerReferences.end(),
                    [](const api::OwnerReference& o) { return o.kind == "DaemonSet"; });
    const bool mirror = p->metadata.annotations.contains("kubernetes.io/config.mirror");
    if (p->spec.nodeName != node || daemon || mirror) {
      kept.push_back(p);
      continue;
    }
    out.push_back(pendingCopy(*p));
    evicted.push_back(p);
  }
  releaseUsage(c, evicted);
  c.pods = std::move(kept);
  return out;
}

PodResult Simulator::canSchedule(const api::Pod& pod) {
  State copy = *state_;
  std::erase_if(copy.cluster.pods, [](const PodPtr& p) { return p->spec.nodeName.empty(); });
  Run run(copy, false);
  run.add(std::make_shared<api::Pod>(pod), "work");
  run.drive();
  Result r = run.result();
  for (auto& p : r.pods) {
    if (p.origin == "work") return p;
  }
  return {};
}

Result Simulator::preempt(const api::Pod& pod) {
  Run run(*state_, true);
  run.add(std::make_shared<api::Pod>(pod), "work");
  run.drive();
  Result r = run.result();
  run.commit();
  return r;
}

Simulator::Capacity Simulator::capacity(const api::Pod& pod, int limit) {
  State copy = *state_;
  std::erase_if(copy.cluster.pods, [](const PodPtr& p) { return p->spec.nodeName.empty(); });
  Run run(copy, false);
  Capacity out;
  for (int i = 0; i < limit; ++i) {
    auto copyPod = std::make_shared<api::Pod>(pod);
    copyPod->metadata.name = pod.metadata.name + "-" + std::to_string(i + 1);
    copyPod->metadata.uid.clear();
    run.add(copyPod, "work");
    run.drive();
    PodResult last = run.lastAdded();
    if (!last.node) {
      out.next = std::move(last);
      return out;
    }
    ++out.fits;
  }
  return out;
}

std::optional<PodGroupResult> Simulator::canScheduleGroup(const std::string& ns,
                                                          const std::string& name) {
  State copy = *state_;
  std::erase_if(copy.cluster.pods, [&](const PodPtr& p) {
    const std::string* group = p->spec.podGroupName();
    return p->spec.nodeName.empty() &&
           (p->metadata.namespace_ != ns || group == nullptr || *group != name);
  });
  Run run(copy, false);
  run.drive();
  return run.podGroup(ns + "/" + name);
}

Simulator::GroupCapacity Simulator::groupCapacity(const UnstructuredObject& podGroup,
                                                  const std::vector<PodPtr>& pods, int limit) {
  State copy = *state_;
  std::erase_if(copy.cluster.pods, [](const PodPtr& p) { return p->spec.nodeName.empty(); });
  Run run(copy, false);
  GroupCapacity out;
  const std::string ns =
      podGroup.metadata.namespace_.empty() ? "default" : podGroup.metadata.namespace_;
  const std::string collection =
      "/apis/" + podGroup.object.value("apiVersion", std::string("scheduling.k8s.io/v1beta1")) +
      "/namespaces/" + ns + "/podgroups";
  for (int i = 1; i <= limit; ++i) {
    // A fresh PodGroup of the same spec, and its pods pointing at it.
    const std::string name = podGroup.metadata.name + "-" + std::to_string(i);
    nlohmann::json g = podGroup.object;
    g.erase("status");
    nlohmann::json& meta = g["metadata"];
    for (const char* field : {"uid", "resourceVersion", "creationTimestamp", "generation"}) {
      meta.erase(field);
    }
    meta["name"] = name;
    meta["namespace"] = ns;
    run.createObject(collection, g);
    std::vector<std::string> uids;
    for (const auto& p : pods) {
      auto member = std::make_shared<api::Pod>(*p);
      member->metadata.name += "-" + std::to_string(i);
      member->metadata.namespace_ = ns;
      member->metadata.uid.clear();
      member->spec.schedulingGroup.emplace();
      member->spec.schedulingGroup->podGroupName = name;
      uids.push_back(run.add(member, "work"));
    }
    run.drive();
    std::vector<PodResult> results;
    bool all = true;
    for (const auto& uid : uids) {
      results.push_back(run.outcomeOf(uid));
      all = all && results.back().node.has_value();
    }
    if (all) {
      ++out.fits;
      continue;
    }
    out.next = run.podGroup(ns + "/" + name);
    if (!out.next) {
      // No cycle ran (its pods held at PreEnqueue): the pods say why.
      const api::PodGroup pg = api::decode<api::PodGroup>(g);
      out.next = PodGroupResult{.namespace_ = ns,
                                .name = name,
                                .gang = pg.spec.schedulingPolicy.gang(),
                                .minCount = pg.spec.schedulingPolicy.minCount(),
                                .message = results.front().reason};
    } else if (out.next->message.empty()) {
      // The group was placed but not every pod of it (more pods than minCount).
      for (const auto& r : results) {
        if (!r.node) {
          out.next->message = r.reason;
          break;
        }
      }
    }
    out.nextPods = std::move(results);
    return out;
  }
  return out;
}

void Simulator::begin() { state_->saved.push_back(state_->cluster); }
void Simulator::commit() {
  if (state_->saved.empty()) throw std::logic_error("commit() without begin()");
  state_->saved.pop_back();
}
void Simulator::revert() {
  if (state_->saved.empty()) throw std::logic_error("revert() without begin()");
  state_->cluster = std::move(state_->saved.back());
  state_->saved.pop_back();
}

}  // namespace ksched::sim
