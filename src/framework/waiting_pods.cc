#include "framework/waiting_pods.h"

#include <pthread.h>

#include <optional>
#include <set>
#include <sstream>
#include <vector>

namespace ksched::framework {

class WaitingPodImpl final : public WaitingPod {
 public:
  WaitingPodImpl(const api::Pod& pod, std::map<std::string, std::chrono::milliseconds> pending)
      : pod_(pod) {
    for (auto& [plugin, timeout] : pending) {
      auto deadline = created_ + timeout;
      if (deadlinePlugin_.empty() || deadline < deadline_) {
        deadline_ = deadline;
        deadlinePlugin_ = plugin;
        deadlineTimeout_ = timeout;
      }
      pending_.insert(plugin);
    }
  }

  [[nodiscard]] const api::Pod& pod() const override { return pod_; }
  [[nodiscard]] std::chrono::steady_clock::time_point deadline() const { return deadline_; }

  void allow(std::string_view plugin) override {
    std::unique_lock lock(mu_);
    if (auto it = pending_.find(plugin); it != pending_.end()) pending_.erase(it);
    if (pending_.empty()) decide(lock, Status::success());
  }

  void reject(std::string_view plugin, std::string message) override {
    std::unique_lock lock(mu_);
    decide(lock, Status::unschedulable(std::move(message)).withPlugin(plugin));
  }

  // `fn` runs once the pod is decided: now if it is already.
  void setOnDecided(std::function<void()> fn) {
    std::unique_lock lock(mu_);
    if (!result_) {
      onDecided_ = std::move(fn);
      return;
    }
    lock.unlock();
    fn();
  }

  // Rejects the pod if its deadline passed; true when it is decided (now or before).
  bool expireIfDue(std::chrono::steady_clock::time_point now) {
    std::unique_lock lock(mu_);
    if (result_) return true;
    if (now < deadline_) return false;
    decide(lock, timeoutStatus());
    return true;
  }

  [[nodiscard]] bool decided() {
    std::lock_guard lock(mu_);
    return result_.has_value();
  }

  Status wait(std::chrono::duration<double>* waited) {
    std::unique_lock lock(mu_);
    if (!cv_.wait_until(lock, deadline_, [&] { return result_.has_value(); })) {
      decide(lock, timeoutStatus());
      lock.lock();
    }
    if (waited != nullptr) *waited = decidedAt_ - created_;
    return *result_;
  }

 private:
  Status timeoutStatus() const {
    std::ostringstream msg;
    msg << "rejected due to timeout after waiting "
        << std::chrono::duration<double>(deadlineTimeout_).count() << "s at plugin "
        << deadlinePlugin_;
    return Status::unschedulable(msg.str()).withPlugin(deadlinePlugin_);
  }

  // Sets the verdict once; calls onDecided_ without the lock held. Unlocks `lock`.
  void decide(std::unique_lock<std::mutex>& lock, Status s) {
    if (result_) {
      lock.unlock();
      return;
    }
    result_ = std::move(s);
    decidedAt_ = std::chrono::steady_clock::now();
    cv_.notify_all();
    auto cb = std::move(onDecided_);
    lock.unlock();
    if (cb) cb();
  }

  const api::Pod pod_;
  const std::chrono::steady_clock::time_point created_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point deadline_{};
  std::string deadlinePlugin_;
  std::chrono::milliseconds deadlineTimeout_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  std::function<void()> onDecided_;                  // guarded by mu_; called once
  std::set<std::string, std::less<>> pending_;       // guarded by mu_
  std::optional<Status> result_;                     // guarded by mu_
  std::chrono::steady_clock::time_point decidedAt_;  // guarded by mu_
};

WaitingPods::~WaitingPods() {
  rejectAll("scheduler is shutting down");
  stopTimer();
}

void WaitingPods::add(const api::Pod& pod,
                      std::map<std::string, std::chrono::milliseconds> pending) {
  auto wp = std::make_shared<WaitingPodImpl>(pod, std::move(pending));
  std::lock_guard lock(mu_);
  waiting_[pod.metadata.uid] = std::move(wp);
}

void WaitingPods::stopTimer() {
  std::jthread timer;
  {
    std::lock_guard lock(mu_);
    timer = std::move(timer_);
  }
  if (timer.joinable()) {
    timer.request_stop();
    timerCv_.notify_all();
    timer.join();
  }
}

void WaitingPods::runTimer(std::stop_token st) {
  std::unique_lock lock(mu_);
  while (!st.stop_requested()) {
    timerKick_ = false;
    const auto now = std::chrono::steady_clock::now();
    auto next = now + std::chrono::hours(1);
    std::vector<std::shared_ptr<WaitingPodImpl>> due;
    for (auto& [uid, wp] : waiting_) {
      if (wp->deadline() <= now) {
        due.push_back(wp);
      } else {
        next = std::min(next, wp->deadline());
      }
    }
    if (!due.empty()) {
      lock.unlock();
      for (auto& wp : due) wp->expireIfDue(now);
      lock.lock();
      // Decided pods stay in waiting_ until their binding cycle collects the verdict: only
      // look at them again once they are gone.
      next = std::min(next, now + std::chrono::milliseconds(100));
    }
    timerCv_.wait_until(lock, st, next, [&] { return timerKick_; });
  }
}

void WaitingPods::onDecided(const std::string& uid, std::function<void()> fn) {
  std::shared_ptr<WaitingPodImpl> wp;
  {
    std::lock_guard lock(mu_);
    if (auto it = waiting_.find(uid); it != waiting_.end()) wp = it->second;
    if (wp) {
      // Nobody blocks on this pod: the timer ends its wait at the deadline.
      if (!timer_.joinable()) {
        timer_ = std::jthread([this](std::stop_token st) {
          pthread_setname_np(pthread_self(), "permit-timer");
          runTimer(std::move(st));
        });
      }
      timerKick_ = true;
      timerCv_.notify_all();
    }
  }
  if (wp) {
    wp->setOnDecided(std::move(fn));
  } else {
    fn();
  }
}

Status WaitingPods::wait(const api::Pod& pod, std::chrono::duration<double>* waited) {
  if (waited != nullptr) *waited = std::chrono::duration<double>(0);
  std::shared_ptr<WaitingPodImpl> wp;
  {
    std::lock_guard lock(mu_);
    auto it = waiting_.find(pod.metadata.uid);
    if (it == waiting_.end()) return {};
    wp = it->second;
  }
  Status s = wp->wait(waited);
  std::lock_guard lock(mu_);
  waiting_.erase(pod.metadata.uid);
  return s;
}

std::shared_ptr<WaitingPod> WaitingPods::get(std::string_view uid) {
  std::lock_guard lock(mu_);
  auto it = waiting_.find(std::string(uid));
  return it == waiting_.end() ? nullptr : it->second;
}

void WaitingPods::iterate(const std::function<void(WaitingPod&)>& fn) {
  std::vector<std::shared_ptr<WaitingPodImpl>> all;
  {
    std::lock_guard lock(mu_);
    for (auto& [_, wp] : waiting_) all.push_back(wp);
  }
  for (auto& wp : all) fn(*wp);
}

void WaitingPods::rejectAll(const std::string& message) {
  iterate([&](WaitingPod& wp) { wp.reject("", message); });
}

}  // namespace ksched::framework
