#include "framework/result_memo.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <functional>
#include <string_view>

#include <ksched/api/resources.h>
#include <ksched/plugin_names.h>

#include "framework/framework.h"

namespace ksched::framework {
namespace {

std::atomic<bool> gEnabled{true};
std::atomic<int64_t> gServed{0};

// A slot's state is written by the Filter or Score worker that visits the node and read, for
// prefetching, by the worker visiting a node a few places before it: relaxed atomic accesses
// (the results themselves are read only in later cycles, after the workers joined).
uint8_t load(uint8_t& v) { return std::atomic_ref<uint8_t>(v).load(std::memory_order_relaxed); }
void store(uint8_t& v, uint8_t x) {
  std::atomic_ref<uint8_t>(v).store(x, std::memory_order_relaxed);
}

constexpr uint8_t kUnknown = 0;
constexpr uint8_t kPass = 1;
constexpr uint8_t kFailBase = 2;  // kFailBase + i: the i-th Filter plugin rejected first

bool countsResources(std::string_view name) {
  return name == names::kNodeResourcesFit || name == names::kNodeResourcesBalancedAllocation;
}

// Plugins whose answers on a node depend only on the pod's scheduling inputs and that node's
// NodeInfo. ImageLocality also reads how many nodes hold each image and how many nodes there
// are: the first is in the node's own NodeInfo (imageStates' numNodes, copied into the
// snapshot with it, and the copies of every node holding an image are replaced when that
// count changes), the second changes only with the list, which forgets everything.
bool nodeLocal(std::string_view name) {
  return name == names::kNodeUnschedulable || name == names::kNodeName ||
         name == names::kTaintToleration || name == names::kNodeAffinity ||
         name == names::kNodePorts || name == names::kNodeDeclaredFeatures ||
         name == names::kImageLocality || countsResources(name);
}

bool plainList(const api::ResourceList& list) {
  return std::ranges::all_of(list, [](const auto& entry) {
    const std::string_view name = entry.first;
    return name == api::kResourceCPU || name == api::kResourceMemory ||
           name == api::kResourceEphemeralStorage || api::isHugePageResourceName(name);
  });
}

bool plainRequirements(const api::ResourceRequirements& r) {
  return r.claims.empty() && plainList(r.requests) && plainList(r.limits);
}

// The pod asks only for cpu, memory, ephemeral storage and hugepages: what it asks of a node
// is counted against that node alone (an extended resource may be a DRA device class's).
bool onlyPlainResources(const api::Pod& pod) {
  const auto& spec = pod.spec;
  if (!spec.resourceClaims.empty() || !plainList(spec.overhead)) return false;
  if (spec.resources && !plainRequirements(*spec.resources)) return false;
  for (const auto* containers : {&spec.containers, &spec.initContainers}) {
    for (const auto& c : *containers) {
      if (!plainRequirements(c.resources)) return false;
    }
  }
  return true;
}

void mix(uint64_t& h, uint64_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); }

void mixList(uint64_t& h, const api::ResourceList& list) {
  mix(h, list.size());
  for (const auto& [name, q] : list) {
    mix(h, std::hash<std::string_view>{}(name));
    mix(h, static_cast<uint64_t>(q.milliValue()));
  }
}

// Equal for pods with the same scheduling inputs (only fields api::sameSchedulingInputs
// compares), so that it is compared before the pods themselves.
uint64_t fingerprint(const api::Pod& pod) {
  const std::hash<std::string_view> hs;
  uint64_t h = hs(pod.metadata.namespace_);
  for (const auto& [k, v] : pod.metadata.labels) {
    mix(h, hs(k));
    mix(h, hs(v));
  }
  const auto& spec = pod.spec;
  mix(h, hs(spec.nodeName));
  mix(h, static_cast<uint64_t>(spec.priority.value_or(0)));
  mix(h, spec.tolerations.size());
  mix(h, spec.nodeSelector.size());
  mix(h, spec.volumes.size());
  for (const auto* containers : {&spec.containers, &spec.initContainers}) {
    mix(h, containers->size());
    for (const auto& c : *containers) {
      mix(h, hs(c.image));
      mix(h, c.ports.size());
      mixList(h, c.resources.requests);
      mixList(h, c.resources.limits);
    }
  }
  return h;
}

}  // namespace

struct ResultMemo::Class {
  std::shared_ptr<const api::Pod> pod;  // the first of the class
  uint64_t fingerprint = 0;
  uint64_t lastUse = 0;
  uint64_t keptFilters = 0;
  uint64_t keptScores = 0;
  uint64_t activeKeptScores = 0;   // the kept Score plugins that ran when the scores were kept
  int64_t version = 0;             // the snapshot's listVersion the slots describe
  std::vector<uint8_t> filter;     // per slot: kUnknown, kPass, kFailBase + plugin
  std::vector<Status> rejections;  // per slot, with kFailBase + i: plugin i's rejection
  std::vector<uint8_t> scored;     // per slot: raw holds its scores
  std::vector<int32_t> raw;        // slot * stride + the plugin's place among the kept ones
  size_t stride = 0;               // kept Score plugins

  void forget(size_t slot) {
    filter[slot] = kUnknown;
    scored[slot] = 0;
    if (!rejections[slot].ok()) rejections[slot] = Status{};
  }
  void reset(size_t slots) {
    filter.assign(slots, kUnknown);
    rejections.assign(slots, Status{});
    scored.assign(slots, 0);
    raw.assign(slots * stride, 0);
  }
};

ResultMemo::Candidates ResultMemo::candidates(const std::vector<const Plugin*>& plugins) {
  Candidates out;
  out.signers.resize(plugins.size());
  for (size_t i = 0; i < plugins.size() && i < 64; ++i) {
    const std::string_view name = plugins[i]->name();
    const auto* signer = dynamic_cast<const SignPlugin*>(plugins[i]);
    if (!nodeLocal(name) || signer == nullptr) continue;
    out.signers[i] = signer;
    if (countsResources(name)) out.resources |= uint64_t{1} << i;
  }
  return out;
}

uint64_t ResultMemo::Candidates::kept(const api::Pod& pod, bool plain, uint64_t skipped) const {
  uint64_t mask = 0;
  for (size_t i = 0; i < signers.size(); ++i) {
    const uint64_t bit = uint64_t{1} << i;
    if (signers[i] == nullptr || (skipped & bit) != 0 || ((resources & bit) != 0 && !plain)) {
      continue;
    }
    if (signers[i]->signPod(pod)) mask |= bit;
  }
  return mask;
}

ResultMemo::ResultMemo(const Framework& fwk) : fwk_(fwk) {
  const auto& filters = fwk_.plugins<ExtensionPoint::kFilter>();
  const auto& scorers = fwk_.plugins<ExtensionPoint::kScore>();
  usable_ = filters.size() <= 64 && scorers.size() <= 64;
  if (!usable_) return;
  filters_ = candidates({filters.begin(), filters.end()});
  scorers_ = candidates({scorers.begin(), scorers.end()});
  usable_ = std::ranges::any_of(filters_.signers, [](auto* s) { return s != nullptr; }) ||
            std::ranges::any_of(scorers_.signers, [](auto* s) { return s != nullptr; });
}

ResultMemo::~ResultMemo() = default;

void ResultMemo::setEnabled(bool on) { gEnabled.store(on, std::memory_order_relaxed); }
bool ResultMemo::enabled() { return gEnabled.load(std::memory_order_relaxed); }
int64_t ResultMemo::cyclesServed() { return gServed.load(std::memory_order_relaxed); }

bool ResultMemo::begin(const api::Pod& pod, const CycleState& state,
                       const NodeInfoLister& snapshot) {
  cls_ = nullptr;
  if (!usable_ || !enabled() || !fwk_.extenders().empty()) return false;
  const int64_t version = snapshot.listVersion();
  if (version == 0) return false;  // the lister does not say what changed
  const size_t filterCount = fwk_.plugins<ExtensionPoint::kFilter>().size();
  const bool plain = onlyPlainResources(pod);
  const uint64_t skipped = fwk_.skippedFilterMask(state);
  const uint64_t all = filterCount == 64 ? ~uint64_t{0} : (uint64_t{1} << filterCount) - 1;
  const uint64_t keptFilters = filters_.kept(pod, plain, skipped);
  const uint64_t keptScores = scorers_.kept(pod, plain, 0);
  if ((keptFilters | keptScores) == 0) return false;

  const uint64_t fp = fingerprint(pod);
  Class* c = nullptr;
  for (auto& candidate : classes_) {
    if (candidate->fingerprint == fp && api::sameSchedulingInputs(*candidate->pod, pod)) {
      c = candidate.get();
      break;
    }
  }
  ++uses_;
  if (c == nullptr) {
    // A pod like no other (a generic ephemeral volume) is not even the same as itself.
    if (!api::sameSchedulingInputs(pod, pod)) return false;
    // At most kMaxSlots nodes' results in all: fewer classes in a large cluster.
    const size_t nodes = std::max<size_t>(1, snapshot.list().size());
    const size_t most = std::clamp<size_t>(kMaxSlots / nodes, 1, kMaxClasses);
    while (classes_.size() >= most) {
      auto oldest = std::ranges::min_element(
          classes_, [](const auto& a, const auto& b) { return a->lastUse < b->lastUse; });
      classes_.erase(oldest);
    }
    auto fresh = std::make_unique<Class>();
    fresh->pod = std::make_shared<const api::Pod>(pod);
    fresh->fingerprint = fp;
    fresh->lastUse = uses_;
    fresh->keptFilters = keptFilters;
    fresh->keptScores = keptScores;
    fresh->stride = static_cast<size_t>(std::popcount(keptScores));
    classes_.push_back(std::move(fresh));
    return false;  // kept from the second pod of the class on
  }
  c->lastUse = uses_;
  // A new class is at version 0, so sync() sizes its slots; one whose kept plugins changed
  // forgets every slot.
  if (c->keptFilters != keptFilters || c->keptScores != keptScores) {
    c->keptFilters = keptFilters;
    c->keptScores = keptScores;
    c->stride = static_cast<size_t>(std::popcount(keptScores));
    c->version = 0;  // every slot forgotten below
  }
  sync(*c, snapshot, version);
  cls_ = c;
  keptFilters_ = keptFilters;
  liveFilters_ = all & ~skipped & ~keptFilters;
  keptScores_ = keptScores;
  gServed.fetch_add(1, std::memory_order_relaxed);
  return true;
}

void ResultMemo::sync(Class& c, const NodeInfoLister& snapshot, int64_t version) {
  const size_t slots = snapshot.list().size();
  if (c.version == version && c.filter.size() == slots) return;
  changed_.clear();
  if (c.version == 0 || c.filter.size() != slots ||
      !snapshot.changedSlotsSince(c.version, changed_)) {
    c.reset(slots);
  } else {
    for (size_t slot : changed_) {
      if (slot < slots) c.forget(slot);
    }
  }
  c.version = version;
}

Status ResultMemo::filter(const CycleState& state, const api::Pod& pod, const NodeInfo& node,
                          size_t slot) const {
  Class& c = *cls_;
  const uint8_t known = load(c.filter[slot]);
  if (known == kPass) return fwk_.runFilterPluginsMasked(state, pod, node, liveFilters_);
  if (known >= kFailBase) {
    // The live plugins before the one that rejected first may reject first now.
    const uint64_t before = (uint64_t{1} << (known - kFailBase)) - 1;
    Status s = fwk_.runFilterPluginsMasked(state, pod, node, liveFilters_ & before);
    return s.ok() ? c.rejections[slot] : s;
  }
  Status s = fwk_.runFilterPlugins(state, pod, node);
  if (s.ok()) {
    store(c.filter[slot], kPass);
  } else if (!s.isError()) {
    const auto& filters = fwk_.plugins<ExtensionPoint::kFilter>();
    for (size_t i = 0; i < filters.size(); ++i) {
      if (filters[i]->name() != s.plugin()) continue;
      if ((keptFilters_ >> i & 1U) != 0) {
        c.rejections[slot] = s;
        store(c.filter[slot], static_cast<uint8_t>(kFailBase + i));
      }
      break;
    }
  }
  return s;
}

bool ResultMemo::answersAlone(size_t slot) const {
  return liveFilters_ == 0 && load(cls_->filter[slot]) != kUnknown;
}

void ResultMemo::startScoring(uint64_t activeKept) {
  Class& c = *cls_;
  if (c.activeKeptScores == activeKept) return;
  c.activeKeptScores = activeKept;
  std::ranges::fill(c.scored, 0);
}

int32_t* ResultMemo::rawScores(size_t slot) const { return cls_->raw.data() + slot * cls_->stride; }
bool ResultMemo::scored(size_t slot) const { return load(cls_->scored[slot]) != 0; }
void ResultMemo::setScored(size_t slot) const { store(cls_->scored[slot], 1); }

}  // namespace ksched::framework
