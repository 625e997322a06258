// Helpers shared by the src/api/ unit tests.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include <ksched/api/decode.h>

namespace ksched::api::testing {

// Decodes `json` as T and returns the DecodeError message, or "<no error>".
template <typename T>
std::string decodeError(const std::string& json) {
  try {
    (void)decode<T>(nlohmann::json::parse(json));
  } catch (const DecodeError& e) {
    return e.what();
  }
  return "<no error>";
}

template <typename T>
T decodeString(const std::string& json) {
  return decode<T>(nlohmann::json::parse(json));
}

}  // namespace ksched::api::testing
