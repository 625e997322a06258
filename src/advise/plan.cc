#include "advise/plan.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include <ksched/api/pod_resources.h>
#include <ksched/api/resources.h>

#include "advise/room.h"

namespace ksched::advise {
namespace {

// A node the plan might free: the pods it would move.
struct Candidate {
  std::string name;
  std::vector<PodPtr> moving;
  double requested = 0;    // cpu% + memory% of allocatable, all its pods
  bool preferNot = false;  // a pod asks not to be evicted when avoidable
};

api::Resource requestsOf(const api::Pod& pod, const features::Gates& gates) {
  return api::nodePodRequests(pod, gates).requests;
}

double percent(int64_t part, int64_t whole) {
  return whole <= 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
}

// The order moves are carried out in: higher priority first (as the scheduling queue takes
// them), then larger requests first (they are the hardest to place), then by name.
bool moveOrder(const PodPtr& a, const PodPtr& b, const features::Gates& gates) {
  const int32_t pa = api::podPriority(*a), pb = api::podPriority(*b);
  if (pa != pb) return pa > pb;
  const api::Resource ra = requestsOf(*a, gates), rb = requestsOf(*b, gates);
  if (ra.milliCPU != rb.milliCPU) return ra.milliCPU > rb.milliCPU;
  if (ra.memory != rb.memory) return ra.memory > rb.memory;
  return a->metadata.key() < b->metadata.key();
}

// Reads the cluster's nodes: the candidates in the order they are tried, and what keeps the
// others. Fills plan.kept and plan.alreadyFree.
std::vector<Candidate> candidatesOf(const sim::Cluster& c, const Goal& goal,
                                    const std::set<std::string>& profiles,
                                    const features::Gates& gates, Plan& plan) {
  const Budgets budgets(c.podDisruptionBudgets);
  std::unordered_map<std::string, std::vector<PodPtr>> podsOn;
  for (const auto& p : c.pods) podsOn[p->spec.nodeName].push_back(p);
  std::vector<Candidate> out;
  for (const auto& node : c.nodes) {
    const std::string& name = node->metadata.name;
    Candidate cand{name, {}, 0, false};
    if (auto it = node->metadata.annotations.find(kScaleDownDisabledAnnotation);
        it != node->metadata.annotations.end() && it->second == "true") {
      plan.notFreed.push_back(
          {name, std::string("annotation ") + kScaleDownDisabledAnnotation + "=true"});
      continue;
    }
    api::Resource used;
    bool blocked = false;
    for (const auto& p : podsOn[name]) {
      used.add(requestsOf(*p, gates));
      Verdict v = judge(*p, goal.policy, budgets);
      if (v.disposition == Disposition::kMoves && !profiles.contains(p->spec.schedulerName)) {
        v = {Disposition::kBlocks, "schedulerName \"" + p->spec.schedulerName +
                                       "\" is not a profile of the configuration"};
      }
      if (v.disposition == Disposition::kStays) continue;
      if (v.disposition == Disposition::kBlocks) {
        if (!blocked) plan.kept.push_back({p->metadata.key(), name, v.reason});
        blocked = true;
        continue;
      }
      cand.moving.push_back(p);
      cand.preferNot =
          cand.preferNot || p->metadata.annotations.contains(kPreferNoEvictionAnnotation);
    }
    if (blocked) continue;
    if (cand.moving.empty()) {
      plan.alreadyFree.push_back(name);
      continue;
    }
    const api::Resource alloc = api::Resource::fromList(node->status.allocatable);
    cand.requested = percent(used.milliCPU, alloc.milliCPU) + percent(used.memory, alloc.memory);
    out.push_back(std::move(cand));
  }
  std::stable_sort(out.begin(), out.end(), [](const Candidate& a, const Candidate& b) {
    if (a.preferNot != b.preferNot) return !a.preferNot;
    if (a.moving.size() != b.moving.size()) return a.moving.size() < b.moving.size();
    if (a.requested != b.requested) return a.requested < b.requested;
    return a.name < b.name;
  });
  return out;
}

size_t lowerBound(const sim::Cluster& c, const features::Gates& gates) {
  api::Resource total, largest;
  for (const auto& p : c.pods) {
    if (!p->spec.nodeName.empty()) total.add(requestsOf(*p, gates));
  }
  for (const auto& n : c.nodes) {
    const api::Resource a = api::Resource::fromList(n->status.allocatable);
    largest.milliCPU = std::max(largest.milliCPU, a.milliCPU);
    largest.memory = std::max(largest.memory, a.memory);
  }
  auto need = [](int64_t sum, int64_t per) -> size_t {
    return per <= 0 ? 0 : static_cast<size_t>((sum + per - 1) / per);
  };
  return std::max(need(total.milliCPU, largest.milliCPU), need(total.memory, largest.memory));
}

// The pods to move off `nodes`, in the order of the moves.
std::vector<PodPtr> podsOff(const std::vector<const Candidate*>& nodes,
                            const features::Gates& gates) {
  std::vector<PodPtr> out;
  for (const auto* c : nodes) out.insert(out.end(), c->moving.begin(), c->moving.end());
  std::stable_sort(out.begin(), out.end(),
                   [&](const PodPtr& a, const PodPtr& b) { return moveOrder(a, b, gates); });
  return out;
}

// `drained` (from Simulator::drain) less what does not move (terminating pods), in the order of
// `order` (by uid).
std::vector<PodPtr> inOrder(const std::vector<PodPtr>& drained, const std::vector<PodPtr>& order) {
  std::unordered_map<std::string, PodPtr> byUid;
  for (const auto& p : drained) byUid[p->metadata.uid] = p;
  std::vector<PodPtr> out;
  for (const auto& p : order) {
    if (auto it = byUid.find(p->metadata.uid); it != byUid.end()) out.push_back(it->second);
  }
  return out;
}

// Tries to empty the nodes of `batch` in `sim` (a transaction kept when every pod found a
// node), the nodes of `reserved` cordoned meanwhile; nullopt, or the first pod that found none.
std::optional<sim::PodResult> tryToEmpty(sim::Simulator& sim,
                                         const std::vector<const Candidate*>& batch,
                                         const std::vector<std::string>& reserved,
                                         const features::Gates& gates, size_t& runs) {
  sim.begin();
  for (const auto& n : reserved) sim.cordon(n);
  // Their pods now: those they had and those moved onto them by the nodes emptied before.
  std::vector<PodPtr> pods;
  for (const Candidate* cand : batch) {
    for (auto& p : sim.drain(cand->name)) pods.push_back(std::move(p));
  }
  std::erase_if(pods, [](const PodPtr& p) { return p->metadata.deletionTimestamp.has_value(); });
  std::stable_sort(pods.begin(), pods.end(),
                   [&](const PodPtr& a, const PodPtr& b) { return moveOrder(a, b, gates); });
  const sim::Result r = sim.schedule(pods, "drained");
  ++runs;
  if (const sim::PodResult* miss = firstUnplaced(r)) {
    sim::PodResult out = *miss;
    sim.revert();
    return out;
  }
  for (const auto& n : reserved) sim.cordon(n, false);
  sim.commit();
  return std::nullopt;
}

// Chooses the nodes to free, in the order of `candidates`. Several at a time while that works
// (one scheduler run for a batch; the batch doubles after a success, halves after a failure,
// whose nodes are then tried one by one). While nodes are emptied, the next ones the goal is
// likely to free are cordoned too (when the pods fit without them), so that pods do not land
// on a node about to be emptied: the scheduler's default scoring prefers the emptiest nodes,
// the very ones a plan frees.
class Chooser {
 public:
  Chooser(sim::Simulator& sim, const std::vector<Candidate>& candidates, const sim::Cluster& c,
          const Goal& goal, const features::Gates& gates, Plan& plan)
      : sim_(sim), candidates_(candidates), gates_(gates), plan_(plan), room_(gates) {
    const size_t freeable =
        c.nodes.size() > plan.lowerBoundNodes ? c.nodes.size() - plan.lowerBoundNodes : 0;
    // --scale-down: past the lower bound from requests no node can be freed.
    target_ = goal.freeNodes >= 0 ? static_cast<size_t>(goal.freeNodes) : freeable;
    for (const auto& n : c.nodes) {
      if (n->spec.unschedulable) cordoned_.insert(n->metadata.name);
    }
    room_.update(sim.cluster());
  }

  std::vector<const Candidate*> run() {
    size_t batchSize = 8;
    size_t i = 0;
    while (i < candidates_.size() && chosen_.size() < target_) {
      std::vector<size_t> batch;
      std::set<std::string> inBatch;
      for (; i < candidates_.size() && batch.size() < batchSize &&
             chosen_.size() + batch.size() < target_;
           ++i) {
        if (std::string why = room_.cannotTake(candidates_[i].name, inBatch); !why.empty()) {
          plan_.notFreed.push_back({candidates_[i].name, std::move(why)});
          continue;
        }
        batch.push_back(i);
        inBatch.insert(candidates_[i].name);
      }
      if (batch.size() > 1) {
        if (attempt(batch, i)) {
          batchSize = std::min<size_t>(batchSize * 2, 64);
          continue;
        }
        batchSize = std::max<size_t>(batchSize / 2, 1);
      }
      for (size_t k : batch) {
        if (chosen_.size() >= target_) break;
        if (batch.size() > 1) {
          if (std::string why = room_.cannotTake(candidates_[k].name, {}); !why.empty()) {
            plan_.notFreed.push_back({candidates_[k].name, std::move(why)});
            continue;
          }
        }
        if (auto miss = attemptOne(k)) {
          plan_.notFreed.push_back(
              {candidates_[k].name, "pod " + miss->namespace_ + "/" + miss->name +
                                        " fits on no other node: " + miss->reason});
        }
      }
    }
    return chosen_;
  }

 private:
  // The candidates after index `from` the goal is likely to free next, at most `count`.
  std::vector<std::string> reservedAfter(size_t from, size_t count) const {
    std::vector<std::string> out;
    for (size_t j = from; j < candidates_.size() && out.size() < count; ++j) {
      if (!cordoned_.contains(candidates_[j].name)) out.push_back(candidates_[j].name);
    }
    return out;
  }

  void take(const std::vector<size_t>& batch) {
    for (size_t k : batch) chosen_.push_back(&candidates_[k]);
    room_.update(sim_.cluster());
  }

  // The whole batch in one run, the candidates from `next` on reserved; true when taken.
  bool attempt(const std::vector<size_t>& batch, size_t next) {
    std::vector<const Candidate*> nodes;
    for (size_t k : batch) nodes.push_back(&candidates_[k]);
    const size_t left = target_ - chosen_.size() - batch.size();
    if (tryToEmpty(sim_, nodes, reservedAfter(next, left), gates_, plan_.schedulerRuns)) {
      return false;
    }
    take(batch);
    return true;
  }

  // Candidate `k` alone: with the next ones reserved, then without; the pod that found no node.
  std::optional<sim::PodResult> attemptOne(size_t k) {
    const std::vector<std::string> reserved = reservedAfter(k + 1, target_ - chosen_.size() - 1);
    auto miss = tryToEmpty(sim_, {&candidates_[k]}, reserved, gates_, plan_.schedulerRuns);
    if (miss && !reserved.empty()) {
      miss = tryToEmpty(sim_, {&candidates_[k]}, {}, gates_, plan_.schedulerRuns);
    }
    if (!miss) take({k});
    return miss;
  }

  sim::Simulator& sim_;
  const std::vector<Candidate>& candidates_;
  const features::Gates& gates_;
  Plan& plan_;
  Room room_;
  size_t target_ = 0;
  std::set<std::string> cordoned_;
  std::vector<const Candidate*> chosen_;
};

}  // namespace

Figures::Spread spreadOf(const std::vector<double>& v, double mean) {
  Figures::Spread s;
  if (v.empty()) return s;
  s.mean = mean;
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  s.min = *lo;
  s.max = *hi;
  double sum = 0, squares = 0;
  for (double x : v) sum += x;
  const double avg = sum / static_cast<double>(v.size());
  for (double x : v) squares += (x - avg) * (x - avg);
  s.stddev = std::sqrt(squares / static_cast<double>(v.size()));
  return s;
}

const sim::PodResult* firstUnplaced(const sim::Result& r) {
  for (const auto& p : r.pods) {
    if (p.origin == "drained" && !p.node) return &p;
  }
  return nullptr;
}

sim::Cluster boundPodsOnly(const sim::Cluster& cluster, sim::Options& options, Plan& plan) {
  options.preemption = false;
  sim::Cluster c = cluster;
  plan.pendingLeftOut = static_cast<size_t>(
      std::erase_if(c.pods, [](const PodPtr& p) { return p->spec.nodeName.empty(); }));
  plan.before = figuresOf(c, options.features);
  return c;
}

std::set<std::string> profilesOf(const sim::Simulator& sim) {
  const auto names = sim.profiles();
  return {names.begin(), names.end()};
}

Figures figuresOf(const sim::Cluster& cluster, const features::Gates& gates) {
  Figures f;
  f.nodes = cluster.nodes.size();
  std::unordered_map<std::string, api::Resource> used;
  std::unordered_set<std::string> holding;
  const Budgets none({});
  for (const auto& p : cluster.pods) {
    if (p->spec.nodeName.empty()) continue;
    used[p->spec.nodeName].add(requestsOf(*p, gates));
    if (judge(*p, {}, none).disposition != Disposition::kStays) holding.insert(p->spec.nodeName);
  }
  api::Resource req, alloc, reqUsed, allocUsed, reqSched, allocSched;
  std::vector<double> cpu, memory;  // per schedulable node, percent
  for (const auto& n : cluster.nodes) {
    const api::Resource a = api::Resource::fromList(n->status.allocatable);
    const api::Resource& u = used[n->metadata.name];
    if (!n->spec.unschedulable) {
      cpu.push_back(percent(u.milliCPU, a.milliCPU));
      memory.push_back(percent(u.memory, a.memory));
      reqSched.milliCPU += u.milliCPU;
      reqSched.memory += u.memory;
      allocSched.milliCPU += a.milliCPU;
      allocSched.memory += a.memory;
    }
    req.milliCPU += u.milliCPU;
    req.memory += u.memory;
    alloc.milliCPU += a.milliCPU;
    alloc.memory += a.memory;
    if (holding.contains(n->metadata.name)) {
      ++f.nodesUsed;
      reqUsed.milliCPU += u.milliCPU;
      reqUsed.memory += u.memory;
      allocUsed.milliCPU += a.milliCPU;
      allocUsed.memory += a.memory;
    }
  }
  f.requested = {{"cpu", percent(req.milliCPU, alloc.milliCPU)},
                 {"memory", percent(req.memory, alloc.memory)}};
  f.requestedUsed = {{"cpu", percent(reqUsed.milliCPU, allocUsed.milliCPU)},
                     {"memory", percent(reqUsed.memory, allocUsed.memory)}};
  f.perNode = {{"cpu", spreadOf(cpu, percent(reqSched.milliCPU, allocSched.milliCPU))},
               {"memory", spreadOf(memory, percent(reqSched.memory, allocSched.memory))}};
  return f;
}

Plan planFreeNodes(const sim::Cluster& cluster, sim::Options options, const Goal& goal,
                   const Registry& outOfTree) {
  const auto start = std::chrono::steady_clock::now();
  Plan plan;
  plan.goal =
      goal.freeNodes < 0 ? "--scale-down" : "--free-nodes " + std::to_string(goal.freeNodes);
  // The plan is about the pods in place: the pending ones are left out.
  const sim::Cluster c = boundPodsOnly(cluster, options, plan);
  const features::Gates gates = options.features;
  plan.lowerBoundNodes = lowerBound(c, gates);

  sim::Simulator chooser(c, options, outOfTree);
  const std::set<std::string> profiles = profilesOf(chooser);
  const std::vector<Candidate> candidates = candidatesOf(c, goal, profiles, gates, plan);
  // Nodes with nothing to move stay empty: a move onto one would free nothing.
  for (const auto& n : plan.alreadyFree) chooser.cordon(n);

  // Choose: one node at a time, the nodes chosen so far staying cordoned and empty.
  const std::vector<const Candidate*> chosen =
      Chooser(chooser, candidates, c, goal, gates, plan).run();
  std::vector<const Candidate*> placing = chosen;

  // Place: all chosen nodes cordoned at once, their pods in the order of the moves.
  for (;;) {
    sim::Simulator placer(c, options, outOfTree);
    for (const auto& n : plan.alreadyFree) placer.cordon(n);
    std::vector<PodPtr> drained;
    for (const auto* cand : placing) {
      for (auto& p : placer.drain(cand->name)) drained.push_back(std::move(p));
    }
    const std::vector<PodPtr> pods = inOrder(drained, podsOff(placing, gates));
    const sim::Result r = placer.schedule(pods, "drained");
    ++plan.schedulerRuns;
    std::unordered_map<std::string, std::string> fromOf;  // uid -> node
    for (const auto* cand : placing) {
      for (const auto& p : cand->moving) fromOf[p->metadata.uid] = cand->name;
    }
    const sim::PodResult* miss = firstUnplaced(r);
    if (miss != nullptr) {
      const std::string from = fromOf[miss->uid];
      plan.notFreed.push_back({from, "pod " + miss->namespace_ + "/" + miss->name +
                                         " fits on no other node once the others are freed "
                                         "too: " +
                                         miss->reason});
      std::erase_if(placing, [&](const Candidate* x) { return x->name == from; });
      continue;
    }
    for (const auto& p : r.pods) {
      if (p.origin != "drained") continue;
      const std::string from = fromOf[p.uid];
      plan.moves.push_back({p.namespace_, p.name, from, *p.node, p.tiedWith, "free node " + from});
    }
    for (const auto* cand : placing) plan.cordon.push_back(cand->name);
    plan.after = figuresOf(placer.cluster(), options.features);
    break;
  }
  plan.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return plan;
}

}  // namespace ksched::advise
