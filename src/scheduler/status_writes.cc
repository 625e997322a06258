#include "scheduler/status_writes.h"

#include <pthread.h>

#include <utility>
#include <vector>

#include <ksched/api/pod.h>

#include "scheduler/explain.h"

namespace ksched::scheduler {

using Write = StatusWrites::Write;

Write Write::podScheduledFalse(PodPtr pod, std::string reason, std::string message,
                               std::optional<std::string> nominatedNode, std::string diagnosis) {
  Write w;
  w.pod = std::move(pod);
  w.condition = Condition::kSet;
  w.reason = std::move(reason);
  w.message = std::move(message);
  w.nominatedNode = std::move(nominatedNode);
  w.diagnosis = std::move(diagnosis);
  return w;
}

Write Write::clearNotReady(PodPtr pod) {
  Write w;
  w.pod = std::move(pod);
  w.condition = Condition::kClearNotReady;
  return w;
}

Write Write::nomination(PodPtr pod, std::string node) {
  Write w;
  w.pod = std::move(pod);
  w.nominatedNode = std::move(node);
  w.binding = true;
  return w;
}

Write Write::heldBy(const PodPtr& pod) {
  Write w;
  w.pod = pod;
  w.condition = Condition::kClearNotReady;
  if (const auto* c = pod->condition(api::kPodConditionScheduled);
      c != nullptr && c->status == "False") {
    w.condition = Condition::kSet;
    w.reason = c->reason;
    w.message = c->message;
  }
  w.nominatedNode = pod->status.nominatedNodeName;
  if (auto it = pod->metadata.annotations.find(std::string(kDiagnosisAnnotation));
      it != pod->metadata.annotations.end()) {
    w.diagnosis = it->second;
  }
  return w;
}

bool Write::addsNothingTo(const Write& earlier) const {
  switch (condition) {
    case Condition::kLeave:
      break;
    case Condition::kSet:
      if (earlier.condition != Condition::kSet || reason != earlier.reason ||
          message != earlier.message) {
        return false;
      }
      break;
    case Condition::kClearNotReady:
      // Only a NotReadyForScheduling condition is removed; a write that leaves the condition
      // alone says nothing about what is there.
      if (earlier.condition == Condition::kLeave ||
          (earlier.condition == Condition::kSet &&
           earlier.reason == api::kPodReasonNotReadyForScheduling)) {
        return false;
      }
      break;
  }
  return (!nominatedNode || nominatedNode == earlier.nominatedNode) &&
         (diagnosis.empty() || diagnosis == earlier.diagnosis);
}

void Write::mergeOver(const Write& waiting) {
  if (binding != waiting.binding) return;
  const bool waitingSetsOther = waiting.condition == Condition::kSet &&
                                waiting.reason != api::kPodReasonNotReadyForScheduling;
  if (condition == Condition::kLeave ||
      (condition == Condition::kClearNotReady && waitingSetsOther)) {
    condition = waiting.condition;
    reason = waiting.reason;
    message = waiting.message;
  }
  if (!nominatedNode) nominatedNode = waiting.nominatedNode;
  if (diagnosis.empty()) diagnosis = waiting.diagnosis;
}

StatusWrites::StatusWrites(Options options) : options_(std::move(options)) {
  if (options_.timerThread) {
    timer_ = std::jthread([this](std::stop_token st) {
      pthread_setname_np(pthread_self(), "status-delay");
      timerLoop(std::move(st));
    });
  }
}

StatusWrites::~StatusWrites() { stop(); }

StatusWrites::Clock::time_point StatusWrites::now() const {
  return options_.clock ? options_.clock() : Clock::now();
}

bool StatusWrites::submit(const std::string& uid, Write w, bool consultHeld) {
  {
    std::lock_guard lock(mu_);
    if (auto it = slots_.find(uid); it != slots_.end()) {
      Slot& slot = it->second;
      if (slot.next) w.mergeOver(*slot.next);
      const Write* earlier = slot.next ? &*slot.next : slot.sending ? &*slot.sending : nullptr;
      if (earlier != nullptr && w.addsNothingTo(*earlier)) return false;
      slot.next = std::move(w);
      return true;  // the pod's task sends it after the one in flight
    }
  }
  if (consultHeld && options_.held && options_.held(w)) return false;
  {
    std::lock_guard lock(mu_);
    if (auto it = slots_.find(uid); it != slots_.end()) {
      // Another write of the pod came in meanwhile: this one goes behind it.
      Slot& slot = it->second;
      if (slot.next) w.mergeOver(*slot.next);
      slot.next = std::move(w);
      return true;
    }
    slots_[uid].next = std::move(w);
  }
  if (!options_.run([this, uid] { drainPod(uid); })) {
    std::lock_guard lock(mu_);
    slots_.erase(uid);  // shutting down: not sent
    slotCv_.notify_all();
    return false;
  }
  return true;
}

void StatusWrites::submitAfter(const std::string& uid, Write w, std::chrono::milliseconds delay) {
  if (delay <= std::chrono::milliseconds::zero()) {
    (void)submit(uid, std::move(w));
    return;
  }
  std::lock_guard lock(mu_);
  if (stopped_) return;
  auto it = delayed_.find(uid);
  if (it != delayed_.end()) {
    w.mergeOver(it->second.write);
    it->second.write = std::move(w);
    return;
  }
  const auto due = now() + delay;
  delayed_.emplace(uid, Delayed{std::move(w), due});
  dueOrder_.emplace(due, uid);
  timerCv_.notify_all();
}

bool StatusWrites::settle(const std::string& uid) {
  std::unique_lock lock(mu_);
  auto it = slots_.find(uid);
  if (it == slots_.end()) return false;
  bool dropped = false;
  if (it->second.next) {
    dropped = it->second.next->nominatedNode && !it->second.next->nominatedNode->empty();
    it->second.next.reset();
  }
  if (it->second.sending) {
    const uint64_t sent = it->second.sent;
    slotCv_.wait(lock, [&] {
      auto s = slots_.find(uid);
      return s == slots_.end() || s->second.sent != sent;
    });
  }
  return dropped;
}

void StatusWrites::sendDue() {
  std::vector<std::pair<std::string, Write>> due;
  {
    std::lock_guard lock(mu_);
    const auto t = now();
    while (!dueOrder_.empty() && dueOrder_.begin()->first <= t) {
      const std::string uid = dueOrder_.begin()->second;
      dueOrder_.erase(dueOrder_.begin());
      auto it = delayed_.find(uid);
      due.emplace_back(uid, std::move(it->second.write));
      delayed_.erase(it);
    }
  }
  for (auto& [uid, w] : due) (void)submit(uid, std::move(w));
}

void StatusWrites::timerLoop(std::stop_token st) {
  std::unique_lock lock(mu_);
  while (!st.stop_requested()) {
    if (dueOrder_.empty()) {
      timerCv_.wait(lock, st, [&] { return !dueOrder_.empty(); });
      continue;
    }
    const auto wait = dueOrder_.begin()->first - now();
    if (wait > Clock::duration::zero()) {
      (void)timerCv_.wait_for(lock, st, wait, [] { return false; });
      continue;
    }
    lock.unlock();
    sendDue();
    lock.lock();
  }
}

void StatusWrites::stop() {
  {
    std::lock_guard lock(mu_);
    stopped_ = true;
    delayed_.clear();
    dueOrder_.clear();
  }
  if (timer_.joinable()) {
    timer_.request_stop();
    timer_.join();
  }
}

void StatusWrites::drainPod(const std::string& uid) {
  while (true) {
    const Write* w = nullptr;
    {
      std::lock_guard lock(mu_);
      Slot& slot = slots_.at(uid);
      if (slot.sending) {
        slot.sending.reset();
        ++slot.sent;
        slotCv_.notify_all();
      }
      if (!slot.next) {
        slots_.erase(uid);
        return;
      }
      slot.sending = std::move(slot.next);
      slot.next.reset();
      w = &*slot.sending;  // stable: only this task replaces `sending`
    }
    options_.send(*w);
  }
}

size_t StatusWrites::pods() const {
  std::lock_guard lock(mu_);
  return slots_.size();
}

size_t StatusWrites::delayed() const {
  std::lock_guard lock(mu_);
  return delayed_.size();
}

}  // namespace ksched::scheduler
