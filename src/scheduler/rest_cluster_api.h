// RestClusterApi: the ClusterApi (include/ksched/cluster_api.h) of the live daemon, over the
// scheduler's RestClient. The Scheduler (scheduler.h) gives it to the core, and so to plugins
// through Handle::api(); the framework sees only the interface.
#pragma once

#include <ksched/cluster_api.h>

#include "client/rest_client.h"

namespace ksched::scheduler {

class RestClusterApi final : public ClusterApi {
 public:
  // `client` must outlive this object.
  explicit RestClusterApi(client::RestClient& client) : client_(client) {}

  // "/api/v1/namespaces/<ns>/pods/<name>".
  [[nodiscard]] static std::string podPath(const api::Pod& pod);
  // The v1 Binding of `pod` (name, namespace, uid) to node `nodeName`.
  [[nodiscard]] static nlohmann::json bindingBody(const api::Pod& pod, const std::string& nodeName);

  ApiResult bindPod(const api::Pod& pod, const std::string& nodeName) override;
  ApiResult deletePod(const api::Pod& pod) override;
  ApiResult patchPodStatus(const api::Pod& pod, const nlohmann::json& patch,
                           std::string_view contentType) override;
  ApiResult get(const std::string& path, nlohmann::json* out) override;
  ApiResult patch(const std::string& path, const nlohmann::json& patch, nlohmann::json* out,
                  std::string_view contentType) override;
  ApiResult create(const std::string& path, const nlohmann::json& object,
                   nlohmann::json* out) override;
  ApiResult remove(const std::string& path, const nlohmann::json& preconditions) override;

 private:
  client::RestClient& client_;
};

}  // namespace ksched::scheduler
