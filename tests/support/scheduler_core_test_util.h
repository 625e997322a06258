// The scheduler core's unit tests' helpers (tests/unit/scheduler/): an EventSink that keeps
// what it is given, polling, and the calls a FakeClusterApi recorded of one verb.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <ksched/api/pod.h>
#include <ksched/testing/fakes.h>

#include "scheduler/event_sink.h"

namespace ksched::schedulertest {

// Keeps every event, forget() and shutdown() it is given.
class RecordingSink final : public scheduler::EventSink {
 public:
  struct Event {
    std::string object;  // "<namespace>/<name>"
    std::string type, reason, message;
  };
  void event(const api::Pod& regarding, std::string_view type, std::string_view reason,
             std::string_view /*action*/, std::string message) override {
    std::lock_guard lock(mu_);
    events_.push_back(
        {regarding.metadata.key(), std::string(type), std::string(reason), std::move(message)});
  }
  void forget(const std::string& uid) override {
    std::lock_guard lock(mu_);
    forgotten_.push_back(uid);
  }
  uint64_t shutdown(std::chrono::steady_clock::time_point /*deadline*/) override {
    std::lock_guard lock(mu_);
    shutdowns_++;
    return droppedAtShutdown_;
  }
  [[nodiscard]] uint64_t sent() const override {
    std::lock_guard lock(mu_);
    return events_.size();
  }
  [[nodiscard]] uint64_t dropped() const override {
    std::lock_guard lock(mu_);
    return dropped_;
  }
  // What dropped() and shutdown() answer from now on, as a recorder that dropped `total` events,
  // `atShutdown` of them at shutdown.
  void setDropped(uint64_t total, uint64_t atShutdown) {
    std::lock_guard lock(mu_);
    dropped_ = total;
    droppedAtShutdown_ = atShutdown;
  }
  [[nodiscard]] std::vector<Event> withReason(const std::string& reason) const {
    std::lock_guard lock(mu_);
    std::vector<Event> out;
    for (const auto& e : events_) {
      if (e.reason == reason) out.push_back(e);
    }
    return out;
  }
  [[nodiscard]] std::vector<std::string> forgotten() const {
    std::lock_guard lock(mu_);
    return forgotten_;
  }
  [[nodiscard]] int shutdowns() const {
    std::lock_guard lock(mu_);
    return shutdowns_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<Event> events_;
  std::vector<std::string> forgotten_;
  int shutdowns_ = 0;
  uint64_t dropped_ = 0, droppedAtShutdown_ = 0;
};

// Polls `pred` until it holds or `timeout` passes; its last answer.
template <typename Pred>
bool eventually(Pred pred, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return pred();
}

inline std::vector<testing::FakeClusterApi::Call> callsOf(const testing::FakeClusterApi& api,
                                                          const std::string& verb) {
  std::vector<testing::FakeClusterApi::Call> out;
  for (auto& c : api.calls()) {
    if (c.verb == verb) out.push_back(c);
  }
  return out;
}

}  // namespace ksched::schedulertest
