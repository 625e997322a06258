// RFC 3339 timestamps as the apiserver writes them: metav1.Time ("2006-01-02T15:04:05Z") and
// metav1.MicroTime ("2006-01-02T15:04:05.000000Z"), always in UTC.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace ksched::api {

using TimePoint = std::chrono::system_clock::time_point;

// Whole seconds (truncated), UTC, "Z" suffix: metav1.Time.
[[nodiscard]] std::string formatRFC3339(TimePoint t);
// Microseconds (truncated), UTC, "Z" suffix: metav1.MicroTime (Lease times, Event eventTime).
[[nodiscard]] std::string formatRFC3339Micro(TimePoint t);
// Accepts "YYYY-MM-DDTHH:MM:SS", an optional fraction of any length (nanoseconds kept), and
// "Z" or a "+HH:MM"/"-HH:MM" offset. nullopt for anything else, including invalid dates and
// times a TimePoint cannot hold (before 1677-09-22 or after 2262-04-11).
[[nodiscard]] std::optional<TimePoint> parseRFC3339(std::string_view s) noexcept;

}  // namespace ksched::api
