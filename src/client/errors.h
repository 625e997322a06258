// Typed errors from the Kubernetes API.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <stdexcept>
#include <string>

namespace ksched::client {

// An error answer from kube-apiserver (a metav1.Status) or a transport failure.
//   code      HTTP status (403, 404, 409, 410, 429, 5xx); 0 when no answer arrived (transport).
//   reason    Status.reason: Forbidden, NotFound, AlreadyExists, Conflict, Expired, Gone, ...
//   message   Status.message as the apiserver wrote it (names verb and resource for RBAC).
//   verb      the HTTP verb of the request (GET, LIST, WATCH, POST, PUT, PATCH, DELETE).
//   path      the request path without the query.
class ApiError : public std::runtime_error {
 public:
  ApiError(int code, std::string reason, std::string message, std::string verb, std::string path);

  [[nodiscard]] int code() const { return code_; }
  [[nodiscard]] const std::string& reason() const { return reason_; }
  [[nodiscard]] const std::string& message() const { return message_; }
  [[nodiscard]] const std::string& verb() const { return verb_; }
  [[nodiscard]] const std::string& path() const { return path_; }

  [[nodiscard]] bool isTransport() const { return code_ == 0; }
  [[nodiscard]] bool isNotFound() const { return code_ == 404; }
  [[nodiscard]] bool isConflict() const { return code_ == 409; }
  [[nodiscard]] bool isForbidden() const { return code_ == 403; }
  [[nodiscard]] bool isUnauthorized() const { return code_ == 401; }
  // 410 Gone / reason Expired: the resourceVersion is too old; LIST again.
  [[nodiscard]] bool isGone() const {
    return code_ == 410 || reason_ == "Expired" || reason_ == "Gone";
  }
  // Worth retrying with backoff: no answer, 429, or a 5xx.
  [[nodiscard]] bool isRetryable() const { return code_ == 0 || code_ == 429 || code_ >= 500; }

  // Builds an ApiError from an HTTP status and a response body that may hold a metav1.Status.
  static ApiError fromResponse(int httpStatus, const std::string& body, const std::string& verb,
                               const std::string& path);
  // Builds an ApiError from a metav1.Status object (a watch ERROR event).
  static ApiError fromStatus(const nlohmann::json& status, const std::string& verb,
                             const std::string& path);

 private:
  int code_;
  std::string reason_;
  std::string message_;
  std::string verb_;
  std::string path_;
};

}  // namespace ksched::client
