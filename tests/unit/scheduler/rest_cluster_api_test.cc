#include "scheduler/rest_cluster_api.h"

#include <gtest/gtest.h>

#include <ksched/testing/fakes.h>

namespace ksched::scheduler {
namespace {

using ksched::testing::PodWrapper;

// What DefaultBinder's bindPod sends through the live daemon's ClusterApi.
TEST(RestClusterApiTest, BindingPathAndBody) {
  const api::Pod pod = PodWrapper("web-0").ns("prod").uid("1234").obj();
  EXPECT_EQ(RestClusterApi::podPath(pod), "/api/v1/namespaces/prod/pods/web-0");
  EXPECT_EQ(RestClusterApi::bindingBody(pod, "node-7"), nlohmann::json::parse(R"({
    "apiVersion": "v1",
    "kind": "Binding",
    "metadata": {"name": "web-0", "namespace": "prod", "uid": "1234"},
    "target": {"apiVersion": "v1", "kind": "Node", "name": "node-7"}
  })"));
}

}  // namespace
}  // namespace ksched::scheduler
