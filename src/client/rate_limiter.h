// Client-side request rate limiting, like client-go's flowcontrol token bucket.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <stop_token>

namespace ksched::client {

// Token bucket: refills at `qps` tokens per second up to `burst` tokens and starts full.
// qps <= 0 means unlimited (every call succeeds at once); burst < 1 is treated as 1.
// Thread-safe.
//
// acquire() reserves a token before sleeping, so waiters are served in call order and a
// blocked caller never delays one that arrives later by more than its own share. A waiter that
// is stopped gives its reservation back.
// Sleeps for `d` unless `st` is stopped first; false when stopped (also when stopped on entry).
bool sleepFor(std::chrono::nanoseconds d, const std::stop_token& st);

class RateLimiter {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;
  // Sleeps for the duration or until the stop token is triggered; returns false if stopped.
  using Sleeper = std::function<bool(std::chrono::nanoseconds, std::stop_token)>;

  // Empty `clock`/`sleeper` mean the real steady clock and a stop-aware sleep; tests inject fakes.
  RateLimiter(double qps, int burst, Clock clock = {}, Sleeper sleeper = {});

  RateLimiter(const RateLimiter&) = delete;
  RateLimiter& operator=(const RateLimiter&) = delete;

  // Blocks until a token is available. Returns false (without taking a token) if `st` is
  // stopped before then, including when it is already stopped on entry.
  [[nodiscard]] bool acquire(std::stop_token st = {});
  // Takes a token if one is available now; never blocks.
  [[nodiscard]] bool tryAcquire();

  [[nodiscard]] double qps() const { return qps_; }
  [[nodiscard]] int burst() const { return burst_; }
  // Tokens handed out so far by acquire() and tryAcquire().
  [[nodiscard]] uint64_t acquired() const { return acquired_.load(std::memory_order_relaxed); }

 private:
  using TimePoint = std::chrono::steady_clock::time_point;

  // Caller holds mu_. Moves emptyAt_ forward so the bucket holds at most burst_ tokens at `now`.
  void refill(TimePoint now);

  const double qps_;
  const int burst_;
  const std::chrono::nanoseconds interval_;  // time to earn one token
  const std::chrono::nanoseconds window_;    // time to fill the whole bucket
  Clock clock_;
  Sleeper sleeper_;
  std::atomic<uint64_t> acquired_{0};
  std::mutex mu_;
  // The bucket holds (now - emptyAt_) / interval_ tokens, capped at burst_. Past `now` when
  // reservations are outstanding.
  TimePoint emptyAt_;
};

}  // namespace ksched::client
