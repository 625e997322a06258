#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <ksched/api/rfc3339.h>

namespace ksched::api {
namespace {

using namespace std::chrono;

// 2026-01-02T03:04:05Z
constexpr int64_t kEpochSeconds = 1767323045;

TimePoint at(int64_t secs, int64_t nanos = 0) {
  return TimePoint(duration_cast<system_clock::duration>(seconds(secs) + nanoseconds(nanos)));
}

TEST(RFC3339Test, Formats) {
  EXPECT_EQ(formatRFC3339(at(kEpochSeconds, 999'999'999)), "2026-01-02T03:04:05Z");
  EXPECT_EQ(formatRFC3339Micro(at(kEpochSeconds, 123'456'789)), "2026-01-02T03:04:05.123456Z");
  EXPECT_EQ(formatRFC3339Micro(at(0)), "1970-01-01T00:00:00.000000Z");
  EXPECT_EQ(formatRFC3339(at(951'782'400)), "2000-02-29T00:00:00Z");
}

struct ParseCase {
  std::string input;
  std::optional<TimePoint> expected;
};

TEST(RFC3339Test, Parses) {
  const std::vector<ParseCase> cases = {
      {"2026-01-02T03:04:05Z", at(kEpochSeconds)},
      {"2026-01-02t03:04:05z", at(kEpochSeconds)},
      {"2026-01-02T03:04:05.5Z", at(kEpochSeconds, 500'000'000)},
      {"2026-01-02T03:04:05.123456Z", at(kEpochSeconds, 123'456'000)},
      {"2026-01-02T03:04:05.123456789123Z", at(kEpochSeconds, 123'456'789)},
      {"2026-01-02T05:04:05+02:00", at(kEpochSeconds)},
      {"2026-01-01T22:34:05-04:30", at(kEpochSeconds)},
      {"2000-02-29T00:00:00Z", at(951'782'400)},
      {"2026-02-29T00:00:00Z", std::nullopt},
      {"2026-13-01T00:00:00Z", std::nullopt},
      {"2026-01-02T24:00:00Z", std::nullopt},
      {"2026-01-02T03:60:00Z", std::nullopt},
      {"2026-01-02T03:04:05", std::nullopt},
      {"2026-01-02 03:04:05Z", std::nullopt},
      {"2026-01-02T03:04:05.Z", std::nullopt},
      {"2026-01-02T03:04:05ZZ", std::nullopt},
      {"2026-01-02T03:04:05+0200", std::nullopt},
      {"26-01-02T03:04:05Z", std::nullopt},
      {"", std::nullopt},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.input);
    EXPECT_EQ(parseRFC3339(c.input), c.expected);
  }
}

TEST(RFC3339Test, MicroRoundTrips) {
  const TimePoint t = at(kEpochSeconds, 654'321'000);
  EXPECT_EQ(parseRFC3339(formatRFC3339Micro(t)), t);
}

}  // namespace
}  // namespace ksched::api
