#include "queue/scheduling_queue.h"

#include <pthread.h>

#include <algorithm>
#include <utility>

#include "queue/pod_update.h"

namespace ksched::queue {

bool prioritySortLess(const QueuedPodInfo& a, const QueuedPodInfo& b) {
  const int32_t pa = api::podPriority(a.pod());
  const int32_t pb = api::podPriority(b.pod());
  return pa > pb || (pa == pb && a.timestamp < b.timestamp);
}

std::chrono::milliseconds backoffDuration(int attempts, std::chrono::milliseconds initial,
                                          std::chrono::milliseconds max) {
  std::chrono::milliseconds d = initial;
  for (int i = 1; i < attempts; ++i) {
    if (d > max - d) return max;
    d += d;
  }
  return std::min(d, max);
}

SchedulingQueue::SchedulingQueue(Options options, LessFn less, PreEnqueueFn preEnqueue,
                                 std::map<std::string, std::vector<ClusterEvent>> pluginEvents)
    : options_(std::move(options)),
      less_(less ? std::move(less) : LessFn(prioritySortLess)),
      preEnqueue_(std::move(preEnqueue)),
      pluginEvents_(pluginEvents.begin(), pluginEvents.end()),
      active_([this](const Entry& a, const Entry& b) { return less_(*a.info, *b.info); }),
      backoff_([](const Entry& a, const Entry& b) { return a.backoffExpiry < b.backoffExpiry; }) {}

SchedulingQueue::~SchedulingQueue() { close(); }

void SchedulingQueue::run() {
  std::lock_guard life(lifecycleMu_);
  {
    std::lock_guard lock(mu_);
    if (closed_) return;
  }
  if (flusher_.joinable()) return;
  flusher_ = std::jthread([this](std::stop_token st) {
    pthread_setname_np(pthread_self(), "queue-flush");
    flushLoop(std::move(st));
  });
}

void SchedulingQueue::close() {
  {
    std::lock_guard lock(mu_);
    closed_ = true;
  }
  popCv_.notify_all();
  std::lock_guard life(lifecycleMu_);
  if (flusher_.joinable()) {
    flusher_.request_stop();  // wakes flushCv_ through the stop_token
    flusher_.join();
  }
}

void SchedulingQueue::flushLoop(std::stop_token st) {
  auto nextBackoff = Clock::now() + options_.backoffFlushPeriod;
  auto nextUnschedulable = Clock::now() + options_.unschedulableFlushPeriod;
  while (!st.stop_requested()) {
    {
      std::unique_lock lock(flushMu_);
      flushCv_.wait_until(lock, st, std::min(nextBackoff, nextUnschedulable), [] { return false; });
    }
    if (st.stop_requested()) return;
    const auto t = Clock::now();
    if (t >= nextBackoff) {
      flushBackoffQCompleted();
      nextBackoff = t + options_.backoffFlushPeriod;
    }
    if (t >= nextUnschedulable) {
      flushUnschedulablePodsLeftover();
      nextUnschedulable = t + options_.unschedulableFlushPeriod;
    }
  }
}

void SchedulingQueue::add(PodPtr pod) {
  auto info = std::make_unique<QueuedPodInfo>();
  info->podInfo = std::make_shared<const PodInfo>(std::move(pod));
  std::lock_guard lock(mu_);
  info->timestamp = now();
  if (Entry* old = find(info->pod().metadata.uid)) destroy(old);
  Entry* e = newEntry(std::move(info));
  if (moveToActiveQ(e, kEventPodAdd)) nominator_.addNominatedPodFromStatus(e->info->podInfo);
}

std::unique_ptr<QueuedPodInfo> SchedulingQueue::pop(std::stop_token st) {
  std::unique_lock lock(mu_);
  popCv_.wait(lock, st, [&] { return closed_ || !active_.empty(); });
  return popLocked();
}

std::unique_ptr<QueuedPodInfo> SchedulingQueue::popFor(std::stop_token st,
                                                       std::chrono::milliseconds maxWait) {
  std::unique_lock lock(mu_);
  popCv_.wait_for(lock, st, maxWait, [&] { return closed_ || !active_.empty(); });
  return popLocked();
}

int64_t SchedulingQueue::schedulingCycle() const {
  std::lock_guard lock(mu_);
  return schedulingCycle_;
}

bool SchedulingQueue::addUnschedulableIfNotPresent(std::unique_ptr<QueuedPodInfo> pInfo,
                                                   int64_t podSchedulingCycle) {
  std::lock_guard lock(mu_);
  if (find(pInfo->pod().metadata.uid) != nullptr) return false;
  pInfo->timestamp = now();
  pInfo->gatingPlugin.clear();
  Entry* e = newEntry(std::move(pInfo));
  e->lastFailure = e->info->timestamp;
  if (moveRequestCycle_ >= podSchedulingCycle || e->info->unschedulablePlugins.empty()) {
    placeBackoff(e, kEventScheduleAttemptFailure);
  } else {
    placeUnschedulable(e, kEventScheduleAttemptFailure, true);
  }
  nominator_.addNominatedPodFromStatus(e->info->podInfo);
  return true;
}

void SchedulingQueue::update(const PodPtr& oldPod, PodPtr newPod) {
  auto podInfo = std::make_shared<const PodInfo>(std::move(newPod));
  const api::Pod& pod = *podInfo->pod;
  const api::Pod& old = oldPod ? *oldPod : pod;
  std::lock_guard lock(mu_);
  Entry* e = find(pod.metadata.uid);
  if (e == nullptr) {
    auto info = std::make_unique<QueuedPodInfo>();
    info->podInfo = podInfo;
    info->timestamp = now();
    e = newEntry(std::move(info));
    if (moveToActiveQ(e, kEventPodUpdate)) nominator_.addNominatedPodFromStatus(podInfo);
    return;
  }
  e->info->podInfo = podInfo;
  nominator_.updateNominatedPod(old, podInfo);
  switch (e->where) {
    case detail::Location::kActive:
      active_.fix(e);
      return;
    case detail::Location::kBackoff:
      return;  // the backoff key (failure time, attempts) did not change
    case detail::Location::kUnschedulable:
      if (oldPod == nullptr || isPodUpdated(*oldPod, pod)) {
        detach(e);
        requeue(e, kEventPodUpdate);
      }
      return;
  }
}

void SchedulingQueue::remove(const api::Pod& pod) {
  std::lock_guard lock(mu_);
  nominator_.deleteNominatedPodIfExists(pod);
  if (Entry* e = find(pod.metadata.uid)) destroy(e);
}

void SchedulingQueue::moveAllToActiveOrBackoffQueue(const ClusterEvent& event) {
  std::lock_guard lock(mu_);
  std::vector<Entry*> toMove;
  for (const auto& [uid, e] : unschedulable_) {
    if (e->gated()) {
      if (gatedPodInterested(*e, event)) toMove.push_back(e);
      continue;
    }
    const auto& plugins = e->info->unschedulablePlugins;
    if (plugins.empty() || std::any_of(plugins.begin(), plugins.end(), [&](const std::string& p) {
          return interested(p, event);
        })) {
      toMove.push_back(e);
    }
  }
  movePods(toMove, event);
  moveRequestCycle_ = schedulingCycle_;
}

void SchedulingQueue::assignedPodAdded(const api::Pod& /*pod*/) {
  moveAllToActiveOrBackoffQueue(events::kAssignedPodAdd);
}

void SchedulingQueue::assignedPodUpdated(const api::Pod& /*pod*/) {
  moveAllToActiveOrBackoffQueue(events::kAssignedPodUpdate);
}

void SchedulingQueue::activate(const std::vector<PodPtr>& pods) {
  std::lock_guard lock(mu_);
  for (const PodPtr& pod : pods) {
    Entry* e = find(pod->metadata.uid);
    if (e == nullptr || e->where == detail::Location::kActive) continue;
    detach(e);
    moveToActiveQ(e, kEventForceActivate);
  }
}

void SchedulingQueue::flushBackoffQCompleted() {
  std::lock_guard lock(mu_);
  const auto t = now();
  while (!backoff_.empty() && backoff_.top()->backoffExpiry <= t) {
    Entry* e = backoff_.pop();
    moveToActiveQ(e, kEventBackoffComplete);
  }
}

void SchedulingQueue::flushUnschedulablePodsLeftover() {
  std::lock_guard lock(mu_);
  const auto t = now();
  std::vector<Entry*> toMove;
  for (const auto& [uid, e] : unschedulable_) {
    if (!e->gated() && t - e->info->timestamp > options_.podMaxInUnschedulablePodsDuration) {
      toMove.push_back(e);
    }
  }
  if (toMove.empty()) return;
  movePods(toMove, events::kUnschedulableTimeout);
  moveRequestCycle_ = schedulingCycle_;
}

void SchedulingQueue::addNominatedPod(PodInfoPtr podInfo, const std::string& nodeName) {
  nominator_.addNominatedPod(std::move(podInfo), nodeName);
}

void SchedulingQueue::deleteNominatedPodIfExists(const api::Pod& pod) {
  nominator_.deleteNominatedPodIfExists(pod);
}

std::vector<PodInfoPtr> SchedulingQueue::nominatedPodsForNode(const std::string& nodeName) const {
  return nominator_.nominatedPodsForNode(nodeName);
}

SchedulingQueue::Counts SchedulingQueue::counts() const {
  std::lock_guard lock(mu_);
  Counts c{.active = active_.size(), .backoff = backoff_.size()};
  for (const auto& [uid, e] : unschedulable_) ++(e->gated() ? c.gated : c.unschedulable);
  return c;
}

std::vector<PodPtr> SchedulingQueue::pendingPods() const {
  std::lock_guard lock(mu_);
  std::vector<PodPtr> pods;
  pods.reserve(entries_.size());
  for (const auto& [uid, e] : entries_) pods.push_back(e->info->podInfo->pod);
  return pods;
}

std::vector<std::string> SchedulingQueue::pendingPodKeysForTest(QueueKind kind) const {
  std::lock_guard lock(mu_);
  std::vector<std::string> keys;
  if (kind == QueueKind::kActive || kind == QueueKind::kBackoff) {
    std::vector<Entry*> items = kind == QueueKind::kActive ? active_.items() : backoff_.items();
    if (kind == QueueKind::kActive) {
      std::sort(items.begin(), items.end(),
                [&](const Entry* a, const Entry* b) { return less_(*a->info, *b->info); });
    } else {
      std::sort(items.begin(), items.end(),
                [](const Entry* a, const Entry* b) { return a->backoffExpiry < b->backoffExpiry; });
    }
    for (const Entry* e : items) keys.push_back(e->info->pod().metadata.key());
    return keys;
  }
  for (const auto& [uid, e] : unschedulable_) {
    if (e->gated() == (kind == QueueKind::kGated)) keys.push_back(e->info->pod().metadata.key());
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

int64_t SchedulingQueue::moveRequestCycleForTest() const {
  std::lock_guard lock(mu_);
  return moveRequestCycle_;
}

SchedulingQueue::Clock::time_point SchedulingQueue::now() const {
  return options_.clock ? options_.clock() : Clock::now();
}

SchedulingQueue::Entry* SchedulingQueue::find(const std::string& uid) const {
  auto it = entries_.find(uid);
  return it == entries_.end() ? nullptr : it->second.get();
}

SchedulingQueue::Entry* SchedulingQueue::newEntry(std::unique_ptr<QueuedPodInfo> info) {
  auto entry = std::make_unique<Entry>();
  entry->info = std::move(info);
  Entry* e = entry.get();
  entries_[e->info->pod().metadata.uid] = std::move(entry);
  return e;
}

void SchedulingQueue::destroy(Entry* e) {
  detach(e);
  const std::string uid = e->info->pod().metadata.uid;
  entries_.erase(uid);
}

std::unique_ptr<QueuedPodInfo> SchedulingQueue::popLocked() {
  if (closed_ || active_.empty()) return nullptr;
  Entry* e = active_.pop();
  std::unique_ptr<QueuedPodInfo> info = std::move(e->info);
  entries_.erase(info->pod().metadata.uid);
  ++info->attempts;
  ++schedulingCycle_;
  info->unschedulablePlugins.clear();
  return info;
}

void SchedulingQueue::detach(Entry* e) {
  switch (e->where) {
    case detail::Location::kActive:
      active_.erase(e);
      break;
    case detail::Location::kBackoff:
      backoff_.erase(e);
      break;
    case detail::Location::kUnschedulable:
      unschedulable_.erase(e->info->pod().metadata.uid);
      break;
  }
}

void SchedulingQueue::placeActive(Entry* e, std::string_view event) {
  e->where = detail::Location::kActive;
  active_.push(e);
  incoming(kQueueActive, event);
  popCv_.notify_one();
}

void SchedulingQueue::placeBackoff(Entry* e, std::string_view event) {
  e->where = detail::Location::kBackoff;
  const auto base = e->lastFailure.value_or(e->info->timestamp);
  e->backoffExpiry =
      base + backoffDuration(e->info->attempts, options_.podInitialBackoff, options_.podMaxBackoff);
  backoff_.push(e);
  incoming(kQueueBackoff, event);
}

void SchedulingQueue::placeUnschedulable(Entry* e, std::string_view event, bool countIncoming) {
  e->where = detail::Location::kUnschedulable;
  unschedulable_[e->info->pod().metadata.uid] = e;
  if (countIncoming) incoming(e->gated() ? kQueueGated : kQueueUnschedulable, event);
}

bool SchedulingQueue::moveToActiveQ(Entry* e, std::string_view event) {
  const bool wasGated = e->gated();
  Status s = preEnqueue_ ? preEnqueue_(e->info->pod()) : Status::success();
  if (!s.ok()) {
    e->info->gatingPlugin = s.plugin().empty() ? std::string("PreEnqueue") : s.plugin();
    placeUnschedulable(e, event, !wasGated);
    return false;
  }
  e->info->gatingPlugin.clear();
  if (e->info->initialAttemptTimestamp == Clock::time_point{}) {
    e->info->initialAttemptTimestamp = now();
  }
  placeActive(e, event);
  return true;
}

void SchedulingQueue::requeue(Entry* e, std::string_view event) {
  if (isBackingOff(*e)) {
    placeBackoff(e, event);
  } else {
    moveToActiveQ(e, event);
  }
}

bool SchedulingQueue::isBackingOff(const Entry& e) const {
  if (e.gated() || !e.lastFailure) return false;
  return *e.lastFailure +
             backoffDuration(e.info->attempts, options_.podInitialBackoff, options_.podMaxBackoff) >
         now();
}

bool SchedulingQueue::interested(const std::string& plugin, const ClusterEvent& event) const {
  if (event.resource == EventResource::kWildcard && event.actions == kAll) return true;
  auto it = pluginEvents_.find(plugin);
  if (it == pluginEvents_.end()) return true;
  return std::any_of(it->second.begin(), it->second.end(),
                     [&](const ClusterEvent& registered) { return registered.matches(event); });
}

bool SchedulingQueue::gatedPodInterested(const Entry& e, const ClusterEvent& event) const {
  if (event.label == events::kForceActivate.label) return true;
  auto it = pluginEvents_.find(e.info->gatingPlugin);
  if (it == pluginEvents_.end()) return false;
  return std::any_of(it->second.begin(), it->second.end(),
                     [&](const ClusterEvent& registered) { return registered.matches(event); });
}

void SchedulingQueue::movePods(const std::vector<Entry*>& entries, const ClusterEvent& event) {
  for (Entry* e : entries) {
    detach(e);
    requeue(e, event.label);
  }
}

void SchedulingQueue::incoming(std::string_view queue, std::string_view event) const {
  if (options_.onIncoming) options_.onIncoming(queue, event);
}

}  // namespace ksched::queue
