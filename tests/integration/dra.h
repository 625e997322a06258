// The resource.k8s.io/v1 kinds (Dynamic Resource Allocation) in the test cluster. Its
// kube-apiserver v1.20 has no resource.k8s.io, so tests/integration/crds/resource.k8s.io.yaml
// serves them as CustomResourceDefinitions with upstream's v1 schemas, at the same paths
// (/apis/resource.k8s.io/v1/...).
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "client/errors.h"
#include "client/rest_client.h"
#include "cluster.h"
#include "config/yaml_json.h"
#include "scheduling.h"

namespace ksched::testing {

inline constexpr const char* kResourceApi = "/apis/resource.k8s.io/v1";

// The documents of the CRD file, in order.
inline std::vector<nlohmann::json> resourceCrds() {
  return config::yamlDocumentsToJson(
      readFile(std::string(KSCHED_SOURCE_DIR) + "/tests/integration/crds/resource.k8s.io.yaml"));
}

inline bool crdEstablished(client::RestClient& admin, const std::string& name) {
  try {
    const auto crd = admin.get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/" + name);
    for (const auto& c : crd["status"].value("conditions", nlohmann::json::array())) {
      if (c.value("type", "") == "Established" && c.value("status", "") == "True") return true;
    }
  } catch (const client::ApiError&) {
  }
  return false;
}

// Deletes `path`; gone already is fine.
inline void removeIfThere(client::RestClient& admin, const std::string& path) {
  try {
    admin.del(path);
  } catch (const client::ApiError& e) {
    if (!e.isNotFound()) throw;
  }
}

// Deletes every ResourceClaim of `ns`, each finalizer removed first so that it goes.
inline void deleteClaims(client::RestClient& admin, const std::string& ns) {
  const std::string claims = std::string(kResourceApi) + "/namespaces/" + ns + "/resourceclaims";
  for (auto& claim : admin.list(claims).items) {
    const std::string path = claims + "/" + claim["metadata"].value("name", "");
    admin.patch(path, {{"metadata", {{"finalizers", nullptr}}}});
    admin.del(path);
  }
}

// A DeviceClass of `driver`'s devices that serves the extended resource example.com/gpu.
inline nlohmann::json extendedGpuClass(const std::string& name, const std::string& driver) {
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "DeviceClass"},
          {"metadata", {{"name", name}}},
          {"spec",
           {{"selectors", nlohmann::json::array(
                              {{{"cel", {{"expression", "device.driver == '" + driver + "'"}}}}})},
            {"extendedResourceName", "example.com/gpu"}}}};
}

// Grants the scheduler identity (system:kube-scheduler) what a 1.34+ cluster's default role
// gives it on resource.k8s.io, as deploy/manifests/rbac.yaml does: once the kinds are served,
// every scheduler a later test starts watches them. Idempotent.
inline void grantSchedulerResourceAccess(client::RestClient& admin) {
  const nlohmann::json role = {
      {"apiVersion", "rbac.authorization.k8s.io/v1"},
      {"kind", "ClusterRole"},
      {"metadata", {{"name", "ksched:resource-claims"}}},
      {"rules", nlohmann::json::array(
                    {{{"apiGroups", {"resource.k8s.io"}},
                      {"resources", {"resourceslices", "deviceclasses", "devicetaintrules"}},
                      {"verbs", {"get", "list", "watch"}}},
                     {{"apiGroups", {"resource.k8s.io"}},
                      {"resources", {"resourceclaims"}},
                      {"verbs", {"get", "list", "watch", "patch", "update", "create", "delete"}}},
                     {{"apiGroups", {"resource.k8s.io"}},
                      {"resources", {"resourceclaims/status"}},
                      {"verbs", {"patch", "update"}}}})}};
  const nlohmann::json binding = {
      {"apiVersion", "rbac.authorization.k8s.io/v1"},
      {"kind", "ClusterRoleBinding"},
      {"metadata", {{"name", "ksched:resource-claims"}}},
      {"roleRef",
       {{"apiGroup", "rbac.authorization.k8s.io"},
        {"kind", "ClusterRole"},
        {"name", "ksched:resource-claims"}}},
      {"subjects", nlohmann::json::array({{{"apiGroup", "rbac.authorization.k8s.io"},
                                           {"kind", "User"},
                                           {"name", "system:kube-scheduler"}}})}};
  for (const auto& [path, body] :
       {std::pair{"/apis/rbac.authorization.k8s.io/v1/clusterroles", role},
        std::pair{"/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", binding}}) {
    try {
      admin.post(path, body);
    } catch (const client::ApiError& e) {
      if (e.code() != 409) throw;
    }
  }
}

// Creates the four CRDs (idempotent) and waits until each is Established and its collection is
// served; the scheduler identity may read and write them (grantSchedulerResourceAccess).
inline void installResourceCrds(client::RestClient& admin) {
  grantSchedulerResourceAccess(admin);
  const auto crds = resourceCrds();
  ASSERT_EQ(crds.size(), 4u);
  for (const auto& crd : crds) {
    try {
      admin.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd);
    } catch (const client::ApiError& e) {
      if (e.code() != 409) throw;
    }
  }
  for (const auto& crd : crds) {
    const std::string name = crd["metadata"]["name"];
    const std::string plural = crd["spec"]["names"]["plural"];
    ASSERT_TRUE(eventually([&] { return crdEstablished(admin, name); }, std::chrono::seconds(30)))
        << name << " is not Established";
    ASSERT_TRUE(eventually(
        [&] {
          try {
            admin.get(std::string(kResourceApi) + "/" + plural);
            return true;
          } catch (const client::ApiError&) {
            return false;
          }
        },
        std::chrono::seconds(30)))
        << plural << " is not served";
  }
}

}  // namespace ksched::testing
