// The informers' path for pods (api::decodePodFast, decodePodWatchEventFast, decodePodListFast:
// the text read straight into the object model) against the JSON-tree path it stands in for
// (client::parseObjectJson or client::parseWatchEvent, then api::decode<Pod>): whatever the fast
// path takes, the tree path takes too, with the same Pods. The first byte picks the form: 'W' a
// watch event's line, 'L' a LIST page, any other a Pod object.
#include <optional>
#include <string>
#include <vector>

#include <ksched/api/decode.h>
#include <ksched/api/fast_decode.h>
#include <ksched/api/pod.h>

#include "client/object_json.h"
#include "client/rest_client.h"
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

// A LIST page as RestClient::listPaged reads it: a list page, its items decoded one by one.
void listPage(std::string_view text) {
  std::vector<api::Pod> items;
  std::string cont;
  std::string rv;
  if (!api::decodePodListFast(text, items, cont, rv)) return;
  const nlohmann::json page = client::parseObjectJson(text);
  fuzz::check(client::isListPage(page), "the fast path took a page the client refuses");
  const auto& meta = page.contains("metadata") ? page["metadata"] : nlohmann::json::object();
  fuzz::check(cont == meta.value("continue", "") && rv == meta.value("resourceVersion", ""),
              "the fast path's paging differs from the tree's");
  const auto it = page.find("items");
  const size_t n = it != page.end() && it->is_array() ? it->size() : 0;
  fuzz::check(items.size() == n, "the fast path's page has another number of items");
  for (size_t i = 0; i < n; ++i) checkSame(items[i], treeDecode((*it)[i]));
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const fuzz::Split in = fuzz::split(data, size);
  api::Pod fast;
  if (in.selector == 'L') {
    listPage(in.rest);
    return 0;
  }
  if (in.selector != 'W') {
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
