#include "queue/scheduling_queue.h"

#include <pthread.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

#include <ksched/api/pod.h>
#include <ksched/plugin_names.h>

#include "queue/pod_update.h"

namespace ksched::queue {

bool prioritySortLess(const QueuedPodInfo& a, const QueuedPodInfo& b) {
  const int32_t pa = api::podPriority(a.pod());
  const int32_t pb = api::podPriority(b.pod());
  return pa > pb || (pa == pb && a.timestamp < b.timestamp);
}

std::chrono::milliseconds backoffDuration(int attempts, std::chrono::milliseconds initial,
                                          std::chrono::milliseconds max) {
  if (attempts < 1) return std::chrono::milliseconds(0);
  std::chrono::milliseconds d = initial;
  for (int i = 1; i < attempts; ++i) {
    if (d > max - d) return max;
    d += d;
  }
  return std::min(d, max);
}

SchedulingQueue::SchedulingQueue(Options options, LessFn less, PreEnqueueFn preEnqueue,
                                 QueueingHintMap hints)
    : options_(std::move(options)),
      less_(less ? std::move(less) : LessFn(prioritySortLess)),
      preEnqueue_(std::move(preEnqueue)),
      hints_(std::move(hints)),
      active_([this](const Entry& a, const Entry& b) { return less_(*a.info, *b.info); }),
      backoff_([](const Entry& a, const Entry& b) { return a.backoffExpiry < b.backoffExpiry; }),
      errorBackoff_(
          [](const Entry& a, const Entry& b) { return a.backoffExpiry < b.backoffExpiry; }) {}

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
  auto podInfo = std::make_shared<const PodInfo>(std::move(pod), options_.features);
  std::lock_guard lock(mu_);
  auto info = newInfo(std::move(podInfo));
  if (Entry* old = find(info->pod().metadata.uid)) destroy(old);
  Entry* e = newEntry(std::move(info));
  if (moveToActiveQ(e, kEventPodAdd)) nominator_.addNominatedPodFromStatus(e->info->podInfo);
}

std::unique_ptr<QueuedPodInfo> SchedulingQueue::pop(std::stop_token st) {
  std::unique_lock lock(mu_);
  popCv_.wait(lock, st, [&] { return closed_ || !active_.empty() || !backoff_.empty(); });
  return popLocked();
}

std::unique_ptr<QueuedPodInfo> SchedulingQueue::popFor(std::stop_token st,
                                                       std::chrono::milliseconds maxWait) {
  std::unique_lock lock(mu_);
  popCv_.wait_for(lock, st, maxWait,
                  [&] { return closed_ || !active_.empty() || !backoff_.empty(); });
  return popLocked();
}

int64_t SchedulingQueue::schedulingCycle() const {
  std::lock_guard lock(mu_);
  return schedulingCycle_;
}

bool SchedulingQueue::addUnschedulableIfNotPresent(std::unique_ptr<QueuedPodInfo> pInfo,
                                                   int64_t podSchedulingCycle) {
  (void)podSchedulingCycle;
  std::lock_guard lock(mu_);
  const std::string uid = pInfo->pod().metadata.uid;
  if (find(uid) != nullptr) {
    endFlight(uid);
    return false;
  }
  pInfo->timestamp = now();
  pInfo->gatingPlugin.clear();
  const bool isError = pInfo->unschedulablePlugins.empty();
  if (isError) {
    ++pInfo->consecutiveErrors;
  } else {
    ++pInfo->unschedulableCount;
    pInfo->consecutiveErrors = 0;
  }
  // An event that arrived while the pod was being scheduled may already have made it
  // schedulable.
  bool worth = isError;
  if (auto it = inFlightPods_.find(uid); !worth && it != inFlightPods_.end()) {
    for (auto ev = std::next(it->second); ev != inFlight_.end() && !worth; ++ev) {
      if (ev->uid.empty()) worth = worthRequeuing(*pInfo, ev->event, ev->oldObj, ev->newObj);
    }
  }
  endFlight(uid);
  Entry* e = newEntry(std::move(pInfo));
  e->lastFailure = e->info->timestamp;
  if (worth) {
    placeBackoff(e, kEventScheduleAttemptFailure);
  } else {
    placeUnschedulable(e, kEventScheduleAttemptFailure, true);
  }
  nominator_.readdNominatedPod(e->info->podInfo);
  return true;
}

void SchedulingQueue::done(const std::string& uid) {
  std::lock_guard lock(mu_);
  endFlight(uid);
}

void SchedulingQueue::endFlight(const std::string& uid) {
  auto it = inFlightPods_.find(uid);
  if (it == inFlightPods_.end()) return;
  inFlight_.erase(it->second);
  inFlightPods_.erase(it);
  // Events before the oldest marker left are needed by no pod.
  while (!inFlight_.empty() && inFlight_.front().uid.empty()) {
    inFlight_.pop_front();
    --inFlightEvents_;
  }
}

void SchedulingQueue::recordInFlight(const ClusterEvent& event, const EventObject& oldObj,
                                     const EventObject& newObj) {
  if (inFlightPods_.empty() || !ofInterest(event)) return;
  inFlight_.push_back(InFlightItem{{}, event, oldObj, newObj});
  ++inFlightEvents_;
}

void SchedulingQueue::update(const PodPtr& oldPod, PodPtr newPod) {
  auto podInfo = std::make_shared<const PodInfo>(std::move(newPod), options_.features);
  const api::Pod& pod = *podInfo->pod;
  const api::Pod& old = oldPod ? *oldPod : pod;
  const bool changed = oldPod == nullptr || isPodUpdated(*oldPod, pod);
  std::lock_guard lock(mu_);
  Entry* e = find(pod.metadata.uid);
  if (e == nullptr) {
    if (inFlightPods_.contains(pod.metadata.uid)) {
      // Being scheduled: judged with the other events when its attempt fails.
      if (changed && oldPod != nullptr) {
        for (const ClusterEvent& ev :
             podSchedulingPropertiesChange(pod, *oldPod, options_.features)) {
          recordInFlight(ev, oldPod, podInfo->pod);
        }
      }
      return;
    }
    e = newEntry(newInfo(podInfo));
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
      return;  // the backoff key (failure time, counts) did not change
    case detail::Location::kUnschedulable: {
      if (!changed) return;
      bool move = oldPod == nullptr || e->gated();
      std::string label(kEventPodUpdate);
      if (!move) {
        for (const ClusterEvent& ev :
             podSchedulingPropertiesChange(pod, *oldPod, options_.features)) {
          if (worthRequeuing(*e->info, ev, oldPod, podInfo->pod)) {
            move = true;
            label = ev.label();
            break;
          }
        }
      }
      if (move) {
        detach(e);
        requeue(e, label);
      }
      return;
    }
  }
}

void SchedulingQueue::remove(const api::Pod& pod) {
  std::lock_guard lock(mu_);
  nominator_.deleteNominatedPodIfExists(pod);
  if (Entry* e = find(pod.metadata.uid)) destroy(e);
}

void SchedulingQueue::moveAllToActiveOrBackoffQueue(const ClusterEvent& event,
                                                    const EventObject& oldObj,
                                                    const EventObject& newObj) {
  std::lock_guard lock(mu_);
  moveAllLocked(event, oldObj, newObj);
}

void SchedulingQueue::moveAllLocked(const ClusterEvent& event, const EventObject& oldObj,
                                    const EventObject& newObj) {
  recordInFlight(event, oldObj, newObj);
  std::vector<Entry*> toMove;
  for (const auto& [uid, e] : unschedulable_) {
    if (!e->judges) e->judges = judgesFor(*e->info, hints_);
    if (worthRequeuing(*e->judges, *e->info, event, oldObj, newObj)) toMove.push_back(e);
  }
  const std::string label = event.label();
  for (Entry* e : toMove) {
    detach(e);
    requeue(e, label);
  }
}

void SchedulingQueue::activate(const std::vector<PodPtr>& pods) {
  std::lock_guard lock(mu_);
  for (const PodPtr& pod : pods) {
    Entry* e = find(pod->metadata.uid);
    if (e == nullptr) {
      if (inFlightPods_.contains(pod->metadata.uid)) {
        inFlight_.push_back(InFlightItem{{}, events::kForceActivate, {}, {}});
        ++inFlightEvents_;
      }
      continue;
    }
    if (e->where == detail::Location::kActive) continue;
    detach(e);
    moveToActiveQ(e, kEventForceActivate);
  }
}

void SchedulingQueue::recheckGated() {
  std::lock_guard lock(mu_);
  std::vector<Entry*> gated;
  for (const auto& [uid, e] : unschedulable_) {
    if (e->gated()) gated.push_back(e);
  }
  for (Entry* e : gated) {
    detach(e);
    moveToActiveQ(e, kEventForceActivate);
  }
}

void SchedulingQueue::flushBackoffQCompleted() {
  std::lock_guard lock(mu_);
  const auto t = now();
  for (detail::EntryHeap* heap : {&backoff_, &errorBackoff_}) {
    while (!heap->empty() && heap->top()->backoffExpiry <= t) {
      moveToActiveQ(heap->pop(), kEventBackoffComplete);
    }
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
  const std::string label = events::kUnschedulableTimeout.label();
  for (Entry* e : toMove) {
    detach(e);
    requeue(e, label);
  }
}

void SchedulingQueue::addNominatedPod(PodInfoPtr podInfo, const std::string& nodeName) {
  nominator_.addNominatedPod(std::move(podInfo), nodeName);
}

void SchedulingQueue::deleteNominatedPodIfExists(const api::Pod& pod) {
  nominator_.deleteNominatedPodIfExists(pod);
}

std::string SchedulingQueue::nominatedNodeFor(const std::string& uid) const {
  return nominator_.nominatedNodeFor(uid);
}

std::string SchedulingQueue::preEnqueueRejectionOf(const std::string& uid) const {
  std::lock_guard lock(mu_);
  const Entry* e = find(uid);
  if (e == nullptr || !e->gated()) return {};
  return e->info->preEnqueueRejectionMessage;
}

std::vector<PodInfoPtr> SchedulingQueue::nominatedPodsForNode(const std::string& nodeName) const {
  return nominator_.nominatedPodsForNode(nodeName);
}

SchedulingQueue::Counts SchedulingQueue::counts() const {
  std::lock_guard lock(mu_);
  Counts c{.active = active_.size(),
           .backoff = backoff_.size() + errorBackoff_.size(),
           .inFlightPods = inFlightPods_.size(),
           .inFlightEvents = inFlightEvents_};
  for (const auto& [uid, e] : unschedulable_) ++(e->gated() ? c.gated : c.unschedulable);
  return c;
}

SchedulingQueue::Counts SchedulingQueue::detailedCounts() const {
  Counts c = counts();
  std::lock_guard lock(mu_);
  for (const InFlightItem& item : inFlight_) {
    if (item.uid.empty()) ++c.inFlightEventsByLabel[item.event.label()];
  }
  for (const auto& [uid, e] : unschedulable_) {
    const std::string& profile = e->info->pod().spec.schedulerName;
    if (e->gated()) {
      ++c.unschedulableByPlugin[{e->info->gatingPlugin, profile}];
      continue;
    }
    for (const std::string& plugin : e->info->unschedulablePlugins) {
      ++c.unschedulableByPlugin[{plugin, profile}];
    }
  }
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
    if (kind == QueueKind::kBackoff) {
      items.insert(items.end(), errorBackoff_.items().begin(), errorBackoff_.items().end());
    }
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

SchedulingQueue::Clock::time_point SchedulingQueue::now() const {
  return options_.clock ? options_.clock() : Clock::now();
}

SchedulingQueue::Entry* SchedulingQueue::find(const std::string& uid) const {
  auto it = entries_.find(uid);
  return it == entries_.end() ? nullptr : it->second.get();
}

std::unique_ptr<QueuedPodInfo> SchedulingQueue::newInfo(PodInfoPtr podInfo) const {
  auto info = std::make_unique<QueuedPodInfo>();
  info->podInfo = std::move(podInfo);
  info->timestamp = now();
  if (const api::PodCondition* c = info->pod().condition(api::kPodConditionScheduled);
      c != nullptr && c->status == "False" && c->reason == api::kPodReasonNotReadyForScheduling) {
    info->preEnqueueRejectionMessage = c->message;
  }
  return info;
}

void SchedulingQueue::reportPreEnqueue(QueuedPodInfo& info, const Status& s) const {
  if (!options_.onPreEnqueueRejection) return;
  std::string& last = info.preEnqueueRejectionMessage;
  if (!s.ok()) {
    if (s.plugin() == names::kSchedulingGates) return;
    std::string message = s.message();
    if (message.empty() || message == last) return;
    if (options_.onPreEnqueueRejection(info.podInfo->pod, message)) last = std::move(message);
    return;
  }
  if (last.empty()) return;
  if (options_.onPreEnqueueRejection(info.podInfo->pod, "")) last.clear();
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
  if (closed_) return nullptr;
  Entry* e = nullptr;
  if (!active_.empty()) {
    e = active_.pop();
  } else if (!backoff_.empty()) {
    // Nothing else to do: a pod rejected as unschedulable need not wait for its backoff.
    e = backoff_.pop();
    incoming(kQueueActive, kEventPopFromBackoffQ);
  } else {
    return nullptr;
  }
  std::unique_ptr<QueuedPodInfo> info = std::move(e->info);
  entries_.erase(info->pod().metadata.uid);
  ++schedulingCycle_;
  startFlight(*info);
  return info;
}

void SchedulingQueue::startFlight(QueuedPodInfo& info) {
  const std::string& uid = info.pod().metadata.uid;
  ++info.attempts;
  info.unschedulablePlugins.clear();
  if (info.initialAttemptTimestamp == Clock::time_point{}) info.initialAttemptTimestamp = now();
  if (!inFlightPods_.contains(uid)) {
    inFlightPods_[uid] = inFlight_.insert(inFlight_.end(), InFlightItem{uid, {}, {}, {}});
  }
}

void SchedulingQueue::detach(Entry* e) {
  switch (e->where) {
    case detail::Location::kActive:
      active_.erase(e);
      break;
    case detail::Location::kBackoff:
      (e->info->consecutiveErrors > 0 ? errorBackoff_ : backoff_).erase(e);
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
  e->backoffExpiry = base + backoffOf(*e->info);
  // Pods that failed with an error wait out their backoff; the others may be popped early.
  (e->info->consecutiveErrors > 0 ? errorBackoff_ : backoff_).push(e);
  incoming(kQueueBackoff, event);
  popCv_.notify_one();
}

void SchedulingQueue::placeUnschedulable(Entry* e, std::string_view event, bool countIncoming) {
  e->where = detail::Location::kUnschedulable;
  e->judges.reset();  // its rejecting or gating plugins may have changed
  unschedulable_[e->info->pod().metadata.uid] = e;
  if (countIncoming) incoming(e->gated() ? kQueueGated : kQueueUnschedulable, event);
}

bool SchedulingQueue::moveToActiveQ(Entry* e, std::string_view event) {
  const bool wasGated = e->gated();
  Status s = preEnqueue_ ? preEnqueue_(e->info->pod()) : Status::success();
  reportPreEnqueue(*e->info, s);
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
  return *e.lastFailure + backoffOf(*e.info) > now();
}

std::chrono::milliseconds SchedulingQueue::backoffOf(const QueuedPodInfo& info) const {
  const int n = info.consecutiveErrors > 0 ? info.consecutiveErrors : info.unschedulableCount;
  return backoffDuration(n, options_.podInitialBackoff, options_.podMaxBackoff);
}

bool SchedulingQueue::worthRequeuing(const QueuedPodInfo& info, const ClusterEvent& event,
                                     const EventObject& oldObj, const EventObject& newObj) const {
  return worthRequeuing(judgesFor(info, hints_), info, event, oldObj, newObj);
}

bool SchedulingQueue::worthRequeuing(const Judges& judges, const QueuedPodInfo& info,
                                     const ClusterEvent& event, const EventObject& oldObj,
                                     const EventObject& newObj) const {
  auto observe = [this, &info](const HintRun& run) {
    if (run.result == "Error") {
      spdlog::error("QueueingHint of {} for {} on {} failed (pod is requeued): {}", run.plugin,
                    info.pod().metadata.key(), run.event.label(), run.error);
    }
    if (options_.onHint) options_.onHint(run.plugin, run.event.label(), run.result, run.seconds);
  };
  return judge(judges, info.pod(), event, oldObj, newObj, observe) == QueueingHint::kQueue;
}

bool SchedulingQueue::ofInterest(const ClusterEvent& event) const {
  if (event.isWildcard()) return true;
  for (const auto& [profile, plugins] : hints_) {
    for (const auto& [plugin, regs] : plugins) {
      for (const auto& reg : regs) {
        if (reg.event.matches(event)) return true;
      }
    }
  }
  return false;
}

void SchedulingQueue::incoming(std::string_view queue, std::string_view event) const {
  if (options_.onIncoming) options_.onIncoming(queue, event);
}

}  // namespace ksched::queue
