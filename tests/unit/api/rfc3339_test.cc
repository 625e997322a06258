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

// Years Go reads but a TimePoint (int64 nanoseconds) cannot hold are unparsable, not an
// overflow (found by tests/fuzz/duration_fuzz and api_object_fuzz: UBSan reported the signed
// overflow for a PodGroup created in 4048).
TEST(RFC3339Test, OutOfRangeIsUnparsable) {
  for (const char* s :
       {"4048-05-01T10:00:00Z", "1170-01-01T00:00:15-00:00", "0000-01-01T00:00:00Z",
        "9999-12-31T23:59:59.999999999Z", "2262-04-12T00:00:00Z", "1677-09-21T00:00:00Z"}) {
    EXPECT_EQ(parseRFC3339(s), std::nullopt) << s;
  }
  EXPECT_EQ(parseRFC3339("2262-04-10T00:00:00Z"), at(9'223'200'000));
  EXPECT_EQ(parseRFC3339("1677-09-23T00:00:00Z"), at(-9'223'200'000));
}

TEST(RFC3339Test, MicroRoundTrips) {
  const TimePoint t = at(kEpochSeconds, 654'321'000);
  EXPECT_EQ(parseRFC3339(formatRFC3339Micro(t)), t);
}

}  // namespace
}  // namespace ksched::api
