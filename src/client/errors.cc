#include "client/errors.h"

#include <nlohmann/json.hpp>

#include <ksched/api/utf8.h>

namespace ksched::client {
namespace {

std::string describe(int code, const std::string& reason, const std::string& message,
                     const std::string& verb, const std::string& path) {
  std::string s = verb + " " + path + ": ";
  if (code == 0) return s + "no answer: " + message;
  s += std::to_string(code);
  if (!reason.empty()) s += " " + reason;
  if (!message.empty()) s += ": " + message;
  return s;
}

std::string reasonForCode(int code) {
  switch (code) {
    case 400:
      return "BadRequest";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "NotFound";
    case 405:
      return "MethodNotAllowed";
    case 409:
      return "Conflict";
    case 410:
      return "Gone";
    case 422:
      return "Invalid";
    case 429:
      return "TooManyRequests";
    case 500:
      return "InternalError";
    case 503:
      return "ServiceUnavailable";
    case 504:
      return "Timeout";
    default:
      return "";
  }
}

// Outside text (an answer's body, a transport error quoting the bytes that arrived) made valid
// UTF-8: error texts go on into pod conditions and events, which are JSON.
std::string validText(std::string_view s) { return api::toValidUtf8(s); }

}  // namespace

ApiError::ApiError(int code, std::string reason, std::string message, std::string verb,
                   std::string path)
    : std::runtime_error(
          describe(code, validText(reason), validText(message), validText(verb), validText(path))),
      code_(code),
      reason_(validText(reason)),
      message_(validText(message)),
      verb_(std::move(verb)),
      path_(std::move(path)) {}

ApiError ApiError::fromStatus(const nlohmann::json& status, const std::string& verb,
                              const std::string& path) {
  int code = 0;
  std::string reason;
  std::string message;
  if (status.is_object()) {
    if (auto it = status.find("code"); it != status.end() && it->is_number_integer()) {
      code = it->get<int>();
    }
    if (auto it = status.find("reason"); it != status.end() && it->is_string()) {
      reason = it->get<std::string>();
    }
    if (auto it = status.find("message"); it != status.end() && it->is_string()) {
      message = it->get<std::string>();
    }
  }
  if (reason.empty()) reason = reasonForCode(code);
  return ApiError(code, std::move(reason), std::move(message), verb, path);
}

ApiError ApiError::fromResponse(int httpStatus, const std::string& body, const std::string& verb,
                                const std::string& path) {
  const auto j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  const auto kind = j.is_object() ? j.find("kind") : j.end();
  if (kind != j.end() && kind->is_string() && kind->get_ref<const std::string&>() == "Status") {
    ApiError e = fromStatus(j, verb, path);
    if (e.code() == 0) {
      return ApiError(httpStatus, e.reason().empty() ? reasonForCode(httpStatus) : e.reason(),
                      e.message(), verb, path);
    }
    return e;
  }
  // The first 512 bytes (a few more so that a character cut there is not garbled).
  std::string message = api::toValidUtf8(std::string_view(body).substr(0, 516));
  while (!message.empty() && (message.back() == '\n' || message.back() == '\r')) message.pop_back();
  return ApiError(httpStatus, reasonForCode(httpStatus), api::truncateUtf8(message, 512), verb,
                  path);
}

}  // namespace ksched::client
