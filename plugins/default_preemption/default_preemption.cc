#include "plugins/default_preemption/default_preemption.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

#include <ksched/api/pod.h>
#include <ksched/api/rfc3339.h>
#include <ksched/api/selectors.h>
#include <ksched/extender.h>
#include <ksched/fit_error.h>
#include <ksched/helper/args_json.h>
#include <ksched/registry.h>

namespace ksched::plugins {

DefaultPreemptionArgs decodeDefaultPreemptionArgs(const nlohmann::json& j) {
  DefaultPreemptionArgs a;
  if (j.is_null()) return a;
  helper::expectObject(j, "",
                       {helper::kApiVersionKey, helper::kKindKey, "minCandidateNodesPercentage",
                        "minCandidateNodesAbsolute"});
  helper::readInt32(j, "minCandidateNodesPercentage", "", a.minCandidateNodesPercentage);
  helper::readInt32(j, "minCandidateNodesAbsolute", "", a.minCandidateNodesAbsolute);
  // Upstream ValidateDefaultPreemptionArgs.
  if (a.minCandidateNodesPercentage < 0 || a.minCandidateNodesPercentage > 100) {
    throw PluginArgsError("minCandidateNodesPercentage: Invalid value: " +
                          std::to_string(a.minCandidateNodesPercentage) +
                          ": not in valid range [0, 100]");
  }
  if (a.minCandidateNodesAbsolute < 0) {
    throw PluginArgsError(
        "minCandidateNodesAbsolute: Invalid value: " + std::to_string(a.minCandidateNodesAbsolute) +
        ": not in valid range [0, inf)");
  }
  if (a.minCandidateNodesPercentage == 0 && a.minCandidateNodesAbsolute == 0) {
    throw PluginArgsError(
        "minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as "
        "minCandidateNodesAbsolute");
  }
  return a;
}

namespace preemption {
namespace {

using Clock = std::chrono::system_clock;

// status.startTime. Pods that have not started (assumed, or no kubelet yet) count as started
// "now", i.e. after every pod that has; they compare equal among themselves.
Clock::time_point startTime(const api::Pod& pod) {
  const auto t = pod.status.startTime ? api::parseRFC3339(*pod.status.startTime) : std::nullopt;
  return t ? *t : Clock::time_point::max();
}

bool selectorIsEmpty(const std::optional<api::LabelSelector>& s) {
  return !s || (s->matchLabels.empty() && s->matchExpressions.empty());
}

// The earliest start among the highest-priority victims (upstream GetEarliestPodStartTime).
Clock::time_point earliestStartOfMostImportant(const std::vector<PodInfoPtr>& victims) {
  int32_t maxPriority = api::podPriority(*victims.front()->pod);
  Clock::time_point earliest = startTime(*victims.front()->pod);
  for (const auto& v : victims) {
    const int32_t p = api::podPriority(*v->pod);
    if (p == maxPriority) {
      earliest = std::min(earliest, startTime(*v->pod));
    } else if (p > maxPriority) {
      maxPriority = p;
      earliest = startTime(*v->pod);
    }
  }
  return earliest;
}

// Keeps the indices in `idx` whose key is minimal.
template <typename Key>
void keepMinimal(const std::vector<Candidate>& cs, std::vector<size_t>& idx, Key key) {
  auto best = key(cs[idx.front()]);
  for (size_t i : idx) best = std::min(best, key(cs[i]));
  std::erase_if(idx, [&](size_t i) { return key(cs[i]) != best; });
}

// A pod being deleted by a preemption (upstream podTerminatingByPreemption).
bool terminatingByPreemption(const api::Pod& p) {
  if (!p.metadata.deletionTimestamp) return false;
  const api::PodCondition* c = p.condition("DisruptionTarget");
  return c != nullptr && c->status == "True" && c->reason == "PreemptionByScheduler";
}

}  // namespace

bool moreImportantPod(const api::Pod& a, const api::Pod& b) {
  const int32_t pa = api::podPriority(a);
  const int32_t pb = api::podPriority(b);
  if (pa != pb) return pa > pb;
  return startTime(a) < startTime(b);
}

void filterPodsWithPDBViolation(
    const std::vector<PodInfoPtr>& pods,
    const std::vector<std::shared_ptr<const api::PodDisruptionBudget>>& pdbs,
    std::vector<PodInfoPtr>& violating, std::vector<PodInfoPtr>& nonViolating) {
  std::vector<int32_t> allowed;
  std::vector<api::Selector> selectors;
  allowed.reserve(pdbs.size());
  selectors.reserve(pdbs.size());
  for (const auto& pdb : pdbs) {
    allowed.push_back(pdb->status.disruptionsAllowed);
    selectors.push_back(selectorIsEmpty(pdb->spec.selector)
                            ? api::Selector::nothing()
                            : api::Selector::compile(pdb->spec.selector));
  }
  for (const auto& pi : pods) {
    const api::Pod& pod = *pi->pod;
    bool violated = false;
    // A pod without labels matches no PDB.
    if (!pod.metadata.labels.empty()) {
      for (size_t i = 0; i < pdbs.size(); ++i) {
        const auto& pdb = *pdbs[i];
        if (pdb.metadata.namespace_ != pod.metadata.namespace_) continue;
        if (selectorIsEmpty(pdb.spec.selector) || !selectors[i].matches(pod.metadata.labels)) {
          continue;
        }
        // Already processed by the apiserver's eviction: not counted again.
        if (pdb.status.disruptedPods.contains(pod.metadata.name)) continue;
        if (--allowed[i] < 0) violated = true;
      }
    }
    (violated ? violating : nonViolating).push_back(pi);
  }
}

size_t pickOneCandidate(const std::vector<Candidate>& cs) {
  for (size_t i = 0; i < cs.size(); ++i) {
    if (cs[i].victims.empty()) return i;  // nothing to evict: cannot do better
  }
  std::vector<size_t> idx(cs.size());
  for (size_t i = 0; i < cs.size(); ++i) idx[i] = i;
  keepMinimal(cs, idx, [](const Candidate& c) { return c.numPDBViolations; });
  if (idx.size() > 1) {
    keepMinimal(cs, idx, [](const Candidate& c) { return api::podPriority(*c.victims[0]->pod); });
  }
  if (idx.size() > 1) {
    keepMinimal(cs, idx, [](const Candidate& c) {
      // Shifted so that negative priorities still add up to a smaller sum.
      int64_t sum = 0;
      for (const auto& v : c.victims) {
        sum +=
            int64_t{api::podPriority(*v->pod)} + int64_t{std::numeric_limits<int32_t>::max()} + 1;
      }
      return sum;
    });
  }
  if (idx.size() > 1) {
    keepMinimal(cs, idx, [](const Candidate& c) { return c.victims.size(); });
  }
  if (idx.size() > 1) {
    // Latest start wins: minimise the negated time.
    keepMinimal(cs, idx, [](const Candidate& c) {
      return -earliestStartOfMostImportant(c.victims).time_since_epoch().count();
    });
  }
  return idx.front();
}

int32_t numCandidates(const DefaultPreemptionArgs& args, int32_t numNodes) {
  int64_t n = int64_t{numNodes} * args.minCandidateNodesPercentage / 100;
  n = std::max<int64_t>(n, args.minCandidateNodesAbsolute);
  return static_cast<int32_t>(std::min<int64_t>(n, numNodes));
}

std::string ineligibleReason(const api::Pod& pod, const NodeInfoLister& nodes,
                             const Status* nominatedNodeStatus) {
  if (pod.spec.preemptionPolicy && *pod.spec.preemptionPolicy == "Never") {
    return "not eligible due to preemptionPolicy=Never.";
  }
  const std::string& nominated = pod.status.nominatedNodeName;
  if (nominated.empty()) return {};
  // The nominated node cannot host the pod anyway: preempting elsewhere may help.
  if (nominatedNodeStatus != nullptr &&
      nominatedNodeStatus->code() == Code::kUnschedulableAndUnresolvable) {
    return {};
  }
  if (const NodeInfo* ni = nodes.get(nominated); ni != nullptr) {
    const int32_t prio = api::podPriority(pod);
    for (const auto& pi : ni->pods()) {
      if (api::podPriority(*pi->pod) < prio && terminatingByPreemption(*pi->pod)) {
        return "not eligible due to a terminating pod on the nominated node.";
      }
    }
  }
  return {};
}

}  // namespace preemption

using preemption::Candidate;

DefaultPreemption::DefaultPreemption(DefaultPreemptionArgs args, Handle& handle)
    : args_(args),
      handle_(handle),
      rng_(handle.randomSeed()),
      settling_(PreemptionSettling::of(handle)) {
  if (handle.features().enabled(features::Feature::kGenericWorkload)) {
    podGroups_ = handle.watchObjects({.kind = "PodGroup",
                                      .path = std::string(api::kPodGroupsV1beta1),
                                      .labelSelector = "",
                                      .alternatives = {std::string(api::kPodGroupsV1alpha2)},
                                      .optional = true},
                                     {});
  }
}

DefaultPreemption::~DefaultPreemption() = default;

std::vector<std::shared_ptr<const api::PodDisruptionBudget>> DefaultPreemption::allPdbs(
    const std::vector<const NodeInfo*>& nodes) const {
  // PDBs of every namespace that has a pod on a candidate node.
  std::set<std::string, std::less<>> namespaces;
  for (const NodeInfo* n : nodes) {
    for (const auto& pi : n->pods()) namespaces.insert(pi->pod->metadata.namespace_);
  }
  std::vector<std::shared_ptr<const api::PodDisruptionBudget>> out;
  for (const auto& ns : namespaces) {
    for (auto& pdb : handle_.listers().podDisruptionBudgets(ns)) out.push_back(std::move(pdb));
  }
  return out;
}

Status DefaultPreemption::selectVictimsOnNode(
    CycleState& state, const api::Pod& pod, NodeInfo& nodeInfo,
    const std::vector<std::shared_ptr<const api::PodDisruptionBudget>>& pdbs,
    std::vector<PodInfoPtr>& victims, int64_t& numViolating) const {
  const int32_t prio = api::podPriority(pod);
  auto removePod = [&](const PodInfoPtr& pi) {
    nodeInfo.removePod(pi->pod->metadata.uid);
    return handle_.runPreFilterExtensionRemovePod(state, pod, *pi, nodeInfo);
  };
  auto addPod = [&](const PodInfoPtr& pi) {
    nodeInfo.addPod(pi);
    return handle_.runPreFilterExtensionAddPod(state, pod, *pi, nodeInfo);
  };

  std::vector<PodInfoPtr> potential;
  for (const auto& pi : nodeInfo.pods()) {
    if (api::podPriority(*pi->pod) < prio) potential.push_back(pi);
  }
  for (const auto& pi : potential) {
    if (Status s = removePod(pi); !s.ok()) return Status::error(s.message());
  }
  if (potential.empty()) {
    return Status::unresolvable("No preemption victims found for incoming pod");
  }
  if (Status s = handle_.runFilterPluginsWithNominatedPods(state, pod, nodeInfo); !s.ok()) {
    return s;
  }
  std::sort(potential.begin(), potential.end(), [](const PodInfoPtr& a, const PodInfoPtr& b) {
    return preemption::moreImportantPod(*a->pod, *b->pod);
  });
  std::vector<PodInfoPtr> violating, nonViolating;
  preemption::filterPodsWithPDBViolation(potential, pdbs, violating, nonViolating);

  // Re-adds the pod; keeps it as a victim when the preemptor no longer fits with it.
  auto reprieve = [&](const PodInfoPtr& pi, bool& fits) -> Status {
    if (Status s = addPod(pi); !s.ok()) return Status::error(s.message());
    fits = handle_.runFilterPluginsWithNominatedPods(state, pod, nodeInfo).ok();
    if (!fits) {
      if (Status s = removePod(pi); !s.ok()) return Status::error(s.message());
      victims.push_back(pi);
    }
    return {};
  };
  for (const auto& pi : violating) {
    bool fits = false;
    if (Status s = reprieve(pi, fits); !s.ok()) return s;
    if (!fits) ++numViolating;
  }
  for (const auto& pi : nonViolating) {
    bool fits = false;
    if (Status s = reprieve(pi, fits); !s.ok()) return s;
  }
  if (!violating.empty() && !nonViolating.empty()) {
    std::sort(victims.begin(), victims.end(), [](const PodInfoPtr& a, const PodInfoPtr& b) {
      return preemption::moreImportantPod(*a->pod, *b->pod);
    });
  }
  return {};
}

Status DefaultPreemption::findCandidate(const CycleState& state, const api::Pod& pod,
                                        const NodeToStatus& filteredStatuses, Candidate& chosen,
                                        bool* noCandidates) {
  const NodeInfoLister& snapshot = handle_.snapshot();
  const Status* nominatedStatus = nullptr;
  if (!pod.status.nominatedNodeName.empty()) {
    auto it = filteredStatuses.find(pod.status.nominatedNodeName);
    if (it != filteredStatuses.end()) nominatedStatus = &it->second;
  }
  std::string why = preemption::ineligibleReason(pod, snapshot, nominatedStatus);
  if (why.empty() && victimsStillPresent(pod, snapshot)) {
    why = "not eligible due to a terminating pod on the nominated node.";
  }
  if (why.empty()) why = settling_->settling(pod);  // preemptionPolicy Never said so already
  if (!why.empty()) return Status::unschedulable(why);

  // Nodes where preemption might help: rejected as Unschedulable. Nodes without a status were
  // excluded by a PreFilter result: nothing on them can change that.
  FitError fit;
  std::vector<const NodeInfo*> potential;
  for (const NodeInfo* n : snapshot.list()) {
    auto it = filteredStatuses.find(n->name());
    if (it != filteredStatuses.end() && it->second.code() == Code::kUnschedulable) {
      potential.push_back(n);
    } else {
      fit.diagnosis.nodeToStatus.emplace(
          n->name(), Status::unresolvable("Preemption is not helpful for scheduling"));
    }
  }

  std::vector<Candidate> nonViolating, violating;
  if (!potential.empty()) {
    const auto pdbs = allPdbs(potential);
    const int32_t numNodes = static_cast<int32_t>(potential.size());
    const int32_t want = preemption::numCandidates(args_, numNodes);
    int32_t offset = fixedOffset_;
    if (offset < 0 || offset >= numNodes) {
      std::lock_guard lock(rngMu_);
      offset = std::uniform_int_distribution<int32_t>(0, numNodes - 1)(rng_);
    }
    std::mutex mu;
    std::atomic<bool> enough{false};
    std::optional<Status> firstError;
    handle_.parallelizer().until(
        numNodes,
        [&](int i) {
          const NodeInfo* node = potential[static_cast<size_t>((offset + i) % numNodes)];
          auto nodeCopy = node->clone();
          auto stateCopy = std::make_shared<CycleState>(state.clone());
          Candidate c;
          c.node = node->name();
          Status s =
              selectVictimsOnNode(*stateCopy, pod, *nodeCopy, pdbs, c.victims, c.numPDBViolations);
          c.state = std::move(stateCopy);
          if (s.ok() && c.victims.empty()) {
            s = Status::error("expected at least one victim pod on node \"" + c.node + "\"");
          }
          std::lock_guard lock(mu);
          if (s.ok()) {
            (c.numPDBViolations == 0 ? nonViolating : violating).push_back(std::move(c));
            if (!nonViolating.empty() &&
                static_cast<int32_t>(nonViolating.size() + violating.size()) >= want) {
              enough = true;
            }
            return;
          }
          if (s.isError() && !firstError) firstError = s;
          fit.diagnosis.nodeToStatus.insert_or_assign(node->name(), std::move(s));
        },
        [&] { return enough.load(); });
    if (firstError && nonViolating.empty() && violating.empty()) return *firstError;
  }
  std::vector<Candidate> candidates = std::move(nonViolating);
  for (auto& c : violating) candidates.push_back(std::move(c));
  if (candidates.empty()) {
    if (noCandidates != nullptr) *noCandidates = true;
    fit.numAllNodes = static_cast<int>(fit.diagnosis.nodeToStatus.size());
    return Status::unschedulable(fit.message());
  }
  if (!handle_.extenders().empty()) {
    if (Status s = callExtenders(pod, candidates); !s.ok()) return s;
    if (candidates.empty()) return Status::unschedulable("no candidate node for preemption");
  }
  chosen = std::move(candidates[preemption::pickOneCandidate(candidates)]);
  return {};
}

Status DefaultPreemption::callExtenders(const api::Pod& pod,
                                        std::vector<Candidate>& candidates) const {
  std::map<std::string, ExtenderVictims> victims;
  for (const auto& c : candidates) victims[c.node] = {c.victims, c.numPDBViolations};
  for (const auto& e : handle_.extenders()) {
    if (!e->supportsPreemption() || !e->isInterested(pod)) continue;
    if (Status s = e->processPreemption(pod, victims, handle_.snapshot()); !s.ok()) {
      if (e->isIgnorable()) {
        spdlog::info("skipped extender {} as it returned error and has ignorable flag set: {}",
                     e->name(), s.message());
        continue;
      }
      return s;
    }
    for (auto it = victims.begin(); it != victims.end();) {
      if (!it->second.pods.empty()) {
        ++it;
        continue;
      }
      if (!e->isIgnorable()) {
        return Status::error("expected at least one victim pod on node \"" + it->first + "\"");
      }
      spdlog::info("ignored node {} for which extender {} did not report victims", it->first,
                   e->name());
      it = victims.erase(it);
    }
    if (victims.empty()) break;  // no preemption can happen whatever the others say
  }
  // The candidates the extenders kept, in the dry run's order, with their victims.
  std::vector<Candidate> kept;
  for (auto& c : candidates) {
    auto it = victims.find(c.node);
    if (it == victims.end()) continue;
    c.victims = std::move(it->second.pods);
    c.numPDBViolations = it->second.numPDBViolations;
    std::stable_sort(c.victims.begin(), c.victims.end(),
                     [](const PodInfoPtr& a, const PodInfoPtr& b) {
                       return preemption::moreImportantPod(*a->pod, *b->pod);
                     });
    kept.push_back(std::move(c));
  }
  candidates = std::move(kept);
  return {};
}

std::pair<PostFilterResult, Status> DefaultPreemption::postFilter(
    CycleState& state, const api::Pod& pod, const NodeToStatus& filteredStatuses) {
  attempts_.fetch_add(1);
  handle_.metrics().observePreemptionAttempt();
  Candidate chosen;
  bool noCandidates = false;
  Status s = findCandidate(state, pod, filteredStatuses, chosen, &noCandidates);
  if (!s.ok()) {
    PostFilterResult r;
    // No candidate at all: the pod's old nomination no longer holds (upstream clears it).
    if (noCandidates) r.nominatedNodeName = "";
    if (s.isRejected()) return {r, Status(s.code(), {"preemption: " + s.message()})};
    return {r, s};
  }
  victims_.fetch_add(chosen.victims.size());
  if (onVictims_) onVictims_(chosen.victims.size());
  handle_.metrics().observePreemptionVictims(chosen.victims.size());
  spdlog::info("pod {}/{} preempts {} pod(s) on node {}", pod.metadata.namespace_,
               pod.metadata.name, chosen.victims.size(), chosen.node);
  if (chosen.state) settling_->chosen(*chosen.state, pod, chosen.node);
  prepareCandidate(pod, chosen);
  return {PostFilterResult{chosen.node}, {}};
}

Status DefaultPreemption::dryRunPostFilter(const CycleState& state, const api::Pod& pod,
                                           const NodeToStatus& filteredStatuses,
                                           Proposal& proposal) {
  Candidate chosen;
  Status s = findCandidate(state, pod, filteredStatuses, chosen);
  if (!s.ok()) return s.isRejected() ? Status(s.code(), {"preemption: " + s.message()}) : s;
  proposal.node = chosen.node;
  for (const auto& v : chosen.victims) {
    proposal.victims.push_back(v->pod->metadata.namespace_ + "/" + v->pod->metadata.name);
  }
  return {};
}

Status DefaultPreemption::preEnqueue(const api::Pod& pod) {
  std::lock_guard lock(inFlightMu_);
  if (inFlight_.contains(pod.metadata.uid)) {
    return Status::unresolvable(std::string(kWaitingForPreemption));
  }
  return {};
}

bool DefaultPreemption::victimsStillPresent(const api::Pod& pod, const NodeInfoLister& snapshot) {
  std::lock_guard lock(inFlightMu_);
  if (inFlight_.contains(pod.metadata.uid)) return true;
  auto it = evicted_.find(pod.metadata.uid);
  if (it == evicted_.end()) return false;
  if (const NodeInfo* ni = snapshot.get(it->second.node); ni != nullptr) {
    for (const auto& uid : it->second.victimUids) {
      if (ni->findPod(uid) != nullptr) return true;
    }
  }
  evicted_.erase(it);
  return false;
}

void DefaultPreemption::evict(ClusterApi& api, const api::Pod& victim, const api::Pod& preemptor,
                              const std::string& node) {
  // Marks why the pod goes away (DisruptionTarget), then deletes this very pod.
  nlohmann::json cond = {
      {"type", "DisruptionTarget"},
      {"status", "True"},
      {"reason", "PreemptionByScheduler"},
      {"message", std::string(kName) + ": preempting to accommodate a higher priority pod"},
      {"lastTransitionTime", api::formatRFC3339(std::chrono::system_clock::now())}};
  ApiResult r =
      api.patchPodStatus(victim, {{"status", {{"conditions", nlohmann::json::array({cond})}}}},
                         "application/strategic-merge-patch+json");
  if (!r) r = api.deletePod(victim);
  if (!r) {
    handle_.eventRecorder().event(
        victim, "Normal", "Preempted", "Preempting",
        "Preempted by pod " + preemptor.metadata.uid + " on node " + node);
    return;
  }
  // Gone already (or replaced by a pod of the same name): nothing to evict.
  if (!r->isNotFound() && !r->isConflict()) {
    spdlog::warn("preempting {}/{}: {}", victim.metadata.namespace_, victim.metadata.name,
                 r->message);
  }
}

void DefaultPreemption::prepareCandidate(const api::Pod& pod, const Candidate& c) {
  // Victims waiting at Permit are rejected here, on the scheduling thread (no network).
  std::vector<PodInfoPtr> toDelete;
  for (const auto& v : c.victims) {
    if (auto wp = handle_.getWaitingPod(v->pod->metadata.uid)) {
      wp->reject(std::string(kName), "preempted");
    } else {
      toDelete.push_back(v);
    }
  }
  // Lower-priority pods nominated to this node lose the nomination (upstream
  // getLowerPriorityNominatedPods).
  std::vector<PodInfoPtr> unNominate;
  const int32_t prio = api::podPriority(pod);
  for (auto& pi : handle_.nominatedPodsForNode(c.node)) {
    if (api::podPriority(*pi->pod) < prio && pi->pod->metadata.uid != pod.metadata.uid) {
      unNominate.push_back(std::move(pi));
    }
  }
  ClusterApi* api = handle_.api();
  if (api == nullptr || (toDelete.empty() && unNominate.empty())) return;

  // One task per victim, so a preemption's victims go in parallel; the last task to finish
  // clears the nominations, lifts the PreEnqueue gate and activates the preemptor.
  struct Preparation {
    PodPtr preemptor;
    std::string node;
    std::vector<PodInfoPtr> unNominate;
    std::atomic<size_t> remaining;
  };
  auto prep = std::make_shared<Preparation>();
  prep->preemptor = std::make_shared<const api::Pod>(pod);
  prep->node = c.node;
  prep->unNominate = std::move(unNominate);
  prep->remaining = std::max<size_t>(toDelete.size(), 1);
  {
    std::lock_guard lock(inFlightMu_);
    inFlight_.insert(pod.metadata.uid);
    const auto now = std::chrono::steady_clock::now();
    std::erase_if(evicted_, [&](const auto& e) { return now - e.second.at > kEvictedTtl; });
    Evicted& e = evicted_[pod.metadata.uid];
    e = {c.node, {}, now};
    for (const auto& v : toDelete) e.victimUids.push_back(v->pod->metadata.uid);
  }
  auto finish = [this, api, prep] {
    if (prep->remaining.fetch_sub(1) != 1) return;
    for (const auto& pi : prep->unNominate) {
      if (ApiResult r =
              api->patchPodStatus(*pi->pod, {{"status", {{"nominatedNodeName", nullptr}}}},
                                  "application/merge-patch+json")) {
        spdlog::warn("clearing nominatedNodeName of {}/{}: {}", pi->pod->metadata.namespace_,
                     pi->pod->metadata.name, r->message);
      }
    }
    {
      std::lock_guard lock(inFlightMu_);
      inFlight_.erase(prep->preemptor->metadata.uid);
    }
    handle_.activate({prep->preemptor});
  };
  bool queued = true;
  if (toDelete.empty()) {
    queued = handle_.runAsync(finish);
  } else {
    for (const auto& v : toDelete) {
      queued = handle_.runAsync([this, api, prep, v, finish] {
        evict(*api, *v->pod, *prep->preemptor, prep->node);
        finish();
      }) && queued;
    }
  }
  if (!queued) {
    // Shutting down: nothing will lift the gate.
    std::lock_guard lock(inFlightMu_);
    inFlight_.erase(pod.metadata.uid);
  }
}

PluginFactory defaultPreemptionFactory() {
  return makePluginFactory<DefaultPreemption>(
      [](const nlohmann::json& args) { return decodeDefaultPreemptionArgs(args); },
      [](const DefaultPreemptionArgs& typed, Handle& handle) {
        return std::make_unique<DefaultPreemption>(typed, handle);
      });
}

}  // namespace ksched::plugins
