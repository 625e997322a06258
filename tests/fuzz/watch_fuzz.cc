// The body of a watch answer as client::RestClient::watch reads it: split into lines as the
// bytes arrive (client::WatchLineSplitter), each line decoded into an event
// (client::parseWatchEvent, which skips what it cannot decode and never throws), an ERROR
// event's metav1.Status turned into the ApiError the watch throws. The first byte is the size
// of the reads the bytes arrive in (0: one read). An event's object goes on to the informers
// (api_object_fuzz decodes those); the ApiError's text to logs and, through the reflector's
// errors, nowhere else; both are serialized here.
#include <optional>
#include <string>

#include "client/errors.h"
#include "client/rest_client.h"
#include "tests/fuzz/fuzz_util.h"

using namespace ksched;

namespace {

// The watch's handling of one line; false ends the watch (an ERROR event).
bool onLine(std::string_view line) {
  if (line.empty()) return true;
  std::optional<client::WatchEvent> ev = client::parseWatchEvent(line);
  if (!ev) return true;
  if (ev->type == client::WatchEventType::kError) {
    const client::ApiError e = client::ApiError::fromStatus(ev->object, "WATCH", "/api/v1/pods");
    fuzz::dump({{"reason", e.reason()}, {"message", e.message()}, {"error", e.what()}});
    return false;
  }
  fuzz::dump(ev->object);
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const fuzz::Split in = fuzz::split(data, size);
  const size_t piece = in.selector;
  client::WatchLineSplitter lines;
  std::string_view bytes = in.rest;
  bool more = true;
  while (more && !bytes.empty()) {
    const size_t n = piece == 0 ? bytes.size() : std::min(piece, bytes.size());
    more = lines.feed(bytes.substr(0, n), onLine);
    bytes.remove_prefix(n);
  }
  if (more && !lines.rest().empty()) onLine(lines.rest());
  return 0;
}
