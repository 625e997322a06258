// Pods held at Permit for one framework (upstream waitingPodsMap and waitingPod): who still
// waits on which plugin, until when, and the verdict; a timer thread ends waits at their
// deadline so that no binder blocks while a pod waits.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>

#include <ksched/handle.h>
#include <ksched/status.h>

namespace ksched::framework {

class WaitingPodImpl;

class WaitingPods {
 public:
  WaitingPods() = default;
  // Rejects every waiting pod and stops the timer.
  ~WaitingPods();
  WaitingPods(const WaitingPods&) = delete;
  WaitingPods& operator=(const WaitingPods&) = delete;

  // Registers `pod` as waiting on `pending` (plugin -> timeout).
  void add(const api::Pod& pod, std::map<std::string, std::chrono::milliseconds> pending);
  // Calls `fn` once the pod `uid` is allowed, rejected or timed out: on the thread that decided
  // it, or the timer thread (started here, on first use); at once when it is decided already or
  // does not wait. `fn` must not call back into these waiting pods.
  void onDecided(const std::string& uid, std::function<void()> fn);
  // The pod's verdict, blocking until it is decided; success for a pod that does not wait.
  // Forgets the pod. `waited`, when given, receives how long it waited.
  Status wait(const api::Pod& pod, std::chrono::duration<double>* waited);
  [[nodiscard]] std::shared_ptr<WaitingPod> get(std::string_view uid);
  void iterate(const std::function<void(WaitingPod&)>& fn);
  void rejectAll(const std::string& message);
  // Stops the timer thread (pods still waiting then wait until their own deadline). Idempotent.
  void stopTimer();

 private:
  void runTimer(std::stop_token st);

  std::mutex mu_;
  std::condition_variable_any timerCv_;
  bool timerKick_ = false;  // guarded by mu_: a new deadline to look at
  std::jthread timer_;      // guarded by mu_ (started lazily)
  std::unordered_map<std::string, std::shared_ptr<WaitingPodImpl>> waiting_;  // guarded by mu_
};

}  // namespace ksched::framework
