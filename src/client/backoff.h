// Retry delays: exponential backoff with jitter, and the Retry-After header.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

namespace ksched::client {

// Exponential backoff like client-go's wait.Backoff with a cap: the base delay starts at
// `initial` and is multiplied by `factor` after every next(), up to `max`. Each returned delay
// is the base plus a uniform random extra in [0, jitter * base) (wait.Jitter), so it may exceed
// `max` by up to that fraction. jitter <= 0 disables it; factor < 1 is treated as 1; initial
// is clamped to [0, max]. Not thread-safe: one owner (a retry loop, a reflector).
class Backoff {
 public:
  static constexpr double kDefaultFactor = 2.0;
  static constexpr double kDefaultJitter = 0.1;

  // `seed` makes the jitter reproducible in tests; by default it comes from a per-thread engine
  // seeded once from std::random_device.
  Backoff(std::chrono::milliseconds initial, std::chrono::milliseconds max,
          double factor = kDefaultFactor, double jitter = kDefaultJitter,
          std::optional<uint64_t> seed = std::nullopt);

  // The delay to wait before the next attempt; advances the base delay.
  [[nodiscard]] std::chrono::milliseconds next();
  // Back to `initial`, e.g. after a success.
  void reset();
  // The base delay the next call to next() will use (before jitter).
  [[nodiscard]] std::chrono::milliseconds current() const { return current_; }

 private:
  std::chrono::milliseconds initial_;
  std::chrono::milliseconds max_;
  double factor_;
  double jitter_;
  std::chrono::milliseconds current_;
  uint64_t rng_;  // splitmix64 state: cheap to make, one per request
};

// The delay of an HTTP Retry-After header in its delay-seconds form: digits only, surrounding
// whitespace allowed. Returns nullopt for an HTTP-date, a sign, or anything else.
[[nodiscard]] std::optional<std::chrono::seconds> parseRetryAfter(std::string_view header);

}  // namespace ksched::client
