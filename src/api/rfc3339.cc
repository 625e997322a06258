#include <cstdint>
#include <cstdio>
#include <limits>

#include <ksched/api/rfc3339.h>

namespace ksched::api {
namespace {

using namespace std::chrono;

std::string format(TimePoint t, bool micro) {
  const auto us = floor<microseconds>(t);
  const auto day = floor<days>(us);
  const year_month_day ymd{day};
  const hh_mm_ss hms{us - day};
  char buf[64];
  int n =
      std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02d", static_cast<int>(ymd.year()),
                    static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                    static_cast<int>(hms.hours().count()), static_cast<int>(hms.minutes().count()),
                    static_cast<int>(hms.seconds().count()));
  std::string out(buf, static_cast<size_t>(n));
  if (micro) {
    std::snprintf(buf, sizeof buf, ".%06d", static_cast<int>(hms.subseconds().count()));
    out += buf;
  }
  out += 'Z';
  return out;
}

// The decimal number in s[pos, pos+len), or -1.
int number(std::string_view s, size_t pos, size_t len) noexcept {
  if (pos + len > s.size()) return -1;
  int v = 0;
  for (size_t i = pos; i < pos + len; ++i) {
    if (s[i] < '0' || s[i] > '9') return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

}  // namespace

std::string formatRFC3339(TimePoint t) { return format(t, false); }

std::string formatRFC3339Micro(TimePoint t) { return format(t, true); }

std::optional<TimePoint> parseRFC3339(std::string_view s) noexcept {
  if (s.size() < 20 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't') ||
      s[13] != ':' || s[16] != ':') {
    return std::nullopt;
  }
  const int y = number(s, 0, 4), mo = number(s, 5, 2), d = number(s, 8, 2);
  const int h = number(s, 11, 2), mi = number(s, 14, 2), sec = number(s, 17, 2);
  if (y < 0 || mo < 0 || d < 0 || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 59) {
    return std::nullopt;
  }
  size_t pos = 19;
  int64_t nanos = 0;
  if (s[pos] == '.') {
    const size_t start = ++pos;
    int64_t scale = 100'000'000;
    for (; pos < s.size() && s[pos] >= '0' && s[pos] <= '9'; ++pos, scale /= 10) {
      nanos += (s[pos] - '0') * scale;
    }
    if (pos == start) return std::nullopt;
  }
  if (pos >= s.size()) return std::nullopt;
  int offsetMinutes = 0;
  if (s[pos] == 'Z' || s[pos] == 'z') {
    if (pos + 1 != s.size()) return std::nullopt;
  } else if (s[pos] == '+' || s[pos] == '-') {
    const int oh = number(s, pos + 1, 2), om = number(s, pos + 4, 2);
    if (pos + 6 != s.size() || s[pos + 3] != ':' || oh < 0 || oh > 23 || om < 0 || om > 59) {
      return std::nullopt;
    }
    offsetMinutes = (s[pos] == '-' ? -1 : 1) * (oh * 60 + om);
  } else {
    return std::nullopt;
  }
  const year_month_day ymd{year{y}, month{static_cast<unsigned>(mo)},
                           day{static_cast<unsigned>(d)}};
  if (!ymd.ok()) return std::nullopt;
  const sys_seconds t =
      sys_days{ymd} + hours{h} + minutes{mi} + seconds{sec} - minutes{offsetMinutes};
  // A TimePoint counts nanoseconds in an int64: 1677-09-21 to 2262-04-11 (roughly).
  constexpr int64_t kMaxSeconds =
      std::numeric_limits<system_clock::rep>::max() / system_clock::period::den - 1;
  if (t.time_since_epoch().count() > kMaxSeconds || t.time_since_epoch().count() < -kMaxSeconds) {
    return std::nullopt;
  }
  return time_point_cast<system_clock::duration>(t) +
         duration_cast<system_clock::duration>(nanoseconds{nanos});
}

}  // namespace ksched::api
