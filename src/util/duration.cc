#include "util/duration.h"

#include <cstdint>
#include <string>
#include <tuple>
#include <utility>

namespace ksched::util {
namespace {

struct Unit {
  std::string_view name;
  int64_t ns;
};

// Longest names first so that "ms" is not read as "m".
constexpr Unit kUnits[] = {
    {"ns", 1},
    {"us", 1000},
    {"\xC2\xB5s", 1000},  // U+00B5 micro sign
    {"\xCE\xBCs", 1000},  // U+03BC Greek mu
    {"ms", 1000 * 1000},
    {"s", 1000 * 1000 * 1000},
    {"m", int64_t{60} * 1000 * 1000 * 1000},
    {"h", int64_t{3600} * 1000 * 1000 * 1000},
};

// Go's fmtFrac: writes the fraction of v / 10^prec ending at buf[w] (omitting trailing zeros,
// and the '.' when the fraction is zero); returns the new start and v / 10^prec.
std::pair<size_t, uint64_t> fmtFrac(char* buf, size_t w, uint64_t v, int prec) {
  bool print = false;
  for (int i = 0; i < prec; ++i) {
    const auto digit = static_cast<char>(v % 10);
    print = print || digit != 0;
    if (print) buf[--w] = static_cast<char>('0' + digit);
    v /= 10;
  }
  if (print) buf[--w] = '.';
  return {w, v};
}

// Go's fmtInt: writes v ending at buf[w]; returns the new start.
size_t fmtInt(char* buf, size_t w, uint64_t v) {
  if (v == 0) {
    buf[--w] = '0';
    return w;
  }
  while (v > 0) {
    buf[--w] = static_cast<char>('0' + v % 10);
    v /= 10;
  }
  return w;
}

}  // namespace

std::optional<Duration> parseDuration(std::string_view s) {
  bool neg = false;
  if (!s.empty() && (s.front() == '-' || s.front() == '+')) {
    neg = s.front() == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return Duration{0};
  if (s.empty()) return std::nullopt;
  constexpr uint64_t kMax = uint64_t{1} << 63;
  uint64_t total = 0;
  while (!s.empty()) {
    if (!(s.front() == '.' || (s.front() >= '0' && s.front() <= '9'))) return std::nullopt;
    uint64_t whole = 0;
    size_t intDigits = 0;
    while (!s.empty() && s.front() >= '0' && s.front() <= '9') {
      if (__builtin_mul_overflow(whole, uint64_t{10}, &whole) ||
          __builtin_add_overflow(whole, static_cast<uint64_t>(s.front() - '0'), &whole) ||
          whole > kMax) {
        return std::nullopt;
      }
      s.remove_prefix(1);
      ++intDigits;
    }
    uint64_t frac = 0;
    double scale = 1;
    size_t fracDigits = 0;
    if (!s.empty() && s.front() == '.') {
      s.remove_prefix(1);
      bool overflow = false;
      while (!s.empty() && s.front() >= '0' && s.front() <= '9') {
        if (!overflow) {
          if (frac > (UINT64_MAX - 9) / 10) {
            overflow = true;  // further digits cannot matter
          } else {
            frac = frac * 10 + static_cast<uint64_t>(s.front() - '0');
            scale *= 10;
          }
        }
        s.remove_prefix(1);
        ++fracDigits;
      }
    }
    if (intDigits == 0 && fracDigits == 0) return std::nullopt;
    const Unit* unit = nullptr;
    for (const auto& u : kUnits) {
      if (s.starts_with(u.name) && (unit == nullptr || u.name.size() > unit->name.size())) {
        unit = &u;
      }
    }
    if (unit == nullptr) return std::nullopt;
    s.remove_prefix(unit->name.size());
    const auto unitNs = static_cast<uint64_t>(unit->ns);
    uint64_t v = 0;
    if (__builtin_mul_overflow(whole, unitNs, &v) || v > kMax) return std::nullopt;
    if (frac > 0) {
      v += static_cast<uint64_t>(static_cast<double>(frac) * (static_cast<double>(unitNs) / scale));
      if (v > kMax) return std::nullopt;
    }
    if (__builtin_add_overflow(total, v, &total) || total > kMax) return std::nullopt;
  }
  if (!neg && total > kMax - 1) return std::nullopt;
  if (neg) return Duration{total == kMax ? INT64_MIN : -static_cast<int64_t>(total)};
  return Duration{static_cast<int64_t>(total)};
}

std::string formatDuration(Duration d) {
  // Largest: "-2562047h47m16.854775808s".
  char buf[32];
  size_t w = sizeof buf;
  const int64_t n = d.count();
  const bool neg = n < 0;
  uint64_t u = neg ? static_cast<uint64_t>(0) - static_cast<uint64_t>(n) : static_cast<uint64_t>(n);
  constexpr uint64_t kSecond = 1000 * 1000 * 1000;
  if (u < kSecond) {
    if (u == 0) return "0s";
    int prec = 0;
    buf[--w] = 's';
    if (u < 1000) {
      buf[--w] = 'n';
    } else if (u < 1000 * 1000) {
      prec = 3;
      buf[--w] = '\xB5';  // U+00B5 in UTF-8: C2 B5
      buf[--w] = '\xC2';
    } else {
      prec = 6;
      buf[--w] = 'm';
    }
    std::tie(w, u) = fmtFrac(buf, w, u, prec);
    w = fmtInt(buf, w, u);
  } else {
    buf[--w] = 's';
    std::tie(w, u) = fmtFrac(buf, w, u, 9);
    w = fmtInt(buf, w, u % 60);
    u /= 60;
    if (u > 0) {
      buf[--w] = 'm';
      w = fmtInt(buf, w, u % 60);
      u /= 60;
      if (u > 0) {
        buf[--w] = 'h';
        w = fmtInt(buf, w, u);
      }
    }
  }
  if (neg) buf[--w] = '-';
  return std::string(buf + w, sizeof buf - w);
}

}  // namespace ksched::util
