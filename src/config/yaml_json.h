// YAML <-> JSON for configuration files, the way sigs.k8s.io/yaml sees YAML: a document is
// converted to JSON first and decoded from there.
#pragma once

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ksched::config {

class YamlSyntaxError : public std::runtime_error {
 public:
  // `what` is "invalid YAML at line L, column C: <reason>" (1-based).
  explicit YamlSyntaxError(const std::string& what) : std::runtime_error(what) {}
};

// Parses the first document of `text` (JSON is YAML too). Plain scalars resolve with the YAML
// 1.2 core schema: null/~/empty, true/false (any case of the first letter or all caps),
// integers (decimal, 0x, 0o), floats (incl. .inf/.nan); quoted scalars are strings. Mapping
// keys become strings. An empty document is null. Throws YamlSyntaxError, also for a scalar or
// key that is not UTF-8 ("invalid YAML at line 3, column 19: profiles[0].schedulerName:
// invalid UTF-8 (a string must be UTF-8)").
[[nodiscard]] nlohmann::json yamlToJson(std::string_view text);
// Every document of a `---`-separated stream, as yamlToJson reads one; empty documents left out.
[[nodiscard]] std::vector<nlohmann::json> yamlDocumentsToJson(std::string_view text);

// Block-style YAML of `value`: keys as JSON sorts them, strings double-quoted only when plain
// style would read back differently, empty objects/arrays as {} and []. Ends with a newline.
// `comments` (JSON pointer, text) are written as "# text" lines above the key or sequence item
// the pointer names, in their order; pointer "" puts them at the top.
[[nodiscard]] std::string jsonToYaml(
    const nlohmann::json& value,
    const std::vector<std::pair<std::string, std::string>>& comments = {});

}  // namespace ksched::config
