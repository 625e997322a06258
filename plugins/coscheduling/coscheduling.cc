#include "plugins/coscheduling/coscheduling.h"

#include <pthread.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include <ksched/api/object_reference.h>
#include <ksched/api/rfc3339.h>
#include <ksched/helper/args_json.h>
#include <ksched/registry.h>

namespace ksched::plugins {

using coscheduling::groupOf;
using coscheduling::GroupRef;
using coscheduling::PodGroup;
using coscheduling::PodGroupStatus;

namespace {

// Written when a pod of a group passes PreFilter: PostFilter releases the group only for a pod
// that failed on the nodes, not for one PreFilter turned away, and only as of `roomEpoch`, the
// group's room events when that PreFilter ran.
struct PassedPreFilter final : StateData {
  explicit PassedPreFilter(uint64_t epoch) : roomEpoch(epoch) {}
  [[nodiscard]] std::unique_ptr<StateData> clone() const override {
    return std::make_unique<PassedPreFilter>(roomEpoch);
  }
  uint64_t roomEpoch;
};
constexpr StateKey<PassedPreFilter> kPassedPreFilter{"PreFilterCoscheduling"};

bool terminal(const api::Pod& p) {
  return p.status.phase == "Succeeded" || p.status.phase == "Failed";
}

// Counted as a member: not finished, not being deleted.
bool active(const api::Pod& p) { return !terminal(p) && !p.metadata.deletionTimestamp; }

bool sameGroup(const api::Pod& pod, const GroupRef& ref) {
  auto other = groupOf(pod);
  return other && other->key() == ref.key();
}

}  // namespace

CoschedulingArgs CoschedulingArgs::fromJson(const nlohmann::json& j) {
  CoschedulingArgs args;
  if (j.is_null()) return args;
  helper::expectObject(j, "",
                       {helper::kApiVersionKey, helper::kKindKey, "permitWaitingTimeSeconds",
                        "podGroupBackoffSeconds"});
  helper::readInt64(j, "permitWaitingTimeSeconds", "", args.permitWaitingTimeSeconds);
  helper::readInt64(j, "podGroupBackoffSeconds", "", args.podGroupBackoffSeconds);
  for (const auto& [field, value] :
       {std::pair{"permitWaitingTimeSeconds", args.permitWaitingTimeSeconds},
        std::pair{"podGroupBackoffSeconds", args.podGroupBackoffSeconds}}) {
    if (value < 0) {
      throw PluginArgsError(std::string(field) + ": Invalid value: " + std::to_string(value) +
                            ": must be greater than or equal to 0");
    }
  }
  return args;
}

Coscheduling::Coscheduling(CoschedulingArgs args, Handle& handle)
    : args_(args),
      handle_(handle),
      steadyToSystem_(std::chrono::system_clock::now().time_since_epoch() -
                      std::chrono::duration_cast<std::chrono::system_clock::duration>(
                          std::chrono::steady_clock::now().time_since_epoch())) {
  handle_.addPodEventHandlers({[this](const PodPtr& p) { onPod(nullptr, p); },
                               [this](const PodPtr& o, const PodPtr& n) { onPod(o, n); },
                               [this](const PodPtr& p) { onPod(p, nullptr); }});
  podGroups_ = handle_.watchObjects(
      {std::string(coscheduling::kKind), std::string(coscheduling::kCollectionPath), ""},
      {[this](const UnstructuredPtr& o) { onPodGroup(nullptr, o); },
       [this](const UnstructuredPtr& o, const UnstructuredPtr& n) { onPodGroup(o, n); },
       [this](const UnstructuredPtr& o) { onPodGroup(o, nullptr); }});
}

Coscheduling::~Coscheduling() { close(); }

void Coscheduling::start() {
  if (handle_.api() == nullptr || writer_.joinable()) return;
  writer_ = std::jthread([this](std::stop_token st) {
    pthread_setname_np(pthread_self(), "podgroup-status");
    writeStatus(std::move(st));
  });
}

void Coscheduling::close() {
  if (!writer_.joinable()) return;
  writer_.request_stop();
  cv_.notify_all();
  writer_.join();
}

// ---- group bookkeeping (informer threads) ----

int32_t Coscheduling::minMember(const Group& g, const GroupRef& ref) {
  if (ref.labelForm) return ref.minAvailable;
  return g.podGroup ? g.podGroup->minMember : 0;
}

int Coscheduling::activeCount(const Group& g) {
  int n = 0;
  for (const auto& [uid, p] : g.pods) n += active(*p) ? 1 : 0;
  return n;
}

int Coscheduling::assignedCount(const Group& g, std::string_view exceptUid) {
  int n = 0;
  for (const auto& [uid, p] : g.pods) {
    if (uid != exceptUid && active(*p) && !p->spec.nodeName.empty()) ++n;
  }
  for (const auto& uid : g.reserved) {
    if (uid == exceptUid) continue;
    auto it = g.pods.find(uid);
    if (it == g.pods.end() || it->second->spec.nodeName.empty()) ++n;
  }
  return n;
}

std::vector<PodPtr> Coscheduling::pendingPods(const Group& g) {
  std::vector<PodPtr> out;
  for (const auto& [uid, p] : g.pods) {
    if (active(*p) && p->spec.nodeName.empty() && !g.reserved.contains(uid)) out.push_back(p);
  }
  return out;
}

void Coscheduling::updateCreated(Group& g, const GroupRef& ref) {
  if (!ref.labelForm && g.podGroup) {
    g.created = g.podGroup->created;
    return;
  }
  // Label form (or a PodGroup not seen yet): the first pod's creation.
  std::optional<std::chrono::system_clock::time_point> first;
  for (const auto& [uid, p] : g.pods) {
    if (auto t = api::parseRFC3339(p->metadata.creationTimestamp); t && (!first || *t < *first)) {
      first = *t;
    }
  }
  g.created = first.value_or(std::chrono::system_clock::time_point{});
}

void Coscheduling::markDirty(const std::string& key) {
  dirty_.insert(key);
  cv_.notify_all();
}

void Coscheduling::onPod(const PodPtr& oldPod, const PodPtr& newPod) {
  const auto oldRef = oldPod ? groupOf(*oldPod) : std::nullopt;
  const auto newRef = newPod ? groupOf(*newPod) : std::nullopt;
  // Any assigned pod deleted frees room, whichever group (or none) it belonged to.
  if (oldPod && !newPod && !oldPod->spec.nodeName.empty()) {
    std::lock_guard lock(mu_);
    roomFreedBy(oldRef ? oldRef->key() : std::string(), oldPod->spec.nodeName, oldPod->metadata.uid,
                {});
  }
  if (!oldRef && !newRef) return;
  std::vector<PodPtr> activate;
  {
    std::lock_guard lock(mu_);
    if (oldRef && (!newRef || oldRef->key() != newRef->key())) {
      auto it = groups_.find(oldRef->key());
      if (it != groups_.end()) {
        it->second.pods.erase(oldPod->metadata.uid);
        it->second.reserved.erase(oldPod->metadata.uid);
        updateCreated(it->second, *oldRef);
        if (!oldRef->labelForm) markDirty(oldRef->key());
        if (it->second.pods.empty() && !it->second.podGroup) groups_.erase(it);
      }
    }
    if (newRef) {
      Group& g = groups_[newRef->key()];
      const int32_t min = minMember(g, *newRef);
      const int before = activeCount(g);
      g.pods[newPod->metadata.uid] = newPod;
      if (!newPod->spec.nodeName.empty()) g.reserved.erase(newPod->metadata.uid);
      const int after = activeCount(g);
      if (!oldPod || before == 0) updateCreated(g, *newRef);
      if (!newRef->labelForm) markDirty(newRef->key());
      // The group just got enough pods: its pods rejected for want of siblings can go.
      if (min > 0 && before < min && after >= min) activate = pendingPods(g);
    }
  }
  if (!activate.empty()) handle_.activate(activate);
}

void Coscheduling::onPodGroup(const UnstructuredPtr& oldObj, const UnstructuredPtr& newObj) {
  const UnstructuredPtr& obj = newObj ? newObj : oldObj;
  const std::string key = obj->metadata.namespace_ + "/" + obj->metadata.name;
  std::shared_ptr<const PodGroup> pg;
  if (newObj) {
    try {
      pg = std::make_shared<const PodGroup>(coscheduling::decodePodGroup(newObj->object));
    } catch (const api::DecodeError& e) {
      spdlog::warn("Coscheduling: skipping malformed PodGroup {}: {}", key, e.what());
    }
  }
  std::vector<PodPtr> activate;
  {
    std::lock_guard lock(mu_);
    Group& g = groups_[key];
    const bool specChanged = !g.podGroup || !pg || g.podGroup->minMember != pg->minMember ||
                             g.podGroup->minResources != pg->minResources ||
                             g.podGroup->metadata.uid != pg->metadata.uid;
    g.podGroup = pg;
    if (pg) {
      g.created = pg->created;
      if (specChanged) {
        g.permittedUntil = {};
        activate = pendingPods(g);
      }
      markDirty(key);
    } else if (g.pods.empty()) {
      groups_.erase(key);
    }
  }
  if (!activate.empty()) handle_.activate(activate);
}

// ---- QueueSort ----

std::chrono::system_clock::time_point Coscheduling::sortTime(const QueuedPodInfo& qpi,
                                                             std::string& groupKey) const {
  if (auto ref = groupOf(qpi.pod())) {
    groupKey = ref->key();
    std::lock_guard lock(mu_);
    auto it = groups_.find(groupKey);
    if (it != groups_.end() && it->second.created != std::chrono::system_clock::time_point{}) {
      return it->second.created;
    }
  }
  return std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          qpi.initialAttemptTimestamp.time_since_epoch()) +
      steadyToSystem_);
}

bool Coscheduling::less(const QueuedPodInfo& a, const QueuedPodInfo& b) const {
  const int32_t pa = api::podPriority(a.pod());
  const int32_t pb = api::podPriority(b.pod());
  if (pa != pb) return pa > pb;
  std::string ga;
  std::string gb;
  const auto ta = sortTime(a, ga);
  const auto tb = sortTime(b, gb);
  if (ta != tb) return ta < tb;
  if (ga != gb) return ga < gb;
  return a.pod().metadata.key() < b.pod().metadata.key();
}

// ---- scheduling cycle ----

Status Coscheduling::checkMinResources(const Group& g, const GroupRef& ref, const PodGroup& pg,
                                       const NodeInfoLister& nodes) const {
  api::Resource want = api::Resource::fromList(*pg.minResources);
  want.allowedPodNumber = pg.minMember;
  for (const NodeInfo* ni : nodes.list()) {
    if (ni == nullptr || ni->node() == nullptr) continue;
    // The node's free room, with the group's own pods on it counted as free.
    api::Resource free = ni->allocatable();
    api::Resource used = ni->requested();
    int64_t pods = static_cast<int64_t>(ni->pods().size());
    for (const auto& pi : ni->pods()) {
      if (pi->pod->metadata.namespace_ == ref.ns && g.pods.contains(pi->pod->metadata.uid)) {
        used.sub(pi->requests);
        --pods;
      }
    }
    auto take = [](int64_t& need, int64_t avail) {
      need -= std::min(need, std::max<int64_t>(avail, 0));
    };
    take(want.milliCPU, free.milliCPU - used.milliCPU);
    take(want.memory, free.memory - used.memory);
    take(want.ephemeralStorage, free.ephemeralStorage - used.ephemeralStorage);
    take(want.allowedPodNumber, free.allowedPodNumber - pods);
    for (auto& [name, need] : want.scalar) {
      auto a = free.scalar.find(name);
      auto u = used.scalar.find(name);
      take(need,
           (a == free.scalar.end() ? 0 : a->second) - (u == used.scalar.end() ? 0 : u->second));
    }
  }
  std::string gap;
  auto add = [&](std::string_view name, int64_t v, std::string_view unit = "") {
    if (v <= 0) return;
    gap +=
        (gap.empty() ? "" : ", ") + std::string(name) + " " + std::to_string(v) + std::string(unit);
  };
  add("cpu", want.milliCPU, "m");
  add("memory", want.memory);
  add("ephemeral-storage", want.ephemeralStorage);
  add("pods", want.allowedPodNumber);
  for (const auto& [name, v] : want.scalar) add(name, v);
  if (gap.empty()) return {};
  return Status::unresolvable("resource gap: PodGroup " + ref.fullName() +
                              " needs more than the cluster has free: " + gap);
}

Status Coscheduling::preFilter(CycleState& state, const api::Pod& pod, const NodeInfoLister& nodes,
                               PreFilterResult& /*result*/) {
  const auto ref = groupOf(pod);
  if (!ref) return Status::skip();
  if (ref->labelForm && ref->minAvailable <= 0) {
    return Status::unresolvable("pod group " + ref->fullName() + ": label " +
                                std::string(coscheduling::kLegacyMinAvailableLabel) +
                                " must be a positive integer");
  }
  std::lock_guard lock(mu_);
  auto it = groups_.find(ref->key());
  if (!ref->labelForm && (it == groups_.end() || !it->second.podGroup)) {
    return Status::unresolvable("PodGroup " + ref->fullName() + " not found (named by the pod's " +
                                std::string(coscheduling::kPodGroupLabel) + " label)");
  }
  if (it == groups_.end()) {
    return Status::unresolvable("pre-filter pod " + pod.metadata.name +
                                " cannot find enough sibling pods, current pods number: 1, "
                                "minMember of group: " +
                                std::to_string(ref->minAvailable));
  }
  Group& g = it->second;
  // Room freed from here on (the cycle's snapshot may not show it) keeps a failure of this pod
  // from releasing its group.
  const uint64_t epoch = roomEpoch(g);
  const auto now = std::chrono::steady_clock::now();
  if (now < g.backoffUntil) {
    return Status::unresolvable("podGroup " + ref->fullName() + " failed recently");
  }
  if (now < g.releasedUntil && g.releasedAtEpoch == epoch) {
    return Status::unresolvable("podGroup " + ref->fullName() +
                                " failed recently: its pods do not all fit; it waits for room to "
                                "free up");
  }
  const int32_t min = minMember(g, *ref);
  // The pod itself counts even before its own add event reached the group.
  const int count = activeCount(g) + (g.pods.contains(pod.metadata.uid) ? 0 : 1);
  if (count < min) {
    return Status::unresolvable(
        "pre-filter pod " + pod.metadata.name +
        " cannot find enough sibling pods, current pods number: " + std::to_string(count) +
        ", minMember of group: " + std::to_string(min));
  }
  if (g.scheduleStartTime.empty()) {
    g.scheduleStartTime = api::formatRFC3339(std::chrono::system_clock::now());
  }
  if (!ref->labelForm && g.podGroup->minResources && now >= g.permittedUntil) {
    Status s = checkMinResources(g, *ref, *g.podGroup, nodes);
    if (!s.ok()) return s;
    g.permittedUntil = now + waitTime(g);
  }
  state.write(kPassedPreFilter, std::make_unique<PassedPreFilter>(epoch));
  return {};
}

std::chrono::milliseconds Coscheduling::waitTime(const Group& g) const {
  if (g.podGroup && g.podGroup->scheduleTimeoutSeconds && *g.podGroup->scheduleTimeoutSeconds > 0) {
    return std::chrono::seconds(*g.podGroup->scheduleTimeoutSeconds);
  }
  return std::chrono::seconds(args_.permitWaitingTimeSeconds);
}

void Coscheduling::rejectWaiting(const GroupRef& ref, const std::string& message) {
  handle_.iterateWaitingPods([&](WaitingPod& wp) {
    if (sameGroup(wp.pod(), ref)) wp.reject(kName, message);
  });
}

std::pair<PostFilterResult, Status> Coscheduling::postFilter(CycleState& state, const api::Pod& pod,
                                                             const NodeToStatus& filtered) {
  const auto ref = groupOf(pod);
  // Not a gang pod, or one PreFilter turned away (its group is incomplete, missing or backing
  // off): nothing to add to the other PostFilter plugins' verdict.
  const auto* passed = ref ? state.read(kPassedPreFilter) : nullptr;
  if (passed == nullptr) return {{}, Status(Code::kUnschedulable, {})};
  std::shared_ptr<const PodGroup> pg;
  int32_t min = 0;
  int assigned = 0;
  int count = 0;
  {
    std::lock_guard lock(mu_);
    auto it = groups_.find(ref->key());
    if (it == groups_.end()) return {{}, Status(Code::kUnschedulable, {})};
    const Group& g = it->second;
    pg = g.podGroup;
    min = minMember(g, *ref);
    assigned = assignedCount(g, pod.metadata.uid);
    count = activeCount(g);
  }
  if (min <= 0 || (!ref->labelForm && !pg)) return {{}, Status(Code::kUnschedulable, {})};
  // Enough of the group is placed already, or it is within 10% of its quorum: later pods may
  // still complete it.
  if (assigned >= min) return {{}, Status(Code::kUnschedulable, {})};
  if (static_cast<double>(min - assigned) / min <= 0.1)
    return {{}, Status(Code::kUnschedulable, {})};

  // The group cannot be placed whole now: free the room its waiting pods hold.
  rejectWaiting(*ref, "optimistic rejection in PostFilter: pod " + pod.metadata.name +
                          " of PodGroup " + ref->fullName() + " fits no node");
  {
    std::lock_guard lock(mu_);
    auto it = groups_.find(ref->key());
    if (it != groups_.end()) {
      it->second.permittedUntil = {};
      // Released until room frees up, unless this cycle's snapshot misses room that freed up
      // already: no event would come to end the release.
      const bool stale = missesRoom(ref->key(), handle_.snapshot());
      it->second.releasedUntil = stale ? std::chrono::steady_clock::time_point{}
                                       : std::chrono::steady_clock::now() + kReleasedFor;
      it->second.releasedAtEpoch = passed->roomEpoch;
      if (args_.podGroupBackoffSeconds > 0 && count >= min) {
        it->second.backoffUntil =
            std::chrono::steady_clock::now() + std::chrono::seconds(args_.podGroupBackoffSeconds);
      }
    }
  }
  if (pg) {
    // Why, on the PodGroup: the reasons the pod was refused, per node. The message stays the
    // same from one attempt to the next (no counts of placed pods), so that the recorder
    // aggregates repeats into one Event's series.
    std::map<std::string, int> reasons;
    for (const auto& [node, s] : filtered) {
      for (const auto& r : s.reasons()) ++reasons[r];
    }
    std::string why;
    for (const auto& [r, n] : reasons)
      why += (why.empty() ? "" : ", ") + std::to_string(n) + " " + r;
    handle_.eventRecorder().eventFor(
        api::objectReferenceTo(std::string(coscheduling::kApiVersion),
                               std::string(coscheduling::kKind), pg->metadata),
        "Warning", "FailedScheduling", "Scheduling",
        "the group's " + std::to_string(min) + " pods do not all fit" +
            (why.empty() ? "" : " (" + why + ")") + "; its waiting pods were released");
  }
  return {{},
          Status::unschedulable("PodGroup " + ref->fullName() + " gets rejected due to Pod " +
                                pod.metadata.name + " is unschedulable even after PostFilter")};
}

Status Coscheduling::reserve(CycleState& /*state*/, const api::Pod& pod,
                             const std::string& /*nodeName*/) {
  const auto ref = groupOf(pod);
  if (!ref) return {};
  std::lock_guard lock(mu_);
  groups_[ref->key()].reserved.insert(pod.metadata.uid);
  return {};
}

void Coscheduling::unreserve(CycleState& /*state*/, const api::Pod& pod,
                             const std::string& /*nodeName*/) {
  const auto ref = groupOf(pod);
  if (!ref) return;
  bool known = false;
  {
    std::lock_guard lock(mu_);
    auto it = groups_.find(ref->key());
    if (it != groups_.end()) {
      it->second.reserved.erase(pod.metadata.uid);
      it->second.permittedUntil = {};
      known = ref->labelForm || it->second.podGroup != nullptr;
    }
  }
  if (known) rejectWaiting(*ref, "rejection in Unreserve");
}

Status Coscheduling::permit(CycleState& /*state*/, const api::Pod& pod,
                            const std::string& /*nodeName*/, std::chrono::milliseconds& timeout) {
  const auto ref = groupOf(pod);
  if (!ref) return {};
  std::vector<PodPtr> siblings;
  bool wait = false;
  {
    std::lock_guard lock(mu_);
    auto it = groups_.find(ref->key());
    if (it == groups_.end() || (!ref->labelForm && !it->second.podGroup)) {
      return Status::unschedulable("PodGroup not found");
    }
    Group& g = it->second;
    const int assigned = assignedCount(g, pod.metadata.uid);
    wait = assigned + 1 < minMember(g, *ref);
    if (wait) {
      timeout = waitTime(g);
      // The group's first waiting pod brings its siblings back from backoff.
      if (assigned == 0) {
        siblings = pendingPods(g);
        std::erase_if(siblings,
                      [&](const PodPtr& p) { return p->metadata.uid == pod.metadata.uid; });
      }
    }
  }
  if (wait) {
    if (!siblings.empty()) handle_.activate(siblings);
    spdlog::debug("Coscheduling: pod {}/{} waits for its group {}", pod.metadata.namespace_,
                  pod.metadata.name, ref->fullName());
    return Status::wait();
  }
  handle_.iterateWaitingPods([&](WaitingPod& wp) {
    if (sameGroup(wp.pod(), *ref)) wp.allow(kName);
  });
  return {};
}

std::vector<ClusterEventWithHint> Coscheduling::eventsToRegister() const {
  auto hint = [this](const api::Pod& pod, const EventObject& oldObj, const EventObject& newObj) {
    return roomHint(pod, oldObj, newObj);
  };
  return {ClusterEventWithHint(EventResource::kAssignedPod, kDelete, hint),
          ClusterEventWithHint(EventResource::kNode, kAdd | kUpdateNodeAllocatable, hint)};
}

QueueingHint Coscheduling::roomHint(const api::Pod& pod, const EventObject& oldObj,
                                    const EventObject& newObj) const {
  const auto ref = groupOf(pod);
  if (!ref) return QueueingHint::kQueue;
  const api::Pod* gone = as<api::Pod>(oldObj);
  const auto goneRef = gone ? groupOf(*gone) : std::nullopt;
  if (goneRef && goneRef->key() == ref->key()) {
    return QueueingHint::kSkip;  // the group's own pod, unreserved or deleted
  }
  const api::Node* node = gone == nullptr ? as<api::Node>(newObj) : nullptr;
  const std::string by = goneRef ? goneRef->key() : std::string();
  std::lock_guard lock(mu_);
  if (gone != nullptr) {
    roomFreedBy(by, gone->spec.nodeName, gone->metadata.uid, {});
  } else if (node != nullptr) {
    roomFreedBy(by, node->metadata.name, {}, node->metadata.resourceVersion);
  } else {
    roomFreedBy(by, {}, {}, {});
  }
  return QueueingHint::kQueue;
}

void Coscheduling::roomFreedBy(const std::string& by, std::string_view node,
                               std::string_view podUid, std::string_view nodeVersion) const {
  ++roomEvents_;
  if (!by.empty()) {
    if (auto it = groups_.find(by); it != groups_.end()) ++it->second.ownRoomEvents;
  }
  // The hint runs once per pending pod for one event: kept once (and compared before anything
  // is copied).
  if (!recentRoom_.empty()) {
    const RoomEvent& last = recentRoom_.back();
    if (last.by == by && last.node == node && last.podUid == podUid &&
        last.nodeVersion == nodeVersion) {
      return;
    }
  }
  const auto now = std::chrono::steady_clock::now();
  while (!recentRoom_.empty() && recentRoom_.front().at + kRecentFor < now) recentRoom_.pop_front();
  if (recentRoom_.size() >= kMaxRecent) {
    recentRoom_.pop_front();
    recentDroppedAt_ = now;
  }
  recentRoom_.push_back(
      {std::string(by), std::string(node), std::string(podUid), std::string(nodeVersion), now});
}

bool Coscheduling::missesRoom(const std::string& key, const NodeInfoLister& snapshot) const {
  const auto now = std::chrono::steady_clock::now();
  if (recentDroppedAt_ != std::chrono::steady_clock::time_point{} &&
      now < recentDroppedAt_ + kRecentFor) {
    return true;
  }
  for (const RoomEvent& ev : recentRoom_) {
    // Older ones are in every snapshot taken since (and a node updated since is not as such an
    // event left it, which must not keep a group from ever being released).
    if (ev.at + kRecentFor < now || ev.by == key || ev.node.empty()) continue;
    const NodeInfo* ni = snapshot.get(ev.node);
    if (!ev.podUid.empty()) {
      if (ni != nullptr && std::ranges::any_of(ni->pods(), [&](const PodInfoPtr& pi) {
            return pi->pod->metadata.uid == ev.podUid;
          })) {
        return true;  // the pod that left is still there
      }
    } else if (ni == nullptr || ni->node() == nullptr ||
               ni->node()->metadata.resourceVersion != ev.nodeVersion) {
      return true;  // the node is not there, or not as the event left it
    }
  }
  return false;
}

PluginFactory coschedulingFactory() {
  return makePluginFactory<Coscheduling>(
      [](const nlohmann::json& args) { return CoschedulingArgs::fromJson(args); },
      [](const CoschedulingArgs& typed, Handle& handle) {
        return std::make_unique<Coscheduling>(typed, handle);
      });
}

}  // namespace ksched::plugins
