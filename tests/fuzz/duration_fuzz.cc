// Durations and times from text: Go time.ParseDuration as the configuration and the flags
// read durations (config::parseDuration: nullopt for malformed text), RFC 3339 timestamps as
// objects carry them (api::parseRFC3339, noexcept), an HTTP Retry-After header
// (client::parseRetryAfter). A duration prints as Go does and parses back to itself.
#include <ksched/api/rfc3339.h>

#include "client/backoff.h"
#include "config/scheduler_config.h"
#include "tests/fuzz/fuzz_util.h"

using namespace ksched;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fuzz::asText(data, size);
  if (auto d = config::parseDuration(text)) {
    const std::string s = config::formatDuration(*d);
    fuzz::check(config::parseDuration(s) == d, "formatDuration() does not parse back");
    fuzz::dump(s);
  }
  if (auto t = api::parseRFC3339(text)) {
    fuzz::dump(api::formatRFC3339(*t));
    fuzz::dump(api::formatRFC3339Micro(*t));
  }
  (void)client::parseRetryAfter(text);
  return 0;
}
