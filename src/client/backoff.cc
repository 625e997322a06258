#include "client/backoff.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <random>

namespace ksched::client {
namespace {

// A seed per Backoff without touching std::random_device each time (a Backoff is made per API
// request): one engine per thread, seeded from the device once.
uint64_t nextSeed() {
  thread_local std::mt19937_64 seeds((static_cast<uint64_t>(std::random_device{}()) << 32) ^
                                     std::random_device{}());
  return seeds();
}

}  // namespace

Backoff::Backoff(std::chrono::milliseconds initial, std::chrono::milliseconds max, double factor,
                 double jitter, std::optional<uint64_t> seed)
    : initial_(std::clamp(initial, std::chrono::milliseconds::zero(),
                          std::max(max, std::chrono::milliseconds::zero()))),
      max_(std::max(max, std::chrono::milliseconds::zero())),
      factor_(std::max(factor, 1.0)),
      jitter_(std::max(jitter, 0.0)),
      current_(initial_),
      rng_(seed ? *seed : nextSeed()) {}

std::chrono::milliseconds Backoff::next() {
  auto base = current_;
  double grown = std::ceil(static_cast<double>(current_.count()) * factor_);
  current_ = grown >= static_cast<double>(max_.count())
                 ? max_
                 : std::chrono::milliseconds(static_cast<int64_t>(grown));
  if (jitter_ <= 0) return base;
  rng_ += 0x9e3779b97f4a7c15ULL;  // splitmix64
  uint64_t z = rng_;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  double unit = static_cast<double>(z >> 11) * 0x1.0p-53;  // uniform in [0, 1)
  auto extra = static_cast<int64_t>(static_cast<double>(base.count()) * jitter_ * unit);
  return base + std::chrono::milliseconds(extra);
}

void Backoff::reset() { current_ = initial_; }

std::optional<std::chrono::seconds> parseRetryAfter(std::string_view header) {
  auto isSpace = [](char c) { return c == ' ' || c == '\t'; };
  while (!header.empty() && isSpace(header.front())) header.remove_prefix(1);
  while (!header.empty() && isSpace(header.back())) header.remove_suffix(1);
  if (header.empty() ||
      !std::all_of(header.begin(), header.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  int64_t value = 0;
  auto [end, ec] = std::from_chars(header.data(), header.data() + header.size(), value);
  if (ec != std::errc() || end != header.data() + header.size()) return std::nullopt;
  return std::chrono::seconds(value);
}

}  // namespace ksched::client
