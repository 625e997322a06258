// ClusterApi: what plugins do on the apiserver, typed. Handle::api() hands it out; it is the
// only way the SDK reaches the apiserver (the REST client stays internal).
//
// Contracts:
//   - Every call is one blocking request (with the scheduler's rate limit and retries of
//     transport errors, 429 and 5xx). Call it from the binder threads (Permit waits, PreBind,
//     Bind, PostBind) or from work a plugin runs on its own threads; never from PreEnqueue,
//     QueueSort, Filter or Score, and not on the scheduling thread.
//   - Thread-safe. Results are success (nullopt) or an ApiError with the HTTP code, so a plugin
//     tells "already bound" (409) and "gone" (404) from other failures without parsing text.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include <ksched/api/pod.h>

namespace ksched {

struct ApiError {
  int code = 0;         // HTTP status; 0 when no answer came (refused, timeout, TLS)
  std::string reason;   // the metav1.Status reason: "Conflict", "NotFound", "Forbidden", ...
  std::string message;  // "<verb> <path>: <code> <reason>: <message>", for logs and events

  [[nodiscard]] bool isNotFound() const noexcept { return code == 404; }
  [[nodiscard]] bool isConflict() const noexcept { return code == 409; }
};

// nullopt on success.
using ApiResult = std::optional<ApiError>;

class ClusterApi {
 public:
  virtual ~ClusterApi() = default;

  // POST pods/<name>/binding with the pod's uid: binds `pod` to `nodeName`. 409 when the pod is
  // bound already, 404 when it is gone.
  virtual ApiResult bindPod(const api::Pod& pod, const std::string& nodeName) = 0;
  // DELETE the pod with a uid precondition (a new pod of the same name is left alone: 409).
  virtual ApiResult deletePod(const api::Pod& pod) = 0;
  // PATCH pods/<name>/status with `patch` ("application/merge-patch+json" or
  // "application/strategic-merge-patch+json").
  virtual ApiResult patchPodStatus(const api::Pod& pod, const nlohmann::json& patch,
                                   std::string_view contentType) = 0;

  // Any other object by its API path (e.g. "/api/v1/persistentvolumes/pv-1"). `out`, when set,
  // receives the object the apiserver returned.
  virtual ApiResult get(const std::string& path, nlohmann::json* out) = 0;
  // A merge patch (or `contentType`) of the object at `path`.
  virtual ApiResult patch(const std::string& path, const nlohmann::json& patch, nlohmann::json* out,
                          std::string_view contentType = "application/merge-patch+json") = 0;
  // POST `object` to the collection at `path` (e.g.
  // "/apis/resource.k8s.io/v1/namespaces/ns/resourceclaims"); `out` receives the created object
  // (its generated name). Retried as every call: with metadata.generateName, an answer lost
  // on the way back can leave a second object. The default answers 405 (an implementation
  // that cannot create).
  virtual ApiResult create(const std::string& path, const nlohmann::json& object,
                           nlohmann::json* out) {
    (void)object;
    (void)out;
    return ApiError{405, "MethodNotAllowed", "POST " + path + ": not supported here"};
  }
  // DELETE the object at `path`, with `preconditions` ({"uid": ...}) when set. 404 when gone.
  virtual ApiResult remove(const std::string& path, const nlohmann::json& preconditions = nullptr) {
    (void)preconditions;
    return ApiError{405, "MethodNotAllowed", "DELETE " + path + ": not supported here"};
  }
};

}  // namespace ksched
