// The body of a watch answer as client::RestClient::watch reads it (client::WatchBody): split
// into lines as the bytes arrive, each line decoded into an event, the stream ended at the first
// line that is not an event (a transport ApiError) or at an ERROR event (its metav1.Status as
// the ApiError the watch throws). The first byte is the size of the reads the bytes arrive in
// (0: one read). An event's object goes on to the informers (api_object_fuzz decodes those);
// the ApiError's text to logs; both are serialized here.
#include <optional>
#include <string>

#include "client/errors.h"
#include "client/watch_body.h"
#include "tests/fuzz/fuzz_util.h"

using namespace ksched;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const fuzz::Split in = fuzz::split(data, size);
  const size_t piece = in.selector;
  const client::WatchHandler handler = [](client::WatchEvent&& ev) {
    fuzz::dump(ev.object);
    return true;
  };
  client::WatchBody body("/api/v1/pods", handler);
  std::string_view bytes = in.rest;
  bool more = true;
  while (more && !bytes.empty()) {
    const size_t n = piece == 0 ? bytes.size() : std::min(piece, bytes.size());
    more = body.feed(bytes.substr(0, n));
    bytes.remove_prefix(n);
  }
  if (more) (void)body.finish();
  if (const auto& e = body.error()) {
    fuzz::dump({{"reason", e->reason()}, {"message", e->message()}, {"error", e->what()}});
  }
  return 0;
}
