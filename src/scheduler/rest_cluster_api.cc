#include "scheduler/rest_cluster_api.h"

#include <exception>
#include <utility>

#include "client/errors.h"

namespace ksched::scheduler {
namespace {

// Runs one request; a thrown client::ApiError becomes its typed copy.
template <typename F>
ApiResult attempt(F&& request) {
  try {
    std::forward<F>(request)();
  } catch (const client::ApiError& e) {
    return ApiError{e.code(), e.reason(), e.what()};
  } catch (const std::exception& e) {
    return ApiError{0, "", e.what()};
  }
  return std::nullopt;
}

}  // namespace

std::string RestClusterApi::podPath(const api::Pod& pod) {
  return "/api/v1/namespaces/" + pod.metadata.namespace_ + "/pods/" + pod.metadata.name;
}

nlohmann::json RestClusterApi::bindingBody(const api::Pod& pod, const std::string& nodeName) {
  return {
      {"apiVersion", "v1"},
      {"kind", "Binding"},
      {"metadata",
       {{"name", pod.metadata.name},
        {"namespace", pod.metadata.namespace_},
        {"uid", pod.metadata.uid}}},
      {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", nodeName}}},
  };
}

ApiResult RestClusterApi::bindPod(const api::Pod& pod, const std::string& nodeName) {
  ApiResult r =
      attempt([&] { client_.create(podPath(pod) + "/binding", bindingBody(pod, nodeName)); });
  // A binding whose answer was lost may have been applied: the client's retry is then answered
  // 409 (already assigned), and one that got no answer at all may or may not have happened.
  // The pod itself says which: bound to this node, the binding succeeded, and the scheduler
  // keeps counting the pod there instead of forgetting it until the watch brings it back.
  if (r && (r->code == 409 || r->code == 0)) {
    try {
      const nlohmann::json latest = client_.get(podPath(pod));
      const auto& meta = latest.at("metadata");
      const auto& spec = latest.at("spec");
      if (meta.value("uid", "") == pod.metadata.uid && spec.value("nodeName", "") == nodeName) {
        return std::nullopt;
      }
    } catch (const std::exception&) {
      // No better answer than the binding's own.
    }
  }
  return r;
}

ApiResult RestClusterApi::deletePod(const api::Pod& pod) {
  return attempt([&] {
    (void)client_.del(podPath(pod), {{"preconditions", {{"uid", pod.metadata.uid}}}});
  });
}

ApiResult RestClusterApi::patchPodStatus(const api::Pod& pod, const nlohmann::json& patch,
                                         std::string_view contentType) {
  return attempt(
      [&] { (void)client_.patch(podPath(pod) + "/status", patch, std::string(contentType)); });
}

ApiResult RestClusterApi::get(const std::string& path, nlohmann::json* out) {
  return attempt([&] {
    nlohmann::json j = client_.get(path);
    if (out != nullptr) *out = std::move(j);
  });
}

ApiResult RestClusterApi::patch(const std::string& path, const nlohmann::json& patch,
                                nlohmann::json* out, std::string_view contentType) {
  return attempt([&] {
    nlohmann::json j = client_.patch(path, patch, std::string(contentType));
    if (out != nullptr) *out = std::move(j);
  });
}

ApiResult RestClusterApi::create(const std::string& path, const nlohmann::json& object,
                                 nlohmann::json* out) {
  return attempt([&] {
    nlohmann::json j = client_.post(path, object);
    if (out != nullptr) *out = std::move(j);
  });
}

ApiResult RestClusterApi::remove(const std::string& path, const nlohmann::json& preconditions) {
  return attempt([&] {
    (void)client_.del(path, preconditions.is_null()
                                ? nlohmann::json(nullptr)
                                : nlohmann::json{{"preconditions", preconditions}});
  });
}

}  // namespace ksched::scheduler
