// deploy/manifests against the real apiserver: the objects are accepted (server-side dry run),
// and the ClusterRole/Role are enough for ksched to run under the ServiceAccount's identity.
#include "deploy.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <fstream>
#include <sstream>
#include <string>

#include <ksched/api/decode.h>
#include <ksched/api/pod.h>

#include "cluster.h"
#include "daemon.h"
#include "scheduling.h"

namespace ksched::testing {
namespace {

TEST(DeployIntegration, ManifestsPassServerSideDryRun) {
  kubectl("apply -f " + kManifests + "/namespace.yaml");
  const std::string out = kubectl("apply --dry-run=server -k " + kManifests);
  for (const char* want :
       {"customresourcedefinition.apiextensions.k8s.io/podgroups.scheduling.x-k8s.io created "
        "(server dry run)",
        "serviceaccount/ksched created (server dry run)",
        "clusterrole.rbac.authorization.k8s.io/ksched created (server dry run)",
        "role.rbac.authorization.k8s.io/ksched-leader-election created (server dry run)",
        "clusterrolebinding.rbac.authorization.k8s.io/ksched-auth-delegator created (server dry "
        "run)",
        "rolebinding.rbac.authorization.k8s.io/"
        "ksched-extension-apiserver-authentication-reader created (server dry run)",
        "clusterrole.rbac.authorization.k8s.io/ksched-metrics-reader created (server dry run)",
        "clusterrole.rbac.authorization.k8s.io/ksched-explain-reader created (server dry run)",
        "configmap/ksched-config created (server dry run)",
        "service/ksched-metrics created (server dry run)",
        "deployment.apps/ksched created (server dry run)"}) {
    EXPECT_NE(out.find(want), std::string::npos) << want << " not in:\n" << out;
  }
}

// Runs the binary with the Deployment's config and the ServiceAccount's RBAC.
TEST(DeployIntegration, ServiceAccountRoleIsEnoughToSchedule) {
  auto& admin = TestCluster::get().admin();
  kubectl("apply -f " + kManifests + "/namespace.yaml -f " + kManifests + "/rbac.yaml");
  const std::string configPath = configAsServiceAccount("ksched-config.yaml", "deploy-config.yaml");
  ASSERT_FALSE(configPath.empty());

  deleteAllNodes(admin);
  const std::string ns = "deploy-sa";
  ensureNamespace(admin, ns);
  admin.post("/api/v1/nodes", sizedNode("deploy-0", "4", "8Gi"));
  const int port = freeLoopbackPort();
  Daemon d(logPath("deploy-sa"), {"--config", configPath, "--bind-address=127.0.0.1",
                                  "--secure-port=" + std::to_string(port)});
  ASSERT_TRUE(d.waitForLog("synced:", 60s)) << d.log();
  for (int i = 0; i < 5; ++i) {
    auto p = sizedPod(ns, "p-" + std::to_string(i), "100m");
    p["spec"]["schedulerName"] = "ksched";
    admin.post("/api/v1/namespaces/" + ns + "/pods", p);
  }
  EXPECT_EQ(waitAllBound(admin, ns, 5, 60s), 5u) << d.log();
  EXPECT_TRUE(eventually([&] { return eventsByPod(admin, ns, "Scheduled").size() == 5; }));

  // The HTTPS port reviews callers with the ServiceAccount's rights: a scraper bound to
  // ksched-metrics-reader as docs/operations.md says reads /metrics, and nothing else.
  kubectl(
      "create clusterrolebinding deploy-sa-metrics --clusterrole=ksched-metrics-reader "
      "--serviceaccount=" +
      ns + ":prometheus");
  const std::string token = serviceAccountToken(ns, "prometheus");
  httplib::SSLClient https("127.0.0.1", port);
  https.enable_server_certificate_verification(false);
  https.set_bearer_token_auth(token.c_str());
  auto metrics = https.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->status, 200) << metrics->body;
  auto configz = https.Get("/configz");
  ASSERT_TRUE(configz);
  EXPECT_EQ(configz->status, 403) << configz->body;
  kubectl("delete clusterrolebinding deploy-sa-metrics");
  EXPECT_EQ(d.signalAndWait(SIGTERM), 0) << d.log();
  const std::string log = d.log();
  // A missing permission shows up as a typed 403 in the reflector, binder or lookup logs.
  EXPECT_EQ(log.find("Forbidden"), std::string::npos) << log;
  EXPECT_EQ(log.find("forbidden"), std::string::npos) << log;
}

// The gang example (examples/ksched-gang-config.yaml, podgroup-crd.yaml, examples/gang-job.yaml's
// PodGroup) under the ServiceAccount's RBAC: PodGroups are read and their status written.
TEST(DeployIntegration, ServiceAccountRoleIsEnoughForGangScheduling) {
  auto& admin = TestCluster::get().admin();
  const std::string applied =
      kubectl("apply -f " + kManifests + "/namespace.yaml -f " + kManifests + "/rbac.yaml -f " +
              kManifests + "/podgroup-crd.yaml");
  ASSERT_NE(applied.find("podgroups.scheduling.x-k8s.io"), std::string::npos) << applied;
  const std::string configPath =
      configAsServiceAccount("examples/ksched-gang-config.yaml", "deploy-gang-config.yaml");
  ASSERT_FALSE(configPath.empty());

  deleteAllNodes(admin);
  admin.post("/api/v1/nodes", sizedNode("deploy-gang-0", "4", "8Gi"));
  // The example's PodGroup (minMember 4) and four pods like its Job's.
  ensureNamespace(admin, "default");
  const std::string example =
      kubectl("apply -f " + kManifests + "/examples/gang-job.yaml --dry-run=server");
  EXPECT_NE(example.find("podgroup.scheduling.x-k8s.io/train"), std::string::npos) << example;
  EXPECT_NE(example.find("job.batch/train"), std::string::npos) << example;
  const std::string ns = "deploy-gang";
  ensureNamespace(admin, ns);
  admin.post("/apis/scheduling.x-k8s.io/v1alpha1/namespaces/" + ns + "/podgroups",
             {{"apiVersion", "scheduling.x-k8s.io/v1alpha1"},
              {"kind", "PodGroup"},
              {"metadata", {{"name", "train"}}},
              {"spec", {{"minMember", 4}, {"scheduleTimeoutSeconds", 60}}}});
  Daemon d(logPath("deploy-gang"), {"--config", configPath, "--secure-port=0"});
  ASSERT_TRUE(d.waitForLog("synced:", 60s)) << d.log();
  for (int i = 0; i < 4; ++i) {
    auto p = sizedPod(ns, "train-" + std::to_string(i), "500m", "256Mi");
    p["spec"]["schedulerName"] = "ksched";
    p["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] = "train";
    admin.post("/api/v1/namespaces/" + ns + "/pods", p);
  }
  EXPECT_EQ(waitAllBound(admin, ns, 4, 60s), 4u) << d.log();
  nlohmann::json status;
  EXPECT_TRUE(eventually([&] {
    status = objectOrEmpty(
        admin.get("/apis/scheduling.x-k8s.io/v1alpha1/namespaces/" + ns + "/podgroups/train"),
        "status");
    return status.value("phase", "") == "Scheduled" && status.value("scheduled", 0) == 4;
  })) << status.dump();
  EXPECT_EQ(d.signalAndWait(SIGTERM), 0) << d.log();
  deleteAllPods(admin, ns);
  const std::string log = d.log();
  EXPECT_EQ(log.find("Forbidden"), std::string::npos) << log;
  EXPECT_EQ(log.find("forbidden"), std::string::npos) << log;
}

}  // namespace
}  // namespace ksched::testing
