// The informers' path for watched pods (api::decodePodFast, api::decodePodWatchEventFast: the
// text read straight into the object model) against the JSON-tree path it stands in for
// (client::parseObjectJson or client::parseWatchEvent, then api::decode<Pod>): whatever the fast
// path takes, the tree path takes too, with the same Pod. The first byte picks the form: even, a
// Pod object as a LIST page holds it; odd, a watch event's line.
#include <optional>
#include <string>

#include <ksched/api/decode.h>
#include <ksched/api/fast_decode.h>
#include <ksched/api/pod.h>

#include "client/object_json.h"
#include "client/watch_body.h"
#include "tests/fuzz/fuzz_util.h"

using namespace ksched;

namespace {

std::optional<api::Pod> treeDecode(const nlohmann::json& j) {
  try {
    return api::decode<api::Pod>(j);
  } catch (const api::DecodeError&) {
    return std::nullopt;
  }
}

void checkSame(const api::Pod& fast, const std::optional<api::Pod>& tree) {
  fuzz::check(tree.has_value(), "the fast path took a pod the tree path refuses");
  fuzz::check(
      fast.metadata == tree->metadata && fast.spec == tree->spec && fast.status == tree->status,
      "the fast path's pod differs from the tree path's");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const fuzz::Split in = fuzz::split(data, size);
  api::Pod fast;
  if (in.selector % 2 == 0) {
    if (!api::decodePodFast(in.rest, fast)) return 0;
    const nlohmann::json j = client::parseObjectJson(in.rest);
    fuzz::check(!j.is_discarded(), "the fast path took text that is not JSON");
    checkSame(fast, treeDecode(j));
    return 0;
  }
  std::string type;
  if (!api::decodePodWatchEventFast(in.rest, type, fast)) return 0;
  if (type != "ADDED" && type != "MODIFIED" && type != "DELETED")
    return 0;  // the informer declines
  std::optional<client::WatchEvent> ev = client::parseWatchEvent(in.rest);
  fuzz::check(ev.has_value(), "the fast path took a line the watch refuses");
  checkSame(fast, treeDecode(ev->object));
  return 0;
}
