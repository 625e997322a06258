#include "scheduler/parked_bindings.h"

#include <pthread.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <exception>
#include <optional>
#include <utility>

namespace ksched::scheduler {

namespace {

size_t slot(EventResource r) { return static_cast<size_t>(r); }

// Whether `ev` is one `wait` names; the hint, when given, judges it for `pod`. A hint that
// throws counts as a match: a binding resumed once too often only looks again.
bool wakes(const PreBindPlugin::Wait& wait, const api::Pod& pod, const ClusterEvent& ev,
           const EventObject& oldObj, const EventObject& newObj) {
  for (const auto& e : wait.events) {
    if (!e.event.matches(ev)) continue;
    if (!e.hint) return true;
    try {
      if (e.hint(pod, oldObj, newObj) == QueueingHint::kQueue) return true;
    } catch (const std::exception& ex) {
      spdlog::warn("PreBind wait hint for pod {}: {}", pod.metadata.key(), ex.what());
      return true;
    }
  }
  return false;
}

// The resources a wait names (kPod stands for both kinds of pod events).
bool namesResource(const PreBindPlugin::Wait& wait, EventResource r) {
  for (const auto& e : wait.events) {
    const EventResource named = e.event.resource;
    if (named == EventResource::kWildcard || named == r) return true;
    if (named == EventResource::kPod &&
        (r == EventResource::kAssignedPod || r == EventResource::kUnscheduledPod)) {
      return true;
    }
  }
  return false;
}

}  // namespace

ParkedBindings::~ParkedBindings() { stop(); }

ParkedBindings::Seen ParkedBindings::seen() const {
  std::lock_guard lock(mu_);
  return seen_;
}

void ParkedBindings::park(const PodPtr& pod, PreBindPlugin::Wait wait, const Seen& before,
                          Resume resume) {
  std::optional<Why> now;
  {
    std::lock_guard lock(mu_);
    if (stopped_) {
      now = Why::kShutdown;
    } else {
      for (size_t r = 0; r < seen_.size() && !now; ++r) {
        if (seen_[r] != before[r] && namesResource(wait, static_cast<EventResource>(r))) {
          now = Why::kEvent;
        }
      }
    }
    if (!now) {
      if (!timer_.joinable()) {
        timer_ = std::jthread([this](std::stop_token st) {
          pthread_setname_np(pthread_self(), "prebind-timer");
          runTimer(std::move(st));
        });
      }
      parked_[pod->metadata.uid] = Entry{pod, std::move(wait), std::move(resume)};
      ++parks_;
      cv_.notify_all();
      return;
    }
  }
  resume(*now);
}

void ParkedBindings::event(const ClusterEvent& ev, const EventObject& oldObj,
                           const EventObject& newObj) {
  std::vector<Entry> due;
  {
    std::lock_guard lock(mu_);
    ++seen_[slot(ev.resource)];
    for (auto it = parked_.begin(); it != parked_.end();) {
      if (wakes(it->second.wait, *it->second.pod, ev, oldObj, newObj)) {
        due.push_back(std::move(it->second));
        it = parked_.erase(it);
      } else {
        ++it;
      }
    }
  }
  resumeAll(due, Why::kEvent);
}

void ParkedBindings::cancel(const std::string& uid) {
  std::vector<Entry> due;
  {
    std::lock_guard lock(mu_);
    auto it = parked_.find(uid);
    if (it == parked_.end()) return;
    due.push_back(std::move(it->second));
    parked_.erase(it);
  }
  resumeAll(due, Why::kDeleted);
}

void ParkedBindings::stop() {
  std::vector<Entry> due;
  {
    std::lock_guard lock(mu_);
    stopped_ = true;
    for (auto& [uid, e] : parked_) due.push_back(std::move(e));
    parked_.clear();
  }
  if (timer_.joinable()) {
    timer_.request_stop();
    cv_.notify_all();
    timer_.join();
  }
  resumeAll(due, Why::kShutdown);
}

size_t ParkedBindings::size() const {
  std::lock_guard lock(mu_);
  return parked_.size();
}

void ParkedBindings::resumeAll(std::vector<Entry>& due, Why why) {
  for (auto& e : due) e.resume(why);
}

void ParkedBindings::runTimer(std::stop_token st) {
  std::unique_lock lock(mu_);
  while (!st.stop_requested()) {
    const auto now = std::chrono::steady_clock::now();
    auto next = std::chrono::steady_clock::time_point::max();
    std::vector<Entry> due;
    for (auto it = parked_.begin(); it != parked_.end();) {
      if (it->second.wait.deadline <= now) {
        due.push_back(std::move(it->second));
        it = parked_.erase(it);
      } else {
        next = std::min(next, it->second.wait.deadline);
        ++it;
      }
    }
    if (!due.empty()) {
      lock.unlock();
      resumeAll(due, Why::kDeadline);
      lock.lock();
      continue;
    }
    // Until the earliest deadline, or a new parking (it may be due earlier).
    const uint64_t parks = parks_;
    if (next == std::chrono::steady_clock::time_point::max()) {
      cv_.wait(lock, st, [&] { return parks_ != parks; });
    } else {
      cv_.wait_until(lock, st, next, [&] { return parks_ != parks; });
    }
  }
}

}  // namespace ksched::scheduler
