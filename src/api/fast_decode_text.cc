// The parsing and the public functions of include/ksched/api/fast_decode.h: the text is parsed
// by simdjson, and the objects are read by the readers of fast_decode.cc.
#include <simdjson.h>

#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <ksched/api/fast_decode.h>

#include "fast_decode_read.h"

namespace ksched::api {
namespace {

using simdjson::SUCCESS;
using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

using fastdecode::read;

// --- Parsing ---------------------------------------------------------------------------------

// A parser and a copy of the text with the padding simdjson reads past its end. The elements
// parsed live as long as it, until its next parse.
struct Scratch {
  simdjson::dom::parser parser;
  std::string padded;

  simdjson::simdjson_result<element> parse(std::string_view text) {
    padded.reserve(text.size() + simdjson::SIMDJSON_PADDING);
    padded.assign(text);
    return parser.parse(padded.data(), padded.size(), /*realloc_if_needed=*/false);
  }
};

// Each thread keeps one for watch events (a few kB each); a LIST page (up to 500 pods, about a
// MB) gets its own, freed after it, so that no thread holds a page's buffers for good.
Scratch& threadScratch() {
  thread_local Scratch s;
  return s;
}
simdjson::simdjson_result<element> parse(std::string_view text) {
  return threadScratch().parse(text);
}

// Whether the last "metadata" of an object is an object (the watch's check of its objects).
bool hasMetadataObject(element obj) {
  bool found = false;
  for (auto [key, value] : object(obj)) {
    if (key == "metadata") found = value.is_object();
  }
  return found;
}

// The three forms, for Pod and Node.
template <typename T>
bool decodeObject(std::string_view text, T& out) {
  try {
    element root;
    if (parse(text).get(root) != SUCCESS) return false;
    return read(root, out);
  } catch (const std::exception&) {
    return false;
  }
}

template <typename T>
bool decodeListPage(std::string_view text, std::vector<T>& items, std::string& continueToken,
                    std::string& resourceVersion) {
  try {
    Scratch own;
    element root;
    object page;
    if (own.parse(text).get(root) != SUCCESS || root.get_object().get(page) != SUCCESS) {
      return false;
    }
    std::optional<element> itemsValue;
    std::optional<element> meta;
    for (auto [key, value] : page) {
      if (key == "items") itemsValue = value;
      if (key == "metadata") meta = value;
    }
    continueToken.clear();
    resourceVersion.clear();
    if (meta) {
      object m;
      if (meta->get_object().get(m) != SUCCESS) return false;
      for (auto [key, value] : m) {
        if (key == "continue" && !fastdecode::readString(value, continueToken)) return false;
        if (key == "resourceVersion" && !fastdecode::readString(value, resourceVersion)) {
          return false;
        }
      }
    }
    items.clear();
    if (!itemsValue || itemsValue->is_null()) return true;
    array a;
    if (itemsValue->get_array().get(a) != SUCCESS) return false;
    items.reserve(a.size());
    for (element x : a) {
      T v{};
      if (!read(x, v)) return false;
      items.push_back(std::move(v));
    }
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

template <typename T>
bool decodeWatchEvent(std::string_view line, std::string& type, T& out) {
  try {
    element root;
    object event;
    if (parse(line).get(root) != SUCCESS || root.get_object().get(event) != SUCCESS) return false;
    std::optional<element> typeValue;
    std::optional<element> obj;
    for (auto [key, value] : event) {
      if (key == "type") typeValue = value;
      if (key == "object") obj = value;
    }
    if (!typeValue || !obj || !fastdecode::readString(*typeValue, type)) return false;
    return obj->is_object() && hasMetadataObject(*obj) && read(*obj, out);
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

bool decodePodFast(std::string_view text, Pod& out) { return decodeObject(text, out); }
bool decodePodListFast(std::string_view text, std::vector<Pod>& items, std::string& continueToken,
                       std::string& resourceVersion) {
  return decodeListPage(text, items, continueToken, resourceVersion);
}
bool decodePodWatchEventFast(std::string_view line, std::string& type, Pod& out) {
  return decodeWatchEvent(line, type, out);
}

bool decodeNodeFast(std::string_view text, Node& out) { return decodeObject(text, out); }
bool decodeNodeListFast(std::string_view text, std::vector<Node>& items, std::string& continueToken,
                        std::string& resourceVersion) {
  return decodeListPage(text, items, continueToken, resourceVersion);
}
bool decodeNodeWatchEventFast(std::string_view line, std::string& type, Node& out) {
  return decodeWatchEvent(line, type, out);
}

}  // namespace ksched::api
