// Parsing what the apiserver sends about objects (LIST pages, watch events) without their
// metadata.managedFields: the server-side-apply bookkeeping no scheduler reads, often the
// largest part of a Pod's JSON. It is skipped while parsing, never built into the tree
// (kube-scheduler's informers drop it too since v1.27).
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

namespace ksched::client {

// The JSON value of `text`, every object's "managedFields" under a "metadata" key left out.
// On malformed text: a discarded value (is_discarded()), as nlohmann::json::parse(text,
// nullptr, false) returns.
[[nodiscard]] nlohmann::json parseObjectJson(std::string_view text);

}  // namespace ksched::client
