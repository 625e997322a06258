// Helpers for tolerant, typed JSON decoding (see the contract in api/meta.h).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <ksched/api/boxed.h>
#include <ksched/api/meta.h>

namespace ksched::api {

// Reads j[key] into out when present and not null. Missing or null leaves out untouched.
// A type mismatch throws DecodeError("<key>: <reason>").
template <typename T>
void readField(const nlohmann::json& j, std::string_view key, T& out) {
  if (!j.is_object()) throw DecodeError("expected an object");
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    // nlohmann would silently convert booleans and fractions and truncate out-of-range values.
    const bool fits = it->is_number_unsigned()  ? std::in_range<T>(it->template get<uint64_t>())
                      : it->is_number_integer() ? std::in_range<T>(it->template get<int64_t>())
                                                : false;
    if (!fits) {
      throw DecodeError(std::string(key) + ": expected an integer in range, got " +
                        (it->is_number() ? it->dump() : std::string(it->type_name())));
    }
  }
  try {
    it->get_to(out);
  } catch (const DecodeError& e) {
    throw DecodeError(std::string(key) + "." + e.what());
  } catch (const nlohmann::json::exception& e) {
    throw DecodeError(std::string(key) + ": " + e.what());
  }
}

// std::optional or api::Boxed: a field that may be absent.
template <typename O>
concept OptionalField = requires(O o) {
  typename O::value_type;
  o.reset();
  o.has_value();
};

// Set when present and not null, else left untouched.
template <OptionalField O>
void readField(const nlohmann::json& j, std::string_view key, O& out) {
  if (!j.is_object()) throw DecodeError("expected an object");
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  typename O::value_type v{};
  readField(j, key, v);
  out = std::move(v);
}

// Decodes a whole object, turning any nlohmann exception into a DecodeError.
template <typename T>
T decode(const nlohmann::json& j) {
  T out{};
  try {
    j.get_to(out);
  } catch (const nlohmann::json::exception& e) {
    throw DecodeError(e.what());
  }
  return out;
}

}  // namespace ksched::api
