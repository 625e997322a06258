#include "client/backoff.h"

#include <gtest/gtest.h>

#include <chrono>
#include <vector>

namespace ksched::client {
namespace {

using namespace std::chrono_literals;

TEST(BackoffTest, DoublesUpToMaxWithoutJitter) {
  Backoff b(100ms, 1s, 2.0, 0.0);
  std::vector<std::chrono::milliseconds> got;
  for (int i = 0; i < 6; ++i) got.push_back(b.next());
  EXPECT_EQ(got, (std::vector<std::chrono::milliseconds>{100ms, 200ms, 400ms, 800ms, 1s, 1s}));
}

TEST(BackoffTest, ResetStartsOver) {
  Backoff b(100ms, 1s, 2.0, 0.0);
  (void)b.next();
  (void)b.next();
  EXPECT_EQ(b.current(), 400ms);
  b.reset();
  EXPECT_EQ(b.current(), 100ms);
  EXPECT_EQ(b.next(), 100ms);
}

TEST(BackoffTest, JitterAddsUpToTheFractionOfTheBase) {
  Backoff b(1000ms, 1000ms, 2.0, 0.1, 42);
  bool sawExtra = false;
  for (int i = 0; i < 200; ++i) {
    auto d = b.next();
    EXPECT_GE(d, 1000ms);
    EXPECT_LT(d, 1100ms);
    sawExtra = sawExtra || d > 1000ms;
  }
  EXPECT_TRUE(sawExtra);
}

TEST(BackoffTest, SameSeedSameSequence) {
  Backoff a(50ms, 10s, 2.0, 1.0, 7);
  Backoff b(50ms, 10s, 2.0, 1.0, 7);
  Backoff c(50ms, 10s, 2.0, 1.0, 8);
  bool differs = false;
  for (int i = 0; i < 10; ++i) {
    auto x = a.next();
    EXPECT_EQ(x, b.next());
    differs = differs || x != c.next();
  }
  EXPECT_TRUE(differs);
}

TEST(BackoffTest, JitteredDelaysFollowTheBase) {
  Backoff b(100ms, 400ms, 2.0, 0.5, 1);
  const std::chrono::milliseconds bases[] = {100ms, 200ms, 400ms, 400ms};
  for (auto base : bases) {
    auto d = b.next();
    EXPECT_GE(d, base);
    EXPECT_LT(d, base + base / 2);
  }
}

TEST(BackoffTest, DegenerateParametersAreClamped) {
  Backoff slow(100ms, 1s, 0.5, 0.0);  // factor < 1 acts as 1
  EXPECT_EQ(slow.next(), 100ms);
  EXPECT_EQ(slow.next(), 100ms);
  Backoff big(5s, 1s, 2.0, 0.0);  // initial above max is clamped
  EXPECT_EQ(big.next(), 1s);
  Backoff zero(0ms, 1s, 2.0, 0.1, 3);
  EXPECT_EQ(zero.next(), 0ms);
  EXPECT_EQ(zero.next(), 0ms);
}

TEST(ParseRetryAfterTest, IntegerSeconds) {
  EXPECT_EQ(parseRetryAfter("0"), 0s);
  EXPECT_EQ(parseRetryAfter("1"), 1s);
  EXPECT_EQ(parseRetryAfter(" 120 "), 120s);
}

TEST(ParseRetryAfterTest, RejectsEverythingElse) {
  EXPECT_EQ(parseRetryAfter(""), std::nullopt);
  EXPECT_EQ(parseRetryAfter("  "), std::nullopt);
  EXPECT_EQ(parseRetryAfter("-1"), std::nullopt);
  EXPECT_EQ(parseRetryAfter("+1"), std::nullopt);
  EXPECT_EQ(parseRetryAfter("1.5"), std::nullopt);
  EXPECT_EQ(parseRetryAfter("10s"), std::nullopt);
  EXPECT_EQ(parseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT"), std::nullopt);
  EXPECT_EQ(parseRetryAfter("99999999999999999999999"), std::nullopt);
}

}  // namespace
}  // namespace ksched::client
