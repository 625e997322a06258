// Go's time.Duration text: what configuration files and plugin args carry ("10s", "1m30s").
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace ksched::util {

using Duration = std::chrono::nanoseconds;

// Go time.ParseDuration ("300ms", "1m30s", "-1.5h", "0"); nullopt if malformed.
[[nodiscard]] std::optional<Duration> parseDuration(std::string_view text);
// Go time.Duration.String(): "15s", "1m30s", "500ms", "1h0m0s", "0s".
[[nodiscard]] std::string formatDuration(Duration d);

}  // namespace ksched::util
