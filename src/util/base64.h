// Standard base64 (RFC 4648 alphabet, with padding): kubeconfig *-data fields (client) and
// []byte fields of the scheduler configuration (config), decoded and encoded.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ksched::util {

// Whitespace is ignored; trailing '=' padding is optional but must be correct if present.
// Returns nullopt for any other character or a bad length.
[[nodiscard]] std::optional<std::string> base64Decode(std::string_view in);

// Padded to a multiple of four characters, as Go's encoding/json writes []byte.
[[nodiscard]] std::string base64Encode(std::string_view in);

}  // namespace ksched::util
