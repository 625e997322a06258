// The informers' path for pods and nodes (api/fast_decode.h: the text read straight into the
// object model) against the JSON-tree path it stands in for (client::parseObjectJson or
// client::parseWatchEvent, then api::decode<T>): whatever the fast path takes, the tree path
// takes too, with the same objects. The first byte picks the form: 'W' a pod watch event's
// line, 'L' a LIST page of pods, 'N' a Node object, 'w' a node watch event's line, 'l' a LIST
// page of nodes, any other a Pod object.
#include <optional>
#include <string>
#include <vector>

#include <ksched/api/decode.h>
#include <ksched/api/fast_decode.h>
#include <ksched/api/node.h>
#include <ksched/api/pod.h>

#include "client/object_json.h"
#include "client/rest_client.h"
#include "client/watch_body.h"
#include "tests/fuzz/fuzz_util.h"
#include "tests/support/node_equal.h"

using namespace ksched;

namespace {

template <typename T>
std::optional<T> treeDecode(const nlohmann::json& j) {
  try {
    return api::decode<T>(j);
  } catch (const api::DecodeError&) {
    return std::nullopt;
  }
}

bool same(const api::Pod& a, const api::Pod& b) {
  return a.metadata == b.metadata && a.spec == b.spec && a.status == b.status;
}
bool same(const api::Node& a, const api::Node& b) { return testing::sameNode(a, b); }

template <typename T>
void checkSame(const T& fast, const std::optional<T>& tree) {
  fuzz::check(tree.has_value(), "the fast path took an object the tree path refuses");
  fuzz::check(same(fast, *tree), "the fast path's object differs from the tree path's");
}

// A LIST page as RestClient::listPaged reads it: a list page, its items decoded one by one.
template <typename T>
void listPage(std::string_view text) {
  std::vector<T> items;
  std::string cont;
  std::string rv;
  if (!api::decodeListFast(text, items, cont, rv)) return;
  const nlohmann::json page = client::parseObjectJson(text);
  fuzz::check(client::isListPage(page), "the fast path took a page the client refuses");
  const auto& meta = page.contains("metadata") ? page["metadata"] : nlohmann::json::object();
  fuzz::check(cont == meta.value("continue", "") && rv == meta.value("resourceVersion", ""),
              "the fast path's paging differs from the tree's");
  const auto it = page.find("items");
  const size_t n = it != page.end() && it->is_array() ? it->size() : 0;
  fuzz::check(items.size() == n, "the fast path's page has another number of items");
  for (size_t i = 0; i < n; ++i) checkSame(items[i], treeDecode<T>((*it)[i]));
}

template <typename T>
void object(std::string_view text) {
  T out;
  if (!api::decodeFast(text, out)) return;
  const nlohmann::json j = client::parseObjectJson(text);
  fuzz::check(!j.is_discarded(), "the fast path took text that is not JSON");
  checkSame(out, treeDecode<T>(j));
}

template <typename T>
void watchEvent(std::string_view line) {
  std::string type;
  T out;
  if (!api::decodeWatchEventFast(line, type, out)) return;
  if (type != "ADDED" && type != "MODIFIED" && type != "DELETED") return;  // the informer declines
  std::optional<client::WatchEvent> ev = client::parseWatchEvent(line);
  fuzz::check(ev.has_value(), "the fast path took a line the watch refuses");
  checkSame(out, treeDecode<T>(ev->object));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const fuzz::Split in = fuzz::split(data, size);
  switch (in.selector) {
    case 'W':
      watchEvent<api::Pod>(in.rest);
      break;
    case 'L':
      listPage<api::Pod>(in.rest);
      break;
    case 'N':
      object<api::Node>(in.rest);
      break;
    case 'w':
      watchEvent<api::Node>(in.rest);
      break;
    case 'l':
      listPage<api::Node>(in.rest);
      break;
    default:
      object<api::Pod>(in.rest);
      break;
  }
  return 0;
}
