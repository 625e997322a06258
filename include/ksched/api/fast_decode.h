// Pods and nodes read straight from the apiserver's JSON text into the object model, without
// building a JSON tree first: simdjson (a validating parser that runs at several GB/s) parses
// the text, and only the fields api::Pod or api::Node holds are read from it. The informers take
// this path for every pod and node a LIST or watch delivers; it costs a fraction of
// decode<T>(parseObjectJson(text)).
//
// Same result or none. Each function either produces exactly the object that decode<T> gives for
// the same text (the fuzz target fast_decode checks this on every input) or declines, returning
// false: the text is not JSON, or a field the object model holds has a value the fast path does
// not vouch for (a wrong type, an integer out of range, a quantity that does not parse, ...).
// The caller then takes the JSON-tree path, which gives the Pod or names the field that does
// not decode. Rare, intricate fields (affinity, topology spread constraints, volumes other than
// claims and CSI) are decoded by their usual decoders from a tree of that field alone.
//
// The functions keep a parser per thread (allocated on first use, reused after) and never
// throw.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <ksched/api/node.h>
#include <ksched/api/pod.h>

namespace ksched::api {

// `text` is one Pod object: on true, `out` is decode<Pod> of it.
[[nodiscard]] bool decodePodFast(std::string_view text, Pod& out);

// `text` is one LIST page of pods, {"metadata": {"continue": C, "resourceVersion": R},
// "items": [<Pod>, ...]}: on true, `items` are the decoded pods, `continueToken` C and
// `resourceVersion` R ("" when absent). False also for a page client::isListPage refuses.
[[nodiscard]] bool decodePodListFast(std::string_view text, std::vector<Pod>& items,
                                     std::string& continueToken, std::string& resourceVersion);

// `line` is one watch event, {"type": T, "object": <Pod>}, as a watch answer's line: on true,
// `type` is T and `out` the decoded object. False also when the event has no string "type" or
// its object no "metadata" object (the watch's own checks then refuse the line).
[[nodiscard]] bool decodePodWatchEventFast(std::string_view line, std::string& type, Pod& out);

// The same for nodes: decode<Node> of the object, of each item of a page, of the event's object.
[[nodiscard]] bool decodeNodeFast(std::string_view text, Node& out);
[[nodiscard]] bool decodeNodeListFast(std::string_view text, std::vector<Node>& items,
                                      std::string& continueToken, std::string& resourceVersion);
[[nodiscard]] bool decodeNodeWatchEventFast(std::string_view line, std::string& type, Node& out);

// The same by the object's type, for code written once for both kinds (the informers).
[[nodiscard]] inline bool decodeFast(std::string_view text, Pod& out) {
  return decodePodFast(text, out);
}
[[nodiscard]] inline bool decodeFast(std::string_view text, Node& out) {
  return decodeNodeFast(text, out);
}
[[nodiscard]] inline bool decodeListFast(std::string_view text, std::vector<Pod>& items,
                                         std::string& continueToken, std::string& resourceVersion) {
  return decodePodListFast(text, items, continueToken, resourceVersion);
}
[[nodiscard]] inline bool decodeListFast(std::string_view text, std::vector<Node>& items,
                                         std::string& continueToken, std::string& resourceVersion) {
  return decodeNodeListFast(text, items, continueToken, resourceVersion);
}
[[nodiscard]] inline bool decodeWatchEventFast(std::string_view line, std::string& type, Pod& out) {
  return decodePodWatchEventFast(line, type, out);
}
[[nodiscard]] inline bool decodeWatchEventFast(std::string_view line, std::string& type,
                                               Node& out) {
  return decodeNodeWatchEventFast(line, type, out);
}

}  // namespace ksched::api
