// The PodGroup custom resource (scheduling.x-k8s.io/v1alpha1) the Coscheduling plugin reads,
// installed in the test cluster from deploy/manifests, as an operator installs it.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "client/errors.h"
#include "client/rest_client.h"
#include "cluster.h"
#include "config/yaml_json.h"
#include "scheduling.h"

namespace ksched::testing {

// A profile's plugins and pluginConfig (YAML, indented for a `profiles:` entry) with
// Coscheduling at every point it serves and as the queue sort, as docs/gang.md configures it.
inline constexpr const char* kCoschedulingProfile =
    "  plugins:\n"
    "    multiPoint:\n"
    "      enabled:\n"
    "      - name: Coscheduling\n"
    "    queueSort:\n"
    "      enabled:\n"
    "      - name: Coscheduling\n"
    "      disabled:\n"
    "      - name: \"*\"\n"
    "  pluginConfig:\n"
    "  - name: Coscheduling\n"
    "    args:\n"
    "      permitWaitingTimeSeconds: 20\n";

// Creates the CRD (idempotent) and waits until its collection is served.
inline void installPodGroupCrd(client::RestClient& admin) {
  const auto crd = config::yamlToJson(
      readFile(std::string(KSCHED_SOURCE_DIR) + "/deploy/manifests/podgroup-crd.yaml"));
  try {
    admin.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd);
  } catch (const client::ApiError& e) {
    if (e.code() != 409) throw;
  }
  ASSERT_TRUE(eventually(
      [&] {
        try {
          admin.get("/apis/scheduling.x-k8s.io/v1alpha1/podgroups");
          return true;
        } catch (const client::ApiError&) {
          return false;
        }
      },
      std::chrono::seconds(30)));
}

}  // namespace ksched::testing
