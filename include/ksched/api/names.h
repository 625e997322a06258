// Kubernetes name formats (apimachinery util/validation) as predicates: the one place the
// object model, the configuration and the plugins check names. The messages upstream prints for
// them are in <ksched/helper/field_error.h>.
#pragma once

#include <cstddef>
#include <string_view>

namespace ksched::api {

// [a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*, any length.
[[nodiscard]] bool isDNS1123SubdomainFormat(std::string_view s) noexcept;
// The format and 1..maxLen characters (IsDNS1123Subdomain: 253).
[[nodiscard]] bool isDNS1123Subdomain(std::string_view s, size_t maxLen = 253) noexcept;
// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9], any length: the name part of a qualified name.
[[nodiscard]] bool isQualifiedNameFormat(std::string_view s) noexcept;
// The format and at most 63 characters.
[[nodiscard]] bool isQualifiedNamePart(std::string_view s) noexcept;
// IsValidLabelValue: empty, or a qualified name part.
[[nodiscard]] bool isLabelValue(std::string_view s) noexcept;

}  // namespace ksched::api
