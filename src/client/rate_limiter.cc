#include "client/rate_limiter.h"

#include <algorithm>
#include <condition_variable>
#include <utility>

namespace ksched::client {
bool sleepFor(std::chrono::nanoseconds d, const std::stop_token& st) {
  std::mutex m;
  std::condition_variable_any cv;
  std::unique_lock lock(m);
  cv.wait_for(lock, st, d, [] { return false; });
  return !st.stop_requested();
}

namespace {

constexpr double kMaxIntervalNs = 86400e9;  // slower than one token a day is treated as one a day
constexpr double kMaxWindowNs = 1e18;       // keeps time arithmetic far from overflow

std::chrono::nanoseconds intervalFor(double qps) {
  if (qps <= 0) return std::chrono::nanoseconds(0);
  double ns = std::clamp(1e9 / qps, 1.0, kMaxIntervalNs);
  return std::chrono::nanoseconds(static_cast<int64_t>(ns + 0.5));
}

}  // namespace

RateLimiter::RateLimiter(double qps, int burst, Clock clock, Sleeper sleeper)
    : qps_(qps),
      burst_(std::max(burst, 1)),
      interval_(intervalFor(qps)),
      window_(static_cast<int64_t>(
          std::min(static_cast<double>(interval_.count()) * burst_, kMaxWindowNs))),
      clock_(clock ? std::move(clock) : Clock([] { return std::chrono::steady_clock::now(); })),
      sleeper_(sleeper ? std::move(sleeper)
                       : Sleeper([](std::chrono::nanoseconds d, std::stop_token st) {
                           return sleepFor(d, st);
                         })),
      emptyAt_(clock_() - window_) {}

void RateLimiter::refill(TimePoint now) { emptyAt_ = std::max(emptyAt_, now - window_); }

bool RateLimiter::tryAcquire() {
  if (qps_ > 0) {
    std::lock_guard lock(mu_);
    auto now = clock_();
    refill(now);
    if (emptyAt_ + interval_ > now) return false;
    emptyAt_ += interval_;
  }
  acquired_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

bool RateLimiter::acquire(std::stop_token st) {
  if (st.stop_requested()) return false;
  if (qps_ > 0) {
    std::chrono::nanoseconds wait{0};
    {
      std::lock_guard lock(mu_);
      auto now = clock_();
      refill(now);
      emptyAt_ += interval_;
      wait = emptyAt_ - now;
    }
    if (wait > std::chrono::nanoseconds::zero() && !sleeper_(wait, st)) {
      std::lock_guard lock(mu_);
      emptyAt_ -= interval_;
      return false;
    }
  }
  acquired_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

}  // namespace ksched::client
