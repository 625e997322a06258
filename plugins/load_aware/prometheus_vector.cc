// parsePrometheusVector (load_source.h): a Prometheus instant-vector answer read with simdjson,
// which validates and indexes the text in one pass; no JSON tree is built. A repeated key counts
// as its last occurrence, as in a JSON tree.
#include <simdjson.h>

#include <cmath>
#include <cstdlib>
#include <exception>

#include "plugins/load_aware/load_source.h"

namespace ksched::plugins::load {
namespace {

using simdjson::SUCCESS;
using simdjson::dom::element;
using simdjson::dom::object;

// The last value of `key` in `o`, if any.
std::optional<element> last(object o, std::string_view key) {
  std::optional<element> found;
  for (auto [k, v] : o) {
    if (k == key) found = v;
  }
  return found;
}

// The last value of `key` in `o` if it is a string, else "".
std::string_view stringAt(object o, std::string_view key) {
  std::string_view s;
  const auto v = last(o, key);
  return v && v->get_string().get(s) == SUCCESS ? s : std::string_view();
}

std::optional<object> objectAt(object o, std::string_view key) {
  object out;
  const auto v = last(o, key);
  if (!v || v->get_object().get(out) != SUCCESS) return std::nullopt;
  return out;
}

// One sample, {"metric": {<nodeLabel>: NODE, ...}, "value": [TIME, "VALUE"]}, into `out`;
// samples without the label or a finite value are skipped.
void readSample(element sample, const std::string& nodeLabel, std::map<std::string, double>& out) {
  object s;
  if (sample.get_object().get(s) != SUCCESS) return;
  const auto metric = objectAt(s, "metric");
  if (!metric) return;
  const auto nodeValue = last(*metric, nodeLabel);
  std::string_view node;
  if (!nodeValue || nodeValue->get_string().get(node) != SUCCESS) return;
  simdjson::dom::array value;
  const auto valueElement = last(s, "value");
  std::string_view valueText;
  if (!valueElement || valueElement->get_array().get(value) != SUCCESS || value.size() != 2 ||
      value.at(1).get_string().get(valueText) != SUCCESS) {
    return;
  }
  const std::string text(valueText);  // strtod reads up to a NUL, as Prometheus's text has none
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !std::isfinite(v)) return;
  const std::string name(node);
  out[name] = v;
  // "host:port" (node_exporter's instance) also names node "host".
  const auto colon = name.rfind(':');
  if (colon != std::string::npos && colon > 0 && name.find(':') == colon) {
    out.emplace(name.substr(0, colon), v);
  }
}

}  // namespace

std::optional<std::map<std::string, double>> parsePrometheusVector(std::string_view body,
                                                                   const std::string& nodeLabel,
                                                                   std::string& error) {
  try {
    simdjson::dom::parser parser;
    const simdjson::padded_string padded(body);
    element root;
    object answer;
    if (parser.parse(padded).get(root) != SUCCESS || root.get_object().get(answer) != SUCCESS) {
      error = "the answer is not JSON";
      return std::nullopt;
    }
    if (stringAt(answer, "status") != "success") {
      const std::string_view e = stringAt(answer, "error");
      const auto errorValue = last(answer, "error");
      error = "the query failed: " +
              (errorValue && errorValue->is_string() ? std::string(e) : std::string("?"));
      return std::nullopt;
    }
    const auto data = objectAt(answer, "data");
    simdjson::dom::array result;
    const auto resultValue = data ? last(*data, "result") : std::nullopt;
    if (!data || stringAt(*data, "resultType") != "vector" || !resultValue ||
        resultValue->get_array().get(result) != SUCCESS) {
      error = "the query did not return an instant vector";
      return std::nullopt;
    }
    std::map<std::string, double> out;
    for (element sample : result) readSample(sample, nodeLabel, out);
    return out;
  } catch (const std::exception& e) {  // allocation failure: the answer is dropped, not the process
    error = std::string("the answer could not be read: ") + e.what();
    return std::nullopt;
  }
}

}  // namespace ksched::plugins::load
