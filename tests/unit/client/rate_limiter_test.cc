#include "client/rate_limiter.h"

#include <gtest/gtest.h>

#include <chrono>
#include <stop_token>
#include <thread>
#include <vector>

namespace ksched::client {
namespace {

using namespace std::chrono_literals;
using TimePoint = std::chrono::steady_clock::time_point;

// A clock that only moves when told to, and a sleeper that advances it instead of sleeping.
class FakeTime {
 public:
  RateLimiter::Clock clock() {
    return [this] { return now_; };
  }
  RateLimiter::Sleeper sleeper() {
    return [this](std::chrono::nanoseconds d, std::stop_token st) {
      sleeps_.push_back(d);
      if (st.stop_requested() || stopDuringSleep_) return false;
      now_ += d;
      return true;
    };
  }

  TimePoint now_{std::chrono::hours(1)};
  std::vector<std::chrono::nanoseconds> sleeps_;
  bool stopDuringSleep_ = false;
};

TEST(RateLimiterTest, StartsFullThenRefillsAtQps) {
  FakeTime t;
  RateLimiter rl(10, 5, t.clock(), t.sleeper());
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(rl.tryAcquire()) << i;
  EXPECT_FALSE(rl.tryAcquire());
  t.now_ += 99ms;
  EXPECT_FALSE(rl.tryAcquire());
  t.now_ += 1ms;
  EXPECT_TRUE(rl.tryAcquire());
  EXPECT_FALSE(rl.tryAcquire());
  EXPECT_EQ(rl.acquired(), 6u);
  EXPECT_EQ(rl.qps(), 10);
  EXPECT_EQ(rl.burst(), 5);
}

TEST(RateLimiterTest, RefillIsCappedAtBurst) {
  FakeTime t;
  RateLimiter rl(10, 3, t.clock(), t.sleeper());
  t.now_ += 1h;
  int got = 0;
  while (rl.tryAcquire()) ++got;
  EXPECT_EQ(got, 3);
}

TEST(RateLimiterTest, AcquireDoesNotSleepWhileTokensRemain) {
  FakeTime t;
  RateLimiter rl(10, 2, t.clock(), t.sleeper());
  EXPECT_TRUE(rl.acquire());
  EXPECT_TRUE(rl.acquire());
  EXPECT_TRUE(t.sleeps_.empty());
}

TEST(RateLimiterTest, AcquireSleepsUntilTheNextToken) {
  FakeTime t;
  RateLimiter rl(10, 1, t.clock(), t.sleeper());
  EXPECT_TRUE(rl.acquire());
  EXPECT_TRUE(rl.acquire());
  EXPECT_TRUE(rl.acquire());
  ASSERT_EQ(t.sleeps_.size(), 2u);
  EXPECT_EQ(t.sleeps_[0], 100ms);
  EXPECT_EQ(t.sleeps_[1], 100ms);
  EXPECT_EQ(rl.acquired(), 3u);
}

TEST(RateLimiterTest, WaitersReserveInOrder) {
  // Without the sleeper advancing time, three callers arriving at once on an empty bucket get
  // successive slots: 100, 200 and 300 ms away.
  FakeTime t;
  std::vector<std::chrono::nanoseconds> sleeps;
  RateLimiter rl(10, 1, t.clock(), [&](std::chrono::nanoseconds d, std::stop_token) {
    sleeps.push_back(d);
    return true;
  });
  EXPECT_TRUE(rl.tryAcquire());
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(rl.acquire());
  ASSERT_EQ(sleeps.size(), 3u);
  EXPECT_EQ(sleeps[0], 100ms);
  EXPECT_EQ(sleeps[1], 200ms);
  EXPECT_EQ(sleeps[2], 300ms);
  EXPECT_FALSE(rl.tryAcquire());
}

TEST(RateLimiterTest, StoppedWaiterReturnsItsReservation) {
  FakeTime t;
  RateLimiter rl(10, 1, t.clock(), t.sleeper());
  EXPECT_TRUE(rl.tryAcquire());
  t.stopDuringSleep_ = true;
  EXPECT_FALSE(rl.acquire());
  EXPECT_EQ(rl.acquired(), 1u);
  t.now_ += 100ms;
  EXPECT_TRUE(rl.tryAcquire());  // the cancelled reservation did not consume this token
}

TEST(RateLimiterTest, AlreadyStoppedTokenReturnsFalseAtOnce) {
  FakeTime t;
  RateLimiter rl(10, 5, t.clock(), t.sleeper());
  std::stop_source ss;
  ss.request_stop();
  EXPECT_FALSE(rl.acquire(ss.get_token()));
  EXPECT_EQ(rl.acquired(), 0u);
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(rl.tryAcquire());
}

TEST(RateLimiterTest, NonPositiveQpsIsUnlimited) {
  FakeTime t;
  RateLimiter rl(0, 0, t.clock(), t.sleeper());
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(rl.tryAcquire());
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(rl.acquire());
  EXPECT_TRUE(t.sleeps_.empty());
  EXPECT_EQ(rl.acquired(), 2000u);
}

TEST(RateLimiterTest, BurstBelowOneIsOne) {
  FakeTime t;
  RateLimiter rl(10, 0, t.clock(), t.sleeper());
  EXPECT_EQ(rl.burst(), 1);
  EXPECT_TRUE(rl.tryAcquire());
  EXPECT_FALSE(rl.tryAcquire());
}

TEST(RateLimiterTest, FractionalQps) {
  FakeTime t;
  RateLimiter rl(0.5, 1, t.clock(), t.sleeper());
  EXPECT_TRUE(rl.tryAcquire());
  t.now_ += 1999ms;
  EXPECT_FALSE(rl.tryAcquire());
  t.now_ += 1ms;
  EXPECT_TRUE(rl.tryAcquire());
}

TEST(RateLimiterTest, RealSleepIsInterruptedByStop) {
  // One token per ~3 hours: the second acquire can only finish through the stop token.
  RateLimiter rl(0.0001, 1);
  EXPECT_TRUE(rl.tryAcquire());
  bool result = true;
  {
    std::jthread waiter([&](std::stop_token st) { result = rl.acquire(st); });
    waiter.request_stop();
  }
  EXPECT_FALSE(result);
  EXPECT_EQ(rl.acquired(), 1u);
}

TEST(RateLimiterTest, ConcurrentTryAcquireNeverExceedsBurst) {
  FakeTime t;  // time never moves, so exactly `burst` tokens exist
  RateLimiter rl(100, 50, t.clock(), t.sleeper());
  {
    std::vector<std::jthread> threads;
    for (int i = 0; i < 4; ++i) {
      threads.emplace_back([&] {
        for (int j = 0; j < 100; ++j) (void)rl.tryAcquire();
      });
    }
  }
  EXPECT_EQ(rl.acquired(), 50u);
}

}  // namespace
}  // namespace ksched::client
