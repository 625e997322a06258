// Plugin-args validation errors worded like upstream apimachinery field.Error, so that a bad
// config reads the same as with kube-scheduler:
//   scoringStrategy.resources[0].weight: Invalid value: 0: resource weight of cpu not in valid
//   range (0, 100] scoringStrategy.type: Unsupported value: "Foo": supported values:
//   "LeastAllocated", ... scoringStrategy.shape: Required value: at least one point must be
//   specified
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ksched::plugins::helper {

struct FieldError {
  std::string field;  // "scoringStrategy.resources[0].weight"
  std::string body;   // "Invalid value: 0: resource weight of cpu not in valid range (0, 100]"

  // "<field>: <body>".
  [[nodiscard]] std::string toString() const { return field + ": " + body; }
};

// Go's %q of a string (printable ASCII kept, quotes and backslashes escaped, the rest \xNN).
[[nodiscard]] std::string quote(std::string_view s);

[[nodiscard]] FieldError invalid(std::string field, std::string_view value,
                                 std::string_view detail);
[[nodiscard]] FieldError invalid(std::string field, int64_t value, std::string_view detail);
[[nodiscard]] FieldError notSupported(std::string field, std::string_view value,
                                      const std::vector<std::string>& supported);
[[nodiscard]] FieldError required(std::string field, std::string_view detail);

// Upstream metav1validation.ValidateLabelName (IsQualifiedName): an optional DNS-1123
// subdomain prefix and '/', then a name of 1-63 alphanumerics, '-', '_' or '.', starting and
// ending with an alphanumeric. One error per problem, worded like upstream.
[[nodiscard]] std::vector<FieldError> validateLabelName(std::string_view value,
                                                        const std::string& field);

// Upstream validation.IsValidLabelValue: its messages (no field path), empty when valid.
[[nodiscard]] std::vector<std::string> labelValueErrors(std::string_view value);

// Throws ksched::PluginArgsError with the first error; does nothing when `errors` is empty.
void throwIfAny(const std::vector<FieldError>& errors);

}  // namespace ksched::plugins::helper
