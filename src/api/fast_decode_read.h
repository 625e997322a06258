// The readers of src/api/fast_decode.cc, for the parsing in src/api/fast_decode_text.cc: each
// reads one parsed value into the object model as decode<T> would, or returns false (declines).
#pragma once

#include <string>

#include <ksched/api/node.h>
#include <ksched/api/pod.h>

// simdjson's header stays in the two files of the fast path (the element is declared, not
// defined, here).
namespace simdjson::dom {
class element;
}  // namespace simdjson::dom

namespace ksched::api::fastdecode {

[[nodiscard]] bool read(simdjson::dom::element e, Pod& out);
[[nodiscard]] bool read(simdjson::dom::element e, Node& out);
[[nodiscard]] bool readString(simdjson::dom::element e, std::string& out);

}  // namespace ksched::api::fastdecode
