// Random prefixes for the placeholder IDs the volume-limit plugins give claims without a volume
// (upstream rand.String).
#pragma once

#include <cstddef>
#include <string>

namespace ksched::plugins::helper {

// `n` characters from upstream's rand.String alphabet ("bcdfghjklmnpqrstvwxz2456789").
// Thread-safe.
[[nodiscard]] std::string randomString(size_t n);

}  // namespace ksched::plugins::helper
