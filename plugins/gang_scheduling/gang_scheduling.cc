#include "plugins/gang_scheduling/gang_scheduling.h"

#include <spdlog/spdlog.h>

#include <exception>
#include <utility>

#include <ksched/api/decode.h>
#include <ksched/api/features.h>

namespace ksched::plugins {

namespace {

// A tree deeper than this is invalid (upstream allows 4 levels) or a cycle of parents.
constexpr int kMaxTreeDepth = 16;

constexpr std::string_view kPodGroupKind = "PodGroup";
constexpr std::string_view kCompositePodGroupKind = "CompositePodGroup";

// Finished pods are no members: upstream's pod informer never lists them.
bool terminal(const api::Pod& p) {
  return p.status.phase == "Succeeded" || p.status.phase == "Failed";
}

// How a pod is known in Members: its uid (namespace/name for objects without one).
std::string podKey(const api::Pod& p) {
  return p.metadata.uid.empty() ? p.metadata.key() : p.metadata.uid;
}

// The PodGroup key of a member pod, or "" for a pod of no group.
std::string memberOf(const api::Pod& p) {
  const std::string* name = p.spec.podGroupName();
  return name == nullptr ? std::string() : api::groupKey(p.metadata.namespace_, *name);
}

std::string progressMessage(std::string_view what, int32_t minCount, int32_t scheduled,
                            int32_t remaining) {
  return "minCount (" + std::to_string(minCount) + ") " + std::string(what) + ": " +
         std::to_string(scheduled) + " scheduled, " + std::to_string(remaining) + " remaining";
}

std::string treeMessage(const std::string& root) {
  return "waiting for composite pod group \"" + root + "\" tree to meet quorum";
}

}  // namespace

GangScheduling::GangScheduling(Handle& handle)
    : handle_(handle),
      compositeEnabled_(handle.features().enabled(features::Feature::kCompositePodGroup)) {
  handle_.addPodEventHandlers({[this](const PodPtr& p) { onPod(nullptr, p); },
                               [this](const PodPtr& o, const PodPtr& n) { onPod(o, n); },
                               [this](const PodPtr& p) { onPod(p, nullptr); }});
  // Served as v1beta1 from 1.37 and v1alpha2 in 1.36; a cluster serving neither has no member
  // pods to gate, so the scheduler starts without the watch.
  ObjectWatch podGroups{std::string(kPodGroupKind),
                        std::string(api::kPodGroupsV1beta1),
                        "",
                        {std::string(api::kPodGroupsV1alpha2)},
                        true};
  stores_.push_back(handle_.watchObjects(
      podGroups,
      {[this](const UnstructuredPtr& o) { onPodGroupObject(nullptr, o); },
       [this](const UnstructuredPtr& o, const UnstructuredPtr& n) { onPodGroupObject(o, n); },
       [this](const UnstructuredPtr& o) { onPodGroupObject(o, nullptr); }}));
  if (compositeEnabled_) {
    ObjectWatch composites{std::string(kCompositePodGroupKind),
                           std::string(api::kCompositePodGroupsV1alpha3),
                           "",
                           {},
                           true};
    stores_.push_back(handle_.watchObjects(
        composites, {[this](const UnstructuredPtr& o) { onCompositePodGroupObject(nullptr, o); },
                     [this](const UnstructuredPtr& o, const UnstructuredPtr& n) {
                       onCompositePodGroupObject(o, n);
                     },
                     [this](const UnstructuredPtr& o) { onCompositePodGroupObject(o, nullptr); }}));
  }
}

// ---- pods and watched objects (informer threads) ----

void GangScheduling::onPod(const PodPtr& oldPod, const PodPtr& newPod) {
  const std::string oldGroup = oldPod ? memberOf(*oldPod) : std::string();
  const std::string newGroup = newPod && !terminal(*newPod) ? memberOf(*newPod) : std::string();
  if (oldGroup.empty() && newGroup.empty()) return;
  std::lock_guard lock(mu_);
  if (!oldGroup.empty() && oldGroup != newGroup) {
    if (auto it = members_.find(oldGroup); it != members_.end()) {
      const std::string key = podKey(*oldPod);
      it->second.pods.erase(key);
      it->second.reserved.erase(key);
      if (it->second.pods.empty() && it->second.reserved.empty()) members_.erase(it);
    }
  }
  if (!newGroup.empty()) members_[newGroup].pods[podKey(*newPod)] = newPod;
}

void GangScheduling::warnMalformed(std::string_view kind, const std::string& key,
                                   const std::string& what) {
  bool first = false;
  {
    std::lock_guard lock(mu_);
    first = malformed_.insert(std::string(kind) + " " + key).second;
  }
  // Once per object until it decodes again: a resync must not repeat it.
  if (first) spdlog::warn("GangScheduling: skipping malformed {} {}: {}", kind, key, what);
}

void GangScheduling::onPodGroupObject(const UnstructuredPtr& oldObj,
                                      const UnstructuredPtr& newObj) {
  if (!newObj) {
    if (oldObj) removePodGroup(oldObj->metadata.namespace_, oldObj->metadata.name);
    return;
  }
  std::shared_ptr<const api::PodGroup> pg;
  try {
    pg = std::make_shared<const api::PodGroup>(api::decode<api::PodGroup>(newObj->object));
  } catch (const std::exception& e) {
    // The last good version, if any, stays in force.
    warnMalformed(kPodGroupKind, newObj->metadata.key(), e.what());
    return;
  }
  applyPodGroup(std::move(pg));
}

void GangScheduling::onCompositePodGroupObject(const UnstructuredPtr& oldObj,
                                               const UnstructuredPtr& newObj) {
  if (!newObj) {
    if (oldObj) removeCompositePodGroup(oldObj->metadata.namespace_, oldObj->metadata.name);
    return;
  }
  std::shared_ptr<const api::CompositePodGroup> cpg;
  try {
    cpg = std::make_shared<const api::CompositePodGroup>(
        api::decode<api::CompositePodGroup>(newObj->object));
  } catch (const std::exception& e) {
    warnMalformed(kCompositePodGroupKind, newObj->metadata.key(), e.what());
    return;
  }
  applyCompositePodGroup(std::move(cpg));
}

void GangScheduling::relink(const std::string& ns, const std::optional<std::string>& oldParent,
                            const std::optional<std::string>& newParent, const std::string& child,
                            bool composite) {
  if (oldParent == newParent) return;
  if (oldParent) {
    if (auto it = children_.find(api::groupKey(ns, *oldParent)); it != children_.end()) {
      (composite ? it->second.compositePodGroups : it->second.podGroups).erase(child);
      if (it->second.podGroups.empty() && it->second.compositePodGroups.empty()) {
        children_.erase(it);
      }
    }
  }
  if (newParent) {
    Children& c = children_[api::groupKey(ns, *newParent)];
    (composite ? c.compositePodGroups : c.podGroups).insert(child);
  }
}

void GangScheduling::applyPodGroup(std::shared_ptr<const api::PodGroup> pg) {
  const auto& m = pg->metadata;
  const std::string key = api::groupKey(m.namespace_, m.name);
  std::shared_ptr<const api::PodGroup> old;
  {
    std::lock_guard lock(mu_);
    auto& slot = podGroups_[key];
    old = std::exchange(slot, pg);
    relink(m.namespace_, old ? old->spec.parentCompositePodGroupName : std::nullopt,
           pg->spec.parentCompositePodGroupName, m.name, false);
    malformed_.erase(std::string(kPodGroupKind) + " " + key);
  }
  // After the map changed: the hints look the new object up (its tree, its root).
  if (old) {
    handle_.clusterEvent({EventResource::kPodGroup, kUpdateOther, {}}, EventObject(old),
                         EventObject(pg));
  } else {
    handle_.clusterEvent({EventResource::kPodGroup, kAdd, {}}, std::monostate{}, EventObject(pg));
  }
}

void GangScheduling::removePodGroup(const std::string& ns, const std::string& name) {
  const std::string key = api::groupKey(ns, name);
  std::shared_ptr<const api::PodGroup> old;
  {
    std::lock_guard lock(mu_);
    malformed_.erase(std::string(kPodGroupKind) + " " + key);
    auto it = podGroups_.find(key);
    if (it == podGroups_.end()) return;
    old = std::move(it->second);
    podGroups_.erase(it);
    relink(ns, old->spec.parentCompositePodGroupName, std::nullopt, name, false);
  }
  handle_.clusterEvent({EventResource::kPodGroup, kDelete, {}}, EventObject(old), std::monostate{});
}

void GangScheduling::applyCompositePodGroup(std::shared_ptr<const api::CompositePodGroup> cpg) {
  const auto& m = cpg->metadata;
  const std::string key = api::groupKey(m.namespace_, m.name);
  std::shared_ptr<const api::CompositePodGroup> old;
  {
    std::lock_guard lock(mu_);
    auto& slot = composites_[key];
    old = std::exchange(slot, cpg);
    relink(m.namespace_, old ? old->spec.parentCompositePodGroupName : std::nullopt,
           cpg->spec.parentCompositePodGroupName, m.name, true);
    malformed_.erase(std::string(kCompositePodGroupKind) + " " + key);
  }
  if (old) {
    handle_.clusterEvent({EventResource::kCompositePodGroup, kUpdateOther, {}}, EventObject(old),
                         EventObject(cpg));
  } else {
    handle_.clusterEvent({EventResource::kCompositePodGroup, kAdd, {}}, std::monostate{},
                         EventObject(cpg));
  }
}

void GangScheduling::removeCompositePodGroup(const std::string& ns, const std::string& name) {
  const std::string key = api::groupKey(ns, name);
  std::shared_ptr<const api::CompositePodGroup> old;
  {
    std::lock_guard lock(mu_);
    malformed_.erase(std::string(kCompositePodGroupKind) + " " + key);
    auto it = composites_.find(key);
    if (it == composites_.end()) return;
    old = std::move(it->second);
    composites_.erase(it);
    relink(ns, old->spec.parentCompositePodGroupName, std::nullopt, name, true);
  }
  handle_.clusterEvent({EventResource::kCompositePodGroup, kDelete, {}}, EventObject(old),
                       std::monostate{});
}

// ---- group state (under mu_) ----

size_t GangScheduling::memberCount(const std::string& key, const api::Pod* self) const {
  size_t n = 0;
  auto it = members_.find(key);
  if (it != members_.end()) n = it->second.pods.size();
  // The pod asking counts even if its own add has not reached the plugin yet.
  if (self != nullptr && !terminal(*self) && memberOf(*self) == key &&
      (it == members_.end() || !it->second.pods.contains(podKey(*self)))) {
    ++n;
  }
  return n;
}

int32_t GangScheduling::readyChildren(const std::string& ns, const std::string& cpgName,
                                      const api::Pod* self, int depth) const {
  if (depth > kMaxTreeDepth) return 0;
  auto c = children_.find(api::groupKey(ns, cpgName));
  if (c == children_.end()) return 0;
  int32_t ready = 0;
  // A PodGroup of a tree is ready with minCount members (1 for basic), a CompositePodGroup with
  // minGroupCount ready children (1 for basic).
  for (const auto& name : c->second.podGroups) {
    const std::string key = api::groupKey(ns, name);
    auto pg = podGroups_.find(key);
    if (pg != podGroups_.end() &&
        memberCount(key, self) >=
            static_cast<size_t>(pg->second->spec.schedulingPolicy.minCount())) {
      ++ready;
    }
  }
  for (const auto& name : c->second.compositePodGroups) {
    auto cpg = composites_.find(api::groupKey(ns, name));
    if (cpg != composites_.end() &&
        readyChildren(ns, name, self, depth + 1) >= cpg->second->spec.schedulingPolicy.minCount()) {
      ++ready;
    }
  }
  return ready;
}

std::optional<GangScheduling::GroupKey> GangScheduling::rootOf(GroupKey key) const {
  // A group not known (yet) is its own root.
  for (int step = 0; step <= kMaxTreeDepth; ++step) {
    const std::optional<std::string>* parent = nullptr;
    if (key.composite) {
      auto it = composites_.find(api::groupKey(key.ns, key.name));
      if (it == composites_.end()) return key;
      parent = &it->second->spec.parentCompositePodGroupName;
    } else {
      auto it = podGroups_.find(api::groupKey(key.ns, key.name));
      if (it == podGroups_.end()) return key;
      parent = &it->second->spec.parentCompositePodGroupName;
    }
    if (!*parent) return key;
    key = GroupKey{true, key.ns, **parent};
  }
  return std::nullopt;  // a cycle of parents
}

bool GangScheduling::sameHierarchy(const api::Pod& pod, const GroupKey& target) const {
  const GroupKey own{false, pod.metadata.namespace_, *pod.spec.podGroupName()};
  if (!compositeEnabled_) return own == target;
  std::lock_guard lock(mu_);
  const auto a = rootOf(own);
  const auto b = rootOf(target);
  return a && b && *a == *b;
}

Status GangScheduling::treeQuorum(const api::Pod& pod, const std::string& parent) const {
  const std::string& ns = pod.metadata.namespace_;
  const auto root = rootOf(GroupKey{true, ns, parent});
  if (!root) return Status::unresolvable(treeMessage(parent));
  auto it = composites_.find(api::groupKey(ns, root->name));
  // A CompositePodGroup of the tree not seen yet: the tree cannot be judged.
  if (it == composites_.end()) return Status::unresolvable(treeMessage(root->name));
  if (readyChildren(ns, root->name, &pod, 0) < it->second->spec.schedulingPolicy.minCount()) {
    return Status::unresolvable(treeMessage(root->name));
  }
  return {};
}

// ---- extension points ----

Status GangScheduling::preEnqueue(const api::Pod& pod) {
  const std::string* name = pod.spec.podGroupName();
  if (name == nullptr) return {};
  const std::string key = api::groupKey(pod.metadata.namespace_, *name);
  std::lock_guard lock(mu_);
  auto it = podGroups_.find(key);
  if (it == podGroups_.end()) {
    return Status::unresolvable("waiting for pod's pod group \"" + *name +
                                "\" to appear in scheduling queue");
  }
  const api::PodGroupSpec& spec = it->second->spec;
  if (compositeEnabled_ && spec.parentCompositePodGroupName) {
    return treeQuorum(pod, *spec.parentCompositePodGroupName);
  }
  if (!spec.schedulingPolicy.gang() ||
      memberCount(key, &pod) >= static_cast<size_t>(spec.schedulingPolicy.minCount())) {
    return {};
  }
  return Status::unresolvable(
      "waiting for minCount pods from a gang to appear in scheduling queue");
}

Status GangScheduling::reserve(CycleState& /*state*/, const api::Pod& pod,
                               const std::string& /*nodeName*/) {
  const std::string group = memberOf(pod);
  if (group.empty()) return {};
  std::lock_guard lock(mu_);
  members_[group].reserved.insert(podKey(pod));
  return {};
}

void GangScheduling::unreserve(CycleState& /*state*/, const api::Pod& pod,
                               const std::string& /*nodeName*/) {
  const std::string group = memberOf(pod);
  if (group.empty()) return;
  std::lock_guard lock(mu_);
  auto it = members_.find(group);
  if (it == members_.end()) return;
  it->second.reserved.erase(podKey(pod));
  if (it->second.pods.empty() && it->second.reserved.empty()) members_.erase(it);
}

namespace {

// What placementFeasible needs of a group for a whole cycle, counted at its first question: the
// members outside the cycle cannot change while the scheduling thread runs it.
struct GangCycleState final : StateData {
  int32_t minCount = 1;
  int32_t before = 0;  // members bound or reserved outside this cycle
  [[nodiscard]] std::unique_ptr<StateData> clone() const override {
    return std::make_unique<GangCycleState>(*this);
  }
};
constexpr StateKey<GangCycleState> kGangCycleKey{"PlacementFeasibleGangScheduling"};

}  // namespace

Status GangScheduling::placementFeasible(CycleState& state, const PodGroupInfo& group,
                                         const PlacementProgress& progress) {
  const GangCycleState* counted = state.read(kGangCycleKey);
  if (counted == nullptr && group.composite) {
    // A CompositePodGroup counts its child groups, all of them in the cycle.
    auto fresh = std::make_unique<GangCycleState>();
    fresh->minCount = group.composite->spec.schedulingPolicy.minCount();
    state.write(kGangCycleKey, std::move(fresh));
    counted = state.read(kGangCycleKey);
  } else if (counted == nullptr) {
    auto fresh = std::make_unique<GangCycleState>();
    std::set<std::string> inCycle;
    for (const auto& p : group.pods) inCycle.insert(podKey(*p));
    std::lock_guard lock(mu_);
    const std::string key = api::groupKey(group.ns, group.name);
    std::shared_ptr<const api::PodGroup> pg = group.podGroup;
    if (!pg) {
      if (auto it = podGroups_.find(key); it != podGroups_.end()) pg = it->second;
    }
    if (pg) fresh->minCount = pg->spec.schedulingPolicy.minCount();
    if (auto it = members_.find(key); it != members_.end()) {
      const Members& m = it->second;
      for (const auto& [k, p] : m.pods) {
        if (!p->spec.nodeName.empty() && !inCycle.contains(k)) ++fresh->before;
      }
      for (const auto& k : m.reserved) {
        if (inCycle.contains(k)) continue;
        auto p = m.pods.find(k);
        if (p == m.pods.end() || p->second->spec.nodeName.empty()) ++fresh->before;
      }
    }
    state.write(kGangCycleKey, std::move(fresh));
    counted = state.read(kGangCycleKey);
  }
  const int32_t minCount = counted->minCount;
  const int32_t before = counted->before;
  const int32_t scheduled = progress.scheduled + before;
  const int32_t remaining = progress.remaining;
  if (remaining + scheduled < minCount) {
    return Status::unschedulable(
        progressMessage("cannot be satisfied", minCount, scheduled, remaining));
  }
  if (scheduled < minCount) {
    return {Code::kWait, {progressMessage("is not yet satisfied", minCount, scheduled, remaining)}};
  }
  return {};
}

// ---- queueing hints (informer threads, queue locked) ----

std::vector<ClusterEventWithHint> GangScheduling::eventsToRegister() const {
  using Hint = QueueingHint (GangScheduling::*)(const api::Pod&, const EventObject&,
                                                const EventObject&) const;
  auto hint = [this](Hint fn) -> QueueingHintFn {
    return [this, fn](const api::Pod& pod, const EventObject& o, const EventObject& n) {
      return (this->*fn)(pod, o, n);
    };
  };
  // A member added, pending or bound, may complete a gang; schedulingGroup is immutable, so a
  // pod update changes no gang.
  std::vector<ClusterEventWithHint> out = {
      {EventResource::kUnscheduledPod, kAdd, hint(&GangScheduling::podAddedHint)},
      {EventResource::kAssignedPod, kAdd, hint(&GangScheduling::podAddedHint)},
      {EventResource::kPodGroup, kAdd, hint(&GangScheduling::podGroupAddedHint)},
      {EventResource::kPodGroup, kUpdate, hint(&GangScheduling::podGroupUpdatedHint)},
  };
  if (compositeEnabled_) {
    out.emplace_back(EventResource::kCompositePodGroup, kAdd,
                     hint(&GangScheduling::compositePodGroupAddedHint));
  }
  return out;
}

QueueingHint GangScheduling::podAddedHint(const api::Pod& pod, const EventObject& /*oldObj*/,
                                          const EventObject& newObj) const {
  const api::Pod* added = as<api::Pod>(newObj);
  if (added == nullptr) return QueueingHint::kQueue;
  const std::string* name = added->spec.podGroupName();
  if (pod.spec.podGroupName() == nullptr || name == nullptr) return QueueingHint::kSkip;
  return sameHierarchy(pod, GroupKey{false, added->metadata.namespace_, *name})
             ? QueueingHint::kQueue
             : QueueingHint::kSkip;
}

QueueingHint GangScheduling::podGroupAddedHint(const api::Pod& pod, const EventObject& /*oldObj*/,
                                               const EventObject& newObj) const {
  const api::PodGroup* pg = as<api::PodGroup>(newObj);
  if (pg == nullptr) return QueueingHint::kQueue;
  if (pod.spec.podGroupName() == nullptr) return QueueingHint::kSkip;
  return sameHierarchy(pod, GroupKey{false, pg->metadata.namespace_, pg->metadata.name})
             ? QueueingHint::kQueue
             : QueueingHint::kSkip;
}

QueueingHint GangScheduling::podGroupUpdatedHint(const api::Pod& pod, const EventObject& oldObj,
                                                 const EventObject& newObj) const {
  const api::PodGroup* before = as<api::PodGroup>(oldObj);
  const api::PodGroup* after = as<api::PodGroup>(newObj);
  if (before == nullptr || after == nullptr) return QueueingHint::kQueue;
  if (pod.spec.podGroupName() == nullptr) return QueueingHint::kSkip;
  if (!sameHierarchy(pod, GroupKey{false, after->metadata.namespace_, after->metadata.name})) {
    return QueueingHint::kSkip;
  }
  const auto& was = before->spec.schedulingPolicy.gangMinCount;
  const auto& now = after->spec.schedulingPolicy.gangMinCount;
  // Only a gang whose minCount went down can have enough members now.
  if (!was || !now || *now >= *was) return QueueingHint::kSkip;
  spdlog::debug("GangScheduling: PodGroup {}/{} minCount {} -> {}: pod {} may be ready",
                after->metadata.namespace_, after->metadata.name, *was, *now, pod.metadata.key());
  return QueueingHint::kQueue;
}

QueueingHint GangScheduling::compositePodGroupAddedHint(const api::Pod& pod,
                                                        const EventObject& /*oldObj*/,
                                                        const EventObject& newObj) const {
  const api::CompositePodGroup* cpg = as<api::CompositePodGroup>(newObj);
  if (cpg == nullptr) return QueueingHint::kQueue;
  if (pod.spec.podGroupName() == nullptr) return QueueingHint::kSkip;
  return sameHierarchy(pod, GroupKey{true, cpg->metadata.namespace_, cpg->metadata.name})
             ? QueueingHint::kQueue
             : QueueingHint::kSkip;
}

PluginFactory gangSchedulingFactory() {
  return makePluginFactory<GangScheduling>(
      [](Handle& handle) { return std::make_unique<GangScheduling>(handle); });
}

}  // namespace ksched::plugins
