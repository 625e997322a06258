// core/v1 Pod and Node as the JSON an extender receives: the fields ksched models, in the API's
// field names (api/pod.h and api/node.h list them). Defaults are written out as the apiserver
// would serve them (schedulerName, port protocol); empty optional fields are left out.
#pragma once

#include <nlohmann/json.hpp>

#include <ksched/api/node.h>
#include <ksched/api/pod.h>

namespace ksched::extender {

[[nodiscard]] nlohmann::json encodeObjectMeta(const api::ObjectMeta& m);
[[nodiscard]] nlohmann::json encodePod(const api::Pod& pod);
[[nodiscard]] nlohmann::json encodeNode(const api::Node& node);

}  // namespace ksched::extender
